/* The AoI grid: occupied cells in a chained hash table keyed by cell coordinates. */
#include "aoi_grid.h"

#include <math.h>
#include <stdlib.h>

/* Cell coordinates are clamped to this, so any finite position has a cell. */
#define GRID_COORD_MAX 1000000000

struct aoi_grid_cell {
    int32_t cx, cz;
    size_t count, cap;
    float *xs, *zs;                /* the nodes' positions, by slot */
    int32_t *ids;                  /* their ids */
    aoi_node **nodes;
    aoi_grid_cell *next_in_bucket;
};

static int32_t coord(const aoi_grid *g, float v)
{
    double c = floor((double)v / g->cell_size);
    if (!(c > -GRID_COORD_MAX))
        return -GRID_COORD_MAX;
    if (c > GRID_COORD_MAX)
        return GRID_COORD_MAX;
    return (int32_t)c;
}

static size_t bucket_of(const aoi_grid *g, int32_t cx, int32_t cz)
{
    uint64_t k = (uint64_t)(uint32_t)cx << 32 | (uint32_t)cz;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)(k & (g->nbuckets - 1));
}

int aoi_grid_init(aoi_grid *g, float cell_size)
{
    *g = (aoi_grid){0};
    if (!(cell_size > 0) || !isfinite(cell_size))
        return -1;
    g->cell_size = cell_size;
    g->nbuckets = 64;
    g->buckets = calloc(g->nbuckets, sizeof *g->buckets);
    return g->buckets ? 0 : -1;
}

static void free_cell(aoi_grid_cell *c)
{
    free(c->xs);
    free(c->zs);
    free(c->ids);
    free(c->nodes);
    free(c);
}

void aoi_grid_free(aoi_grid *g)
{
    for (size_t i = 0; g->buckets && i < g->nbuckets; i++) {
        aoi_grid_cell *c = g->buckets[i];
        while (c) {
            aoi_grid_cell *next = c->next_in_bucket;
            free_cell(c);
            c = next;
        }
    }
    free(g->buckets);
    *g = (aoi_grid){0};
}

static aoi_grid_cell *find_cell(const aoi_grid *g, int32_t cx, int32_t cz)
{
    for (aoi_grid_cell *c = g->buckets[bucket_of(g, cx, cz)]; c; c = c->next_in_bucket)
        if (c->cx == cx && c->cz == cz)
            return c;
    return NULL;
}

static void grow(aoi_grid *g)
{
    size_t n = g->nbuckets * 2;
    aoi_grid_cell **b = calloc(n, sizeof *b);
    if (!b)
        return; /* longer chains, still correct */
    aoi_grid_cell **old = g->buckets;
    size_t oldn = g->nbuckets;
    g->buckets = b;
    g->nbuckets = n;
    for (size_t i = 0; i < oldn; i++) {
        aoi_grid_cell *c = old[i];
        while (c) {
            aoi_grid_cell *next = c->next_in_bucket;
            size_t k = bucket_of(g, c->cx, c->cz);
            c->next_in_bucket = b[k];
            b[k] = c;
            c = next;
        }
    }
    free(old);
}

static aoi_grid_cell *get_cell(aoi_grid *g, int32_t cx, int32_t cz)
{
    aoi_grid_cell *c = find_cell(g, cx, cz);
    if (c)
        return c;
    c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cx = cx;
    c->cz = cz;
    size_t k = bucket_of(g, cx, cz);
    c->next_in_bucket = g->buckets[k];
    g->buckets[k] = c;
    if (++g->ncells > g->nbuckets)
        grow(g);
    return c;
}

static void drop_cell(aoi_grid *g, aoi_grid_cell *c)
{
    aoi_grid_cell **p = &g->buckets[bucket_of(g, c->cx, c->cz)];
    while (*p != c)
        p = &(*p)->next_in_bucket;
    *p = c->next_in_bucket;
    g->ncells--;
    free_cell(c);
}

/* Room for one more node in c: 0, or -1 out of memory (c unchanged). */
static int reserve(aoi_grid_cell *c)
{
    if (c->count < c->cap)
        return 0;
    size_t cap = c->cap ? c->cap * 2 : 8;
    float *xs = realloc(c->xs, cap * sizeof *xs);
    if (!xs)
        return -1;
    c->xs = xs;
    float *zs = realloc(c->zs, cap * sizeof *zs);
    if (!zs)
        return -1;
    c->zs = zs;
    int32_t *ids = realloc(c->ids, cap * sizeof *ids);
    if (!ids)
        return -1;
    c->ids = ids;
    aoi_node **nodes = realloc(c->nodes, cap * sizeof *nodes);
    if (!nodes)
        return -1;
    c->nodes = nodes;
    c->cap = cap;
    return 0;
}

/* Append n at (x, z) to c, which has room (reserve). */
static void link_node(aoi_grid_cell *c, aoi_node *n, float x, float z)
{
    size_t i = c->count++;
    c->xs[i] = x;
    c->zs[i] = z;
    c->ids[i] = n->id;
    c->nodes[i] = n;
    n->cell = c;
    n->slot = i;
    n->x = x;
    n->z = z;
}

/* Take n out of its cell: the cell's last node takes its slot. */
static void unlink_node(aoi_node *n)
{
    aoi_grid_cell *c = n->cell;
    size_t i = n->slot, last = --c->count;
    if (i != last) {
        c->xs[i] = c->xs[last];
        c->zs[i] = c->zs[last];
        c->ids[i] = c->ids[last];
        c->nodes[i] = c->nodes[last];
        c->nodes[i]->slot = i;
    }
    n->cell = NULL;
    n->slot = 0;
}

/* The cell for (cx, cz), with room for one more node; NULL out of memory (a cell made for it
 * is dropped again). */
static aoi_grid_cell *cell_with_room(aoi_grid *g, int32_t cx, int32_t cz)
{
    aoi_grid_cell *c = get_cell(g, cx, cz);
    if (c && reserve(c) != 0) {
        if (!c->count)
            drop_cell(g, c);
        return NULL;
    }
    return c;
}

int aoi_grid_insert(aoi_grid *g, aoi_node *n, float x, float z)
{
    aoi_grid_cell *c = cell_with_room(g, coord(g, x), coord(g, z));
    if (!c)
        return -1;
    link_node(c, n, x, z);
    g->count++;
    return 0;
}

int aoi_grid_move(aoi_grid *g, aoi_node *n, float x, float z)
{
    int32_t cx = coord(g, x), cz = coord(g, z);
    aoi_grid_cell *old = n->cell;
    if (old->cx == cx && old->cz == cz) {
        old->xs[n->slot] = x;
        old->zs[n->slot] = z;
        n->x = x;
        n->z = z;
        return 0;
    }
    aoi_grid_cell *c = cell_with_room(g, cx, cz);
    if (!c)
        return -1;
    unlink_node(n);
    link_node(c, n, x, z);
    if (!old->count)
        drop_cell(g, old);
    return 0;
}

void aoi_grid_remove(aoi_grid *g, aoi_node *n)
{
    aoi_grid_cell *c = n->cell;
    if (!c)
        return;
    unlink_node(n);
    g->count--;
    if (!c->count)
        drop_cell(g, c);
}

static void visit_cell(const aoi_grid_cell *c, float x, float z, float r2, aoi_visit_fn fn,
                       void *ctx)
{
    const float *xs = c->xs, *zs = c->zs;
    for (size_t i = 0; i < c->count; i++) {
        float dx = xs[i] - x, dz = zs[i] - z;
        float d2 = dx * dx + dz * dz;
        if (d2 <= r2)
            fn(ctx, c->nodes[i], c->ids[i], d2);
    }
}

void aoi_grid_query(const aoi_grid *g, float x, float z, float radius, aoi_visit_fn fn,
                    void *ctx)
{
    if (!g->count || !(radius >= 0))
        return;
    float r2 = radius * radius;
    int64_t x0 = coord(g, x - radius), x1 = coord(g, x + radius);
    int64_t z0 = coord(g, z - radius), z1 = coord(g, z + radius);
    uint64_t span = (uint64_t)(x1 - x0 + 1) * (uint64_t)(z1 - z0 + 1);
    if (span > g->ncells) {
        /* a radius wide compared to the cells: walk the occupied cells instead */
        for (size_t i = 0; i < g->nbuckets; i++)
            for (const aoi_grid_cell *c = g->buckets[i]; c; c = c->next_in_bucket)
                if (c->cx >= x0 && c->cx <= x1 && c->cz >= z0 && c->cz <= z1)
                    visit_cell(c, x, z, r2, fn, ctx);
        return;
    }
    for (int64_t cx = x0; cx <= x1; cx++)
        for (int64_t cz = z0; cz <= z1; cz++) {
            const aoi_grid_cell *c = find_cell(g, (int32_t)cx, (int32_t)cz);
            if (c)
                visit_cell(c, x, z, r2, fn, ctx);
        }
}
