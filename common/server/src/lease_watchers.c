/* The lease's watchers (lease/...): its state and the counters of what it held. */
#include "server_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void get_state(void *ctx, mc_watch_value *out)
{
    mc_server *s = ctx;
    out->as.s = strdup(mc_lease_state_name(s->lease, mc_clock_now_us()));
}

static void get_expires_in(void *ctx, mc_watch_value *out)
{
    mc_server *s = ctx;
    mc_time_us now = mc_clock_now_us(), at = mc_lease_expires_at(s->lease);
    out->as.u = at > now ? (at - now) / MC_US_PER_MS : 0;
}

static void get_writes_held(void *ctx, mc_watch_value *out)
{
    mc_server *s = ctx;
    out->as.u = mc_lease_stats_of(s->lease)->writes_held +
                (s->writes_held_fn ? s->writes_held_fn(s->writes_held_ctx) : 0);
}

typedef struct {
    mc_server *s;
    size_t offset;
} stat_ref;

static const struct {
    const char *path;
    size_t offset;
} stats[] = {
    {"lease/callsHeld", offsetof(mc_lease_stats, calls_held)},
    {"lease/heldBytes", offsetof(mc_lease_stats, held_bytes)},
    {"lease/heldTotal", offsetof(mc_lease_stats, held_total)},
    {"lease/released", offsetof(mc_lease_stats, released)},
    {"lease/heldDropped", offsetof(mc_lease_stats, held_dropped)},
    {"lease/heldRefused", offsetof(mc_lease_stats, held_refused)},
    {"lease/renewals", offsetof(mc_lease_stats, renewals)},
    {"lease/expiries", offsetof(mc_lease_stats, expiries)},
};
#define NSTATS (sizeof stats / sizeof stats[0])

static void get_stat(void *ctx, mc_watch_value *out)
{
    stat_ref *r = ctx;
    const char *base = (const char *)mc_lease_stats_of(r->s->lease);
    uint64_t v;
    memcpy(&v, base + r->offset, sizeof v);
    out->as.u = v;
}

int mc_server_lease_publish(mc_server *s)
{
    if (!s->lease)
        return 0;
    /* One context per counter, kept as long as the server (freed with it). */
    stat_ref *refs = calloc(NSTATS, sizeof *refs);
    if (!refs)
        return -1;
    s->lease_watch_refs = refs;
    mc_watchers *w = s->watchers;
    int bad = 0;
    bad |= mc_watch_add(w, "lease/state", MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_state, NULL,
                        s);
    bad |= mc_watch_add(w, "lease/expiresInMs", MC_WATCH_UINT, MC_WATCH_READ_ONLY,
                        get_expires_in, NULL, s);
    bad |= mc_watch_add(w, "lease/writesHeld", MC_WATCH_UINT, MC_WATCH_READ_ONLY,
                        get_writes_held, NULL, s);
    for (size_t i = 0; i < NSTATS; i++) {
        refs[i].s = s;
        refs[i].offset = stats[i].offset;
        bad |= mc_watch_add(w, stats[i].path, MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_stat, NULL,
                            &refs[i]);
    }
    return bad ? -1 : 0;
}
