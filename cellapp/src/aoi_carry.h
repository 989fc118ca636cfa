/* The client calls of a witness whose view is handed over to another cellapp (an offload,
 * docs/WORLD.md "Offloading"): while it moves, no witness of it runs on either cellapp, so
 * the allClients / otherClients calls its client is to hear are carried instead and queued
 * for it when its view goes on at the new cellapp, in order, none twice.
 *
 *  - the old cellapp carries the calls queued for its client when the view was handed over,
 *    then those that reach it until it sends "flushed" (WITNESS_CALLS, just before): of its
 *    reals and of the ghosts here, except, once the new cellapp has taken the entity
 *    (commit), ghosts of the new cellapp's reals (the new cellapp carries those: its answer
 *    came after every call its reals made before, on the same channel);
 *  - the new cellapp carries the calls of its own reals from the arrival on, and puts the old
 *    cellapp's before them when the view goes on.
 * And for each entity its client knows, the number of the last of its numbered calls
 * (GHOST_CLIENT_CALL_SEQ) the client heard or is carried: the old cellapp's record goes to
 * the new one (WITNESS_HEARD), which gives the client from its ghosts' recent calls those
 * after it, and skips those before (docs/WORLD.md "Offloading").
 * Pure: no engine. */
#ifndef MC_CELLAPP_AOI_CARRY_H
#define MC_CELLAPP_AOI_CARRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/stream.h"
#include "entity/move_wire.h"
#include "mercury/address.h"

typedef struct aoi_carry aoi_carry;

/* Bytes of entries each of its two queues holds at most (beyond: dropped, counted). */
#define AOI_CARRY_BYTES_MAX 32768u

/* told: the ids the client was introduced to (copied); peer: the other cellapp; arriving:
 * the new cellapp's side. NULL: out of memory. */
aoi_carry *aoi_carry_new(const int32_t *told, size_t n, const mc_address *peer, bool arriving);
void aoi_carry_free(aoi_carry *c);
/* The old side: the new cellapp took the entity. */
void aoi_carry_committed(aoi_carry *c);
/* Whether a call of `caller` (a real here: ghost_of NULL; a ghost: its real's cellapp) is
 * carried. */
bool aoi_carry_wants(const aoi_carry *c, int32_t caller, const mc_address *ghost_of);
/* Carry one call: into the queue of this side's own calls, or (early) into the one of calls
 * the old cellapp carried. 0, or -1 (full or out of memory: dropped). */
int aoi_carry_add(aoi_carry *c, bool early, const mc_witness_call *call);
/* The carried calls: the early ones, then this side's, as WITNESS_CALLS entries. */
size_t aoi_carry_count(const aoi_carry *c);
void aoi_carry_entries(const aoi_carry *c, mc_ostream *out);
/* Calls dropped because a queue was full. */
uint64_t aoi_carry_dropped(const aoi_carry *c);
/* The client has heard (or is carried) entity id's numbered calls up to seq: recorded when id
 * is one it knows (the larger number stays). */
void aoi_carry_heard(aoi_carry *c, int32_t id, uint32_t seq);
/* The record: up to max (id, number) pairs, in id order; returns how many (out NULL: how
 * many it holds). */
size_t aoi_carry_record(const aoi_carry *c, mc_witness_heard *out, size_t max);
/* Whether the record has id, and its number. */
bool aoi_carry_heard_of(const aoi_carry *c, int32_t id, uint32_t *seq);

#endif
