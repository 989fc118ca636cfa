/* The send queue (batched with sendmmsg, retried on EAGAIN/ENOBUFS) and rehearsal of bad
 * networks (loss, duplication, reordering, latency, corruption) with a per-nub PRNG. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "internal.h"

#define MC_SENDQ_MAX 65536u

uint64_t mc_rand_next(mc_nub *nub)
{
    /* xorshift64* */
    uint64_t x = nub->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    nub->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

uint32_t mc_nub_random_seq(mc_nub *nub)
{
    if (nub->rand_left == 0) {
        size_t want = sizeof nub->rand_pool;
        ssize_t got = getrandom(nub->rand_pool, want, GRND_NONBLOCK);
        if (got < 0 || (size_t)got != want) {
            /* the kernel's pool is not ready (early boot): mix what there is with the
             * clock; first sequence numbers are a hurdle for blind spoofers, not a key */
            for (size_t i = 0; i < sizeof nub->rand_pool / sizeof nub->rand_pool[0]; i++)
                nub->rand_pool[i] ^= (uint32_t)(mc_rand_next(nub) ^ (mc_clock_now_us() << 7));
        }
        nub->rand_left = (uint32_t)(sizeof nub->rand_pool / sizeof nub->rand_pool[0]);
    }
    uint32_t v = nub->rand_pool[--nub->rand_left];
    nub->rand_pool[nub->rand_left] = 0; /* used: not kept around */
    return v & MC_SEQ_MASK;
}

double mc_rand_unit(mc_nub *nub) { return (double)(mc_rand_next(nub) >> 11) / 9007199254740992.0; }

static mc_datagram *sendq_slot(mc_nub *nub)
{
    if (nub->sendq_len == nub->sendq_cap) {
        if (nub->sendq_len >= MC_SEND_BATCH)
            mc_nub_flush(nub);
        if (nub->sendq_len == nub->sendq_cap) {
            if (nub->sendq_cap >= MC_SENDQ_MAX)
                return NULL;
            size_t ncap = nub->sendq_cap ? nub->sendq_cap * 2 : MC_SEND_BATCH;
            mc_datagram *n = realloc(nub->sendq, ncap * sizeof(*n));
            if (!n)
                return NULL;
            nub->sendq = n;
            nub->sendq_cap = ncap;
        }
    }
    return &nub->sendq[nub->sendq_len++];
}

static void push_now(mc_nub *nub, const mc_address *dest, const uint8_t *data, size_t len)
{
    mc_datagram *d = sendq_slot(nub);
    if (!d) {
        nub->stats.send_errors++;
        return;
    }
    d->dest = *dest;
    d->len = (uint16_t)len;
    memcpy(d->data, data, len);
    if (nub->sendq_len >= MC_SEND_BATCH)
        mc_nub_flush(nub);
}

static void heap_push(mc_nub *nub, mc_delayed item)
{
    if (nub->ndelayed == nub->delayed_cap) {
        size_t ncap = nub->delayed_cap ? nub->delayed_cap * 2 : 64;
        mc_delayed *n = realloc(nub->delayed, ncap * sizeof(*n));
        if (!n) {
            free(item.dg);
            return;
        }
        nub->delayed = n;
        nub->delayed_cap = ncap;
    }
    size_t i = nub->ndelayed++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        mc_delayed *p = &nub->delayed[parent];
        if (p->due < item.due || (p->due == item.due && p->order < item.order))
            break;
        nub->delayed[i] = *p;
        i = parent;
    }
    nub->delayed[i] = item;
}

static mc_delayed heap_pop(mc_nub *nub)
{
    mc_delayed top = nub->delayed[0];
    mc_delayed last = nub->delayed[--nub->ndelayed];
    size_t i = 0, n = nub->ndelayed;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && (nub->delayed[c + 1].due < nub->delayed[c].due ||
                          (nub->delayed[c + 1].due == nub->delayed[c].due &&
                           nub->delayed[c + 1].order < nub->delayed[c].order)))
            c++;
        if (last.due < nub->delayed[c].due ||
            (last.due == nub->delayed[c].due && last.order < nub->delayed[c].order))
            break;
        nub->delayed[i] = nub->delayed[c];
        i = c;
    }
    if (n)
        nub->delayed[i] = last;
    return top;
}

void mc_rehearsal_release_due(mc_nub *nub, mc_time_us now)
{
    while (nub->ndelayed && nub->delayed[0].due <= now) {
        mc_delayed d = heap_pop(nub);
        push_now(nub, &d.dg->dest, d.dg->data, d.dg->len);
        free(d.dg);
    }
}

static void schedule(mc_nub *nub, const mc_address *dest, const uint8_t *data, size_t len,
                     mc_time_us delay)
{
    if (delay == 0) {
        push_now(nub, dest, data, len);
        return;
    }
    mc_datagram *dg = malloc(sizeof(*dg));
    if (!dg)
        return;
    dg->dest = *dest;
    dg->len = (uint16_t)len;
    memcpy(dg->data, data, len);
    mc_delayed item = {mc_clock_now_us() + delay, nub->delayed_order++, dg};
    heap_push(nub, item);
}

/* An authenticating nub's datagram goes straight into the send queue with its trailer
 * (no copy in between: at full speed the tag is a good part of the cost of a packet). */
static void push_sealed(mc_nub *nub, const mc_address *dest, const uint8_t *data, size_t len)
{
    mc_datagram *d = sendq_slot(nub);
    if (!d) {
        nub->stats.send_errors++;
        return;
    }
    d->dest = *dest;
    memcpy(d->data, data, len);
    mc_auth_seal(&nub->auth, d->data, len, d->data + len);
    d->len = (uint16_t)(len + MC_AUTH_OVERHEAD);
    if (nub->sendq_len >= MC_SEND_BATCH)
        mc_nub_flush(nub);
}

void mc_nub_queue_datagram(mc_nub *nub, const mc_address *dest, const uint8_t *data,
                           size_t len)
{
    const mc_rehearsal *r = &nub->reh;
    bool plain = r->loss <= 0 && r->duplicate <= 0 && r->reorder <= 0 && r->corrupt <= 0 &&
                 r->latency_ms == 0 && r->jitter_ms == 0;
    uint8_t tagged[MC_PACKET_MAX_SIZE];
    if (nub->cfg.authenticate) {
        /* the nub keeps its packets MC_AUTH_OVERHEAD short of the limit: room for the
         * nonce and the tag */
        if (len > MC_PACKET_MAX_SIZE - MC_AUTH_OVERHEAD) {
            nub->stats.send_errors++;
            return;
        }
        if (plain && !nub->drop_next) {
            push_sealed(nub, dest, data, len);
            return;
        }
        /* rehearsal (loss, corruption, delays) applies to the datagram as sent */
        memcpy(tagged, data, len);
        mc_auth_seal(&nub->auth, tagged, len, tagged + len);
        data = tagged;
        len += MC_AUTH_OVERHEAD;
    }
    if (nub->drop_next) {
        nub->drop_next--;
        nub->stats.rehearsal_dropped++;
        return;
    }
    if (plain) {
        push_now(nub, dest, data, len);
        return;
    }
    if (r->loss > 0 && mc_rand_unit(nub) < r->loss) {
        nub->stats.rehearsal_dropped++;
        return;
    }
    uint8_t buf[MC_PACKET_MAX_SIZE];
    if (r->corrupt > 0 && len > 0 && mc_rand_unit(nub) < r->corrupt) {
        memcpy(buf, data, len);
        int flips = 1 + (int)(mc_rand_next(nub) % 4);
        for (int i = 0; i < flips; i++) {
            size_t at = (size_t)(mc_rand_next(nub) % len);
            buf[at] ^= (uint8_t)(1u + mc_rand_next(nub) % 255u);
        }
        data = buf;
    }
    int copies = 1;
    if (r->duplicate > 0 && mc_rand_unit(nub) < r->duplicate)
        copies = 2;
    for (int c = 0; c < copies; c++) {
        mc_time_us delay = (mc_time_us)r->latency_ms * MC_US_PER_MS;
        if (r->jitter_ms)
            delay += mc_rand_next(nub) % ((mc_time_us)r->jitter_ms * MC_US_PER_MS + 1);
        if (r->reorder > 0 && mc_rand_unit(nub) < r->reorder) {
            uint32_t span = r->reorder_ms ? r->reorder_ms : 20;
            delay += MC_US_PER_MS + mc_rand_next(nub) % ((mc_time_us)span * MC_US_PER_MS);
        }
        schedule(nub, dest, data, len, delay);
    }
}

int mc_nub_flush(mc_nub *nub)
{
    if (!nub)
        return MC_ERR_INVALID;
    size_t done = 0;
    int rc = MC_OK;
    if (nub->output_fn) {
        /* someone else sends (mc_nub_set_output): hand over everything, in order */
        for (; done < nub->sendq_len; done++) {
            const mc_datagram *d = &nub->sendq[done];
            if (nub->output_fn(nub->output_ctx, &d->dest, d->data, d->len) == 0) {
                nub->stats.packets_sent++;
                nub->stats.bytes_sent += d->len;
            } else {
                nub->stats.send_errors++;
            }
        }
        nub->sendq_len = 0;
        return MC_OK;
    }
    while (done < nub->sendq_len) {
        struct mmsghdr msgs[MC_SEND_BATCH];
        struct iovec iov[MC_SEND_BATCH];
        struct sockaddr_in sa[MC_SEND_BATCH];
        size_t n = nub->sendq_len - done;
        if (n > MC_SEND_BATCH)
            n = MC_SEND_BATCH;
        for (size_t i = 0; i < n; i++) {
            mc_datagram *d = &nub->sendq[done + i];
            mc_address_to_sockaddr(&d->dest, &sa[i]);
            iov[i].iov_base = d->data;
            iov[i].iov_len = d->len;
            memset(&msgs[i], 0, sizeof(msgs[i]));
            msgs[i].msg_hdr.msg_name = &sa[i];
            msgs[i].msg_hdr.msg_namelen = sizeof(sa[i]);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        int sent = sendmmsg(nub->fd, msgs, (unsigned)n, MSG_DONTWAIT);
        if (sent < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
                nub->stats.send_retries++;
                rc = MC_ERR_SOCKET;
                /* keep the rest; retry as soon as the socket is writable (or on the timer) */
                if (nub->write_ev && !event_pending(nub->write_ev, EV_WRITE, NULL))
                    event_add(nub->write_ev, NULL);
                break;
            }
            /* a hard error for the first datagram: drop it and go on */
            char a[MC_ADDRESS_STRLEN];
            MC_WARNING("send to %s failed: %s",
                       mc_address_format(&nub->sendq[done].dest, a, sizeof a), strerror(errno));
            nub->stats.send_errors++;
            done++;
            continue;
        }
        for (int i = 0; i < sent; i++) {
            nub->stats.packets_sent++;
            nub->stats.bytes_sent += nub->sendq[done + (size_t)i].len;
        }
        done += (size_t)sent;
    }
    if (done) {
        memmove(nub->sendq, nub->sendq + done, (nub->sendq_len - done) * sizeof(mc_datagram));
        nub->sendq_len -= done;
    }
    return rc;
}
