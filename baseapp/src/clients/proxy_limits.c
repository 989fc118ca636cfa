/* The per-client rate limits applied to what a client sends (client_limits.h): a MOVE or an
 * exposed call over its rate is dropped and counted (clients/movesDropped,
 * clients/callsDropped); a client that keeps calling past the hard limit is told it is
 * kicked and disconnected (clients/kickedForCalls). docs/CLIENT.md "Limits". */
#include "common/clock.h"
#include "common/log.h"
#include "entity/client_wire.h"
#include "proxy_internal.h"

#include <stdio.h>

bool proxy_limit_move(base_clients *bc, proxy_client *pc)
{
    if (client_limit_move(&bc->limits, &pc->lim, mc_clock_now_us()) == CLIENT_LIMIT_OK)
        return true;
    bc->st.moves_dropped++;
    if (proxy_log_allowed(bc->st.moves_dropped)) {
        char a[MC_ADDRESS_STRLEN];
        MC_INFO("client %s of entity %d: a MOVE over --clientMovesPerS %g dropped "
                "(%llu dropped so far)",
                mc_address_format(&pc->peer, a, sizeof a), (int)pc->entity_id,
                bc->limits.moves_per_s, (unsigned long long)bc->st.moves_dropped);
    }
    return false;
}

bool proxy_limit_call(base_clients *bc, proxy_client *pc)
{
    client_limit_verdict v = client_limit_call(&bc->limits, &pc->lim, mc_clock_now_us());
    if (v == CLIENT_LIMIT_OK)
        return true;
    bc->st.calls_dropped++;
    char a[MC_ADDRESS_STRLEN];
    if (v == CLIENT_LIMIT_KICK) {
        bc->st.kicked_calls++;
        MC_WARNING("client %s of entity %d disconnected: more than %llu calls dropped within "
                   "a second (--clientCallDropsToKick; %llu clients so far)",
                   mc_address_format(&pc->peer, a, sizeof a), (int)pc->entity_id,
                   (unsigned long long)bc->limits.call_drops_to_kick,
                   (unsigned long long)bc->st.kicked_calls);
        proxy_close(bc, pc, MC_CW_BYE_KICKED, "too many calls");
        return false;
    }
    if (proxy_log_allowed(bc->st.calls_dropped))
        MC_INFO("client %s of entity %d: a call over --clientCallsPerS %g (burst %g) dropped "
                "(%llu dropped so far)",
                mc_address_format(&pc->peer, a, sizeof a), (int)pc->entity_id,
                bc->limits.calls_per_s, bc->limits.call_burst,
                (unsigned long long)bc->st.calls_dropped);
    return false;
}
