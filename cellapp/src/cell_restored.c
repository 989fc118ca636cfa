/* BASE_RESTORED (issue 20): the baseapp of a cell's base died and the base was restored from
 * its backup on another baseapp, which tells the cell its new address. Taken only from a
 * live baseapp, for a cell whose base was on a process the manager declared dead, when the
 * sender is the base's backup on the ring of that death (entity/engine.h,
 * mc_engine_new_home): nobody else can take a cell's base away. The restorer may be told of
 * the death before this cellapp: while the base's process is still alive to us, the sender
 * must be its backup on the current ring (the same baseapp: the owner is never its own
 * backup). Calls the cell makes to its base reach the new home before this arrives too (the
 * engine resends them there). */
#include "cellapp.h"
#include "common/log.h"
#include "entity/backup_wire.h"

void cell_on_base_restored(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    int32_t id;
    mc_mailbox_ref base;
    if (o->local || !mc_base_restored_decode(mc_engine_defs(e), is, &id, &base)) {
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                         "BASE_RESTORED malformed: ignored");
        return;
    }
    mc_entity *ent = mc_engine_find(e, id);
    if (!ent || mc_mailbox_ref_type(&base) != ent->type) {
        mc_engine_refuse(e, o, MC_REFUSE_NO_ENTITY, MC_CALL_ERR_NO_ENTITY,
                         "BASE_RESTORED for %d ignored: no such cell", (int)id);
        return;
    }
    mc_server *s = mc_engine_server(e);
    mc_address old, now, home;
    mc_mailbox_address(&ent->base, &old);
    mc_mailbox_address(&base, &now);
    char old_text[MC_ADDRESS_STRLEN];
    mc_address_format(&old, old_text, sizeof old_text);
    Mc__Control__ProcessState old_state = mc_server_peer_state(s, old_text);
    bool named = old_state == MC__CONTROL__PROCESS_STATE__STATE_DEAD
                     ? mc_engine_new_home(e, &old, id, &home)
                     : old_state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE &&
                           mc_backup_ring_pick(mc_server_backup_ring(s), id, &old, &home);
    if (!mc_address_equal(&now, &o->addr) ||
        !mc_server_peer_is_live(s, &o->addr, MC_ROLE_BASEAPP) || !named ||
        !mc_address_equal(&home, &o->addr)) {
        mc_engine_refuse(e, o, MC_REFUSE_WRONG_PART, MC_CALL_ERR_MAILBOX,
                         "BASE_RESTORED for %d ignored: not from the backup of its dead base",
                         (int)id);
        return;
    }
    ent->base = base;
    char text[128];
    mc_engine_mailbox_text(e, &base, text, sizeof text);
    MC_INFO("%s %d: its base was restored: %s", ent->td->name, (int)id, text);
}
