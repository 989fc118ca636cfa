/* A witness's world updates (cellapp/src/witness.c) without an engine: an entity in view is
 * introduced (ENTER), its move sent as VOLATILE; once it stands still, its position is sent
 * again after --volatileRefreshTicks idle ticks and then at doubling gaps (capped), so a
 * lost last VOLATILE is corrected within a bounded number of ticks; an entity that never
 * moved after its (reliable) ENTER is never re-sent. */
#include "check_main.h"
#include "client_shadow.h"
#include "entity/world_wire.h"
#include "witness.h"

#include <math.h>
#include <string.h>

static const mc_entity_type_def walker_type = {
    .name = "Walker", .client_server = true, .volatile_info = {.position = true, .yaw = true}};

typedef struct {
    mc_entity me, other;
    client_shadow shadow;
    uint64_t enters, leaves, props, volatiles, deferred, refreshes;
} world;

static mc_entity *find(void *ctx, int32_t id)
{
    world *w = ctx;
    return id == 1 ? &w->me : id == 2 ? &w->other : NULL;
}

static client_shadow *shadow(void *ctx, mc_entity *ent)
{
    world *w = ctx;
    return ent == &w->other ? &w->shadow : NULL; /* the witness itself: nothing of its own */
}

static void setup(world *w, witness_env *env, uint32_t refresh)
{
    memset(w, 0, sizeof *w);
    w->me = (mc_entity){.id = 1, .td = &walker_type, .part = MC_PART_CELL};
    w->other = (mc_entity){.id = 2, .td = &walker_type, .part = MC_PART_CELL,
                           .position = {3, 0, 4}};
    *env = (witness_env){.ctx = w, .find = find, .shadow = shadow, .budget = 2000,
                         .refresh_ticks = refresh, .enters = &w->enters, .leaves = &w->leaves,
                         .props = &w->props, .volatiles = &w->volatiles,
                         .deferred = &w->deferred, .refreshes = &w->refreshes};
}

/* One tick: the x of entity 2's VOLATILE in this tick's volatile run, or NAN without one. */
static float tick(witness *wi, const witness_env *env, world *w)
{
    const mc_ostream *rel, *vol;
    ck_assert_int_eq(witness_build(wi, env, &w->me, &rel, &vol), 0);
    if (!vol->size)
        return NAN;
    ck_assert_uint_eq(vol->size, MC_WORLD_VOLATILE_SIZE);
    ck_assert_int_eq(vol->data[0], MC_WORLD_VOLATILE);
    ck_assert_int_eq(mc_load_u32(vol->data + 1), 2);
    uint32_t bits = mc_load_u32(vol->data + 5);
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

START_TEST(a_still_entity_whose_last_update_was_lost_is_corrected)
{
    world w;
    witness_env env;
    setup(&w, &env, 5);
    witness *wi = witness_new();
    ck_assert_ptr_nonnull(wi);
    ck_assert_int_eq(witness_entered(wi, 2), 0);
    ck_assert(isnan(tick(wi, &env, &w))); /* ENTER (reliable) */
    ck_assert_uint_eq(w.enters, 1);
    /* never moved since its ENTER: nothing volatile, ever */
    for (int i = 0; i < 100; i++)
        ck_assert(isnan(tick(wi, &env, &w)));
    /* it moves once: a VOLATILE (which the network loses), then it stands still */
    w.other.position.x = 10;
    ck_assert_float_eq(tick(wi, &env, &w), 10);
    int first = 0;
    for (int t = 1; t <= 5 && !first; t++)
        if (!isnan(tick(wi, &env, &w)))
            first = t;
    ck_assert_int_eq(first, 5); /* re-sent after 5 idle ticks */
    ck_assert_uint_eq(w.refreshes, 1);
    /* then after 10, 20, 40, 80, 80... ticks (16 x 5 at most) */
    int gaps[] = {10, 20, 40, 80, 80, 80};
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        int at = 0;
        for (int t = 1; t <= gaps[g] && !at; t++) {
            float x = tick(wi, &env, &w);
            if (!isnan(x)) {
                ck_assert_float_eq(x, 10);
                at = t;
            }
        }
        ck_assert_int_eq(at, gaps[g]);
    }
    /* it moves again: sent at once, and the gap starts over */
    w.other.position.x = 11;
    ck_assert_float_eq(tick(wi, &env, &w), 11);
    for (int t = 1; t < 5; t++)
        ck_assert(isnan(tick(wi, &env, &w)));
    ck_assert_float_eq(tick(wi, &env, &w), 11);
    witness_free(wi);
}
END_TEST

START_TEST(no_refresh_when_turned_off)
{
    world w;
    witness_env env;
    setup(&w, &env, 0);
    witness *wi = witness_new();
    ck_assert_int_eq(witness_entered(wi, 2), 0);
    ck_assert(isnan(tick(wi, &env, &w)));
    w.other.position.x = 10;
    ck_assert_float_eq(tick(wi, &env, &w), 10);
    for (int i = 0; i < 200; i++)
        ck_assert(isnan(tick(wi, &env, &w)));
    ck_assert_uint_eq(w.refreshes, 0);
    witness_free(wi);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("witness");
    TCase *tc = tcase_create("refresh");
    tcase_add_test(tc, a_still_entity_whose_last_update_was_lost_is_corrected);
    tcase_add_test(tc, no_refresh_when_turned_off);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
