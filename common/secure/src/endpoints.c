/* External endpoints after the handshake (secure/endpoints.h): a small chained hash table of
 * heap endpoints by address. */
#include "secure/endpoints.h"

#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
    mc_secure_endpoint ep;
    struct node *next;
} node;

struct mc_secure_endpoints {
    mc_secure_endpoints_config cfg;
    node **buckets;
    size_t nbuckets, count;
};

static size_t bucket(const mc_secure_endpoints *eps, mc_secure_peer p)
{
    uint64_t k = ((uint64_t)p.ip << 16 | p.port) * 0x9e3779b97f4a7c15ull;
    return (size_t)(k >> 32) & (eps->nbuckets - 1);
}

mc_secure_endpoints *mc_secure_endpoints_new(const mc_secure_endpoints_config *cfg)
{
    if (!cfg || cfg->max_clients < 1 || cfg->idle_timeout_ms < 1 ||
        !(cfg->max_packets_per_s > 0) || !isfinite(cfg->max_packets_per_s) ||
        !(cfg->max_bytes_per_s >= MC_SECURE_LARGEST_DATA) || !isfinite(cfg->max_bytes_per_s))
        return NULL;
    mc_secure_endpoints *eps = calloc(1, sizeof *eps);
    if (!eps)
        return NULL;
    eps->cfg = *cfg;
    eps->nbuckets = 64;
    while (eps->nbuckets < cfg->max_clients && eps->nbuckets < (1u << 20))
        eps->nbuckets *= 2;
    eps->buckets = calloc(eps->nbuckets, sizeof *eps->buckets);
    if (!eps->buckets) {
        free(eps);
        return NULL;
    }
    return eps;
}

static void free_node(node *n)
{
    mc_secure_session_clear(&n->ep.session);
    sodium_memzero(n, sizeof *n);
    free(n);
}

void mc_secure_endpoints_free(mc_secure_endpoints *eps)
{
    if (!eps)
        return;
    for (size_t i = 0; i < eps->nbuckets; i++)
        for (node *n = eps->buckets[i]; n;) {
            node *next = n->next;
            free_node(n);
            n = next;
        }
    free(eps->buckets);
    free(eps);
}

static node **slot_of(mc_secure_endpoints *eps, mc_secure_peer p)
{
    node **s = &eps->buckets[bucket(eps, p)];
    while (*s && ((*s)->ep.peer.ip != p.ip || (*s)->ep.peer.port != p.port))
        s = &(*s)->next;
    return s;
}

mc_secure_endpoint *mc_secure_endpoints_find(mc_secure_endpoints *eps, mc_secure_peer peer)
{
    node *n = *slot_of(eps, peer);
    return n ? &n->ep : NULL;
}

bool mc_secure_endpoints_repeat(mc_secure_endpoints *eps, mc_secure_peer peer,
                                const uint8_t *pkt, size_t len, mc_secure_endpoint **out)
{
    node *n = *slot_of(eps, peer);
    /* the client nonce sits at bytes 2..9 of a CONNECT */
    if (!n || !pkt || len != MC_SECURE_HELLO_SIZE || pkt[0] != MC_SECURE_CONNECT ||
        sodium_memcmp(pkt + 2, n->ep.client_nonce, 8) != 0)
        return false;
    *out = &n->ep;
    return true;
}

int mc_secure_endpoints_add(mc_secure_endpoints *eps, mc_secure_peer peer,
                            const mc_secure_accepted *acc, uint64_t now_ms,
                            void (*replaced)(void *ctx, mc_secure_endpoint *old), void *ctx,
                            mc_secure_endpoint **out)
{
    node **s = slot_of(eps, peer);
    if (*s) {
        if (sodium_memcmp((*s)->ep.client_nonce, acc->client_nonce, 8) == 0) {
            *out = &(*s)->ep;
            return MC_SECURE_EP_REPEATED;
        }
        node *old = *s;
        *s = old->next;
        eps->count--;
        if (replaced)
            replaced(ctx, &old->ep);
        free_node(old);
        s = slot_of(eps, peer);
    }
    if (eps->count >= eps->cfg.max_clients)
        return MC_SECURE_EP_FULL;
    node *n = calloc(1, sizeof *n);
    if (!n)
        return MC_SECURE_NO_MEMORY;
    n->ep.peer = peer;
    memcpy(n->ep.client_nonce, acc->client_nonce, 8);
    n->ep.session_id = acc->session_id;
    mc_secure_session_init(&n->ep.session, &acc->keys, true);
    memcpy(n->ep.accept, acc->reply, sizeof n->ep.accept);
    n->ep.created_ms = n->ep.last_heard_ms = n->ep.tokens_ms = now_ms;
    n->ep.packet_tokens = eps->cfg.max_packets_per_s;
    n->ep.byte_tokens = eps->cfg.max_bytes_per_s;
    *s = n;
    eps->count++;
    *out = &n->ep;
    return MC_SECURE_EP_ADDED;
}

static void refill(const mc_secure_endpoints_config *cfg, mc_secure_endpoint *ep,
                   uint64_t now_ms)
{
    if (now_ms <= ep->tokens_ms)
        return;
    double dt = (double)(now_ms - ep->tokens_ms) / 1000.0;
    ep->packet_tokens = fmin(cfg->max_packets_per_s, ep->packet_tokens + dt * cfg->max_packets_per_s);
    ep->byte_tokens = fmin(cfg->max_bytes_per_s, ep->byte_tokens + dt * cfg->max_bytes_per_s);
    ep->tokens_ms = now_ms;
}

int mc_secure_endpoints_open(mc_secure_endpoints *eps, mc_secure_endpoint *ep,
                             const uint8_t *pkt, size_t len, uint64_t now_ms, uint8_t *plain,
                             size_t plaincap, size_t *plainlen)
{
    refill(&eps->cfg, ep, now_ms);
    if (ep->packet_tokens < 1.0 || ep->byte_tokens < (double)len) {
        ep->rate_limited++;
        return MC_SECURE_EP_RATE_LIMITED;
    }
    int rc = mc_secure_open(&ep->session, pkt, len, plain, plaincap, plainlen);
    if (rc == MC_SECURE_OK) {
        /* only the client's own packets spend its allowance: packets forged in its name
         * (they fail authentication) cannot use it up */
        ep->packet_tokens -= 1.0;
        ep->byte_tokens -= (double)len;
        ep->last_heard_ms = now_ms;
    }
    return rc;
}

void mc_secure_endpoints_remove(mc_secure_endpoints *eps, mc_secure_endpoint *ep)
{
    node **s = slot_of(eps, ep->peer);
    if (!*s || &(*s)->ep != ep)
        return;
    node *n = *s;
    *s = n->next;
    eps->count--;
    free_node(n);
}

size_t mc_secure_endpoints_expire(mc_secure_endpoints *eps, uint64_t now_ms,
                                  void (*gone)(void *ctx, mc_secure_endpoint *ep), void *ctx)
{
    size_t dropped = 0;
    for (size_t i = 0; i < eps->nbuckets; i++) {
        node **s = &eps->buckets[i];
        while (*s) {
            node *n = *s;
            if (now_ms >= n->ep.last_heard_ms + eps->cfg.idle_timeout_ms) {
                *s = n->next;
                eps->count--;
                if (gone)
                    gone(ctx, &n->ep);
                free_node(n);
                dropped++;
            } else {
                s = &n->next;
            }
        }
    }
    return dropped;
}

size_t mc_secure_endpoints_count(const mc_secure_endpoints *eps) { return eps->count; }
