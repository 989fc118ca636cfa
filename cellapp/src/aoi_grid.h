/* A uniform grid over a space's ground plane (x, z): the cell entities of a space by square
 * grid cell, so that "who is within r of this point" costs in proportion to the entities
 * near the point, not to the entities in the space. Only occupied grid cells exist (a hash
 * table of them), so a space may be of any size. docs/WORLD.md says why a grid.
 *
 * A node is embedded in whatever it locates (the cellapp's per-entity AoI state); the grid
 * links it into its cell's list and never allocates per node.
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
    struct aoi_node *prev, *next;  /* within its cell */
    void *owner;                   /* what the node locates */
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

/* Visit every node whose distance on the plane from (x, z) is at most radius (fn gets the
 * squared distance). fn must not insert, move or remove nodes. */
typedef void (*aoi_visit_fn)(void *ctx, aoi_node *n, float dist2);
void aoi_grid_query(const aoi_grid *g, float x, float z, float radius, aoi_visit_fn fn,
                    void *ctx);

#endif
