/* Cells without a network: the manager's binary partition of a space (manager/src/cells.c:
 * add, split, merge on removal, versions, bounds) and the cellapp's CELL_LAYOUT parser
 * (cellapp/src/cell_layout.c: what it takes and every malformed input it refuses); the
 * split axis and siblings the automatic splits use, and the CELL_LOAD check
 * (manager/src/cells_auto.c). */
#include "cell_layout.h"
#include "cells.h"
#include "cells_auto.h"
#include "proto/control.pb-c.h"
#include "server/control.h"
#include "server/pb.h"

#include "check_main.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool rect_is(const mc_cell_rect *r, float x0, float x1, float z0, float z1, uint32_t pid)
{
    return r->x_min == x0 && r->x_max == x1 && r->z_min == z0 && r->z_max == z1 &&
           r->process_id == pid;
}

START_TEST(a_space_starts_whole_and_splits_alternating_axes)
{
    mc_cells *c = mc_cells_new(16, 8);
    ck_assert_int_eq(mc_cells_add_space(c, 7, 1), MC_CELLS_OK);
    ck_assert_int_eq(mc_cells_add_space(c, 7, 1), MC_CELLS_UNCHANGED);
    ck_assert_int_eq(mc_cells_add_space(c, 7, 2), MC_CELLS_CONFLICT);
    ck_assert_int_eq(mc_cells_add_space(c, 0, 2), MC_CELLS_NO_SPACE);
    mc_cell_rect r[8];
    uint32_t v1, v2, v3;
    ck_assert_uint_eq(mc_cells_layout(c, 7, r, 8, &v1), 1);
    ck_assert(rect_is(&r[0], -INFINITY, INFINITY, -INFINITY, INFINITY, 1));

    /* the root splits on x at 0; the upper half goes to 2 */
    ck_assert_int_eq(mc_cells_split(c, 7, 1, 2, false, 0), MC_CELLS_OK);
    ck_assert_uint_eq(mc_cells_layout(c, 7, r, 8, &v2), 2);
    ck_assert_uint_gt(v2, v1);
    ck_assert(rect_is(&r[0], -INFINITY, 0, -INFINITY, INFINITY, 1));
    ck_assert(rect_is(&r[1], 0, INFINITY, -INFINITY, INFINITY, 2));
    ck_assert_int_eq(mc_cells_split(c, 7, 1, 2, false, 0), MC_CELLS_SERVED);

    /* 2's half splits on z, open on both sides: at 0 */
    ck_assert_int_eq(mc_cells_split(c, 7, 2, 3, false, 0), MC_CELLS_OK);
    /* 3's quarter splits on x again, open above: 1000 m inside its bound side */
    ck_assert_int_eq(mc_cells_split(c, 7, 3, 4, false, 0), MC_CELLS_OK);
    ck_assert_uint_eq(mc_cells_layout(c, 7, r, 8, &v3), 4);
    ck_assert_uint_gt(v3, v2);
    ck_assert(rect_is(&r[1], 0, INFINITY, -INFINITY, 0, 2));
    ck_assert(rect_is(&r[2], 0, MC_CELLS_OPEN_SPLIT_M, 0, INFINITY, 3));
    ck_assert(rect_is(&r[3], MC_CELLS_OPEN_SPLIT_M, INFINITY, 0, INFINITY, 4));
    /* 3's cell (x[0,1000) z[0,inf)) splits on z: a position outside it is refused */
    ck_assert_int_eq(mc_cells_split(c, 7, 3, 5, true, -5), MC_CELLS_BAD_POSITION);
    ck_assert_int_eq(mc_cells_split(c, 7, 3, 5, true, 0), MC_CELLS_BAD_POSITION);
    ck_assert_int_eq(mc_cells_split(c, 7, 3, 5, true, NAN), MC_CELLS_BAD_POSITION);
    ck_assert_int_eq(mc_cells_split(c, 7, 3, 5, false, 0), MC_CELLS_OK);
    mc_cell_rect own;
    ck_assert(mc_cells_served_by(c, 7, 5, &own));
    ck_assert(rect_is(&own, 0, MC_CELLS_OPEN_SPLIT_M, MC_CELLS_OPEN_SPLIT_M, INFINITY, 5));
    /* a closed cell splits at its middle: 5's (on x) at 500 */
    ck_assert_int_eq(mc_cells_split(c, 7, 5, 6, false, 0), MC_CELLS_OK);
    ck_assert(mc_cells_served_by(c, 7, 6, &own));
    ck_assert(rect_is(&own, MC_CELLS_OPEN_SPLIT_M / 2, MC_CELLS_OPEN_SPLIT_M,
                      MC_CELLS_OPEN_SPLIT_M, INFINITY, 6));
    ck_assert_int_eq(mc_cells_split(c, 99, 1, 5, false, 0), MC_CELLS_NO_SPACE);
    ck_assert_int_eq(mc_cells_split(c, 7, 42, 7, false, 0), MC_CELLS_NO_SPACE);
    mc_cells_free(c);
}
END_TEST

START_TEST(a_cell_that_goes_merges_into_its_sibling_and_the_last_drops_the_space)
{
    mc_cells *c = mc_cells_new(16, 8);
    ck_assert_int_eq(mc_cells_add_space(c, 3, 1), MC_CELLS_OK);
    ck_assert_int_eq(mc_cells_split(c, 3, 1, 2, false, 0), MC_CELLS_OK);
    ck_assert_int_eq(mc_cells_split(c, 3, 2, 3, true, 50), MC_CELLS_OK);
    bool dropped;
    mc_cell_rect r[8];
    uint32_t v0, v1;
    mc_cells_layout(c, 3, r, 8, &v0);
    /* 2 goes: 3 takes 2's and its own (x >= 0) */
    ck_assert_int_eq(mc_cells_remove(c, 3, 2, &dropped), MC_CELLS_OK);
    ck_assert(!dropped);
    ck_assert_uint_eq(mc_cells_layout(c, 3, r, 8, &v1), 2);
    ck_assert_uint_gt(v1, v0);
    ck_assert(rect_is(&r[1], 0, INFINITY, -INFINITY, INFINITY, 3));
    ck_assert_int_eq(mc_cells_remove(c, 3, 2, &dropped), MC_CELLS_UNCHANGED);
    /* 1 goes: 3 has the whole plane */
    ck_assert_int_eq(mc_cells_remove(c, 3, 1, &dropped), MC_CELLS_OK);
    ck_assert_uint_eq(mc_cells_layout(c, 3, r, 8, NULL), 1);
    ck_assert(rect_is(&r[0], -INFINITY, INFINITY, -INFINITY, INFINITY, 3));
    ck_assert_int_eq(mc_cells_remove(c, 3, 3, &dropped), MC_CELLS_OK);
    ck_assert(dropped);
    ck_assert(!mc_cells_has_space(c, 3));
    ck_assert_uint_eq(mc_cells_space_count(c), 0);
    ck_assert_int_eq(mc_cells_remove(c, 3, 3, &dropped), MC_CELLS_NO_SPACE);
    mc_cells_free(c);
}
END_TEST

/* A cell handed to another cellapp whole (a retiring cellapp's space served whole): its
 * rectangle stays, the new cellapp serves it, the version moves on; refused when the new one
 * serves a cell of it already, nothing when the old one serves none. */
START_TEST(a_cell_is_handed_to_another_cellapp_whole)
{
    mc_cells *c = mc_cells_new(16, 8);
    ck_assert_int_eq(mc_cells_add_space(c, 3, 1), MC_CELLS_OK);
    mc_cell_rect r[8];
    uint32_t v0, v1;
    mc_cells_layout(c, 3, r, 8, &v0);
    ck_assert_int_eq(mc_cells_reassign(c, 3, 1, 2), MC_CELLS_OK);
    ck_assert_uint_eq(mc_cells_layout(c, 3, r, 8, &v1), 1);
    ck_assert_uint_gt(v1, v0);
    ck_assert(rect_is(&r[0], -INFINITY, INFINITY, -INFINITY, INFINITY, 2));
    ck_assert(!mc_cells_served_by(c, 3, 1, NULL));
    ck_assert(!mc_cells_all_empty(c, 3));
    ck_assert_int_eq(mc_cells_reassign(c, 3, 1, 4), MC_CELLS_UNCHANGED);
    ck_assert_int_eq(mc_cells_reassign(c, 9, 2, 4), MC_CELLS_NO_SPACE);
    /* split: one half handed on, never onto a cellapp serving the other */
    ck_assert_int_eq(mc_cells_split(c, 3, 2, 5, true, 10), MC_CELLS_OK);
    ck_assert_int_eq(mc_cells_reassign(c, 3, 2, 5), MC_CELLS_SERVED);
    ck_assert_int_eq(mc_cells_reassign(c, 3, 5, 6), MC_CELLS_OK);
    ck_assert_uint_eq(mc_cells_layout(c, 3, r, 8, NULL), 2);
    ck_assert(rect_is(&r[1], 10, INFINITY, -INFINITY, INFINITY, 6));
    mc_cells_free(c);
}
END_TEST

START_TEST(a_space_whose_cells_are_all_empty_can_end)
{
    mc_cells *c = mc_cells_new(16, 8);
    ck_assert_int_eq(mc_cells_add_space(c, 4, 1), MC_CELLS_OK);
    ck_assert(!mc_cells_all_empty(c, 4)); /* a new space's cell has its first entity */
    ck_assert_int_eq(mc_cells_split(c, 4, 1, 2, false, 0), MC_CELLS_OK);
    ck_assert(!mc_cells_all_empty(c, 4)); /* the split's new cell is empty, 1's is not */
    ck_assert_int_eq(mc_cells_set_empty(c, 4, 1, true), MC_CELLS_OK);
    ck_assert_int_eq(mc_cells_set_empty(c, 4, 1, true), MC_CELLS_UNCHANGED);
    ck_assert(mc_cells_all_empty(c, 4));
    ck_assert_int_eq(mc_cells_set_empty(c, 4, 2, false), MC_CELLS_OK);
    ck_assert(!mc_cells_all_empty(c, 4));
    ck_assert_int_eq(mc_cells_set_empty(c, 4, 3, false), MC_CELLS_NO_SPACE);
    mc_cells_drop(c, 4);
    ck_assert(!mc_cells_has_space(c, 4));
    ck_assert(!mc_cells_all_empty(c, 4));
    mc_cells_free(c);
}
END_TEST

static double loads[8];
static double load_of(void *ctx, int32_t space, uint32_t pid)
{
    (void)ctx;
    (void)space;
    return pid < 8 ? loads[pid] : 0;
}

/* Cell loads of two spaces (9 and 10) over the same cellapps 1 and 2. */
static double cell_loads[2][8];
static double cell_load_of(void *ctx, int32_t space, uint32_t pid)
{
    int *asked = ctx;
    (*asked)++;
    ck_assert(space == 9 || space == 10);
    return pid < 8 ? cell_loads[space - 9][pid] : 0;
}

START_TEST(a_boundary_follows_the_loads_of_its_own_cells_not_of_their_cellapps)
{
    mc_cells *c = mc_cells_new(16, 8);
    for (int32_t s = 9; s <= 10; s++) {
        ck_assert_int_eq(mc_cells_add_space(c, s, 1), MC_CELLS_OK);
        ck_assert_int_eq(mc_cells_split(c, s, 1, 2, true, 0), MC_CELLS_OK);
    }
    /* cellapp 1 is busy, but only with its cell of space 9; its cell of 10 is idle, as is 2's */
    memset(cell_loads, 0, sizeof cell_loads);
    cell_loads[0][1] = 0.9;
    cell_loads[0][2] = 0.05;
    cell_loads[1][1] = 0.02;
    cell_loads[1][2] = 0.04;
    int asked = 0;
    for (int round = 0; round < 3; round++) {
        ck_assert_uint_eq(mc_cells_balance(c, 9, cell_load_of, &asked, 2, 0.1), 1);
        ck_assert_uint_eq(mc_cells_balance(c, 10, cell_load_of, &asked, 2, 0.1), 0);
    }
    ck_assert_int_ge(asked, 12);
    mc_cell_rect r[8];
    ck_assert_uint_eq(mc_cells_layout(c, 9, r, 8, NULL), 2);
    ck_assert(r[0].x_max == -6 && r[1].x_min == -6); /* 9's busy cell gave 2 m three times */
    ck_assert_uint_eq(mc_cells_layout(c, 10, r, 8, NULL), 2);
    ck_assert(r[0].x_max == 0 && r[1].x_min == 0); /* 10's stayed */
    /* now 10's cell on 2 is the costly one: 10's boundary moves up, 9's (1 still busier
     * there) goes on down */
    cell_loads[1][2] = 0.7;
    ck_assert_uint_eq(mc_cells_balance(c, 10, cell_load_of, &asked, 2, 0.1), 1);
    ck_assert_uint_eq(mc_cells_layout(c, 10, r, 8, NULL), 2);
    ck_assert(r[0].x_max == 2);
    mc_cells_free(c);
}
END_TEST

START_TEST(a_busy_cellapp_gives_up_its_costliest_cell_first)
{
    mc_cells_space_load s[5] = {
        {.space = 1, .reals = 900, .load = 0.05f}, /* most reals, idle */
        {.space = 2, .reals = 300, .load = 0.70f}, /* the costliest */
        {.space = 3, .reals = 50, .load = 0.90f},  /* costlier, too few reals to split */
        {.space = 4, .reals = 400, .load = 0.70f}, /* as costly as 2, more reals */
        {.space = 5, .reals = 200, .load = 0.30f},
    };
    size_t order[5];
    ck_assert_uint_eq(mc_cells_auto_split_order(s, 5, 200, order), 4);
    ck_assert_uint_eq(order[0], 3); /* space 4 */
    ck_assert_uint_eq(order[1], 1); /* space 2 */
    ck_assert_uint_eq(order[2], 4); /* space 5 */
    ck_assert_uint_eq(order[3], 0); /* space 1: most reals, last */
    ck_assert_uint_eq(mc_cells_auto_split_order(s, 5, 2, order), 5);
    ck_assert_uint_eq(order[0], 2);
    ck_assert_uint_eq(mc_cells_auto_split_order(s, 5, 1000, order), 0);
    ck_assert_uint_eq(mc_cells_auto_split_order(s, 0, 2, order), 0);
}
END_TEST

START_TEST(boundaries_move_toward_the_less_loaded_side_and_never_turn_a_cell_inside_out)
{
    mc_cells *c = mc_cells_new(16, 8);
    ck_assert_int_eq(mc_cells_add_space(c, 9, 1), MC_CELLS_OK);
    ck_assert_int_eq(mc_cells_split(c, 9, 1, 2, false, 0), MC_CELLS_OK);
    mc_cell_rect r[8];
    uint32_t v0, v1;
    mc_cells_layout(c, 9, r, 8, &v0);
    /* within the hysteresis: nothing moves */
    memset(loads, 0, sizeof loads);
    loads[1] = 0.5;
    loads[2] = 0.45;
    ck_assert_uint_eq(mc_cells_balance(c, 9, load_of, NULL, 2, 0.1), 0);
    /* 1 busier: its side gives 2 m a time */
    loads[1] = 0.9;
    loads[2] = 0.1;
    ck_assert_uint_eq(mc_cells_balance(c, 9, load_of, NULL, 2, 0.1), 1);
    ck_assert_uint_eq(mc_cells_layout(c, 9, r, 8, &v1), 2);
    ck_assert_uint_gt(v1, v0);
    ck_assert(r[0].x_max == -2 && r[1].x_min == -2);
    /* 2 busier, and its side split again on x at 1000 below the root: the root's boundary
     * goes up, but never past 1000 - MC_CELLS_MIN_SPAN_M */
    ck_assert_int_eq(mc_cells_split(c, 9, 2, 3, false, 0), MC_CELLS_OK);   /* z at 0 */
    ck_assert_int_eq(mc_cells_split(c, 9, 3, 4, true, 1000), MC_CELLS_OK); /* x at 1000 */
    loads[1] = 0;
    loads[2] = 0.9;  /* the splits below the root stay (their sides are alike) */
    loads[3] = 0.9;
    loads[4] = 0.85;
    ck_assert_uint_ge(mc_cells_balance(c, 9, load_of, NULL, 5000, 0.1), 1);
    mc_cell_rect own;
    ck_assert(mc_cells_served_by(c, 9, 1, &own));
    ck_assert(own.x_max == 1000 - MC_CELLS_MIN_SPAN_M);
    ck_assert(mc_cells_served_by(c, 9, 3, &own));
    ck_assert(own.x_min < own.x_max && own.z_min < own.z_max);
    ck_assert(mc_cells_served_by(c, 9, 4, &own));
    ck_assert(own.x_min < own.x_max);
    /* every cell keeps a non-empty rectangle */
    size_t n = mc_cells_layout(c, 9, r, 8, NULL);
    for (size_t i = 0; i < n; i++)
        ck_assert(r[i].x_min < r[i].x_max && r[i].z_min < r[i].z_max);
    ck_assert_uint_eq(mc_cells_balance(c, 99, load_of, NULL, 2, 0.1), 0);
    mc_cells_free(c);
}
END_TEST

START_TEST(the_bounds_hold)
{
    mc_cells *c = mc_cells_new(1, 1); /* clamped to 16 spaces, 2 cells */
    for (int32_t s = 1; s <= (int32_t)MC_CELLS_SPACES_MIN; s++)
        ck_assert_int_eq(mc_cells_add_space(c, s, 1), MC_CELLS_OK);
    ck_assert_int_eq(mc_cells_add_space(c, 100, 1), MC_CELLS_FULL);
    ck_assert_int_eq(mc_cells_split(c, 5, 1, 2, false, 0), MC_CELLS_OK);
    ck_assert_int_eq(mc_cells_split(c, 5, 2, 3, false, 0), MC_CELLS_TOO_MANY);
    /* spaces leave in any order; the rest are still found */
    bool dropped;
    for (int32_t s = 1; s <= (int32_t)MC_CELLS_SPACES_MIN; s += 2)
        ck_assert_int_eq(mc_cells_remove(c, s, 1, &dropped), MC_CELLS_OK);
    /* space 5 was split: 1's going leaves 2 with the whole of it */
    ck_assert_uint_eq(mc_cells_space_count(c), MC_CELLS_SPACES_MIN / 2 + 1);
    mc_cell_rect r[2];
    ck_assert_uint_eq(mc_cells_layout(c, 5, r, 2, NULL), 1);
    ck_assert(rect_is(&r[0], -INFINITY, INFINITY, -INFINITY, INFINITY, 2));
    for (int32_t s = 2; s <= (int32_t)MC_CELLS_SPACES_MIN; s += 2)
        ck_assert(mc_cells_has_space(c, s));
    mc_cells_free(c);
}
END_TEST

/* --- the cellapp's parser ------------------------------------------------------------ */

typedef struct {
    Mc__Control__CellLayout lay;
    Mc__Control__CellRect rects[4];
    Mc__Control__CellRect *ptrs[4];
} layout_msg;

static void two_cells(layout_msg *m)
{
    mc__control__cell_layout__init(&m->lay);
    m->lay.space_id = 9;
    m->lay.version = 4;
    m->lay.manager_instance = 77;
    for (int i = 0; i < 2; i++) {
        mc__control__cell_rect__init(&m->rects[i]);
        m->rects[i].x_min = i ? 0 : -INFINITY;
        m->rects[i].x_max = i ? INFINITY : 0;
        m->rects[i].z_min = -INFINITY;
        m->rects[i].z_max = INFINITY;
        m->rects[i].process_id = (uint32_t)i + 1;
        m->rects[i].addr = i ? (char *)"127.0.0.1:4000" : (char *)"127.0.0.1:4001";
        m->ptrs[i] = &m->rects[i];
    }
    m->lay.n_cells = 2;
    m->lay.cells = m->ptrs;
}

static bool parse(layout_msg *m, cell_layout *out, char *why, size_t n)
{
    mc_address self;
    ck_assert_int_eq(mc_address_parse("127.0.0.1:4000", &self), 0);
    size_t len = 0;
    uint8_t *buf = mc_pb_pack(&m->lay, &len);
    ck_assert_ptr_nonnull(buf);
    bool ok = cell_layout_parse(buf, len, &self, out, why, n);
    free(buf);
    return ok;
}

START_TEST(a_layout_is_taken_with_its_own_cell)
{
    layout_msg m;
    two_cells(&m);
    cell_layout l;
    char why[160];
    ck_assert_msg(parse(&m, &l, why, sizeof why), "%s", why);
    ck_assert_int_eq(l.space, 9);
    ck_assert_uint_eq(l.version, 4);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_int_eq(l.own, 1);
    ck_assert(cell_rect_contains(&l.cells[1], 0, 5));
    ck_assert(!cell_rect_contains(&l.cells[1], -0.01f, 5));
    ck_assert(cell_rect_contains(&l.cells[0], -0.01f, -1e30f));
    char t[128];
    cell_rect_text(&l.cells[1], t, sizeof t);
    ck_assert_str_eq(t, "x[0,inf) z[-inf,inf)");
    cell_layout_clear(&l);
    /* no cells: this cellapp serves none */
    m.lay.n_cells = 0;
    ck_assert(parse(&m, &l, why, sizeof why));
    ck_assert_int_eq(l.own, -1);
    cell_layout_clear(&l);
}
END_TEST

START_TEST(a_malformed_layout_is_refused)
{
    layout_msg m;
    cell_layout l;
    char why[160];
    mc_address self;
    ck_assert_int_eq(mc_address_parse("127.0.0.1:4000", &self), 0);
    ck_assert(!cell_layout_parse((const uint8_t *)"\xff\xff\xff", 3, &self, &l, why, sizeof why));
    two_cells(&m);
    m.lay.space_id = 0;
    ck_assert(!parse(&m, &l, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "space id"));
    two_cells(&m);
    m.rects[0].x_max = NAN;
    ck_assert(!parse(&m, &l, why, sizeof why));
    two_cells(&m);
    m.rects[1].z_min = 5;
    m.rects[1].z_max = 5; /* empty */
    ck_assert(!parse(&m, &l, why, sizeof why));
    two_cells(&m);
    m.rects[1].addr = (char *)"nowhere";
    ck_assert(!parse(&m, &l, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "address"));
    two_cells(&m);
    m.rects[1].process_id = 1; /* one cellapp, two cells */
    ck_assert(!parse(&m, &l, why, sizeof why));
    two_cells(&m);
    m.rects[1].addr = (char *)"127.0.0.1:4001";
    ck_assert(!parse(&m, &l, why, sizeof why));
    /* more cells than a layout may carry */
    two_cells(&m);
    size_t n = MC_CELLS_PER_SPACE_MAX + 1;
    Mc__Control__CellRect **many = calloc(n, sizeof *many);
    for (size_t i = 0; i < n; i++)
        many[i] = &m.rects[0];
    m.lay.cells = many;
    m.lay.n_cells = n;
    ck_assert(!parse(&m, &l, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "cells"));
    free(many);
}
END_TEST

START_TEST(split_axes_and_siblings)
{
    mc_cells *c = mc_cells_new(16, 8);
    uint32_t sib = 0;
    ck_assert_int_eq(mc_cells_add_space(c, 7, 1), MC_CELLS_OK);
    ck_assert_int_eq(mc_cells_split_axis(c, 7, 1), 0);
    ck_assert_int_eq(mc_cells_split_axis(c, 7, 2), -1);
    ck_assert(!mc_cells_sibling(c, 7, 1, &sib)); /* the whole plane: no sibling */
    ck_assert_int_eq(mc_cells_split(c, 7, 1, 2, true, 0), MC_CELLS_OK);
    ck_assert_int_eq(mc_cells_split_axis(c, 7, 1), 1);
    ck_assert(mc_cells_sibling(c, 7, 2, &sib) && sib == 1);
    ck_assert_int_eq(mc_cells_split(c, 7, 1, 3, true, 0), MC_CELLS_OK);
    ck_assert_int_eq(mc_cells_split_axis(c, 7, 3), 0);
    ck_assert(mc_cells_sibling(c, 7, 3, &sib) && sib == 1);
    ck_assert(!mc_cells_sibling(c, 7, 2, &sib)); /* its sibling is a subtree now */
    mc_cells_free(c);
}
END_TEST

/* A CellLoad packed: its tick load, n spaces (ids from first, positions x, z, each cell's
 * load cell_load_field; the last one's id dup_last when not 0). */
static float cell_load_field = 0.5f;
static int32_t dup_last;
static bool parse_load(float tick, size_t n, int32_t first, float x, float z, mc_cells_load *out,
                       char *why, size_t whylen)
{
    Mc__Control__SpaceLoad sl[20], *ptrs[20];
    for (size_t i = 0; i < n && i < 20; i++) {
        mc__control__space_load__init(&sl[i]);
        sl[i].space_id = first + (int32_t)i;
        sl[i].reals = 10 + (uint32_t)i;
        sl[i].x = x;
        sl[i].z = z;
        sl[i].load = cell_load_field;
        ptrs[i] = &sl[i];
    }
    if (dup_last && n > 0 && n <= 20)
        sl[n - 1].space_id = dup_last;
    Mc__Control__CellLoad m = MC__CONTROL__CELL_LOAD__INIT;
    m.tick_load = tick;
    m.reals = 99;
    m.retiring = tick == 0.25f;
    m.n_spaces = n;
    m.spaces = ptrs;
    size_t len = 0;
    uint8_t *buf = mc_pb_pack(&m, &len);
    ck_assert_ptr_nonnull(buf);
    bool ok = mc_cells_auto_parse_load(buf, len, out, why, whylen);
    free(buf);
    return ok;
}

START_TEST(a_load_report_is_taken_whole_or_refused)
{
    mc_cells_load l;
    char why[128];
    ck_assert(parse_load(0.5f, 2, 5, -3.5f, 4, &l, why, sizeof why));
    ck_assert(l.tick_load == 0.5 && l.reals == 99 && l.nspaces == 2);
    ck_assert(l.spaces[1].space == 6 && l.spaces[1].reals == 11 && l.spaces[1].x == -3.5f &&
              l.spaces[1].z == 4 && l.spaces[1].load == 0.5f);
    ck_assert(!l.retiring);
    ck_assert(parse_load(0.25f, 1, 1, 0, 0, &l, why, sizeof why));
    ck_assert(l.retiring);
    ck_assert(parse_load(0, 16, 1, 0, 0, &l, why, sizeof why));
    ck_assert(parse_load(1000, 0, 1, 0, 0, &l, why, sizeof why));
    /* refused */
    ck_assert(!parse_load(NAN, 1, 1, 0, 0, &l, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "tick load"));
    ck_assert(!parse_load(-0.5f, 1, 1, 0, 0, &l, why, sizeof why));
    ck_assert(!parse_load(1001, 1, 1, 0, 0, &l, why, sizeof why));
    ck_assert(!parse_load(1, 17, 1, 0, 0, &l, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "16"));
    ck_assert(!parse_load(1, 1, 0, 0, 0, &l, why, sizeof why));
    ck_assert(!parse_load(1, 1, -4, 0, 0, &l, why, sizeof why));
    ck_assert(!parse_load(1, 1, 1, INFINITY, 0, &l, why, sizeof why));
    ck_assert(!parse_load(1, 1, 1, 0, NAN, &l, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "finite"));
    /* each cell's load: 0..1000, finite */
    cell_load_field = 1000;
    ck_assert(parse_load(1, 2, 1, 0, 0, &l, why, sizeof why));
    ck_assert(l.spaces[0].load == 1000);
    cell_load_field = 0;
    ck_assert(parse_load(1, 2, 1, 0, 0, &l, why, sizeof why));
    const float bad[] = {NAN, -0.01f, 1000.5f, INFINITY, -INFINITY, 3e38f};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cell_load_field = bad[i];
        ck_assert(!parse_load(1, 2, 1, 0, 0, &l, why, sizeof why));
        ck_assert_ptr_nonnull(strstr(why, "cell load"));
    }
    cell_load_field = 0.5f;
    /* a space named twice */
    dup_last = 1;
    ck_assert(!parse_load(1, 3, 1, 0, 0, &l, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "twice"));
    dup_last = 0;
    const uint8_t junk[] = {0xff, 0xff, 0xff, 0x07, 0x01};
    ck_assert(!mc_cells_auto_parse_load(junk, sizeof junk, &l, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "malformed"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cells");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a_space_starts_whole_and_splits_alternating_axes);
    tcase_add_test(tc, a_cell_that_goes_merges_into_its_sibling_and_the_last_drops_the_space);
    tcase_add_test(tc, a_space_whose_cells_are_all_empty_can_end);
    tcase_add_test(tc, a_cell_is_handed_to_another_cellapp_whole);
    tcase_add_test(tc, boundaries_move_toward_the_less_loaded_side_and_never_turn_a_cell_inside_out);
    tcase_add_test(tc, the_bounds_hold);
    tcase_add_test(tc, a_layout_is_taken_with_its_own_cell);
    tcase_add_test(tc, a_malformed_layout_is_refused);
    tcase_add_test(tc, split_axes_and_siblings);
    tcase_add_test(tc, a_load_report_is_taken_whole_or_refused);
    tcase_add_test(tc, a_boundary_follows_the_loads_of_its_own_cells_not_of_their_cellapps);
    tcase_add_test(tc, a_busy_cellapp_gives_up_its_costliest_cell_first);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
