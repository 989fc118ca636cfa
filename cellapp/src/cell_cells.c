/* Cells on the cellapp (cell_layout.h, docs/WORLD.md "Cells"): CELL_LAYOUT from the manager
 * (a space made, kept or released here for the cell it gives) and the cells/... watchers.
 * What one space holds of its cell (the layout, SPACE_NOTICE, spaces/<id>/cell...) is
 * cell_cells_space.c's, below the spaces. */
#include "cellapp.h"
#include "cell_layout.h"
#include "common/log.h"
#include "server/control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cell_state *state(mc_engine *e) { return mc_engine_role_state(e); }

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
    bool made = !sp;
    if (!sp && !(sp = space_new(e, l.space))) {
        MC_ERROR("out of memory making space %d for its cell", (int)l.space);
        cell_layout_clear(&l);
        return;
    }
    if (made && l.n == 1)
        sp->taken = true; /* a space served whole, handed here by a retiring cellapp */
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
    if (sp->layout) {
        /* the reaches the other cells' cellapps told (ghost_reach.c) stay with their cells */
        for (size_t i = 0; i < l.n; i++)
            for (size_t j = 0; j < held->n; j++)
                if (mc_address_equal(&l.cells[i].addr, &held->cells[j].addr)) {
                    l.cells[i].reach = held->cells[j].reach;
                    l.cells[i].reach_at = held->cells[j].reach_at;
                }
        cell_layout_clear(held);
    }
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
