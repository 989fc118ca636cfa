/* Packet buffers (a per-nub free list), the checksum, and writing flags and footers. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MC_POOL_KEEP 8192u

mc_packet *mc_packet_alloc(mc_nub *nub)
{
    mc_packet *p = nub->pool;
    if (p) {
        nub->pool = p->next;
        nub->pool_size--;
    } else {
        p = malloc(sizeof(*p));
        if (!p)
            return NULL;
    }
    p->next = NULL;
    p->len = MC_HEADER_SIZE;
    p->flags = 0;
    p->first_request = 0;
    p->last_link = 0;
    p->reliable = 0;
    p->critical = 0;
    p->probe = 0;
    p->group_count = 0;
    p->group_index = 0;
    return p;
}

void mc_packet_release(mc_nub *nub, mc_packet *p)
{
    if (!p)
        return;
    if (nub->pool_size >= MC_POOL_KEEP || nub->freeing) {
        free(p);
        return;
    }
    p->next = nub->pool;
    nub->pool = p;
    nub->pool_size++;
}

void mc_packet_free_list(mc_nub *nub, mc_packet *head)
{
    while (head) {
        mc_packet *n = head->next;
        mc_packet_release(nub, head);
        head = n;
    }
}

/* FNV-1a over the bytes, 32 bits: any single changed byte always changes the result. */
uint32_t mc_checksum(const uint8_t *data, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= data[i];
        h *= 16777619u;
    }
    return h;
}

static void put16(mc_packet *p, uint16_t v)
{
    mc_store_u16(p->data + p->len, v);
    p->len += 2;
}

static void put32(mc_packet *p, uint32_t v)
{
    mc_store_u32(p->data + p->len, v);
    p->len += 4;
}

void mc_packet_finalise(mc_nub *nub, mc_packet *pkt, const mc_finalise_opts *o)
{
    uint16_t flags = o->flags;
    if (pkt->first_request)
        flags |= MC_PF_HAS_REQUESTS;
    mc_channel *ch = o->ack_channel;
    /* a cumulative ack only once the peer's first sequence number is known (before that
     * nothing of the peer's can have been received, and its sequence space is unknown) */
    if (ch && ch->peer_first_known)
        flags |= MC_PF_HAS_CUMULATIVE_ACK;
    if (o->indexed)
        flags |= MC_PF_INDEXED;
    if (nub->cfg.checksums)
        flags |= MC_PF_HAS_CHECKSUM;

    /* room for every footer but the selective acks */
    size_t used = pkt->len + mc_footer_size(flags, flags & MC_PF_HAS_REQUESTS,
                                            flags & MC_PF_HAS_CHECKSUM);
    if (o->piggy_len) {
        flags |= MC_PF_HAS_PIGGYBACKS;
        used += (size_t)o->piggy_len + 3u;
    }
    size_t room = used < nub->max_packet ? nub->max_packet - used : 0;

    uint32_t nacks = 0;
    const uint32_t *oacks = NULL;
    if (o->offchannel_ack_count) {
        nacks = o->offchannel_ack_count;
        oacks = o->offchannel_acks;
    } else if (ch && ch->peer_first_known) {
        /* drop pending acks the cumulative ack already covers */
        uint32_t k = 0;
        for (uint32_t i = 0; i < ch->ack_count; i++)
            if (mc_seq_diff(ch->ack_pending[i], ch->in_seq_at) >= 0)
                ch->ack_pending[k++] = ch->ack_pending[i];
        ch->ack_count = k;
        nacks = ch->ack_count;
    }
    if (nacks > MC_MAX_ACKS)
        nacks = MC_MAX_ACKS;
    if (room < 5)
        nacks = 0;
    else if (nacks > (room - 1) / 4)
        nacks = (uint32_t)((room - 1) / 4);
    if (nacks)
        flags |= MC_PF_HAS_ACKS;

    mc_store_u16(pkt->data, flags);
    if (flags & MC_PF_HAS_REQUESTS)
        put16(pkt, pkt->first_request);
    if (nacks) {
        /* oldest first, so the sender learns of its packets in the order it sent them */
        const uint32_t *src = oacks ? oacks : ch->ack_pending;
        for (uint32_t i = 0; i < nacks; i++)
            put32(pkt, src[i] & MC_SEQ_MASK);
        if (!oacks) {
            memmove(ch->ack_pending, ch->ack_pending + nacks,
                    (ch->ack_count - nacks) * sizeof(uint32_t));
            ch->ack_count -= nacks;
        }
        pkt->data[pkt->len++] = (uint8_t)nacks;
    }
    if (flags & MC_PF_HAS_CUMULATIVE_ACK)
        put32(pkt, ch->in_seq_at);
    if (flags & MC_PF_IS_FRAGMENT) {
        put32(pkt, o->frag_first);
        put32(pkt, o->frag_last);
    }
    if (flags & MC_PF_HAS_SEQ)
        put32(pkt, o->seq);
    if (flags & MC_PF_HAS_FIRST_SEQ)
        put32(pkt, o->first_seq);
    if (flags & MC_PF_CREATE_CHANNEL)
        put32(pkt, o->nonce);
    if (flags & MC_PF_INDEXED) {
        put32(pkt, o->chan_id);
        put32(pkt, o->chan_version);
    }
    if (o->piggy_len) {
        memcpy(pkt->data + pkt->len, o->piggy, o->piggy_len);
        pkt->len += o->piggy_len;
        put16(pkt, o->piggy_len);
        pkt->data[pkt->len++] = 1;
    }
    if (ch && ch->ack_count == 0)
        ch->need_ack = false;
    pkt->flags = flags;
    if (flags & MC_PF_HAS_CHECKSUM) {
        uint32_t c = mc_checksum(pkt->data, pkt->len);
        put32(pkt, c);
    }
}

size_t mc_footer_size(uint16_t flags, bool has_requests, bool checksums)
{
    size_t n = has_requests ? 2u : 0u;
    if (flags & MC_PF_HAS_CUMULATIVE_ACK)
        n += 4;
    if (flags & MC_PF_IS_FRAGMENT)
        n += 8;
    if (flags & MC_PF_HAS_SEQ)
        n += 4;
    if (flags & MC_PF_HAS_FIRST_SEQ)
        n += 4;
    if (flags & MC_PF_CREATE_CHANNEL)
        n += 4;
    if (flags & MC_PF_INDEXED)
        n += 8;
    if (checksums)
        n += 4;
    return n;
}
