/* Ghosts (docs/WORLD.md "Reals and ghosts"): the messages a real's cellapp sends the
 * cellapps whose cells lie within the ghost distance of it, encoded and decoded in one
 * place.
 *
 *   id  message       direction               payload
 *   70  GHOST_DATA    cellapp -> cellapp       i32 entity id, u16 type, i32 space id, 6 x f32
 *                                              position and direction, u16 n, then n x (u16
 *                                              property index, value): the entity's ghosted
 *                                              cell properties (CELL_PUBLIC, OTHER_CLIENTS,
 *                                              ALL_CLIENTS, CELL_PUBLIC_AND_OWN), every one;
 *                                              the ghost is made, or brought up to date
 *   71  GHOST_DELETE  cellapp -> cellapp       i32 entity id: the ghost goes
 *   79  GHOST_CLIENT_CALL cellapp -> cellapp   i32 entity id, u16 client method index, then
 *                                              the arguments to the end: a call on the real's
 *                                              allClients / otherClients, for the clients of
 *                                              the witnesses there that see its ghost
 *                                              (still taken; no longer sent: 91 replaced it)
 *   91  GHOST_CLIENT_CALL_SEQ cellapp -> cellapp i32 entity id, u16 client method index, u32
 *                                              call number (> 0: the real's own count of its
 *                                              client calls, kept across offloads), then the
 *                                              arguments to the end: as 79, numbered so that
 *                                              an offloaded witness hears each call once
 *   93  GHOST_REACH   cellapp -> cellapp       i32 space id, f32 reach (metres): the largest
 *                                              radius + hysteresis of the witnesses the
 *                                              sender's cell of the space holds, 0 when none
 *                                              is beyond the sender's --aoiRadius +
 *                                              --aoiHysteresis; the receiver ghosts its reals
 *                                              to that cell within reach + --ghostMargin
 *                                              (the reach at most MC_GHOST_REACH_MAX; one
 *                                              beyond the receiver's --aoiMaxRadius is
 *                                              clamped to it there)
 *   GHOST_DATA may end with a u32: the real's client call number when it was sent (a ghost
 *   made or updated knows which calls came before it); without it, 0.
 *
 * Decoders take bytes from a peer: they check everything, never abort, and say why in one
 * line when they refuse. */
#ifndef MC_ENTITY_GHOST_WIRE_H
#define MC_ENTITY_GHOST_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/game_module.h"
#include "common/stream.h"

enum {
    MC_MSG_GHOST_DATA = 70,
    MC_MSG_GHOST_DELETE = 71,
    MC_MSG_GHOST_CLIENT_CALL = 79,
    MC_MSG_GHOST_CLIENT_CALL_SEQ = 91,
    MC_MSG_GHOST_REACH = 93,
};

/* GHOST_DATA up to the properties (u16 n, then n x (index, value) follow). */
typedef struct {
    int32_t entity_id;
    uint16_t type;
    int32_t space_id;
    mc_vector3 position, direction;
    uint16_t nprops;
} mc_ghost_head;
void mc_ghost_head_encode(mc_ostream *os, const mc_ghost_head *h);
/* False (the reason in why) when malformed: short, an entity or space id not positive, a
 * position or direction not finite. The stream is left at the first property. */
bool mc_ghost_head_decode(mc_istream *is, mc_ghost_head *h, char *why, size_t whylen);
void mc_ghost_delete_encode(mc_ostream *os, int32_t entity_id);
bool mc_ghost_delete_decode(mc_istream *is, int32_t *entity_id, char *why, size_t whylen);

/* GHOST_CLIENT_CALL: the arguments are the method's, encoded as for any call (the receiver
 * checks them against the method's def). */
void mc_ghost_call_encode(mc_ostream *os, int32_t entity_id, uint16_t method,
                          const uint8_t *args, size_t len);
/* False (the reason in why) when short or the entity id is not positive; *args points into
 * the stream's bytes (len of them, possibly 0) and the stream is consumed. */
bool mc_ghost_call_decode(mc_istream *is, int32_t *entity_id, uint16_t *method,
                          const uint8_t **args, size_t *len, char *why, size_t whylen);
/* GHOST_CLIENT_CALL_SEQ: the same with the call's number (seq > 0) after the method. */
void mc_ghost_call_seq_encode(mc_ostream *os, int32_t entity_id, uint16_t method, uint32_t seq,
                              const uint8_t *args, size_t len);
/* False (the reason in why) when short, the entity id not positive or the number 0. */
bool mc_ghost_call_seq_decode(mc_istream *is, int32_t *entity_id, uint16_t *method,
                              uint32_t *seq, const uint8_t **args, size_t *len, char *why,
                              size_t whylen);

/* GHOST_REACH (docs/WORLD.md "Witnesses that see far"). The largest reach the protocol
 * carries: the upper end of --aoiMaxRadius (a cellapp whose own limit is lower takes a
 * larger reach clamped to it, not refused). */
#define MC_GHOST_REACH_MAX 2000000.0f
void mc_ghost_reach_encode(mc_ostream *os, int32_t space_id, float reach);
/* False (the reason in why) when short, with trailing bytes, a space id not positive, or a
 * reach that is not finite, negative or beyond MC_GHOST_REACH_MAX. */
bool mc_ghost_reach_decode(mc_istream *is, int32_t *space_id, float *reach, char *why,
                           size_t whylen);

#endif
