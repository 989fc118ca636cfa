/* Helpers for the persistence tests: a Redis for the test (one server, or a local
 * three-master Redis Cluster after pt_use_cluster(true)), stores on a libevent loop, and
 * results captured from callbacks. Every wait is bounded. */
#ifndef MC_TESTS_PERSIST_TEST_UTIL_H
#define MC_TESTS_PERSIST_TEST_UTIL_H

#include <event2/event.h>
#include <stdbool.h>

#include "common/defs.h"
#include "persist/store.h"
#include "redis_harness.h"

/* Run the tests against a local three-master Redis Cluster instead of one Redis (set once
 * in main, before the suite runs). */
void pt_use_cluster(bool on);
bool pt_cluster_mode(void);

/* The test's Redis: one instance or a cluster, with options. */
typedef struct {
    rh_redis *single;
    rh_cluster *cluster;
    rh_options opt;
} pt_redis;

bool pt_redis_start(pt_redis *r, const rh_options *opt);
void pt_redis_stop(pt_redis *r);
/* A node to run redis-cli against (the single one, or node 0). */
rh_redis *pt_redis_node(pt_redis *r);
/* Fill the address or seeds (and credentials when use_password) of a config. */
void pt_config(pt_redis *r, mc_persist_config *cfg, bool use_password);

/* Load a resource folder under tests/persist (e.g. "res"). */
mc_entity_defs *pt_defs(const char *dir);

/* A store with default options for the test's Redis; owner = name, incarnation 1. */
mc_persist_store *pt_store(struct event_base *base, pt_redis *r, const mc_entity_defs *defs,
                           const char *name);

/* A captured result. */
typedef struct {
    bool done;
    int calls;
    mc_persist_status st;
    char reason[512];
    uint64_t dbid;
    char token[40];
    char owner[64];
    uint64_t owner_inc;
    int owner_state;
    char mailbox[64];
    size_t mailbox_len;
    uint64_t count;
    mc_value *values;          /* load: deep copy (type's nprops) */
    size_t nvalues;
    mc_persist_engine engine;
    char added[256], removed[256]; /* comma-separated */
    char refs[16384];          /* refs joined by '\n'; dbids joined by ',' in dbids */
    char dbids[16384];
    uint64_t cursor;
    char types[1024];          /* "Name=count," ... */
} pt_res;

void pt_cb(void *ctx, const mc_persist_result *r);
void pt_res_clear(pt_res *r);
/* Run the loop until *flag (or ms elapse); true when the flag was set. */
bool pt_wait(struct event_base *base, const bool *flag, int ms);
/* Run the loop for about ms (lets reconnects and timers run). */
void pt_run(struct event_base *base, int ms);
/* Wait for a result's callback. */
bool pt_wait_res(struct event_base *base, pt_res *r);

/* An entity of type t with every persistent property at its default (values owned by e). */
typedef struct {
    mc_persist_entity e;
    mc_value *values;
} pt_entity;
void pt_entity_init(pt_entity *pe, const mc_entity_type_def *t);
void pt_entity_free(pt_entity *pe);
/* Set a STRING/UNICODE_STRING property / an integer property by name. */
void pt_set_str(pt_entity *pe, const char *prop, const char *text);
void pt_set_int(pt_entity *pe, const char *prop, int64_t v);

#endif
