/* Test-only channel hooks (see channel_debug.h): they reach into the library's private
 * structures, so they live with the tests. */
#include "channel_debug.h"

#include "internal.h"

void test_channel_set_sequences(mc_channel *ch, uint32_t send_seq, uint32_t recv_seq)
{
    if (!ch || ch->unacked || ch->overflow || ch->recv_buffered)
        return;
    send_seq &= MC_SEQ_MASK;
    ch->first_seq = ch->next_seq = ch->oldest_unacked = send_seq;
    ch->issued = 0;
    ch->in_seq_at = recv_seq & MC_SEQ_MASK;
    ch->peer_first_known = true;
}
