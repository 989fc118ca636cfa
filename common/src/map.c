/* Open addressing with linear probing and backward-shift deletion. */
#include "common/map.h"

#include <stdlib.h>

static size_t hash(uint64_t k0, uint64_t k1)
{
    uint64_t h = k0 * 0x9E3779B97F4A7C15ull ^ (k1 + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 31;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 29;
    return (size_t)h;
}

void mc_map_init(mc_map *m)
{
    m->slots = NULL;
    m->cap = 0;
    m->count = 0;
}

void mc_map_free(mc_map *m)
{
    free(m->slots);
    mc_map_init(m);
}

static mc_map_slot *find(const mc_map *m, uint64_t k0, uint64_t k1)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = hash(k0, k1) & mask;; i = (i + 1) & mask) {
        mc_map_slot *s = &m->slots[i];
        if (!s->value)
            return NULL;
        if (s->k0 == k0 && s->k1 == k1)
            return s;
    }
}

void *mc_map_get(const mc_map *m, uint64_t k0, uint64_t k1)
{
    mc_map_slot *s = find(m, k0, k1);
    return s ? s->value : NULL;
}

static void raw_put(mc_map_slot *slots, size_t cap, uint64_t k0, uint64_t k1, void *v)
{
    size_t mask = cap - 1;
    for (size_t i = hash(k0, k1) & mask;; i = (i + 1) & mask) {
        if (!slots[i].value || (slots[i].k0 == k0 && slots[i].k1 == k1)) {
            slots[i].k0 = k0;
            slots[i].k1 = k1;
            slots[i].value = v;
            return;
        }
    }
}

bool mc_map_put(mc_map *m, uint64_t k0, uint64_t k1, void *value)
{
    mc_map_slot *s = find(m, k0, k1);
    if (s) {
        s->value = value;
        return true;
    }
    if ((m->count + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 16;
        mc_map_slot *ns = calloc(ncap, sizeof(*ns));
        if (!ns)
            return false;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].value)
                raw_put(ns, ncap, m->slots[i].k0, m->slots[i].k1, m->slots[i].value);
        free(m->slots);
        m->slots = ns;
        m->cap = ncap;
    }
    raw_put(m->slots, m->cap, k0, k1, value);
    m->count++;
    return true;
}

void *mc_map_remove(mc_map *m, uint64_t k0, uint64_t k1)
{
    mc_map_slot *s = find(m, k0, k1);
    if (!s)
        return NULL;
    void *old = s->value;
    size_t mask = m->cap - 1;
    size_t i = (size_t)(s - m->slots);
    s->value = NULL;
    /* backward shift: move later members of the cluster into the hole when allowed */
    for (size_t j = (i + 1) & mask; m->slots[j].value; j = (j + 1) & mask) {
        size_t home = hash(m->slots[j].k0, m->slots[j].k1) & mask;
        /* can slot j move to i? yes if home is not cyclically in (i, j] */
        bool in_range = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!in_range) {
            m->slots[i] = m->slots[j];
            m->slots[j].value = NULL;
            i = j;
        }
    }
    m->count--;
    return old;
}

void *mc_map_next_key(const mc_map *m, size_t *pos, uint64_t *k0, uint64_t *k1)
{
    while (*pos < m->cap) {
        const mc_map_slot *s = &m->slots[(*pos)++];
        if (!s->value)
            continue;
        if (k0)
            *k0 = s->k0;
        if (k1)
            *k1 = s->k1;
        return s->value;
    }
    return NULL;
}

void *mc_map_next(const mc_map *m, size_t *pos) { return mc_map_next_key(m, pos, NULL, NULL); }
