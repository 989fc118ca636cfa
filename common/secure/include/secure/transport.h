/* Mercury over the secure layer: an external endpoint that carries a nub's traffic
 * encrypted. It owns a UDP socket on the process's libevent loop that carries only secure
 * packets (secure/handshake.h, secure/session.h); the nub's datagrams go out through it
 * (mc_nub_set_output: sealed for the peer's session; the nub's packets are limited to
 * 1472 - MC_SECURE_DATA_OVERHEAD, so a sealed one fits 1472) and what it opens goes into the nub
 * (mc_nub_process_datagram, with the peer's real address), so channels, requests and every
 * other Mercury mechanism work unchanged on top.
 *
 * Server mode (a baseapp's external interface): answers HELLO and CONNECT statelessly until a
 * client proves its address (and a HELLO only when it names a session the owner issued,
 * session_known: a sender without a session gets nothing back), takes sessions from the owner's lookup, keeps an endpoint per
 * client with its limits and idle timeout (secure/endpoints.h). Client mode (the client
 * library): one handshake to one server, resent until answered or timed out.
 *
 * Packets that are not for it (malformed, forged, rate-limited, from unknown addresses) are
 * dropped and counted, never parsed further.
 */
#ifndef MC_SECURE_TRANSPORT_H
#define MC_SECURE_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "mercury/nub.h"
#include "secure/endpoints.h"
#include "secure/handshake.h"

struct event_base;

typedef struct mc_secure_transport mc_secure_transport;

typedef struct {
    const char *bind;          /* "a.b.c.d:port" (port 0: any) */
    mc_nub *nub;               /* the nub it carries (its own socket is left idle) */
    void *ctx;                 /* for the callbacks */
    /* server */
    mc_secure_session_lookup lookup;   /* sessions the server issued */
    void *lookup_ctx;
    /* Whether the server issued this session id (live, or used or expired recently: such a
     * client is answered, and refused in the handshake); a HELLO naming any other id gets
     * no answer at all. NULL: every HELLO is answered. Called with lookup_ctx. */
    bool (*session_known)(void *ctx, uint64_t session_id);
    mc_secure_endpoints_config limits;
    /* a client finished its handshake (its address is ep->peer; the session id says who);
     * return 0 to keep it, -1 to drop it at once (e.g. the session was used already) */
    int (*on_connected)(void *ctx, mc_secure_endpoint *ep);
    /* an endpoint went (idle, replaced by a new attempt, or the transport freed) */
    void (*on_gone)(void *ctx, mc_secure_endpoint *ep);
    /* client */
    uint32_t resend_ms;        /* handshake resends (0: 250) */
    uint32_t timeout_ms;       /* handshake limit (0: 10000) */
    /* the handshake ended: MC_SECURE_OK (connected), MC_SECURE_REJECTED (status in
     * reject_status), or MC_SECURE_EXPIRED (no answer within timeout_ms) */
    void (*on_handshake)(void *ctx, int status, uint8_t reject_status);
} mc_secure_transport_config;

typedef struct {
    uint64_t hellos, connects, accepted, rejected, repeated, dropped, data_in, data_out,
        auth_failures, rate_limited, no_endpoint, send_errors;
    uint64_t unknown_session; /* server: HELLOs naming no session it issued (unanswered) */
    uint64_t bytes_out;   /* bytes of sealed DATA packets sent */
    uint64_t largest_out; /* the largest sealed DATA packet sent (at most 1472: the transport
                             limits its nub's packets by the overhead) */
} mc_secure_transport_stats;

/* A server transport. NULL with a reason in err. */
mc_secure_transport *mc_secure_transport_server(struct event_base *base,
                                                const mc_secure_transport_config *cfg,
                                                char *err, size_t errlen);
/* A client transport that starts its handshake to `server` ("a.b.c.d:port") with the
 * session the loginapp gave. NULL with a reason in err. */
mc_secure_transport *mc_secure_transport_client(struct event_base *base,
                                                const mc_secure_transport_config *cfg,
                                                const char *server, uint64_t session_id,
                                                const uint8_t session_key[MC_SECURE_KEY_BYTES],
                                                char *err, size_t errlen);
/* Restores the nub's own socket; on_gone for every endpoint; wipes every key. */
void mc_secure_transport_free(mc_secure_transport *t);

/* The transport's socket address (what clients connect to; what a client's peer sees). */
const mc_address *mc_secure_transport_address(const mc_secure_transport *t);
/* The transport's UDP socket (a client library hands it to its host to poll for reading). */
int mc_secure_transport_fd(const mc_secure_transport *t);
/* Client: whether the handshake is done. */
bool mc_secure_transport_connected(const mc_secure_transport *t);
/* Server: forget a client (logged off or kicked): its packets are dropped from now on. */
void mc_secure_transport_drop(mc_secure_transport *t, const mc_address *peer);
void mc_secure_transport_get_stats(const mc_secure_transport *t, mc_secure_transport_stats *out);

#endif
