/* The loginapp's rate limits and back-off: buckets refill at their rate up to their burst,
 * keys are independent, memory stays within the capacity under a flood of new keys (the
 * least recently used go first), back-off doubles up to its maximum and a success clears
 * it; the table stays exact under random failures and successes (deletions). */
#include "check_main.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "limits.h"

#define S 1000000ull

START_TEST(buckets_refill_at_their_rate_up_to_their_burst)
{
    mc_limits_config cfg = {.kind = MC_LIMITS_BUCKETS, .capacity = 10, .rate = 2, .burst = 3};
    mc_limits *l = mc_limits_new(&cfg);
    ck_assert_ptr_nonnull(l);
    uint64_t retry = 0;
    for (int i = 0; i < 3; i++)
        ck_assert(mc_limits_take(l, "1.2.3.4", 7, 0, &retry));
    ck_assert(!mc_limits_take(l, "1.2.3.4", 7, 0, &retry));
    ck_assert_uint_eq(retry, S / 2);
    ck_assert(mc_limits_take(l, "5.6.7.8", 7, 0, NULL)); /* another key: its own bucket */
    ck_assert(!mc_limits_take(l, "1.2.3.4", 7, S / 4, &retry));
    ck_assert_uint_eq(retry, S / 4);
    ck_assert(mc_limits_take(l, "1.2.3.4", 7, S / 2, NULL));
    ck_assert(!mc_limits_take(l, "1.2.3.4", 7, S / 2, NULL));
    /* a long pause fills the bucket to its burst, no more */
    for (int i = 0; i < 3; i++)
        ck_assert(mc_limits_take(l, "1.2.3.4", 7, 100 * S, NULL));
    ck_assert(!mc_limits_take(l, "1.2.3.4", 7, 100 * S, NULL));
    /* time going backwards (it cannot, but) refills nothing */
    ck_assert(!mc_limits_take(l, "1.2.3.4", 7, 50 * S, NULL));
    mc_limits_free(l);
    /* bad configurations */
    mc_limits_config bad = cfg;
    bad.rate = 0;
    ck_assert_ptr_null(mc_limits_new(&bad));
    bad = cfg;
    bad.burst = 0.5;
    ck_assert_ptr_null(mc_limits_new(&bad));
    bad = cfg;
    bad.capacity = 0;
    ck_assert_ptr_null(mc_limits_new(&bad));
    bad = (mc_limits_config){.kind = MC_LIMITS_BACKOFF, .capacity = 4, .base_us = 10, .max_us = 5};
    ck_assert_ptr_null(mc_limits_new(&bad));
}
END_TEST

START_TEST(a_flood_of_keys_stays_within_the_capacity)
{
    mc_limits_config cfg = {.kind = MC_LIMITS_BUCKETS, .capacity = 100, .rate = 1, .burst = 2};
    mc_limits *l = mc_limits_new(&cfg);
    /* "keep" is used all the time and must survive; it spends its tokens */
    ck_assert(mc_limits_take(l, "keep", 4, 0, NULL));
    ck_assert(mc_limits_take(l, "keep", 4, 0, NULL));
    for (int i = 0; i < 10000; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        ck_assert(mc_limits_take(l, k, strlen(k), 0, NULL));
        if (i % 50 == 0)
            ck_assert(!mc_limits_take(l, "keep", 4, 0, NULL)); /* still empty: remembered */
        ck_assert_uint_le(mc_limits_count(l), 100);
    }
    ck_assert_uint_eq(mc_limits_count(l), 100);
    ck_assert_uint_eq(mc_limits_evicted(l), 10000 + 1 - 100);
    /* an evicted key starts again with a full bucket */
    ck_assert(mc_limits_take(l, "k0", 2, 0, NULL));
    ck_assert(mc_limits_take(l, "k0", 2, 0, NULL));
    mc_limits_free(l);
}
END_TEST

START_TEST(backoff_doubles_up_to_its_maximum_and_success_clears_it)
{
    mc_limits_config cfg = {.kind = MC_LIMITS_BACKOFF, .capacity = 8, .base_us = S,
                            .max_us = 8 * S};
    mc_limits *l = mc_limits_new(&cfg);
    uint64_t retry;
    ck_assert(mc_limits_may_try(l, "alice", 5, 0, &retry));
    ck_assert_uint_eq(mc_limits_count(l), 0); /* asking creates nothing */
    uint64_t now = 0, want[] = {1, 2, 4, 8, 8, 8};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        mc_limits_failed(l, "alice", 5, now);
        ck_assert(!mc_limits_may_try(l, "alice", 5, now, &retry));
        ck_assert_uint_eq(retry, want[i] * S);
        ck_assert(!mc_limits_may_try(l, "alice", 5, now + want[i] * S - 1, NULL));
        now += want[i] * S;
        ck_assert(mc_limits_may_try(l, "alice", 5, now, NULL));
    }
    ck_assert(mc_limits_may_try(l, "bob", 3, now, NULL)); /* others unaffected */
    mc_limits_succeeded(l, "alice", 5);
    ck_assert_uint_eq(mc_limits_count(l), 0);
    mc_limits_failed(l, "alice", 5, now);
    ck_assert(!mc_limits_may_try(l, "alice", 5, now, &retry));
    ck_assert_uint_eq(retry, S); /* from the start again */
    mc_limits_free(l);
}
END_TEST

/* Random failures and successes on 300 keys (no eviction): the table answers exactly like a
 * model, so deletion never loses or invents a key. */
START_TEST(the_table_stays_exact_under_deletions)
{
    enum { K = 300 };
    mc_limits_config cfg = {.kind = MC_LIMITS_BACKOFF, .capacity = K, .base_us = 1000,
                            .max_us = 1000000};
    mc_limits *l = mc_limits_new(&cfg);
    uint64_t deadline[K] = {0};
    uint32_t fails[K] = {0};
    uint32_t st = 4242;
    uint64_t now = 1;
    for (int op = 0; op < 30000; op++) {
        st ^= st << 13;
        st ^= st >> 17;
        st ^= st << 5;
        int k = (int)(st % K);
        char key[16];
        snprintf(key, sizeof key, "acct%d", k);
        now += st % 300;
        if (st % 3 == 0) {
            mc_limits_succeeded(l, key, strlen(key));
            deadline[k] = 0;
            fails[k] = 0;
        } else if (st % 3 == 1) {
            mc_limits_failed(l, key, strlen(key), now);
            fails[k]++;
            uint64_t d = 1000;
            for (uint32_t f = 1; f < fails[k] && d < 1000000; f++)
                d *= 2;
            deadline[k] = now + (d > 1000000 ? 1000000 : d);
        }
        uint64_t retry;
        bool may = mc_limits_may_try(l, key, strlen(key), now, &retry);
        ck_assert_int_eq(may, now >= deadline[k]);
        if (!may)
            ck_assert_uint_eq(retry, deadline[k] - now);
    }
    size_t present = 0;
    for (int k = 0; k < K; k++)
        present += fails[k] > 0;
    ck_assert_uint_eq(mc_limits_count(l), present);
    ck_assert_uint_eq(mc_limits_evicted(l), 0);
    mc_limits_free(l);
}
END_TEST

/* The hash table's home slot of a key under the loginapp's old, unkeyed hash (FNV-1a, then
 * h ^ h >> 29): what an attacker could compute to choose names that all collide. */
static size_t fnv_home(const char *k, size_t nslots)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = k; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    return (size_t)((h ^ (h >> 29)) & (nslots - 1));
}

/* Issue 19, medium 5: 1500 names chosen to share one home slot under an unkeyed hash cost
 * a few slots each, not a walk along all the others (keyed SipHash: the attacker cannot
 * know which names collide). */
START_TEST(chosen_colliding_keys_cost_bounded_work)
{
    enum { N = 1500 };
    mc_limits_config cfg = {.kind = MC_LIMITS_BUCKETS, .capacity = 2048, .rate = 1, .burst = 5};
    mc_limits *l = mc_limits_new(&cfg);
    ck_assert_ptr_nonnull(l);
    static char keys[N][16];
    int found = 0;
    for (unsigned i = 0; found < N; i++) {
        snprintf(keys[found], sizeof keys[found], "n%u", i);
        if (fnv_home(keys[found], 4096) == 7)
            found++;
    }
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < N; i++)
            ck_assert(mc_limits_take(l, keys[i], strlen(keys[i]), 0, NULL));
    ck_assert_uint_eq(mc_limits_count(l), N);
    ck_assert_uint_eq(mc_limits_evicted(l), 0);
    ck_assert_msg(mc_limits_probes(l) < 4u * 2 * N, "%llu slots examined for %d lookups",
                  (unsigned long long)mc_limits_probes(l), 2 * N);
    mc_limits_free(l);
}
END_TEST

/* Even keys that do collide (found here with the table's own hash key) never make a lookup
 * examine more than MC_LIMIT_PROBE_MAX slots: once their window is full, each new key
 * replaces the least recently used of it, and the most recent keys are all still there. */
START_TEST(no_lookup_examines_more_than_the_probe_bound)
{
    enum { N = 100 };
    uint8_t hk[MC_LIMIT_HASH_KEY_BYTES];
    for (size_t i = 0; i < sizeof hk; i++)
        hk[i] = (uint8_t)(i * 37 + 1);
    mc_limits_config cfg = {.kind = MC_LIMITS_BACKOFF, .capacity = 64, .base_us = S,
                            .max_us = 8 * S, .hash_key = hk};
    mc_limits *l = mc_limits_new(&cfg); /* 64 keys: 128 slots */
    static char keys[N][16];
    int found = 0;
    for (unsigned i = 0; found < N; i++) {
        uint8_t h[crypto_shorthash_BYTES];
        snprintf(keys[found], sizeof keys[found], "c%u", i);
        crypto_shorthash(h, (const uint8_t *)keys[found], strlen(keys[found]), hk);
        if ((h[0] & 127) == 5)
            found++;
    }
    for (int i = 0; i < N; i++) {
        uint64_t before = mc_limits_probes(l);
        mc_limits_failed(l, keys[i], strlen(keys[i]), 0);
        ck_assert_uint_le(mc_limits_probes(l) - before, MC_LIMIT_PROBE_MAX);
        before = mc_limits_probes(l);
        ck_assert(!mc_limits_may_try(l, keys[i], strlen(keys[i]), 0, NULL));
        ck_assert_uint_le(mc_limits_probes(l) - before, MC_LIMIT_PROBE_MAX);
    }
    ck_assert_uint_eq(mc_limits_count(l), MC_LIMIT_PROBE_MAX);
    ck_assert_uint_eq(mc_limits_evicted(l), N - MC_LIMIT_PROBE_MAX);
    for (int i = N - (int)MC_LIMIT_PROBE_MAX; i < N; i++)
        ck_assert(!mc_limits_may_try(l, keys[i], strlen(keys[i]), 0, NULL));
    ck_assert(mc_limits_may_try(l, keys[0], strlen(keys[0]), 0, NULL)); /* replaced */
    /* other keys still find room */
    ck_assert(!mc_limits_may_try(l, keys[N - 1], strlen(keys[N - 1]), 0, NULL));
    mc_limits_failed(l, "other", 5, 0);
    ck_assert(!mc_limits_may_try(l, "other", 5, 0, NULL));
    mc_limits_free(l);
}
END_TEST

/* mc_limits_ready looks without taking or remembering. */
START_TEST(ready_looks_without_taking)
{
    mc_limits_config cfg = {.kind = MC_LIMITS_BUCKETS, .capacity = 4, .rate = 1, .burst = 2};
    mc_limits *l = mc_limits_new(&cfg);
    ck_assert(mc_limits_ready(l, "a", 1, 0));
    ck_assert_uint_eq(mc_limits_count(l), 0);
    ck_assert(mc_limits_take(l, "a", 1, 0, NULL));
    ck_assert(mc_limits_ready(l, "a", 1, 0));
    ck_assert(mc_limits_take(l, "a", 1, 0, NULL));
    ck_assert(!mc_limits_ready(l, "a", 1, 0));
    ck_assert(!mc_limits_ready(l, "a", 1, S / 2));
    ck_assert(mc_limits_ready(l, "a", 1, S));
    mc_limits_free(l);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("limits");
    tcase_add_test(tc, buckets_refill_at_their_rate_up_to_their_burst);
    tcase_add_test(tc, a_flood_of_keys_stays_within_the_capacity);
    tcase_add_test(tc, backoff_doubles_up_to_its_maximum_and_success_clears_it);
    tcase_add_test(tc, the_table_stays_exact_under_deletions);
    tcase_add_test(tc, chosen_colliding_keys_cost_bounded_work);
    tcase_add_test(tc, no_lookup_examines_more_than_the_probe_bound);
    tcase_add_test(tc, ready_looks_without_taking);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
