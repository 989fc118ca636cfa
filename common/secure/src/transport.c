/* Mercury over the secure layer (secure/transport.h). */
#include "secure/transport.h"
#include "common/clock.h"
#include "internal.h"

#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_BYTES 2048u

struct mc_secure_transport {
    mc_secure_transport_config cfg;
    bool server;
    int fd;
    mc_address addr;
    struct event *read_ev, *timer_ev;
    /* server */
    mc_secure_secret secret;
    mc_secure_endpoints *eps;
    uint64_t last_rotation_ms;
    /* client */
    mc_address server_addr;
    mc_secure_client hs;
    mc_secure_session session;
    bool connected, finished;
    uint64_t started_ms, last_sent_ms;
    mc_secure_transport_stats st;
};

static uint64_t now_ms(void) { return mc_clock_now_us() / 1000u; }

static mc_secure_peer peer_of(const mc_address *a) { return (mc_secure_peer){a->ip, a->port}; }

static void send_to(mc_secure_transport *t, const mc_address *to, const uint8_t *data,
                    size_t len)
{
    struct sockaddr_in sa;
    mc_address_to_sockaddr(to, &sa);
    if (sendto(t->fd, data, len, MSG_DONTWAIT, (struct sockaddr *)&sa, sizeof sa) !=
        (ssize_t)len)
        t->st.send_errors++;
}

/* ---- the nub's datagrams out --------------------------------------------------------- */

static int output(void *ctx, const mc_address *to, const uint8_t *data, size_t len)
{
    mc_secure_transport *t = ctx;
    mc_secure_session *s = NULL;
    if (t->server) {
        mc_secure_endpoint *ep = mc_secure_endpoints_find(t->eps, peer_of(to));
        s = ep ? &ep->session : NULL;
    } else if (t->connected && mc_address_equal(to, &t->server_addr)) {
        s = &t->session;
    }
    if (!s) {
        t->st.no_endpoint++;
        return -1; /* no channel to that address (gone, or never there) */
    }
    uint8_t pkt[BUF_BYTES];
    size_t n;
    if (mc_secure_seal(s, data, len, pkt, sizeof pkt, &n) != MC_SECURE_OK)
        return -1;
    send_to(t, to, pkt, n);
    t->st.data_out++;
    t->st.bytes_out += n;
    if (n > t->st.largest_out)
        t->st.largest_out = n;
    return 0;
}

/* ---- what arrives -------------------------------------------------------------------- */

/* A HELLO names the session it will connect with (bytes 42..49, big-endian): did the server
 * issue it? */
static bool session_known(mc_secure_transport *t, const uint8_t *p, size_t n)
{
    if (!t->cfg.session_known || n != MC_SECURE_HELLO_SIZE)
        return true; /* nothing to check against; the size is checked next */
    uint64_t id = 0;
    for (int i = 0; i < 8; i++)
        id = id << 8 | p[MC_SECURE_OFF_SESSION + i];
    return t->cfg.session_known(t->cfg.lookup_ctx, id);
}

static void server_packet(mc_secure_transport *t, const mc_address *from, const uint8_t *p,
                          size_t n, uint64_t now)
{
    mc_secure_peer peer = peer_of(from);
    switch (n ? p[0] : 0) {
    case MC_SECURE_HELLO: {
        t->st.hellos++;
        if (!session_known(t, p, n)) {
            /* nothing for a sender without a session this server issued: a stranger gets
             * no answer at all, not even a cookie */
            t->st.unknown_session++;
            return;
        }
        uint8_t out[MC_SECURE_CHALLENGE_SIZE];
        if (mc_secure_server_hello(&t->secret, peer, now, p, n, out) == MC_SECURE_OK)
            send_to(t, from, out, sizeof out);
        else
            t->st.dropped++;
        return;
    }
    case MC_SECURE_CONNECT: {
        t->st.connects++;
        mc_secure_endpoint *ep;
        if (mc_secure_endpoints_repeat(t->eps, peer, p, n, &ep)) {
            t->st.repeated++; /* the client did not hear the ACCEPT: the same one again */
            send_to(t, from, ep->accept, sizeof ep->accept);
            return;
        }
        mc_secure_accepted acc;
        int rc = mc_secure_server_connect(&t->secret, peer, now, p, n, t->cfg.lookup,
                                          t->cfg.lookup_ctx, &acc);
        if (rc != MC_SECURE_OK) {
            if (acc.reply_len) {
                t->st.rejected++;
                send_to(t, from, acc.reply, acc.reply_len);
            } else {
                t->st.dropped++;
            }
            return;
        }
        int added = mc_secure_endpoints_add(t->eps, peer, &acc, now,
                                            t->cfg.on_gone, t->cfg.ctx, &ep);
        sodium_memzero(&acc.keys, sizeof acc.keys);
        if (added == MC_SECURE_EP_FULL || added < 0) {
            t->st.dropped++; /* full: the client will time out and try again later */
            return;
        }
        if (t->cfg.on_connected && t->cfg.on_connected(t->cfg.ctx, ep) != 0) {
            mc_secure_endpoints_remove(t->eps, ep);
            t->st.rejected++;
            return;
        }
        t->st.accepted++;
        send_to(t, from, ep->accept, sizeof ep->accept);
        return;
    }
    case MC_SECURE_DATA: {
        mc_secure_endpoint *ep = mc_secure_endpoints_find(t->eps, peer);
        if (!ep) {
            t->st.no_endpoint++;
            return;
        }
        uint8_t plain[BUF_BYTES];
        size_t m;
        int rc = mc_secure_endpoints_open(t->eps, ep, p, n, now, plain, sizeof plain, &m);
        if (rc == MC_SECURE_OK) {
            t->st.data_in++;
            mc_nub_process_datagram(t->cfg.nub, from, plain, m);
        } else if (rc == MC_SECURE_EP_RATE_LIMITED) {
            t->st.rate_limited++;
        } else {
            t->st.auth_failures++;
        }
        return;
    }
    default:
        t->st.dropped++;
    }
}

static void finish_handshake(mc_secure_transport *t, int status, uint8_t reject)
{
    t->finished = true;
    if (t->cfg.on_handshake)
        t->cfg.on_handshake(t->cfg.ctx, status, reject);
}

static void client_packet(mc_secure_transport *t, const mc_address *from, const uint8_t *p,
                          size_t n, uint64_t now)
{
    if (!mc_address_equal(from, &t->server_addr)) {
        t->st.dropped++;
        return;
    }
    if (n && p[0] == MC_SECURE_DATA) {
        if (!t->connected) {
            t->st.dropped++;
            return;
        }
        uint8_t plain[BUF_BYTES];
        size_t m;
        if (mc_secure_open(&t->session, p, n, plain, sizeof plain, &m) == MC_SECURE_OK) {
            t->st.data_in++;
            mc_nub_process_datagram(t->cfg.nub, from, plain, m);
        } else {
            t->st.auth_failures++;
        }
        return;
    }
    if (t->finished) {
        t->st.dropped++; /* a late CHALLENGE or ACCEPT */
        return;
    }
    mc_secure_keys keys;
    int prev = t->hs.state;
    int rc = mc_secure_client_receive(&t->hs, p, n, &keys);
    if (rc == MC_SECURE_OK && t->hs.state == MC_SECURE_CLIENT_DONE) {
        mc_secure_session_init(&t->session, &keys, false);
        sodium_memzero(&keys, sizeof keys);
        t->connected = true;
        t->st.accepted++;
        finish_handshake(t, MC_SECURE_OK, 0);
    } else if (rc == MC_SECURE_OK && prev == MC_SECURE_CLIENT_HELLO) {
        uint8_t out[MC_SECURE_HELLO_SIZE];
        size_t k = mc_secure_client_packet(&t->hs, out);
        send_to(t, &t->server_addr, out, k); /* the CONNECT at once */
        t->last_sent_ms = now;
    } else if (rc == MC_SECURE_REJECTED) {
        t->st.rejected++;
        finish_handshake(t, MC_SECURE_REJECTED, t->hs.reject_status);
    } else if (rc != MC_SECURE_OK) {
        t->st.dropped++;
    }
}

static void on_read(evutil_socket_t fd, short what, void *ctx)
{
    (void)what;
    mc_secure_transport *t = ctx;
    uint8_t buf[BUF_BYTES];
    for (int i = 0; i < 256; i++) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        ssize_t n = recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&sa, &sl);
        if (n < 0)
            break;
        mc_address from;
        mc_address_from_sockaddr(&sa, &from);
        uint64_t now = now_ms();
        if (t->server)
            server_packet(t, &from, buf, (size_t)n, now);
        else
            client_packet(t, &from, buf, (size_t)n, now);
    }
    mc_nub_flush(t->cfg.nub);
}

static void on_timer(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    mc_secure_transport *t = ctx;
    uint64_t now = now_ms();
    if (t->server) {
        mc_secure_endpoints_expire(t->eps, now, t->cfg.on_gone, t->cfg.ctx);
        if (now - t->last_rotation_ms >= MC_SECURE_COOKIE_MS) {
            mc_secure_secret_rotate(&t->secret);
            t->last_rotation_ms = now;
        }
        return;
    }
    if (t->finished)
        return;
    if (now >= t->started_ms + t->cfg.timeout_ms) {
        finish_handshake(t, MC_SECURE_EXPIRED, 0);
        return;
    }
    if (now >= t->last_sent_ms + t->cfg.resend_ms) {
        uint8_t out[MC_SECURE_HELLO_SIZE];
        size_t k = mc_secure_client_packet(&t->hs, out);
        if (k)
            send_to(t, &t->server_addr, out, k);
        t->last_sent_ms = now;
    }
}

/* ---- making and freeing -------------------------------------------------------------- */

static mc_secure_transport *make(struct event_base *base, const mc_secure_transport_config *cfg,
                                 bool server, char *err, size_t errlen)
{
    if (!base || !cfg || !cfg->nub) {
        snprintf(err, errlen, "a transport needs an event base and a nub");
        return NULL;
    }
    mc_address bind_addr;
    if (mc_address_parse(cfg->bind ? cfg->bind : "127.0.0.1:0", &bind_addr) != 0) {
        snprintf(err, errlen, "bind address '%s' is not a.b.c.d:port", cfg->bind);
        return NULL;
    }
    if (mc_secure_init() != 0) {
        snprintf(err, errlen, "libsodium cannot start");
        return NULL;
    }
    mc_secure_transport *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->cfg = *cfg;
    t->server = server;
    if (!t->cfg.resend_ms)
        t->cfg.resend_ms = 250;
    if (!t->cfg.timeout_ms)
        t->cfg.timeout_ms = 10000;
    t->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa;
    mc_address_to_sockaddr(&bind_addr, &sa);
    socklen_t sl = sizeof sa;
    if (t->fd < 0 || bind(t->fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        getsockname(t->fd, (struct sockaddr *)&sa, &sl) != 0) {
        snprintf(err, errlen, "cannot bind %s: %s", cfg->bind ? cfg->bind : "127.0.0.1:0",
                 strerror(errno));
        if (t->fd >= 0)
            close(t->fd);
        free(t);
        return NULL;
    }
    mc_address_from_sockaddr(&sa, &t->addr);
    t->read_ev = event_new(base, t->fd, EV_READ | EV_PERSIST, on_read, t);
    t->timer_ev = event_new(base, -1, EV_PERSIST, on_timer, t);
    struct timeval tv = {0, server ? 500000 : 50000};
    if (!t->read_ev || !t->timer_ev || event_add(t->read_ev, NULL) != 0 ||
        event_add(t->timer_ev, &tv) != 0) {
        snprintf(err, errlen, "cannot create the transport's events");
        mc_secure_transport_free(t);
        return NULL;
    }
    mc_nub_set_output(cfg->nub, output, t);
    /* a sealed packet is the Mercury packet plus the DATA overhead: keep it within 1472 */
    if (mc_nub_set_max_packet(cfg->nub, MC_PACKET_MAX_SIZE - MC_SECURE_DATA_OVERHEAD) != MC_OK) {
        snprintf(err, errlen, "cannot limit the nub's packets for sealing");
        mc_secure_transport_free(t);
        return NULL;
    }
    return t;
}

mc_secure_transport *mc_secure_transport_server(struct event_base *base,
                                                const mc_secure_transport_config *cfg,
                                                char *err, size_t errlen)
{
    if (!cfg || !cfg->lookup) {
        snprintf(err, errlen, "a server transport needs a session lookup");
        return NULL;
    }
    mc_secure_endpoints *eps = mc_secure_endpoints_new(&cfg->limits);
    if (!eps) {
        snprintf(err, errlen, "bad client limits (max clients, idle timeout, packets and "
                              "bytes a second)");
        return NULL;
    }
    mc_secure_transport *t = make(base, cfg, true, err, errlen);
    if (!t) {
        mc_secure_endpoints_free(eps);
        return NULL;
    }
    t->eps = eps;
    mc_secure_secret_init(&t->secret);
    t->last_rotation_ms = now_ms();
    return t;
}

mc_secure_transport *mc_secure_transport_client(struct event_base *base,
                                                const mc_secure_transport_config *cfg,
                                                const char *server, uint64_t session_id,
                                                const uint8_t session_key[MC_SECURE_KEY_BYTES],
                                                char *err, size_t errlen)
{
    mc_address to;
    if (!server || mc_address_parse(server, &to) != 0 || to.port == 0) {
        snprintf(err, errlen, "server address '%s' is not a.b.c.d:port", server ? server : "");
        return NULL;
    }
    mc_secure_transport *t = make(base, cfg, false, err, errlen);
    if (!t)
        return NULL;
    t->server_addr = to;
    if (mc_secure_client_init(&t->hs, session_id, session_key) != 0) {
        snprintf(err, errlen, "libsodium cannot start");
        mc_secure_transport_free(t);
        return NULL;
    }
    t->started_ms = t->last_sent_ms = now_ms();
    uint8_t out[MC_SECURE_HELLO_SIZE];
    size_t k = mc_secure_client_packet(&t->hs, out);
    send_to(t, &t->server_addr, out, k);
    return t;
}

void mc_secure_transport_free(mc_secure_transport *t)
{
    if (!t)
        return;
    if (t->cfg.nub) {
        mc_nub_set_output(t->cfg.nub, NULL, NULL);
        mc_nub_set_max_packet(t->cfg.nub, MC_PACKET_MAX_SIZE);
    }
    if (t->read_ev)
        event_free(t->read_ev);
    if (t->timer_ev)
        event_free(t->timer_ev);
    if (t->fd >= 0)
        close(t->fd);
    if (t->eps) {
        mc_secure_endpoints_expire(t->eps, UINT64_MAX, t->cfg.on_gone, t->cfg.ctx);
        mc_secure_endpoints_free(t->eps);
    }
    mc_secure_client_clear(&t->hs);
    mc_secure_session_clear(&t->session);
    sodium_memzero(t, sizeof *t);
    free(t);
}

const mc_address *mc_secure_transport_address(const mc_secure_transport *t) { return &t->addr; }
bool mc_secure_transport_connected(const mc_secure_transport *t) { return t->connected; }
int mc_secure_transport_fd(const mc_secure_transport *t) { return t->fd; }

void mc_secure_transport_drop(mc_secure_transport *t, const mc_address *peer)
{
    if (!t->server)
        return;
    mc_secure_endpoint *ep = mc_secure_endpoints_find(t->eps, peer_of(peer));
    if (ep)
        mc_secure_endpoints_remove(t->eps, ep);
}

void mc_secure_transport_get_stats(const mc_secure_transport *t, mc_secure_transport_stats *out)
{
    *out = t->st;
}
