/* The cellapp's role table for the engine: its engine API (position, direction, space,
 * base, destroy, destroySpace), its messages, what happens when a cell goes, and watchers. */
#include "aoi_tick.h"
#include "cellapp.h"
#include "entity/backup_wire.h"
#include "entity/restore_wire.h"
#include "entity/move_wire.h"
#include "entity/ghost_wire.h"
#include "entity/persist_wire.h"
#include "common/log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mc_entity *calling_cell(const mc_call_ctx *call) { return mc_engine_entity_of(call, MC_PART_CELL); }

static int op_destroy(const mc_call_ctx *call)
{
    mc_entity *ent = calling_cell(call);
    if (!ent)
        return MC_CALL_ERR_STATE;
    mc_engine_destroy_entity(mc_engine_of(call), ent);
    return MC_CALL_OK;
}

static int op_get_vec(const mc_call_ctx *call, int which, mc_vector3 *out)
{
    mc_entity *ent = calling_cell(call);
    if (!ent)
        return MC_CALL_ERR_STATE;
    *out = which == 0 ? ent->position : ent->direction;
    return MC_CALL_OK;
}

static int op_set_vec(const mc_call_ctx *call, int which, mc_vector3 v)
{
    mc_entity *ent = calling_cell(call);
    if (!ent)
        return MC_CALL_ERR_STATE;
    if (!isfinite(v.x) || !isfinite(v.y) || !isfinite(v.z))
        return MC_CALL_ERR_ARGS;
    if (which == 0) {
        ent->position = v;
        cell_aoi_moved(mc_engine_of(call), ent);
    } else {
        ent->direction = v;
    }
    return MC_CALL_OK;
}

static int32_t op_space_id(const mc_call_ctx *call)
{
    mc_entity *ent = calling_cell(call);
    return ent && ent->space ? ent->space->id : 0;
}

static mc_mailbox_ref op_cell_base(const mc_call_ctx *call)
{
    mc_entity *ent = calling_cell(call);
    mc_mailbox_ref none = {0};
    return ent ? ent->base : none;
}

static int op_destroy_space(const mc_call_ctx *call)
{
    mc_entity *ent = calling_cell(call);
    if (!ent || !ent->space)
        return MC_CALL_ERR_STATE;
    space_destroy(mc_engine_of(call), ent->space);
    return MC_CALL_OK;
}

static int op_teleport(const mc_call_ctx *call, const mc_mailbox_ref *nearby,
                       mc_vector3 position, mc_vector3 direction)
{
    mc_entity *ent = calling_cell(call);
    if (!ent || !ent->space)
        return MC_CALL_ERR_STATE;
    if (!isfinite(position.x) || !isfinite(position.y) || !isfinite(position.z) ||
        !isfinite(direction.x) || !isfinite(direction.y) || !isfinite(direction.z))
        return MC_CALL_ERR_ARGS;
    mc_engine *e = mc_engine_of(call);
    mc_space *to = ent->space;
    if (ent->move_state)
        return MC_CALL_ERR_STATE; /* moving to another cellapp already */
    if (!mc_mailbox_ref_is_none(nearby)) {
        if (mc_mailbox_ref_component(nearby) != MC_COMPONENT_CELL)
            return MC_CALL_ERR_MAILBOX;
        mc_address where;
        mc_mailbox_address(nearby, &where);
        if (!mc_engine_is_self(e, &where)) /* another cellapp: cell_move.c */
            return cell_move_start(e, ent, nearby, &where, position, direction);
        mc_entity *near = mc_engine_find(e, nearby->id);
        if (!near || near->part != MC_PART_CELL || near->in_reap || !near->space)
            return MC_CALL_ERR_NO_ENTITY;
        to = near->space;
    }
    ent->position = position;
    ent->direction = direction;
    if (to == ent->space) {
        cell_aoi_moved(e, ent);
        return MC_CALL_OK;
    }
    /* Into the other space first (the old one may go with its last entity), keeping
     * everything else of the cell; witnesses see it leave and enter at their next update. */
    if (space_move(e, ent, to) != 0) {
        MC_ERROR("entity %d: out of memory joining space %d; it is destroyed", (int)ent->id,
                 (int)to->id);
        mc_engine_destroy_entity(e, ent);
        return MC_CALL_ERR_BUSY;
    }
    MC_DEBUG("entity %d teleported to space %d", (int)ent->id, (int)to->id);
    return MC_CALL_OK;
}

static const mc_engine_ops cell_engine_ops = {
    .self = mc_engine_op_self,
    .time = mc_engine_op_time,
    .add_timer = mc_engine_op_add_timer,
    .del_timer = mc_engine_op_del_timer,
    .destroy = op_destroy,
    .get_vec = op_get_vec,
    .set_vec = op_set_vec,
    .space_id = op_space_id,
    .cell_base = op_cell_base,
    .destroy_space = op_destroy_space,
    .set_witness = cell_aoi_set_witness,
    .set_aoi_radius = cell_aoi_set_radius,
    .entities_in_range = cell_aoi_entities_in_range,
    .teleport = op_teleport,
};

/* A cell moving to or from another cellapp takes its base's messages (cell_move.c); a ghost
 * refuses them (CLIENT_ATTACHED aside). True when the message was taken or refused here. */
static bool taken_before_cell(mc_engine *e, uint8_t id, const mc_origin *o, mc_istream *data)
{
    if (mc_istream_remaining(data) < 4)
        return false;
    const uint8_t *p = data->data + data->pos;
    int32_t target = (int32_t)mc_load_u32(p);
    if (cell_move_intercept(e, id, o, target, p, mc_istream_remaining(data)))
        return true;
    mc_entity *ghost = mc_engine_find(e, target);
    if (ghost && ghost->is_ghost && id != MC_MSG_CLIENT_ATTACHED) {
        mc_engine_refuse(e, o, MC_REFUSE_NO_ENTITY, MC_CALL_ERR_NO_ENTITY,
                         "entity %d is a ghost here: its real is elsewhere", (int)target);
        return true;
    }
    return false;
}

static void on_destroy_cell(mc_engine *e, const mc_origin *o, mc_istream *data)
{
    if (!taken_before_cell(e, MC_MSG_DESTROY_CELL, o, data))
        cell_on_destroy_cell(e, o, data);
}

static void on_fetch_cell(mc_engine *e, const mc_origin *o, mc_istream *data)
{
    if (!taken_before_cell(e, MC_MSG_FETCH_CELL, o, data))
        cell_on_fetch_cell(e, o, data);
}

/* CLIENT_ATTACHED from an entity's base (or forwarded by the cellapp it left). */
static void on_client_attached(mc_engine *e, const mc_origin *o, mc_istream *data)
{
    if (taken_before_cell(e, MC_MSG_CLIENT_ATTACHED, o, data))
        return;
    int32_t id = mc_read_i32(data);
    if (!mc_istream_done(data) || id <= 0) {
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                         "CLIENT_ATTACHED: malformed");
        return;
    }
    mc_entity *ent = mc_engine_find(e, id);
    mc_address base;
    if (ent && ent->part == MC_PART_CELL && !ent->in_reap)
        mc_mailbox_address(&ent->base, &base);
    if (!ent || ent->part != MC_PART_CELL || ent->in_reap || ent->is_ghost || o->local ||
        (!mc_address_equal(&base, &o->addr) &&
         !cell_move_from_peer(e, id, &o->addr))) { /* forwarded by the cellapp it left */
        mc_engine_refuse(e, o, MC_REFUSE_NO_ENTITY, MC_CALL_ERR_NO_ENTITY,
                         "CLIENT_ATTACHED: entity %d has no cell here whose base sent it",
                         (int)id);
        return;
    }
    cell_aoi_client_attached(e, ent);
}

/* allClients / otherClients calls of a cell entity: the witnesses here and its own client
 * (aoi.c), and, for a real, the witnesses on the cellapps holding its ghosts (ghosts.c). */
static int fan_out(mc_engine *e, mc_entity *ent, bool all, uint16_t method,
                   const uint8_t *args, size_t len)
{
    if (method >= ent->td->nmethods[MC_PART_CLIENT])
        return MC_CALL_ERR_NO_METHOD;
    uint32_t seq = ent->is_ghost ? 0 : cell_ghosts_client_call(e, ent, method, args, len);
    return cell_aoi_fan_out(e, ent, all, method, args, len, NULL, seq);
}

/* The entity messages a cellapp takes (ENTITY_CALL is cell_on_call). */
static const mc_role_message cell_messages[] = {
    {MC_MSG_CELL_MIGRATE, cell_on_migrate},
    {MC_MSG_CELL_MIGRATE_END, cell_on_migrate_end},
    {MC_MSG_WITNESS_CALLS, cell_on_witness_calls},
    {MC_MSG_WITNESS_HEARD, cell_on_witness_heard},
    {MC_MSG_CREATE_CELL, cell_on_create_cell},
    {MC_MSG_RESTORE_CELL, cell_on_restore_cell},
    {MC_MSG_DESTROY_CELL, on_destroy_cell},
    {MC_MSG_FETCH_CELL, on_fetch_cell},
    {MC_MSG_CLIENT_ATTACHED, on_client_attached},
    {MC_MSG_CLIENT_MOVE, cell_on_client_move},
    {MC_MSG_BASE_RESTORED, cell_on_base_restored},
    {MC_MSG_RETIRED, mc_engine_on_retired}, /* a retiring baseapp: its bases moved */
    {MC_MSG_GHOST_DATA, cell_on_ghost_data},
    {MC_MSG_GHOST_DELETE, cell_on_ghost_delete},
    {MC_MSG_GHOST_CLIENT_CALL, cell_on_ghost_client_call},
    {MC_MSG_GHOST_REACH, cell_on_ghost_reach},
    {MC_MSG_GHOST_CLIENT_CALL_SEQ, cell_on_ghost_client_call_seq},
};

static void on_destroy(mc_engine *e, mc_entity *ent)
{
    if (ent->gone_why >= 0 && !cell_move_arrival_gone(e, ent))
        cell_tell_base_gone(e, ent, (mc_cell_gone_why)ent->gone_why);
    cell_ghosts_forget(e, ent);
    space_remove(e, ent);
}

static void on_shutdown(mc_engine *e)
{
    /* cells of split spaces are handed over first; then (or at once) bases hear */
    cell_retire_on_shutdown(e);
}

static void on_peer_death(mc_engine *e, const char *addr)
{
    cell_moves_on_peer_death(e, addr);
    cell_ghosts_on_peer_death(e, addr);
    /* Cells whose base was there keep running; calls to their base fail at once
     * (process dead) from now on. */
    MC_INFO("calls to bases on %s fail from now on: the process is dead", addr);
}

static void get_space(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    out->as.i = ent && ent->space ? ent->space->id : 0;
}

static void get_position(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    char text[96] = "?";
    if (ent)
        snprintf(text, sizeof text, "%g %g %g", ent->position.x, ent->position.y,
                 ent->position.z);
    out->as.s = strdup(text);
}

static void get_base(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    char text[128] = "?";
    if (ent)
        mc_engine_mailbox_text(e, &ent->base, text, sizeof text);
    out->as.s = strdup(text);
}

/* "here" for a real, the real's cellapp for a ghost */
static void get_real(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    char text[MC_ADDRESS_STRLEN] = "here";
    if (ent && ent->is_ghost)
        cell_ghost_real_text(ent, text, sizeof text);
    out->as.s = strdup(text);
}

/* The real's numbered client calls so far, or the last a ghost took (kept across moves) */
static void get_client_calls(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    out->as.u = ent ? cell_ghosts_calls_seen(ent) : 0;
}

static void add_entity_watchers(mc_engine *e, mc_entity *ent, const char *dir, void *ref)
{
    (void)ent;
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    char path[MC_WATCH_MAX_PATH];
    snprintf(path, sizeof path, "%s/space", dir);
    mc_watch_add(w, path, MC_WATCH_INT, MC_WATCH_READ_ONLY, get_space, NULL, ref);
    snprintf(path, sizeof path, "%s/position", dir);
    mc_watch_add(w, path, MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_position, NULL, ref);
    snprintf(path, sizeof path, "%s/base", dir);
    mc_watch_add(w, path, MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_base, NULL, ref);
    snprintf(path, sizeof path, "%s/real", dir);
    mc_watch_add(w, path, MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_real, NULL, ref);
    snprintf(path, sizeof path, "%s/clientCalls", dir);
    mc_watch_add(w, path, MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_client_calls, NULL, ref);
    cell_aoi_add_entity_watchers(e, dir, ref);
}

static int on_init(mc_engine *e, char *err, size_t errlen)
{
    cell_state *cs = calloc(1, sizeof *cs);
    if (!cs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    mc_engine_set_role_state(e, cs);
    if (space_add_watchers(e) != 0) {
        snprintf(err, errlen, "cannot publish the spaces watchers");
        return -1;
    }
    if (cell_aoi_init(e, err, errlen) != 0 || cell_aoi_tick_init(e, err, errlen) != 0 ||
        client_moves_init(e, err, errlen) != 0)
        return -1;
    if (cell_copies_init(e, err, errlen) != 0)
        return -1;
    if (cell_cells_init(e) != 0) {
        snprintf(err, errlen, "cannot publish the cells watchers");
        return -1;
    }
    if (cell_reach_init(e, err, errlen) != 0 || cell_ghosts_init(e, err, errlen) != 0 || cell_load_init(e, err, errlen) != 0 ||
        cell_retire_init(e, err, errlen) != 0)
        return -1;
    return cell_moves_init(e, err, errlen);
}

static void on_free(mc_engine *e)
{
    cell_moves_free(e);
    cell_copies_free(e);
    cell_ghosts_free(e);
    cell_reach_free(e);
    cell_load_free(e);
    cell_retire_free(e);
    cell_aoi_tick_free(e);
    spaces_free(e);
}

const mc_role_part cell_role_part = {
    .part = MC_PART_CELL,
    .on_call = cell_on_call,
    .messages = cell_messages,
    .message_count = sizeof cell_messages / sizeof cell_messages[0],
    .on_peer_death = on_peer_death,
    .on_destroy = on_destroy,
    .on_shutdown = on_shutdown,
    .draining = cell_retire_draining,
    .add_entity_watchers = add_entity_watchers,
    .on_free = on_free,
    .on_init = on_init,
    .ops = &cell_engine_ops,
    .client_fan_out = fan_out,
    .on_control = cell_cells_on_control,
    .on_timer_work = cell_work_on_timer,
    .options = cell_aoi_options,
    .option_count = CELL_AOI_OPTION_COUNT,
};
