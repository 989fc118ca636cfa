/* The client library's view of the world (client/src/world_view.c) fed runs of records
 * directly: a VOLATILE older (by its WORLD_VOLATILE stamp) than one already applied to the
 * entity does not overwrite the newer position, whatever order the network delivered them
 * in, per entity, across a re-entry and across the stamp's wrap; reliable records (ENTER,
 * CORRECTION) are not stamped. A new cell for the player (its own ENTER again) drops the old
 * view. */
#include "check_main.h"
#include "world_view.h"

#include <string.h>

#define PLAYER 100
#define AVATAR 1 /* the example game's type ids: Account 0, Avatar 1 */

static mc_entity_defs *defs;
static int records;

static void setup(void)
{
    char err[4096];
    defs = mc_defs_load(MC_DEFS_DIR, err, sizeof err);
    ck_assert_msg(defs != NULL, "%s", err);
    records = 0;
}

static void teardown(void) { mc_defs_free(defs); }

static void count(void *ctx, const mc_world_record *r)
{
    (void)ctx;
    (void)r;
    records++;
}

static mc_vector3 at(float x) { return (mc_vector3){x, 0, 0}; }

static void enter(world_view *v, int32_t id, float x)
{
    mc_ostream os;
    mc_ostream_init(&os);
    size_t n_at;
    mc_world_write_enter(&os, id, AVATAR, at(x), at(0), 0, &n_at);
    char why[256];
    ck_assert_int_eq(world_view_apply(v, defs, PLAYER, AVATAR, 0, os.data, os.size, count, NULL,
                                      why, sizeof why),
                     0);
    mc_ostream_free(&os);
}

static void leave(world_view *v, int32_t id)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_world_write_leave(&os, id);
    char why[256];
    ck_assert_int_eq(world_view_apply(v, defs, PLAYER, AVATAR, 0, os.data, os.size, count, NULL,
                                      why, sizeof why),
                     0);
    mc_ostream_free(&os);
}

/* One WORLD_VOLATILE with this stamp: entity ids[i] at xs[i]. */
static void moves(world_view *v, uint32_t stamp, const int32_t *ids, const float *xs, size_t n)
{
    mc_ostream os;
    mc_ostream_init(&os);
    for (size_t i = 0; i < n; i++)
        mc_world_write_volatile(&os, ids[i], at(xs[i]), at(0));
    char why[256];
    ck_assert_int_eq(world_view_apply(v, defs, PLAYER, AVATAR, stamp, os.data, os.size, count,
                                      NULL, why, sizeof why),
                     0);
    mc_ostream_free(&os);
}

static void move1(world_view *v, uint32_t stamp, int32_t id, float x)
{
    moves(v, stamp, &id, &x, 1);
}

static float x_of(const world_view *v, int32_t id)
{
    const mc_client_entity *e = world_view_find(v, id);
    ck_assert_ptr_nonnull(e);
    return e->position.x;
}

START_TEST(an_older_volatile_does_not_overwrite_a_newer_position)
{
    world_view v;
    memset(&v, 0, sizeof v);
    enter(&v, 7, 0);
    move1(&v, 2, 7, 2);
    ck_assert_float_eq(x_of(&v, 7), 2);
    int before = records;
    move1(&v, 1, 7, 1); /* sent before stamp 2, delivered after it */
    ck_assert_float_eq(x_of(&v, 7), 2);
    ck_assert_int_eq(records, before); /* not handed to the game either */
    ck_assert_uint_eq(v.stale, 1);
    move1(&v, 2, 7, 5); /* a duplicate stamp */
    ck_assert_float_eq(x_of(&v, 7), 2);
    move1(&v, 3, 7, 3);
    ck_assert_float_eq(x_of(&v, 7), 3);
    world_view_free(&v);
}
END_TEST

START_TEST(the_order_is_per_entity)
{
    world_view v;
    memset(&v, 0, sizeof v);
    enter(&v, 7, 0);
    enter(&v, 8, 0);
    move1(&v, 5, 8, 50); /* stamp 5 carried only 8 */
    moves(&v, 4, (int32_t[]){7, 8}, (float[]){40, 41}, 2); /* 4 arrives late */
    ck_assert_float_eq(x_of(&v, 7), 40); /* nothing newer for 7 */
    ck_assert_float_eq(x_of(&v, 8), 50);
    ck_assert_uint_eq(v.stale, 1);
    world_view_free(&v);
}
END_TEST

START_TEST(a_volatile_from_before_an_entry_is_older_than_it)
{
    world_view v;
    memset(&v, 0, sizeof v);
    enter(&v, 7, 0);
    move1(&v, 6, 7, 6);
    move1(&v, 9, 7, 9);
    leave(&v, 7);
    enter(&v, 7, 100); /* back in view, at 100 */
    move1(&v, 8, 7, 8); /* from before it left */
    ck_assert_float_eq(x_of(&v, 7), 100);
    move1(&v, 10, 7, 110);
    ck_assert_float_eq(x_of(&v, 7), 110);
    world_view_free(&v);
}
END_TEST

START_TEST(stamps_wrap)
{
    world_view v;
    memset(&v, 0, sizeof v);
    enter(&v, 7, 0);
    move1(&v, 0xFFFFFFFFu, 7, 1);
    move1(&v, 1, 7, 2); /* the next after the wrap (0 is never a stamp) */
    ck_assert_float_eq(x_of(&v, 7), 2);
    move1(&v, 0xFFFFFFFEu, 7, 3);
    ck_assert_float_eq(x_of(&v, 7), 2);
    world_view_free(&v);
}
END_TEST

/* The player's cell is made anew (restored after its cellapp died): its own ENTER comes
 * again, and what the old cell's view held goes (each handed over as a LEAVE) before the new
 * view is introduced; the first own ENTER drops nothing. */
static int leaves_seen;

static void count_leaves(void *ctx, const mc_world_record *r)
{
    (void)ctx;
    if (r->kind == MC_WORLD_LEAVE)
        leaves_seen++;
}

static void own_enter(world_view *v, float x)
{
    mc_ostream os;
    mc_ostream_init(&os);
    size_t n_at;
    mc_world_write_enter(&os, PLAYER, AVATAR, at(x), at(0), 0, &n_at);
    char why[256];
    ck_assert_int_eq(world_view_apply(v, defs, PLAYER, AVATAR, 0, os.data, os.size, count_leaves,
                                      NULL, why, sizeof why),
                     0);
    mc_ostream_free(&os);
}

START_TEST(a_new_player_cell_starts_its_view_afresh)
{
    world_view v;
    memset(&v, 0, sizeof v);
    leaves_seen = 0;
    own_enter(&v, 1);
    enter(&v, 7, 0);
    enter(&v, 8, 0);
    enter(&v, 9, 0);
    ck_assert_int_eq(leaves_seen, 0);
    ck_assert_uint_eq(v.n, 3);
    own_enter(&v, 5); /* restored: a new cell */
    ck_assert_int_eq(leaves_seen, 3);
    ck_assert_uint_eq(v.n, 0);
    ck_assert(v.has_player_cell);
    ck_assert_float_eq(v.player.position.x, 5);
    ck_assert_ptr_null(world_view_find(&v, 7));
    enter(&v, 8, 2); /* the new view */
    ck_assert_uint_eq(v.n, 1);
    ck_assert_float_eq(x_of(&v, 8), 2);
    world_view_free(&v);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("world_view");
    TCase *tc = tcase_create("volatile order");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, an_older_volatile_does_not_overwrite_a_newer_position);
    tcase_add_test(tc, the_order_is_per_entity);
    tcase_add_test(tc, a_volatile_from_before_an_entry_is_older_than_it);
    tcase_add_test(tc, stamps_wrap);
    tcase_add_test(tc, a_new_player_cell_starts_its_view_afresh);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
