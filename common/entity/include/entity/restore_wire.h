/* Cells restored after their cellapp died (docs/ARCHITECTURE.md "Faults", docs/WORLD.md
 * "Cells restored"): the messages, encoded and decoded in one place.
 *
 *   id  message       direction               payload
 *   56  CELL_COPY     cellapp -> baseapp       i32 entity id, i32 space id, 6 x f32 position
 *                                              and direction, the cell properties (part
 *                                              stream, every cell property): the base keeps
 *                                              it as its cellData
 *   57  RESTORE_CELL  baseapp -> cellapp, req. i32 space id, then a CREATE_CELL payload
 *                                              (near id 0): the cell joins that space here,
 *                                              which is made with that id when it is not
 *                                              here; reply as CREATE_CELL's
 *
 * Decoders take bytes from a peer: they check everything, never abort, and say why in one
 * line when they refuse. */
#ifndef MC_ENTITY_RESTORE_WIRE_H
#define MC_ENTITY_RESTORE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/game_module.h"
#include "common/stream.h"

enum {
    MC_MSG_CELL_COPY = 56,
    MC_MSG_RESTORE_CELL = 57,
};

/* CELL_COPY up to the cell properties (which follow as the part stream of the type). */
typedef struct {
    int32_t entity_id;
    int32_t space_id;
    mc_vector3 position, direction;
} mc_cell_copy_head;
void mc_cell_copy_encode(mc_ostream *os, const mc_cell_copy_head *h);
/* False (the reason in why) when malformed: short, an id or space id not positive, a
 * position or direction not finite. The stream is left at the cell properties. */
bool mc_cell_copy_decode(mc_istream *is, mc_cell_copy_head *h, char *why, size_t whylen);

/* RESTORE_CELL's space id (the CREATE_CELL payload follows). False (the reason in why) when
 * short or not positive. */
void mc_restore_cell_encode(mc_ostream *os, int32_t space_id);
bool mc_restore_cell_decode(mc_istream *is, int32_t *space_id, char *why, size_t whylen);

#endif
