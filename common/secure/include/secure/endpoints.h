/* The server side of external channels after the handshake: one endpoint per client address
 * that completed a CONNECT, holding its session (secure/session.h), the ACCEPT it was sent
 * (a repeated CONNECT of the same attempt gets the same one: the client did not hear it),
 * when it was last heard from, and its rate limits. Bounded: at most max_clients endpoints,
 * each limited in packets and bytes a second (a bucket holding one second's worth), dropped
 * after idle_timeout_ms of silence. Pure bookkeeping: no sockets; time is the caller's.
 */
#ifndef MC_SECURE_ENDPOINTS_H
#define MC_SECURE_ENDPOINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secure/handshake.h"
#include "secure/session.h"

typedef struct {
    size_t max_clients;        /* >= 1 */
    uint32_t idle_timeout_ms;  /* >= 1 */
    double max_packets_per_s;  /* > 0 */
    double max_bytes_per_s;    /* >= MC_SECURE_LARGEST_DATA (one largest packet) */
} mc_secure_endpoints_config;

typedef struct {
    mc_secure_peer peer;
    uint8_t client_nonce[8];
    uint64_t session_id;
    mc_secure_session session;
    uint8_t accept[MC_SECURE_ACCEPT_SIZE];
    uint64_t created_ms, last_heard_ms;
    double packet_tokens, byte_tokens;
    uint64_t tokens_ms;        /* when the buckets were last filled */
    uint64_t rate_limited;     /* packets refused by the limits */
    void *user;                /* the owner's (the baseapp's proxy) */
} mc_secure_endpoint;

typedef struct mc_secure_endpoints mc_secure_endpoints;

/* NULL on a bad configuration or out of memory. */
mc_secure_endpoints *mc_secure_endpoints_new(const mc_secure_endpoints_config *cfg);
/* Wipes every session. */
void mc_secure_endpoints_free(mc_secure_endpoints *eps);

enum {
    MC_SECURE_EP_ADDED = 0,     /* a new endpoint */
    MC_SECURE_EP_REPEATED = 1,  /* the same attempt again: *out is the existing endpoint;
                                   answer its ACCEPT again, derive nothing new */
    MC_SECURE_EP_FULL = -30,    /* max_clients endpoints already */
};

/* Whether a CONNECT from peer with this client nonce repeats the attempt that made its
 * endpoint (then *out is it): check before mc_secure_server_connect, so a lost ACCEPT is
 * answered again without a second exchange (and without spending the session again). */
bool mc_secure_endpoints_repeat(mc_secure_endpoints *eps, mc_secure_peer peer,
                                const uint8_t *connect_pkt, size_t len,
                                mc_secure_endpoint **out);
/* Record an accepted CONNECT. An endpoint of another attempt at the same address is
 * replaced (the client started again); the old one is handed to `replaced` (may be NULL)
 * before it is freed. */
int mc_secure_endpoints_add(mc_secure_endpoints *eps, mc_secure_peer peer,
                            const mc_secure_accepted *acc, uint64_t now_ms,
                            void (*replaced)(void *ctx, mc_secure_endpoint *old), void *ctx,
                            mc_secure_endpoint **out);
mc_secure_endpoint *mc_secure_endpoints_find(mc_secure_endpoints *eps, mc_secure_peer peer);
/* A DATA packet from ep's address: refused at once when the client's allowance is spent
 * (MC_SECURE_EP_RATE_LIMITED), then mc_secure_open. Only an authenticated packet spends the
 * allowance and counts as hearing from the client (forgeries in its name cannot use it up
 * or keep it alive). */
#define MC_SECURE_EP_RATE_LIMITED (-31)
int mc_secure_endpoints_open(mc_secure_endpoints *eps, mc_secure_endpoint *ep,
                             const uint8_t *pkt, size_t len, uint64_t now_ms, uint8_t *plain,
                             size_t plaincap, size_t *plainlen);
/* Forget an endpoint (logged off, kicked). */
void mc_secure_endpoints_remove(mc_secure_endpoints *eps, mc_secure_endpoint *ep);
/* Drop every endpoint silent for idle_timeout_ms, telling `gone` first; how many. */
size_t mc_secure_endpoints_expire(mc_secure_endpoints *eps, uint64_t now_ms,
                                  void (*gone)(void *ctx, mc_secure_endpoint *ep), void *ctx);
size_t mc_secure_endpoints_count(const mc_secure_endpoints *eps);

#endif
