/* Replying to a request: on the channel it came on, or off-channel to its sender (an
 * unproven address gets no more bytes than it sent; else the reply waits for a proof). */
#include <stdlib.h>

#include "internal.h"

int mc_reply_to(mc_nub *nub, mc_channel *channel, const mc_address *dest, uint32_t reply_id,
                const void *data, size_t len)
{
    if (!nub || (!channel && !dest) || (!data && len))
        return MC_ERR_INVALID;
    if (channel) {
        if (channel->dead)
            return MC_ERR_DEAD;
        mc_bundle *b = &channel->bundle;
        int r = mc_bundle_start_reply(b, reply_id);
        if (r != MC_OK)
            return r;
        mc_bundle_write(b, data, len);
        r = mc_bundle_end_message(b);
        if (r != MC_OK)
            return r;
        return mc_channel_send(channel);
    }
    /* an unproven address gets no more bytes than it sent (the estimate covers the flags,
     * reply header and sequence number, and each further packet's footers), else the reply
     * waits for a proof */
    mc_time_us now = mc_clock_now_us();
    bool proven = mc_proof_proven(nub, dest, now);
    size_t estimate = len + 15u + 16u * (len / 1400u);
    if (!proven && !mc_proof_spend(nub, dest, estimate, now))
        return mc_proof_park_reply(nub, dest, reply_id, data, len);
    mc_bundle b;
    mc_bundle_init(&b, nub, NULL);
    int r = mc_bundle_start_reply(&b, reply_id);
    if (r == MC_OK) {
        mc_bundle_write(&b, data, len);
        r = mc_bundle_end_message(&b);
    }
    nub->once_off_budgeted = !proven;
    if (r == MC_OK)
        r = mc_nub_send_bundle(nub, dest, &b, MC_SEND_RELIABLE_ONCE);
    nub->once_off_budgeted = false;
    mc_bundle_release_all(&b);
    return r;
}

int mc_reply(const mc_message_info *info, const void *data, size_t len)
{
    if (!info || !info->is_request)
        return MC_ERR_INVALID;
    return mc_reply_to(info->nub, info->channel, info->source, info->reply_id, data, len);
}
