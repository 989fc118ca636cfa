/* Calls arriving at a baseapp: to a base (BASE, SERVICE), relayed to its cell wherever the
 * cell is now (CELL_VIA_BASE; held in order while the cell is being created), or meant for
 * its client (sent on the client's channel, proxy.h; refused with "no client" when the base
 * has none). */
#include "bases.h"
#include "app.h"
#include "common/log.h"

#include <stdlib.h>
#include <string.h>

static void relay_to_cell(mc_engine *e, const mc_origin *o, mc_entity *ent,
                          const mc_call_header *h, const uint8_t *args, size_t len)
{
    mc_engine_relay(e, o, &ent->cell, h->method, h->caller_id, args, len);
}

static void queue_for_cell(mc_engine *e, const mc_origin *o, mc_entity *ent,
                           const mc_call_header *h, const uint8_t *args, size_t len)
{
    if (ent->cell_queue_len >= mc_engine_cell_queue_max(e)) {
        mc_engine_refuse(e, o, MC_REFUSE_QUEUE_FULL, MC_CALL_ERR_BUSY,
                         "%s %d: %zu calls already wait for its cell", ent->td->name,
                         (int)ent->id, ent->cell_queue_len);
        return;
    }
    mc_queued_call *q = malloc(sizeof *q + len);
    if (!q) {
        mc_engine_refuse(e, o, MC_REFUSE_QUEUE_FULL, MC_CALL_ERR_BUSY, "out of memory");
        return;
    }
    q->next = NULL;
    q->origin = *o;
    q->header = *h;
    q->len = len;
    if (len)
        memcpy(q->args, args, len);
    if (ent->cell_queue_tail)
        ent->cell_queue_tail->next = q;
    else
        ent->cell_queue_head = q;
    ent->cell_queue_tail = q;
    ent->cell_queue_len++;
}

void base_flush_cell_queue(mc_engine *e, mc_entity *ent)
{
    mc_queued_call *q = ent->cell_queue_head;
    ent->cell_queue_head = ent->cell_queue_tail = NULL;
    ent->cell_queue_len = 0;
    while (q) {
        mc_queued_call *next = q->next;
        relay_to_cell(e, &q->origin, ent, &q->header, q->args, q->len);
        free(q);
        q = next;
    }
}

void base_fail_cell_queue(mc_engine *e, mc_entity *ent, int status, const char *reason)
{
    mc_queued_call *q = ent->cell_queue_head;
    ent->cell_queue_head = ent->cell_queue_tail = NULL;
    ent->cell_queue_len = 0;
    while (q) {
        mc_queued_call *next = q->next;
        mc_engine_refuse(e, &q->origin,
                         status == MC_CALL_ERR_DESTROYED ? MC_REFUSE_DESTROYED : MC_REFUSE_NO_CELL,
                         status, "%s %d: %s", ent->td->name, (int)ent->id, reason);
        free(q);
        q = next;
    }
}

void base_on_call(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                  const uint8_t *args, size_t len)
{
    mc_component c = mc_salt_component(h->salt);
    mc_entity *ent;
    const base_hooks *hk = base_hooks_or_none(e);
    /* a base on its way to another baseapp (this one retires) waits, or is sent on */
    if (hk->take_call && hk->take_call(e, o, h, args, len))
        return;
    /* a base of a dead baseapp whose backup is here, not restored yet: the call waits */
    if (!mc_engine_find(e, h->entity_id) && hk->hold_call && hk->hold_call(e, o, h, args, len))
        return;
    switch (c) {
    case MC_COMPONENT_BASE:
    case MC_COMPONENT_SERVICE:
        if (!(ent = mc_engine_call_target(e, o, h)))
            return;
        if (c == MC_COMPONENT_SERVICE && ent->nglobal_names == 0) {
            mc_engine_refuse(e, o, MC_REFUSE_NOT_SERVICE, MC_CALL_ERR_NO_ENTITY,
                             "%s %d is not registered globally", ent->td->name, (int)ent->id);
            return;
        }
        mc_engine_dispatch(e, o, ent, MC_PART_BASE, h, args, len);
        if (hk->after_call)
            hk->after_call(e, ent); /* its client hears the values that changed */
        return;
    case MC_COMPONENT_CELL_VIA_BASE:
        if (!(ent = mc_engine_call_target(e, o, h)))
            return;
        if (ent->destroying || ent->in_reap) {
            mc_engine_refuse(e, o, MC_REFUSE_DESTROYED, MC_CALL_ERR_DESTROYED,
                             "%s %d is being destroyed", ent->td->name, (int)ent->id);
            return;
        }
        switch (ent->cell_state) {
        case MC_CELL_LIVE:
            relay_to_cell(e, o, ent, h, args, len);
            return;
        case MC_CELL_CREATING:
            queue_for_cell(e, o, ent, h, args, len);
            return;
        default:
            mc_engine_refuse(e, o, MC_REFUSE_NO_CELL, MC_CALL_ERR_NO_ENTITY,
                             "%s %d has no cell", ent->td->name, (int)ent->id);
            return;
        }
    case MC_COMPONENT_CLIENT:
    case MC_COMPONENT_CLIENT_VIA_BASE:
        if (!(ent = mc_engine_call_target(e, o, h)))
            return;
        if (hk->client_call && hk->client_call(e, o, ent, h, args, len))
            return;
        mc_engine_refuse(e, o, MC_REFUSE_NO_CLIENT, MC_CALL_ERR_NO_CLIENT,
                         "%s %d has no client", ent->td->name, (int)ent->id);
        return;
    default:
        mc_engine_refuse(e, o, MC_REFUSE_WRONG_PART, MC_CALL_ERR_MAILBOX,
                         "a baseapp does not take %s calls", mc_component_name(c));
        return;
    }
}
