/* Channels: creation, the send window, acks, resends, overflow, keepalive, death. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static uint32_t pow2_at_least(uint32_t n)
{
    uint32_t c = 16;
    while (c < n)
        c <<= 1;
    return c;
}

static uint32_t default_window(mc_channel_traits traits, bool indexed)
{
    if (indexed)
        return MC_WINDOW_INDEXED;
    return traits == MC_CHANNEL_EXTERNAL ? MC_WINDOW_EXTERNAL : MC_WINDOW_INTERNAL;
}

mc_channel *mc_channel_create(mc_nub *nub, const mc_address *addr, mc_channel_traits traits,
                              bool indexed, uint32_t id)
{
    mc_channel *ch = calloc(1, sizeof(*ch));
    if (!ch)
        return NULL;
    /* a random first sequence number: a peer that does not see this channel's packets
     * cannot acknowledge them (an acknowledgement is proof that the peer receives) */
    ch->first_seq = ch->next_seq = ch->oldest_unacked = mc_nub_random_seq(nub);
    ch->nub = nub;
    ch->addr = *addr;
    ch->traits = traits;
    ch->indexed = indexed;
    ch->id = id;
    ch->irregular = true;
    ch->window = default_window(traits, indexed);
    ch->cap = pow2_at_least(ch->window);
    ch->ring = calloc(ch->cap, sizeof(*ch->ring));
    ch->recv_ring = calloc(ch->cap, sizeof(*ch->recv_ring));
    ch->ack_cap = 256;
    ch->ack_pending = malloc(ch->ack_cap * sizeof(uint32_t));
    if (!ch->ring || !ch->recv_ring || !ch->ack_pending) {
        free(ch->ring);
        free(ch->recv_ring);
        free(ch->ack_pending);
        free(ch);
        return NULL;
    }
    ch->tx_head = ch->tx_tail = MC_NIL;
    ch->inactivity_timeout = nub->cfg.inactivity_timeout_us;
    mc_time_us now = mc_clock_now_us();
    ch->last_received = ch->last_sent = ch->created = now;
    ch->last_ack_progress = now;
    ch->overflow_warn_at = 1024;
    mc_ostream_init(&ch->asm_buf);
    mc_bundle_init(&ch->bundle, nub, ch);
    return ch;
}

static void clear_send_state(mc_channel *ch)
{
    mc_nub *nub = ch->nub;
    for (uint32_t i = 0; i < ch->cap; i++) {
        if (ch->ring[i].pkt) {
            mc_packet_release(nub, ch->ring[i].pkt);
            ch->ring[i].pkt = NULL;
        }
    }
    mc_packet_free_list(nub, ch->overflow_head);
    ch->overflow_head = ch->overflow_tail = NULL;
    nub->stats.overflow_packets -= ch->overflow;
    ch->overflow = 0;
    ch->unacked = 0;
    ch->critical_unacked = 0;
    ch->tx_head = ch->tx_tail = MC_NIL;
    ch->highest_acked_tx = 0;
    mc_bundle_release_all(&ch->bundle);
}

/* A new version starts a new, random, sequence space. */
static void new_sequence_space(mc_channel *ch)
{
    ch->first_seq = ch->next_seq = ch->oldest_unacked = mc_nub_random_seq(ch->nub);
    ch->issued = 0;
}

static void clear_recv_state(mc_channel *ch)
{
    for (uint32_t i = 0; i < ch->cap; i++) {
        if (ch->recv_ring[i]) {
            mc_packet *q = ch->recv_ring[i];
            if (mc_packet_is_fragment(q))
                mc_reasm_unbuffered(ch, q->len);
            mc_packet_release(ch->nub, q);
            ch->recv_ring[i] = NULL;
        }
    }
    ch->nub->recv_buffered_total -= ch->recv_buffered;
    ch->recv_buffered = 0;
    ch->in_seq_at = 0;
    ch->peer_first_known = false;
    ch->ack_count = 0;
    mc_reasm_stop(ch);
    mc_ostream_free(&ch->asm_buf);
    ch->asm_req_count = 0;
}

void mc_channel_clear_receive(mc_channel *ch)
{
    clear_recv_state(ch);
    free(ch->asm_req);
    ch->asm_req = NULL;
    ch->asm_req_cap = 0;
}

void mc_channel_reset_state(mc_channel *ch, uint32_t version)
{
    clear_send_state(ch);
    clear_recv_state(ch);
    new_sequence_space(ch);
    ch->version = version;
    ch->epoch++;
    ch->peer_acked = false;
    /* the new version's peer (perhaps at a new address) has proven nothing yet */
    ch->resend_credit = 0;
    ch->unproven_in = ch->unproven_out = 0;
    ch->rtt = 0;
}

void mc_channel_destroy(mc_channel *ch)
{
    clear_send_state(ch);
    clear_recv_state(ch);
    free(ch->ring);
    free(ch->recv_ring);
    free(ch->ack_pending);
    free(ch->asm_req);
    free(ch);
}

/* ---- tx-order list ---- */
static mc_unacked *slot(mc_channel *ch, uint32_t seq) { return &ch->ring[seq & (ch->cap - 1)]; }

static void tx_unlink(mc_channel *ch, uint32_t seq)
{
    mc_unacked *e = slot(ch, seq);
    if (e->prev != MC_NIL)
        slot(ch, e->prev)->next = e->next;
    else
        ch->tx_head = e->next;
    if (e->next != MC_NIL)
        slot(ch, e->next)->prev = e->prev;
    else
        ch->tx_tail = e->prev;
    e->prev = e->next = MC_NIL;
}

static void tx_append(mc_channel *ch, uint32_t seq)
{
    mc_unacked *e = slot(ch, seq);
    e->prev = ch->tx_tail;
    e->next = MC_NIL;
    if (ch->tx_tail != MC_NIL)
        slot(ch, ch->tx_tail)->next = seq;
    else
        ch->tx_head = seq;
    ch->tx_tail = seq;
    e->tx_order = ++ch->tx_counter;
}

static bool window_has_room(const mc_channel *ch)
{
    return (uint32_t)mc_seq_diff(ch->next_seq, ch->oldest_unacked) < ch->window;
}

/* A channel a peer opened whose peer has acknowledged nothing yet: its source address may
 * be spoofed, so what goes to it is bounded by what came from it. */
static bool unproven(const mc_channel *ch) { return ch->accepted && !ch->peer_acked; }

/* The size p will have on the wire when first sent now (without selective acks). */
static size_t first_send_size(const mc_channel *ch, const mc_packet *p)
{
    bool rel = p->reliable || p->critical || p->group_count;
    uint16_t flags = 0;
    if (rel) {
        flags |= MC_PF_HAS_SEQ;
        if (p->group_count)
            flags |= MC_PF_IS_FRAGMENT;
        if (!ch->peer_acked)
            flags |= MC_PF_HAS_FIRST_SEQ;
    }
    if (!ch->peer_acked && ch->send_create)
        flags |= MC_PF_CREATE_CHANNEL;
    if (ch->peer_first_known)
        flags |= MC_PF_HAS_CUMULATIVE_ACK;
    if (ch->indexed)
        flags |= MC_PF_INDEXED;
    return (size_t)p->len + mc_footer_size(flags, p->first_request != 0, ch->nub->cfg.checksums);
}

/* May `bytes` go to the peer now? Always once it is proven; before, only within the bytes
 * it sent us: no reply (or anything else) larger than what the peer sent goes to an
 * address that has not shown it receives. */
static bool credit_allows(const mc_channel *ch, size_t bytes)
{
    return !unproven(ch) || ch->unproven_out + bytes <= ch->unproven_in;
}

static mc_time_us resend_delay(const mc_channel *ch)
{
    if (!ch->rtt) {
        /* no sample yet: twice the nub's latest estimate (another channel's), else a
         * conservative first guess, so a link slower than the minimum resend delay does
         * not get every first packet resent */
        mc_time_us d = ch->nub->rtt_hint ? 2 * ch->nub->rtt_hint : MC_INITIAL_RESEND_DELAY_US;
        return d < ch->nub->cfg.min_resend_delay_us ? ch->nub->cfg.min_resend_delay_us : d;
    }
    mc_time_us d = 2 * ch->rtt;
    if (ch->rtt + 4 * ch->rtt_var > d)
        d = ch->rtt + 4 * ch->rtt_var;
    if (d < ch->nub->cfg.min_resend_delay_us)
        d = ch->nub->cfg.min_resend_delay_us;
    return d;
}

static void base_opts(mc_channel *ch, mc_finalise_opts *o, uint16_t flags)
{
    memset(o, 0, sizeof(*o));
    o->flags = (uint16_t)(flags | MC_PF_ON_CHANNEL);
    if (!ch->peer_acked && ch->send_create) {
        o->flags |= MC_PF_CREATE_CHANNEL;
        o->nonce = ch->nonce;
    }
    o->ack_channel = ch;
    o->indexed = ch->indexed;
    o->chan_id = ch->id;
    o->chan_version = ch->version;
}

/* Bookkeeping of a retransmission of seq (on its own or as a piggyback): it moves to the
 * back of the transmission order and no longer gives RTT samples. */
static void note_resent(mc_channel *ch, uint32_t seq, mc_time_us now)
{
    mc_unacked *e = slot(ch, seq);
    e->resends++;
    e->last_sent = now;
    tx_unlink(ch, seq);
    tx_append(ch, seq);
    ch->packets_resent++;
    ch->nub->stats.resends++;
}

static void resend(mc_channel *ch, uint32_t seq, mc_time_us now)
{
    mc_unacked *e = slot(ch, seq);
    mc_nub_queue_datagram(ch->nub, &ch->addr, e->pkt->data, e->pkt->len);
    if (unproven(ch))
        ch->unproven_out += e->pkt->len;
    note_resent(ch, seq, now);
    ch->last_sent = now;
}

static void transmit_new(mc_channel *ch, mc_packet *p, mc_time_us now)
{
    uint32_t seq = ch->next_seq;
    ch->next_seq = mc_seq_add(seq, 1);
    ch->issued++;
    mc_finalise_opts o;
    uint16_t flags = MC_PF_HAS_SEQ | MC_PF_IS_RELIABLE;
    if (p->group_count)
        flags |= MC_PF_IS_FRAGMENT;
    /* until the peer acknowledges something it may not know where this sequence space
     * starts (the packet at first_seq may be lost): every reliable packet tells it */
    if (!ch->peer_acked)
        flags |= MC_PF_HAS_FIRST_SEQ;
    base_opts(ch, &o, flags);
    o.seq = seq;
    o.first_seq = ch->first_seq;
    if (p->group_count) {
        o.frag_first = (seq - p->group_index) & MC_SEQ_MASK;
        o.frag_last = mc_seq_add(o.frag_first, p->group_count - 1);
    }
    /* external channels: a packet due for resend may ride along as a piggyback */
    uint32_t piggy_seq = MC_NIL;
    if (ch->traits == MC_CHANNEL_EXTERNAL && ch->tx_head != MC_NIL && !unproven(ch)) {
        mc_unacked *h = slot(ch, ch->tx_head);
        bool due = h->tx_order + MC_REORDER_TOLERANCE <= ch->highest_acked_tx || now - h->last_sent >= resend_delay(ch);
        size_t need = mc_footer_size(o.flags | MC_PF_HAS_CUMULATIVE_ACK |
                                         (o.indexed ? MC_PF_INDEXED : 0),
                                     p->first_request != 0, ch->nub->cfg.checksums);
        if (due && !(mc_load_u16(h->pkt->data) & MC_PF_HAS_PIGGYBACKS) &&
            (size_t)p->len + need + h->pkt->len + 3 <= ch->nub->max_packet) {
            piggy_seq = ch->tx_head;
            o.piggy = h->pkt->data;
            o.piggy_len = h->pkt->len;
        }
    }
    mc_packet_finalise(ch->nub, p, &o);
    mc_unacked *e = slot(ch, seq);
    e->pkt = p;
    e->first_sent = e->last_sent = now;
    e->resends = 0;
    tx_append(ch, seq);
    e->first_tx = e->tx_order;
    ch->unacked++;
    if (p->critical)
        ch->critical_unacked++;
    mc_nub_queue_datagram(ch->nub, &ch->addr, p->data, p->len);
    if (unproven(ch))
        ch->unproven_out += p->len;
    ch->packets_sent++;
    ch->last_sent = now;
    if (piggy_seq != MC_NIL) {
        note_resent(ch, piggy_seq, now);
        ch->nub->stats.piggybacks++;
    }
}

static void transmit_unreliable(mc_channel *ch, mc_packet *p, mc_time_us now)
{
    mc_finalise_opts o;
    base_opts(ch, &o, 0);
    bool messages = p->len > MC_HEADER_SIZE; /* not a keepalive */
    mc_packet_finalise(ch->nub, p, &o);
    mc_nub_queue_datagram(ch->nub, &ch->addr, p->data, p->len);
    if (messages && unproven(ch))
        ch->unproven_out += p->len;
    mc_packet_release(ch->nub, p);
    ch->packets_sent++;
    ch->last_sent = now;
}

/* The peer of an unproven channel is owed data larger than its credit: an empty reliable
 * packet (smaller than anything the peer can have sent to open the channel) goes first;
 * its acknowledgement proves the address and releases the rest. */
static void send_proof_probe(mc_channel *ch, mc_time_us now)
{
    if (ch->unacked != 0 || !window_has_room(ch))
        return; /* a packet in flight proves the address when it is acknowledged */
    mc_packet *probe = mc_packet_alloc(ch->nub);
    if (!probe)
        return;
    probe->reliable = 1;
    probe->probe = 1;
    if (!credit_allows(ch, first_send_size(ch, probe))) {
        mc_packet_release(ch->nub, probe);
        return;
    }
    transmit_new(ch, probe, now);
}

static void pump_overflow(mc_channel *ch, mc_time_us now)
{
    while (ch->overflow_head) {
        mc_packet *p = ch->overflow_head;
        bool rel = p->reliable || p->critical || p->group_count;
        if (rel && !window_has_room(ch))
            break;
        if (!credit_allows(ch, first_send_size(ch, p))) {
            send_proof_probe(ch, now);
            break;
        }
        ch->overflow_head = p->next;
        if (!ch->overflow_head)
            ch->overflow_tail = NULL;
        p->next = NULL;
        ch->overflow--;
        ch->nub->stats.overflow_packets--;
        if (rel)
            transmit_new(ch, p, now);
        else
            transmit_unreliable(ch, p, now);
    }
    if (ch->overflow < ch->overflow_warn_at / 4 && ch->overflow_warn_at > 1024)
        ch->overflow_warn_at /= 2;
}

int mc_channel_enqueue(mc_channel *ch, mc_packet *chain)
{
    int rc = MC_OK;
    mc_time_us now = mc_clock_now_us();
    while (chain) {
        mc_packet *p = chain;
        chain = p->next;
        p->next = NULL;
        if (ch->dead) {
            mc_packet_release(ch->nub, p);
            rc = MC_ERR_DEAD;
            continue;
        }
        bool rel = p->reliable || p->critical || p->group_count;
        /* an unproven peer gets nothing beyond its credit: it waits here (in order) */
        bool held = unproven(ch) &&
                    (ch->overflow_head || !credit_allows(ch, first_send_size(ch, p)));
        if (!rel && !held) {
            transmit_unreliable(ch, p, now);
            continue;
        }
        if (!held && !ch->overflow_head && window_has_room(ch)) {
            transmit_new(ch, p, now);
            continue;
        }
        if (ch->overflow >= ch->nub->cfg.max_overflow_packets) {
            char a[MC_ADDRESS_STRLEN];
            MC_ERROR("channel %s: overflow queue full (%u packets); channel dies",
                     mc_address_format(&ch->addr, a, sizeof a), ch->overflow);
            mc_packet_release(ch->nub, p);
            ch->overflow_failed = true;
            ch->dead = true;
            ch->death_reason = MC_CHANNEL_DEATH_OVERFLOW;
            rc = MC_ERR_OVERFLOW;
            continue;
        }
        if (ch->overflow_tail)
            ch->overflow_tail->next = p;
        else
            ch->overflow_head = p;
        ch->overflow_tail = p;
        ch->overflow++;
        ch->nub->stats.overflow_packets++;
        if (ch->overflow >= ch->overflow_warn_at) {
            char a[MC_ADDRESS_STRLEN];
            MC_WARNING("channel %s: %u packets waiting in the overflow queue (window %u full)",
                       mc_address_format(&ch->addr, a, sizeof a), ch->overflow, ch->window);
            ch->overflow_warn_at *= 2;
        }
    }
    if (unproven(ch) && ch->overflow_head)
        pump_overflow(ch, now); /* what fits the credit goes; else a probe asks for a proof */
    return rc;
}

/* With few packets in flight no queue can hide an ack for long: a packet unacknowledged
 * for SRTT + max(SRTT / 8, 4 x RTTVAR) (at least the minimum resend delay) is lost. */
static mc_time_us fast_delay(const mc_channel *ch)
{
    mc_time_us margin = ch->rtt / 8;
    if (4 * ch->rtt_var > margin)
        margin = 4 * ch->rtt_var;
    mc_time_us d = ch->rtt + margin;
    return d < ch->nub->cfg.min_resend_delay_us ? ch->nub->cfg.min_resend_delay_us : d;
}

/* Time from t to now; 0 when t is later (a time read after the caller read `now`: the
 * timer's `now` is taken once for every channel, and a packet may arrive or go meanwhile).
 * Never an unsigned wrap that would make a channel look silent for 584,000 years. */
static mc_time_us since(mc_time_us now, mc_time_us t) { return now > t ? now - t : 0; }

void mc_channel_check_resends(mc_channel *ch, mc_time_us now, bool timer)
{
    (void)timer;
    uint32_t limit = ch->window / 8;
    if (limit == 0)
        limit = 1;
    mc_time_us delay = resend_delay(ch);
    /* The age rule only applies while acknowledgements have stopped making progress: while
     * they flow, the newer-acked rule finds losses without guessing at queueing delay. */
    bool stalled = since(now, ch->last_ack_progress) >= delay;
    /* Interactive traffic (few packets in flight, e.g. a message per tick): a sparse stream
     * has too few later packets for the newer-acked rule and keeps acks flowing, so the
     * stalled age rule would wait for the next packets' acks or 2 x RTT. Here a packet is
     * lost once older than fast_delay; a packet already resent is resent again at that
     * pace while the peer is still heard from (something arrived since the packet's last
     * send, or within a keepalive interval: an idle peer sends a keepalive every second),
     * otherwise it backs off under the age rule (up to 32 x): the end of a stream, whose
     * last packet may be lost several times in a row, must not wait out a back-off of
     * seconds while the peer is plainly there. At most 32 packets are in flight, so this
     * pace cannot flood a path. */
    bool interactive = ch->rtt && ch->unacked <= MC_FAST_RESEND_INFLIGHT;
    mc_time_us fast = interactive ? fast_delay(ch) : 0;
    for (uint32_t n = 0; n < limit && ch->tx_head != MC_NIL; n++) {
        mc_unacked *e = slot(ch, ch->tx_head);
        bool lost = e->tx_order + MC_REORDER_TOLERANCE <= ch->highest_acked_tx;
        uint32_t backoff = e->resends < 5 ? e->resends : 5;
        bool old = stalled && since(now, e->last_sent) >= (delay << backoff);
        bool alive = e->resends == 0 || ch->last_received > e->last_sent ||
                     since(now, ch->last_received) < ch->nub->cfg.keepalive_interval_us + fast;
        bool late = interactive && alive && since(now, e->last_sent) >= fast;
        if (!lost && !old && !late)
            break;
        if (unproven(ch)) {
            /* the peer has not shown it receives what we send (its address may be
             * spoofed): one resend per packet it sends us, never more, and never more bytes
             * than it sent - except a lost probe, which goes again (within the resend
             * credit) so that a real peer is not kept waiting for its next keepalive: each
             * copy is smaller than the packet that opened the channel */
            if (ch->resend_credit == 0 || (!e->pkt->probe && !credit_allows(ch, e->pkt->len)))
                break;
            ch->resend_credit--;
        }
        resend(ch, ch->tx_head, now);
        if (interactive && e->resends == 2 && !unproven(ch)) {
            /* Lost twice in a row (its first send and its first resend): the path is
             * lossy, and each further loss would cost this packet and every later one of
             * the channel another round trip. Its second resend goes twice, so it is late
             * a third time only if both copies are lost. Only that one: when acks are
             * merely late (a starved peer), a packet resent again and again gets one extra
             * copy in all, not one per round. */
            mc_nub_queue_datagram(ch->nub, &ch->addr, e->pkt->data, e->pkt->len);
            ch->packets_resent++;
            ch->nub->stats.resends++;
        }
    }
}

/* ---- acks received ---- */
bool mc_acks_none(const mc_footers *f)
{
    return !(f->flags & MC_PF_HAS_CUMULATIVE_ACK) && f->ack_count == 0;
}

bool mc_channel_acks_valid(const mc_channel *ch, const mc_footers *f)
{
    /* Everything acknowledged lies in [first_seq, next_seq): a cumulative ack in
     * [first_seq, next_seq], a selective one below next_seq. (Once half the sequence space
     * has been used the lower bound is the half-space comparison.) */
    uint32_t span = ch->issued < MC_SEQ_HALF ? (uint32_t)ch->issued : MC_SEQ_HALF - 1u;
    if (f->flags & MC_PF_HAS_CUMULATIVE_ACK) {
        uint32_t back = (ch->next_seq - f->cum_ack) & MC_SEQ_MASK;
        if (back > span)
            return false;
    }
    for (uint32_t i = 0; i < f->ack_count; i++) {
        uint32_t back = (ch->next_seq - mc_load_u32(f->acks + 4 * i)) & MC_SEQ_MASK;
        if (back == 0 || back > span)
            return false;
    }
    return true;
}

static void ack_one(mc_channel *ch, uint32_t seq, mc_time_us now)
{
    mc_unacked *e = slot(ch, seq);
    if (!e->pkt)
        return;
    if (e->resends == 0) {
        mc_time_us sample = now - e->first_sent;
        if (!ch->rtt) {
            ch->rtt = sample ? sample : 1;
            ch->rtt_var = ch->rtt / 2;
        } else {
            mc_time_us dev = sample > ch->rtt ? sample - ch->rtt : ch->rtt - sample;
            ch->rtt_var = (ch->rtt_var * 3 + dev) / 4;
            ch->rtt = (ch->rtt * 7 + sample) / 8;
        }
        ch->nub->rtt_hint = ch->rtt;
    }
    /* An ack of a resent packet may be for its first transmission (delayed, not lost): it
     * proves only that packets sent 3+ transmissions before that one are missing. */
    if (e->first_tx > ch->highest_acked_tx)
        ch->highest_acked_tx = e->first_tx;
    ch->last_ack_progress = now;
    tx_unlink(ch, seq);
    if (e->pkt->critical)
        ch->critical_unacked--;
    mc_packet_release(ch->nub, e->pkt);
    e->pkt = NULL;
    ch->unacked--;
    ch->nub->stats.acks_received++;
    ch->peer_acked = true;
}

void mc_channel_apply_acks(mc_channel *ch, const mc_footers *f, mc_time_us now)
{
    if (!(f->flags & (MC_PF_HAS_CUMULATIVE_ACK | MC_PF_HAS_ACKS)))
        return;
    if (f->flags & MC_PF_HAS_CUMULATIVE_ACK) {
        uint32_t c = f->cum_ack;
        if (mc_seq_diff(c, ch->oldest_unacked) > 0) {
            for (uint32_t s = ch->oldest_unacked; s != c; s = mc_seq_add(s, 1))
                ack_one(ch, s, now);
            ch->oldest_unacked = c;
        }
    }
    for (uint32_t i = 0; i < f->ack_count; i++) {
        uint32_t s = mc_load_u32(f->acks + 4 * i);
        if (mc_seq_diff(s, ch->oldest_unacked) >= 0)
            ack_one(ch, s, now);
    }
    while (ch->oldest_unacked != ch->next_seq && !slot(ch, ch->oldest_unacked)->pkt)
        ch->oldest_unacked = mc_seq_add(ch->oldest_unacked, 1);
    /* resends and the overflow queue are handled once per receive batch, after every ack in
     * the batch has been seen (acks of one flight arrive spread over several packets) */
    mc_nub_want_progress(ch->nub, ch);
}

void mc_channel_after_acks(mc_channel *ch, mc_time_us now)
{
    if (ch->dead)
        return;
    mc_channel_check_resends(ch, now, false);
    pump_overflow(ch, now);
}

/* ---- acks to send ---- */
void mc_channel_note_ack(mc_channel *ch, uint32_t seq)
{
    if (ch->ack_count == ch->ack_cap && ch->ack_cap < 8192) {
        uint32_t *n = realloc(ch->ack_pending, 2 * ch->ack_cap * sizeof(uint32_t));
        if (n) {
            ch->ack_pending = n;
            ch->ack_cap *= 2;
        }
    }
    if (ch->ack_count < ch->ack_cap)
        ch->ack_pending[ch->ack_count++] = seq;
    mc_nub_want_ack(ch->nub, ch);
}

void mc_channel_send_acks(mc_channel *ch)
{
    for (int guard = 0; ch->need_ack && guard < 64; guard++) {
        mc_packet *p = mc_packet_alloc(ch->nub);
        if (!p)
            return;
        mc_finalise_opts o;
        base_opts(ch, &o, 0);
        o.flags &= (uint16_t)~MC_PF_CREATE_CHANNEL;
        mc_packet_finalise(ch->nub, p, &o);
        mc_nub_queue_datagram(ch->nub, &ch->addr, p->data, p->len);
        mc_packet_release(ch->nub, p);
        ch->nub->stats.acks_sent++;
        ch->last_sent = mc_clock_now_us();
    }
    ch->need_ack = false;
}

/* ---- timer work ---- */
void mc_channel_tick(mc_channel *ch, mc_time_us now)
{
    if (ch->dead)
        return;
    if (!ch->bundle.in_msg && ch->bundle.cur && ch->bundle.cur->len > MC_HEADER_SIZE)
        mc_bundle_close(&ch->bundle);
    if (ch->tx_head != MC_NIL)
        mc_channel_check_resends(ch, now, true);
    pump_overflow(ch, now);
    if (since(now, ch->last_received) >= ch->inactivity_timeout) {
        char a[MC_ADDRESS_STRLEN];
        MC_WARNING("channel %s: nothing received for %.1f s; channel is dead",
                   mc_address_format(&ch->addr, a, sizeof a),
                   (double)since(now, ch->last_received) / 1e6);
        ch->dead = true;
        ch->death_reason = MC_CHANNEL_DEATH_INACTIVITY;
        return;
    }
    if (ch->condemned && ch->unacked == 0 && ch->overflow == 0 && !ch->bundle.head) {
        ch->dead = true;
        ch->death_reason = MC_CHANNEL_DEATH_INACTIVITY; /* not reported: condemned */
        return;
    }
    if (since(now, ch->last_sent) >= ch->nub->cfg.keepalive_interval_us) {
        mc_packet *p = mc_packet_alloc(ch->nub);
        if (p)
            transmit_unreliable(ch, p, now);
    }
}

/* ---- public API ---- */
mc_bundle *mc_channel_bundle(mc_channel *ch) { return ch ? &ch->bundle : NULL; }

int mc_channel_send(mc_channel *ch)
{
    if (!ch)
        return MC_ERR_INVALID;
    if (ch->dead)
        return MC_ERR_DEAD;
    int r = mc_bundle_close(&ch->bundle);
    if (!ch->irregular)
        mc_channel_check_resends(ch, mc_clock_now_us(), false);
    if (ch->need_ack)
        mc_channel_send_acks(ch);
    mc_nub_flush(ch->nub);
    return r;
}

int mc_channel_send_message(mc_channel *ch, const mc_message_def *def, const void *data,
                            size_t n)
{
    if (!ch)
        return MC_ERR_INVALID;
    if (ch->dead)
        return MC_ERR_DEAD;
    return mc_bundle_add_message(&ch->bundle, def, MC_RELIABLE_DRIVER, data, n);
}

int mc_channel_request(mc_channel *ch, const mc_message_def *def, const void *data, size_t n,
                       mc_reply_handler handler, void *ctx, mc_time_us timeout_us)
{
    if (!ch)
        return MC_ERR_INVALID;
    if (ch->dead)
        return MC_ERR_DEAD;
    int r = mc_bundle_start_request(&ch->bundle, def, handler, ctx, timeout_us);
    if (r != MC_OK)
        return r;
    mc_bundle_write(&ch->bundle, data, n);
    r = mc_bundle_end_message(&ch->bundle);
    if (r != MC_OK)
        return r;
    return mc_channel_send(ch);
}

void mc_channel_condemn(mc_channel *ch)
{
    if (!ch || ch->condemned)
        return;
    if (ch->bundle.in_msg)
        mc_bundle_end_message(&ch->bundle);
    mc_channel_send(ch);
    ch->condemned = true;
}

int mc_channel_reset(mc_channel *ch)
{
    if (!ch || !ch->indexed)
        return MC_ERR_INVALID;
    mc_channel_reset_state(ch, ch->version + 1);
    return MC_OK;
}

void mc_channel_set_dead_handler(mc_channel *ch, mc_channel_dead_handler fn, void *ctx)
{
    if (!ch)
        return;
    ch->dead_fn = fn;
    ch->dead_ctx = ctx;
}

void mc_channel_set_irregular(mc_channel *ch, bool irregular)
{
    if (ch)
        ch->irregular = irregular;
}

int mc_channel_set_window(mc_channel *ch, uint32_t packets)
{
    if (!ch || packets == 0 || packets > MC_WINDOW_MAX)
        return MC_ERR_INVALID;
    uint32_t ncap = pow2_at_least(packets);
    if (ncap > ch->cap) {
        mc_unacked *nr = calloc(ncap, sizeof(*nr));
        mc_packet **nrr = calloc(ncap, sizeof(*nrr));
        if (!nr || !nrr) {
            free(nr);
            free(nrr);
            return MC_ERR_NO_MEMORY;
        }
        /* re-home unacked entries and buffered packets */
        for (uint32_t s = ch->oldest_unacked; s != ch->next_seq; s = mc_seq_add(s, 1)) {
            mc_unacked *e = slot(ch, s);
            nr[s & (ncap - 1)] = *e;
        }
        for (uint32_t i = 0; i < ch->cap; i++) {
            mc_packet *p = ch->recv_ring[i];
            if (!p)
                continue;
            /* recover its sequence number from the position relative to in_seq_at */
            uint32_t off = (i - (ch->in_seq_at & (ch->cap - 1))) & (ch->cap - 1);
            uint32_t s = mc_seq_add(ch->in_seq_at, off);
            nrr[s & (ncap - 1)] = p;
        }
        free(ch->ring);
        free(ch->recv_ring);
        ch->ring = nr;
        ch->recv_ring = nrr;
        ch->cap = ncap;
    }
    ch->window = packets;
    return MC_OK;
}

void mc_channel_set_inactivity_timeout(mc_channel *ch, mc_time_us timeout_us)
{
    if (ch && timeout_us)
        ch->inactivity_timeout = timeout_us;
}

void mc_channel_set_user_data(mc_channel *ch, void *data)
{
    if (ch)
        ch->user_data = data;
}

void *mc_channel_user_data(const mc_channel *ch) { return ch ? ch->user_data : NULL; }
const mc_address *mc_channel_address(const mc_channel *ch) { return &ch->addr; }
mc_channel_traits mc_channel_get_traits(const mc_channel *ch) { return ch->traits; }
mc_nub *mc_channel_nub(const mc_channel *ch) { return ch->nub; }
bool mc_channel_is_indexed(const mc_channel *ch) { return ch->indexed; }
uint32_t mc_channel_id(const mc_channel *ch) { return ch->id; }
uint32_t mc_channel_version(const mc_channel *ch) { return ch->version; }
uint32_t mc_channel_unacked(const mc_channel *ch) { return ch ? ch->unacked : 0; }
uint32_t mc_channel_overflow(const mc_channel *ch) { return ch ? ch->overflow : 0; }

bool mc_channel_idle(const mc_channel *ch)
{
    return ch && ch->unacked == 0 && ch->overflow == 0 && mc_bundle_packet_count(&ch->bundle) == 0;
}

void mc_channel_get_stats(const mc_channel *ch, mc_channel_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!ch)
        return;
    out->window = ch->window;
    out->unacked = ch->unacked;
    out->overflow = ch->overflow;
    out->bundle_packets = (uint32_t)mc_bundle_packet_count(&ch->bundle);
    out->recv_buffered = ch->recv_buffered;
    out->rtt_us = ch->rtt;
    out->rtt_var_us = ch->rtt_var;
    out->packets_sent = ch->packets_sent;
    out->packets_resent = ch->packets_resent;
    out->packets_received = ch->packets_received;
    out->messages_received = ch->messages_received;
    out->duplicates = ch->duplicates;
    out->out_of_window = ch->out_of_window;
    out->out_of_order = ch->out_of_order;
    out->next_send_seq = ch->next_seq;
    out->first_send_seq = ch->first_seq;
    out->next_recv_seq = ch->in_seq_at;
}
