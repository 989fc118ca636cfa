/* u64map.h: open addressing with linear probing. */
#include "u64map.h"

#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

void *u64map_get(const u64map *m, uint64_t key)
{
    if (!m->cap || !key)
        return NULL;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->vals[i];
        if (!m->keys[i])
            return NULL;
    }
}

static int grow(u64map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof *keys);
    void **vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = slot_of(m->keys[i], cap);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

int u64map_put(u64map *m, uint64_t key, void *val)
{
    if (!key)
        return -1;
    if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
        return -1;
    size_t i = slot_of(key, m->cap);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->keys[i])
        m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

void u64map_del(u64map *m, uint64_t key)
{
    if (!m->cap || !key)
        return;
    size_t i = slot_of(key, m->cap);
    while (m->keys[i] != key) {
        if (!m->keys[i])
            return;
        i = (i + 1) & (m->cap - 1);
    }
    m->keys[i] = 0;
    m->vals[i] = NULL;
    m->count--;
    /* Shift back the entries of the run that follows so that every probe still finds them. */
    for (size_t j = (i + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
        size_t home = slot_of(m->keys[j], m->cap);
        /* Move j to i when its home is not cyclically within (i, j]. */
        int in_range = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!in_range) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            m->keys[j] = 0;
            m->vals[j] = NULL;
            i = j;
        }
    }
}

void u64map_free(u64map *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->count = 0;
}
