/* How many jobs each source (a client's IPv4 address) has in flight, for the hashing pool's
 * per-source bound: a table of at most `max_sources` sources with a non-zero count (a source
 * whose count drops to 0 is forgotten). Sources are attacker-chosen, so they are hashed with
 * SipHash under a random key (nobody can choose colliding ones). Used on one thread.
 */
#ifndef MC_LOGINAPP_SOURCE_COUNTS_H
#define MC_LOGINAPP_SOURCE_COUNTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct mc_source_counts mc_source_counts;

/* max_sources >= 1; NULL when out of memory or on a bad argument. */
mc_source_counts *mc_source_counts_new(size_t max_sources);
void mc_source_counts_free(mc_source_counts *c);

/* The count of source (0 when unknown). */
uint32_t mc_source_counts_get(const mc_source_counts *c, uint64_t source);
/* One more for source: 0, or -1 when max_sources sources are counted already. */
int mc_source_counts_add(mc_source_counts *c, uint64_t source);
/* One less (nothing when it is 0). */
void mc_source_counts_sub(mc_source_counts *c, uint64_t source);
/* Sources counted now. */
size_t mc_source_counts_sources(const mc_source_counts *c);

#endif
