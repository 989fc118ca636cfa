/* Open-addressing hash index of names (FNV-1a, linear probing, at most half full). */
#include "name_index.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

/* Slot holding name, or the empty slot where it belongs. */
static size_t find(const name_index *ni, const char *name)
{
    size_t i = hash(name) & (ni->cap - 1);
    while (ni->keys[i] && strcmp(ni->keys[i], name))
        i = (i + 1) & (ni->cap - 1);
    return i;
}

static int grow(name_index *ni)
{
    size_t cap = ni->cap ? ni->cap * 2 : 16;
    name_index bigger = {calloc(cap, sizeof(char *)), calloc(cap, sizeof(size_t)), cap, ni->n};
    if (!bigger.keys || !bigger.vals) {
        free(bigger.keys);
        free(bigger.vals);
        return -1;
    }
    for (size_t i = 0; i < ni->cap; i++)
        if (ni->keys[i]) {
            size_t j = find(&bigger, ni->keys[i]);
            bigger.keys[j] = ni->keys[i];
            bigger.vals[j] = ni->vals[i];
        }
    name_index_free(ni);
    *ni = bigger;
    return 0;
}

int name_index_put(name_index *ni, const char *name, size_t pos, size_t *prev)
{
    if ((ni->n + 1) * 2 > ni->cap && grow(ni) != 0)
        return -1;
    size_t i = find(ni, name);
    if (ni->keys[i]) {
        if (prev)
            *prev = ni->vals[i];
        return 1;
    }
    ni->keys[i] = name;
    ni->vals[i] = pos;
    ni->n++;
    return 0;
}

int name_index_get(const name_index *ni, const char *name, size_t *pos)
{
    if (!ni->cap)
        return -1;
    size_t i = find(ni, name);
    if (!ni->keys[i])
        return -1;
    if (pos)
        *pos = ni->vals[i];
    return 0;
}

void name_index_free(name_index *ni)
{
    free(ni->keys);
    free(ni->vals);
    memset(ni, 0, sizeof(*ni));
}
