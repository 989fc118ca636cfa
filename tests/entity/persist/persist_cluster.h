/* A cluster for the engine's persistence tests: a manager, baseapps started with --redis
 * (a private redis-server from tests/persist/redis_harness.h) and one cellapp, running the
 * Keeper game (tests/entity/persist/game), on 127.0.0.1 with free ports, driven through the
 * watcher tool. Every process started here dies with the test process (the harness's
 * PR_SET_PDEATHSIG and atexit kill), also when a check fails. */
#ifndef MC_TESTS_PERSIST_CLUSTER_H
#define MC_TESTS_PERSIST_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PC_MAX_BASE 4

typedef struct {
    char manager[32];
    char dir[512];
    char redis[160];   /* IP:PORT, or the seeds IP:PORT,IP:PORT,... of a Redis Cluster */
    const char *res, *game; /* the game's defs and module (the Keeper game by default) */
    pid_t mgr, cell;
    char log_mgr[600], log_cell[600], cell_name[16];
    pid_t cell2;             /* a second cellapp (pc_add_cellapp), 0 when none */
    char log_cell2[600];
    int nbase;               /* baseapps started so far (slots 0..nbase-1) */
    int registrations;
    pid_t base[PC_MAX_BASE];
    char base_addr[PC_MAX_BASE][32], base_name[PC_MAX_BASE][24], log_base[PC_MAX_BASE][600];
} pc_cluster;

/* A manager, nbase baseapps on redis_addr (a Redis Cluster when it holds several
 * comma-separated addresses; each given the extra option base_opt when not NULL) and a
 * cellapp; each registered and holding entity ids when this returns (fails the
 * test otherwise). */
void pc_start(pc_cluster *c, const char *redis_addr, int nbase, const char *base_opt);
/* The same with another game (its res folder and module). */
void pc_start_game(pc_cluster *c, const char *redis_addr, int nbase, const char *base_opt,
                   const char *res, const char *game);
/* Start one more baseapp (slot c->nbase); its slot. */
int pc_add_baseapp(pc_cluster *c, const char *base_opt);
/* Start a second cellapp (cellapp02, pid in cell2) and wait until it is registered. */
void pc_add_cellapp(pc_cluster *c);
/* SIGTERM one baseapp and check it exits 0 within 30 s. */
void pc_stop_baseapp(pc_cluster *c, int slot);
/* SIGTERM every process still running (cellapps, baseapps, manager last); each must exit 0
 * (a pid set to -1 by the test, which killed it, is skipped). */
void pc_stop(pc_cluster *c);

/* `watcher call PROC PATH a1 a2 a3` (NULL-ended); exit status, output in out. */
int pc_call(pc_cluster *c, char *out, size_t outlen, const char *proc, const char *path,
            const char *a1, const char *a2, const char *a3);
/* The value of `watcher get PROC PATH`; false when the get fails. */
bool pc_value(pc_cluster *c, const char *proc, const char *path, char *out, size_t outlen);
/* The value part of a call's output line ("PROC  PATH  VALUE"). */
bool pc_result(const char *output, const char *path, char *out, size_t outlen);
long long pc_int(pc_cluster *c, const char *proc, const char *path);
/* Poll until the integer at PATH equals want (true) or timeout_ms passes. */
bool pc_wait_int(pc_cluster *c, const char *proc, const char *path, long long want,
                 int timeout_ms);
/* A Keeper property of entity id on proc (entities/<id>/props/<prop>), as JSON text. */
bool pc_prop(pc_cluster *c, const char *proc, int32_t id, const char *prop, char *out,
             size_t outlen);
long long pc_prop_int(pc_cluster *c, const char *proc, int32_t id, const char *prop);
/* command/call ID METHOD JSON-ARGS on proc: fails the test when the call fails. */
void pc_invoke(pc_cluster *c, const char *proc, int32_t id, const char *method,
               const char *json_args);
/* command/createBase Keeper JSON-PROPS on proc: the new id. */
int32_t pc_create(pc_cluster *c, const char *proc, const char *json_props);
/* command/writeToDB ID on proc: the database id (0 and the output in why on failure). */
uint64_t pc_write(pc_cluster *c, const char *proc, int32_t id, char *why, size_t whylen);
/* command/createBase[Anywhere]FromDB[ByName] on proc with KEY (a dbid or a name): the
 * output line's value ("<id> BASE <id> at <addr> (Keeper) dbid <n> loaded|live"); the
 * watcher's exit status is returned. */
int pc_load(pc_cluster *c, const char *proc, const char *command, const char *key, char *out,
            size_t outlen);

#endif
