/* The engine API game code calls: each function forwards to the engine named in the call
 * context (call->ops), so a game module needs no symbols from the engine binary. */
#include "common/entity_api.h"

#include <stddef.h>

#define NO_ENGINE(call, fn) (!(call) || !(call)->ops || !(call)->ops->fn)

void *mc_self(const mc_call_ctx *call)
{
    return NO_ENGINE(call, self) ? NULL : call->ops->self(call);
}

double mc_time(const mc_call_ctx *call)
{
    return NO_ENGINE(call, time) ? 0.0 : call->ops->time(call);
}

int mc_addTimer(const mc_call_ctx *call, double initial_s, double repeat_s, int64_t user_arg,
                uint32_t *out_id)
{
    if (NO_ENGINE(call, add_timer))
        return MC_CALL_ERR_STATE;
    return call->ops->add_timer(call, initial_s, repeat_s, user_arg, out_id);
}

int mc_delTimer(const mc_call_ctx *call, uint32_t timer_id)
{
    return NO_ENGINE(call, del_timer) ? MC_CALL_ERR_STATE : call->ops->del_timer(call, timer_id);
}

int mc_destroy(const mc_call_ctx *call)
{
    return NO_ENGINE(call, destroy) ? MC_CALL_ERR_STATE : call->ops->destroy(call);
}

int mc_createBaseLocally(const mc_call_ctx *call, const char *type, const mc_prop_init *props,
                         size_t nprops, mc_mailbox_ref *out)
{
    if (NO_ENGINE(call, create_base_locally))
        return MC_CALL_ERR_STATE;
    return call->ops->create_base_locally(call, type, props, nprops, out);
}

int mc_createBaseAnywhere(const mc_call_ctx *call, const char *type, const mc_prop_init *props,
                          size_t nprops, mc_create_fn fn, void *ud)
{
    if (NO_ENGINE(call, create_base_anywhere))
        return MC_CALL_ERR_STATE;
    return call->ops->create_base_anywhere(call, type, props, nprops, fn, ud);
}

int mc_createBaseRemotely(const mc_call_ctx *call, const mc_mailbox_ref *where,
                          const char *type, const mc_prop_init *props, size_t nprops,
                          mc_create_fn fn, void *ud)
{
    if (NO_ENGINE(call, create_base_remotely))
        return MC_CALL_ERR_STATE;
    return call->ops->create_base_remotely(call, where, type, props, nprops, fn, ud);
}

int mc_createCellEntity(const mc_call_ctx *call, const mc_mailbox_ref *near,
                        const mc_vector3 *position, const mc_vector3 *direction)
{
    if (NO_ENGINE(call, create_cell_entity))
        return MC_CALL_ERR_STATE;
    return call->ops->create_cell_entity(call, near, position, direction);
}

int mc_createInNewSpace(const mc_call_ctx *call, const mc_vector3 *position,
                        const mc_vector3 *direction)
{
    if (NO_ENGINE(call, create_in_new_space))
        return MC_CALL_ERR_STATE;
    return call->ops->create_in_new_space(call, position, direction);
}

int mc_destroyCellEntity(const mc_call_ctx *call)
{
    if (NO_ENGINE(call, destroy_cell_entity))
        return MC_CALL_ERR_STATE;
    return call->ops->destroy_cell_entity(call);
}

mc_mailbox_ref mc_base_cell(const mc_call_ctx *call)
{
    mc_mailbox_ref none = {0};
    return NO_ENGINE(call, base_cell) ? none : call->ops->base_cell(call);
}

void *mc_cellData(const mc_call_ctx *call)
{
    return NO_ENGINE(call, cell_data) ? NULL : call->ops->cell_data(call);
}

int mc_registerGlobally(const mc_call_ctx *call, const char *name, mc_done_fn fn, void *ud)
{
    if (NO_ENGINE(call, register_globally))
        return MC_CALL_ERR_STATE;
    return call->ops->register_globally(call, name, fn, ud);
}

int mc_deregisterGlobally(const mc_call_ctx *call, const char *name)
{
    if (NO_ENGINE(call, deregister_globally))
        return MC_CALL_ERR_STATE;
    return call->ops->deregister_globally(call, name);
}

int mc_lookUpBaseByName(const mc_call_ctx *call, const char *name, mc_lookup_fn fn, void *ud)
{
    if (NO_ENGINE(call, look_up_base_by_name))
        return MC_CALL_ERR_STATE;
    return call->ops->look_up_base_by_name(call, name, fn, ud);
}

int mc_writeToDB(const mc_call_ctx *call, mc_write_fn fn, void *ud)
{
    return NO_ENGINE(call, write_to_db) ? MC_CALL_ERR_STATE : call->ops->write_to_db(call, fn, ud);
}

int64_t mc_databaseID(const mc_call_ctx *call)
{
    return NO_ENGINE(call, database_id) ? 0 : call->ops->database_id(call);
}

int mc_setAutoLoad(const mc_call_ctx *call, bool on)
{
    return NO_ENGINE(call, set_auto_load) ? MC_CALL_ERR_STATE : call->ops->set_auto_load(call, on);
}

static int from_db(const mc_call_ctx *call, bool anywhere, const char *type, int64_t dbid,
                   const char *name, mc_load_fn fn, void *ud)
{
    if (NO_ENGINE(call, create_base_from_db))
        return MC_CALL_ERR_STATE;
    return call->ops->create_base_from_db(call, anywhere, type, dbid, name, fn, ud);
}

int mc_createBaseFromDB(const mc_call_ctx *call, const char *type, int64_t dbid,
                        mc_load_fn fn, void *ud)
{
    return from_db(call, false, type, dbid, NULL, fn, ud);
}

int mc_createBaseFromDBByName(const mc_call_ctx *call, const char *type, const char *name,
                              mc_load_fn fn, void *ud)
{
    return from_db(call, false, type, 0, name, fn, ud);
}

int mc_createBaseAnywhereFromDB(const mc_call_ctx *call, const char *type, int64_t dbid,
                                mc_load_fn fn, void *ud)
{
    return from_db(call, true, type, dbid, NULL, fn, ud);
}

int mc_createBaseAnywhereFromDBByName(const mc_call_ctx *call, const char *type,
                                      const char *name, mc_load_fn fn, void *ud)
{
    return from_db(call, true, type, 0, name, fn, ud);
}

int mc_destroyBase(const mc_call_ctx *call, bool delete_from_db, bool write_to_db)
{
    if (NO_ENGINE(call, destroy_base))
        return MC_CALL_ERR_STATE;
    return call->ops->destroy_base(call, delete_from_db, write_to_db);
}

enum { VEC_POSITION = 0, VEC_DIRECTION = 1 };

mc_vector3 mc_position(const mc_call_ctx *call)
{
    mc_vector3 v = {0, 0, 0};
    if (!NO_ENGINE(call, get_vec))
        call->ops->get_vec(call, VEC_POSITION, &v);
    return v;
}

mc_vector3 mc_direction(const mc_call_ctx *call)
{
    mc_vector3 v = {0, 0, 0};
    if (!NO_ENGINE(call, get_vec))
        call->ops->get_vec(call, VEC_DIRECTION, &v);
    return v;
}

int mc_setPosition(const mc_call_ctx *call, mc_vector3 position)
{
    if (NO_ENGINE(call, set_vec))
        return MC_CALL_ERR_STATE;
    return call->ops->set_vec(call, VEC_POSITION, position);
}

int mc_setDirection(const mc_call_ctx *call, mc_vector3 direction)
{
    if (NO_ENGINE(call, set_vec))
        return MC_CALL_ERR_STATE;
    return call->ops->set_vec(call, VEC_DIRECTION, direction);
}

int32_t mc_spaceID(const mc_call_ctx *call)
{
    return NO_ENGINE(call, space_id) ? 0 : call->ops->space_id(call);
}

mc_mailbox_ref mc_cell_base(const mc_call_ctx *call)
{
    mc_mailbox_ref none = {0};
    return NO_ENGINE(call, cell_base) ? none : call->ops->cell_base(call);
}

int mc_destroySpace(const mc_call_ctx *call)
{
    return NO_ENGINE(call, destroy_space) ? MC_CALL_ERR_STATE : call->ops->destroy_space(call);
}

int mc_teleport(const mc_call_ctx *call, const mc_mailbox_ref *nearby, mc_vector3 position,
                mc_vector3 direction)
{
    mc_mailbox_ref none = {0};
    return NO_ENGINE(call, teleport)
               ? MC_CALL_ERR_STATE
               : call->ops->teleport(call, nearby ? nearby : &none, position, direction);
}

int mc_setWitness(const mc_call_ctx *call, bool on)
{
    return NO_ENGINE(call, set_witness) ? MC_CALL_ERR_STATE : call->ops->set_witness(call, on);
}

int mc_setAoIRadius(const mc_call_ctx *call, float radius, float hysteresis)
{
    return NO_ENGINE(call, set_aoi_radius) ? MC_CALL_ERR_STATE
                                           : call->ops->set_aoi_radius(call, radius, hysteresis);
}

int mc_entitiesInRange(const mc_call_ctx *call, float radius, const char *type,
                       mc_mailbox_ref *out, size_t max, size_t *count)
{
    if (count)
        *count = 0;
    if (!count || (max && !out))
        return MC_CALL_ERR_ARGS;
    return NO_ENGINE(call, entities_in_range)
               ? MC_CALL_ERR_STATE
               : call->ops->entities_in_range(call, radius, type, out, max, count);
}

static mc_mailbox_ref convert(mc_mailbox_ref m, mc_component from, mc_component to)
{
    mc_mailbox_ref none = {0};
    if (mc_mailbox_ref_is_none(&m))
        return none;
    mc_component c = mc_mailbox_ref_component(&m);
    if (c == from) {
        mc_mailbox_ref_set_component(&m, to);
        return m;
    }
    return none;
}

mc_mailbox_ref mc_mailbox_cell(mc_mailbox_ref m)
{
    if (!mc_mailbox_ref_is_none(&m) && mc_mailbox_ref_component(&m) == MC_COMPONENT_CELL)
        return m;
    return convert(m, MC_COMPONENT_BASE, MC_COMPONENT_CELL_VIA_BASE);
}

mc_mailbox_ref mc_mailbox_base(mc_mailbox_ref m)
{
    if (!mc_mailbox_ref_is_none(&m) && mc_mailbox_ref_component(&m) == MC_COMPONENT_BASE)
        return m;
    return convert(m, MC_COMPONENT_CELL, MC_COMPONENT_BASE_VIA_CELL);
}

mc_mailbox_ref mc_mailbox_client(mc_mailbox_ref m)
{
    mc_mailbox_ref none = {0};
    if (mc_mailbox_ref_is_none(&m))
        return none;
    if (mc_mailbox_ref_component(&m) == MC_COMPONENT_BASE)
        return convert(m, MC_COMPONENT_BASE, MC_COMPONENT_CLIENT_VIA_BASE);
    return convert(m, MC_COMPONENT_CELL, MC_COMPONENT_CLIENT_VIA_CELL);
}

mc_mailbox_ref mc_ownClient(const mc_call_ctx *call)
{
    mc_mailbox_ref none = {0};
    return call ? mc_mailbox_client(call->self) : none;
}

/* allClients / otherClients: the calling cell entity's clients (none outside a cell). */
static mc_clients clients_of(const mc_call_ctx *call, bool own_client)
{
    mc_clients none = {0};
    if (!call || mc_mailbox_ref_is_none(&call->self) ||
        mc_mailbox_ref_component(&call->self) != MC_COMPONENT_CELL)
        return none;
    return (mc_clients){.entity_id = call->self.id,
                        .entity_type = mc_mailbox_ref_type(&call->self),
                        .own_client = own_client};
}

mc_clients mc_allClients(const mc_call_ctx *call) { return clients_of(call, true); }
mc_clients mc_otherClients(const mc_call_ctx *call) { return clients_of(call, false); }

int mc_giveClientTo(const mc_call_ctx *call, const mc_mailbox_ref *to)
{
    return NO_ENGINE(call, give_client_to) ? MC_CALL_ERR_STATE
                                           : call->ops->give_client_to(call, to);
}

bool mc_hasClient(const mc_call_ctx *call)
{
    return NO_ENGINE(call, has_client) ? false : call->ops->has_client(call);
}
