/* Cells on the cellapp (docs/WORLD.md "Cells"): the layout the manager sends for each space
 * this cellapp serves a cell of (CELL_LAYOUT): every cell's rectangle of the x/z plane and
 * the cellapp serving it, this cellapp's own among them. A space with no layout is served
 * whole by this cellapp (one cell, the whole plane: a space that was never split).
 *
 * cell_layout_parse is pure (a fuzz target): it checks everything a layout says. */
#ifndef MC_CELLAPP_CELL_LAYOUT_H
#define MC_CELLAPP_CELL_LAYOUT_H

#include "mercury/address.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    float x_min, z_min, x_max, z_max; /* x_min <= x < x_max, z_min <= z < z_max */
    uint32_t process_id;
    mc_address addr;
    /* what its cellapp told of its reach (GHOST_REACH, ghost_reach.c; not in CELL_LAYOUT):
     * the metres its witnesses see, 0 when none beyond the cellapp's own; and when (clock us) */
    float reach;
    uint64_t reach_at;
} cell_rect;

typedef struct cell_layout {
    int32_t space;
    uint32_t version;
    uint64_t manager_instance;
    cell_rect *cells; /* n of them */
    size_t n;
    int own;          /* index of this cellapp's cell, -1: it serves none */
} cell_layout;

/* Decode and check a CELL_LAYOUT payload (self: this cellapp's internal address): false
 * with a one-line reason for anything malformed (not protobuf, space id <= 0, more than
 * MC_CELLS_PER_SPACE_MAX cells, a bound NaN or a rectangle empty, an address that is not
 * IP:PORT, a cellapp or address twice). On success *out is filled (free with
 * cell_layout_clear). */
bool cell_layout_parse(const uint8_t *data, size_t len, const mc_address *self,
                       cell_layout *out, char *why, size_t whylen);
void cell_layout_clear(cell_layout *l);
/* Does the rectangle hold (x, z)? */
bool cell_rect_contains(const cell_rect *r, float x, float z);
/* "x[-inf,0) z[-inf,inf)" */
void cell_rect_text(const cell_rect *r, char *out, size_t n);

#endif
