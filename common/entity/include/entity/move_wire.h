/* The messages that move a cell entity to another cellapp (a teleport into a space held
 * elsewhere; docs/WORLD.md "Teleports", docs/PROTOCOL.md "Entity messages"):
 *
 *   id  message            direction                       payload
 *   41  CELL_MIGRATE       old cellapp -> new, request     the CREATE_CELL head (entity id,
 *                          reply: i8 status, i32 space id,  type, near id, base MAILBOX,
 *                          string reason                    position, direction), u8 flags
 *                                                           (bit 0 witness), f32 AoI radius,
 *                                                           f32 hysteresis, u16 n timers,
 *                                                           n x (u32 id, u64 remaining us,
 *                                                           u64 repeat us, i64 user arg),
 *                                                           the cell properties (part stream)
 *   42  CELL_MOVED         old cellapp -> the base's       i32 entity id, CELL MAILBOX of the
 *                          baseapp, request; reply: i8      cell at its new cellapp
 *                          status, string reason
 *   43  CELL_MIGRATE_END   old cellapp -> new              i32 entity id, u8 outcome (0 commit:
 *                                                           the old copy is gone, start it;
 *                                                           1 abort: drop it; 2 flushed: the
 *                                                           base knows the new address and
 *                                                           every forwarded call came before)
 *   90  WITNESS_CALLS      old cellapp -> new              i32 entity id, u16 n, n x (i32
 *                                                           caller id, u16 caller type, u16
 *                                                           client method, blob arguments):
 *                                                           an offloaded witness's client calls
 *                                                           (allClients / otherClients of the
 *                                                           entities it sees) that were queued
 *                                                           or reached it while it moved, in
 *                                                           order; sent just before the
 *                                                           "flushed" CELL_MIGRATE_END
 *   92  WITNESS_HEARD      old cellapp -> new              i32 entity id, u32 n, n x (i32
 *                                                           caller id, u32 call number): for
 *                                                           the entities its client knows,
 *                                                           the last numbered client call
 *                                                           (GHOST_CLIENT_CALL_SEQ) its client
 *                                                           heard or is carried; sent just
 *                                                           before WITNESS_CALLS
 *
 * Encoders and pure decoders: a decoder never aborts, allocates only what it hands back and
 * says why in one line when it refuses. */
#ifndef MC_ENTITY_MOVE_WIRE_H
#define MC_ENTITY_MOVE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/game_module.h"
#include "common/stream.h"
#include "entity/wire.h"
#include "mercury/address.h"

enum {
    MC_MSG_CELL_MIGRATE = 41,
    MC_MSG_CELL_MOVED = 42,
    MC_MSG_CELL_MIGRATE_END = 43,
    MC_MSG_WITNESS_CALLS = 90,
    MC_MSG_WITNESS_HEARD = 92,
};

/* Timers one migrating entity may carry, and the longest remaining time or period (as the
 * engine's addTimer allows: 1e7 s). */
#define MC_MIGRATE_TIMERS_MAX 4096u
#define MC_MIGRATE_TIMER_US_MAX 10000000000000ull

typedef struct {
    uint32_t id;            /* the engine's timer id (kept by the new cellapp) */
    uint64_t remaining_us;  /* until it next fires */
    uint64_t repeat_us;     /* 0: once */
    int64_t user_arg;
} mc_migrate_timer;

typedef struct {
    mc_create_cell_head cell; /* near_id: the cell whose space it joins (> 0) */
    bool witness;
    float radius, hysteresis; /* its own AoI radius (0: the cellapp's) */
    mc_migrate_timer *timers; /* heap (decoder) or the caller's (encoder) */
    size_t ntimers;
    /* An offloaded witness's view handed over (flags bit 1, only with bit 0): the ids its
     * client was introduced to, so that the new cellapp goes on from them and the client
     * hears nothing of the move. */
    bool handover;
    int32_t *told;            /* heap (decoder) or the caller's (encoder) */
    size_t ntold;
    /* An offloaded real's ghost holders beside the receiver (flags bit 2, sent when there
     * are any): the cellapps the new real keeps as its own ghosts' holders, so that their
     * ghosts are not deleted and made again (their witnesses see nothing happen). */
    mc_address *holders;      /* heap (decoder) or the caller's (encoder) */
    size_t nholders;
    /* The real's numbered client calls so far (flags bit 3, sent when > 0; 0 from older
     * senders): the new real numbers on from it, on every move, so that a third cellapp's
     * ghost never takes the new real's calls as ones it heard already. */
    uint32_t calls_seq;
} mc_migrate_head;
/* The most ids a handed-over view carries. */
#define MC_MIGRATE_TOLD_MAX 100000u
/* The most ghost holders a CELL_MIGRATE names (a space's cells at most). */
#define MC_MIGRATE_HOLDERS_MAX 256u

/* CELL_MIGRATE up to the cell properties (which follow as the part stream of the type). */
void mc_migrate_encode(mc_ostream *os, const mc_migrate_head *h);
/* False (the reason in why, nothing held) when malformed: the CREATE_CELL head's rules, a
 * near id of 0, flags other than bits 0 to 3 (bit 1 without bit 0), with bit 3 a call
 * number of 0, more than
 * MC_MIGRATE_TOLD_MAX handed-over ids or an id not positive, with bit 2 no holder, more
 * than MC_MIGRATE_HOLDERS_MAX, one with a zero IP or port or one named twice, a radius or
 * hysteresis negative or not finite, more
 * than MC_MIGRATE_TIMERS_MAX timers, a timer id of 0 or repeated, times beyond
 * MC_MIGRATE_TIMER_US_MAX. The stream is left at the cell properties; free with
 * mc_migrate_free. */
bool mc_migrate_decode(const mc_entity_defs *defs, mc_istream *is, mc_migrate_head *h,
                       char *why, size_t whylen);
void mc_migrate_free(mc_migrate_head *h);

/* CELL_MOVED: the entity's new CELL mailbox. False when malformed (not exactly 16 bytes, id
 * not positive, a mailbox that is not the CELL of that entity). */
void mc_cell_moved_encode(mc_ostream *os, int32_t entity_id, const mc_mailbox_ref *cell);
bool mc_cell_moved_decode(const mc_entity_defs *defs, mc_istream *is, int32_t *entity_id,
                          mc_mailbox_ref *cell, char *why, size_t whylen);

/* CELL_MIGRATE_END. False when malformed (not exactly 5 bytes, id not positive, outcome
 * other than 0, 1 or 2). */
#define MC_MIGRATE_COMMIT 0u
#define MC_MIGRATE_ABORT 1u
#define MC_MIGRATE_FLUSHED 2u
void mc_migrate_end_encode(mc_ostream *os, int32_t entity_id, uint8_t outcome);
bool mc_migrate_end_decode(mc_istream *is, int32_t *entity_id, uint8_t *outcome);

/* WITNESS_CALLS: the head, then n entries (the carried calls are kept as entries, so the
 * message is the head and the bytes of the entries). At most MC_WITNESS_CALLS_MAX entries;
 * the arguments of one at most MC_WITNESS_CALL_ARGS_MAX bytes. */
#define MC_WITNESS_CALLS_MAX 4096u
#define MC_WITNESS_CALL_ARGS_MAX 65535u
typedef struct {
    int32_t id;          /* the calling entity */
    uint16_t type;       /* its type */
    uint16_t method;     /* a client method of that type */
    const uint8_t *args; /* into the stream read */
    size_t len;
} mc_witness_call;
void mc_witness_calls_head_encode(mc_ostream *os, int32_t entity_id, uint16_t n);
void mc_witness_call_encode(mc_ostream *os, const mc_witness_call *c);
/* False when malformed (id not positive, n beyond MC_WITNESS_CALLS_MAX). */
bool mc_witness_calls_head_decode(mc_istream *is, int32_t *entity_id, uint16_t *n);
/* One entry; false when malformed (caller id not positive, arguments too long or cut). The
 * type and method are checked against the defs by the receiver. */
bool mc_witness_call_decode(mc_istream *is, mc_witness_call *c);

/* WITNESS_HEARD: the head (n at most MC_MIGRATE_TOLD_MAX), then n (caller id, number). */
typedef struct {
    int32_t id;   /* an entity the client knows */
    uint32_t seq; /* the last of its numbered client calls the client heard (or is carried) */
} mc_witness_heard;
void mc_witness_heard_encode(mc_ostream *os, int32_t entity_id, const mc_witness_heard *h,
                             size_t n);
/* False when malformed (id not positive, n beyond MC_MIGRATE_TOLD_MAX, short, a caller id
 * not positive, trailing bytes); *out on the heap (free it), NULL when n is 0. */
bool mc_witness_heard_decode(mc_istream *is, int32_t *entity_id, mc_witness_heard **out,
                             size_t *n);

#endif
