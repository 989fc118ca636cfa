/* The nub's lists of channels that owe their peer an ack, or whose peer's acks let them
 * make progress (resend, send what waits): filled by the receive path, worked through by
 * the nub once it has read a wake's datagrams (mc_nub_send_pending_acks). */
#include "internal.h"

void mc_nub_want_ack(mc_nub *nub, mc_channel *ch)
{
    ch->need_ack = true;
    if (ch->in_ack_list)
        return;
    ch->in_ack_list = true;
    ch->ack_next = nub->ack_list;
    nub->ack_list = ch;
}

void mc_nub_want_progress(mc_nub *nub, mc_channel *ch)
{
    if (ch->in_progress_list)
        return;
    ch->in_progress_list = true;
    ch->progress_next = nub->progress_list;
    nub->progress_list = ch;
}
