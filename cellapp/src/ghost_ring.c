/* A ghost's recent client calls (ghost_ring.h). */
#include "ghost_ring.h"

#include <stdlib.h>
#include <string.h>

static ghost_ring_entry *at(const ghost_ring *r, size_t i) { return &r->e[(r->head + i) % r->cap]; }

static void drop_oldest(ghost_ring *r)
{
    ghost_ring_entry *x = at(r, 0);
    r->bytes -= x->len;
    free(x->args);
    x->args = NULL;
    r->head = (r->head + 1) % r->cap;
    r->n--;
}

static void clear(ghost_ring *r)
{
    while (r->n)
        drop_oldest(r);
    r->head = 0;
}

void ghost_ring_free(ghost_ring *r)
{
    if (r->cap)
        clear(r);
    free(r->e);
    memset(r, 0, sizeof *r);
}

/* An empty ring keeps no buffer (a ghost gone quiet holds nothing). */
static void release_if_empty(ghost_ring *r)
{
    if (!r->n && r->cap)
        ghost_ring_free(r);
}

size_t ghost_ring_expire(ghost_ring *r, const ghost_ring_limits *l, uint64_t now_us)
{
    size_t k = 0;
    while (r->n && now_us - at(r, 0)->at_us > l->age_us) {
        drop_oldest(r);
        k++;
    }
    release_if_empty(r);
    return k;
}

size_t ghost_ring_trim(ghost_ring *r, size_t bytes)
{
    size_t k = 0;
    while (r->n && r->bytes > bytes) {
        drop_oldest(r);
        k++;
    }
    release_if_empty(r);
    return k;
}

int ghost_ring_push(ghost_ring *r, const ghost_ring_limits *l, uint32_t seq, uint16_t method,
                    const uint8_t *args, size_t len, uint64_t now_us)
{
    if (r->n && at(r, r->n - 1)->seq + 1 != seq)
        clear(r); /* not the next one: what is held would hide a hole */
    if (!l->calls || len > l->bytes) {
        if (r->cap)
            clear(r);
        return -1;
    }
    while (r->n && now_us - at(r, 0)->at_us > l->age_us)
        drop_oldest(r);
    while (r->n && (r->n >= l->calls || r->bytes + len > l->bytes))
        drop_oldest(r);
    if (r->n == r->cap) { /* grow (then the entries are in order from 0) */
        size_t cap = r->cap ? r->cap * 2 : 8;
        if (cap > l->calls)
            cap = l->calls;
        ghost_ring_entry *e = calloc(cap, sizeof *e);
        if (!e) {
            clear(r);
            return -1;
        }
        for (size_t i = 0; i < r->n; i++)
            e[i] = *at(r, i);
        free(r->e);
        r->e = e;
        r->cap = cap;
        r->head = 0;
    }
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) {
        clear(r);
        return -1;
    }
    if (len)
        memcpy(copy, args, len);
    ghost_ring_entry *x = &r->e[(r->head + r->n) % r->cap];
    *x = (ghost_ring_entry){.seq = seq, .method = method, .args = copy, .len = len,
                            .at_us = now_us};
    r->n++;
    r->bytes += len;
    return 0;
}

uint32_t ghost_ring_first(const ghost_ring *r) { return r->n ? at(r, 0)->seq : 0; }

size_t ghost_ring_since(const ghost_ring *r, uint32_t after, ghost_ring_fn fn, void *ctx)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++) {
        const ghost_ring_entry *x = at(r, i);
        if (x->seq > after) {
            fn(ctx, x);
            k++;
        }
    }
    return k;
}
