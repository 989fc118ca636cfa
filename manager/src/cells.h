/* Cells of spaces (docs/WORLD.md "Cells"): the cellapp-manager part of the manager keeps,
 * per space, a binary partition of the x/z plane (BigWorld's CellAppMgr BSP): internal
 * nodes split a rectangle at x = at or z = at, leaves are cells, each served by one
 * cellapp (a cellapp serves at most one cell of a space). A space starts as one cell, the
 * whole plane, on the cellapp that holds it; a split halves a cell and gives the upper
 * half (x >= at or z >= at) to another cellapp; a cellapp that leaves the space (its space
 * went, it died or stopped) has its cell merged into its sibling.
 *
 * Pure bookkeeping (no I/O): at most `max_spaces` spaces and `max_cells` cells per space.
 * Every change bumps the space's version (what cellapps order layouts by). */
#ifndef MC_MANAGER_CELLS_H
#define MC_MANAGER_CELLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_CELLS_SPACES_DEFAULT 65536u
#define MC_CELLS_SPACES_MIN 16u
#define MC_CELLS_SPACES_MAX 10000000u
#define MC_CELLS_PER_SPACE_DEFAULT 64u
/* where a cell unbounded on the split axis is split: this far inside its bounded side, or
 * at 0 when both sides are open */
#define MC_CELLS_OPEN_SPLIT_M 1000.0f

typedef struct mc_cells mc_cells;

typedef struct {
    float x_min, z_min, x_max, z_max; /* x_min <= x < x_max, z_min <= z < z_max; +/-inf open */
    uint32_t process_id;              /* the cellapp serving it */
} mc_cell_rect;

typedef enum {
    MC_CELLS_OK = 0,        /* changed */
    MC_CELLS_UNCHANGED,     /* nothing to do (already so) */
    MC_CELLS_NO_SPACE,      /* no such space */
    MC_CELLS_FULL,          /* as many spaces as allowed */
    MC_CELLS_TOO_MANY,      /* the space has as many cells as allowed */
    MC_CELLS_SERVED,        /* split: that cellapp serves the space already */
    MC_CELLS_CONFLICT,      /* add: the space is served by others (not by this cellapp) */
    MC_CELLS_BAD_POSITION,  /* split: `at` is not strictly inside the cell */
    MC_CELLS_NO_MEMORY,
} mc_cells_status;

const char *mc_cells_status_name(mc_cells_status st);

/* NULL when out of memory (max_spaces clamped to MIN..MAX, max_cells to 2..256). */
mc_cells *mc_cells_new(size_t max_spaces, size_t max_cells);
void mc_cells_free(mc_cells *c);

/* A cellapp holds space: a new space gets one cell, the whole plane, served by it (OK);
 * UNCHANGED when it serves the space already; CONFLICT when others serve it. */
mc_cells_status mc_cells_add_space(mc_cells *c, int32_t space, uint32_t process_id);
/* Split the cell of `victim` (a cellapp serving space): the cell's upper half goes to
 * new_process. The axis alternates with depth (x at the root); `at` is the split position
 * when has_at, else the middle of the cell on that axis (MC_CELLS_OPEN_SPLIT_M for an open
 * side). */
mc_cells_status mc_cells_split(mc_cells *c, int32_t space, uint32_t victim,
                               uint32_t new_process, bool has_at, float at);
/* The cellapp no longer serves space: its cell merges into its sibling; the last cell's
 * going drops the space (*dropped). UNCHANGED when it did not serve it. */
mc_cells_status mc_cells_remove(mc_cells *c, int32_t space, uint32_t process_id,
                                bool *dropped);

/* The cell of `from` (a cellapp serving space) is served by `to` from now on, its rectangle
 * unchanged (a retiring cellapp handing a space it serves whole to another): OK;
 * UNCHANGED when from serves no cell of it, SERVED when to serves one already, NO_SPACE. */
mc_cells_status mc_cells_reassign(mc_cells *c, int32_t space, uint32_t from, uint32_t to);

/* Whether process's cell of space holds entities (a new space's cell does, a split's new
 * cell does not): OK when it changed, UNCHANGED, NO_SPACE when it serves no cell of it. */
mc_cells_status mc_cells_set_empty(mc_cells *c, int32_t space, uint32_t process_id, bool empty);
/* Every cell of space is empty (false for no such space). */
bool mc_cells_all_empty(const mc_cells *c, int32_t space);
/* Forget space (all its cells). */
void mc_cells_drop(mc_cells *c, int32_t space);

/* Load balancing (BigWorld's CellAppMgr moving partitions): every split of space whose two
 * sides' loads (the costliest cell of each side: load_of(ctx, space, its cellapp)) differ
 * by more than
 * `hysteresis` moves toward the busier side by at most `step` metres, never closer than
 * MC_CELLS_MIN_SPAN_M to a bounded side of its rectangle. Returns how many splits moved
 * (the version is bumped when any did). */
#define MC_CELLS_MIN_SPAN_M 1.0f
typedef double (*mc_cells_load_fn)(void *ctx, int32_t space, uint32_t pid);
size_t mc_cells_balance(mc_cells *c, int32_t space, mc_cells_load_fn load_of, void *ctx,
                        float step, double hysteresis);

bool mc_cells_has_space(const mc_cells *c, int32_t space);
/* The cells of space in tree order (at most max written; returns how many there are, 0
 * for no such space) and its version. */
size_t mc_cells_layout(const mc_cells *c, int32_t space, mc_cell_rect *out, size_t max,
                       uint32_t *version);
/* Whether process serves space (its rectangle in *out when out is not NULL). */
bool mc_cells_served_by(const mc_cells *c, int32_t space, uint32_t process_id,
                        mc_cell_rect *out);
/* The axis a split of process's cell of space would cut (0: x, 1: z), or -1 when it serves
 * no cell of it. */
int mc_cells_split_axis(const mc_cells *c, int32_t space, uint32_t process_id);
/* When process's cell of space has a sibling that is a cell too (not a subtree), true with
 * the sibling's cellapp in *sibling: removing either merges the two into one rectangle. */
bool mc_cells_sibling(const mc_cells *c, int32_t space, uint32_t process_id, uint32_t *sibling);
/* The spaces, by index (0 .. count-1; indices change when a space goes). */
size_t mc_cells_space_count(const mc_cells *c);
int32_t mc_cells_space_at(const mc_cells *c, size_t i);
size_t mc_cells_max_cells(const mc_cells *c);

#endif
