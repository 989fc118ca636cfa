/* Bounded per-key rate limits and back-off (limits.h): an open-addressing hash table
 * (linear probing, keyed SipHash, at most MC_LIMIT_PROBE_MAX slots from a key's home) of
 * entries in a fixed array, with a doubly linked LRU list through them. */
#include "limits.h"

#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t key[MC_LIMIT_KEY_MAX];
    uint8_t len;
    bool used;
    uint32_t prev, next;   /* LRU list (indices; NIL at the ends) */
    double tokens;         /* BUCKETS */
    uint64_t stamp_us;     /* BUCKETS: last refill; BACKOFF: when it may try again */
    uint32_t failures;     /* BACKOFF */
    uint64_t touched;      /* when last used (l->clock): the LRU within a probe window */
} entry;

#define NIL UINT32_MAX

struct mc_limits {
    mc_limits_config cfg;
    entry *entries;        /* capacity of them */
    uint32_t *slots;       /* hash slots -> entry index, NIL empty (2^k >= 2 x capacity) */
    size_t nslots;
    size_t count;
    uint32_t head, tail;   /* most and least recently used */
    uint32_t free_head;    /* unused entries, through next */
    uint64_t evicted;
    uint64_t probes;
    uint64_t clock;        /* counts uses */
    uint8_t hash_key[crypto_shorthash_KEYBYTES];
};

_Static_assert(MC_LIMIT_HASH_KEY_BYTES == crypto_shorthash_KEYBYTES, "SipHash's key");

static uint64_t hash(const mc_limits *l, const void *key, size_t len)
{
    uint8_t h[crypto_shorthash_BYTES];
    crypto_shorthash(h, key, len, l->hash_key);
    uint64_t v;
    memcpy(&v, h, sizeof v);
    return v;
}

mc_limits *mc_limits_new(const mc_limits_config *cfg)
{
    if (!cfg || cfg->capacity < 1 || cfg->capacity > (1u << 24))
        return NULL;
    if (cfg->kind == MC_LIMITS_BUCKETS && (!(cfg->rate > 0) || !(cfg->burst >= 1) ||
                                           !isfinite(cfg->rate) || !isfinite(cfg->burst)))
        return NULL;
    if (cfg->kind == MC_LIMITS_BACKOFF && (cfg->base_us == 0 || cfg->max_us < cfg->base_us))
        return NULL;
    if (sodium_init() < 0)
        return NULL;
    mc_limits *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->cfg = *cfg;
    l->cfg.hash_key = NULL;
    if (cfg->hash_key)
        memcpy(l->hash_key, cfg->hash_key, sizeof l->hash_key);
    else
        randombytes_buf(l->hash_key, sizeof l->hash_key);
    l->nslots = 16;
    while (l->nslots < cfg->capacity * 2)
        l->nslots *= 2;
    l->entries = calloc(cfg->capacity, sizeof *l->entries);
    l->slots = malloc(l->nslots * sizeof *l->slots);
    if (!l->entries || !l->slots) {
        mc_limits_free(l);
        return NULL;
    }
    for (size_t i = 0; i < l->nslots; i++)
        l->slots[i] = NIL;
    for (size_t i = 0; i < cfg->capacity; i++)
        l->entries[i].next = i + 1 < cfg->capacity ? (uint32_t)(i + 1) : NIL;
    l->free_head = 0;
    l->head = l->tail = NIL;
    return l;
}

void mc_limits_free(mc_limits *l)
{
    if (!l)
        return;
    free(l->entries);
    free(l->slots);
    free(l);
}

size_t mc_limits_count(const mc_limits *l) { return l->count; }
uint64_t mc_limits_evicted(const mc_limits *l) { return l->evicted; }
uint64_t mc_limits_probes(const mc_limits *l) { return l->probes; }

typedef enum { P_FOUND, P_EMPTY, P_FULL } probe_result;

/* Look for key in the MC_LIMIT_PROBE_MAX slots from its home: P_FOUND (*slot holds it),
 * P_EMPTY (*slot is the empty slot where it would go) or P_FULL (all taken by others). Every
 * key sits within those slots of its home, with no empty slot between (linear probing with
 * backward-shift deletion keeps that). */
static probe_result probe(mc_limits *l, const void *key, size_t len, size_t *slot)
{
    size_t i = (size_t)hash(l, key, len) & (l->nslots - 1);
    for (size_t n = 0; n < MC_LIMIT_PROBE_MAX; n++) {
        l->probes++;
        uint32_t e = l->slots[i];
        *slot = i;
        if (e == NIL)
            return P_EMPTY;
        const entry *x = &l->entries[e];
        if (x->len == len && memcmp(x->key, key, len) == 0)
            return P_FOUND;
        i = (i + 1) & (l->nslots - 1);
    }
    return P_FULL;
}

static void lru_unlink(mc_limits *l, uint32_t e)
{
    entry *x = &l->entries[e];
    if (x->prev != NIL)
        l->entries[x->prev].next = x->next;
    else
        l->head = x->next;
    if (x->next != NIL)
        l->entries[x->next].prev = x->prev;
    else
        l->tail = x->prev;
}

static void lru_front(mc_limits *l, uint32_t e)
{
    entry *x = &l->entries[e];
    x->prev = NIL;
    x->next = l->head;
    if (l->head != NIL)
        l->entries[l->head].prev = e;
    l->head = e;
    if (l->tail == NIL)
        l->tail = e;
}

/* Remove the entry in slot i (backward-shift deletion keeps probe chains whole). */
static void remove_slot(mc_limits *l, size_t i)
{
    uint32_t e = l->slots[i];
    lru_unlink(l, e);
    l->entries[e].used = false;
    l->entries[e].next = l->free_head;
    l->free_head = e;
    l->count--;
    size_t j = i;
    for (;;) {
        j = (j + 1) & (l->nslots - 1);
        uint32_t f = l->slots[j];
        if (f == NIL)
            break;
        l->probes++;
        size_t home = (size_t)hash(l, l->entries[f].key, l->entries[f].len) & (l->nslots - 1);
        /* move f back to i when its home is not within (i, j] cyclically */
        bool between = i < j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            l->slots[i] = f;
            i = j;
        }
    }
    l->slots[i] = NIL;
}

static void touch(mc_limits *l, uint32_t e)
{
    l->entries[e].touched = ++l->clock;
    lru_unlink(l, e);
    lru_front(l, e);
}

/* A fresh entry for key in entry e. */
static entry *fill(mc_limits *l, uint32_t e, const void *key, size_t len)
{
    entry *x = &l->entries[e];
    memset(x, 0, sizeof *x);
    memcpy(x->key, key, len);
    x->len = (uint8_t)len;
    x->used = true;
    x->touched = ++l->clock;
    lru_front(l, e);
    return x;
}

/* The entry of key, created when missing (evicting the least recently used when full, or
 * the least recently used of its probe window when that is full); made the most recently
 * used. *fresh tells whether it was created. */
static entry *get(mc_limits *l, const void *key, size_t len, bool *fresh)
{
    if (len > MC_LIMIT_KEY_MAX)
        len = MC_LIMIT_KEY_MAX; /* longer keys share their first bytes' entry */
    size_t i;
    probe_result r = probe(l, key, len, &i);
    *fresh = r != P_FOUND;
    if (r == P_FOUND) {
        touch(l, l->slots[i]);
        return &l->entries[l->slots[i]];
    }
    if (r == P_EMPTY && l->free_head == NIL) {
        uint32_t victim = l->tail;
        size_t vs;
        if (probe(l, l->entries[victim].key, l->entries[victim].len, &vs) == P_FOUND)
            remove_slot(l, vs);
        l->evicted++;
        r = probe(l, key, len, &i); /* the table changed */
    }
    if (r == P_EMPTY && l->free_head != NIL) {
        uint32_t e = l->free_head;
        l->free_head = l->entries[e].next;
        l->slots[i] = e;
        l->count++;
        return fill(l, e, key, len);
    }
    /* Every slot of the window is taken: the least recently used of them makes room, in
     * place (the other keys' chains do not change). */
    size_t home = (size_t)hash(l, key, len) & (l->nslots - 1), best = home;
    for (size_t n = 0; n < MC_LIMIT_PROBE_MAX; n++) {
        size_t j = (home + n) & (l->nslots - 1);
        if (l->entries[l->slots[j]].touched < l->entries[l->slots[best]].touched)
            best = j;
    }
    uint32_t e = l->slots[best];
    lru_unlink(l, e);
    l->evicted++;
    return fill(l, e, key, len);
}

bool mc_limits_ready(mc_limits *l, const void *key, size_t len, uint64_t now_us)
{
    if (len > MC_LIMIT_KEY_MAX)
        len = MC_LIMIT_KEY_MAX;
    size_t i;
    if (probe(l, key, len, &i) != P_FOUND)
        return true; /* a bucket not yet made is full */
    const entry *x = &l->entries[l->slots[i]];
    double tokens = x->tokens;
    if (now_us > x->stamp_us)
        tokens += (double)(now_us - x->stamp_us) / 1e6 * l->cfg.rate;
    return tokens >= 1.0;
}

bool mc_limits_take(mc_limits *l, const void *key, size_t len, uint64_t now_us,
                    uint64_t *retry_us)
{
    bool fresh;
    entry *x = get(l, key, len, &fresh);
    if (fresh) {
        x->tokens = l->cfg.burst;
    } else if (now_us > x->stamp_us) {
        x->tokens += (double)(now_us - x->stamp_us) / 1e6 * l->cfg.rate;
        if (x->tokens > l->cfg.burst)
            x->tokens = l->cfg.burst;
    }
    if (fresh || now_us > x->stamp_us)
        x->stamp_us = now_us;
    if (x->tokens >= 1.0) {
        x->tokens -= 1.0;
        if (retry_us)
            *retry_us = 0;
        return true;
    }
    if (retry_us)
        *retry_us = (uint64_t)ceil((1.0 - x->tokens) / l->cfg.rate * 1e6);
    return false;
}

bool mc_limits_may_try(mc_limits *l, const void *key, size_t len, uint64_t now_us,
                       uint64_t *retry_us)
{
    if (len > MC_LIMIT_KEY_MAX)
        len = MC_LIMIT_KEY_MAX;
    size_t i;
    uint32_t e = probe(l, key, len, &i) == P_FOUND ? l->slots[i] : NIL;
    if (e == NIL || now_us >= l->entries[e].stamp_us) {
        if (retry_us)
            *retry_us = 0;
        return true;
    }
    if (retry_us)
        *retry_us = l->entries[e].stamp_us - now_us;
    return false;
}

void mc_limits_failed(mc_limits *l, const void *key, size_t len, uint64_t now_us)
{
    bool fresh;
    entry *x = get(l, key, len, &fresh);
    if (x->failures < 63)
        x->failures++;
    uint64_t d = l->cfg.base_us;
    for (uint32_t k = 1; k < x->failures && d < l->cfg.max_us; k++)
        d *= 2;
    if (d > l->cfg.max_us)
        d = l->cfg.max_us;
    x->stamp_us = now_us + d;
}

void mc_limits_succeeded(mc_limits *l, const void *key, size_t len)
{
    if (len > MC_LIMIT_KEY_MAX)
        len = MC_LIMIT_KEY_MAX;
    size_t i;
    if (probe(l, key, len, &i) == P_FOUND)
        remove_slot(l, i);
}
