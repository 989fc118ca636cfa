/* The store's watchers (queue depth, counters, schema state per type). */
#include <errno.h>
#include <event2/event.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "internal.h"
/* --- watchers ---------------------------------------------------------------------------- */

static void get_connected(void *ctx, mc_watch_value *out) { out->as.b = mc_persist_ready(ctx); }
static void get_depth(void *ctx, mc_watch_value *out)
{
    out->as.u = mc_persist_queue_depth(ctx);
}
static void get_queue_max(void *ctx, mc_watch_value *out)
{
    out->as.u = ((mc_persist_store *)ctx)->cfg.queue_max;
}
static void get_inflight(void *ctx, mc_watch_value *out)
{
    out->as.u = ((mc_persist_store *)ctx)->inflight;
}
static void get_last_error(void *ctx, mc_watch_value *out)
{
    out->as.s = strdup(((mc_persist_store *)ctx)->last_error);
}

typedef struct {
    mc_persist_store *s;
    size_t type;
} schema_watch;

static void get_schema(void *ctx, mc_watch_value *out)
{
    schema_watch *sw = ctx;
    const char *st = sw->s->schema_state[sw->type];
    out->as.s = strdup(st ? st : "unchecked");
}

mc_watch_status mc_persist_add_watchers(mc_persist_store *s, mc_watchers *w, const char *dir)
{
    char p[MC_WATCH_MAX_PATH];
    mc_watch_status st;
#define ADD(name, type, fn)                                                                 \
    do {                                                                                    \
        snprintf(p, sizeof p, "%s/%s", dir, name);                                          \
        if ((st = mc_watch_add(w, p, type, MC_WATCH_READ_ONLY, fn, NULL, s)) != MC_WATCH_OK) \
            return st;                                                                      \
    } while (0)
#define ADDU(name, var)                                                                     \
    do {                                                                                    \
        snprintf(p, sizeof p, "%s/%s", dir, name);                                          \
        if ((st = mc_watch_add_uint(w, p, &s->var, MC_WATCH_READ_ONLY)) != MC_WATCH_OK)     \
            return st;                                                                      \
    } while (0)
    ADD("connected", MC_WATCH_BOOL, get_connected);
    ADD("queueDepth", MC_WATCH_UINT, get_depth);
    ADD("queueMax", MC_WATCH_UINT, get_queue_max);
    ADD("inFlight", MC_WATCH_UINT, get_inflight);
    ADD("lastError", MC_WATCH_STRING, get_last_error);
    ADDU("writesOk", writes_ok);
    ADDU("writesFailed", writes_failed);
    ADDU("writesRetried", writes_retried);
    ADDU("loadsOk", loads_ok);
    ADDU("loadsFailed", loads_failed);
    ADDU("checkoutsWon", checkouts_won);
    ADDU("checkoutsOwned", checkouts_owned);
    ADDU("fenced", fenced);
    ADDU("reconnects", reconnects);
    ADDU("redirects", redirects);
    ADDU("staleIdentsRemoved", stale_idents_removed);
#undef ADD
#undef ADDU
    snprintf(p, sizeof p, "%s/address", dir);
    if ((st = mc_watch_add_const_string(w, p, s->cluster ? s->seeds[0] : s->address)) !=
        MC_WATCH_OK)
        return st;
    snprintf(p, sizeof p, "%s/schema", dir);
    if ((st = mc_watch_add_directory(w, p)) != MC_WATCH_OK)
        return st;
    size_t ntypes = mc_defs_type_count(s->cfg.defs);
    if (!s->schema_watch)
        s->schema_watch = calloc(ntypes ? ntypes : 1, sizeof(schema_watch));
    schema_watch *sw = s->schema_watch;
    if (!sw)
        return MC_WATCH_ERR_NO_MEMORY;
    for (size_t i = 0; i < ntypes; i++) {
        if (!s->schema_state[i])
            continue; /* no persistent property */
        sw[i].s = s;
        sw[i].type = i;
        snprintf(p, sizeof p, "%s/schema/%s", dir, mc_defs_type(s->cfg.defs, (uint16_t)i)->name);
        if ((st = mc_watch_add(w, p, MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_schema, NULL,
                               &sw[i])) != MC_WATCH_OK)
            return st;
    }
    return MC_WATCH_OK;
}

void mc_persist_remove_watchers(mc_persist_store *s, mc_watchers *w, const char *dir)
{
    (void)s;
    mc_watch_remove(w, dir);
}
