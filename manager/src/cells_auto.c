/* Automatic splits and merges (cells_auto.h): the cellapps' load reports, and a look every
 * --cellAutoMs for one split or one merge. */
#include "cells_auto.h"
#include "cells.h"
#include "manager_internal.h"
#include "common/clock.h"
#include "common/log.h"
#include "server/control.h"
#include "server/pb.h"

#include <event2/event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_FRESH_US 3000000 /* a report older than this (3 s, three reports) is stale */

/* A cellapp's latest report. */
typedef struct {
    uint32_t pid;
    mc_time_us at;         /* when it arrived */
    mc_time_us over_since; /* since when its load is at least the split load (0: it is not) */
    mc_time_us under_since; /* since when it is at most the merge load (0: it is not) */
    double load;
    bool retiring;
    uint32_t reals;
    mc_cells_space_load spaces[MC_CELL_LOAD_SPACES_MAX];
    size_t nspaces;
} report;

/* A cell an automatic split made (the only ones merged back by load). */
typedef struct {
    int32_t space;
    uint32_t pid;
} auto_cell;

typedef struct {
    const char *option, *path;
    bool is_float;
    double min, max;
    bool zero_ok; /* 0 allowed besides min..max */
} param;

enum { P_CHECK_MS, P_SPLIT_LOAD, P_SPLIT_HOLD, P_MIN_REALS, P_MERGE_LOAD, P_MERGE_HOLD, P_GAP,
       P_COUNT };

static const param params[P_COUNT] = {
    {"cellAutoMs", "cells/auto/checkMs", false, 100, 600000, true},
    {"cellSplitLoad", "cells/auto/splitLoad", true, 0.01, 100, false},
    {"cellSplitHoldMs", "cells/auto/splitHoldMs", false, 0, 3600000, false},
    {"cellSplitMinReals", "cells/auto/splitMinReals", false, 2, 1e9, false},
    {"cellMergeLoad", "cells/auto/mergeLoad", true, 0, 100, false},
    {"cellMergeHoldMs", "cells/auto/mergeHoldMs", false, 1000, 3600000, false},
    {"cellAutoGapMs", "cells/auto/gapMs", false, 0, 3600000, false},
};

typedef struct {
    struct mc_cells_auto *a;
    int which;
} param_ref;

struct mc_cells_auto {
    mc_manager *m;
    struct event *ev;
    double v[P_COUNT];
    param_ref refs[P_COUNT];
    report *reports;
    size_t nreports, capreports;
    auto_cell *made;
    size_t nmade, capmade;
    mc_time_us last_change; /* the last automatic split or merge (0: none) */
    uint64_t loads, loads_refused, splits, merges, no_target, looks;
};

static bool in_range(const param *p, double v)
{
    return (p->zero_ok && v == 0) || (v >= p->min && v <= p->max);
}

static double config_value(const mc_config *cfg, const param *p)
{
    return p->is_float ? mc_config_get_float(cfg, p->option)
                       : (double)mc_config_get_uint(cfg, p->option);
}

bool mc_cells_auto_check(const mc_config *cfg, char *err, size_t errlen)
{
    for (int i = 0; i < P_COUNT; i++) {
        double v = config_value(cfg, &params[i]);
        if (!in_range(&params[i], v)) {
            snprintf(err, errlen, "--%s: %g is not %swithin %g..%g", params[i].option, v,
                     params[i].zero_ok ? "0 or " : "", params[i].min, params[i].max);
            return false;
        }
    }
    double split = mc_config_get_float(cfg, "cellSplitLoad");
    double merge = mc_config_get_float(cfg, "cellMergeLoad");
    if (!(merge < split / 2)) {
        snprintf(err, errlen, "--cellMergeLoad: %g is not below half of --cellSplitLoad (%g)",
                 merge, split);
        return false;
    }
    return true;
}

static report *find_report(mc_cells_auto *a, uint32_t pid)
{
    for (size_t i = 0; i < a->nreports; i++)
        if (a->reports[i].pid == pid)
            return &a->reports[i];
    return NULL;
}

static bool alive_cellapp(const mc_reg_entry *e)
{
    return e && e->role == MC_ROLE_CELLAPP &&
           e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE;
}

/* A live cellapp's load as it reported it lately; one that has not reported (lately)
 * counts as idle when idle_if_unknown, else as unknown (-1). */
static double load_of(mc_cells_auto *a, uint32_t pid, mc_time_us now, bool idle_if_unknown)
{
    report *r = find_report(a, pid);
    if (r && now - r->at <= REPORT_FRESH_US)
        return r->load;
    return idle_if_unknown ? 0.0 : -1.0;
}

static void forget_made(mc_cells_auto *a, size_t i) { a->made[i] = a->made[--a->nmade]; }

static void note_made(mc_cells_auto *a, int32_t space, uint32_t pid)
{
    if (a->nmade == a->capmade) {
        size_t cap = a->capmade ? a->capmade * 2 : 16;
        auto_cell *p = realloc(a->made, cap * sizeof *p);
        if (!p)
            return; /* (then it is never merged back by load: logged nowhere, harmless) */
        a->made = p;
        a->capmade = cap;
    }
    a->made[a->nmade++] = (auto_cell){space, pid};
}

/* The least loaded live cellapp not serving space, loaded below `below` (NULL: none). */
static mc_reg_entry *target_for(mc_cells_auto *a, int32_t space, double below, mc_time_us now)
{
    mc_manager *m = a->m;
    mc_cells *cells = mc_manager_cells_partition(m);
    mc_reg_entry *best = NULL;
    double best_load = 0;
    for (size_t i = 0; i < mc_registry_count(m->registry); i++) {
        mc_reg_entry *e = mc_registry_at(m->registry, i);
        if (!alive_cellapp(e) || mc_cells_served_by(cells, space, e->id, NULL) ||
            mc_cells_auto_retiring(m, e->id))
            continue;
        double l = load_of(a, e->id, now, true);
        if (!(l < below))
            continue;
        if (!best || l < best_load) {
            best = e;
            best_load = l;
        }
    }
    return best;
}

/* One split, if a cellapp has been busy long enough and has somewhere to give to. */
static bool try_split(mc_cells_auto *a, mc_time_us now)
{
    mc_manager *m = a->m;
    mc_cells *cells = mc_manager_cells_partition(m);
    double threshold = a->v[P_SPLIT_LOAD];
    mc_time_us hold = (mc_time_us)a->v[P_SPLIT_HOLD] * 1000;
    /* the busiest cellapp over the threshold for long enough */
    report *busy = NULL;
    for (size_t i = 0; i < a->nreports; i++) {
        report *r = &a->reports[i];
        if (!r->over_since || r->retiring || now - r->at > REPORT_FRESH_US ||
            now - r->over_since < hold ||
            !alive_cellapp(mc_registry_find_id(m->registry, r->pid)))
            continue;
        if (!busy || r->load > busy->load)
            busy = r;
    }
    if (!busy)
        return false;
    /* its costliest cell (the highest cell load, most reals among equals) that can be split
     * somewhere */
    size_t order[MC_CELL_LOAD_SPACES_MAX];
    size_t norder = mc_cells_auto_split_order(busy->spaces, busy->nspaces,
                                              (uint32_t)a->v[P_MIN_REALS], order);
    for (size_t k = 0; k < norder; k++) {
        const mc_cells_space_load *s = &busy->spaces[order[k]];
        mc_cell_rect r;
        if (!mc_cells_served_by(cells, s->space, busy->pid, &r))
            continue; /* outside the partition (not told of it yet, or beyond its bounds) */
        if (mc_cells_layout(cells, s->space, NULL, 0, NULL) >= mc_cells_max_cells(cells))
            continue;
        mc_reg_entry *to = target_for(a, s->space, threshold / 2, now);
        if (!to) {
            a->no_target++;
            continue;
        }
        /* at the median of its reals there, when that lies well inside the cell */
        int axis = mc_cells_split_axis(cells, s->space, busy->pid);
        float at = axis == 0 ? s->x : s->z;
        float lo = axis == 0 ? r.x_min : r.z_min, hi = axis == 0 ? r.x_max : r.z_max;
        bool has_at = isfinite(at) && at > lo + MC_CELLS_MIN_SPAN_M &&
                      at < hi - MC_CELLS_MIN_SPAN_M;
        char text[512], why[64];
        snprintf(why, sizeof why, "load %.2f for %llu ms, its cell %.2f", busy->load,
                 (unsigned long long)((now - busy->over_since) / 1000), s->load);
        if (mc_manager_cells_split_onto(m, s->space, busy->pid, to->id, has_at, at, why, text,
                                        sizeof text) != MC_CELLS_OK)
            continue;
        note_made(a, s->space, to->id);
        a->splits++;
        a->last_change = now;
        busy->over_since = now; /* hysteresis: busy for another hold before the next split */
        return true;
    }
    return false;
}

/* One merge of a cell an automatic split made, when both sides have been idle long enough. */
static bool try_merge(mc_cells_auto *a, mc_time_us now)
{
    mc_manager *m = a->m;
    mc_cells *cells = mc_manager_cells_partition(m);
    if (!(a->v[P_MERGE_LOAD] > 0))
        return false;
    mc_time_us hold = (mc_time_us)a->v[P_MERGE_HOLD] * 1000;
    for (size_t i = 0; i < a->nmade;) {
        auto_cell c = a->made[i];
        uint32_t sib;
        if (!mc_cells_served_by(cells, c.space, c.pid, NULL)) {
            forget_made(a, i); /* merged otherwise, or the space went */
            continue;
        }
        i++;
        if (!mc_cells_sibling(cells, c.space, c.pid, &sib))
            continue; /* split further below its sibling: not a plain pair */
        report *x = find_report(a, c.pid), *y = find_report(a, sib);
        bool idle = x && y && x->under_since && y->under_since &&
                    now - x->at <= REPORT_FRESH_US && now - y->at <= REPORT_FRESH_US &&
                    now - x->under_since >= hold && now - y->under_since >= hold;
        if (!idle)
            continue;
        char why[96];
        snprintf(why, sizeof why, "loads %.2f and %.2f for %llu ms", x->load, y->load,
                 (unsigned long long)(a->v[P_MERGE_HOLD]));
        if (!mc_manager_cells_merge_away(m, c.space, c.pid, why))
            continue;
        forget_made(a, i - 1);
        a->merges++;
        a->last_change = now;
        return true;
    }
    return false;
}

static void look(mc_cells_auto *a)
{
    if (!a->v[P_CHECK_MS])
        return;
    mc_time_us now = mc_clock_now_us();
    a->looks++;
    if (a->last_change && now - a->last_change < (mc_time_us)a->v[P_GAP] * 1000)
        return;
    if (!try_split(a, now))
        try_merge(a, now);
}

static void on_timer(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    look(ctx);
}

static void arm(mc_cells_auto *a)
{
    if (!a->ev)
        return;
    event_del(a->ev);
    uint64_t ms = (uint64_t)a->v[P_CHECK_MS];
    if (!ms)
        return;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    event_add(a->ev, &tv);
}

static void refuse(mc_cells_auto *a, const char *why, const char *src)
{
    a->loads_refused++;
    mc_manager_unusable(a->m, why, src);
}

size_t mc_cells_auto_split_order(const mc_cells_space_load *spaces, size_t n, uint32_t min_reals,
                                 size_t *order)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const mc_cells_space_load *s = &spaces[i];
        if (s->reals < min_reals)
            continue;
        /* insertion: after every one costlier, or as costly with at least as many reals */
        size_t at = k;
        while (at > 0) {
            const mc_cells_space_load *p = &spaces[order[at - 1]];
            bool after = p->load > s->load || (p->load == s->load && p->reals >= s->reals);
            if (after)
                break;
            order[at] = order[at - 1];
            at--;
        }
        order[at] = i;
        k++;
    }
    return k;
}

bool mc_cells_auto_parse_load(const uint8_t *data, size_t len, mc_cells_load *out, char *why,
                              size_t whylen)
{
    _Static_assert(MC_CELLS_LOAD_SPACES == MC_CELL_LOAD_SPACES_MAX, "one bound");
    Mc__Control__CellLoad *l = mc__control__cell_load__unpack(NULL, len, data);
    if (!l) {
        snprintf(why, whylen, "malformed CELL_LOAD");
        return false;
    }
    const char *bad = NULL;
    if (!(l->tick_load >= 0 && l->tick_load <= 1000))
        bad = "CELL_LOAD with a tick load that is not within 0..1000";
    else if (l->n_spaces > MC_CELL_LOAD_SPACES_MAX)
        bad = "CELL_LOAD naming more than 16 spaces";
    for (size_t i = 0; !bad && i < l->n_spaces; i++) {
        const Mc__Control__SpaceLoad *s = l->spaces[i];
        if (s->space_id <= 0 || !isfinite(s->x) || !isfinite(s->z))
            bad = "CELL_LOAD with a space id <= 0 or a position that is not finite";
        else if (!(s->load >= 0 && s->load <= 1000))
            bad = "CELL_LOAD with a cell load that is not within 0..1000";
        for (size_t j = 0; !bad && j < i; j++)
            if (l->spaces[j]->space_id == s->space_id)
                bad = "CELL_LOAD naming a space twice";
    }
    if (bad) {
        snprintf(why, whylen, "%s", bad);
        mc_pb_free(l);
        return false;
    }
    out->tick_load = l->tick_load;
    out->reals = l->reals;
    out->nspaces = l->n_spaces;
    out->retiring = l->retiring;
    for (size_t i = 0; i < l->n_spaces; i++)
        out->spaces[i] = (mc_cells_space_load){l->spaces[i]->space_id, l->spaces[i]->reals,
                                               l->spaces[i]->x, l->spaces[i]->z,
                                               l->spaces[i]->load};
    mc_pb_free(l);
    return true;
}

void mc_cells_auto_on_load(mc_manager *m, const char *src, const uint8_t *data, size_t len)
{
    mc_cells_auto *a = m->cells_auto;
    if (!a)
        return;
    mc_reg_entry *e = mc_registry_find_alive_addr(m->registry, src);
    if (!alive_cellapp(e)) {
        refuse(a, "CELL_LOAD from a process that is not a live cellapp", src);
        return;
    }
    mc_cells_load l;
    char why[128];
    if (!mc_cells_auto_parse_load(data, len, &l, why, sizeof why)) {
        refuse(a, why, src);
        return;
    }
    report *r = find_report(a, e->id);
    bool first = !r;
    if (!r) {
        if (a->nreports == a->capreports) {
            size_t cap = a->capreports ? a->capreports * 2 : 8;
            report *p = realloc(a->reports, cap * sizeof *p);
            if (!p)
                return;
            a->reports = p;
            a->capreports = cap;
        }
        r = &a->reports[a->nreports++];
        memset(r, 0, sizeof *r);
        r->pid = e->id;
    }
    mc_time_us now = mc_clock_now_us();
    a->loads++;
    r->at = now;
    r->load = l.tick_load;
    r->reals = l.reals;
    if (l.retiring && !r->retiring)
        MC_INFO("%s is retiring: it is given no cell from now on", e->name);
    r->retiring = l.retiring;
    r->nspaces = l.nspaces;
    memcpy(r->spaces, l.spaces, l.nspaces * sizeof l.spaces[0]);
    if (r->load >= a->v[P_SPLIT_LOAD]) {
        if (!r->over_since)
            r->over_since = now;
    } else {
        r->over_since = 0;
    }
    if (r->load <= a->v[P_MERGE_LOAD]) {
        if (!r->under_since)
            r->under_since = now;
    } else {
        r->under_since = 0;
    }
    if (first) {
        MC_DEBUG("%s reports its load: looking for a share to give it", e->name);
        look(a); /* a cellapp born into a live cluster takes a share at once */
    }
}

double mc_cells_auto_tick_load(mc_manager *m, uint32_t process_id)
{
    return m->cells_auto ? load_of(m->cells_auto, process_id, mc_clock_now_us(), false) : -1;
}

double mc_cells_auto_cell_load(mc_manager *m, int32_t space, uint32_t process_id)
{
    mc_cells_auto *a = m->cells_auto;
    report *r = a ? find_report(a, process_id) : NULL;
    if (!r || mc_clock_now_us() - r->at > REPORT_FRESH_US)
        return -1;
    for (size_t i = 0; i < r->nspaces; i++)
        if (r->spaces[i].space == space)
            return r->spaces[i].load;
    return 0;
}

bool mc_cells_auto_retiring(mc_manager *m, uint32_t process_id)
{
    report *r = m->cells_auto ? find_report(m->cells_auto, process_id) : NULL;
    return r && r->retiring;
}

void mc_cells_auto_process_gone(mc_manager *m, uint32_t process_id)
{
    mc_cells_auto *a = m->cells_auto;
    if (!a)
        return;
    for (size_t i = 0; i < a->nreports; i++)
        if (a->reports[i].pid == process_id) {
            a->reports[i] = a->reports[--a->nreports];
            break;
        }
    for (size_t i = 0; i < a->nmade;)
        if (a->made[i].pid == process_id)
            forget_made(a, i);
        else
            i++;
}

static void get_param(void *ctx, mc_watch_value *out)
{
    param_ref *r = ctx;
    if (params[r->which].is_float)
        out->as.f = r->a->v[r->which];
    else
        out->as.u = (uint64_t)r->a->v[r->which];
}

static bool set_param(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    param_ref *r = ctx;
    const param *p = &params[r->which];
    double x = p->is_float ? v->as.f : (double)v->as.u;
    if (!in_range(p, x)) {
        snprintf(why, whylen, "not %swithin %g..%g", p->zero_ok ? "0 or " : "", p->min, p->max);
        return false;
    }
    double split = r->which == P_SPLIT_LOAD ? x : r->a->v[P_SPLIT_LOAD];
    double merge = r->which == P_MERGE_LOAD ? x : r->a->v[P_MERGE_LOAD];
    if (!(merge < split / 2)) {
        snprintf(why, whylen, "the merge load must stay below half of the split load");
        return false;
    }
    r->a->v[r->which] = x;
    if (r->which == P_CHECK_MS)
        arm(r->a);
    return true;
}

bool mc_cells_auto_init(mc_manager *m)
{
    mc_cells_auto *a = calloc(1, sizeof *a);
    if (!a)
        return false;
    m->cells_auto = a;
    a->m = m;
    const mc_config *cfg = mc_server_config(m->server);
    for (int i = 0; i < P_COUNT; i++) {
        a->v[i] = config_value(cfg, &params[i]);
        a->refs[i] = (param_ref){a, i};
    }
    a->ev = event_new(mc_server_event_base(m->server), -1, EV_PERSIST, on_timer, a);
    if (!a->ev)
        return false;
    arm(a);
    /* the partition's part asks what the reports say (it sits below this file) */
    mc_manager_cells_set_loads(m, (mc_manager_cells_loads){.retiring = mc_cells_auto_retiring,
                                                           .tick_load = mc_cells_auto_tick_load,
                                                           .cell_load = mc_cells_auto_cell_load});
    mc_watchers *w = mc_server_watchers(m->server);
    int bad = 0;
    for (int i = 0; i < P_COUNT; i++)
        bad |= mc_watch_add(w, params[i].path, params[i].is_float ? MC_WATCH_FLOAT : MC_WATCH_UINT,
                            MC_WATCH_READ_WRITE, get_param, set_param, &a->refs[i]) !=
               MC_WATCH_OK;
    bad |= mc_watch_add_uint(w, "cells/auto/splits", &a->splits, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/auto/merges", &a->merges, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/auto/noTarget", &a->no_target, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/auto/looks", &a->looks, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/auto/loads", &a->loads, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/auto/loadsRefused", &a->loads_refused, MC_WATCH_READ_ONLY);
    return !bad;
}

void mc_cells_auto_stop(mc_manager *m)
{
    mc_cells_auto *a = m->cells_auto;
    if (a && a->ev) {
        event_free(a->ev);
        a->ev = NULL;
    }
}

void mc_cells_auto_free(mc_manager *m)
{
    mc_cells_auto *a = m->cells_auto;
    if (!a)
        return;
    if (a->ev)
        event_free(a->ev);
    free(a->reports);
    free(a->made);
    free(a);
    m->cells_auto = NULL;
}
