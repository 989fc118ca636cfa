/* Remembered login answers (replies.h): a chained hash table over entries kept in a FIFO
 * (insertion order is expiry order, every entry lives keep_ms). */
#include "replies.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    struct entry *hnext;          /* bucket chain */
    struct entry *older, *newer;  /* FIFO */
    la_reply_key key;
    uint64_t expires_us;
    la_reply_state state;
    uint8_t reply[MC_LOGIN_REPLY_SIZE];
} entry;

struct la_replies {
    entry **buckets;
    size_t nbuckets, count, capacity;
    uint64_t keep_us;
    entry *oldest, *newest;
    uint8_t hash_key[crypto_shorthash_KEYBYTES]; /* keyed: no chosen-collision chains */
};

la_replies *la_replies_new(size_t capacity, uint64_t keep_ms)
{
    if (capacity < 1 || keep_ms < 1 || sodium_init() < 0)
        return NULL;
    la_replies *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->nbuckets = 64;
    while (r->nbuckets < capacity && r->nbuckets < (1u << 20))
        r->nbuckets *= 2;
    r->buckets = calloc(r->nbuckets, sizeof *r->buckets);
    if (!r->buckets) {
        free(r);
        return NULL;
    }
    r->capacity = capacity;
    r->keep_us = keep_ms * 1000u;
    randombytes_buf(r->hash_key, sizeof r->hash_key);
    return r;
}

void la_replies_free(la_replies *r)
{
    if (!r)
        return;
    for (entry *e = r->oldest; e;) {
        entry *n = e->newer;
        sodium_memzero(e, sizeof *e);
        free(e);
        e = n;
    }
    free(r->buckets);
    free(r);
}

static size_t bucket_of(const la_replies *r, const la_reply_key *k)
{
    uint8_t in[14], h[crypto_shorthash_BYTES];
    memcpy(in, &k->ip, 4);
    memcpy(in + 4, &k->port, 2);
    memcpy(in + 6, k->nonce, 8);
    crypto_shorthash(h, in, sizeof in, r->hash_key);
    uint64_t v;
    memcpy(&v, h, sizeof v);
    return (size_t)(v & (r->nbuckets - 1));
}

static bool same(const la_reply_key *a, const la_reply_key *b)
{
    return a->ip == b->ip && a->port == b->port && memcmp(a->nonce, b->nonce, 8) == 0;
}

static void remove_entry(la_replies *r, entry *e)
{
    entry **p = &r->buckets[bucket_of(r, &e->key)];
    while (*p && *p != e)
        p = &(*p)->hnext;
    if (*p)
        *p = e->hnext;
    if (e->older)
        e->older->newer = e->newer;
    else
        r->oldest = e->newer;
    if (e->newer)
        e->newer->older = e->older;
    else
        r->newest = e->older;
    r->count--;
    sodium_memzero(e, sizeof *e);
    free(e);
}

static void expire(la_replies *r, uint64_t now_us)
{
    while (r->oldest && r->oldest->expires_us <= now_us)
        remove_entry(r, r->oldest);
}

static entry *find(la_replies *r, const la_reply_key *key)
{
    for (entry *e = r->buckets[bucket_of(r, key)]; e; e = e->hnext)
        if (same(&e->key, key))
            return e;
    return NULL;
}

la_reply_state la_replies_lookup(la_replies *r, const la_reply_key *key, uint64_t now_us,
                                 uint8_t out[MC_LOGIN_REPLY_SIZE])
{
    expire(r, now_us);
    entry *e = find(r, key);
    if (!e)
        return LA_REPLY_NONE;
    if (e->state == LA_REPLY_ANSWERED && out)
        memcpy(out, e->reply, MC_LOGIN_REPLY_SIZE);
    return e->state;
}

static entry *add(la_replies *r, const la_reply_key *key, uint64_t now_us)
{
    expire(r, now_us);
    entry *e = find(r, key);
    if (e)
        return e;
    if (r->count >= r->capacity)
        remove_entry(r, r->oldest);
    e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->key = *key;
    e->expires_us = now_us + r->keep_us;
    size_t b = bucket_of(r, key);
    e->hnext = r->buckets[b];
    r->buckets[b] = e;
    e->older = r->newest;
    if (r->newest)
        r->newest->newer = e;
    else
        r->oldest = e;
    r->newest = e;
    r->count++;
    return e;
}

int la_replies_pending(la_replies *r, const la_reply_key *key, uint64_t now_us)
{
    entry *e = add(r, key, now_us);
    if (!e)
        return -1;
    e->state = LA_REPLY_PENDING;
    return 0;
}

int la_replies_answered(la_replies *r, const la_reply_key *key, uint64_t now_us,
                        const uint8_t reply[MC_LOGIN_REPLY_SIZE])
{
    entry *e = add(r, key, now_us);
    if (!e)
        return -1;
    e->state = LA_REPLY_ANSWERED;
    memcpy(e->reply, reply, MC_LOGIN_REPLY_SIZE);
    return 0;
}

size_t la_replies_count(const la_replies *r) { return r->count; }
