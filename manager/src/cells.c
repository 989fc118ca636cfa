/* Cells of spaces (cells.h): per space a binary tree of nodes (internal: an axis and a
 * position; leaf: a cellapp), found by space id through a hash map, listed in an array. */
#include "cells.h"
#include "common/map.h"

#include <math.h>
#include <stdlib.h>

typedef struct node {
    struct node *parent, *lo, *hi; /* lo/hi: NULL for a leaf */
    int axis;                      /* internal: 0 x, 1 z */
    float at;                      /* internal: lo < at <= hi */
    uint32_t process_id;           /* leaf */
    bool empty;                    /* leaf: its cellapp holds no entities of the space */
} node;

typedef struct {
    int32_t id;
    uint32_t version;
    size_t ncells, slot;
    node *root;
} cell_space;

struct mc_cells {
    mc_map by_id;        /* space id -> cell_space */
    cell_space **list;   /* n of them */
    size_t n, cap, max_spaces, max_cells;
};

const char *mc_cells_status_name(mc_cells_status st)
{
    switch (st) {
    case MC_CELLS_OK: return "ok";
    case MC_CELLS_UNCHANGED: return "unchanged";
    case MC_CELLS_NO_SPACE: return "no such space";
    case MC_CELLS_FULL: return "as many spaces as allowed";
    case MC_CELLS_TOO_MANY: return "the space has as many cells as allowed";
    case MC_CELLS_SERVED: return "that cellapp serves the space already";
    case MC_CELLS_CONFLICT: return "the space is served by other cellapps";
    case MC_CELLS_BAD_POSITION: return "the position is not inside the cell";
    case MC_CELLS_NO_MEMORY: return "out of memory";
    }
    return "?";
}

mc_cells *mc_cells_new(size_t max_spaces, size_t max_cells)
{
    mc_cells *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (max_spaces < MC_CELLS_SPACES_MIN)
        max_spaces = MC_CELLS_SPACES_MIN;
    if (max_spaces > MC_CELLS_SPACES_MAX)
        max_spaces = MC_CELLS_SPACES_MAX;
    if (max_cells < 2)
        max_cells = 2;
    if (max_cells > 256)
        max_cells = 256;
    c->max_spaces = max_spaces;
    c->max_cells = max_cells;
    mc_map_init(&c->by_id);
    return c;
}

static void free_tree(node *n)
{
    if (!n)
        return;
    free_tree(n->lo);
    free_tree(n->hi);
    free(n);
}

void mc_cells_free(mc_cells *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free_tree(c->list[i]->root);
        free(c->list[i]);
    }
    free(c->list);
    mc_map_free(&c->by_id);
    free(c);
}

static cell_space *find(const mc_cells *c, int32_t space)
{
    return space > 0 ? mc_map_get(&c->by_id, (uint64_t)(uint32_t)space, 0) : NULL;
}

static node *find_leaf(node *n, uint32_t process_id)
{
    if (!n)
        return NULL;
    if (!n->lo)
        return n->process_id == process_id ? n : NULL;
    node *l = find_leaf(n->lo, process_id);
    return l ? l : find_leaf(n->hi, process_id);
}

static node *new_leaf(node *parent, uint32_t process_id)
{
    node *n = calloc(1, sizeof *n);
    if (n) {
        n->parent = parent;
        n->process_id = process_id;
    }
    return n;
}

mc_cells_status mc_cells_add_space(mc_cells *c, int32_t space, uint32_t process_id)
{
    if (space <= 0)
        return MC_CELLS_NO_SPACE;
    cell_space *sp = find(c, space);
    if (sp)
        return find_leaf(sp->root, process_id) ? MC_CELLS_UNCHANGED : MC_CELLS_CONFLICT;
    if (c->n >= c->max_spaces)
        return MC_CELLS_FULL;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        cell_space **l = realloc(c->list, cap * sizeof *l);
        if (!l)
            return MC_CELLS_NO_MEMORY;
        c->list = l;
        c->cap = cap;
    }
    sp = calloc(1, sizeof *sp);
    node *root = new_leaf(NULL, process_id);
    if (!sp || !root || !mc_map_put(&c->by_id, (uint64_t)(uint32_t)space, 0, sp)) {
        free(sp);
        free(root);
        return MC_CELLS_NO_MEMORY;
    }
    sp->id = space;
    sp->version = 1;
    sp->ncells = 1;
    sp->root = root;
    sp->slot = c->n;
    c->list[c->n++] = sp;
    return MC_CELLS_OK;
}

/* The rectangle of node n (from the splits above it). */
static mc_cell_rect rect_of(const node *n)
{
    mc_cell_rect r = {-INFINITY, -INFINITY, INFINITY, INFINITY, n->process_id};
    for (const node *child = n, *p = n->parent; p; child = p, p = p->parent) {
        bool upper = child == p->hi;
        float *lo = p->axis == 0 ? &r.x_min : &r.z_min;
        float *hi = p->axis == 0 ? &r.x_max : &r.z_max;
        if (upper && p->at > *lo)
            *lo = p->at;
        if (!upper && p->at < *hi)
            *hi = p->at;
    }
    return r;
}

static int depth_of(const node *n)
{
    int d = 0;
    for (const node *p = n->parent; p; p = p->parent)
        d++;
    return d;
}

mc_cells_status mc_cells_split(mc_cells *c, int32_t space, uint32_t victim,
                               uint32_t new_process, bool has_at, float at)
{
    cell_space *sp = find(c, space);
    if (!sp)
        return MC_CELLS_NO_SPACE;
    if (find_leaf(sp->root, new_process))
        return MC_CELLS_SERVED;
    node *leaf = find_leaf(sp->root, victim);
    if (!leaf)
        return MC_CELLS_NO_SPACE;
    if (sp->ncells >= c->max_cells)
        return MC_CELLS_TOO_MANY;
    mc_cell_rect r = rect_of(leaf);
    int axis = depth_of(leaf) % 2;
    float lo = axis == 0 ? r.x_min : r.z_min, hi = axis == 0 ? r.x_max : r.z_max;
    if (!has_at) {
        if (isinf(lo) && isinf(hi))
            at = 0.0f;
        else if (isinf(lo))
            at = hi - MC_CELLS_OPEN_SPLIT_M;
        else if (isinf(hi))
            at = lo + MC_CELLS_OPEN_SPLIT_M;
        else
            at = lo + (hi - lo) / 2.0f;
    }
    if (!isfinite(at) || !(at > lo) || !(at < hi))
        return MC_CELLS_BAD_POSITION;
    node *keep = new_leaf(leaf, leaf->process_id), *give = new_leaf(leaf, new_process);
    if (!keep || !give) {
        free(keep);
        free(give);
        return MC_CELLS_NO_MEMORY;
    }
    keep->empty = leaf->empty;
    give->empty = true;
    leaf->lo = keep;
    leaf->hi = give;
    leaf->axis = axis;
    leaf->at = at;
    leaf->process_id = 0;
    sp->ncells++;
    sp->version++;
    return MC_CELLS_OK;
}

static void drop_space(mc_cells *c, cell_space *sp)
{
    mc_map_remove(&c->by_id, (uint64_t)(uint32_t)sp->id, 0);
    c->list[sp->slot] = c->list[--c->n];
    c->list[sp->slot]->slot = sp->slot;
    free_tree(sp->root);
    free(sp);
}

mc_cells_status mc_cells_remove(mc_cells *c, int32_t space, uint32_t process_id, bool *dropped)
{
    *dropped = false;
    cell_space *sp = find(c, space);
    if (!sp)
        return MC_CELLS_NO_SPACE;
    node *leaf = find_leaf(sp->root, process_id);
    if (!leaf)
        return MC_CELLS_UNCHANGED;
    node *p = leaf->parent;
    if (!p) {
        drop_space(c, sp);
        *dropped = true;
        return MC_CELLS_OK;
    }
    /* the sibling takes the parent's place (and so its rectangle) */
    node *sib = p->lo == leaf ? p->hi : p->lo;
    node *gp = p->parent;
    sib->parent = gp;
    if (!gp)
        sp->root = sib;
    else if (gp->lo == p)
        gp->lo = sib;
    else
        gp->hi = sib;
    free(leaf);
    free(p);
    sp->ncells--;
    sp->version++;
    return MC_CELLS_OK;
}

mc_cells_status mc_cells_reassign(mc_cells *c, int32_t space, uint32_t from, uint32_t to)
{
    cell_space *sp = find(c, space);
    if (!sp)
        return MC_CELLS_NO_SPACE;
    node *leaf = find_leaf(sp->root, from);
    if (!leaf)
        return MC_CELLS_UNCHANGED;
    if (find_leaf(sp->root, to))
        return MC_CELLS_SERVED;
    leaf->process_id = to;
    leaf->empty = false; /* its entities are on their way */
    sp->version++;
    return MC_CELLS_OK;
}

mc_cells_status mc_cells_set_empty(mc_cells *c, int32_t space, uint32_t process_id, bool empty)
{
    cell_space *sp = find(c, space);
    node *leaf = sp ? find_leaf(sp->root, process_id) : NULL;
    if (!leaf)
        return MC_CELLS_NO_SPACE;
    if (leaf->empty == empty)
        return MC_CELLS_UNCHANGED;
    leaf->empty = empty;
    return MC_CELLS_OK;
}

static bool all_empty(const node *n)
{
    return n->lo ? all_empty(n->lo) && all_empty(n->hi) : n->empty;
}

bool mc_cells_all_empty(const mc_cells *c, int32_t space)
{
    cell_space *sp = find(c, space);
    return sp && all_empty(sp->root);
}

void mc_cells_drop(mc_cells *c, int32_t space)
{
    cell_space *sp = find(c, space);
    if (sp)
        drop_space(c, sp);
}

/* The busiest cell's load among the leaves under n (cells of space). */
static double busiest(const node *n, int32_t space, mc_cells_load_fn load_of, void *ctx)
{
    if (!n->lo)
        return load_of(ctx, space, n->process_id);
    double a = busiest(n->lo, space, load_of, ctx), b = busiest(n->hi, space, load_of, ctx);
    return a > b ? a : b;
}

/* The highest (hi) or lowest split position on `axis` under n (-inf / inf: none). */
static float extreme_at(const node *n, int axis, bool hi)
{
    if (!n->lo)
        return hi ? -INFINITY : INFINITY;
    float a = extreme_at(n->lo, axis, hi), b = extreme_at(n->hi, axis, hi);
    float m = hi ? (a > b ? a : b) : (a < b ? a : b);
    if (n->axis == axis && (hi ? n->at > m : n->at < m))
        m = n->at;
    return m;
}

static size_t balance(node *n, int32_t space, mc_cells_load_fn load_of, void *ctx, float step,
                      double hysteresis)
{
    if (!n->lo)
        return 0;
    size_t moved = balance(n->lo, space, load_of, ctx, step, hysteresis) +
                   balance(n->hi, space, load_of, ctx, step, hysteresis);
    double lo = busiest(n->lo, space, load_of, ctx), hi = busiest(n->hi, space, load_of, ctx);
    if (!(fabs(lo - hi) > hysteresis))
        return moved;
    /* the busier side gives ground: its rectangle shrinks */
    mc_cell_rect r = rect_of(n);
    float min = n->axis == 0 ? r.x_min : r.z_min, max = n->axis == 0 ? r.x_max : r.z_max;
    /* never across a split below on the same axis (no cell may turn inside out) */
    float below = extreme_at(n->lo, n->axis, true), above = extreme_at(n->hi, n->axis, false);
    if (below > min)
        min = below;
    if (above < max)
        max = above;
    float at = lo > hi ? n->at - step : n->at + step;
    if (!isinf(min) && at < min + MC_CELLS_MIN_SPAN_M)
        at = min + MC_CELLS_MIN_SPAN_M;
    if (!isinf(max) && at > max - MC_CELLS_MIN_SPAN_M)
        at = max - MC_CELLS_MIN_SPAN_M;
    if (!isfinite(at) || at == n->at || !(at > min) || !(at < max))
        return moved;
    n->at = at;
    return moved + 1;
}

size_t mc_cells_balance(mc_cells *c, int32_t space, mc_cells_load_fn load_of, void *ctx,
                        float step, double hysteresis)
{
    cell_space *sp = find(c, space);
    if (!sp || !(step > 0))
        return 0;
    size_t moved = balance(sp->root, space, load_of, ctx, step, hysteresis);
    if (moved)
        sp->version++;
    return moved;
}

bool mc_cells_has_space(const mc_cells *c, int32_t space) { return find(c, space) != NULL; }

static void collect(const node *n, mc_cell_rect *out, size_t max, size_t *k)
{
    if (n->lo) {
        collect(n->lo, out, max, k);
        collect(n->hi, out, max, k);
        return;
    }
    if (*k < max)
        out[*k] = rect_of(n);
    (*k)++;
}

size_t mc_cells_layout(const mc_cells *c, int32_t space, mc_cell_rect *out, size_t max,
                       uint32_t *version)
{
    cell_space *sp = find(c, space);
    if (!sp)
        return 0;
    size_t k = 0;
    collect(sp->root, out, max, &k);
    if (version)
        *version = sp->version;
    return k;
}

bool mc_cells_served_by(const mc_cells *c, int32_t space, uint32_t process_id,
                        mc_cell_rect *out)
{
    cell_space *sp = find(c, space);
    node *leaf = sp ? find_leaf(sp->root, process_id) : NULL;
    if (leaf && out)
        *out = rect_of(leaf);
    return leaf != NULL;
}

int mc_cells_split_axis(const mc_cells *c, int32_t space, uint32_t process_id)
{
    cell_space *sp = find(c, space);
    node *leaf = sp ? find_leaf(sp->root, process_id) : NULL;
    return leaf ? depth_of(leaf) % 2 : -1;
}

bool mc_cells_sibling(const mc_cells *c, int32_t space, uint32_t process_id, uint32_t *sibling)
{
    cell_space *sp = find(c, space);
    node *leaf = sp ? find_leaf(sp->root, process_id) : NULL;
    if (!leaf || !leaf->parent)
        return false;
    node *sib = leaf->parent->lo == leaf ? leaf->parent->hi : leaf->parent->lo;
    if (sib->lo)
        return false;
    *sibling = sib->process_id;
    return true;
}

size_t mc_cells_space_count(const mc_cells *c) { return c->n; }
int32_t mc_cells_space_at(const mc_cells *c, size_t i) { return i < c->n ? c->list[i]->id : 0; }
size_t mc_cells_max_cells(const mc_cells *c) { return c->max_cells; }
