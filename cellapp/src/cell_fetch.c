/* FETCH_CELL: a base's baseapp asks for what writeToDB stores of the cell part (its
 * Persistent properties, position, direction and space id). Only the cell's own base may
 * ask. */
#include "cellapp.h"
#include "common/log.h"
#include "entity/persist_wire.h"

#include <stdio.h>

static void refuse(mc_engine *e, const mc_origin *o, mc_refuse_reason why, int status,
                   const char *reason)
{
    mc_engine_count_refused(e, why);
    mc_ostream os;
    mc_ostream_init(&os);
    mc_fetch_cell_reply_error(&os, status, reason);
    mc_engine_reply(e, o, os.data, os.size);
    mc_ostream_free(&os);
}

void cell_on_fetch_cell(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    int32_t id;
    char why[MC_REASON_MAX];
    if (!mc_fetch_cell_decode(is, &id)) {
        refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS, "FETCH_CELL malformed");
        return;
    }
    mc_entity *ent = mc_engine_find(e, id);
    if (!ent || ent->in_reap) {
        snprintf(why, sizeof why, "no cell %d here", (int)id);
        refuse(e, o, ent ? MC_REFUSE_DESTROYED : MC_REFUSE_NO_ENTITY,
               ent ? MC_CALL_ERR_DESTROYED : MC_CALL_ERR_NO_ENTITY, why);
        return;
    }
    mc_address base_addr;
    mc_mailbox_address(&ent->base, &base_addr);
    if (!mc_address_equal(&base_addr, &o->addr) &&
        !cell_move_from_peer(e, id, &o->addr)) { /* forwarded by the cellapp it left */
        snprintf(why, sizeof why, "FETCH_CELL for %d not from its base", (int)id);
        refuse(e, o, MC_REFUSE_WRONG_PART, MC_CALL_ERR_MAILBOX, why);
        return;
    }
    mc_ostream os;
    mc_ostream_init(&os);
    mc_fetch_cell_head head = {.status = MC_CALL_OK,
                               .space_id = ent->space ? ent->space->id : 0,
                               .position = ent->position,
                               .direction = ent->direction};
    mc_fetch_cell_reply_ok(&os, &head);
    if (ent->gt->props_encode(mc_engine_defs(e), MC_PART_CELL, ent->props, true, &os, why,
                              sizeof why) != MC_CALL_OK) {
        MC_WARNING("%s %d: persistent cell properties do not encode: %s", ent->td->name,
                   (int)id, why);
        mc_ostream_reset(&os);
        mc_fetch_cell_reply_error(&os, MC_CALL_ERR_ARGS, why);
    }
    mc_engine_reply(e, o, os.data, os.size);
    mc_ostream_free(&os);
}
