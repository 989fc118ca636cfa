/* Retiring this baseapp (retire.h): command/retire (the manager marks it), the waves of
 * offloads (retire_move.c moves each base), the graceful stop once it is empty, the
 * watchers, and the receiving side's memory of the bases it took. */
#include "db/db.h"
#include "common/log.h"
#include "clients/proxy.h"
#include "retire_internal.h"
#include "server/pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RETIRE_TICK_MS 50

static const char *const phase_names[] = {"idle",      "marking",     "moving",
                                          "lingering", "handing over", "stopping"};

bool retire_log_allowed(uint64_t n) { return n <= 10 || n % 1000 == 0; }

static size_t live_count(mc_engine *e) { return mc_engine_table(e)->count; }

/* ---- the waves --------------------------------------------------------------------------- */

static void wave(base_retire *r, mc_time_us now)
{
    mc_engine *e = r->e;
    double dt = r->last_tick ? (double)(now - r->last_tick) / 1e6 : 0;
    r->last_tick = now;
    r->budget += dt * (double)r->bytes_per_sec;
    if (r->budget > (double)r->bytes_per_sec)
        r->budget = (double)r->bytes_per_sec;
    size_t n = 0;
    mc_entity **all = mc_entity_table_snapshot(mc_engine_table(e), &n);
    if (!all && n)
        return;
    size_t left = 0, started = r->nretarget ? retire_retarget_wave(r) : 0;
    for (size_t i = 0; i < n; i++) {
        mc_entity *ent = all[i];
        if (ent->part != MC_PART_BASE || mc_map_get(&r->moving, (uint64_t)ent->id, 0))
            continue;
        left++;
        if (r->budget <= 0 || r->nmoving >= r->in_flight_max || !retire_movable(r, ent))
            continue;
        size_t bytes = retire_start_move(r, ent);
        if (bytes) {
            r->budget -= (double)bytes;
            started++;
        }
    }
    free(all);
    if (started)
        r->st.waves++;
    if (!left && !r->nmoving && !r->nretarget) {
        r->phase = R_LINGER;
        r->linger_until = now + r->linger_ms * MC_US_PER_MS;
        MC_WARNING("retiring: every base is offloaded (%llu); sending calls on for %llu ms, "
                   "then stopping", (unsigned long long)r->st.offloaded,
                   (unsigned long long)r->linger_ms);
    }
}

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    base_retire *r = ctx;
    mc_time_us now = mc_clock_now_us();
    retire_tell_tick(r, now); /* a baseapp born: where the bases we took live */
    if (r->phase == R_HANDOVER) {
        retire_handover_tick(r, now); /* RETIRED asked again of the late */
    } else if (r->phase == R_MOVING) {
        wave(r, now);
    } else if (r->phase == R_LINGER) {
        if (live_count(r->e) || r->nretarget) {
            r->phase = R_MOVING; /* a base was made here meanwhile, or a new home died */
        } else if (now >= r->linger_until) {
            retire_handover_start(r); /* RETIRE_HOMES, RETIRED, RETIRE_END, the stop */
        }
    }
}

/* ---- command/retire ----------------------------------------------------------------------- */

typedef struct {
    mc_engine_wait *wait;
    mc_watch_done *done;
} retire_ask;

static void ask_cancel(mc_engine *e, void *ctx)
{
    (void)e;
    retire_ask *a = ctx;
    mc_watch_complete(a->done, false, NULL, "the baseapp is going");
    free(a);
}

static void on_marked(mc_server *s, void *ctx, const Mc__Control__WatcherReply *reply)
{
    (void)s;
    mc_engine_wait *w = ctx;
    retire_ask *a = mc_engine_wait_ctx(w);
    mc_engine *e = mc_engine_wait_end(w);
    if (!e)
        return;
    base_retire *r = retire_of(e);
    if (!reply || reply->status != MC__CONTROL__WATCHER_STATUS__WS_OK) {
        char why[300];
        snprintf(why, sizeof why, "the manager did not mark it retiring: %s",
                 !reply ? "no answer" : reply->error && *reply->error ? reply->error
                                                                     : "refused");
        if (r)
            r->phase = R_IDLE;
        mc_watch_complete(a->done, false, NULL, why);
        free(a);
        return;
    }
    char text[200];
    snprintf(text, sizeof text, "retiring: %zu bases to offload", live_count(e));
    /* every registration from now on says so: a restarted manager keeps us out of the ring */
    mc_server_set_retiring(mc_engine_server(e), true);
    if (r && r->phase == R_MARKING) {
        r->phase = R_MOVING;
        r->last_tick = mc_clock_now_us();
        r->budget = 0;
        MC_WARNING("%s", text);
    }
    mc_watch_complete(a->done, true, text, NULL);
    free(a);
}

static void cmd_retire(void *ctx, int argc, const char *const *argv, mc_watch_done *done)
{
    (void)argv;
    mc_engine *e = ctx;
    base_retire *r = retire_of(e);
    if (argc != 0) {
        mc_watch_complete(done, false, NULL, "usage: retire");
        return;
    }
    if (!r) {
        mc_watch_complete(done, false, NULL, "retiring is not set up");
        return;
    }
    if (r->phase != R_IDLE) {
        char text[120];
        snprintf(text, sizeof text, "already %s: %zu bases left", phase_names[r->phase],
                 live_count(e));
        mc_watch_complete(done, true, text, NULL);
        return;
    }
    mc_server *s = mc_engine_server(e);
    const char *manager = mc_config_get_string(mc_server_config(s), "manager");
    retire_ask *a = calloc(1, sizeof *a);
    mc_engine_wait *w = a ? mc_engine_wait_new(e, ask_cancel, a) : NULL;
    if (!w) {
        free(a);
        mc_watch_complete(done, false, NULL, "out of memory");
        return;
    }
    a->done = done;
    a->wait = w;
    Mc__Control__WatcherRequest req = MC__CONTROL__WATCHER_REQUEST__INIT;
    req.op = MC__CONTROL__WATCHER_OP__WATCHER_CALL;
    req.path = "command/retireBaseapp";
    char *args[1] = {(char *)mc_server_name(s)};
    req.n_args = 1;
    req.args = args;
    r->phase = R_MARKING;
    if (!manager || mc_server_ask_watcher(s, manager, &req, 10000, on_marked, w) != 0) {
        r->phase = R_IDLE;
        mc_engine_wait_drop(w);
        free(a);
        mc_watch_complete(done, false, NULL, "cannot reach the manager");
    }
}

/* ---- watchers, life ------------------------------------------------------------------------ */

static void get_phase(void *ctx, mc_watch_value *out)
{
    base_retire *r = ctx;
    out->as.s = strdup(phase_names[r->phase]);
}

static void get_left(void *ctx, mc_watch_value *out)
{
    base_retire *r = ctx;
    out->as.u = live_count(r->e);
}

static int add_watchers(base_retire *r)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(r->e));
    struct {
        const char *path;
        uint64_t *v;
    } u[] = {
        {"retire/offloaded", &r->st.offloaded},
        {"retire/failed", &r->st.failed},
        {"retire/bytes", &r->st.bytes},
        {"retire/forwarded", &r->st.forwarded},
        {"retire/callsWaited", &r->st.waited},
        {"retire/callsRefused", &r->st.refused_calls},
        {"retire/callsWaiting", &r->nwaiting},
        {"retire/clientsMoved", &r->st.clients},
        {"retire/noTarget", &r->st.no_target},
        {"retire/waves", &r->st.waves},
        {"retire/moving", &r->nmoving},
        {"retire/received", &r->st.received},
        {"retire/receiveRefused", &r->st.receive_refused},
        {"retire/resent", &r->st.resent},
        {"retire/bytesPerSec", &r->bytes_per_sec},
        {"retire/passed", &r->st.passed},
        {"retire/clientCalls", &r->st.client_calls},
        {"retire/late", &r->st.late},
        {"retire/homesSent", &r->st.homes_sent},
        {"retire/retargeted", &r->st.retargeted},
        {"retire/held", &r->st.held},
        {"retire/heldReleased", &r->st.released},
        {"retire/holdFull", &r->st.hold_full},
        {"retire/holdMax", &r->hold_max},
        {"retire/holdBytes", &r->hold_bytes},
        {"retire/laggards", &r->st.laggards},
        {"retire/laggardsEnded", &r->st.laggards_ended},
        {"retire/laggardsWaiting", &r->nlaggards},
        {"retire/lagHeld", &r->st.lag_held},
        {"retire/lagSenders", &r->lags.n},
        {"retire/holding", &r->nheld},
        {"retire/homesKnown", &r->nhomes},
        {"retire/homesForwarded", &r->st.homes_forwarded},
        {"retire/homesTold", &r->st.homes_told},
        {"retire/handoversRestarted", &r->st.handovers_restarted},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        bad |= mc_watch_add_uint(w, u[i].path, u[i].v, MC_WATCH_READ_ONLY) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "retire/state", MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_phase, NULL,
                        r) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "retire/basesLeft", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_left,
                        NULL, r) != MC_WATCH_OK;
    bad |= mc_watch_add_async_callable(w, "command/retire", cmd_retire, r->e,
                                       "retire: offload every base (and its client) to the "
                                       "other baseapps, then stop (docs/ENTITIES.md)") !=
           MC_WATCH_OK;
    return bad ? -1 : 0;
}

void retire_count_received(mc_engine *e, bool ok)
{
    base_retire *r = retire_of(e);
    if (!r)
        return;
    if (ok)
        r->st.received++;
    else
        r->st.receive_refused++;
}

bool retire_home_killed(const base_retire *r, const mc_address *home)
{
    for (size_t i = 0; i < r->nkilled; i++)
        if (mc_address_equal(&r->killed[i], home))
            return !mc_server_peer_is_live(mc_engine_server(r->e), home, MC_ROLE_BASEAPP);
    return false;
}

void retire_on_peer_down(mc_engine *e, const char *addr, bool stopped)
{
    base_retire *r = retire_of(e);
    mc_address a;
    if (!r || mc_address_parse(addr, &a) != MC_OK)
        return;
    for (size_t i = 0; i < r->nkilled; i++)
        if (mc_address_equal(&r->killed[i], &a)) {
            if (stopped) /* a later process at that address stopped: it keeps its bases */
                r->killed[i] = r->killed[--r->nkilled];
            return;
        }
    if (stopped)
        return;
    if (r->nkilled < RETIRE_KILLED_MAX) {
        r->killed[r->nkilled++] = a;
        return;
    }
    r->killed[r->killed_next] = a; /* the oldest is forgotten (its bases went again) */
    r->killed_next = (r->killed_next + 1) % RETIRE_KILLED_MAX;
}

void retire_on_peer_death(mc_engine *e, const char *addr)
{
    base_retire *r = retire_of(e);
    mc_address a;
    if (!r || mc_address_parse(addr, &a) != MC_OK)
        return;
    if (r->nheld || r->lags.n)
        retire_hold_release(r, &a);
    /* a new home died (killed, not stopped) during the handover: its bases go again, the
     * handover starts over */
    if (r->phase == R_HANDOVER && r->nmoved_map && retire_handover_check(r))
        return;
    if (r->phase == R_HANDOVER)
        retire_handover_ended(r, &a); /* a late peer died: its stream ended */
    /* a new home died before we stopped: what we sent it goes again. One that stopped
     * gracefully did not lose them (it passed them on, or they ended with it): never sent
     * again, that would make a second, stale copy. */
    if (r->nmoved_map && (r->phase == R_MOVING || r->phase == R_LINGER) &&
        retire_home_killed(r, &a))
        retire_home_died(r, &a);
}

bool retire_is_retiring(mc_engine *e)
{
    base_retire *r = retire_of(e);
    return r && r->phase != R_IDLE;
}

int retire_init(mc_engine *e, char *err, size_t errlen)
{
    baseapp *a = baseapp_of(e);
    base_retire *r = calloc(1, sizeof *r);
    if (!a || !r) {
        free(r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->e = e;
    mc_map_init(&r->moving);
    mc_map_init(&r->moved);
    mc_map_init(&r->taken);
    mc_map_init(&r->homes);
    a->retire = r;
    const mc_config *cfg = mc_server_config(mc_engine_server(e));
    r->bytes_per_sec = mc_config_get_uint(cfg, "retireBytesPerSec");
    r->in_flight_max = mc_config_get_uint(cfg, "retireInFlight");
    r->linger_ms = mc_config_get_uint(cfg, "retireLingerMs");
    r->hold_max = mc_config_get_uint(cfg, "retireHoldMax");
    r->hold_bytes = mc_config_get_uint(cfg, "retireHoldBytes");
    if (r->hold_max < 1 || r->hold_max > 100000) {
        snprintf(err, errlen, "--retireHoldMax must be 1..100000");
        return -1;
    }
    if (r->hold_bytes < 1024 || r->hold_bytes > 1073741824) {
        snprintf(err, errlen, "--retireHoldBytes must be 1024..1073741824");
        return -1;
    }
    if (r->bytes_per_sec < 1000 || r->bytes_per_sec > 1000000000) {
        snprintf(err, errlen, "--retireBytesPerSec must be 1000..1000000000");
        return -1;
    }
    if (r->in_flight_max < 1 || r->in_flight_max > 100000) {
        snprintf(err, errlen, "--retireInFlight must be 1..100000");
        return -1;
    }
    if (r->linger_ms > 600000) {
        snprintf(err, errlen, "--retireLingerMs must be 0..600000");
        return -1;
    }
    r->tick_ev = event_new(mc_server_event_base(mc_engine_server(e)), -1, EV_PERSIST, on_tick, r);
    if (!r->tick_ev || add_watchers(r) != 0) {
        snprintf(err, errlen, "cannot set up retiring (out of memory)");
        return -1;
    }
    struct timeval tv = {0, RETIRE_TICK_MS * 1000};
    event_add(r->tick_ev, &tv);
    return 0;
}

void retire_free(mc_engine *e)
{
    base_retire *r = retire_of(e);
    if (!r)
        return;
    if (r->tick_ev)
        event_free(r->tick_ev);
    retire_moves_free(r);
    retire_hold_free(r);
    retire_tell_free(r);
    free(r->asked);
    size_t pos = 0;
    void *v;
    while ((v = mc_map_next(&r->homes, &pos)))
        free(v);
    mc_map_free(&r->homes);
    free(r);
    baseapp_of(e)->retire = NULL;
}
