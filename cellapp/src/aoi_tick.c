/* The AoI tick as a sliced job (aoi_tick.h). */
#include "aoi_tick.h"
#include "cellapp.h"
#include "common/clock.h"
#include "common/log.h"
#include "server/histogram.h"
#include "server/sliced.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>

typedef enum { PHASE_VIEWS, PHASE_DIFF, PHASE_SEND } tick_phase;

struct cell_aoi_tick {
    mc_engine *e;
    struct event *period_ev;   /* every 1/aoiHz: a tick is due */
    mc_sliced *job;
    bool due;                  /* the period passed while a tick ran: start at its end */
    tick_phase phase;
    int32_t *witnesses;        /* phases 1 and 3 */
    size_t nw, wcap;
    int32_t *entities;         /* phase 2 */
    size_t ne, ecap;
    size_t at;                 /* the next id of the phase */
    uint64_t in_view;
    mc_ostream scratch;
    uint64_t slice_ms;         /* aoi/sliceMs */
    uint64_t ticks_late;
    struct mc_histogram *tick_hist, *update_hist; /* served on /metrics (server/histogram.h) */
};

static cell_state *state(mc_engine *e) { return mc_engine_role_state(e); }

/* Room for n ids (false: out of memory). */
static bool reserve(int32_t **ids, size_t *cap, size_t n)
{
    if (n <= *cap && *ids)
        return true;
    size_t want = n > 16 ? n + n / 4 : 16;
    int32_t *p = realloc(*ids, want * sizeof *p);
    if (!p)
        return false;
    *ids = p;
    *cap = want;
    return true;
}

static bool begin_diff(cell_aoi_tick *t)
{
    size_t n = cell_aoi_entity_count(t->e);
    if (!reserve(&t->entities, &t->ecap, n)) {
        MC_ERROR("out of memory listing %zu entities to diff; their changes wait a tick", n);
        t->ne = 0;
        return false;
    }
    t->ne = cell_aoi_entity_ids(t->e, t->entities, n);
    return true;
}

static bool step_unit(cell_aoi_tick *t);

/* One unit: a view, a diff or a send, its work counted as that of the space of the
 * entity it was for (cell_work.c; when that entity is gone meanwhile, nowhere). */
static bool step(void *ctx)
{
    cell_aoi_tick *t = ctx;
    const int32_t *ids = t->phase == PHASE_DIFF ? t->entities : t->witnesses;
    size_t n = t->phase == PHASE_DIFF ? t->ne : t->nw;
    int32_t id = t->at < n ? ids[t->at] : 0;
    mc_time_us began = mc_clock_now_us();
    bool more = step_unit(t);
    mc_time_us end = mc_clock_now_us();
    if (id)
        cell_work_of_entity(t->e, id, end > began ? end - began : 0);
    return more;
}

static bool step_unit(cell_aoi_tick *t)
{
    switch (t->phase) {
    case PHASE_VIEWS:
        if (t->at < t->nw) {
            cell_aoi_update_view(t->e, t->witnesses[t->at++]);
            if (t->at < t->nw)
                return true;
        }
        t->phase = PHASE_DIFF;
        t->at = 0;
        begin_diff(t);
        return true;
    case PHASE_DIFF:
        if (t->at < t->ne) {
            cell_aoi_diff_one(t->e, t->entities[t->at++], &t->scratch);
            if (t->at < t->ne)
                return true;
        }
        t->phase = PHASE_SEND;
        t->at = 0;
        return t->nw > 0;
    case PHASE_SEND:
        if (t->at < t->nw)
            t->in_view += cell_aoi_send_one(t->e, t->witnesses[t->at++]);
        return t->at < t->nw;
    }
    return false;
}

/* Take the witnesses, phase 1 next. */
static bool begin_tick(cell_aoi_tick *t)
{
    cell_state *cs = state(t->e);
    size_t max = cs->aoi.witnesses;
    if (!reserve(&t->witnesses, &t->wcap, max ? max : 1)) {
        MC_ERROR("out of memory updating views (%zu witnesses); trying again next tick", max);
        return false;
    }
    t->nw = cell_aoi_witness_ids(t->e, t->witnesses, max);
    t->phase = PHASE_VIEWS;
    t->at = 0;
    t->in_view = 0;
    return true;
}

static void done(void *ctx)
{
    cell_aoi_tick *t = ctx;
    cell_state *cs = state(t->e);
    mc_sliced_stats *st = mc_sliced_stats_of(t->job);
    cs->aoi.updates++;
    cs->aoi.in_view = t->in_view;
    cs->aoi.last_update_us = st->last_wall_us;
    mc_time_us now = mc_clock_now_us();
    if (t->tick_hist)
        mc_histogram_observe_us(t->tick_hist, st->last_work_us, now);
    if (t->update_hist)
        mc_histogram_observe_us(t->update_hist, st->last_wall_us, now);
    /* the tick load: this tick's work over the period, smoothed (a few ticks' memory) */
    double period_us = 1e6 / (cs->aoi.hz ? cs->aoi.hz : 10);
    cs->aoi.tick_load = 0.8 * cs->aoi.tick_load + 0.2 * ((double)st->last_work_us / period_us);
    cell_work_fold(t->e); /* and each cell's load */
    if (st->last_wall_us > cs->aoi.max_update_us)
        cs->aoi.max_update_us = st->last_wall_us;
    if (t->due && begin_tick(t)) {
        /* behind: the next tick at once, but in a turn of its own */
        t->due = false;
        mc_sliced_start_later(t->job);
    }
}

static void on_period(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    cell_aoi_tick *t = ctx;
    mc_sliced_set_slice_us(t->job, t->slice_ms * MC_US_PER_MS);
    if (mc_sliced_running(t->job)) {
        if (!t->due)
            t->ticks_late++;
        t->due = true;
        return;
    }
    if (begin_tick(t))
        mc_sliced_start(t->job);
}

static bool set_slice_ms(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    cell_aoi_tick *t = ctx;
    if (v->as.u < 1 || v->as.u > 1000) {
        snprintf(why, whylen, "aoi/sliceMs must be within 1..1000");
        return false;
    }
    t->slice_ms = v->as.u;
    return true;
}
static void get_slice_ms(void *ctx, mc_watch_value *out)
{
    out->as.u = ((cell_aoi_tick *)ctx)->slice_ms;
}

int cell_aoi_tick_init(mc_engine *e, char *err, size_t errlen)
{
    cell_aoi_state *s = &state(e)->aoi;
    mc_server *srv = mc_engine_server(e);
    uint64_t slice_ms = mc_config_get_uint(mc_server_config(srv), "aoiSliceMs");
    if (slice_ms < 1 || slice_ms > 1000) {
        snprintf(err, errlen, "--aoiSliceMs %llu: must be within 1..1000",
                 (unsigned long long)slice_ms);
        return -1;
    }
    cell_aoi_tick *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->tick = t;
    t->e = e;
    t->slice_ms = slice_ms;
    mc_ostream_init(&t->scratch);
    struct event_base *base = mc_server_event_base(srv);
    t->job = mc_sliced_new(base, slice_ms * MC_US_PER_MS, step, done, t);
    t->period_ev = event_new(base, -1, EV_PERSIST, on_period, t);
    if (!t->job || !t->period_ev) {
        snprintf(err, errlen, "cannot create the AoI update events");
        return -1;
    }
    mc_sliced_stats *st = mc_sliced_stats_of(t->job);
    t->tick_hist = mc_server_histogram(srv, "cellapp_tick_seconds",
                                       "Work time of a view update tick (its slices summed).");
    t->update_hist = mc_server_histogram(
        srv, "cellapp_update_latency_seconds",
        "Wall time from a view update tick's start to its updates written.");
    mc_watchers *w = mc_server_watchers(srv);
    int bad = mc_watch_add(w, "aoi/sliceMs", MC_WATCH_UINT, MC_WATCH_READ_WRITE, get_slice_ms,
                           set_slice_ms, t);
    bad |= mc_watch_add_uint(w, "aoi/slices", &st->slices, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "aoi/lastSlices", &st->last_slices, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "aoi/mostSlices", &st->most_slices, MC_WATCH_READ_WRITE);
    bad |= mc_watch_add_uint(w, "aoi/maxSliceUs", &st->max_slice_us, MC_WATCH_READ_WRITE);
    bad |= mc_watch_add_uint(w, "aoi/lastWorkUs", &st->last_work_us, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "aoi/ticksLate", &t->ticks_late, MC_WATCH_READ_ONLY);
    if (bad) {
        snprintf(err, errlen, "cannot publish the aoi tick watchers");
        return -1;
    }
    struct timeval tv = {0, (suseconds_t)(1000000u / s->hz)};
    if (s->hz == 1)
        tv = (struct timeval){1, 0};
    event_add(t->period_ev, &tv);
    return 0;
}

void cell_aoi_tick_free(mc_engine *e)
{
    cell_state *cs = state(e);
    cell_aoi_tick *t = cs ? cs->aoi.tick : NULL;
    if (!t)
        return;
    if (t->period_ev)
        event_free(t->period_ev);
    mc_sliced_free(t->job);
    mc_ostream_free(&t->scratch);
    free(t->witnesses);
    free(t->entities);
    free(t);
    cs->aoi.tick = NULL;
}
