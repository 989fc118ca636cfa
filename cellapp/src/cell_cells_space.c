/* One space's cell (cell_layout.h, docs/WORLD.md "Cells"), below spaces.c: the layout it
 * holds (served whole without one), whether it keeps an empty space, whether it owns a
 * point, SPACE_NOTICE to the manager when a space begins or ends here, and the watchers
 * spaces/<id>/cell... */
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
    return sp->layout && sp->layout->own >= 0 && (sp->layout->n > 1 || sp->taken);
}

bool cell_cells_owns(const mc_space *sp, float x, float z)
{
    if (!sp->layout)
        return true;
    return sp->layout->own >= 0 && cell_rect_contains(&sp->layout->cells[sp->layout->own], x, z);
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
        if (k >= 0 && (size_t)k < cap - used && sp->layout->cells[i].reach > 0)
            k += snprintf(s + used + k, cap - used - (size_t)k, " reach %g",
                          (double)sp->layout->cells[i].reach);
        if (k < 0 || (size_t)k >= cap - used)
            break;
        used += (size_t)k;
    }
    out->as.s = s;
}

/* The reach this cellapp told the others for its cell (ghost_reach.c; 0: none beyond its
 * ghost distance). */
static void get_reach(void *ctx, mc_watch_value *out)
{
    out->as.f = ((mc_space *)ctx)->reach_told;
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
    mc_watch_add(w, P("reach"), MC_WATCH_FLOAT, MC_WATCH_READ_ONLY, get_reach, NULL, sp);
    mc_watch_add(w, P("outsideCell"), MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_outside, NULL, sp);
#undef P
}
