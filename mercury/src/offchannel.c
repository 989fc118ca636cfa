/* Off-channel traffic: unreliable and once-off reliable bundles, their acks and duplicate
 * suppression, and reassembly of off-channel fragment groups (dropped after 10 s). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int mc_nub_send_bundle(mc_nub *nub, const mc_address *dest, mc_bundle *b, mc_send_mode mode)
{
    if (!nub || !dest || !b || b->channel || (mode != MC_SEND_UNRELIABLE &&
                                                mode != MC_SEND_RELIABLE_ONCE))
        return MC_ERR_INVALID;
    if (b->in_msg) {
        mc_bundle_release_all(b);
        return MC_ERR_STATE;
    }
    mc_bundle_close(b);
    for (const mc_packet *q = b->head; q; q = q->next) {
        if (q->group_count > MC_MAX_OFFCHANNEL_FRAGMENT_PACKETS) {
            /* receivers would refuse it (bounded off-channel reassembly) */
            MC_ERROR("nub: off-channel message spanning %u packets refused (at most %u; "
                     "send it on a channel)",
                     q->group_count, MC_MAX_OFFCHANNEL_FRAGMENT_PACKETS);
            mc_bundle_release_all(b);
            return MC_ERR_TOO_LARGE;
        }
    }
    if (mode == MC_SEND_RELIABLE_ONCE &&
        nub->once_off_count + b->npackets > MC_MAX_ONCE_OFFS) {
        uint64_t n = ++nub->stats.once_off_refused;
        if ((n & (n - 1)) == 0) /* 1st, 2nd, 4th, ... */
            MC_WARNING("nub: %u once-off packets already waiting for acks; bundle of %zu "
                       "refused (%llu so far)",
                       nub->once_off_count, b->npackets, (unsigned long long)n);
        mc_bundle_release_all(b);
        return MC_ERR_OVERFLOW;
    }
    mc_packet *chain = mc_bundle_take(b);
    mc_time_us now = mc_clock_now_us();
    int rc = MC_OK;
    while (chain) {
        mc_packet *p = chain;
        chain = p->next;
        p->next = NULL;
        mc_request_note_dest(nub, p, dest);
        mc_finalise_opts o;
        memset(&o, 0, sizeof(o));
        bool need_seq = mode == MC_SEND_RELIABLE_ONCE || p->group_count;
        if (need_seq) {
            o.seq = nub->offchannel_seq;
            nub->offchannel_seq = mc_seq_add(o.seq, 1);
            o.flags |= MC_PF_HAS_SEQ;
        }
        if (mode == MC_SEND_RELIABLE_ONCE)
            o.flags |= MC_PF_IS_RELIABLE;
        if (p->group_count) {
            o.flags |= MC_PF_IS_FRAGMENT;
            o.frag_first = (o.seq - p->group_index) & MC_SEQ_MASK;
            o.frag_last = mc_seq_add(o.frag_first, p->group_count - 1);
        }
        mc_packet_finalise(nub, p, &o);
        mc_nub_queue_datagram(nub, dest, p->data, p->len);
        if (mode == MC_SEND_RELIABLE_ONCE) {
            mc_once_off *r = malloc(sizeof(*r));
            if (!r) {
                rc = MC_ERR_NO_MEMORY;
            } else {
                r->dest = *dest;
                r->seq = o.seq;
                r->tries = 1;
                r->probe = false;
                r->budgeted = nub->once_off_budgeted;
                r->next_send = now + MC_ONCE_OFF_INTERVAL_US;
                r->acked = false;
                r->len = p->len;
                memcpy(r->data, p->data, p->len);
                r->next = nub->once_offs;
                nub->once_offs = r;
                nub->once_off_count++;
                mc_map_put(&nub->once_off_map, mc_address_key(dest), o.seq, r);
            }
        }
        mc_packet_release(nub, p);
    }
    mc_nub_flush(nub);
    return rc;
}

void mc_offchannel_ack_received(mc_nub *nub, const mc_address *src, uint32_t seq)
{
    mc_once_off *r = mc_map_remove(&nub->once_off_map, mc_address_key(src), seq);
    if (r) {
        r->acked = true;
        nub->stats.acks_received++;
        if (r->probe)
            mc_proof_probe_acked(nub, src);
    }
}

int mc_offchannel_send_probe(mc_nub *nub, const mc_address *dest)
{
    if (nub->once_off_count >= MC_MAX_ONCE_OFFS)
        return MC_ERR_OVERFLOW;
    mc_once_off *r = malloc(sizeof(*r));
    if (!r)
        return MC_ERR_NO_MEMORY;
    /* an unpredictable sequence number is the cookie: only a receiver of the probe can
     * acknowledge it (once-off sequence numbers are otherwise consecutive) */
    uint32_t seq;
    do {
        seq = (uint32_t)(mc_rand_next(nub) >> 17) & MC_SEQ_MASK;
    } while (mc_map_get(&nub->once_off_map, mc_address_key(dest), seq));
    mc_packet *p = mc_packet_alloc(nub);
    if (!p) {
        free(r);
        return MC_ERR_NO_MEMORY;
    }
    mc_finalise_opts o;
    memset(&o, 0, sizeof(o));
    o.flags = MC_PF_HAS_SEQ | MC_PF_IS_RELIABLE;
    o.seq = seq;
    mc_packet_finalise(nub, p, &o);
    r->dest = *dest;
    r->seq = seq;
    r->tries = 1;
    r->probe = true;
    r->budgeted = false;
    r->next_send = mc_clock_now_us() + MC_ONCE_OFF_INTERVAL_US;
    r->acked = false;
    r->len = p->len;
    memcpy(r->data, p->data, p->len);
    mc_packet_release(nub, p);
    if (!mc_map_put(&nub->once_off_map, mc_address_key(dest), seq, r)) {
        free(r);
        return MC_ERR_NO_MEMORY;
    }
    r->next = nub->once_offs;
    nub->once_offs = r;
    nub->once_off_count++;
    nub->stats.probes_sent++;
    mc_nub_queue_datagram(nub, dest, r->data, r->len);
    return MC_OK;
}

void mc_offchannel_send_ack(mc_nub *nub, const mc_address *dest, uint32_t seq)
{
    mc_packet *p = mc_packet_alloc(nub);
    if (!p)
        return;
    mc_finalise_opts o;
    memset(&o, 0, sizeof(o));
    o.offchannel_acks = &seq;
    o.offchannel_ack_count = 1;
    mc_packet_finalise(nub, p, &o);
    mc_nub_queue_datagram(nub, dest, p->data, p->len);
    mc_packet_release(nub, p);
    nub->stats.acks_sent++;
}

static void dedup_pop(mc_nub *nub)
{
    mc_dedup_entry *e = &nub->dedup[nub->dedup_head];
    mc_map_remove(&nub->dedup_map, mc_address_key(&e->src), e->seq);
    nub->dedup_head = (nub->dedup_head + 1) % MC_DEDUP_MAX;
    nub->dedup_count--;
}

bool mc_offchannel_seen(mc_nub *nub, const mc_address *src, uint32_t seq)
{
    return mc_map_get(&nub->dedup_map, mc_address_key(src), seq) != NULL;
}

void mc_offchannel_remember(mc_nub *nub, const mc_address *src, uint32_t seq, mc_time_us now)
{
    uint64_t key = mc_address_key(src);
    if (mc_map_get(&nub->dedup_map, key, seq))
        return;
    if (!nub->dedup) {
        nub->dedup = calloc(MC_DEDUP_MAX, sizeof(*nub->dedup));
        if (!nub->dedup)
            return;
    }
    if (nub->dedup_count == MC_DEDUP_MAX)
        dedup_pop(nub);
    size_t at = (nub->dedup_head + nub->dedup_count) % MC_DEDUP_MAX;
    mc_dedup_entry *e = &nub->dedup[at];
    e->src = *src;
    e->seq = seq;
    e->expires = now + MC_DEDUP_KEEP_US;
    if (mc_map_put(&nub->dedup_map, key, seq, e))
        nub->dedup_count++;
}

static void free_group(mc_nub *nub, mc_frag_group *g)
{
    nub->frag_packets -= g->have;
    for (uint32_t i = 0; i < g->count; i++)
        mc_packet_release(nub, g->slots[i]);
    free(g->slots);
    free(g);
}

static void unlink_group(mc_nub *nub, mc_frag_group *g)
{
    mc_map_remove(&nub->frag_map, mc_address_key(&g->src), g->first);
    for (mc_frag_group **pp = &nub->frags; *pp; pp = &(*pp)->next) {
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    }
}

/* Free the group (other than keep) that has gone longest without a new packet, if that is
 * at least MC_OFFCHANNEL_FRAGMENT_STALL_US; false when there is none. */
static bool evict_stalled(mc_nub *nub, const mc_frag_group *keep, mc_time_us now)
{
    mc_frag_group *victim = NULL;
    for (mc_frag_group *g = nub->frags; g; g = g->next)
        if (g != keep && now - g->progressed >= MC_OFFCHANNEL_FRAGMENT_STALL_US &&
            (!victim || g->progressed < victim->progressed))
            victim = g;
    if (!victim)
        return false;
    unlink_group(nub, victim);
    mc_nub_count_drop(nub, MC_DROP_FRAGMENT, &victim->src);
    free_group(nub, victim);
    return true;
}

static void deliver_group(mc_nub *nub, mc_frag_group *g)
{
    mc_ostream buf;
    mc_ostream_init(&buf);
    uint32_t *req = NULL;
    uint32_t nreq = 0, reqcap = 0;
    bool ok = true;
    for (uint32_t i = 0; i < g->count && ok; i++) {
        mc_packet *p = g->slots[i];
        mc_footers f;
        if (mc_parse_footers(nub, p, &f) != 0) {
            ok = false;
            break;
        }
        uint32_t local[256];
        int n = mc_request_chain(p->data, f.body_end, f.first_request, local, 256);
        if (n < 0) {
            ok = false;
            break;
        }
        if (nreq + (uint32_t)n > reqcap) {
            uint32_t nc = reqcap ? reqcap : 16;
            while (nc < nreq + (uint32_t)n)
                nc *= 2;
            uint32_t *nr = realloc(req, nc * sizeof(uint32_t));
            if (!nr) {
                ok = false;
                break;
            }
            req = nr;
            reqcap = nc;
        }
        for (int k = 0; k < n; k++)
            req[nreq++] = (uint32_t)(buf.size + local[k]);
        mc_write_bytes(&buf, p->data + MC_HEADER_SIZE, f.body_end - MC_HEADER_SIZE);
    }
    mc_drop_reason why = MC_DROP_FRAGMENT;
    if (ok && mc_ostream_ok(&buf) &&
        mc_validate_unit(nub, buf.data, buf.size, req, nreq, &why) == MC_OK)
        mc_dispatch_unit(nub, &g->src, NULL, buf.data, buf.size, req, nreq);
    else
        mc_nub_count_drop(nub, why, &g->src);
    mc_ostream_free(&buf);
    free(req);
}

int mc_offchannel_fragment(mc_nub *nub, const mc_address *src, mc_packet *pkt,
                           const mc_footers *f)
{
    uint64_t key = mc_address_key(src);
    mc_frag_group *g = mc_map_get(&nub->frag_map, key, f->frag_first);
    uint32_t count = (uint32_t)mc_seq_diff(f->frag_last, f->frag_first) + 1u;
    if (g && g->count != count) {
        mc_nub_count_drop(nub, MC_DROP_FRAGMENT, src);
        return -1;
    }
    uint32_t idx = (uint32_t)mc_seq_diff(f->seq, f->frag_first);
    if (g && g->slots[idx]) {
        mc_nub_count_drop(nub, MC_DROP_DUPLICATE, src);
        return 0;
    }
    /* bounded memory whatever strangers send: at most MC_MAX_OFFCHANNEL_GROUPS groups and
     * MC_MAX_OFFCHANNEL_FRAGMENT_PACKETS packets held over all of them. When full, a group
     * that has not grown for MC_OFFCHANNEL_FRAGMENT_STALL_US makes room (stalest first), so
     * a few abandoned groups cannot starve everyone else until they expire. */
    if (!g && count > MC_MAX_OFFCHANNEL_FRAGMENT_PACKETS) {
        mc_nub_count_drop(nub, MC_DROP_FRAGMENT, src);
        return -1;
    }
    mc_time_us now = mc_clock_now_us();
    while ((!g && nub->frag_map.count >= MC_MAX_OFFCHANNEL_GROUPS) ||
           nub->frag_packets >= MC_MAX_OFFCHANNEL_FRAGMENT_PACKETS) {
        if (!evict_stalled(nub, g, now)) {
            mc_nub_count_drop(nub, MC_DROP_FRAGMENT, src);
            return -1;
        }
    }
    if (!g) {
        g = calloc(1, sizeof(*g));
        if (!g)
            return -1;
        g->slots = calloc(count, sizeof(*g->slots));
        if (!g->slots) {
            free(g);
            return -1;
        }
        g->src = *src;
        g->first = f->frag_first;
        g->count = count;
        g->started = now;
        if (!mc_map_put(&nub->frag_map, key, g->first, g)) {
            free(g->slots);
            free(g);
            return -1;
        }
        g->next = nub->frags;
        nub->frags = g;
    }
    g->slots[idx] = pkt;
    g->have++;
    g->progressed = now;
    nub->frag_packets++;
    if (g->have == g->count) {
        unlink_group(nub, g);
        deliver_group(nub, g);
        free_group(nub, g);
    }
    return 1;
}

void mc_offchannel_tick(mc_nub *nub, mc_time_us now)
{
    /* once-off resends */
    for (mc_once_off **pp = &nub->once_offs; *pp;) {
        mc_once_off *r = *pp;
        if (r->acked) {
            *pp = r->next;
            free(r);
            nub->once_off_count--;
            continue;
        }
        if (now >= r->next_send) {
            if (r->probe && r->tries >= MC_PROBE_TRIES) {
                mc_map_remove(&nub->once_off_map, mc_address_key(&r->dest), r->seq);
                *pp = r->next;
                mc_address dest = r->dest;
                free(r);
                nub->once_off_count--;
                mc_proof_probe_failed(nub, &dest);
                continue;
            }
            if (r->tries >= MC_ONCE_OFF_MAX_TRIES) {
                char a[MC_ADDRESS_STRLEN];
                MC_WARNING("once-off packet %u to %s not acknowledged after %u sends; giving up",
                           r->seq, mc_address_format(&r->dest, a, sizeof a), r->tries);
                mc_map_remove(&nub->once_off_map, mc_address_key(&r->dest), r->seq);
                *pp = r->next;
                free(r);
                nub->once_off_count--;
                continue;
            }
            /* a reply to an unproven address is resent only on what it sent us since */
            bool may = !r->budgeted || mc_proof_spend(nub, &r->dest, r->len, now);
            if (may) {
                mc_nub_queue_datagram(nub, &r->dest, r->data, r->len);
                nub->stats.once_off_resends++;
            }
            r->tries++;
            r->next_send = now + MC_ONCE_OFF_INTERVAL_US;
        }
        pp = &r->next;
    }
    /* expired fragment groups */
    for (mc_frag_group *g = nub->frags, *next; g; g = next) {
        next = g->next;
        if (now - g->started >= MC_OFFCHANNEL_FRAGMENT_TIMEOUT_US) {
            unlink_group(nub, g);
            mc_nub_count_drop(nub, MC_DROP_FRAGMENT, &g->src);
            free_group(nub, g);
        }
    }
    /* credits of unproven addresses, once a second */
    if (now - nub->last_credit_expiry >= MC_US_PER_S) {
        nub->last_credit_expiry = now;
        mc_proof_expire(nub, now);
    }
    /* expired duplicate records */
    while (nub->dedup_count && nub->dedup[nub->dedup_head].expires <= now)
        dedup_pop(nub);
}

void mc_offchannel_free_all(mc_nub *nub)
{
    while (nub->once_offs) {
        mc_once_off *r = nub->once_offs;
        nub->once_offs = r->next;
        free(r);
    }
    nub->once_off_count = 0;
    while (nub->frags) {
        mc_frag_group *g = nub->frags;
        nub->frags = g->next;
        free_group(nub, g);
    }
    mc_map_free(&nub->once_off_map);
    mc_map_free(&nub->frag_map);
    mc_map_free(&nub->dedup_map);
    free(nub->dedup);
    nub->dedup = NULL;
}
