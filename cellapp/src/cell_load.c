/* The cellapp's load report (docs/WORLD.md "Automatic splits"): every second the manager is
 * told how loaded this cellapp is (CELL_LOAD): the view update's work over its period,
 * smoothed (aoi_tick.c keeps it), plus the knob cells/tickLoadBoost (0 unless an operator or
 * a test sets it: a rehearsal of an overloaded cellapp), its reals, and for the 16 cells
 * that cost most here (cell_work.c's loads; most reals first among equals) their space's
 * reals, median position (where the manager splits a cell it decides to split) and load;
 * a retiring cellapp says so (the manager gives it no cell).
 * Watchers cells/tickLoad, cells/tickLoadBoost (settable),
 * cells/loadReports, cells/loadReportFailures. */
#include "cellapp.h"
#include "common/log.h"
#include "server/control.h"

#include <event2/event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define REPORT_MS 1000
#define CELL_LOAD_MIN 0.001 /* a cell without reals costing less is not reported */

typedef struct cell_load {
    mc_engine *e;
    struct event *ev;
    double boost;
    bool retiring;
    float *scratch; /* positions of one space's reals */
    size_t cap;
    uint64_t reports, failures;
} cell_load;

static cell_state *state(mc_engine *e) { return mc_engine_role_state(e); }

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The median of the reals' x (axis 0) or z of sp, halfway between the two middle ones (0
 * when none or out of memory). */
static float median(cell_load *l, const mc_space *sp, int axis)
{
    if (sp->nreal > l->cap) {
        float *p = realloc(l->scratch, sp->nreal * sizeof *p);
        if (!p)
            return 0;
        l->scratch = p;
        l->cap = sp->nreal;
    }
    size_t n = 0;
    for (size_t i = 0; i < sp->n && n < l->cap; i++) {
        const mc_entity *ent = sp->entities[i];
        if (!ent->is_ghost && isfinite(ent->position.x) && isfinite(ent->position.z))
            l->scratch[n++] = axis ? ent->position.z : ent->position.x;
    }
    if (!n)
        return 0;
    qsort(l->scratch, n, sizeof *l->scratch, by_value);
    /* halfway between the two middle reals: a split there leaves no real on the line */
    return n < 2 ? l->scratch[0] : l->scratch[n / 2 - 1] / 2 + l->scratch[n / 2] / 2;
}

/* Whether space a goes before b in the report: the costlier cell, then the most reals. */
static bool before(const mc_space *a, const mc_space *b)
{
    double la = cell_work_load(a), lb = cell_work_load(b);
    return la != lb ? la > lb : a->nreal > b->nreal;
}

static void report(cell_load *l)
{
    mc_engine *e = l->e;
    cell_state *cs = state(e);
    /* the costliest cells, at most MC_CELL_LOAD_SPACES_MAX (a partial selection) */
    const mc_space *top[MC_CELL_LOAD_SPACES_MAX];
    size_t nt = 0;
    uint64_t reals = 0;
    for (size_t s = 0; s < cs->n; s++) {
        const mc_space *sp = cs->spaces[s];
        reals += sp->nreal;
        if (!sp->nreal && !(cell_work_load(sp) >= CELL_LOAD_MIN))
            continue;
        size_t at = nt < MC_CELL_LOAD_SPACES_MAX ? nt++ : MC_CELL_LOAD_SPACES_MAX;
        while (at > 0 && before(sp, top[at - 1])) {
            if (at < MC_CELL_LOAD_SPACES_MAX)
                top[at] = top[at - 1];
            at--;
        }
        if (at < MC_CELL_LOAD_SPACES_MAX)
            top[at] = sp;
    }
    Mc__Control__SpaceLoad sl[MC_CELL_LOAD_SPACES_MAX], *ptrs[MC_CELL_LOAD_SPACES_MAX];
    for (size_t i = 0; i < nt; i++) {
        mc__control__space_load__init(&sl[i]);
        sl[i].space_id = top[i]->id;
        sl[i].reals = (uint32_t)top[i]->nreal;
        sl[i].x = median(l, top[i], 0);
        sl[i].z = median(l, top[i], 1);
        sl[i].load = (float)cell_work_load(top[i]);
        ptrs[i] = &sl[i];
    }
    Mc__Control__CellLoad m = MC__CONTROL__CELL_LOAD__INIT;
    double load = cs->aoi.tick_load + l->boost;
    m.tick_load = (float)(load > 1000 ? 1000 : load);
    m.reals = reals > UINT32_MAX ? UINT32_MAX : (uint32_t)reals;
    m.n_spaces = nt;
    m.spaces = ptrs;
    m.retiring = l->retiring;
    int rc = mc_server_send_manager(mc_engine_server(e), MC_CTL_CELL_LOAD, &m);
    if (rc != 0) {
        if (++l->failures <= 10 || l->failures % 1000 == 0)
            MC_WARNING("cannot tell the manager this cellapp's load: %s (%llu so far)",
                       mc_status_name(rc), (unsigned long long)l->failures);
        return;
    }
    l->reports++;
}

static void on_timer(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    report(ctx);
}

static void get_boost(void *ctx, mc_watch_value *out) { out->as.f = ((cell_load *)ctx)->boost; }

static bool set_boost(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    if (!(v->as.f >= 0 && v->as.f <= 100)) {
        snprintf(why, whylen, "not within 0..100");
        return false;
    }
    ((cell_load *)ctx)->boost = v->as.f;
    return true;
}

static void get_tick_load(void *ctx, mc_watch_value *out)
{
    cell_load *l = ctx;
    out->as.f = state(l->e)->aoi.tick_load;
}

void cell_load_retiring(mc_engine *e)
{
    cell_load *l = state(e)->load;
    if (!l || l->retiring)
        return;
    l->retiring = true;
    report(l);
}

int cell_load_init(mc_engine *e, char *err, size_t errlen)
{
    cell_state *cs = state(e);
    cell_load *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cs->load = l;
    l->e = e;
    l->ev = event_new(mc_server_event_base(mc_engine_server(e)), -1, EV_PERSIST, on_timer, l);
    struct timeval tv = {REPORT_MS / 1000, (REPORT_MS % 1000) * 1000};
    if (!l->ev || event_add(l->ev, &tv) != 0) {
        snprintf(err, errlen, "cannot start the load report's timer");
        return -1;
    }
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    int bad = mc_watch_add(w, "cells/tickLoadBoost", MC_WATCH_FLOAT, MC_WATCH_READ_WRITE,
                           get_boost, set_boost, l) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "cells/tickLoad", MC_WATCH_FLOAT, MC_WATCH_READ_ONLY, get_tick_load,
                        NULL, l) != MC_WATCH_OK;
    bad |= mc_watch_add_uint(w, "cells/loadReports", &l->reports, MC_WATCH_READ_ONLY) !=
           MC_WATCH_OK;
    bad |= mc_watch_add_uint(w, "cells/loadReportFailures", &l->failures, MC_WATCH_READ_ONLY) !=
           MC_WATCH_OK;
    if (bad) {
        snprintf(err, errlen, "cannot publish the cells/ load watchers");
        return -1;
    }
    return 0;
}

void cell_load_free(mc_engine *e)
{
    cell_state *cs = state(e);
    cell_load *l = cs ? cs->load : NULL;
    if (!l)
        return;
    if (l->ev)
        event_free(l->ev);
    free(l->scratch);
    free(l);
    cs->load = NULL;
}
