/* The AoI grid: occupied cells in a chained hash table keyed by cell coordinates. */
#include "aoi_grid.h"

#include <math.h>
#include <stdlib.h>

/* Cell coordinates are clamped to this, so any finite position has a cell. */
#define GRID_COORD_MAX 1000000000

struct aoi_grid_cell {
    int32_t cx, cz;
    aoi_node *head;
    size_t count;
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

void aoi_grid_free(aoi_grid *g)
{
    for (size_t i = 0; g->buckets && i < g->nbuckets; i++) {
        aoi_grid_cell *c = g->buckets[i];
        while (c) {
            aoi_grid_cell *next = c->next_in_bucket;
            free(c);
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
    free(c);
}

static void link_node(aoi_grid_cell *c, aoi_node *n)
{
    n->cell = c;
    n->prev = NULL;
    n->next = c->head;
    if (c->head)
        c->head->prev = n;
    c->head = n;
    c->count++;
}

static void unlink_node(aoi_node *n)
{
    aoi_grid_cell *c = n->cell;
    if (n->prev)
        n->prev->next = n->next;
    else
        c->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    c->count--;
    n->cell = NULL;
    n->prev = n->next = NULL;
}

int aoi_grid_insert(aoi_grid *g, aoi_node *n, float x, float z)
{
    aoi_grid_cell *c = get_cell(g, coord(g, x), coord(g, z));
    if (!c)
        return -1;
    n->x = x;
    n->z = z;
    link_node(c, n);
    g->count++;
    return 0;
}

int aoi_grid_move(aoi_grid *g, aoi_node *n, float x, float z)
{
    int32_t cx = coord(g, x), cz = coord(g, z);
    aoi_grid_cell *old = n->cell;
    if (old->cx != cx || old->cz != cz) {
        aoi_grid_cell *c = get_cell(g, cx, cz);
        if (!c)
            return -1;
        unlink_node(n);
        link_node(c, n);
        if (!old->count)
            drop_cell(g, old);
    }
    n->x = x;
    n->z = z;
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
    for (aoi_node *n = c->head; n; n = n->next) {
        float dx = n->x - x, dz = n->z - z;
        float d2 = dx * dx + dz * dz;
        if (d2 <= r2)
            fn(ctx, n, d2);
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
