/* The hash map every part shares: open addressing (linear probing, backward-shift deletion,
 * growing by doubling) from a 128-bit key (two u64; give 0 as the second for a 64-bit one) to
 * a non-NULL pointer. Mercury finds its channels with it, bots their players by entity id, the baseapp
 * its records, proxies, sessions and backups. */
#ifndef MC_COMMON_MAP_H
#define MC_COMMON_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t k0, k1;
    void *value; /* NULL = empty slot */
} mc_map_slot;

typedef struct {
    mc_map_slot *slots;
    size_t cap; /* power of two or 0 */
    size_t count;
} mc_map;

void mc_map_init(mc_map *m);
void mc_map_free(mc_map *m);
void *mc_map_get(const mc_map *m, uint64_t k0, uint64_t k1);
/* Insert or replace (value must not be NULL). Returns false on allocation failure. */
bool mc_map_put(mc_map *m, uint64_t k0, uint64_t k1, void *value);
/* Remove; returns the old value or NULL. */
void *mc_map_remove(mc_map *m, uint64_t k0, uint64_t k1);
/* Iterate: call with *pos = 0 first; returns the next value or NULL at the end. Removing
 * while iterating moves entries (backward shifts): collect the keys first, then remove. */
void *mc_map_next(const mc_map *m, size_t *pos);
/* The same with the entry's key (either key pointer may be NULL). */
void *mc_map_next_key(const mc_map *m, size_t *pos, uint64_t *k0, uint64_t *k1);

#endif
