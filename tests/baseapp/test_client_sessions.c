/* Login sessions a baseapp issues: unique random ids and keys, looked up during the
 * handshake, taken once, expired on the substituted clock, bounded, forgotten with their
 * entity. */
#include "check_main.h"

#include <string.h>

#include "client_sessions.h"
#include "common/clock.h"

static mc_time_us fake_now;
static mc_time_us fake_clock(void *ctx)
{
    (void)ctx;
    return fake_now;
}

START_TEST(a_session_is_looked_up_then_taken_once)
{
    base_sessions *s = base_sessions_new(8, 1000);
    ck_assert_ptr_nonnull(s);
    uint64_t id1 = 0, id2 = 0;
    uint8_t k1[MC_SECURE_KEY_BYTES], k2[MC_SECURE_KEY_BYTES], got[MC_SECURE_KEY_BYTES];
    ck_assert_int_eq(base_sessions_issue(s, 7, NULL, false, &id1, k1), 0);
    ck_assert_int_eq(base_sessions_issue(s, 7, NULL, false, &id2, k2), 0);
    ck_assert(id1 != 0 && id2 != 0 && id1 != id2);
    ck_assert(memcmp(k1, k2, sizeof k1) != 0);
    ck_assert_int_eq(base_sessions_lookup(s, id1, got), 0);
    ck_assert(memcmp(got, k1, sizeof k1) == 0);
    ck_assert_int_eq(base_sessions_lookup(s, id1 ^ 1, got), -1);
    ck_assert_int_eq(base_sessions_lookup(s, 0, got), -1);
    int32_t ent = 0;
    ck_assert_int_eq(base_sessions_take(s, id1, &ent, NULL, NULL), 0);
    ck_assert_int_eq(ent, 7);
    ck_assert_int_eq(base_sessions_take(s, id1, &ent, NULL, NULL), -1); /* one-time */
    ck_assert_int_eq(base_sessions_lookup(s, id1, got), -1);
    ck_assert_uint_eq(base_sessions_count(s), 1);
    base_sessions_stats st;
    base_sessions_get_stats(s, &st);
    ck_assert_uint_eq(st.issued, 2);
    ck_assert_uint_eq(st.taken, 1);
    ck_assert_uint_eq(st.unknown_lookups, 3);
    base_sessions_free(s);
    ck_assert_ptr_null(base_sessions_new(0, 1000));
    ck_assert_ptr_null(base_sessions_new(1, 0));
}
END_TEST

static int32_t expired_ids[16];
static size_t nexpired;
static void on_expired(void *ctx, int32_t id)
{
    (void)ctx;
    if (nexpired < 16)
        expired_ids[nexpired++] = id;
}

START_TEST(sessions_expire_are_bounded_and_go_with_their_entity)
{
    fake_now = 1000 * MC_US_PER_S;
    mc_clock_set_source(fake_clock, NULL);
    base_sessions *s = base_sessions_new(3, 500);
    uint64_t id[4];
    uint8_t k[MC_SECURE_KEY_BYTES];
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(base_sessions_issue(s, 10 + (i == 2), NULL, false, &id[i], k), 0);
    ck_assert_int_eq(base_sessions_issue(s, 12, NULL, false, &id[3], k), -1); /* full */
    ck_assert(base_sessions_has_entity(s, 10) && base_sessions_has_entity(s, 11));
    /* just before the expiry: still there; at it: refused, until the sweep reports it */
    fake_now += 499 * MC_US_PER_MS;
    ck_assert_int_eq(base_sessions_lookup(s, id[0], k), 0);
    fake_now += 1 * MC_US_PER_MS;
    ck_assert_int_eq(base_sessions_lookup(s, id[0], k), -1);
    int32_t ent;
    ck_assert_int_eq(base_sessions_take(s, id[1], &ent, NULL, NULL), -1);
    ck_assert(!base_sessions_has_entity(s, 10));
    ck_assert_uint_eq(base_sessions_count(s), 3);
    nexpired = 0;
    base_sessions_expire(s, on_expired, NULL);
    ck_assert_uint_eq(nexpired, 3);
    ck_assert_int_eq(expired_ids[0] + expired_ids[1] + expired_ids[2], 10 + 10 + 11);
    ck_assert_uint_eq(base_sessions_count(s), 0);
    base_sessions_stats st;
    base_sessions_get_stats(s, &st);
    ck_assert_uint_eq(st.expired, 3);
    ck_assert_uint_eq(st.refused_full, 1);
    /* an entity's sessions go with it, others stay */
    ck_assert_int_eq(base_sessions_issue(s, 12, NULL, false, &id[0], k), 0);
    ck_assert_int_eq(base_sessions_issue(s, 12, NULL, false, &id[2], k), 0);
    ck_assert_int_eq(base_sessions_issue(s, 13, NULL, false, &id[1], k), 0);
    ck_assert_uint_eq(base_sessions_forget_entity(s, 12), 2);
    ck_assert_uint_eq(base_sessions_count(s), 1);
    ck_assert_int_eq(base_sessions_take(s, id[1], &ent, NULL, NULL), 0);
    ck_assert_int_eq(ent, 13);
    /* a taken or forgotten session is never reported */
    fake_now += 1000 * MC_US_PER_MS;
    nexpired = 0;
    base_sessions_expire(s, on_expired, NULL);
    ck_assert_uint_eq(nexpired, 0);
    base_sessions_free(s);
    mc_clock_set_source(NULL, NULL);
}
END_TEST

START_TEST(many_sessions_stay_exact)
{
    base_sessions *s = base_sessions_new(5000, 60000);
    static uint64_t ids[4000];
    uint8_t k[MC_SECURE_KEY_BYTES];
    for (int i = 0; i < 4000; i++)
        ck_assert_int_eq(base_sessions_issue(s, i % 100, NULL, false, &ids[i], k), 0);
    ck_assert_uint_eq(base_sessions_forget_entity(s, 5), 40);
    for (int i = 0; i < 4000; i++) {
        int32_t ent = -1;
        int rc = base_sessions_take(s, ids[i], &ent, NULL, NULL);
        if (i % 100 == 5)
            ck_assert_int_eq(rc, -1);
        else {
            ck_assert_int_eq(rc, 0);
            ck_assert_int_eq(ent, i % 100);
        }
    }
    ck_assert_uint_eq(base_sessions_count(s), 0);
    base_sessions_free(s);
}
END_TEST

static size_t nreported;
static void count_reported(void *ctx, int32_t id)
{
    (void)ctx;
    (void)id;
    nreported++;
}

/* More sessions than one sweep's batch (64): a sweep with a callback reports one batch, the
 * next sweeps the rest, none twice; without a callback every expired one goes at once; an
 * entity with many sessions loses them all. */
START_TEST(expiry_and_forgetting_go_in_batches)
{
    fake_now = 2000 * MC_US_PER_S;
    mc_clock_set_source(fake_clock, NULL);
    base_sessions *s = base_sessions_new(1000, 500);
    uint64_t id;
    uint8_t k[MC_SECURE_KEY_BYTES];
    for (int i = 0; i < 150; i++)
        ck_assert_int_eq(base_sessions_issue(s, 1000 + i, NULL, false, &id, k), 0);
    fake_now += 500 * MC_US_PER_MS;
    size_t sweeps = 0;
    nreported = 0;
    while (base_sessions_count(s) > 0 && sweeps < 10) {
        size_t before = base_sessions_count(s);
        base_sessions_expire(s, count_reported, NULL);
        ck_assert_uint_eq(before - base_sessions_count(s), before < 64 ? before : 64);
        sweeps++;
    }
    ck_assert_uint_eq(sweeps, 3);
    ck_assert_uint_eq(nreported, 150);
    for (int i = 0; i < 150; i++)
        ck_assert_int_eq(base_sessions_issue(s, 7, NULL, false, &id, k), 0);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(base_sessions_issue(s, 8, NULL, false, &id, k), 0);
    ck_assert_uint_eq(base_sessions_forget_entity(s, 7), 150);
    ck_assert_uint_eq(base_sessions_count(s), 100);
    fake_now += 500 * MC_US_PER_MS;
    base_sessions_expire(s, NULL, NULL);
    ck_assert_uint_eq(base_sessions_count(s), 0);
    base_sessions_stats st;
    base_sessions_get_stats(s, &st);
    ck_assert_uint_eq(st.expired, 250);
    base_sessions_free(s);
    mc_clock_set_source(NULL, NULL);
}
END_TEST

/* Which session ids a HELLO is answered for: issued ones, live or gone within 60 s; never
 * an id this baseapp did not issue. */
START_TEST(only_issued_sessions_are_known)
{
    fake_now = 1000 * MC_US_PER_S;
    mc_clock_set_source(fake_clock, NULL);
    base_sessions *s = base_sessions_new(8, 1000);
    ck_assert_ptr_nonnull(s);
    uint64_t id = 0;
    uint8_t k[MC_SECURE_KEY_BYTES];
    ck_assert_int_eq(base_sessions_issue(s, 7, NULL, false, &id, k), 0);
    ck_assert(base_sessions_known(s, id));
    ck_assert(!base_sessions_known(s, id ^ 1));
    ck_assert(!base_sessions_known(s, 0));
    int32_t ent;
    ck_assert_int_eq(base_sessions_take(s, id, &ent, NULL, NULL), 0);
    ck_assert(base_sessions_known(s, id)); /* used: answered, then refused in the handshake */
    fake_now += 59 * MC_US_PER_S;
    ck_assert(base_sessions_known(s, id));
    fake_now += 2 * MC_US_PER_S;
    ck_assert(!base_sessions_known(s, id)); /* gone for over a minute: a stranger's id */
    base_sessions_free(s);
    mc_clock_set_source(NULL, NULL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("client_sessions");
    TCase *tc = tcase_create("sessions");
    tcase_add_test(tc, a_session_is_looked_up_then_taken_once);
    tcase_add_test(tc, sessions_expire_are_bounded_and_go_with_their_entity);
    tcase_add_test(tc, expiry_and_forgetting_go_in_batches);
    tcase_add_test(tc, many_sessions_stay_exact);
    tcase_add_test(tc, only_issued_sessions_are_known);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
