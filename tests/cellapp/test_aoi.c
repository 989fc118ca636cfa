/* The AoI grid answers range queries exactly like a scan of every node, whatever the
 * radius, positions and moves; a witness's view follows the hysteresis rule exactly (in at
 * radius, out past radius + hysteresis), reports every change once, never contains the
 * witness itself, and loses entities that left the grid. */
#include "check_main.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoi_grid.h"
#include "aoi_view.h"

typedef struct {
    aoi_node node;
    int32_t id;
    bool in_grid;
} thing;

static int32_t id_of(const aoi_node *n) { return ((const thing *)n->owner)->id; }

/* A deterministic generator (the tests must not depend on rand()'s implementation). */
static uint32_t rng(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}
static float frand(uint32_t *s, float lo, float hi)
{
    return lo + (hi - lo) * (float)(rng(s) % 1000000u) / 1000000.0f;
}

typedef struct {
    uint8_t *hit;
    size_t count;
} hits;

static void mark(void *ctx, aoi_node *n, int32_t id, float d2)
{
    (void)d2;
    hits *h = ctx;
    ck_assert_int_eq(id, id_of(n)); /* the grid's copy of the id is the node's */
    h->hit[id]++;
    h->count++;
}

START_TEST(grid_matches_a_full_scan)
{
    enum { N = 2000 };
    thing *t = calloc(N, sizeof *t);
    uint8_t *hit = calloc(N, 1);
    ck_assert(t && hit);
    aoi_grid g;
    ck_assert_int_eq(aoi_grid_init(&g, 25.0f), 0);
    uint32_t s = 12345;
    for (int i = 0; i < N; i++) {
        t[i].id = i;
        t[i].node.owner = &t[i];
        t[i].node.id = t[i].id;
        ck_assert_int_eq(aoi_grid_insert(&g, &t[i].node, frand(&s, -500, 500), frand(&s, -500, 500)), 0);
        t[i].in_grid = true;
    }
    ck_assert_uint_eq(g.count, N);
    for (int round = 0; round < 150; round++) {
        /* some moves (near and far), some removals and re-insertions */
        for (int k = 0; k < 50; k++) {
            thing *x = &t[rng(&s) % N];
            if (!x->in_grid) {
                ck_assert_int_eq(aoi_grid_insert(&g, &x->node, frand(&s, -500, 500), frand(&s, -500, 500)), 0);
                x->in_grid = true;
            } else if (k % 7 == 0) {
                aoi_grid_remove(&g, &x->node);
                x->in_grid = false;
            } else {
                float step = k % 2 ? 3.0f : 400.0f;
                ck_assert_int_eq(aoi_grid_move(&g, &x->node, x->node.x + frand(&s, -step, step),
                                               x->node.z + frand(&s, -step, step)), 0);
            }
        }
        float qx = frand(&s, -600, 600), qz = frand(&s, -600, 600);
        float r = round % 10 == 0 ? frand(&s, 500, 3000) : frand(&s, 0, 120);
        memset(hit, 0, N);
        hits h = {hit, 0};
        aoi_grid_query(&g, qx, qz, r, mark, &h);
        size_t want = 0;
        for (int i = 0; i < N; i++) {
            float dx = t[i].node.x - qx, dz = t[i].node.z - qz;
            bool in = t[i].in_grid && dx * dx + dz * dz <= r * r;
            want += in;
            ck_assert_msg(hit[i] == (in ? 1 : 0), "round %d node %d: seen %d times, in range %d",
                          round, i, hit[i], in);
        }
        ck_assert_uint_eq(h.count, want);
    }
    for (int i = 0; i < N; i++)
        if (t[i].in_grid)
            aoi_grid_remove(&g, &t[i].node);
    ck_assert_uint_eq(g.count, 0);
    ck_assert_uint_eq(g.ncells, 0);
    aoi_grid_free(&g);
    free(t);
    free(hit);
}
END_TEST

START_TEST(grid_edges)
{
    aoi_grid g;
    ck_assert_int_eq(aoi_grid_init(&g, 0.0f), -1);
    ck_assert_int_eq(aoi_grid_init(&g, NAN), -1);
    ck_assert_int_eq(aoi_grid_init(&g, 10.0f), 0);
    thing far[4] = {{.id = 0}, {.id = 1}, {.id = 2}, {.id = 3}};
    float pos[4][2] = {{3e38f, -3e38f}, {-1e30f, 1e30f}, {0, 0}, {0.5f, 0}};
    uint8_t hit[4];
    for (int i = 0; i < 4; i++) {
        far[i].node.owner = &far[i];
        far[i].node.id = far[i].id;
        ck_assert_int_eq(aoi_grid_insert(&g, &far[i].node, pos[i][0], pos[i][1]), 0);
    }
    /* huge coordinates have a cell; a query there finds them and nothing else */
    memset(hit, 0, sizeof hit);
    hits h = {hit, 0};
    aoi_grid_query(&g, 3e38f, -3e38f, 1.0f, mark, &h);
    ck_assert_uint_eq(h.count, 1);
    ck_assert_uint_eq(hit[0], 1);
    /* radius 0 finds only what is exactly there; a negative or NaN radius nothing */
    memset(hit, 0, sizeof hit);
    h = (hits){hit, 0};
    aoi_grid_query(&g, 0, 0, 0.0f, mark, &h);
    ck_assert_uint_eq(h.count, 1);
    ck_assert_uint_eq(hit[2], 1);
    h = (hits){hit, 0};
    aoi_grid_query(&g, 0, 0, -1.0f, mark, &h);
    aoi_grid_query(&g, 0, 0, NAN, mark, &h);
    ck_assert_uint_eq(h.count, 0);
    /* a wide radius (many empty cells): only what is within it, at the origin */
    memset(hit, 0, sizeof hit);
    h = (hits){hit, 0};
    aoi_grid_query(&g, 0, 0, 1e3f, mark, &h);
    ck_assert_uint_eq(h.count, 2);
    for (int i = 0; i < 4; i++)
        aoi_grid_remove(&g, &far[i].node);
    aoi_grid_remove(&g, &far[0].node); /* not in a grid: nothing happens */
    ck_assert_uint_eq(g.count, 0);
    aoi_grid_free(&g);
}
END_TEST

/* The view of a witness at the origin as the entity with id 2 walks along the x axis. */
START_TEST(view_hysteresis_at_the_edge)
{
    aoi_grid g;
    ck_assert_int_eq(aoi_grid_init(&g, 8.0f), 0);
    thing w = {.id = 1}, e = {.id = 2};
    w.node.owner = &w;
    w.node.id = w.id;
    e.node.owner = &e;
    e.node.id = e.id;
    ck_assert_int_eq(aoi_grid_insert(&g, &w.node, 0, 0), 0);
    ck_assert_int_eq(aoi_grid_insert(&g, &e.node, 11, 0), 0);
    aoi_view v;
    aoi_view_init(&v, 10.0f, 2.0f);
    int32_t *in, *out;
    size_t nin, nout;
    struct {
        float x;
        int entered, left, inview;
    } steps[] = {
        {11.0f, 0, 0, 0},  /* outside the radius */
        {10.0f, 1, 0, 1},  /* at the radius: enters */
        {11.5f, 0, 0, 1},  /* within the hysteresis band: stays */
        {12.0f, 0, 0, 1},  /* at radius + hysteresis: stays */
        {12.5f, 0, 1, 0},  /* beyond: leaves */
        {11.0f, 0, 0, 0},  /* back in the band: does not come back */
        {-9.0f, 1, 0, 1},  /* the other side, within: enters */
        {-9.0f, 0, 0, 1},  /* no change, nothing reported */
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        ck_assert_int_eq(aoi_grid_move(&g, &e.node, steps[i].x, 0), 0);
        ck_assert_int_eq(aoi_view_update(&v, &g, 0, 0, 1, &in, &nin, &out, &nout), 0);
        ck_assert_msg(nin == (size_t)steps[i].entered && nout == (size_t)steps[i].left,
                      "step %zu (x %g): entered %zu left %zu", i, steps[i].x, nin, nout);
        if (nin)
            ck_assert_int_eq(in[0], 2);
        if (nout)
            ck_assert_int_eq(out[0], 2);
        ck_assert_int_eq(aoi_view_has(&v, 2), steps[i].inview);
        ck_assert(!aoi_view_has(&v, 1)); /* never itself */
    }
    /* leaving the grid (destroyed, or gone to another space): leaves at the next update */
    aoi_grid_remove(&g, &e.node);
    ck_assert_int_eq(aoi_view_update(&v, &g, 0, 0, 1, &in, &nin, &out, &nout), 0);
    ck_assert_uint_eq(nin, 0);
    ck_assert_uint_eq(nout, 1);
    ck_assert_int_eq(out[0], 2);
    ck_assert_uint_eq(v.n, 0);
    aoi_grid_remove(&g, &w.node);
    aoi_view_free(&v);
    aoi_grid_free(&g);
}
END_TEST

/* 300 walkers, 20 witnesses among them, 200 ticks: each view equals a model of the rule
 * kept by brute force, and entered/left are exactly the model's differences. */
START_TEST(views_follow_the_rule_under_random_walks)
{
    enum { N = 300, W = 20, TICKS = 200 };
    const float R = 30.0f, H = 4.0f;
    thing *t = calloc(N, sizeof *t);
    uint8_t *model = calloc((size_t)W * N, 1); /* model[w * N + id]: in view */
    aoi_view *views = calloc(W, sizeof *views);
    ck_assert(t && model && views);
    aoi_grid g;
    ck_assert_int_eq(aoi_grid_init(&g, R), 0);
    uint32_t s = 777;
    for (int i = 0; i < N; i++) {
        t[i].id = i;
        t[i].node.owner = &t[i];
        t[i].node.id = t[i].id;
        ck_assert_int_eq(aoi_grid_insert(&g, &t[i].node, frand(&s, -150, 150), frand(&s, -150, 150)), 0);
    }
    for (int w = 0; w < W; w++)
        aoi_view_init(&views[w], R, H);
    size_t changes = 0;
    for (int tick = 0; tick < TICKS; tick++) {
        for (int i = 0; i < N; i++)
            ck_assert_int_eq(aoi_grid_move(&g, &t[i].node, t[i].node.x + frand(&s, -4, 4),
                                           t[i].node.z + frand(&s, -4, 4)), 0);
        for (int w = 0; w < W; w++) {
            int32_t *in, *out;
            size_t nin, nout;
            const thing *me = &t[w];
            ck_assert_int_eq(aoi_view_update(&views[w], &g, me->node.x, me->node.z, me->id, &in,
                                             &nin, &out, &nout), 0);
            size_t want_in = 0, want_out = 0, k_in = 0, k_out = 0;
            for (int i = 0; i < N; i++) {
                if (i == w)
                    continue;
                float dx = t[i].node.x - me->node.x, dz = t[i].node.z - me->node.z;
                float d2 = dx * dx + dz * dz;
                uint8_t was = model[w * N + i];
                uint8_t now = d2 <= R * R || (was && d2 <= (R + H) * (R + H));
                model[w * N + i] = now;
                ck_assert_int_eq(aoi_view_has(&views[w], i), now);
                if (now && !was) {
                    want_in++;
                    ck_assert(k_in < nin && in[k_in++] == i); /* sorted, in id order */
                }
                if (!now && was) {
                    want_out++;
                    ck_assert(k_out < nout && out[k_out++] == i);
                }
            }
            ck_assert_uint_eq(nin, want_in);
            ck_assert_uint_eq(nout, want_out);
            changes += nin + nout;
        }
    }
    ck_assert_uint_gt(changes, 100); /* the walk did move things in and out */
    for (int w = 0; w < W; w++) {
        int32_t *out;
        size_t nout, inview = views[w].n;
        aoi_view_clear(&views[w], &out, &nout);
        ck_assert_uint_eq(nout, inview);
        ck_assert_uint_eq(views[w].n, 0);
        aoi_view_free(&views[w]);
    }
    for (int i = 0; i < N; i++)
        aoi_grid_remove(&g, &t[i].node);
    aoi_grid_free(&g);
    free(t);
    free(model);
    free(views);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("aoi");
    TCase *tc = tcase_create("aoi");
    tcase_add_test(tc, grid_matches_a_full_scan);
    tcase_add_test(tc, grid_edges);
    tcase_add_test(tc, view_hysteresis_at_the_edge);
    tcase_add_test(tc, views_follow_the_rule_under_random_walks);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
