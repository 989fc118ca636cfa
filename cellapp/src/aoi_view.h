/* A witness's view: the ids of the entities it sees, kept with hysteresis. An entity comes
 * into view when it is within `radius` of the witness and leaves only once it is farther
 * than radius + hysteresis, so one walking along the edge does not flicker in and out.
 * aoi_view_update recomputes the view from the grid (one query of radius + hysteresis) and
 * reports the differences; the view holds ids, never pointers, so an entity that was freed
 * in the meantime simply is not found again and leaves.
 */
#ifndef MC_CELLAPP_AOI_VIEW_H
#define MC_CELLAPP_AOI_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "aoi_grid.h"

typedef struct {
    float radius, hysteresis;
    int32_t *ids;          /* sorted */
    size_t n, cap;
    int32_t *scratch;      /* the next view, built by update (then swapped with ids) */
    size_t scratch_cap;
    int32_t *diff;         /* entered then left, as last reported */
    size_t diff_cap;
} aoi_view;

void aoi_view_init(aoi_view *v, float radius, float hysteresis);
void aoi_view_free(aoi_view *v);
/* Whether id is in view (binary search). */
int aoi_view_has(const aoi_view *v, int32_t id);

/* Recompute the view of the witness at (x, z) whose own id is self (never in its view).
 * entered / left receive the ids that came and went (sorted, valid until the next update
 * or free; counts in *nentered, *nleft). 0, or -1 out of memory (the view is unchanged). */
int aoi_view_update(aoi_view *v, const aoi_grid *g, float x, float z, int32_t self,
                    int32_t **entered, size_t *nentered, int32_t **left, size_t *nleft);
/* Start from these ids (any order; the witness's own id and repeats are dropped): the view
 * a witness handed over by its old cellapp had. 0, or -1 out of memory. */
int aoi_view_seed(aoi_view *v, const int32_t *ids, size_t n, int32_t self);
/* Forget everything (the witness stopped being one, or left the space); the old ids are
 * given in *left (valid until the next call). */
void aoi_view_clear(aoi_view *v, int32_t **left, size_t *nleft);

#endif
