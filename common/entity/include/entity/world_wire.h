/* World updates: what a cellapp tells a player's client about the entities its player's
 * cell entity (a witness) sees (docs/WORLD.md, docs/PROTOCOL.md "World updates").
 *
 * Each tick the cellapp writes, per witness, a run of records and sends it to the witness's
 * base (CLIENT_UPDATE, an entity message), which hands it to its client: the reliable run
 * (entries, departures, property changes) on the client channel's reliable stream, the
 * volatile run (positions and directions, latest wins) unreliably.
 *
 *   record    bytes
 *   ENTER     u8 1, i32 id, u16 type, 3 x f32 position, 3 x f32 direction, u16 n,
 *             n x (u16 property index, value)
 *   LEAVE     u8 2, i32 id
 *   PROPS     u8 3, i32 id, u16 n, n x (u16 property index, value)
 *   VOLATILE  u8 4, i32 id, 3 x f32 position, 3 x f32 direction
 *   CALL      u8 5, i32 id, u16 client method index, the arguments (allClients /
 *             otherClients of that entity)
 *   CORRECTION u8 6, i32 id, 3 x f32 position, 3 x f32 direction: the player's own entity
 *             is here (a move from its client was refused)
 *
 * A property index is the property's index in its type (mc_def_property.index); a value is
 * encoded as its def type (common/defs value encoding). Integers are big-endian. The parser
 * is pure: it checks every record against the defs (type ids, property indices, that the
 * property is one the receiver may see, values, finite numbers), never aborts, and says why
 * in one line when it refuses.
 */
#ifndef MC_ENTITY_WORLD_WIRE_H
#define MC_ENTITY_WORLD_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"
#include "common/entity_api.h"
#include "common/stream.h"
#include "common/value.h"

enum {
    MC_WORLD_ENTER = 1,
    MC_WORLD_LEAVE = 2,
    MC_WORLD_PROPS = 3,
    MC_WORLD_VOLATILE = 4,
    MC_WORLD_CALL = 5,
    MC_WORLD_CORRECTION = 6,
};

/* CLIENT_UPDATE flags. */
#define MC_WORLD_FLAG_VOLATILE 0x01u

/* Sizes of the fixed parts (the budget counts them). */
#define MC_WORLD_ENTER_HEAD 33u   /* kind, id, type, position, direction, n */
#define MC_WORLD_LEAVE_SIZE 5u
#define MC_WORLD_PROPS_HEAD 7u    /* kind, id, n */
#define MC_WORLD_VOLATILE_SIZE 29u
#define MC_WORLD_CALL_HEAD 7u     /* kind, id, method */

/* Writers. An ENTER or PROPS head is followed by n x (u16 index, value): the caller writes
 * them (mc_world_write_prop_index, then the value) and may patch n afterwards at the offset
 * *n_at (mc_store_u16 on the stream's data). */
void mc_world_write_enter(mc_ostream *os, int32_t id, uint16_t type, mc_vector3 position,
                          mc_vector3 direction, uint16_t n, size_t *n_at);
void mc_world_write_leave(mc_ostream *os, int32_t id);
void mc_world_write_props(mc_ostream *os, int32_t id, uint16_t n, size_t *n_at);
void mc_world_write_prop_index(mc_ostream *os, uint16_t index);
void mc_world_write_volatile(mc_ostream *os, int32_t id, mc_vector3 position,
                             mc_vector3 direction);
void mc_world_write_correction(mc_ostream *os, int32_t id, mc_vector3 position,
                               mc_vector3 direction);
/* A CALL with its already encoded arguments. */
void mc_world_write_call(mc_ostream *os, int32_t id, uint16_t method, const uint8_t *args,
                         size_t len);

/* What the parser hands over, one call per record; props (with their def) are valid during
 * the call only. Return 0 to go on, non-zero to stop (the parse returns it). */
typedef struct {
    int kind;                          /* MC_WORLD_* */
    int32_t id;
    uint16_t type;                     /* ENTER */
    mc_vector3 position, direction;    /* ENTER, VOLATILE, CORRECTION */
    size_t n;                          /* ENTER, PROPS: properties; CALL: arguments */
    const mc_def_property *const *props; /* ENTER, PROPS (NULL for CALL) */
    const mc_value *values;            /* the properties' values, or CALL's arguments */
    const mc_def_method *method;       /* CALL: a client method of the entity's type */
} mc_world_record;

typedef int (*mc_world_record_fn)(void *ctx, const mc_world_record *r);

/* Which properties a record may carry: other entities' (OTHER_CLIENTS, ALL_CLIENTS), or,
 * for the player's own entity (own_id), also the OWN_CLIENT ones of the cell. */
/* Parse a run of records. 0 when every record decoded (and fn returned 0 for each), the
 * first non-zero return of fn, or -1 with the reason in why (malformed: nothing after the
 * bad record is looked at). ENTER types are checked against the defs; PROPS and CALL need
 * the entity's type: type_of(ctx, id) returns it, or -1 for an entity the receiver does not
 * know (then the record is refused as malformed). */
int mc_world_parse(const mc_entity_defs *defs, int32_t own_id, const uint8_t *data,
                   size_t len, int (*type_of)(void *ctx, int32_t id), mc_world_record_fn fn,
                   void *ctx, char *why, size_t whylen);

#endif
