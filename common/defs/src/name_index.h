/* Internal: a hash index from names to positions, so duplicate checks stay linear in the
 * number of names (a def file may hold hundreds of thousands of elements). Keys are not
 * copied: they must outlive the index. */
#ifndef MC_DEFS_NAME_INDEX_H
#define MC_DEFS_NAME_INDEX_H

#include <stddef.h>

typedef struct {
    const char **keys;
    size_t *vals;
    size_t cap, n;
} name_index;

/* Record name at pos unless present. Returns 0 when added, 1 when name was already there
 * (its position in *prev), -1 when out of memory. A zeroed index is empty. */
int name_index_put(name_index *ni, const char *name, size_t pos, size_t *prev);
/* Position of name, or -1 through the return value when absent. */
int name_index_get(const name_index *ni, const char *name, size_t *pos);
void name_index_free(name_index *ni);

#endif
