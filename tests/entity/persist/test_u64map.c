/* The baseapp's u64map (baseapp/src/u64map.h): puts, replacements, gets and deletions
 * (backward-shift deletion keeps every other key findable) checked against a plain array,
 * with keys that collide in the low bits, through several growths. */
#include "u64map.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#define NKEYS 5000

static uint64_t key_of(size_t i)
{
    /* Clusters of keys that differ only in high bits, and small consecutive ones. */
    return i % 2 ? ((uint64_t)(i / 2 + 1) << 40) | 7u : (uint64_t)i + 1;
}

START_TEST(test_against_reference)
{
    u64map m = {0};
    static void *ref[NKEYS];
    uint64_t seed = 12345;
    for (int op = 0; op < 400000; op++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t i = (size_t)(seed >> 33) % NKEYS;
        uint64_t k = key_of(i);
        switch ((seed >> 20) % 3) {
        case 0:
        case 1:
            if ((seed >> 25) % 2) {
                void *v = (void *)(uintptr_t)(op + 1);
                ck_assert_int_eq(u64map_put(&m, k, v), 0);
                ref[i] = v;
            } else {
                u64map_del(&m, k);
                ref[i] = NULL;
            }
            break;
        default:
            ck_assert_ptr_eq(u64map_get(&m, k), ref[i]);
            break;
        }
    }
    size_t count = 0;
    for (size_t i = 0; i < NKEYS; i++) {
        ck_assert_ptr_eq(u64map_get(&m, key_of(i)), ref[i]);
        count += ref[i] != NULL;
    }
    ck_assert_uint_eq(m.count, count);
    ck_assert_int_eq(u64map_put(&m, 0, ref), -1); /* 0 is no key */
    ck_assert_ptr_null(u64map_get(&m, 0));
    u64map_free(&m);
    ck_assert_ptr_null(u64map_get(&m, 1));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("u64map");
    TCase *tc = tcase_create("map");
    tcase_add_test(tc, test_against_reference);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
