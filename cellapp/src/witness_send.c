/* World updates leave the cellapp: a witness's records (witness.c) built with the engine's
 * entities and shadows and sent to the witness's base as CLIENT_UPDATE (witness.h). */
#include "cellapp.h"
#include "client_shadow.h"
#include "common/log.h"
#include "entity/world_wire.h"
#include "witness.h"

static cell_aoi_state *aoi_state(mc_engine *e)
{
    return &((cell_state *)mc_engine_role_state(e))->aoi;
}

static mc_entity *find(void *ctx, int32_t id) { return mc_engine_find(ctx, id); }

static witness_env env_of(mc_engine *e, witness_shadow_fn shadow)
{
    cell_aoi_state *s = aoi_state(e);
    return (witness_env){.ctx = e, .find = find, .shadow = shadow, .budget = s->client_budget,
                         .refresh_ticks = s->refresh_ticks,
                         .enters = &s->world_enters, .leaves = &s->world_leaves,
                         .props = &s->world_props, .volatiles = &s->world_volatiles,
                         .deferred = &s->world_deferred, .refreshes = &s->world_refreshes};
}

static void send_run(mc_engine *e, mc_entity *ent, const mc_ostream *run, uint8_t flags)
{
    if (!run->size)
        return;
    cell_aoi_state *s = aoi_state(e);
    mc_ostream msg;
    mc_ostream_init(&msg);
    mc_write_i32(&msg, ent->id);
    mc_write_u8(&msg, flags);
    mc_write_bytes(&msg, run->data, run->size);
    mc_address to;
    mc_mailbox_address(&ent->base, &to);
    int rc = mc_ostream_ok(&msg) ? mc_engine_send(e, &to, MC_MSG_CLIENT_UPDATE, msg.data,
                                                  msg.size)
                                 : MC_CALL_ERR_BUSY;
    if (rc != 0) {
        s->world_send_failures++;
        if (s->world_send_failures <= 10 || s->world_send_failures % 1000 == 0)
            MC_WARNING("world updates of %s %d could not go to its base (%d; %llu so far)",
                       ent->td->name, (int)ent->id, rc,
                       (unsigned long long)s->world_send_failures);
    } else if (flags & MC_WORLD_FLAG_VOLATILE) {
        s->world_bytes_volatile += run->size;
    } else {
        s->world_bytes_reliable += run->size;
    }
    mc_ostream_free(&msg);
}

void witness_send(mc_engine *e, mc_entity *ent, witness *w, witness_shadow_fn shadow)
{
    witness_env env = env_of(e, shadow);
    const mc_ostream *rel, *vol;
    if (witness_build(w, &env, ent, &rel, &vol) != 0) {
        MC_ERROR("out of memory writing the world updates of entity %d", (int)ent->id);
        return;
    }
    send_run(e, ent, rel, 0);
    send_run(e, ent, vol, MC_WORLD_FLAG_VOLATILE);
}

void witness_leave_all(mc_engine *e, mc_entity *ent, witness *w, witness_shadow_fn shadow)
{
    witness_env env = env_of(e, shadow);
    const mc_ostream *rel;
    if (witness_build_leave_all(w, &env, &rel) == 0)
        send_run(e, ent, rel, 0);
}
