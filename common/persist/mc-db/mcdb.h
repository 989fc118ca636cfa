/* mc-db, the operator's tool for the entities in Redis (docs/tools/mc-db.md): shared state of
 * its commands. The tool runs its own event loop; each Redis request waits for its answer
 * (db_call), bounded by the store's request timeout. */
#ifndef MC_DB_MCDB_H
#define MC_DB_MCDB_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/defs.h"
#include "persist/store.h"

/* Exit codes. */
enum {
    DB_EXIT_OK = 0,
    DB_EXIT_FAILED = 1,      /* the command failed (not found, refused, a line not imported) */
    DB_EXIT_INCOMPATIBLE = 2,/* check: a changed property type (loads refused) */
    DB_EXIT_USAGE = 3,       /* bad arguments or configuration */
    DB_EXIT_UNAVAILABLE = 4, /* Redis did not answer or refused the credentials */
};

typedef struct {
    struct event_base *base;
    mc_persist_store *store;
    mc_entity_defs *defs;
    FILE *out;
    const char *prefix;     /* key prefix ("mc") */
} db_ctx;

/* A copied result. */
typedef struct {
    bool done;
    mc_persist_status st;
    char reason[512];
    uint64_t dbid, cursor, count;
    char **refs;
    size_t nrefs;
    size_t *ref_lens;
    uint64_t *dbids;
    size_t ndbids;
    mc_persist_type_count *types; /* names owned */
    size_t ntypes;
} db_res;

void db_res_free(db_res *r);
mc_persist_cb db_cb(void);
/* Run the loop until r is done. */
void db_wait(db_ctx *c, db_res *r);
/* The exit code for a failed request's status. */
int db_exit_for(mc_persist_status st);

int db_cmd_types(db_ctx *c, int argc, char **argv);
int db_cmd_list(db_ctx *c, int argc, char **argv);
int db_cmd_show(db_ctx *c, int argc, char **argv);
int db_cmd_delete(db_ctx *c, int argc, char **argv);
int db_cmd_check(db_ctx *c, int argc, char **argv);
int db_cmd_export(db_ctx *c, int argc, char **argv);
int db_cmd_import(db_ctx *c, int argc, char **argv);
int db_cmd_unindex(db_ctx *c, int argc, char **argv);

#endif
