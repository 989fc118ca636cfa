/* BASE_RESTORED (issue 20): the baseapp of a cell's base died and the base was restored from
 * its backup on another baseapp, which tells the cell its new address. Taken only from a
 * live baseapp, for a cell whose base was on a process the manager declared dead, when the
 * sender is the base's backup on the ring of that death (entity/engine.h,
 * mc_engine_new_home): nobody else can take a cell's base away. The restorer may be told of
 * the death before this cellapp: while the base's process is still alive to us, the sender
 * must be its backup on the current ring (the same baseapp: the owner is never its own
 * backup). Calls the cell makes to its base reach the new home before this arrives too (the
 * engine resends them there).
 *
 * The backup may name a cellapp the cell has left since (it moved, and its base died before
 * it heard CELL_MOVED or backed the new address up). That cellapp, holding the cell's
 * forwarding entry, checks it the same way, names the new base in the entry (so the base's
 * messages are forwarded as before), passes it on to the cellapp the cell went to, and tells
 * the restored base where its cell is now (CELL_MOVED, which the base takes only from the
 * address it names). The cellapp holding the cell takes it passed on by a live cellapp when
 * the base it names is the live backup of the cell's dead base. */
#include "cellapp.h"
#include "common/log.h"
#include "entity/backup_wire.h"
#include "entity/move_wire.h"

#include <stdint.h>

/* True when `base` (the new address of a base that was at `was`) is that base's backup on
 * the ring of its death, a live baseapp, and the message came from it (or, relayed, from a
 * live cellapp). */
static bool from_backup(mc_engine *e, const mc_origin *o, int32_t id, const mc_mailbox_ref *was,
                        const mc_mailbox_ref *base, bool relayed)
{
    mc_server *s = mc_engine_server(e);
    mc_address old, now, home;
    mc_mailbox_address(was, &old);
    mc_mailbox_address(base, &now);
    char old_text[MC_ADDRESS_STRLEN];
    mc_address_format(&old, old_text, sizeof old_text);
    Mc__Control__ProcessState old_state = mc_server_peer_state(s, old_text);
    bool named = old_state == MC__CONTROL__PROCESS_STATE__STATE_DEAD
                     ? mc_engine_new_home(e, &old, id, &home)
                     : old_state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE &&
                           mc_backup_ring_pick(mc_server_backup_ring(s), id, &old, &home);
    bool sender = relayed ? mc_server_peer_is_live(s, &o->addr, MC_ROLE_CELLAPP)
                          : mc_address_equal(&now, &o->addr);
    return !o->local && sender && mc_server_peer_is_live(s, &now, MC_ROLE_BASEAPP) && named &&
           mc_address_equal(&home, &now);
}

static void on_base_told(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    int32_t id = (int32_t)(intptr_t)ctx;
    if (mc_engine_freeing(e))
        return;
    int8_t st = status == MC_CALL_OK ? mc_read_i8(payload) : (int8_t)status;
    if (st != MC_CALL_OK)
        MC_WARNING("entity %d: its restored base did not take its cell's address: %s",
                   (int)id, mc_call_status_name(st));
}

/* The cell left this cellapp: check, pass on, tell the base where the cell is. */
static void pass_on(mc_engine *e, const mc_origin *o, int32_t id, const mc_mailbox_ref *was,
                    const mc_mailbox_ref *base, const mc_address *went, const uint8_t *raw,
                    size_t len)
{
    if (mc_mailbox_ref_type(base) != mc_mailbox_ref_type(was) ||
        !from_backup(e, o, id, was, base, false)) {
        mc_engine_refuse(e, o, MC_REFUSE_WRONG_PART, MC_CALL_ERR_MAILBOX,
                         "BASE_RESTORED for %d (moved away) ignored: not from the backup of "
                         "its dead base",
                         (int)id);
        return;
    }
    cell_move_left_base(e, id, base);
    int rc = mc_engine_send(e, went, MC_MSG_BASE_RESTORED, raw, len);
    mc_mailbox_ref cell;
    mc_mailbox_ref_init(&cell, id, went->ip, went->port, MC_COMPONENT_CELL,
                        mc_mailbox_ref_type(base));
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cell_moved_encode(&os, id, &cell);
    mc_address now;
    mc_mailbox_address(base, &now);
    int told = mc_engine_request(e, &now, MC_MSG_CELL_MOVED, os.data, os.size, on_base_told,
                                 (void *)(intptr_t)id);
    mc_ostream_free(&os);
    char a[MC_ADDRESS_STRLEN];
    MC_INFO("entity %d: its base was restored while its cell is on %s: passed on (%s), the "
            "base told (%s)",
            (int)id, mc_address_format(went, a, sizeof a), mc_call_status_name(rc),
            mc_call_status_name(told));
}

void cell_on_base_restored(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    const uint8_t *raw = is->data + is->pos;
    size_t raw_len = mc_istream_remaining(is);
    int32_t id;
    mc_mailbox_ref base;
    if (o->local || !mc_base_restored_decode(mc_engine_defs(e), is, &id, &base)) {
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                         "BASE_RESTORED malformed: ignored");
        return;
    }
    mc_entity *ent = mc_engine_find(e, id);
    mc_mailbox_ref was;
    mc_address went;
    if ((!ent || ent->is_ghost) && cell_move_left(e, id, &was, &went)) {
        pass_on(e, o, id, &was, &base, &went, raw, raw_len);
        return;
    }
    if (!ent || ent->is_ghost || mc_mailbox_ref_type(&base) != ent->type) {
        mc_engine_refuse(e, o, MC_REFUSE_NO_ENTITY, MC_CALL_ERR_NO_ENTITY,
                         "BASE_RESTORED for %d ignored: no such cell", (int)id);
        return;
    }
    mc_address now;
    mc_mailbox_address(&base, &now);
    bool relayed = !mc_address_equal(&now, &o->addr);
    if (!from_backup(e, o, id, &ent->base, &base, relayed)) {
        mc_engine_refuse(e, o, MC_REFUSE_WRONG_PART, MC_CALL_ERR_MAILBOX,
                         "BASE_RESTORED for %d ignored: not from the backup of its dead base",
                         (int)id);
        return;
    }
    ent->base = base;
    char text[128];
    mc_engine_mailbox_text(e, &base, text, sizeof text);
    MC_INFO("%s %d: its base was restored: %s%s", ent->td->name, (int)id, text,
            relayed ? " (passed on by the cellapp it left)" : "");
}
