/* Entity records: creation with default properties, engine callbacks (hooks), and
 * destruction once the running handler has returned. */
#include "engine_internal.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *new_props(mc_engine *e, const mc_game_type *gt, mc_part part)
{
    size_t size = gt->props_size[part];
    void *p = calloc(1, size ? size : 1);
    if (p && gt->props_init(e->defs, part, p) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

static void free_props(const mc_game_type *gt, mc_part part, void *props)
{
    if (!props)
        return;
    gt->props_free(part, props);
    free(props);
}

mc_entity *mc_engine_new_entity(mc_engine *e, uint16_t type, int32_t id, char *why,
                                size_t whylen)
{
    if (e->freeing) {
        snprintf(why, whylen, "the process is shutting down");
        return NULL;
    }
    if (type >= e->module->ntypes) {
        snprintf(why, whylen, "no entity type %u", (unsigned)type);
        return NULL;
    }
    if (id <= 0 && mc_server_next_entity_id(e->server, &id) != 0) {
        snprintf(why, whylen, "no entity ids yet (the manager has not given a range)");
        return NULL;
    }
    if (mc_engine_find(e, id)) {
        snprintf(why, whylen, "entity %d exists here already", (int)id);
        return NULL;
    }
    mc_entity *ent = calloc(1, sizeof *ent);
    if (!ent) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    ent->id = id;
    ent->type = type;
    ent->part = e->part->part;
    ent->gt = &e->module->types[type];
    ent->td = mc_defs_type(e->defs, type);
    ent->props = new_props(e, ent->gt, ent->part);
    if (ent->part == MC_PART_BASE)
        ent->cell_data = new_props(e, ent->gt, MC_PART_CELL);
    if (!ent->props || (ent->part == MC_PART_BASE && !ent->cell_data) ||
        mc_entity_table_add(&e->table, ent) != 0) {
        free_props(ent->gt, ent->part, ent->props);
        free_props(ent->gt, MC_PART_CELL, ent->cell_data);
        free(ent);
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    e->type_counts[type]++;
    e->live++;
    e->st.created++;
    engine_add_entity_watchers(e, ent);
    return ent;
}

/* A hook's result: a failure is counted and logged (rate-limited). */
static int hook_result(mc_engine *e, const mc_entity *ent, const char *name, int rc)
{
    if (rc != 0) {
        e->st.hook_failures++;
        if (engine_log_allowed(e->st.hook_failures))
            MC_WARNING("%s %d: %s failed (%d)", ent->td->name, (int)ent->id, name, rc);
    }
    return rc;
}

int mc_engine_run_hook(mc_engine *e, mc_entity *ent, mc_hook hook, const char *reason)
{
    const mc_game_hooks *h = &ent->gt->hooks[ent->part];
    mc_call_frame f;
    mc_engine_frame(e, &f, ent);
    int rc = 0;
    const char *name = "?";
    switch (hook) {
    case MC_HOOK_CREATED:
        name = "onCreated";
        rc = h->on_created ? h->on_created(&f.ctx, ent->props) : 0;
        break;
    case MC_HOOK_DESTROY:
        name = "onDestroy";
        rc = h->on_destroy ? h->on_destroy(&f.ctx, ent->props) : 0;
        break;
    case MC_HOOK_GET_CELL:
        name = "onGetCell";
        rc = h->on_get_cell ? h->on_get_cell(&f.ctx, ent->props) : 0;
        break;
    case MC_HOOK_LOSE_CELL:
        name = "onLoseCell";
        rc = h->on_lose_cell ? h->on_lose_cell(&f.ctx, ent->props) : 0;
        break;
    case MC_HOOK_CREATE_CELL_FAILURE:
        name = "onCreateCellFailure";
        rc = h->on_create_cell_failure
                 ? h->on_create_cell_failure(&f.ctx, ent->props, reason ? reason : "")
                 : 0;
        break;
    case MC_HOOK_SPACE_GONE:
        name = "onSpaceGone";
        rc = h->on_space_gone ? h->on_space_gone(&f.ctx, ent->props) : 0;
        break;
    case MC_HOOK_CLIENT_DEATH:
        name = "onClientDeath";
        rc = h->on_client_death ? h->on_client_death(&f.ctx, ent->props) : 0;
        break;
    case MC_HOOK_ENTITIES_ENABLED:
        name = "onEntitiesEnabled";
        rc = h->on_entities_enabled ? h->on_entities_enabled(&f.ctx, ent->props) : 0;
        break;
    case MC_HOOK_CLIENT_RESUMED:
        name = "onClientResumed";
        rc = h->on_client_resumed ? h->on_client_resumed(&f.ctx, ent->props) : 0;
        break;
    case MC_HOOK_RESTORE_CELL:
        name = "onRestoreCell";
        rc = h->on_restore_cell ? h->on_restore_cell(&f.ctx, ent->props) : 0;
        break;
    case MC_HOOK_RESTORE:
        name = "onRestore";
        rc = h->on_restore ? h->on_restore(&f.ctx, ent->props) : 0;
        break;
    }
    return hook_result(e, ent, name, rc);
}

int mc_engine_run_teleport_failure(mc_engine *e, mc_entity *ent, int32_t reason)
{
    const mc_game_hooks *h = &ent->gt->hooks[ent->part];
    if (!h->on_teleport_failure)
        return 0;
    mc_call_frame f;
    mc_engine_frame(e, &f, ent);
    return hook_result(e, ent, "onTeleportFailure",
                       h->on_teleport_failure(&f.ctx, ent->props, reason));
}

void mc_engine_destroy_entity(mc_engine *e, mc_entity *ent)
{
    if (ent->in_reap)
        return;
    ent->destroying = true;
    ent->in_reap = true;
    if (e->nreap == e->reap_cap) {
        size_t cap = e->reap_cap ? e->reap_cap * 2 : 16;
        mc_entity **r = realloc(e->reap, cap * sizeof *r);
        if (!r) {
            MC_ERROR("out of memory queueing entity %d for destruction", (int)ent->id);
            ent->in_reap = false;
            return;
        }
        e->reap = r;
        e->reap_cap = cap;
    }
    e->reap[e->nreap++] = ent;
    event_active(e->reap_ev, 0, 0);
}

void engine_free_entity(mc_engine *e, mc_entity *ent)
{
    if (e->part->on_destroy)
        e->part->on_destroy(e, ent);
    mc_engine_drop_timers(e, ent);
    engine_remove_entity_watchers(e, ent);
    mc_entity_table_remove(&e->table, ent);
    e->type_counts[ent->type]--;
    e->live--;
    free_props(ent->gt, ent->part, ent->props);
    free_props(ent->gt, MC_PART_CELL, ent->cell_data);
    free(ent->timers);
    free(ent);
}

void mc_engine_discard_entity(mc_engine *e, mc_entity *ent) { engine_free_entity(e, ent); }

void engine_on_reap_event(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    mc_engine *e = ctx;
    /* onDestroy may destroy others: take the list as it grows. */
    for (size_t i = 0; i < e->nreap; i++) {
        mc_entity *ent = e->reap[i];
        /* The record stays findable (in_reap) while onDestroy runs. */
        ent->in_reap = false;
        mc_engine_run_hook(e, ent, MC_HOOK_DESTROY, NULL);
        ent->in_reap = true;
        e->st.destroyed++;
        engine_free_entity(e, ent);
    }
    e->nreap = 0;
}
