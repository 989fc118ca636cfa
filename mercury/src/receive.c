/* The receive path: checking a datagram, stripping footers, routing it to a channel or
 * handling it off-channel, validating and dispatching messages. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int drop(mc_drop_reason why) { return (int)why + 1; }

/* The peer sent a message over max_message_size: counted, logged (at powers of two), and
 * the channel closed. */
static void reasm_too_large(mc_channel *ch)
{
    mc_nub *nub = ch->nub;
    mc_nub_count_drop(nub, MC_DROP_MESSAGE_TOO_LARGE, &ch->addr);
    uint64_t n = nub->stats.drops[MC_DROP_MESSAGE_TOO_LARGE];
    if ((n & (n - 1)) == 0) {
        char a[MC_ADDRESS_STRLEN];
        MC_WARNING("channel %s: peer sent a message over max_message_size (%u bytes); "
                   "the channel is closed (%llu such messages)",
                   mc_address_format(&ch->addr, a, sizeof a), nub->cfg.max_message_size,
                   (unsigned long long)n);
    }
    mc_channel_clear_receive(ch);
    mc_nub_retire_channel(nub, ch, MC_CHANNEL_DEATH_MESSAGE_TOO_LARGE);
}


/* A reliable packet released in order on ch (fragments are assembled). */
static void process_in_order(mc_channel *ch, mc_packet *pkt, const mc_footers *f)
{
    mc_nub *nub = ch->nub;
    ch->packets_received++;
    uint32_t req[MC_MAX_REQUESTS_PER_PACKET];
    int nreq = mc_request_chain(pkt->data, f->body_end, f->first_request, req,
                                MC_MAX_REQUESTS_PER_PACKET);
    if (nreq < 0)
        nreq = 0; /* checked on arrival */
    if (!(f->flags & MC_PF_IS_FRAGMENT)) {
        if (ch->asm_active) {
            mc_nub_count_drop(nub, MC_DROP_FRAGMENT, &ch->addr);
            mc_reasm_stop(ch);
        }
        mc_dispatch_unit(nub, &ch->addr, ch, pkt->data + MC_HEADER_SIZE,
                         f->body_end - MC_HEADER_SIZE, req, (uint32_t)nreq);
        return;
    }
    size_t body = f->body_end - MC_HEADER_SIZE;
    if (f->seq == f->frag_first) {
        if (ch->asm_active)
            mc_nub_count_drop(nub, MC_DROP_FRAGMENT, &ch->addr);
        /* a message whose header is in the first packet and that is too large: now */
        mc_drop_reason first_why;
        if (mc_validate_unit(nub, pkt->data + MC_HEADER_SIZE, body, req, (uint32_t)nreq,
                             &first_why) != MC_OK &&
            first_why == MC_DROP_MESSAGE_TOO_LARGE) {
            reasm_too_large(ch);
            return;
        }
        mc_reasm_start(ch);
        ch->asm_first = f->frag_first;
        ch->asm_last = f->frag_last;
        mc_ostream_reset(&ch->asm_buf);
        ch->asm_req_count = 0;
    } else if (!ch->asm_active || ch->asm_first != f->frag_first ||
               ch->asm_last != f->frag_last) {
        mc_nub_count_drop(nub, MC_DROP_FRAGMENT, &ch->addr);
        mc_reasm_stop(ch);
        return;
    }
    size_t base = ch->asm_buf.size;
    if (base + body > (size_t)nub->cfg.max_message_size + MC_GROUP_SLACK) {
        /* an ordered stream cannot skip it */
        reasm_too_large(ch);
        return;
    }
    mc_write_bytes(&ch->asm_buf, pkt->data + MC_HEADER_SIZE, body);
    mc_reasm_grow(ch, body);
    if (nreq > 0 && ch->asm_req_count + (uint32_t)nreq > ch->asm_req_cap) {
        uint32_t ncap = ch->asm_req_cap ? ch->asm_req_cap : 16;
        while (ncap < ch->asm_req_count + (uint32_t)nreq)
            ncap *= 2;
        uint32_t *n = realloc(ch->asm_req, ncap * sizeof(uint32_t));
        if (!n) {
            mc_reasm_stop(ch);
            return;
        }
        ch->asm_req = n;
        ch->asm_req_cap = ncap;
    }
    for (int i = 0; i < nreq; i++)
        ch->asm_req[ch->asm_req_count++] = (uint32_t)(base + req[i]);
    if (!mc_ostream_ok(&ch->asm_buf)) {
        mc_nub_count_drop(nub, MC_DROP_FRAGMENT, &ch->addr);
        mc_reasm_stop(ch);
        mc_ostream_free(&ch->asm_buf);
        return;
    }
    if (f->seq != ch->asm_last)
        return;
    mc_reasm_stop(ch);
    mc_drop_reason why;
    if (mc_validate_unit(nub, ch->asm_buf.data, ch->asm_buf.size, ch->asm_req,
                         ch->asm_req_count, &why) != MC_OK) {
        if (why == MC_DROP_MESSAGE_TOO_LARGE) {
            reasm_too_large(ch);
            return;
        }
        mc_nub_count_drop(nub, why, &ch->addr);
    } else {
        /* take the buffer: a handler may send on this channel or reset it */
        mc_ostream buf = ch->asm_buf;
        uint32_t *reqs = ch->asm_req;
        uint32_t nr = ch->asm_req_count;
        mc_ostream_init(&ch->asm_buf);
        ch->asm_req = NULL;
        ch->asm_req_cap = 0;
        ch->asm_req_count = 0;
        mc_dispatch_unit(nub, &ch->addr, ch, buf.data, buf.size, reqs, nr);
        mc_ostream_free(&buf);
        free(reqs);
        return;
    }
    if (ch->asm_buf.capacity > 1u << 20)
        mc_ostream_free(&ch->asm_buf);
}

bool mc_channel_receive_reliable(mc_channel *ch, mc_packet *pkt, const mc_footers *f)
{
    mc_nub *nub = ch->nub;
    uint32_t s = f->seq;
    int32_t d = mc_seq_diff(s, ch->in_seq_at);
    if (d < 0) {
        ch->duplicates++;
        mc_nub_count_drop(nub, MC_DROP_DUPLICATE, &ch->addr);
        mc_channel_note_ack(ch, s);
        return false;
    }
    if ((uint32_t)d >= ch->window) {
        ch->out_of_window++;
        mc_nub_count_drop(nub, MC_DROP_OUT_OF_WINDOW, &ch->addr);
        return false;
    }
    uint32_t mask = ch->cap - 1;
    if (d > 0) {
        if (ch->recv_ring[s & mask]) {
            ch->duplicates++;
            mc_nub_count_drop(nub, MC_DROP_DUPLICATE, &ch->addr);
            mc_channel_note_ack(ch, s);
            return false;
        }
        bool fragment = f->flags & MC_PF_IS_FRAGMENT;
        if (fragment && !mc_reasm_admit(ch, pkt->len, false)) {
            /* over the nub's reassembly budget: not acknowledged, resent later */
            mc_nub_count_drop(nub, MC_DROP_REASSEMBLY_BUDGET, &ch->addr);
            return false;
        }
        if (nub->recv_buffered_total >= MC_MAX_RECV_BUFFERED) {
            /* over all channels: peers (or spoofed sources) leaving holes cannot make us
             * hold more; not acknowledged, so a real sender resends it later */
            ch->out_of_window++;
            mc_nub_count_drop(nub, MC_DROP_OUT_OF_WINDOW, &ch->addr);
            return false;
        }
        ch->recv_ring[s & mask] = pkt;
        ch->recv_buffered++;
        ch->out_of_order++;
        nub->recv_buffered_total++;
        if (fragment)
            mc_reasm_buffered(ch, pkt->len);
        mc_channel_note_ack(ch, s);
        return true;
    }
    if ((f->flags & MC_PF_IS_FRAGMENT) &&
        !(ch->asm_active && f->seq == ch->asm_last) && /* completing frees memory */
        !mc_reasm_admit(ch, (size_t)(f->body_end - MC_HEADER_SIZE), true)) {
        mc_nub_count_drop(nub, MC_DROP_REASSEMBLY_BUDGET, &ch->addr);
        return false;
    }
    uint32_t epoch = ch->epoch;
    ch->in_seq_at = mc_seq_add(ch->in_seq_at, 1);
    ch->need_ack = true;
    mc_nub_want_ack(nub, ch);
    process_in_order(ch, pkt, f);
    while (ch->epoch == epoch && !ch->dead) {
        mc_packet *q = ch->recv_ring[ch->in_seq_at & mask];
        if (!q)
            break;
        ch->recv_ring[ch->in_seq_at & mask] = NULL;
        ch->recv_buffered--;
        nub->recv_buffered_total--;
        if (mc_packet_is_fragment(q))
            mc_reasm_unbuffered(ch, q->len);
        ch->in_seq_at = mc_seq_add(ch->in_seq_at, 1);
        mc_footers fq;
        if (mc_parse_footers(nub, q, &fq) == 0)
            process_in_order(ch, q, &fq);
        mc_packet_release(nub, q);
        mask = ch->cap - 1; /* a handler may have grown the window */
    }
    return false;
}

/* Create the channel a peer opens with a CREATE_CHANNEL packet, within max_channels
 * channels opened by peers: a flood of packets from spoofed sources (or ids) must not
 * allocate without bound. */
static mc_channel *accept_channel(mc_nub *nub, const mc_address *src, const mc_footers *f,
                                  int *why)
{
    bool indexed = f->flags & MC_PF_INDEXED;
    if (!mc_acks_none(f)) {
        /* It acknowledges packets a new channel never sent (its first sequence number is
         * random and unknown to anyone yet): it belongs to a channel with an earlier
         * incarnation of this nub, or to a spoofer guessing. Accepting it would leave a
         * channel behind that can take none of the peer's packets yet keeps the peer's side
         * alive with keepalives; dropped, the peer's channel goes silent and its owner
         * reconnects. */
        *why = drop(MC_DROP_BAD_ACKS);
        return NULL;
    }
    if (mc_address_equal(src, &nub->addr) || src->port == 0) {
        /* spoofed: a channel to ourselves (or to nowhere) would only talk to itself */
        *why = drop(MC_DROP_NO_CHANNEL);
        return NULL;
    }
    if (nub->accepted_channels >= nub->cfg.max_channels) {
        *why = drop(MC_DROP_CHANNEL_LIMIT);
        uint64_t refused = nub->stats.drops[MC_DROP_CHANNEL_LIMIT];
        if ((refused & (refused + 1)) == 0) { /* 1st, 2nd, 4th, 8th... refusal */
            char a[MC_ADDRESS_STRLEN];
            MC_WARNING("nub: refused a channel from %s: %u channels opened by peers "
                       "(max_channels) reached",
                       mc_address_format(src, a, sizeof a), nub->cfg.max_channels);
        }
        return NULL;
    }
    mc_channel *ch = mc_channel_create(nub, src, nub->cfg.accept_traits, indexed,
                                       indexed ? f->chan_id : 0);
    if (!ch) {
        *why = drop(MC_DROP_NO_CHANNEL);
        return NULL;
    }
    if (indexed)
        ch->version = f->chan_version;
    else
        ch->peer_nonce = f->nonce;
    if (!mc_nub_add_channel(nub, ch)) {
        mc_channel_destroy(ch);
        *why = drop(MC_DROP_NO_CHANNEL);
        return NULL;
    }
    ch->accepted = true;
    nub->accepted_channels++;
    if (nub->created_fn)
        nub->created_fn(nub->created_ctx, ch);
    return ch;
}

/* What a packet does to the channel it names, applied only once it has validated. */
typedef enum {
    ROUTE_PLAIN = 0,   /* the channel as it is */
    ROUTE_NEW_VERSION, /* an indexed channel's newer version: reset to it */
    ROUTE_RESTART,     /* the peer restarted: replace the channel */
} route_action;

/* The channel a packet belongs to, without changing anything: *action says what accepting
 * the packet would do to it. A channel is created only for a packet that opens one (its
 * acks were checked by accept_channel). */
static mc_channel *find_channel(mc_nub *nub, const mc_address *src, const mc_footers *f,
                                int *why, route_action *action)
{
    bool create = (f->flags & MC_PF_CREATE_CHANNEL) && nub->cfg.accept_channels;
    mc_channel *ch;
    *action = ROUTE_PLAIN;
    if (f->flags & MC_PF_INDEXED) {
        ch = mc_map_get(&nub->by_index, f->chan_id, 0);
        if (!ch) {
            if (!create) {
                *why = drop(MC_DROP_NO_CHANNEL);
                return NULL;
            }
            return accept_channel(nub, src, f, why);
        }
        int32_t dv = (int32_t)(f->chan_version - ch->version);
        if (dv < 0) {
            *why = drop(MC_DROP_STALE_VERSION);
            return NULL;
        }
        if (!mc_address_equal(src, &ch->addr) && !(dv > 0 && nub->cfg.authenticate)) {
            /* An indexed channel follows its peer to a new address only with a new version,
             * and only where every packet is authenticated (a member of the cluster sends
             * it): anything else from another address is a forgery or a stray. */
            *why = drop(MC_DROP_NOT_PEER);
            return NULL;
        }
        if (dv > 0)
            *action = ROUTE_NEW_VERSION;
        return ch;
    }
    ch = mc_map_get(&nub->by_addr, mc_address_key(src), 0);
    if (ch && (f->flags & MC_PF_CREATE_CHANNEL)) {
        /* A CREATE_CHANNEL with a nonce other than the one we know means the peer restarted.
         * With no nonce known yet it is the peer's side of a simultaneous open, unless the
         * peer had been sending reliable packets without one (it had accepted our channel)
         * or its cumulative ack forgets what it acknowledged before: then it restarted. */
        /* (A peer that had acknowledged our packets and now sends no cumulative ack, or one
         * behind what it acknowledged, does not know our sequence space any more.) */
        bool restarted = false;
        if (ch->peer_nonce)
            restarted = ch->peer_nonce != f->nonce;
        else
            restarted = ch->plain_reliable_received > 0 ||
                        (ch->peer_acked && (!(f->flags & MC_PF_HAS_CUMULATIVE_ACK) ||
                                            mc_seq_diff(f->cum_ack, ch->oldest_unacked) < 0));
        if (restarted)
            *action = ROUTE_RESTART;
    }
    if (ch)
        return ch;
    if (!create) {
        *why = drop(MC_DROP_NO_CHANNEL);
        return NULL;
    }
    return accept_channel(nub, src, f, why);
}

/* The packet validated: apply what it does to its channel. Returns the channel that takes
 * it (a restart replaces ch), or NULL with *why set. */
static mc_channel *apply_route(mc_nub *nub, mc_channel *ch, const mc_address *src,
                               const mc_footers *f, route_action action, int *why)
{
    if (action == ROUTE_NEW_VERSION) {
        mc_channel_reset_state(ch, f->chan_version);
    } else if (action == ROUTE_RESTART) {
        /* the peer restarted and opened a new channel from the same address */
        char a[MC_ADDRESS_STRLEN];
        MC_INFO("channel %s: peer opened a new channel (restarted); replacing the old one",
                mc_address_format(src, a, sizeof a));
        /* reported before anything from the new incarnation is dispatched */
        mc_nub_kill_channel(nub, ch, MC_CHANNEL_DEATH_PEER_RESTARTED);
        /* the dead handler may already have opened a fresh channel to the peer: that one
         * (still without a peer nonce) is the new incarnation's partner */
        ch = mc_map_get(&nub->by_addr, mc_address_key(src), 0);
        if (ch && !ch->peer_nonce && ch->plain_reliable_received == 0)
            ch->peer_nonce = f->nonce;
        if (!ch) {
            if (!nub->cfg.accept_channels) {
                *why = drop(MC_DROP_NO_CHANNEL);
                return NULL;
            }
            return accept_channel(nub, src, f, why);
        }
        return ch;
    } else if (!ch->indexed && (f->flags & MC_PF_CREATE_CHANNEL)) {
        ch->peer_nonce = f->nonce; /* the peer's side of a simultaneous open */
    }
    if (ch->indexed && action == ROUTE_NEW_VERSION)
        ch->addr = *src; /* an entity channel follows its peer (checked by find_channel) */
    return ch;
}

bool mc_receive_packet(mc_nub *nub, const mc_address *src, mc_packet *pkt, int depth,
                       int *status)
{
    *status = MC_ERR_DROPPED;
    if (pkt->len > MC_PACKET_MAX_SIZE) {
        mc_nub_count_drop(nub, MC_DROP_TOO_LONG, src);
        return false;
    }
    mc_footers f;
    int r = mc_parse_footers(nub, pkt, &f);
    if (r) {
        mc_nub_count_drop(nub, (mc_drop_reason)(r - 1), src);
        return false;
    }
    if (depth > 0 && (f.flags & MC_PF_HAS_PIGGYBACKS)) {
        mc_nub_count_drop(nub, MC_DROP_BAD_FLAGS, src);
        return false;
    }
    uint32_t req[MC_MAX_REQUESTS_PER_PACKET];
    int nreq = mc_request_chain(pkt->data, f.body_end, f.first_request, req,
                                MC_MAX_REQUESTS_PER_PACKET);
    if (nreq < 0) {
        mc_nub_count_drop(nub, MC_DROP_BAD_MESSAGE, src);
        return false;
    }
    bool frag = f.flags & MC_PF_IS_FRAGMENT;
    if (!frag) {
        mc_drop_reason why;
        if (mc_validate_unit(nub, pkt->data + MC_HEADER_SIZE, f.body_end - MC_HEADER_SIZE, req,
                             (uint32_t)nreq, &why) != MC_OK) {
            mc_nub_count_drop(nub, why, src);
            return false;
        }
    }
    /* piggybacked packets (older resends) first */
    for (uint32_t i = 0; i < f.piggy_count; i++) {
        mc_packet *np = mc_packet_alloc(nub);
        if (!np)
            break;
        memcpy(np->data, f.piggy[i], f.piggy_len[i]);
        np->len = f.piggy_len[i];
        int st;
        if (!mc_receive_packet(nub, src, np, depth + 1, &st))
            mc_packet_release(nub, np);
    }
    *status = MC_OK;
    mc_time_us now = mc_clock_now_us();
    if (f.flags & MC_PF_ON_CHANNEL) {
        int why = 0;
        route_action action = ROUTE_PLAIN;
        mc_channel *ch = find_channel(nub, src, &f, &why, &action);
        if (!ch) {
            mc_nub_count_drop(nub, (mc_drop_reason)(why - 1), src);
            *status = MC_ERR_DROPPED;
            return false;
        }
        /* Acks are checked against what the channel will be once the packet is taken: a
         * new version or a new incarnation starts a new random sequence space, of which the
         * peer can have acknowledged nothing. Nothing changes (no reset, no new address, no
         * replaced channel) before they pass. */
        bool fresh = action != ROUTE_PLAIN;
        if (fresh ? !mc_acks_none(&f) : !mc_channel_acks_valid(ch, &f)) {
            mc_nub_count_drop(nub, MC_DROP_BAD_ACKS, src);
            *status = MC_ERR_DROPPED;
            if (fresh)
                return false; /* not this channel's traffic: no run against it */
            /* A peer that keeps acknowledging packets we never sent talks to an earlier
             * incarnation of this channel (one side restarted while the other resent what
             * it had written before): nothing it sends can be taken, and our keepalives
             * would keep its side alive for ever. End it so both sides start afresh. */
            if (++ch->bad_ack_run >= MC_BAD_ACK_RUN_LIMIT) {
                char a[MC_ADDRESS_STRLEN];
                MC_WARNING("channel %s: %u packets in a row acknowledge what was never sent; "
                           "the peer's side belongs to another incarnation: closing",
                           mc_address_format(src, a, sizeof a), ch->bad_ack_run);
                mc_nub_kill_channel(nub, ch, MC_CHANNEL_DEATH_PEER_RESTARTED);
            }
            return false;
        }
        ch = apply_route(nub, ch, src, &f, action, &why);
        if (!ch) {
            mc_nub_count_drop(nub, (mc_drop_reason)(why - 1), src);
            *status = MC_ERR_DROPPED;
            return false;
        }
        ch->bad_ack_run = 0;
        ch->last_received = now;
        if (ch->accepted && !ch->peer_acked) {
            if (ch->resend_credit < MC_UNPROVEN_RESEND_CREDIT)
                ch->resend_credit++;
            if (depth == 0)
                ch->unproven_in += pkt->len; /* what it may get back before it is proven */
        }
        mc_channel_apply_acks(ch, &f, now);
        if (f.flags & MC_PF_IS_RELIABLE) {
            if (!ch->peer_first_known) {
                /* the peer's sequence space starts at a random number its packets carry
                 * until we acknowledge one; without it this packet cannot be placed (not
                 * acknowledged: the sender resends it) */
                if (!(f.flags & MC_PF_HAS_FIRST_SEQ)) {
                    ch->out_of_window++;
                    mc_nub_count_drop(nub, MC_DROP_OUT_OF_WINDOW, src);
                    *status = MC_ERR_DROPPED;
                    return false;
                }
                ch->in_seq_at = f.first_seq;
                ch->peer_first_known = true;
            }
            if (!(f.flags & MC_PF_CREATE_CHANNEL))
                ch->plain_reliable_received++;
            return mc_channel_receive_reliable(ch, pkt, &f);
        }
        ch->packets_received++;
        mc_dispatch_unit(nub, src, ch, pkt->data + MC_HEADER_SIZE, f.body_end - MC_HEADER_SIZE,
                         req, (uint32_t)nreq);
        return false;
    }
    /* off-channel: an unproven source earns credit for replies (proof.c) */
    if (depth == 0)
        mc_proof_note_received(nub, src, pkt->len, now);
    for (uint32_t i = 0; i < f.ack_count; i++)
        mc_offchannel_ack_received(nub, src, mc_load_u32(f.acks + 4 * i));
    bool reliable = f.flags & MC_PF_IS_RELIABLE;
    if (reliable && mc_offchannel_seen(nub, src, f.seq)) {
        mc_offchannel_send_ack(nub, src, f.seq); /* our earlier ack was lost */
        mc_nub_count_drop(nub, MC_DROP_DUPLICATE, src);
        *status = MC_ERR_DROPPED;
        return false;
    }
    bool kept = false;
    if (frag) {
        int fr = mc_offchannel_fragment(nub, src, pkt, &f); /* pkt may be freed now */
        if (fr < 0) {
            *status = MC_ERR_DROPPED; /* not acknowledged: the sender tries again */
            return false;
        }
        kept = fr > 0;
    }
    if (reliable) {
        mc_offchannel_remember(nub, src, f.seq, now);
        mc_offchannel_send_ack(nub, src, f.seq);
    }
    if (!frag)
        mc_dispatch_unit(nub, src, NULL, pkt->data + MC_HEADER_SIZE,
                         f.body_end - MC_HEADER_SIZE, req, (uint32_t)nreq);
    return kept;
}
