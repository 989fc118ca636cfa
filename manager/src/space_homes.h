/* Where lost spaces are restored (docs/ARCHITECTURE.md "Faults"): space id -> the id of the
 * cellapp the manager chose for it (QUERY_SPACE_HOME). Every base whose cell was in a space
 * of a dead cellapp asks, from whichever baseapp; the first ask picks, the later ones get the
 * same answer, so a space is made again on one cellapp only.
 *
 * Pure bookkeeping (no I/O): at most `max` entries (--spaceHomesMax); when full the oldest
 * entry goes (counted): a space asked about again after that may get another home. */
#ifndef MC_MANAGER_SPACE_HOMES_H
#define MC_MANAGER_SPACE_HOMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_SPACE_HOMES_DEFAULT 65536u
#define MC_SPACE_HOMES_MIN 16u
#define MC_SPACE_HOMES_MAX 10000000u

typedef struct mc_space_homes mc_space_homes;

/* NULL when out of memory (max is clamped to MIN..MAX). */
mc_space_homes *mc_space_homes_new(size_t max);
void mc_space_homes_free(mc_space_homes *h);
/* The process id noted for space (false: none). */
bool mc_space_homes_get(const mc_space_homes *h, int32_t space, uint32_t *process_id);
/* Note (or change) space's home; the oldest entry goes when full. */
void mc_space_homes_put(mc_space_homes *h, int32_t space, uint32_t process_id);
size_t mc_space_homes_count(const mc_space_homes *h);
/* Entries dropped because the table was full. */
uint64_t mc_space_homes_evicted(const mc_space_homes *h);

#endif
