/* Cells on the cellapp (cell_layout.h, docs/WORLD.md "Cells"): SPACE_NOTICE to the manager
 * when a space begins or ends here, CELL_LAYOUT from it, the empty space kept while it
 * serves a cell of a split space, and the watchers spaces/<id>/cell... and cells/... */
#include "cellapp.h"
#include "cell_layout.h"
#include "common/log.h"
#include "server/control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cell_state *state(mc_engine *e) { return mc_engine_role_state(e); }

void cell_cells_notice(mc_engine *e, int32_t space, bool gone, bool empty)
{
    cell_state *cs = state(e);
    Mc__Control__SpaceNotice n = MC__CONTROL__SPACE_NOTICE__INIT;
    n.space_id = space;
    n.gone = gone;
    n.empty = empty;
    int rc = mc_server_send_manager(mc_engine_server(e), MC_CTL_SPACE_NOTICE, &n);
    if (rc != 0) {
        cs->cells_notice_failures++;
        MC_WARNING("cannot tell the manager space %d %s: %s", (int)space,
                   gone ? "went" : empty ? "is empty here" : "has entities here",
                   mc_status_name(rc));
    } else {
        cs->cells_notices++;
    }
}

bool cell_cells_keeps(const mc_space *sp)
{
    return sp->layout && sp->layout->own >= 0 && sp->layout->n > 1;
}

bool cell_cells_owns(const mc_space *sp, float x, float z)
{
    if (!sp->layout)
        return true;
    return sp->layout->own >= 0 && cell_rect_contains(&sp->layout->cells[sp->layout->own], x, z);
}

/* Whether this is a newer layout than the one held. */
static bool newer(const cell_layout *held, const cell_layout *l)
{
    return !held || held->manager_instance != l->manager_instance || l->version > held->version;
}

void cell_cells_on_control(mc_engine *e, uint8_t msg_id, const char *src, const uint8_t *data,
                           size_t len)
{
    cell_state *cs = state(e);
    if (msg_id != MC_CTL_CELL_LAYOUT) {
        cs->cells_malformed++;
        MC_WARNING("%s from %s: not for a cellapp", mc_control_name(msg_id), src);
        return;
    }
    cell_layout l;
    char why[160];
    if (!cell_layout_parse(data, len, mc_engine_address(e), &l, why, sizeof why)) {
        cs->cells_malformed++;
        if (cs->cells_malformed <= 10 || cs->cells_malformed % 1000 == 0)
            MC_WARNING("CELL_LAYOUT from %s refused: %s (%llu so far)", src, why,
                       (unsigned long long)cs->cells_malformed);
        return;
    }
    mc_space *sp = space_find(e, l.space);
    if (sp && !newer(sp->layout, &l)) {
        cs->cells_stale++;
        cell_layout_clear(&l);
        return;
    }
    cs->cells_layouts++;
    if (!sp && l.own < 0) {
        cell_layout_clear(&l); /* nothing here, and nothing to serve */
        return;
    }
    if (!sp && !(sp = space_new(e, l.space))) {
        MC_ERROR("out of memory making space %d for its cell", (int)l.space);
        cell_layout_clear(&l);
        return;
    }
    if (l.n == 0) {
        /* the space ended at the manager (every cell empty), or it never knew it */
        cell_layout_clear(&l);
        cell_cells_free_layout(sp);
        if (sp->n == 0)
            space_release(e, sp);
        else if (sp->nreal)
            cell_cells_notice(e, sp->id, false, false); /* it is here: one cell, whole */
        /* (only ghosts: their reals delete them, and the space goes with the last) */
        return;
    }
    cell_layout *held = sp->layout ? sp->layout : malloc(sizeof *held);
    if (!held) {
        cell_layout_clear(&l);
        return;
    }
    if (sp->layout)
        cell_layout_clear(held);
    *held = l;
    sp->layout = held;
    if (held->own >= 0) {
        char r[128];
        cell_rect_text(&held->cells[held->own], r, sizeof r);
        MC_INFO("space %d: serving cell %s, one of %zu (layout %u)", (int)l.space, r, held->n,
                held->version);
    } else {
        MC_INFO("space %d: serving no cell of it any more (layout %u)", (int)l.space,
                held->version);
    }
    if (sp->n == 0 && !cell_cells_keeps(sp))
        space_release(e, sp); /* an empty space that is no longer split goes */
}

void cell_cells_free_layout(mc_space *sp)
{
    if (sp->layout) {
        cell_layout_clear(sp->layout);
        free(sp->layout);
        sp->layout = NULL;
    }
}

/* --- watchers ------------------------------------------------------------------------- */

static void get_cell(void *ctx, mc_watch_value *out)
{
    mc_space *sp = ctx;
    char t[128];
    if (!sp->layout)
        snprintf(t, sizeof t, "whole");
    else if (sp->layout->own < 0)
        snprintf(t, sizeof t, "none");
    else
        cell_rect_text(&sp->layout->cells[sp->layout->own], t, sizeof t);
    out->as.s = strdup(t);
}

static void get_cells(void *ctx, mc_watch_value *out)
{
    mc_space *sp = ctx;
    out->as.u = sp->layout ? sp->layout->n : 1;
}

static void get_version(void *ctx, mc_watch_value *out)
{
    mc_space *sp = ctx;
    out->as.u = sp->layout ? sp->layout->version : 0;
}

/* The others' cells: "IP:PORT x[..) z[..); ..." */
static void get_neighbours(void *ctx, mc_watch_value *out)
{
    mc_space *sp = ctx;
    size_t n = sp->layout ? sp->layout->n : 0;
    size_t cap = 16 + n * 160, used = 0;
    char *s = calloc(1, cap);
    if (!s)
        return;
    for (size_t i = 0; i < n; i++) {
        if ((int)i == sp->layout->own)
            continue;
        char a[MC_ADDRESS_STRLEN], r[128];
        mc_address_format(&sp->layout->cells[i].addr, a, sizeof a);
        cell_rect_text(&sp->layout->cells[i], r, sizeof r);
        int k = snprintf(s + used, cap - used, "%s%s %s", used ? "; " : "", a, r);
        if (k < 0 || (size_t)k >= cap - used)
            break;
        used += (size_t)k;
    }
    out->as.s = s;
}

/* Reals of the space outside this cellapp's cell (what offloading would move). */
static void get_outside(void *ctx, mc_watch_value *out)
{
    mc_space *sp = ctx;
    uint64_t k = 0;
    for (size_t i = 0; i < sp->n; i++)
        if (!sp->entities[i]->is_ghost &&
            !cell_cells_owns(sp, sp->entities[i]->position.x, sp->entities[i]->position.z))
            k++;
    out->as.u = k;
}

void cell_cells_space_watchers(mc_engine *e, mc_space *sp)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    char p[MC_WATCH_MAX_PATH];
#define P(leaf) (snprintf(p, sizeof p, "spaces/%d/%s", (int)sp->id, leaf), p)
    mc_watch_add(w, P("cell"), MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_cell, NULL, sp);
    mc_watch_add(w, P("cells"), MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_cells, NULL, sp);
    mc_watch_add(w, P("layoutVersion"), MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_version, NULL, sp);
    mc_watch_add(w, P("neighbours"), MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_neighbours, NULL, sp);
    mc_watch_add(w, P("outsideCell"), MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_outside, NULL, sp);
#undef P
}

int cell_cells_init(mc_engine *e)
{
    cell_state *cs = state(e);
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    int bad = mc_watch_add_uint(w, "cells/layouts", &cs->cells_layouts, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/stale", &cs->cells_stale, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/malformed", &cs->cells_malformed, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/notices", &cs->cells_notices, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "cells/noticeFailures", &cs->cells_notice_failures,
                             MC_WATCH_READ_ONLY);
    return bad ? -1 : 0;
}
