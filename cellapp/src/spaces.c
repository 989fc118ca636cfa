/* Spaces: a space holds cell entities; it is created with its first entity
 * (createInNewSpace) and goes with its last, or when destroyed (destroySpace), which
 * destroys every cell in it. A space split over several cellapps (cell_cells.c) is made
 * here empty when this cellapp is given a cell of it, and stays empty while it serves one.
 * The manager hears of each space that begins or ends here (SPACE_NOTICE). */
#include "cellapp.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cell_state *state(mc_engine *e) { return mc_engine_role_state(e); }

mc_space *space_find(mc_engine *e, int32_t id)
{
    cell_state *cs = state(e);
    for (size_t i = 0; i < cs->n; i++)
        if (cs->spaces[i]->id == id)
            return cs->spaces[i];
    return NULL;
}

static void space_watch(mc_engine *e, mc_space *sp)
{
    char path[MC_WATCH_MAX_PATH];
    snprintf(path, sizeof path, "spaces/%d/entities", (int)sp->id);
    mc_watch_add_uint(mc_server_watchers(mc_engine_server(e)), path, &sp->n_watch,
                      MC_WATCH_READ_ONLY);
    cell_cells_space_watchers(e, sp);
    cell_work_watchers(e, sp);
}

mc_space *space_new(mc_engine *e, int32_t id)
{
    cell_state *cs = state(e);
    if (cs->n == cs->cap) {
        size_t cap = cs->cap ? cs->cap * 2 : 8;
        mc_space **s = realloc(cs->spaces, cap * sizeof *s);
        if (!s)
            return NULL;
        cs->spaces = s;
        cs->cap = cap;
    }
    mc_space *sp = calloc(1, sizeof *sp);
    if (!sp)
        return NULL;
    sp->id = id;
    cs->spaces[cs->n++] = sp;
    cs->created++;
    space_watch(e, sp);
    MC_INFO("space %d created", (int)id);
    return sp;
}

int space_add(mc_engine *e, mc_space *sp, mc_entity *ent)
{
    if (sp->n == sp->cap) {
        size_t cap = sp->cap ? sp->cap * 2 : 16;
        mc_entity **l = realloc(sp->entities, cap * sizeof *l);
        if (!l)
            return -1;
        sp->entities = l;
        sp->cap = cap;
    }
    ent->space = sp;
    if (cell_aoi_enter_space(e, ent) != 0) {
        ent->space = NULL;
        return -1;
    }
    ent->space_slot = sp->n;
    sp->entities[sp->n++] = ent;
    sp->n_watch = sp->n;
    if (!ent->is_ghost && ++sp->nreal == 1)
        cell_cells_notice(e, sp->id, false, false); /* the manager: entities here */
    return 0;
}

static void space_free(mc_engine *e, mc_space *sp)
{
    char path[MC_WATCH_MAX_PATH];
    snprintf(path, sizeof path, "spaces/%d", (int)sp->id);
    mc_watch_remove(mc_server_watchers(mc_engine_server(e)), path);
    aoi_grid_free(&sp->grid);
    cell_cells_free_layout(sp);
    free(sp->entities);
    free(sp);
}

void space_release(mc_engine *e, mc_space *sp)
{
    cell_state *cs = state(e);
    for (size_t i = 0; i < cs->n; i++)
        if (cs->spaces[i] == sp) {
            cs->spaces[i] = cs->spaces[--cs->n];
            break;
        }
    cs->destroyed++;
    MC_INFO("space %d is gone (no entities left)", (int)sp->id);
    cell_cells_notice(e, sp->id, true, false);
    space_free(e, sp);
}

void space_remove(mc_engine *e, mc_entity *ent)
{
    mc_space *sp = ent->space;
    if (!sp)
        return;
    cell_aoi_leave_space(e, ent);
    size_t at = ent->space_slot;
    sp->entities[at] = sp->entities[--sp->n];
    sp->entities[at]->space_slot = at;
    sp->n_watch = sp->n;
    ent->space = NULL;
    bool last_real = !ent->is_ghost && --sp->nreal == 0;
    if (last_real && cell_cells_keeps(sp))
        cell_cells_notice(e, sp->id, false, true); /* kept, empty: the manager may end it */
    if (sp->n || cell_cells_keeps(sp))
        return;
    space_release(e, sp);
}

int space_move(mc_engine *e, mc_entity *ent, mc_space *to)
{
    /* Out of the old grid with the AoI state kept aside, so that leaving the old space does
     * not drop it (space_remove releases the AoI state of an entity that has one). */
    cell_aoi_detach(e, ent);
    void *aoi = ent->role_data;
    ent->role_data = NULL;
    space_remove(e, ent);
    ent->role_data = aoi;
    if (space_add(e, to, ent) != 0) {
        cell_aoi_leave_space(e, ent); /* frees the kept state */
        return -1;
    }
    return 0;
}

void space_destroy(mc_engine *e, mc_space *sp)
{
    /* Hooks may destroy entities: work on ids. */
    size_t n = sp->n;
    int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids)
        return;
    for (size_t i = 0; i < n; i++)
        ids[i] = sp->entities[i]->id;
    MC_INFO("destroying space %d with %zu entities", (int)sp->id, n);
    for (size_t i = 0; i < n; i++) {
        mc_entity *ent = mc_engine_find(e, ids[i]);
        if (!ent || ent->in_reap)
            continue;
        if (ent->is_ghost) {
            ent->gone_why = -1;
            mc_engine_discard_entity(e, ent); /* no hooks: its real is elsewhere */
            continue;
        }
        mc_engine_run_hook(e, ent, MC_HOOK_SPACE_GONE, NULL);
        if (ent->gone_why >= 0)
            ent->gone_why = MC_CELL_GONE_SPACE;
        mc_engine_destroy_entity(e, ent);
    }
    free(ids);
}

static void get_count(void *ctx, mc_watch_value *out)
{
    out->as.u = state(ctx)->n;
}

int space_add_watchers(mc_engine *e)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    cell_state *cs = state(e);
    int bad = mc_watch_add(w, "spaces/count", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_count,
                           NULL, e) != MC_WATCH_OK;
    bad |= mc_watch_add_uint(w, "spaces/created", &cs->created, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "spaces/destroyed", &cs->destroyed, MC_WATCH_READ_ONLY);
    return bad ? -1 : 0;
}

void spaces_free(mc_engine *e)
{
    cell_state *cs = state(e);
    if (!cs)
        return;
    for (size_t i = 0; i < cs->n; i++) {
        aoi_grid_free(&cs->spaces[i]->grid);
        cell_cells_free_layout(cs->spaces[i]);
        free(cs->spaces[i]->entities);
        free(cs->spaces[i]);
    }
    free(cs->spaces);
    free(cs);
    mc_engine_set_role_state(e, NULL);
}
