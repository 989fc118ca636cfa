/* A uniform grid over a space's ground plane (x, z): the cell entities of a space by square
 * grid cell, so that "who is within r of this point" costs in proportion to the entities
 * near the point, not to the entities in the space. Only occupied grid cells exist (a hash
 * table of them), so a space may be of any size. docs/WORLD.md says why a grid.
 *
 * A node is embedded in whatever it locates (the cellapp's per-entity AoI state). Each grid
 * cell keeps its nodes' positions in flat arrays (x, z and the node, by slot), so a query
 * scans contiguous floats and touches a node only when it is in range; the arrays grow by
 * doubling, so the grid allocates per cell, not per node.
 */
#ifndef MC_CELLAPP_AOI_GRID_H
#define MC_CELLAPP_AOI_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct aoi_grid_cell aoi_grid_cell;

typedef struct aoi_node {
    float x, z;
    aoi_grid_cell *cell;           /* NULL while not in a grid */
    size_t slot;                   /* its index in its cell's arrays */
    void *owner;                   /* what the node locates */
    int32_t id;                    /* the owner's id, set before the node is inserted (the
                                    * grid keeps a copy: queries need not touch the node) */
} aoi_node;

typedef struct {
    float cell_size;
    aoi_grid_cell **buckets;       /* hash of occupied cells by (cx, cz) */
    size_t nbuckets;
    size_t ncells;                 /* occupied cells */
    size_t count;                  /* nodes */
} aoi_grid;

/* cell_size > 0 (finite). 0, or -1 out of memory / bad size. */
int aoi_grid_init(aoi_grid *g, float cell_size);
/* The grid must be empty of nodes it still links, or they are left dangling: remove them
 * first (the cellapp frees a space's grid once its last entity has gone). */
void aoi_grid_free(aoi_grid *g);
/* Put n (not in a grid) at (x, z); 0, or -1 out of memory (n stays out). */
int aoi_grid_insert(aoi_grid *g, aoi_node *n, float x, float z);
/* Move n (in g) to (x, z); 0, or -1 out of memory (n stays where it was). */
int aoi_grid_move(aoi_grid *g, aoi_node *n, float x, float z);
void aoi_grid_remove(aoi_grid *g, aoi_node *n);

/* Visit every node whose distance on the plane from (x, z) is at most radius (fn gets its
 * id and the squared distance). fn must not insert, move or remove nodes. */
typedef void (*aoi_visit_fn)(void *ctx, aoi_node *n, int32_t id, float dist2);
void aoi_grid_query(const aoi_grid *g, float x, float z, float radius, aoi_visit_fn fn,
                    void *ctx);

#endif
