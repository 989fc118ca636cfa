/* A small hash map from non-zero 64-bit keys to pointers (open addressing, linear probing,
 * backward-shift deletion; grows by doubling). The baseapp's persistence finds its records
 * with it by entity id and by (type, database id). */
#ifndef MC_BASEAPP_U64MAP_H
#define MC_BASEAPP_U64MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t *keys; /* 0 = empty slot */
    void **vals;
    size_t cap;     /* a power of two, or 0 */
    size_t count;
} u64map;

/* NULL when absent. */
void *u64map_get(const u64map *m, uint64_t key);
/* Insert or replace (key must not be 0). 0, or -1 when out of memory. */
int u64map_put(u64map *m, uint64_t key, void *val);
void u64map_del(u64map *m, uint64_t key);
void u64map_free(u64map *m);

#endif
