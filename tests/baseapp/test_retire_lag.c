/* The late senders' table of the receiving side of a retirement (retire_lag.h): pairs of a
 * retiring baseapp and a sender it named in RETIRE_END. Each RETIRE_END replaces its
 * sender's list: a handover that started over names only the peers late that time, and a
 * sender named before and not now is released (before, lists were only added to, so the
 * first round's late senders stayed held until the retiring baseapp died). */
#include "check_main.h"

#include "retire_lag.h"

static mc_address addr(const char *text)
{
    mc_address a;
    ck_assert_int_eq(mc_address_parse(text, &a), 0);
    return a;
}

START_TEST(a_second_end_replaces_the_first_list)
{
    retire_lags l = {0};
    mc_address r1 = addr("127.0.0.1:4001"), r2 = addr("127.0.0.1:4002");
    mc_address s1 = addr("127.0.0.1:5001"), s2 = addr("127.0.0.1:5002"),
               s3 = addr("127.0.0.1:5003");
    mc_address first[] = {s1, s2, s1};
    ck_assert_int_eq(retire_lags_replace(&l, &r1, first, 3, 1024), 0);
    ck_assert_uint_eq(l.n, 2); /* s1 once */
    mc_address other[] = {s1};
    ck_assert_int_eq(retire_lags_replace(&l, &r2, other, 1, 1024), 0);
    ck_assert(retire_lags_has(&l, &r1, &s1) && retire_lags_has(&l, &r1, &s2));
    /* the handover of r1 started over: only s3 is late now */
    mc_address second[] = {s3};
    ck_assert_int_eq(retire_lags_replace(&l, &r1, second, 1, 1024), 0);
    ck_assert(!retire_lags_has(&l, &r1, &s1));
    ck_assert(!retire_lags_has(&l, &r1, &s2));
    ck_assert(retire_lags_has(&l, &r1, &s3));
    ck_assert(retire_lags_has(&l, &r2, &s1)); /* another retiring baseapp's list stays */
    ck_assert_uint_eq(l.n, 2);
    /* an empty list: nothing of r1 is held any more */
    ck_assert_int_eq(retire_lags_replace(&l, &r1, NULL, 0, 1024), 0);
    ck_assert(!retire_lags_has(&l, &r1, &s3));
    ck_assert_uint_eq(l.n, 1);
    retire_lags_free(&l);
    ck_assert_uint_eq(l.n, 0);
}
END_TEST

START_TEST(sender_end_and_death_drop)
{
    retire_lags l = {0};
    mc_address r1 = addr("127.0.0.1:4001");
    mc_address s[] = {addr("127.0.0.1:5001"), addr("127.0.0.1:5002")};
    ck_assert_int_eq(retire_lags_replace(&l, &r1, s, 2, 1024), 0);
    retire_lags_drop(&l, &r1, &s[0]); /* RETIRE_SENDER_END */
    ck_assert(!retire_lags_has(&l, &r1, &s[0]) && retire_lags_has(&l, &r1, &s[1]));
    retire_lags_drop(&l, &r1, NULL); /* r1 died */
    ck_assert_uint_eq(l.n, 0);
    retire_lags_free(&l);
}
END_TEST

START_TEST(the_bound_is_kept)
{
    retire_lags l = {0};
    mc_address r1 = addr("127.0.0.1:4001"), r2 = addr("127.0.0.1:4002");
    mc_address s[] = {addr("127.0.0.1:5001"), addr("127.0.0.1:5002"),
                      addr("127.0.0.1:5003")};
    ck_assert_int_eq(retire_lags_replace(&l, &r1, s, 2, 3), 0);
    ck_assert_int_eq(retire_lags_replace(&l, &r2, s, 3, 3), -1);
    ck_assert_uint_eq(l.n, 3);
    /* r1's list replaced by one: room again for r2's */
    ck_assert_int_eq(retire_lags_replace(&l, &r1, s, 1, 3), 0);
    ck_assert_int_eq(retire_lags_replace(&l, &r2, s, 2, 3), 0);
    ck_assert_uint_eq(l.n, 3);
    retire_lags_free(&l);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("retire_lag");
    TCase *tc = tcase_create("lags");
    tcase_add_test(tc, a_second_end_replaces_the_first_list);
    tcase_add_test(tc, sender_end_and_death_drop);
    tcase_add_test(tc, the_bound_is_kept);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
