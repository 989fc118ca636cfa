/* The nub: socket, libevent events, the receive loop, the timer (its channel table:
 * channels.c). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "internal.h"

#define MC_MAX_DATAGRAMS_PER_WAKE 8192

void mc_nub_config_init(mc_nub_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->bind = "127.0.0.1:0";
    cfg->accept_channels = true;
    cfg->accept_traits = MC_CHANNEL_INTERNAL;
    cfg->socket_buffer_bytes = 16u * 1024u * 1024u;
    cfg->tick_us = 5 * MC_US_PER_MS;
    cfg->min_resend_delay_us = 20 * MC_US_PER_MS;
    cfg->request_timeout_us = 5 * MC_US_PER_S;
    cfg->inactivity_timeout_us = 60 * MC_US_PER_S;
    cfg->keepalive_interval_us = 1 * MC_US_PER_S;
    cfg->max_overflow_packets = 262144;
    cfg->max_channels = MC_DEFAULT_MAX_CHANNELS;
    cfg->max_message_size = MC_MAX_MESSAGE_SIZE;
    cfg->max_reassembly_bytes = MC_DEFAULT_MAX_REASSEMBLY_BYTES;
}

void mc_nub_send_pending_acks(mc_nub *nub)
{
    if (nub->progress_list) {
        mc_time_us now = mc_clock_now_us();
        while (nub->progress_list) {
            mc_channel *ch = nub->progress_list;
            nub->progress_list = ch->progress_next;
            ch->in_progress_list = false;
            ch->progress_next = NULL;
            mc_channel_after_acks(ch, now);
        }
    }
    while (nub->ack_list) {
        mc_channel *ch = nub->ack_list;
        nub->ack_list = ch->ack_next;
        ch->in_ack_list = false;
        ch->ack_next = NULL;
        if (ch->need_ack && !ch->dead)
            mc_channel_send_acks(ch);
    }
}

static uint32_t new_nonce(mc_nub *nub)
{
    uint32_t n = (uint32_t)(mc_rand_next(nub) ^ mc_clock_now_us() ^ ((uint64_t)nub->addr.port << 7));
    return n ? n : 1;
}

/* ---- receiving ---- */
/* An authenticating nub checks the tag of every datagram and strips it: false (dropped,
 * counted) when it is missing or wrong. */
static bool authentic(mc_nub *nub, const mc_address *src, mc_packet *pkt)
{
    if (!nub->cfg.authenticate)
        return true;
    size_t n;
    if (!mc_auth_check(&nub->auth, pkt->data, pkt->len, &n)) {
        mc_nub_count_drop(nub, MC_DROP_BAD_AUTH, src);
        return false;
    }
    pkt->len = (uint16_t)n;
    return true;
}

static bool process(mc_nub *nub, const mc_address *src, mc_packet *pkt)
{
    nub->stats.packets_received++;
    nub->stats.bytes_received += pkt->len;
    if (!authentic(nub, src, pkt))
        return false;
    int st;
    return mc_receive_packet(nub, src, pkt, 0, &st);
}

int mc_nub_process_datagram(mc_nub *nub, const mc_address *from, const void *data, size_t len)
{
    if (!nub || !from || (!data && len))
        return MC_ERR_INVALID;
    if (len > MC_PACKET_MAX_SIZE) {
        nub->stats.packets_received++;
        mc_nub_count_drop(nub, MC_DROP_TOO_LONG, from);
        return MC_ERR_DROPPED;
    }
    mc_packet *p = mc_packet_alloc(nub);
    if (!p)
        return MC_ERR_NO_MEMORY;
    if (len)
        memcpy(p->data, data, len);
    p->len = (uint16_t)len;
    nub->stats.packets_received++;
    nub->stats.bytes_received += len;
    int st = MC_ERR_DROPPED;
    if (!authentic(nub, from, p) || !mc_receive_packet(nub, from, p, 0, &st))
        mc_packet_release(nub, p);
    mc_nub_send_pending_acks(nub);
    mc_nub_flush(nub);
    return st == MC_OK ? MC_OK : MC_ERR_DROPPED;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    mc_nub *nub = arg;
    struct mmsghdr msgs[MC_RECV_BATCH];
    struct iovec iov[MC_RECV_BATCH];
    struct sockaddr_in sa[MC_RECV_BATCH];
    int total = 0;
    while (total < MC_MAX_DATAGRAMS_PER_WAKE) {
        for (int i = 0; i < MC_RECV_BATCH; i++) {
            if (!nub->recv_pkts[i]) {
                nub->recv_pkts[i] = mc_packet_alloc(nub);
                if (!nub->recv_pkts[i])
                    return;
            }
            iov[i].iov_base = nub->recv_pkts[i]->data;
            iov[i].iov_len = MC_PACKET_MAX_SIZE;
            memset(&msgs[i], 0, sizeof(msgs[i]));
            msgs[i].msg_hdr.msg_name = &sa[i];
            msgs[i].msg_hdr.msg_namelen = sizeof(sa[i]);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        int n = recvmmsg(nub->fd, msgs, MC_RECV_BATCH, MSG_DONTWAIT, NULL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                MC_WARNING("recvmmsg failed: %s", strerror(errno));
            break;
        }
        if (n == 0)
            break;
        for (int i = 0; i < n; i++) {
            mc_address src;
            mc_address_from_sockaddr(&sa[i], &src);
            mc_packet *p = nub->recv_pkts[i];
            if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
                nub->stats.packets_received++;
                mc_nub_count_drop(nub, MC_DROP_TOO_LONG, &src);
                continue;
            }
            p->next = NULL;
            p->len = (uint16_t)msgs[i].msg_len;
            if (process(nub, &src, p))
                nub->recv_pkts[i] = NULL; /* kept by a receive window or fragment group */
        }
        total += n;
        if (n < MC_RECV_BATCH)
            break;
    }
    mc_nub_send_pending_acks(nub);
    mc_nub_flush(nub);
}

static void on_writable(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    mc_nub_flush(arg);
}

/* ---- the timer ---- */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    mc_nub *nub = arg;
    mc_time_us now = mc_clock_now_us();
    mc_rehearsal_release_due(nub, now);
    for (size_t i = 0; i < nub->nchannels; i++)
        mc_channel_tick(nub->channels[i], now);
    /* deaths (handlers may create or condemn channels: re-scan from the start) */
    for (size_t i = 0; i < nub->nchannels;) {
        mc_channel *ch = nub->channels[i];
        if (ch->dead) {
            mc_nub_kill_channel(nub, ch, ch->death_reason);
            i = 0;
            continue;
        }
        i++;
    }
    mc_request_check_timeouts(nub, now);
    mc_offchannel_tick(nub, now);
    mc_nub_send_pending_acks(nub);
    mc_nub_flush(nub);
}

int mc_nub_new(struct event_base *base, const mc_nub_config *cfg, mc_nub **out)
{
    if (!base || !out)
        return MC_ERR_INVALID;
    *out = NULL;
    mc_nub_config defaults;
    if (!cfg) {
        mc_nub_config_init(&defaults);
        cfg = &defaults;
    }
    if (cfg->iface) {
        char err[256];
        if (mc_interface_validate(cfg->iface, err, sizeof err) != MC_OK) {
            MC_ERROR("nub: bad interface: %s", err);
            return MC_ERR_INVALID;
        }
    }
    mc_address addr;
    const char *bind_text = cfg->bind ? cfg->bind : "127.0.0.1:0";
    if (mc_address_parse(bind_text, &addr) != MC_OK) {
        MC_ERROR("nub: cannot parse bind address '%s' (want ip:port)", bind_text);
        return MC_ERR_ADDRESS;
    }
    mc_nub *nub = calloc(1, sizeof(*nub));
    if (!nub)
        return MC_ERR_NO_MEMORY;
    nub->base = base;
    nub->cfg = *cfg;
    nub->max_packet = MC_PACKET_MAX_SIZE;
    sodium_memzero(nub->cfg.auth_secret, sizeof nub->cfg.auth_secret);
    if (cfg->authenticate) {
        if (mc_auth_init(&nub->auth, cfg->auth_secret, cfg->auth_portable) != 0) {
            MC_ERROR("nub: cannot derive the packet key (libsodium did not start)");
            free(nub);
            return MC_ERR_NO_MEMORY;
        }
        nub->max_packet = MC_PACKET_MAX_SIZE - MC_AUTH_OVERHEAD;
    }
    nub->cfg.bind = nub->bind_text;
    snprintf(nub->bind_text, sizeof nub->bind_text, "%s", bind_text);
    if (!nub->cfg.tick_us)
        nub->cfg.tick_us = 5 * MC_US_PER_MS;
    if (!nub->cfg.request_timeout_us)
        nub->cfg.request_timeout_us = 5 * MC_US_PER_S;
    if (!nub->cfg.inactivity_timeout_us)
        nub->cfg.inactivity_timeout_us = 60 * MC_US_PER_S;
    if (!nub->cfg.keepalive_interval_us)
        nub->cfg.keepalive_interval_us = MC_US_PER_S;
    if (!nub->cfg.max_overflow_packets)
        nub->cfg.max_overflow_packets = 262144;
    if (!nub->cfg.max_channels)
        nub->cfg.max_channels = MC_DEFAULT_MAX_CHANNELS;
    if (!nub->cfg.max_message_size || nub->cfg.max_message_size > MC_MAX_MESSAGE_SIZE)
        nub->cfg.max_message_size = MC_MAX_MESSAGE_SIZE;
    if (nub->cfg.max_message_size < MC_PACKET_MAX_SIZE)
        nub->cfg.max_message_size = MC_PACKET_MAX_SIZE; /* a one-packet message always fits */
    if (!nub->cfg.max_reassembly_bytes)
        nub->cfg.max_reassembly_bytes = MC_DEFAULT_MAX_REASSEMBLY_BYTES;
    if (cfg->iface)
        for (size_t i = 0; i < cfg->iface->count; i++)
            if (cfg->iface->defs[i].handler)
                nub->defs[cfg->iface->defs[i].id] = &cfg->iface->defs[i];
    mc_map_init(&nub->by_addr);
    mc_map_init(&nub->by_index);
    mc_map_init(&nub->requests);
    mc_map_init(&nub->once_off_map);
    mc_map_init(&nub->frag_map);
    mc_map_init(&nub->dedup_map);
    mc_map_init(&nub->proven);
    mc_map_init(&nub->credit);
    nub->reh = cfg->rehearsal;
    nub->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (nub->fd < 0) {
        MC_ERROR("nub: socket: %s", strerror(errno));
        free(nub);
        return MC_ERR_SOCKET;
    }
    int sz = (int)nub->cfg.socket_buffer_bytes;
    if (sz > 0) {
        /* the FORCE variants pass the system maximum when we are allowed to; otherwise the
         * kernel caps the plain request at net.core.[rw]mem_max */
        if (setsockopt(nub->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof sz) != 0)
            setsockopt(nub->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
        if (setsockopt(nub->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof sz) != 0)
            setsockopt(nub->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    }
    struct sockaddr_in sa;
    mc_address_to_sockaddr(&addr, &sa);
    if (bind(nub->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        MC_ERROR("nub: bind %s: %s", bind_text, strerror(errno));
        close(nub->fd);
        free(nub);
        return MC_ERR_SOCKET;
    }
    socklen_t sl = sizeof sa;
    getsockname(nub->fd, (struct sockaddr *)&sa, &sl);
    mc_address_from_sockaddr(&sa, &nub->addr);
    uint64_t seed = cfg->rehearsal_seed;
    if (!seed)
        seed = mc_clock_now_us() ^ ((uint64_t)nub->addr.port << 32) ^ 0x9E3779B97F4A7C15ull;
    nub->rng = seed ? seed : 1;
    for (int i = 0; i < 4; i++)
        mc_rand_next(nub);
    nub->offchannel_seq = (uint32_t)(mc_rand_next(nub) ^ mc_clock_now_us()) & MC_SEQ_MASK;
    nub->next_reply_id = (uint32_t)mc_rand_next(nub);
    nub->read_ev = event_new(base, nub->fd, EV_READ | EV_PERSIST, on_readable, nub);
    nub->timer_ev = event_new(base, -1, EV_PERSIST, on_tick, nub);
    nub->write_ev = event_new(base, nub->fd, EV_WRITE, on_writable, nub);
    if (!nub->read_ev || !nub->timer_ev || !nub->write_ev) {
        if (nub->read_ev)
            event_free(nub->read_ev);
        if (nub->timer_ev)
            event_free(nub->timer_ev);
        if (nub->write_ev)
            event_free(nub->write_ev);
        close(nub->fd);
        free(nub);
        return MC_ERR_NO_MEMORY;
    }
    struct timeval tv = {(time_t)(nub->cfg.tick_us / MC_US_PER_S),
                         (suseconds_t)(nub->cfg.tick_us % MC_US_PER_S)};
    event_add(nub->read_ev, NULL);
    event_add(nub->timer_ev, &tv);
    *out = nub;
    return MC_OK;
}

void mc_nub_free(mc_nub *nub)
{
    if (!nub)
        return;
    mc_nub_flush(nub);
    mc_nub_unregister_watchers(nub);
    /* from here on no channel can be opened: a dead handler that reopens the channel it is
     * told about would otherwise keep the loop below going for ever */
    nub->freeing = true;
    while (nub->nchannels) {
        mc_channel *ch = nub->channels[nub->nchannels - 1];
        mc_nub_kill_channel(nub, ch, MC_CHANNEL_DEATH_NUB_FREED);
    }
    mc_request_cancel_all(nub);
    mc_offchannel_free_all(nub);
    mc_proof_free_all(nub);
    event_free(nub->read_ev);
    event_free(nub->timer_ev);
    event_free(nub->write_ev);
    close(nub->fd);
    for (int i = 0; i < MC_RECV_BATCH; i++)
        free(nub->recv_pkts[i]);
    while (nub->pool) {
        mc_packet *p = nub->pool;
        nub->pool = p->next;
        free(p);
    }
    for (size_t i = 0; i < nub->ndelayed; i++)
        free(nub->delayed[i].dg);
    free(nub->delayed);
    free(nub->sendq);
    free(nub->channels);
    mc_map_free(&nub->by_addr);
    mc_map_free(&nub->by_index);
    mc_map_free(&nub->requests);
    mc_auth_clear(&nub->auth);
    free(nub);
}

const mc_address *mc_nub_address(const mc_nub *nub) { return &nub->addr; }
struct event_base *mc_nub_event_base(const mc_nub *nub) { return nub->base; }
int mc_nub_fd(const mc_nub *nub) { return nub->fd; }
const mc_nub_config *mc_nub_get_config(const mc_nub *nub) { return &nub->cfg; }

void mc_nub_set_channel_dead_handler(mc_nub *nub, mc_channel_dead_handler fn, void *ctx)
{
    nub->dead_fn = fn;
    nub->dead_ctx = ctx;
}

void mc_nub_set_channel_created_handler(mc_nub *nub, mc_channel_created_handler fn, void *ctx)
{
    nub->created_fn = fn;
    nub->created_ctx = ctx;
}

void mc_nub_set_output(mc_nub *nub, mc_nub_output_fn fn, void *ctx)
{
    nub->output_fn = fn;
    nub->output_ctx = ctx;
}

int mc_nub_set_max_packet(mc_nub *nub, size_t bytes)
{
    if (!nub || bytes < MC_PACKET_MIN_LIMIT || bytes > MC_PACKET_MAX_SIZE)
        return MC_ERR_INVALID;
    if (nub->cfg.authenticate && bytes > MC_PACKET_MAX_SIZE - MC_AUTH_OVERHEAD)
        bytes = MC_PACKET_MAX_SIZE - MC_AUTH_OVERHEAD;
    nub->max_packet = (uint16_t)bytes;
    return MC_OK;
}

size_t mc_nub_max_packet(const mc_nub *nub) { return nub ? nub->max_packet : 0; }

void mc_nub_set_rehearsal(mc_nub *nub, const mc_rehearsal *r)
{
    if (nub && r)
        nub->reh = *r;
}

void mc_nub_get_rehearsal(const mc_nub *nub, mc_rehearsal *out) { *out = nub->reh; }
void mc_nub_rehearse_drop_next(mc_nub *nub, uint32_t n) { nub->drop_next = n; }

void mc_nub_get_stats(const mc_nub *nub, mc_nub_stats *out)
{
    *out = nub->stats;
    out->channels = nub->nchannels;
    out->pending_requests = nub->requests.count;
}

mc_channel *mc_nub_find_channel(mc_nub *nub, const mc_address *addr)
{
    if (!nub || !addr)
        return NULL;
    mc_channel *ch = mc_map_get(&nub->by_addr, mc_address_key(addr), 0);
    return ch && !ch->dead && !ch->condemned ? ch : NULL;
}

int mc_nub_close_channel(mc_nub *nub, const mc_address *addr)
{
    mc_channel *ch = mc_nub_find_channel(nub, addr);
    if (!ch)
        return MC_ERR_DEAD;
    mc_nub_retire_channel(nub, ch, MC_CHANNEL_DEATH_CLOSED);
    return MC_OK;
}

/* A channel this nub opens: it announces itself with CREATE_CHANNEL and a fresh nonce. */
static mc_channel *open_channel(mc_nub *nub, const mc_address *addr, mc_channel_traits traits,
                                bool indexed, uint32_t id)
{
    if (nub->freeing)
        return NULL;
    mc_channel *ch = mc_channel_create(nub, addr, traits, indexed, id);
    if (!ch)
        return NULL;
    ch->send_create = true;
    ch->nonce = new_nonce(nub);
    if (!mc_nub_add_channel(nub, ch)) {
        mc_channel_destroy(ch);
        return NULL;
    }
    return ch;
}

mc_channel *mc_nub_channel(mc_nub *nub, const mc_address *addr, mc_channel_traits traits)
{
    if (!nub || !addr || mc_address_equal(addr, &nub->addr))
        return NULL;
    mc_channel *ch = mc_map_get(&nub->by_addr, mc_address_key(addr), 0);
    if (ch && !ch->dead && !ch->condemned)
        return ch;
    if (ch) /* a condemned or dying channel still owns the address: retire it */
        mc_nub_retire_channel(nub, ch, ch->dead ? ch->death_reason : MC_CHANNEL_DEATH_INACTIVITY);
    return open_channel(nub, addr, traits, false, 0);
}

mc_channel *mc_nub_indexed_channel(mc_nub *nub, const mc_address *addr, uint32_t id,
                                   mc_channel_traits traits)
{
    if (!nub || !addr)
        return NULL;
    mc_channel *ch = mc_map_get(&nub->by_index, id, 0);
    if (ch && !ch->dead && !ch->condemned) {
        ch->addr = *addr;
        return ch;
    }
    /* A condemned or dying channel must not be handed out again (it is freed once idle).
     * Its replacement starts the next version, so the peer drops the old one's packets
     * and resets to the new one instead of taking the new one's for stale. */
    uint32_t version = 0;
    if (ch) {
        version = ch->version + 1;
        mc_nub_retire_channel(nub, ch, ch->dead ? ch->death_reason
                                                : MC_CHANNEL_DEATH_INACTIVITY);
    }
    mc_channel *fresh = open_channel(nub, addr, traits, true, id);
    if (fresh)
        fresh->version = version;
    return fresh;
}

mc_channel *mc_nub_find_indexed_channel(mc_nub *nub, uint32_t id)
{
    mc_channel *ch = nub ? mc_map_get(&nub->by_index, id, 0) : NULL;
    return ch && !ch->dead && !ch->condemned ? ch : NULL;
}
