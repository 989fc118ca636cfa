/* What a witness's client is sent about the entities its witness sees (docs/WORLD.md):
 * each tick, after the views are updated and the properties diffed, witness_send writes the
 * world update records (entity/world_wire.h) and sends them to the witness's base, which
 * hands them to its client:
 *
 *  - once, when the stream starts (and again after witness_reset): ENTER of the witness's
 *    own entity with its own-client properties (the player's cell entity);
 *  - LEAVE for every entity that left the view (only if its ENTER was sent);
 *  - PROPS of the witness's own entity: its own-client properties that changed;
 *  - for the entities in view, within a byte budget a tick (--clientBudgetBytes), nearest
 *    first in turn: ENTER (type, position, direction, every OTHER_CLIENTS / ALL_CLIENTS
 *    value) for an entity not introduced yet, PROPS with every such property changed since
 *    the change number last sent, VOLATILE (position and direction, unreliable, latest wins)
 *    when it moved or turned beyond its def's <Volatile> thresholds.
 *
 * The budget works as BigWorld's: every entity in view has a priority; those with something
 * to send go in priority order until the budget is spent (at least one a tick), and each one
 * sent moves back by 1 + its distance, so near entities are updated more often than far ones
 * when not everything fits. Nothing is lost when deferred: a property change waits in the
 * change numbers, a volatile update is replaced by a newer one.
 */
#ifndef MC_CELLAPP_WITNESS_H
#define MC_CELLAPP_WITNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client_shadow.h"
#include "common/stream.h"
#include "entity/engine.h"

typedef struct witness witness;

/* What building a tick's records needs from its surroundings: the cellapp's engine
 * (witness_send.c), or a benchmark's own entities. */
typedef struct {
    void *ctx;
    /* a live cell entity by id, or NULL */
    mc_entity *(*find)(void *ctx, int32_t id);
    /* its client-visible properties as diffed this tick, or NULL (nothing is sent of it) */
    client_shadow *(*shadow)(void *ctx, mc_entity *ent);
    uint64_t budget; /* bytes a tick for the entities in view (beyond the first) */
    uint32_t refresh_ticks; /* a still entity's position re-sent after this many (0: never) */
    uint64_t *enters, *leaves, *props, *volatiles, *deferred; /* counted here */
    uint64_t *refreshes; /* VOLATILEs of still entities (among *volatiles); may be NULL */
} witness_env;

/* The longest gap between two refreshes of a still entity, in refresh_ticks. */
#define WITNESS_REFRESH_MAX_FACTOR 16u

witness *witness_new(void);
/* Free it (its entries are forgotten: the caller lowers the viewer counts). */
void witness_free(witness *w);
/* The view gained / lost an entity. -1: out of memory (the entity is then not tracked and
 * is sent nothing). */
int witness_entered(witness *w, int32_t id);
void witness_left(witness *w, int32_t id);
/* Ids of the entities tracked (for lowering viewer counts), valid until the next change. */
size_t witness_ids(const witness *w, int32_t *out, size_t max);
size_t witness_count(const witness *w);
/* A client method call of entity `id` (allClients / otherClients) for this witness's client:
 * queued for the next send, before its departures (so it arrives after the entity's ENTER
 * and before its LEAVE). 1: the client was not introduced to it (nothing queued), 0 queued,
 * -1 the queue is full (WITNESS_CALLS_MAX bytes: dropped). */
#define WITNESS_CALLS_MAX 32768u /* well under a client message (64 KiB) with the rest of a run */
int witness_call(witness *w, int32_t id, uint16_t type, uint16_t method, const uint8_t *args,
                 size_t len);
/* The same for a call carried over from the witness's handed-over view (the client was
 * introduced to `id` already): queued without the check. 0, or -1 the queue is full. */
int witness_put_call(witness *w, int32_t id, uint16_t type, uint16_t method,
                     const uint8_t *args, size_t len);
/* The queued calls taken out, in order (for a view handed over to another cellapp): fn for
 * each (caller id, its type, method, arguments). Returns how many. */
typedef void (*witness_call_fn)(void *ctx, int32_t id, uint16_t type, uint16_t method,
                                const uint8_t *args, size_t len);
size_t witness_take_calls(witness *w, witness_call_fn fn, void *ctx);
/* Build this tick's records for the witness entity `ent`: the reliable run in *rel, the
 * volatile one in *vol (the witness's buffers, valid until its next build). 0, or -1 out of
 * memory (what was built is not to be sent). */
int witness_build(witness *w, const witness_env *env, mc_entity *ent, const mc_ostream **rel,
                  const mc_ostream **vol);
/* Everything leaves (queued calls first): the reliable run in *rel; the witness is empty
 * afterwards. 0 or -1. */
int witness_build_leave_all(witness *w, const witness_env *env, const mc_ostream **rel);

/* The witness goes on from a view handed over by the cellapp its entity was offloaded from
 * (docs/WORLD.md "Offloading"): its client knows itself and the entities `told` already, so
 * no ENTER of itself is sent, the told entities are tracked as introduced, and each (and the
 * witness itself) gets one PROPS of every client-visible value, as it is here, with its
 * position; told entities that are not in the view here leave it at the next update (the
 * caller seeds the view with them). 0, or -1 out of memory. */
int witness_handover(witness *w, const int32_t *told, size_t n);
/* The ids its client was introduced to (in view, or left but not yet told so): for a
 * handover. Returns how many (at most max written). */
size_t witness_told_ids(const witness *w, int32_t *out, size_t max);
/* Whether its client was sent the ENTER of the witness itself (a view can be handed over
 * only then: a client that never heard of its player must hear the ENTER). */
bool witness_own_introduced(const witness *w);

/* Its client is a new one (the base got a client, or another one took over): everything it
 * was told is forgotten, nothing is sent for it (no LEAVE), and the next send introduces the
 * witness itself and every entity in view afresh. */
void witness_reset(witness *w);

/* ---- witness_send.c: with the engine ---------------------------------------------------- */

/* An entity's client-visible properties as last diffed (NULL: none): the AoI's (aoi.c's
 * cell_aoi_shadow, with the engine as ctx), passed down so that this file sits below it. */
typedef client_shadow *(*witness_shadow_fn)(void *ctx, mc_entity *ent);
/* Build this tick's records and send them to the witness's base (CLIENT_UPDATE). */
void witness_send(mc_engine *e, mc_entity *ent, witness *w, witness_shadow_fn shadow);
/* Leave everything (the witness stopped being one): LEAVE for what its client was shown,
 * sent now; the witness is empty afterwards. */
void witness_leave_all(mc_engine *e, mc_entity *ent, witness *w, witness_shadow_fn shadow);

#endif
