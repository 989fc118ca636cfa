/* Per-source counts (source_counts.h): open addressing with linear probing (at most half
 * the slots used) and backward-shift deletion. */
#include "source_counts.h"

#include <sodium.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t source;
    uint32_t count; /* 0: empty slot */
} slot;

struct mc_source_counts {
    slot *slots;
    size_t nslots, used, max;
    uint8_t key[crypto_shorthash_KEYBYTES];
};

mc_source_counts *mc_source_counts_new(size_t max_sources)
{
    if (max_sources < 1 || max_sources > (1u << 24) || sodium_init() < 0)
        return NULL;
    mc_source_counts *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->nslots = 16;
    while (c->nslots < 2 * max_sources)
        c->nslots *= 2;
    c->slots = calloc(c->nslots, sizeof *c->slots);
    if (!c->slots) {
        free(c);
        return NULL;
    }
    c->max = max_sources;
    randombytes_buf(c->key, sizeof c->key);
    return c;
}

void mc_source_counts_free(mc_source_counts *c)
{
    if (!c)
        return;
    free(c->slots);
    free(c);
}

static size_t home(const mc_source_counts *c, uint64_t source)
{
    uint8_t in[8], h[crypto_shorthash_BYTES];
    memcpy(in, &source, sizeof in);
    crypto_shorthash(h, in, sizeof in, c->key);
    uint64_t v;
    memcpy(&v, h, sizeof v);
    return (size_t)(v & (c->nslots - 1));
}

/* The slot of source, or the empty slot where it would go (one always exists). */
static size_t find(const mc_source_counts *c, uint64_t source, bool *found)
{
    size_t i = home(c, source);
    while (c->slots[i].count && c->slots[i].source != source)
        i = (i + 1) & (c->nslots - 1);
    *found = c->slots[i].count != 0;
    return i;
}

uint32_t mc_source_counts_get(const mc_source_counts *c, uint64_t source)
{
    bool found;
    size_t i = find(c, source, &found);
    return found ? c->slots[i].count : 0;
}

int mc_source_counts_add(mc_source_counts *c, uint64_t source)
{
    bool found;
    size_t i = find(c, source, &found);
    if (!found) {
        if (c->used >= c->max)
            return -1;
        c->slots[i].source = source;
        c->used++;
    }
    if (c->slots[i].count == UINT32_MAX)
        return -1;
    c->slots[i].count++;
    return 0;
}

void mc_source_counts_sub(mc_source_counts *c, uint64_t source)
{
    bool found;
    size_t i = find(c, source, &found);
    if (!found || --c->slots[i].count > 0)
        return;
    c->used--;
    /* backward shift: keep every chain free of holes */
    size_t j = i;
    for (;;) {
        j = (j + 1) & (c->nslots - 1);
        if (!c->slots[j].count)
            break;
        size_t h = home(c, c->slots[j].source);
        bool between = i < j ? (h > i && h <= j) : (h > i || h <= j);
        if (!between) {
            c->slots[i] = c->slots[j];
            i = j;
        }
    }
    c->slots[i].count = 0;
    c->slots[i].source = 0;
}

size_t mc_source_counts_sources(const mc_source_counts *c) { return c->used; }
