/* Internal: a bump allocator that owns everything a loaded mc_entity_defs points to; freed
 * in one go. Allocations are zeroed. */
#ifndef MC_DEFS_ARENA_H
#define MC_DEFS_ARENA_H

#include <stddef.h>

typedef struct mc_arena_block mc_arena_block;
typedef struct {
    mc_arena_block *head;
    int failed; /* an allocation failed */
} mc_arena;

void mc_arena_init(mc_arena *a);
void mc_arena_free(mc_arena *a);
void *mc_arena_alloc(mc_arena *a, size_t size);
void *mc_arena_calloc(mc_arena *a, size_t n, size_t size);
char *mc_arena_strdup(mc_arena *a, const char *s);
char *mc_arena_strndup(mc_arena *a, const char *s, size_t n);
char *mc_arena_printf(mc_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
