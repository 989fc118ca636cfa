/* The shared hash map (common/map.h): put, replace, get, remove with backward shifts among
 * colliding keys, growth, iteration, against a plain array as the reference. */
#include "check_main.h"

#include <stdint.h>
#include <stdlib.h>

#include "common/map.h"

#define N 5000

START_TEST(matches_a_reference_through_puts_and_removes)
{
    mc_map m;
    mc_map_init(&m);
    static int vals[N];
    static bool present[N];
    uint64_t rng = 42;
    for (int round = 0; round < 60000; round++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        int i = (int)(rng % N);
        /* keys that share their low bits and their second half, to collide */
        uint64_t k0 = (uint64_t)i << 20, k1 = (uint64_t)(i % 3);
        if (rng & 0x100000) {
            ck_assert(mc_map_put(&m, k0, k1, &vals[i]));
            present[i] = true;
        } else {
            void *old = mc_map_remove(&m, k0, k1);
            ck_assert_ptr_eq(old, present[i] ? &vals[i] : NULL);
            present[i] = false;
        }
    }
    size_t want = 0;
    for (int i = 0; i < N; i++) {
        ck_assert_ptr_eq(mc_map_get(&m, (uint64_t)i << 20, (uint64_t)(i % 3)),
                         present[i] ? &vals[i] : NULL);
        ck_assert_ptr_null(mc_map_get(&m, (uint64_t)i << 20, (uint64_t)(i % 3) + 3));
        want += present[i];
    }
    ck_assert_uint_eq(m.count, want);
    /* iteration visits every value once */
    size_t pos = 0, seen = 0;
    for (void *v; (v = mc_map_next(&m, &pos));) {
        int i = (int)((int *)v - vals);
        ck_assert(i >= 0 && i < N && present[i]);
        seen++;
    }
    ck_assert_uint_eq(seen, want);
    /* and with its key */
    pos = 0, seen = 0;
    uint64_t k0, k1;
    for (void *v; (v = mc_map_next_key(&m, &pos, &k0, &k1));) {
        int i = (int)((int *)v - vals);
        ck_assert(i >= 0 && i < N && present[i]);
        ck_assert(k0 == (uint64_t)i << 20 && k1 == (uint64_t)(i % 3));
        seen++;
    }
    ck_assert_uint_eq(seen, want);
    mc_map_free(&m);
    ck_assert_ptr_null(mc_map_get(&m, 0, 0));
    ck_assert_uint_eq(m.count, 0);
}
END_TEST

START_TEST(replacing_keeps_one_entry)
{
    mc_map m;
    mc_map_init(&m);
    int a, b;
    ck_assert(mc_map_put(&m, 7, 0, &a));
    ck_assert(mc_map_put(&m, 7, 0, &b));
    ck_assert_uint_eq(m.count, 1);
    ck_assert_ptr_eq(mc_map_get(&m, 7, 0), &b);
    ck_assert_ptr_eq(mc_map_remove(&m, 7, 0), &b);
    ck_assert_ptr_null(mc_map_remove(&m, 7, 0));
    mc_map_free(&m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("common_map");
    TCase *tc = tcase_create("map");
    tcase_add_test(tc, matches_a_reference_through_puts_and_removes);
    tcase_add_test(tc, replacing_keeps_one_entry);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
