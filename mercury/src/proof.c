/* Address proofs: an off-channel reply goes only to an address that has shown it receives
 * what this nub sends, so a request with a spoofed source cannot make the nub reflect (and
 * amplify, with once-off resends) its answer at a victim.
 *
 * An address is proven by a channel to it whose peer has acknowledged one of its reliable
 * packets, or by a cookie round trip: the nub sends a probe (an empty reliable once-off
 * packet with an unpredictable sequence number, 6 bytes: smaller than any request) and the
 * address acknowledges it, which any mercury nub does by itself. A proven address is
 * remembered for MC_PROOF_KEEP_US (at most MC_MAX_PROVEN addresses).
 *
 * Before that, an address has a byte credit: what it sent off-channel minus what replies
 * (and their resends) sent back, so a nub never sends an unproven address more than it
 * received from it. A reply that fits the credit leaves at once; one that does not waits
 * here (bounded) while a probe goes out, at most MC_PROBE_TRIES times; when the probe is
 * never acknowledged the waiting replies are dropped (the requester times out). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct mc_parked_reply {
    struct mc_parked_reply *next;
    mc_address dest;
    uint32_t reply_id;
    size_t len;
    uint8_t data[];
};

typedef struct {
    mc_address addr;
    mc_time_us expires;
} proof_entry;

/* Bytes an unproven address sent us off-channel and bytes replies sent it back. */
typedef struct {
    uint64_t key;
    uint64_t in, out;
    mc_time_us expires;
} credit_entry;

bool mc_proof_proven(mc_nub *nub, const mc_address *a, mc_time_us now)
{
    mc_channel *ch = mc_map_get(&nub->by_addr, mc_address_key(a), 0);
    if (ch && ch->peer_acked && !ch->dead)
        return true;
    proof_entry *e = mc_map_get(&nub->proven, mc_address_key(a), 0);
    if (!e)
        return false;
    if (now < e->expires)
        return true;
    mc_map_remove(&nub->proven, mc_address_key(a), 0);
    free(e);
    return false;
}

static void remember(mc_nub *nub, const mc_address *a, mc_time_us now)
{
    uint64_t key = mc_address_key(a);
    proof_entry *e = mc_map_get(&nub->proven, key, 0);
    if (!e) {
        if (nub->proven.count >= MC_MAX_PROVEN)
            return; /* still answered now; proven again next time */
        e = malloc(sizeof *e);
        if (!e)
            return;
        if (!mc_map_put(&nub->proven, key, 0, e)) {
            free(e);
            return;
        }
    }
    e->addr = *a;
    e->expires = now + MC_PROOF_KEEP_US;
}

void mc_proof_note_received(mc_nub *nub, const mc_address *src, size_t bytes, mc_time_us now)
{
    if (mc_proof_proven(nub, src, now))
        return;
    uint64_t key = mc_address_key(src);
    credit_entry *e = mc_map_get(&nub->credit, key, 0);
    if (!e) {
        if (nub->credit.count >= MC_MAX_CREDIT)
            return; /* its replies wait for a proof instead */
        e = calloc(1, sizeof *e);
        if (!e)
            return;
        e->key = key;
        if (!mc_map_put(&nub->credit, key, 0, e)) {
            free(e);
            return;
        }
    }
    e->in += bytes;
    e->expires = now + MC_CREDIT_KEEP_US;
}

static bool probing(const mc_nub *nub, const mc_address *dest);

bool mc_proof_spend(mc_nub *nub, const mc_address *dest, size_t bytes, mc_time_us now)
{
    if (mc_proof_proven(nub, dest, now))
        return true;
    if (probing(nub, dest))
        return false; /* replies already wait for the proof: in line behind them */
    credit_entry *e = mc_map_get(&nub->credit, mc_address_key(dest), 0);
    if (!e || now >= e->expires || e->out + bytes > e->in)
        return false;
    e->out += bytes;
    return true;
}

void mc_proof_expire(mc_nub *nub, mc_time_us now)
{
    if (!nub->credit.count)
        return;
    /* collected first: removing moves entries within the map */
    credit_entry **old = malloc(nub->credit.count * sizeof *old);
    if (!old)
        return;
    size_t n = 0, pos = 0;
    credit_entry *e;
    while ((e = mc_map_next(&nub->credit, &pos)))
        if (now >= e->expires)
            old[n++] = e;
    for (size_t i = 0; i < n; i++) {
        mc_map_remove(&nub->credit, old[i]->key, 0);
        free(old[i]);
    }
    free(old);
}

static bool probing(const mc_nub *nub, const mc_address *dest)
{
    for (const mc_parked_reply *p = nub->parked; p; p = p->next)
        if (mc_address_equal(&p->dest, dest))
            return true;
    return false;
}

int mc_proof_park_reply(mc_nub *nub, const mc_address *dest, uint32_t reply_id,
                        const void *data, size_t len)
{
    if (nub->parked_count >= MC_MAX_PARKED_REPLIES ||
        nub->parked_bytes + len > MC_MAX_PARKED_BYTES) {
        nub->stats.replies_unproven_dropped++;
        return MC_ERR_OVERFLOW;
    }
    mc_parked_reply *p = malloc(sizeof *p + (len ? len : 1));
    if (!p)
        return MC_ERR_NO_MEMORY;
    bool first = !probing(nub, dest);
    if (first && mc_offchannel_send_probe(nub, dest) != MC_OK) {
        free(p);
        nub->stats.replies_unproven_dropped++;
        return MC_ERR_OVERFLOW;
    }
    p->dest = *dest;
    p->reply_id = reply_id;
    p->len = len;
    if (len)
        memcpy(p->data, data, len);
    /* appended: replies to one address leave in the order they were written */
    mc_parked_reply **pp = &nub->parked;
    while (*pp)
        pp = &(*pp)->next;
    p->next = NULL;
    *pp = p;
    nub->parked_count++;
    nub->parked_bytes += len;
    nub->stats.replies_parked++;
    return MC_OK;
}

/* Take the replies waiting for dest off the list (in order). */
static mc_parked_reply *take(mc_nub *nub, const mc_address *dest)
{
    mc_parked_reply *out = NULL, **tail = &out;
    for (mc_parked_reply **pp = &nub->parked; *pp;) {
        mc_parked_reply *p = *pp;
        if (mc_address_equal(&p->dest, dest)) {
            *pp = p->next;
            p->next = NULL;
            *tail = p;
            tail = &p->next;
            nub->parked_count--;
            nub->parked_bytes -= p->len;
        } else {
            pp = &p->next;
        }
    }
    return out;
}

void mc_proof_probe_acked(mc_nub *nub, const mc_address *src)
{
    mc_time_us now = mc_clock_now_us();
    remember(nub, src, now);
    nub->stats.addresses_proven++;
    mc_parked_reply *list = take(nub, src);
    while (list) {
        mc_parked_reply *p = list;
        list = p->next;
        int rc = MC_ERR_NO_MEMORY;
        if (mc_proof_proven(nub, &p->dest, now))
            rc = mc_reply_to(nub, NULL, &p->dest, p->reply_id, p->data, p->len);
        if (rc != MC_OK) {
            char a[MC_ADDRESS_STRLEN];
            MC_WARNING("nub: cannot send a reply to %s once proven: %s",
                       mc_address_format(&p->dest, a, sizeof a), mc_status_name(rc));
        }
        free(p);
    }
}

void mc_proof_probe_failed(mc_nub *nub, const mc_address *dest)
{
    mc_parked_reply *list = take(nub, dest);
    uint64_t n = 0;
    while (list) {
        mc_parked_reply *p = list;
        list = p->next;
        free(p);
        n++;
    }
    if (!n)
        return;
    uint64_t before = nub->stats.replies_unproven_dropped;
    uint64_t after = before + n;
    nub->stats.replies_unproven_dropped = after;
    /* when the count passes a power of two: spoofed requests must not flood the log */
    if (before == 0 || __builtin_clzll(after) != __builtin_clzll(before)) {
        char a[MC_ADDRESS_STRLEN];
        MC_WARNING("nub: %llu replies to %s dropped: the address never acknowledged a probe "
                   "(a spoofed source, or it went away)",
                   (unsigned long long)n, mc_address_format(dest, a, sizeof a));
    }
}

void mc_proof_free_all(mc_nub *nub)
{
    while (nub->parked) {
        mc_parked_reply *p = nub->parked;
        nub->parked = p->next;
        free(p);
    }
    nub->parked_count = 0;
    nub->parked_bytes = 0;
    size_t pos = 0;
    proof_entry *e;
    while ((e = mc_map_next(&nub->proven, &pos)))
        free(e);
    mc_map_free(&nub->proven);
    pos = 0;
    credit_entry *c;
    while ((c = mc_map_next(&nub->credit, &pos)))
        free(c);
    mc_map_free(&nub->credit);
}
