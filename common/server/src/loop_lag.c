/* How late the event loop runs a due timer (the loop/ watchers, docs/ARCHITECTURE.md "Busy
 * is not dead"): a probe timer armed every LAG_PROBE_MS; when it fires, how long after it was
 * due is the time the loop spent on other work in one go (a long turn), within the probe's
 * period. The heartbeat timer waits exactly as long, so this is what a busy process's
 * heartbeats are delayed by. */
#include "server_internal.h"
#include "common/log.h"

#define LAG_PROBE_MS 20
#define LAG_WINDOW_US (10 * MC_US_PER_S)
#define LAG_STALL_MS 1000

static void arm(mc_server *s, mc_time_us now)
{
    static const struct timeval tv = {0, LAG_PROBE_MS * 1000};
    s->lag.due = now + LAG_PROBE_MS * MC_US_PER_MS;
    event_add(s->lag.ev, &tv);
}

static void on_probe(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    mc_server *s = ctx;
    mc_time_us now = mc_clock_now_us();
    uint64_t lag_ms = now > s->lag.due ? (now - s->lag.due) / MC_US_PER_MS : 0;
    if (now - s->lag.window_start >= LAG_WINDOW_US) {
        s->lag.prev_window_max = s->lag.window_max;
        s->lag.window_max = 0;
        s->lag.window_start = now;
    }
    if (lag_ms > s->lag.window_max)
        s->lag.window_max = lag_ms;
    if (lag_ms > s->lag.max_ms)
        s->lag.max_ms = lag_ms;
    if (lag_ms >= LAG_STALL_MS) {
        s->lag.stalls++;
        if (s->lag.stalls <= 10 || s->lag.stalls % 100 == 0)
            MC_WARNING("the event loop was busy for %llu ms in one go (%llu such stalls so "
                       "far): heartbeats waited as long",
                       (unsigned long long)lag_ms, (unsigned long long)s->lag.stalls);
    }
    arm(s, now);
}

static void get_recent(void *ctx, mc_watch_value *out)
{
    mc_server *s = ctx;
    uint64_t a = s->lag.window_max, b = s->lag.prev_window_max;
    out->as.u = a > b ? a : b;
}

int mc_server_lag_init(mc_server *s)
{
    s->lag.ev = event_new(s->base, -1, 0, on_probe, s);
    if (!s->lag.ev)
        return -1;
    mc_watchers *w = s->watchers;
    int bad = mc_watch_add_uint(w, "loop/maxLagMs", &s->lag.max_ms, MC_WATCH_READ_WRITE);
    bad |= mc_watch_add(w, "loop/recentMaxLagMs", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_recent,
                        NULL, s);
    bad |= mc_watch_add_uint(w, "loop/stalls", &s->lag.stalls, MC_WATCH_READ_ONLY);
    return bad ? -1 : 0;
}

void mc_server_lag_start(mc_server *s)
{
    mc_time_us now = mc_clock_now_us();
    s->lag.window_start = now;
    arm(s, now);
}

void mc_server_lag_free(mc_server *s)
{
    if (s->lag.ev)
        event_free(s->lag.ev);
    s->lag.ev = NULL;
}
