/* The loginapp's defences against floods and password guessing, kept in bounded memory
 * (the loginapp keys the back-off by source address and account name, and keeps a bucket of
 * failed checks per name as a ceiling):
 *
 * - rate limits: a token bucket per key (a source address, an account name): `rate` tokens a
 *   second up to `burst`; each request takes one or is refused;
 * - failed-password back-off per account: after k failures in a row the account may try
 *   again only after base x 2^(k-1) (at most `max`); a success clears it.
 *
 * Both keep at most `capacity` keys; when full, the least recently used key is forgotten
 * (its bucket starts full again / its back-off is cleared), so memory is bounded whatever
 * an attacker sends. Keys are byte strings up to MC_LIMIT_KEY_MAX bytes. Time is the
 * caller's (mc_clock_now_us), so tests drive it.
 *
 * Keys are attacker-chosen (names, addresses): they are hashed with SipHash-2-4
 * (crypto_shorthash) under a random per-table key, so nobody can choose keys that collide,
 * and no lookup examines more than MC_LIMIT_PROBE_MAX slots whatever happens: a key whose
 * MC_LIMIT_PROBE_MAX slots are all taken replaces the least recently used key among them.
 */
#ifndef MC_LOGINAPP_LIMITS_H
#define MC_LOGINAPP_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_LIMIT_KEY_MAX 68u /* an IPv4 address and a 64-byte name */
#define MC_LIMIT_PROBE_MAX 32u
#define MC_LIMIT_HASH_KEY_BYTES 16u

typedef struct mc_limits mc_limits;

typedef enum {
    MC_LIMITS_BUCKETS, /* token buckets */
    MC_LIMITS_BACKOFF, /* failure back-off */
} mc_limits_kind;

typedef struct {
    mc_limits_kind kind;
    size_t capacity;       /* keys kept at most (>= 1) */
    double rate, burst;    /* BUCKETS: tokens per second (> 0), bucket size (>= 1) */
    uint64_t base_us, max_us; /* BACKOFF: first delay (> 0) and the longest (>= base) */
    const uint8_t *hash_key;  /* MC_LIMIT_HASH_KEY_BYTES (tests); NULL: random (always) */
} mc_limits_config;

/* NULL on a bad configuration or out of memory. */
mc_limits *mc_limits_new(const mc_limits_config *cfg);
void mc_limits_free(mc_limits *l);

/* BUCKETS: take a token for key at now; false (and *retry_us, when given, how long until
 * one is there) when the bucket is empty. */
bool mc_limits_take(mc_limits *l, const void *key, size_t len, uint64_t now_us,
                    uint64_t *retry_us);

/* BUCKETS: whether key's bucket holds a token at now, without taking it or remembering
 * the key. */
bool mc_limits_ready(mc_limits *l, const void *key, size_t len, uint64_t now_us);

/* BACKOFF: whether key may try now (false: *retry_us until it may). */
bool mc_limits_may_try(mc_limits *l, const void *key, size_t len, uint64_t now_us,
                       uint64_t *retry_us);
/* BACKOFF: a failure (the next try waits longer) / a success (the key is forgotten). */
void mc_limits_failed(mc_limits *l, const void *key, size_t len, uint64_t now_us);
void mc_limits_succeeded(mc_limits *l, const void *key, size_t len);

/* Keys held now, keys forgotten to make room so far, and hash slots examined so far (the
 * work lookups cost: at most MC_LIMIT_PROBE_MAX, plus one per slot shifted on removal). */
size_t mc_limits_count(const mc_limits *l);
uint64_t mc_limits_evicted(const mc_limits *l);
uint64_t mc_limits_probes(const mc_limits *l);

#endif
