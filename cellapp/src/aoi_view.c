/* A witness's view with hysteresis (aoi_view.h). */
#include "aoi_view.h"

#include <stdlib.h>

void aoi_view_init(aoi_view *v, float radius, float hysteresis)
{
    *v = (aoi_view){.radius = radius, .hysteresis = hysteresis};
}

void aoi_view_free(aoi_view *v)
{
    free(v->ids);
    free(v->scratch);
    free(v->diff);
    *v = (aoi_view){0};
}

int aoi_view_has(const aoi_view *v, int32_t id)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->ids[mid] == id)
            return 1;
        if (v->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

typedef struct {
    const aoi_view *old;
    int32_t self;
    float r2;
    int32_t *out;
    size_t n, cap;
    int failed;
} collect;

static void visit(void *ctx, aoi_node *node, int32_t id, float d2)
{
    (void)node;
    collect *c = ctx;
    if (id == c->self || c->failed)
        return;
    /* within radius: in; within radius + hysteresis: in only if it was */
    if (d2 > c->r2 && !aoi_view_has(c->old, id))
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        int32_t *p = realloc(c->out, cap * sizeof *p);
        if (!p) {
            c->failed = 1;
            return;
        }
        c->out = p;
        c->cap = cap;
    }
    c->out[c->n++] = id;
}

static int cmp_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Ascending. Views hold tens of ids: an insertion sort inline beats qsort's calls there. */
static void sort_ids(int32_t *ids, size_t n)
{
    if (n > 96) {
        qsort(ids, n, sizeof *ids, cmp_id);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        int32_t v = ids[i];
        size_t j = i;
        for (; j > 0 && ids[j - 1] > v; j--)
            ids[j] = ids[j - 1];
        ids[j] = v;
    }
}

static int reserve(int32_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap && *buf)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    int32_t *p = realloc(*buf, n * sizeof *p);
    if (!p)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

int aoi_view_update(aoi_view *v, const aoi_grid *g, float x, float z, int32_t self,
                    int32_t **entered, size_t *nentered, int32_t **left, size_t *nleft)
{
    collect c = {.old = v, .self = self, .r2 = v->radius * v->radius, .out = v->scratch,
                 .cap = v->scratch_cap};
    aoi_grid_query(g, x, z, v->radius + v->hysteresis, visit, &c);
    v->scratch = c.out;
    v->scratch_cap = c.cap;
    if (c.failed || reserve(&v->diff, &v->diff_cap, c.n + v->n) != 0)
        return -1;
    int32_t *now = c.out;
    sort_ids(now, c.n);
    /* one merge of the two sorted lists: entered (only in now) from the front of diff,
     * left (only in the old view) from its back */
    size_t ne = 0, ng = 0, i = 0, j = 0, last = c.n + v->n;
    while (i < c.n || j < v->n) {
        if (j == v->n || (i < c.n && now[i] < v->ids[j]))
            v->diff[ne++] = now[i++];
        else if (i == c.n || v->ids[j] < now[i])
            v->diff[last - ++ng] = v->ids[j++];
        else
            i++, j++;
    }
    /* left was written backwards: reverse it so it is sorted */
    int32_t *gone = v->diff + last - ng;
    for (size_t a = 0, b = ng; a + 1 < b; a++, b--) {
        int32_t t = gone[a];
        gone[a] = gone[b - 1];
        gone[b - 1] = t;
    }
    /* the new view becomes the view, the old one the next scratch */
    int32_t *old = v->ids;
    size_t oldcap = v->cap;
    v->ids = now;
    v->cap = c.cap;
    v->n = c.n;
    v->scratch = old;
    v->scratch_cap = oldcap;
    *entered = v->diff;
    *nentered = ne;
    *left = gone;
    *nleft = ng;
    return 0;
}

void aoi_view_clear(aoi_view *v, int32_t **left, size_t *nleft)
{
    /* the old ids are handed out through the view array itself, which is kept */
    *left = v->ids;
    *nleft = v->n;
    v->n = 0;
}

int aoi_view_seed(aoi_view *v, const int32_t *ids, size_t n, int32_t self)
{
    if (n > v->cap) {
        int32_t *p = realloc(v->ids, n * sizeof *p);
        if (!p)
            return -1;
        v->ids = p;
        v->cap = n;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ids[i] != self)
            v->ids[k++] = ids[i];
    if (k > 1)
        qsort(v->ids, k, sizeof *v->ids, cmp_id);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (!u || v->ids[u - 1] != v->ids[i])
            v->ids[u++] = v->ids[i];
    v->n = u;
    return 0;
}
