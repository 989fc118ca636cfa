/* The cellapp-manager part of the manager (manager_cells.h): SPACE_NOTICE in, CELL_LAYOUT
 * out, command/splitSpace, merges on deaths, and the cells/ watchers. */
#include "manager_cells.h"
#include "cells.h"
#include "manager_internal.h"
#include "common/log.h"
#include "common/map.h"
#include "mercury/status.h"
#include "server/control.h"
#include "server/pb.h"

#include <errno.h>
#include <event2/event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a cells/spaces/<id> watcher points at. */
typedef struct {
    mc_manager_cells *mc;
    int32_t space;
} space_ref;

struct mc_manager_cells {
    mc_manager *m;
    mc_cells *cells;
    mc_map refs;        /* space id -> space_ref (its watcher) */
    uint32_t next_version; /* layouts are numbered across spaces: never reused by a manager */
    uint64_t notices, notices_refused, conflicts, splits, merges, handoffs, layouts_sent,
        send_failures, full, ended, balance_moves, balance_ms;
    double balance_step, balance_hysteresis;
    struct event *balance_ev;
    mc_manager_cells_loads loads; /* cells_auto.c's (NULL functions: none known) */
};

static bool retiring(mc_manager *m, uint32_t pid)
{
    return m->cells->loads.retiring && m->cells->loads.retiring(m, pid);
}

static double tick_load(mc_manager *m, uint32_t pid)
{
    return m->cells->loads.tick_load ? m->cells->loads.tick_load(m, pid) : -1.0;
}

static double cell_load(mc_manager *m, int32_t space, uint32_t pid)
{
    return m->cells->loads.cell_load ? m->cells->loads.cell_load(m, space, pid) : -1.0;
}

void mc_manager_cells_set_loads(mc_manager *m, mc_manager_cells_loads loads)
{
    if (m->cells)
        m->cells->loads = loads;
}

bool mc_manager_cells_check(const mc_config *cfg, char *err, size_t errlen)
{
    uint64_t spaces = mc_config_get_uint(cfg, "cellSpacesMax");
    uint64_t per = mc_config_get_uint(cfg, "cellsPerSpaceMax");
    if (spaces < MC_CELLS_SPACES_MIN || spaces > MC_CELLS_SPACES_MAX) {
        snprintf(err, errlen, "--cellSpacesMax: %llu is not within %u..%u",
                 (unsigned long long)spaces, MC_CELLS_SPACES_MIN, MC_CELLS_SPACES_MAX);
        return false;
    }
    if (per < 2 || per > MC_CELLS_PER_SPACE_MAX) {
        snprintf(err, errlen, "--cellsPerSpaceMax: %llu is not within 2..%u",
                 (unsigned long long)per, MC_CELLS_PER_SPACE_MAX);
        return false;
    }
    uint64_t ms = mc_config_get_uint(cfg, "cellBalanceMs");
    if (ms && (ms < 100 || ms > 600000)) {
        snprintf(err, errlen, "--cellBalanceMs: %llu is not 0 or within 100..600000",
                 (unsigned long long)ms);
        return false;
    }
    double step = mc_config_get_float(cfg, "cellBalanceStepM");
    if (!(step >= 0.01 && step <= 1000)) {
        snprintf(err, errlen, "--cellBalanceStepM: %g is not within 0.01..1000", step);
        return false;
    }
    double h = mc_config_get_float(cfg, "cellBalanceHysteresis");
    if (!(h >= 0 && h <= 100)) {
        snprintf(err, errlen, "--cellBalanceHysteresis: %g is not within 0..100", h);
        return false;
    }
    return true;
}

static const char *name_of(mc_manager *m, uint32_t process_id)
{
    mc_reg_entry *e = mc_registry_find_id(m->registry, process_id);
    return e ? e->name : "?";
}

static void bound_text(char *out, size_t n, float lo, float hi)
{
    char a[32], b[32];
    if (isinf(lo))
        snprintf(a, sizeof a, "-inf");
    else
        snprintf(a, sizeof a, "%g", lo);
    if (isinf(hi))
        snprintf(b, sizeof b, "inf");
    else
        snprintf(b, sizeof b, "%g", hi);
    snprintf(out, n, "[%s,%s)", a, b);
}

/* "cellapp01 x[-inf,0) z[-inf,inf); cellapp02 x[0,inf) z[-inf,inf)" */
static void get_layout(void *ctx, mc_watch_value *out)
{
    space_ref *r = ctx;
    mc_manager_cells *mc = r->mc;
    mc_cell_rect cells[MC_CELLS_PER_SPACE_MAX];
    size_t n = mc_cells_layout(mc->cells, r->space, cells, MC_CELLS_PER_SPACE_MAX, NULL);
    size_t cap = 64 + n * 128;
    char *s = calloc(1, cap);
    if (!s)
        return;
    size_t used = 0;
    for (size_t i = 0; i < n && i < MC_CELLS_PER_SPACE_MAX; i++) {
        char x[80], z[80];
        bound_text(x, sizeof x, cells[i].x_min, cells[i].x_max);
        bound_text(z, sizeof z, cells[i].z_min, cells[i].z_max);
        int k = snprintf(s + used, cap - used, "%s%s x%s z%s", i ? "; " : "",
                         name_of(mc->m, cells[i].process_id), x, z);
        if (k < 0 || (size_t)k >= cap - used)
            break;
        used += (size_t)k;
    }
    out->as.s = s;
}

static double load_of(void *ctx, int32_t space, uint32_t pid);

/* "cellapp01 0.83; cellapp02 0.02": each cell's load as the boundaries are balanced by */
static void get_loads(void *ctx, mc_watch_value *out)
{
    space_ref *r = ctx;
    mc_manager_cells *mc = r->mc;
    mc_cell_rect cells[MC_CELLS_PER_SPACE_MAX];
    size_t n = mc_cells_layout(mc->cells, r->space, cells, MC_CELLS_PER_SPACE_MAX, NULL);
    size_t cap = 64 + n * 96;
    char *s = calloc(1, cap);
    if (!s)
        return;
    size_t used = 0;
    for (size_t i = 0; i < n && i < MC_CELLS_PER_SPACE_MAX; i++) {
        int k = snprintf(s + used, cap - used, "%s%s %.3f", i ? "; " : "",
                         name_of(mc->m, cells[i].process_id),
                         load_of(mc->m, r->space, cells[i].process_id));
        if (k < 0 || (size_t)k >= cap - used)
            break;
        used += (size_t)k;
    }
    out->as.s = s;
}

static void watch_space(mc_manager_cells *mc, int32_t space)
{
    space_ref *r = malloc(sizeof *r);
    if (!r)
        return;
    r->mc = mc;
    r->space = space;
    if (!mc_map_put(&mc->refs, (uint64_t)(uint32_t)space, 0, r)) {
        free(r);
        return;
    }
    char p[MC_WATCH_MAX_PATH];
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    mc_watch_add(mc_server_watchers(mc->m->server), p, MC_WATCH_STRING, MC_WATCH_READ_ONLY,
                 get_layout, NULL, r);
    snprintf(p, sizeof p, "cells/loads/%d", (int)space);
    mc_watch_add(mc_server_watchers(mc->m->server), p, MC_WATCH_STRING, MC_WATCH_READ_ONLY,
                 get_loads, NULL, r);
}

static void unwatch_space(mc_manager_cells *mc, int32_t space)
{
    char p[MC_WATCH_MAX_PATH];
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    mc_watch_remove(mc_server_watchers(mc->m->server), p);
    snprintf(p, sizeof p, "cells/loads/%d", (int)space);
    mc_watch_remove(mc_server_watchers(mc->m->server), p);
    free(mc_map_remove(&mc->refs, (uint64_t)(uint32_t)space, 0));
}

/* Tell every live cellapp serving space its layout, and also `also` (a cellapp that no
 * longer serves it: a layout without its cell; 0 for none). A dropped space is sent as
 * a layout with no cells. */
static void send_layout(mc_manager_cells *mc, int32_t space, uint32_t also)
{
    mc_manager *m = mc->m;
    mc_cell_rect rects[MC_CELLS_PER_SPACE_MAX];
    size_t n = mc_cells_layout(mc->cells, space, rects, MC_CELLS_PER_SPACE_MAX, NULL);
    if (n > MC_CELLS_PER_SPACE_MAX)
        n = MC_CELLS_PER_SPACE_MAX;
    Mc__Control__CellRect cr[MC_CELLS_PER_SPACE_MAX];
    Mc__Control__CellRect *ptrs[MC_CELLS_PER_SPACE_MAX];
    for (size_t i = 0; i < n; i++) {
        mc__control__cell_rect__init(&cr[i]);
        cr[i].x_min = rects[i].x_min;
        cr[i].z_min = rects[i].z_min;
        cr[i].x_max = rects[i].x_max;
        cr[i].z_max = rects[i].z_max;
        cr[i].process_id = rects[i].process_id;
        mc_reg_entry *e = mc_registry_find_id(m->registry, rects[i].process_id);
        cr[i].addr = e ? e->internal_addr : (char *)"";
        ptrs[i] = &cr[i];
    }
    Mc__Control__CellLayout lay = MC__CONTROL__CELL_LAYOUT__INIT;
    lay.space_id = space;
    lay.version = ++mc->next_version;
    lay.manager_instance = m->instance;
    lay.n_cells = n;
    lay.cells = ptrs;
    for (size_t i = 0; i <= n; i++) {
        uint32_t pid = i < n ? rects[i].process_id : also;
        if (!pid)
            continue;
        mc_reg_entry *e = mc_registry_find_id(m->registry, pid);
        if (!e || e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
            continue;
        int rc = mc_server_send(m->server, e->internal_addr, MC_CTL_CELL_LAYOUT, &lay);
        if (rc != 0) {
            mc->send_failures++;
            MC_WARNING("cannot send space %d's cells to %s: %s", (int)space, e->name,
                       mc_status_name(rc));
        } else {
            mc->layouts_sent++;
        }
    }
}

/* Every cell of a split space is empty: the space ends; each of its cellapps is sent a
 * layout without cells (it lets its empty space go). */
static void end_space(mc_manager_cells *mc, int32_t space)
{
    mc_cell_rect rects[MC_CELLS_PER_SPACE_MAX];
    size_t n = mc_cells_layout(mc->cells, space, rects, MC_CELLS_PER_SPACE_MAX, NULL);
    if (n > MC_CELLS_PER_SPACE_MAX)
        n = MC_CELLS_PER_SPACE_MAX;
    mc_cells_drop(mc->cells, space);
    unwatch_space(mc, space);
    mc->ended++;
    MC_INFO("space %d ends: every one of its %zu cells is empty", (int)space, n);
    for (size_t i = 0; i < n; i++)
        send_layout(mc, space, rects[i].process_id);
}

static mc_reg_entry *idlest_outsider(mc_manager *m, int32_t space);

/* A retiring cellapp lets go of a space it serves whole (one cell, no neighbour to merge
 * into): the least loaded other live cellapp takes the cell as it is, and the reals move to it
 * as in a split's offload (the retiring one is sent the layout without its cell). With no
 * other cellapp it is told the space is still its own (its cells go with it, as before).
 * False when this is not such a notice. */
static bool hand_whole(mc_manager *m, int32_t space, mc_reg_entry *e)
{
    mc_manager_cells *mc = m->cells;
    mc_cell_rect rects[2];
    if (!retiring(m, e->id) || mc_cells_layout(mc->cells, space, rects, 2, NULL) != 1 ||
        rects[0].process_id != e->id)
        return false;
    mc_reg_entry *to = idlest_outsider(m, space);
    if (!to || mc_cells_reassign(mc->cells, space, e->id, to->id) != MC_CELLS_OK) {
        MC_WARNING("space %d: %s retires and no other live cellapp can take the space it "
                   "serves whole: its cells go with it",
                   (int)space, e->name);
        send_layout(mc, space, 0); /* still its own: it stops waiting */
        return true;
    }
    mc->handoffs++;
    MC_INFO("space %d: %s retires: the space it serves whole goes to %s", (int)space, e->name,
            to->name);
    send_layout(mc, space, e->id); /* it too: it hands its reals over */
    return true;
}

void mc_manager_cells_on_notice(mc_manager *m, const char *src, const uint8_t *data, size_t len)
{
    mc_manager_cells *mc = m->cells;
    Mc__Control__SpaceNotice *n = mc__control__space_notice__unpack(NULL, len, data);
    mc_reg_entry *e = mc_registry_find_alive_addr(m->registry, src);
    if (!n || n->space_id <= 0 || !e || e->role != MC_ROLE_CELLAPP) {
        mc->notices_refused++;
        mc_manager_unusable(m, !n ? "malformed SPACE_NOTICE"
                               : n->space_id <= 0 ? "SPACE_NOTICE for space 0 or below"
                                                  : "SPACE_NOTICE from a process that is "
                                                    "not a live cellapp",
                            src);
        mc_pb_free(n);
        return;
    }
    mc->notices++;
    int32_t space = n->space_id;
    if (n->gone && hand_whole(m, space, e)) {
        mc_pb_free(n);
        return;
    }
    if (n->gone) {
        bool dropped = false;
        if (mc_cells_remove(mc->cells, space, e->id, &dropped) == MC_CELLS_OK) {
            if (dropped) {
                unwatch_space(mc, space);
                MC_INFO("space %d is gone (its last cell, on %s)", (int)space, e->name);
            } else {
                mc->merges++;
                MC_INFO("space %d: %s's cell merged into its neighbour (its space went there)",
                        (int)space, e->name);
                send_layout(mc, space, e->id); /* it too: a retiring one hands reals over */
            }
        }
    } else {
        mc_cells_status st = mc_cells_add_space(mc->cells, space, e->id);
        if (st == MC_CELLS_OK) {
            watch_space(mc, space);
            MC_DEBUG("space %d: one cell on %s", (int)space, e->name);
        } else if (st == MC_CELLS_CONFLICT) {
            mc->conflicts++;
            MC_WARNING("space %d began on %s, which serves no cell of it: its entities there "
                       "stay outside the partition (%llu such so far)",
                       (int)space, e->name, (unsigned long long)mc->conflicts);
        } else if (st == MC_CELLS_FULL) {
            mc->full++;
        }
        if (st == MC_CELLS_OK || st == MC_CELLS_UNCHANGED) {
            mc_cells_set_empty(mc->cells, space, e->id, n->empty);
            if (n->empty && mc_cells_all_empty(mc->cells, space))
                end_space(mc, space);
        }
    }
    mc_pb_free(n);
}

void mc_manager_cells_process_gone(mc_manager *m, uint32_t process_id)
{
    mc_manager_cells *mc = m->cells;
    if (!mc)
        return;
    size_t n = mc_cells_space_count(mc->cells);
    int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids)
        return;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t s = mc_cells_space_at(mc->cells, i);
        if (mc_cells_served_by(mc->cells, s, process_id, NULL))
            ids[k++] = s;
    }
    for (size_t i = 0; i < k; i++) {
        bool dropped = false;
        if (mc_cells_remove(mc->cells, ids[i], process_id, &dropped) != MC_CELLS_OK)
            continue;
        if (dropped) {
            unwatch_space(mc, ids[i]);
        } else {
            mc->merges++;
            MC_INFO("space %d: the cell of %s (gone) merged into its neighbour", (int)ids[i],
                    name_of(m, process_id));
            send_layout(mc, ids[i], 0);
        }
    }
    free(ids);
}

/* The most loaded live cellapp serving space (the cell to split). */
static mc_reg_entry *busiest_server(mc_manager *m, int32_t space)
{
    mc_cell_rect rects[MC_CELLS_PER_SPACE_MAX];
    size_t n = mc_cells_layout(m->cells->cells, space, rects, MC_CELLS_PER_SPACE_MAX, NULL);
    mc_reg_entry *best = NULL;
    for (size_t i = 0; i < n && i < MC_CELLS_PER_SPACE_MAX; i++) {
        mc_reg_entry *e = mc_registry_find_id(m->registry, rects[i].process_id);
        if (e && e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE &&
            (!best || e->load > best->load))
            best = e;
    }
    return best;
}

/* The least loaded live cellapp not serving space. */
static mc_reg_entry *idlest_outsider(mc_manager *m, int32_t space)
{
    mc_reg_entry *best = NULL;
    for (size_t i = 0; i < mc_registry_count(m->registry); i++) {
        mc_reg_entry *e = mc_registry_at(m->registry, i);
        if (e->role != MC_ROLE_CELLAPP || e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE ||
            mc_cells_served_by(m->cells->cells, space, e->id, NULL) ||
            retiring(m, e->id))
            continue;
        if (!best || e->load < best->load)
            best = e;
    }
    return best;
}

/* command/splitSpace SPACE [CELLAPP [AT]] */
static bool call_split(void *ctx, int argc, const char *const *argv, char **result, char *why,
                       size_t whylen)
{
    mc_manager *m = ctx;
    mc_manager_cells *mc = m->cells;
    if (argc < 1 || argc > 3) {
        snprintf(why, whylen, "usage: splitSpace SPACE_ID [CELLAPP [AT]]");
        return false;
    }
    char *end;
    errno = 0;
    long space = strtol(argv[0], &end, 10);
    if (errno || *end || end == argv[0] || space <= 0 || space > INT32_MAX) {
        snprintf(why, whylen, "'%.32s' is not a space id", argv[0]);
        return false;
    }
    if (!mc_cells_has_space(mc->cells, (int32_t)space)) {
        snprintf(why, whylen, "no space %ld on any cellapp", space);
        return false;
    }
    mc_reg_entry *to = NULL;
    if (argc >= 2 && strcmp(argv[1], "-") != 0) {
        to = mc_registry_find_name(m->registry, argv[1]);
        if (!to || to->role != MC_ROLE_CELLAPP ||
            to->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE) {
            snprintf(why, whylen, "'%.32s' is not a live cellapp", argv[1]);
            return false;
        }
    } else {
        to = idlest_outsider(m, (int32_t)space);
        if (!to) {
            snprintf(why, whylen, "every live cellapp serves space %ld already", space);
            return false;
        }
    }
    bool has_at = argc == 3;
    float at = 0;
    if (has_at) {
        errno = 0;
        at = strtof(argv[2], &end);
        if (errno || *end || end == argv[2] || !isfinite(at)) {
            snprintf(why, whylen, "'%.32s' is not a position", argv[2]);
            return false;
        }
    }
    mc_reg_entry *from = busiest_server(m, (int32_t)space);
    if (!from) {
        snprintf(why, whylen, "no live cellapp serves space %ld", space);
        return false;
    }
    char text[512];
    mc_cells_status st = mc_manager_cells_split_onto(m, (int32_t)space, from->id, to->id, has_at,
                                                     at, "operator", text, sizeof text);
    if (st != MC_CELLS_OK) {
        snprintf(why, whylen, "space %ld not split onto %s: %s", space, to->name,
                 mc_cells_status_name(st));
        return false;
    }
    *result = strdup(text);
    return true;
}

mc_cells_status mc_manager_cells_split_onto(mc_manager *m, int32_t space, uint32_t from,
                                            uint32_t to, bool has_at, float at,
                                            const char *who, char *text, size_t textlen)
{
    mc_manager_cells *mc = m->cells;
    mc_cells_status st = mc_cells_split(mc->cells, space, from, to, has_at, at);
    if (st != MC_CELLS_OK)
        return st;
    mc->splits++;
    mc_cell_rect r;
    mc_cells_served_by(mc->cells, space, to, &r);
    char x[80], z[80];
    bound_text(x, sizeof x, r.x_min, r.x_max);
    bound_text(z, sizeof z, r.z_min, r.z_max);
    snprintf(text, textlen, "space %d: %s's cell split, %s serves x%s z%s", (int)space,
             name_of(m, from), name_of(m, to), x, z);
    MC_INFO("%s (%s)", text, who);
    send_layout(mc, space, 0);
    return MC_CELLS_OK;
}

bool mc_manager_cells_merge_away(mc_manager *m, int32_t space, uint32_t process_id,
                                 const char *why)
{
    mc_manager_cells *mc = m->cells;
    bool dropped = false;
    if (mc_cells_remove(mc->cells, space, process_id, &dropped) != MC_CELLS_OK)
        return false;
    if (dropped) {
        unwatch_space(mc, space);
        return true;
    }
    mc->merges++;
    MC_INFO("space %d: the cell of %s merged into its neighbour (%s)", (int)space,
            name_of(m, process_id), why);
    send_layout(mc, space, process_id); /* it too: it hands its reals over */
    return true;
}

mc_reg_entry *mc_manager_cells_home(mc_manager *m, int32_t space, uint32_t held)
{
    mc_manager_cells *mc = m->cells;
    if (!mc || !mc_cells_has_space(mc->cells, space))
        return NULL;
    if (held && mc_cells_served_by(mc->cells, space, held, NULL)) {
        mc_reg_entry *e = mc_registry_find_id(m->registry, held);
        if (e && e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
            return e;
    }
    mc_cell_rect rects[MC_CELLS_PER_SPACE_MAX];
    size_t n = mc_cells_layout(mc->cells, space, rects, MC_CELLS_PER_SPACE_MAX, NULL);
    mc_reg_entry *best = NULL;
    for (size_t i = 0; i < n && i < MC_CELLS_PER_SPACE_MAX; i++) {
        mc_reg_entry *e = mc_registry_find_id(m->registry, rects[i].process_id);
        if (e && e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE &&
            !retiring(m, e->id) && (!best || e->load < best->load))
            best = e;
    }
    return best;
}

mc_cells *mc_manager_cells_partition(mc_manager *m) { return m->cells ? m->cells->cells : NULL; }

/* A cell's load for the boundaries: the load its cellapp reported lately for its cell of
 * the space (not the whole cellapp's); for a cellapp without a fresh report, the larger of
 * its CPU load (heartbeats) and its tick load, all the manager knows; 0 for a cellapp that
 * is not live. */
static double load_of(void *ctx, int32_t space, uint32_t pid)
{
    mc_manager *m = ctx;
    mc_reg_entry *e = mc_registry_find_id(m->registry, pid);
    if (!e || e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
        return 0.0;
    double cell = cell_load(m, space, pid);
    if (cell >= 0)
        return cell;
    double tick = tick_load(m, pid);
    return tick > e->load ? tick : e->load;
}

static void arm_balance(mc_manager_cells *mc)
{
    if (!mc->balance_ev)
        return;
    event_del(mc->balance_ev);
    if (!mc->balance_ms)
        return;
    struct timeval tv = {(time_t)(mc->balance_ms / 1000),
                         (suseconds_t)(mc->balance_ms % 1000) * 1000};
    event_add(mc->balance_ev, &tv);
}

/* Every --cellBalanceMs: the boundaries of split spaces move toward the less loaded side. */
static void on_balance(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    mc_manager_cells *mc = ctx;
    size_t n = mc_cells_space_count(mc->cells);
    for (size_t i = 0; i < n; i++) {
        int32_t s = mc_cells_space_at(mc->cells, i);
        if (mc_cells_layout(mc->cells, s, NULL, 0, NULL) < 2)
            continue;
        size_t moved = mc_cells_balance(mc->cells, s, load_of, mc->m,
                                        (float)mc->balance_step, mc->balance_hysteresis);
        if (!moved)
            continue;
        mc->balance_moves += moved;
        MC_DEBUG("space %d: %zu boundaries moved toward the less loaded side", (int)s, moved);
        send_layout(mc, s, 0);
    }
}

static bool set_balance_ms(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    mc_manager_cells *mc = ctx;
    if (v->as.u && (v->as.u < 100 || v->as.u > 600000)) {
        snprintf(why, whylen, "not 0 or within 100..600000");
        return false;
    }
    mc->balance_ms = v->as.u;
    arm_balance(mc);
    return true;
}

static void get_balance_ms(void *ctx, mc_watch_value *out)
{
    out->as.u = ((mc_manager_cells *)ctx)->balance_ms;
}

void mc_manager_cells_stop(mc_manager *m)
{
    mc_manager_cells *mc = m->cells;
    if (mc && mc->balance_ev) {
        event_free(mc->balance_ev);
        mc->balance_ev = NULL;
    }
}

static void get_spaces(void *ctx, mc_watch_value *out)
{
    out->as.u = mc_cells_space_count(((mc_manager_cells *)ctx)->cells);
}

bool mc_manager_cells_init(mc_manager *m)
{
    mc_manager_cells *mc = calloc(1, sizeof *mc);
    if (!mc)
        return false;
    const mc_config *cfg = mc_server_config(m->server);
    mc->m = m;
    mc->cells = mc_cells_new(mc_config_get_uint(cfg, "cellSpacesMax"),
                             mc_config_get_uint(cfg, "cellsPerSpaceMax"));
    mc_map_init(&mc->refs);
    m->cells = mc;
    if (!mc->cells)
        return false;
    mc->balance_ms = mc_config_get_uint(cfg, "cellBalanceMs");
    mc->balance_step = mc_config_get_float(cfg, "cellBalanceStepM");
    mc->balance_hysteresis = mc_config_get_float(cfg, "cellBalanceHysteresis");
    mc->balance_ev = event_new(mc_server_event_base(m->server), -1, EV_PERSIST, on_balance, mc);
    if (!mc->balance_ev)
        return false;
    arm_balance(mc);
    mc_watchers *w = mc_server_watchers(m->server);
    int bad = mc_watch_add(w, "cells/spaceCount", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_spaces,
                           NULL, mc) != MC_WATCH_OK;
    bad |= mc_watch_add_directory(w, "cells/spaces") != MC_WATCH_OK;
    bad |= mc_watch_add_directory(w, "cells/loads") != MC_WATCH_OK;
    bad |= mc_watch_add_uint(w, "cells/notices", &mc->notices, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/noticesRefused", &mc->notices_refused, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/conflicts", &mc->conflicts, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/full", &mc->full, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/splits", &mc->splits, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/merges", &mc->merges, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/handoffs", &mc->handoffs, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/ended", &mc->ended, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/balanceMoves", &mc->balance_moves, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add(w, "cells/balanceMs", MC_WATCH_UINT, MC_WATCH_READ_WRITE, get_balance_ms,
                        set_balance_ms, mc) != MC_WATCH_OK;
    bad |= mc_watch_add_uint(w, "cells/layoutsSent", &mc->layouts_sent, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/sendFailures", &mc->send_failures, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_callable(w, "command/splitSpace", call_split, m,
                                 "SPACE_ID [CELLAPP [AT]]: split the busiest cell of the space, "
                                 "its upper half to CELLAPP (default: the least loaded live "
                                 "cellapp not serving it), at AT (default: the cell's middle)") !=
           MC_WATCH_OK;
    return !bad;
}

void mc_manager_cells_free(mc_manager *m)
{
    mc_manager_cells *mc = m->cells;
    if (!mc)
        return;
    if (mc->balance_ev)
        event_free(mc->balance_ev); /* (only when on_free did not: the base still lives) */
    size_t pos = 0;
    void *r;
    while ((r = mc_map_next(&mc->refs, &pos)))
        free(r);
    mc_map_free(&mc->refs);
    mc_cells_free(mc->cells);
    free(mc);
    m->cells = NULL;
}
