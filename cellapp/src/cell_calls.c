/* Calls arriving at a cellapp: to a cell (CELL), or relayed to the entity's base
 * (BASE_VIA_CELL as BASE, CLIENT_VIA_CELL as CLIENT_VIA_BASE: the base reaches the client). */
#include "cellapp.h"

#include <stdlib.h>
#include <string.h>

/* The method index is the final receiver's to check (once, where it runs the method). */
static void relay_to_base(mc_engine *e, const mc_origin *o, mc_entity *ent,
                          const mc_call_header *h, const uint8_t *args, size_t len,
                          mc_component c)
{
    mc_mailbox_ref to = ent->base;
    mc_mailbox_ref_set_component(&to, c);
    mc_engine_relay(e, o, &to, h->method, h->caller_id, args, len);
}

void cell_on_call(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                  const uint8_t *args, size_t len)
{
    mc_component c = mc_salt_component(h->salt);
    mc_entity *ent;
    if (cell_move_wants(e, h->entity_id)) {
        /* a moving cell's calls wait, or follow it (cell_move.c): as they came */
        uint8_t buf[MC_CALL_HEADER_SIZE + 256];
        uint8_t *raw = len <= 256 ? buf : malloc(MC_CALL_HEADER_SIZE + len);
        if (!raw) {
            mc_engine_refuse(e, o, MC_REFUSE_QUEUE_FULL, MC_CALL_ERR_BUSY, "out of memory");
            return;
        }
        mc_call_header_pack(raw, h);
        if (len)
            memcpy(raw + MC_CALL_HEADER_SIZE, args, len);
        bool taken = cell_move_intercept(e, MC_MSG_ENTITY_CALL, o, h->entity_id, raw,
                                         MC_CALL_HEADER_SIZE + len);
        if (raw != buf)
            free(raw);
        if (taken)
            return;
    }
    ent = mc_engine_find(e, h->entity_id);
    if (ent && ent->is_ghost && !ent->in_reap) {
        cell_ghost_forward_call(e, o, ent, h, args, len); /* the real takes every call */
        return;
    }
    switch (c) {
    case MC_COMPONENT_CELL:
        if ((ent = mc_engine_call_target(e, o, h)))
            mc_engine_dispatch(e, o, ent, MC_PART_CELL, h, args, len);
        return;
    case MC_COMPONENT_BASE_VIA_CELL:
        if ((ent = mc_engine_call_target(e, o, h)))
            relay_to_base(e, o, ent, h, args, len, MC_COMPONENT_BASE);
        return;
    case MC_COMPONENT_CLIENT_VIA_CELL:
        if ((ent = mc_engine_call_target(e, o, h)))
            relay_to_base(e, o, ent, h, args, len, MC_COMPONENT_CLIENT_VIA_BASE);
        return;
    default:
        mc_engine_refuse(e, o, MC_REFUSE_WRONG_PART, MC_CALL_ERR_MAILBOX,
                         "a cellapp does not take %s calls", mc_component_name(c));
        return;
    }
}
