/* World updates and movement through a proxy: the records a base's cell writes for its
 * client (CLIENT_UPDATE, base_world.c) go to the client on its channel (WORLD reliably,
 * WORLD_VOLATILE unreliably); the client's MOVE goes to the cell (CLIENT_MOVE); a new client
 * makes the cell introduce its view afresh (CLIENT_ATTACHED). docs/WORLD.md. */
#include "base_world.h"
#include "common/log.h"
#include "entity/wire.h"
#include "entity/world_wire.h"
#include "entity/client_wire.h"
#include "proxy_internal.h"

#include <stdio.h>
#include <string.h>

int base_world_to_client(mc_engine *e, mc_entity *ent, bool is_volatile, const uint8_t *bytes,
                         size_t len)
{
    base_clients *bc = proxy_state(e);
    proxy_client *pc = bc ? proxy_of_entity(bc, ent->id) : NULL;
    /* a client still waiting for its player is introduced afresh once it has it */
    if (!pc || !pc->ch || pc->closing || pc->need_player)
        return -1;
    mc_bundle *b = mc_channel_bundle(pc->ch);
    int rc;
    if (is_volatile) {
        /* u32 stamp, then the run: the client keeps, per entity, the newest stamp it applied
         * and ignores an older VOLATILE that the network delivered late */
        if (len > 0xFFFFu - 4u)
            return -1; /* never: a volatile run is 29 bytes an entity within the budget */
        mc_ostream os;
        mc_ostream_init(&os);
        if (!++pc->vol_stamp)
            pc->vol_stamp = 1; /* 0 is never a stamp */
        mc_write_u32(&os, pc->vol_stamp);
        mc_write_bytes(&os, bytes, len);
        rc = mc_ostream_ok(&os)
                 ? mc_bundle_add_message(b, mc_cw_def(&mc_cw_client_send_iface,
                                                      MC_CW_WORLD_VOLATILE),
                                         MC_RELIABLE_NO, os.data, os.size)
                 : MC_ERR_NO_MEMORY;
        mc_ostream_free(&os);
    } else {
        rc = mc_bundle_add_message(b, mc_cw_def(&mc_cw_client_send_iface, MC_CW_WORLD),
                                   MC_RELIABLE_DRIVER, bytes, len);
    }
    if (rc == MC_OK)
        rc = mc_channel_send(pc->ch);
    return rc == MC_OK ? 0 : -1;
}

bool proxy_has_client(mc_engine *e, mc_entity *ent)
{
    base_clients *bc = proxy_state(e);
    proxy_client *pc = bc ? proxy_of_entity(bc, ent->id) : NULL;
    return pc && !pc->closing;
}

void proxy_world_attached(mc_engine *e, mc_entity *ent)
{
    if (ent->cell_state != MC_CELL_LIVE)
        return; /* a cell created later starts its stream with this client anyway */
    mc_ostream os;
    mc_ostream_init(&os);
    mc_write_i32(&os, ent->id);
    mc_address to;
    mc_mailbox_address(&ent->cell, &to);
    if (mc_ostream_ok(&os))
        (void)mc_engine_send(e, &to, MC_MSG_CLIENT_ATTACHED, os.data, os.size);
    mc_ostream_free(&os);
}

/* MOVE from a client: its own entity's position and direction, for its cell. */
void mc_cw_on_move(void *ctx, const mc_message_info *info, mc_istream *data)
{
    base_clients *bc = ctx;
    proxy_client *pc = mc_map_get(&bc->by_peer, proxy_peer_key(info->source), 0);
    if (!pc || pc->closing || pc->entity_id <= 0) {
        if (!pc || !pc->closing)
            proxy_refuse(bc, info->source, CLIENT_REFUSE_NO_PLAYER, "a move without a player");
        return;
    }
    if (!proxy_limit_move(bc, pc))
        return; /* over --clientMovesPerS: the next one supersedes it anyway */
    mc_entity *ent = mc_engine_find(bc->e, pc->entity_id);
    if (!ent || ent->part != MC_PART_BASE || ent->in_reap || ent->cell_state != MC_CELL_LIVE) {
        proxy_refuse(bc, info->source, CLIENT_REFUSE_NO_CELL, "a move while it has no cell");
        return;
    }
    const uint8_t *b = mc_read_bytes(data, 24);
    if (!b) {
        proxy_refuse(bc, info->source, CLIENT_REFUSE_MALFORMED, "a short move");
        return;
    }
    /* the cell checks the numbers (finite, speed); the base only names the entity */
    mc_ostream os;
    mc_ostream_init(&os);
    mc_write_i32(&os, ent->id);
    mc_write_bytes(&os, b, 24);
    mc_address to;
    mc_mailbox_address(&ent->cell, &to);
    if (mc_ostream_ok(&os))
        (void)mc_engine_send(bc->e, &to, MC_MSG_CLIENT_MOVE, os.data, os.size);
    mc_ostream_free(&os);
    bc->st.moves++;
}
