/* RETIRED (entity message 83; entity/engine.h mc_engine_on_retired): a retiring baseapp that
 * has offloaded every base tells every live baseapp and cellapp, before it stops, to send
 * calls for its bases to their new homes (new_homes.c) from now on. Both roles list it in
 * their message tables. */
#include "engine_internal.h"
#include "entity/backup_wire.h"
#include "common/log.h"

void mc_engine_on_retired(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    (void)is;
    mc_server *s = mc_engine_server(e);
    if (o->local || !mc_server_peer_is_live(s, &o->addr, MC_ROLE_BASEAPP) ||
        mc_backup_ring_has(mc_server_backup_ring(s), &o->addr)) {
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_UNAVAILABLE,
                         "RETIRED is taken from a live baseapp out of the backup ring only");
        return;
    }
    if (engine_note_retired(e, &o->addr)) {
        char a[MC_ADDRESS_STRLEN];
        e->st.retired_noted++;
        MC_INFO("%s retired: calls for its bases go to their new homes",
                mc_address_format(&o->addr, a, sizeof a));
    }
    /* what we sent it before is ahead of this answer on our channel to it; so it is of
     * RETIRED_NOTED, which it takes however late (the answer may come after its timeout:
     * the retiring baseapp then says when our stream through it ended) */
    mc_engine_reply_status(e, o, MC_CALL_OK, "");
    mc_engine_send(e, &o->addr, MC_MSG_RETIRED_NOTED, NULL, 0);
}
