/* Bounded per-key rate limits and back-off (limits.h): an open-addressing hash table of
 * entries in a fixed array, with a doubly linked LRU list through them. */
#include "limits.h"

#include <math.h>
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
};

static uint64_t hash(const void *key, size_t len)
{
    const uint8_t *p = key;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (h >> 29);
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
    mc_limits *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->cfg = *cfg;
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

/* The slot holding key, or the empty slot where it would go. */
static size_t find_slot(const mc_limits *l, const void *key, size_t len)
{
    size_t i = (size_t)hash(key, len) & (l->nslots - 1);
    for (;;) {
        uint32_t e = l->slots[i];
        if (e == NIL)
            return i;
        const entry *x = &l->entries[e];
        if (x->len == len && memcmp(x->key, key, len) == 0)
            return i;
        i = (i + 1) & (l->nslots - 1);
    }
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
        size_t home = (size_t)hash(l->entries[f].key, l->entries[f].len) & (l->nslots - 1);
        /* move f back to i when its home is not within (i, j] cyclically */
        bool between = i < j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            l->slots[i] = f;
            i = j;
        }
    }
    l->slots[i] = NIL;
}

/* The entry of key, created when missing (evicting the least recently used when full);
 * made the most recently used. *fresh tells whether it was created. */
static entry *get(mc_limits *l, const void *key, size_t len, bool *fresh)
{
    if (len > MC_LIMIT_KEY_MAX)
        len = MC_LIMIT_KEY_MAX; /* longer keys share their first bytes' entry */
    size_t i = find_slot(l, key, len);
    uint32_t e = l->slots[i];
    *fresh = e == NIL;
    if (e == NIL) {
        if (l->free_head == NIL) {
            uint32_t victim = l->tail;
            remove_slot(l, find_slot(l, l->entries[victim].key, l->entries[victim].len));
            l->evicted++;
            i = find_slot(l, key, len); /* the table changed */
        }
        e = l->free_head;
        l->free_head = l->entries[e].next;
        entry *x = &l->entries[e];
        memset(x, 0, sizeof *x);
        memcpy(x->key, key, len);
        x->len = (uint8_t)len;
        x->used = true;
        l->slots[i] = e;
        l->count++;
        lru_front(l, e);
        return x;
    }
    lru_unlink(l, e);
    lru_front(l, e);
    return &l->entries[e];
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
    uint32_t e = l->slots[find_slot(l, key, len)];
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
    size_t i = find_slot(l, key, len);
    if (l->slots[i] != NIL)
        remove_slot(l, i);
}
