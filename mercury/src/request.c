/* Pending requests: reply ids, reply delivery, timeouts (replying is reply.c). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

uint32_t mc_request_register(mc_nub *nub, mc_channel *ch, mc_reply_handler h, void *ctx,
                             mc_time_us timeout)
{
    mc_pending_request *r = malloc(sizeof(*r));
    if (!r)
        return 0;
    uint32_t id;
    do {
        id = ++nub->next_reply_id;
    } while (id == 0 || mc_map_get(&nub->requests, id, 0));
    r->reply_id = id;
    r->handler = h;
    r->ctx = ctx;
    r->channel = ch;
    r->has_dest = false;
    r->deadline = mc_clock_now_us() + (timeout ? timeout : nub->cfg.request_timeout_us);
    if (!mc_map_put(&nub->requests, id, 0, r)) {
        free(r);
        return 0;
    }
    if (nub->requests.count == 1 || r->deadline < nub->next_request_deadline)
        nub->next_request_deadline = r->deadline;
    return id;
}

void mc_request_forget(mc_nub *nub, uint32_t reply_id)
{
    free(mc_map_remove(&nub->requests, reply_id, 0));
}

void mc_request_note_dest(mc_nub *nub, const mc_packet *pkt, const mc_address *dest)
{
    /* the packet's request chain, as written by the bundle (offsets strictly increase) */
    uint32_t prev = 0;
    for (uint32_t off = pkt->first_request; off > prev && off + 7u <= pkt->len;
         off = mc_load_u16(pkt->data + off + 5)) {
        mc_pending_request *r = mc_map_get(&nub->requests, mc_load_u32(pkt->data + off + 1), 0);
        if (r && !r->channel) {
            r->has_dest = true;
            r->dest = *dest;
        }
        prev = off;
    }
}

void mc_request_deliver(mc_nub *nub, uint32_t reply_id, const mc_message_info *info,
                        mc_istream *data)
{
    mc_pending_request *r = mc_map_get(&nub->requests, reply_id, 0);
    /* a request sent on a channel is answered by that peer only (on the channel or
     * off-channel from its address): another peer cannot complete it by guessing the id */
    if (r && r->channel && info->channel != r->channel &&
        !mc_address_equal(info->source, &r->channel->addr))
        r = NULL;
    if (r && r->has_dest && !mc_address_equal(info->source, &r->dest))
        r = NULL;
    if (!r) {
        mc_nub_count_drop(nub, MC_DROP_LATE_REPLY, info->source);
        return;
    }
    mc_map_remove(&nub->requests, reply_id, 0);
    mc_reply_handler h = r->handler;
    void *ctx = r->ctx;
    free(r);
    h(ctx, MC_REPLY_OK, info, data);
}

/* Remove every request matching (all, or those of channel ch, or those past now) and call
 * their handlers with status. Handlers may register new requests meanwhile. */
static void fail_matching(mc_nub *nub, int mode, mc_channel *ch, mc_time_us now,
                          mc_reply_status status)
{
    size_t cap = nub->requests.count;
    if (!cap)
        return;
    mc_pending_request **list = malloc(cap * sizeof(*list));
    if (!list)
        return;
    size_t n = 0, pos = 0;
    mc_time_us next = UINT64_MAX;
    mc_pending_request *r;
    while ((r = mc_map_next(&nub->requests, &pos))) {
        bool match = mode == 0 || (mode == 1 && r->channel == ch) ||
                     (mode == 2 && r->deadline <= now);
        if (match && n < cap)
            list[n++] = r;
        else if (r->deadline < next)
            next = r->deadline;
    }
    for (size_t i = 0; i < n; i++)
        mc_map_remove(&nub->requests, list[i]->reply_id, 0);
    if (mode == 2)
        nub->next_request_deadline = next;
    for (size_t i = 0; i < n; i++) {
        if (status == MC_REPLY_TIMEOUT)
            nub->stats.requests_timed_out++;
        list[i]->handler(list[i]->ctx, status, NULL, NULL);
        free(list[i]);
    }
    free(list);
}

void mc_request_check_timeouts(mc_nub *nub, mc_time_us now)
{
    if (nub->requests.count == 0 || now < nub->next_request_deadline)
        return;
    fail_matching(nub, 2, NULL, now, MC_REPLY_TIMEOUT);
}

void mc_request_fail_channel(mc_nub *nub, mc_channel *ch, mc_reply_status status)
{
    fail_matching(nub, 1, ch, 0, status);
}

void mc_request_cancel_all(mc_nub *nub) { fail_matching(nub, 0, NULL, 0, MC_REPLY_CANCELLED); }

