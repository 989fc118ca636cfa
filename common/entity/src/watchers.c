/* The engine's watchers: counters (entities/, calls/, timers/) and one directory per entity
 * (entities/<id>/: type, part, each property's current value as JSON text; the role adds
 * its own, e.g. the cell mailbox or the position). */
#include "engine_internal.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void get_live(void *ctx, mc_watch_value *out) { out->as.u = ((mc_engine *)ctx)->live; }
static void get_waiting(void *ctx, mc_watch_value *out)
{
    out->as.u = ((mc_engine *)ctx)->npending;
}
static void get_timers(void *ctx, mc_watch_value *out)
{
    out->as.u = ((mc_engine *)ctx)->ntimers;
}

int engine_add_watchers(mc_engine *e)
{
    mc_watchers *w = mc_server_watchers(e->server);
    int bad = 0;
    bad |= mc_watch_add(w, "entities/count", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_live, NULL,
                        e) != MC_WATCH_OK;
    bad |= mc_watch_add_uint(w, "entities/created", &e->st.created, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "entities/destroyed", &e->st.destroyed, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "entities/hookFailures", &e->st.hook_failures,
                             MC_WATCH_READ_ONLY);
    for (size_t i = 0; i < e->module->ntypes; i++) {
        char path[MC_WATCH_MAX_PATH];
        snprintf(path, sizeof path, "entities/byType/%s", e->module->types[i].name);
        bad |= mc_watch_add_uint(w, path, &e->type_counts[i], MC_WATCH_READ_ONLY);
    }
    bad |= mc_watch_add_uint(w, "calls/sent", &e->st.sent, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "calls/received", &e->st.received, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "calls/relayed", &e->st.relayed, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "calls/twoWaySent", &e->st.two_way_sent, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "calls/repliesReceived", &e->st.replies_received,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add(w, "calls/waiting", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_waiting,
                        NULL, e) != MC_WATCH_OK;
    bad |= mc_watch_add_uint(w, "calls/refused/total", &e->st.refused_total,
                             MC_WATCH_READ_ONLY);
    for (int r = 0; r < MC_REFUSE_COUNT; r++) {
        char path[MC_WATCH_MAX_PATH];
        snprintf(path, sizeof path, "calls/refused/%s", mc_refuse_reason_name((mc_refuse_reason)r));
        bad |= mc_watch_add_uint(w, path, &e->st.refused[r], MC_WATCH_READ_ONLY);
    }
    bad |= mc_watch_add_uint(w, "calls/droppedFromDead", &e->st.dropped_from_dead,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "calls/redirected", &e->st.redirected, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "calls/retiredNoted", &e->st.retired_noted,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "calls/lease/held", &e->st.lease_held, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "calls/lease/refusedFull", &e->st.lease_full,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "calls/lease/dropped", &e->st.lease_dropped,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "calls/lease/releaseFailed", &e->st.lease_release_failed,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "timers/fired", &e->st.timers_fired, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add(w, "timers/pending", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_timers,
                        NULL, e) != MC_WATCH_OK;
    return bad ? -1 : 0;
}

/* ---- per entity ----------------------------------------------------------------------- */

typedef struct {
    mc_engine *e;
    int32_t id;
    mc_part part;      /* MC_PART_CELL for a base's cellData */
    uint16_t index;    /* part index of the property */
    bool cell_data;
} prop_watch;

static void get_prop(void *ctx, mc_watch_value *out)
{
    prop_watch *pw = ctx;
    mc_entity *ent = mc_engine_find(pw->e, pw->id);
    char *text = NULL;
    if (ent) {
        const void *props = pw->cell_data ? ent->cell_data : ent->props;
        if (pw->cell_data && ent->cell_state != MC_CELL_NONE)
            text = strdup("(held by the cell)");
        else
            text = engine_property_text(pw->e, ent, pw->part, props, pw->index);
    }
    out->as.s = text ? text : strdup("?");
}

static void get_type(void *ctx, mc_watch_value *out)
{
    prop_watch *pw = ctx;
    mc_entity *ent = mc_engine_find(pw->e, pw->id);
    out->as.s = strdup(ent ? ent->td->name : "?");
}

static void get_part(void *ctx, mc_watch_value *out)
{
    prop_watch *pw = ctx;
    mc_entity *ent = mc_engine_find(pw->e, pw->id);
    out->as.s = strdup(ent ? mc_part_name(ent->part) : "?");
}

void engine_add_entity_watchers(mc_engine *e, mc_entity *ent)
{
    mc_watchers *w = mc_server_watchers(e->server);
    size_t nprops = ent->td->nparts_props[ent->part];
    size_t ncell = ent->part == MC_PART_BASE ? ent->td->nparts_props[MC_PART_CELL] : 0;
    prop_watch *pw = calloc(nprops + ncell + 1, sizeof *pw);
    if (!pw)
        return; /* the entity works; only its watchers are missing */
    ent->watch_ctx = pw;
    char dir[64], path[MC_WATCH_MAX_PATH];
    snprintf(dir, sizeof dir, "entities/%d", (int)ent->id);
    pw[0] = (prop_watch){.e = e, .id = ent->id};
    snprintf(path, sizeof path, "%s/type", dir);
    mc_watch_add(w, path, MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_type, NULL, &pw[0]);
    snprintf(path, sizeof path, "%s/part", dir);
    mc_watch_add(w, path, MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_part, NULL, &pw[0]);
    for (size_t i = 0; i < nprops + ncell; i++) {
        bool cd = i >= nprops;
        mc_part part = cd ? MC_PART_CELL : ent->part;
        uint16_t index = (uint16_t)(cd ? i - nprops : i);
        pw[i + 1] = (prop_watch){.e = e, .id = ent->id, .part = part, .index = index,
                                 .cell_data = cd};
        const mc_def_property *p = mc_defs_part_property(ent->td, part, index);
        snprintf(path, sizeof path, "%s/%s/%s", dir, cd ? "cellData" : "props", p->name);
        mc_watch_add(w, path, MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_prop, NULL, &pw[i + 1]);
    }
    if (e->part->add_entity_watchers)
        e->part->add_entity_watchers(e, ent, dir, &pw[0]);
}

mc_entity *mc_engine_watch_entity(void *ref, mc_engine **e_out)
{
    prop_watch *pw = ref;
    *e_out = pw->e;
    return mc_engine_find(pw->e, pw->id);
}

void engine_remove_entity_watchers(mc_engine *e, mc_entity *ent)
{
    char dir[64];
    snprintf(dir, sizeof dir, "entities/%d", (int)ent->id);
    mc_watch_remove(mc_server_watchers(e->server), dir);
    free(ent->watch_ctx);
    ent->watch_ctx = NULL;
}
