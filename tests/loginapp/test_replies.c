/* The loginapp's remembered answers (replies.h): a pending login, then its answer found by
 * source address and nonce only (another port or nonce is another login), entries expire
 * after keep_ms, the oldest goes first when full, a flood stays within the capacity. */
#include "check_main.h"

#include <string.h>

#include "replies.h"

#define MS 1000ull

static la_reply_key key(uint32_t ip, uint16_t port, uint8_t n)
{
    la_reply_key k = {.ip = ip, .port = port};
    memset(k.nonce, n, sizeof k.nonce);
    return k;
}

START_TEST(pending_then_answered_by_address_and_nonce)
{
    la_replies *r = la_replies_new(8, 1000);
    ck_assert_ptr_nonnull(r);
    uint8_t reply[MC_LOGIN_REPLY_SIZE], out[MC_LOGIN_REPLY_SIZE];
    memset(reply, 0xAB, sizeof reply);
    la_reply_key k = key(0x7F000001, 5000, 1);
    ck_assert_int_eq(la_replies_lookup(r, &k, 0, out), LA_REPLY_NONE);
    ck_assert_int_eq(la_replies_pending(r, &k, 0), 0);
    ck_assert_int_eq(la_replies_lookup(r, &k, 10 * MS, out), LA_REPLY_PENDING);
    ck_assert_int_eq(la_replies_answered(r, &k, 20 * MS, reply), 0);
    memset(out, 0, sizeof out);
    ck_assert_int_eq(la_replies_lookup(r, &k, 30 * MS, out), LA_REPLY_ANSWERED);
    ck_assert(memcmp(out, reply, sizeof out) == 0);
    ck_assert_uint_eq(la_replies_count(r), 1);
    /* another port, another address, another nonce: unknown */
    la_reply_key other = key(0x7F000001, 5001, 1);
    ck_assert_int_eq(la_replies_lookup(r, &other, 30 * MS, out), LA_REPLY_NONE);
    other = key(0x7F000002, 5000, 1);
    ck_assert_int_eq(la_replies_lookup(r, &other, 30 * MS, out), LA_REPLY_NONE);
    other = key(0x7F000001, 5000, 2);
    ck_assert_int_eq(la_replies_lookup(r, &other, 30 * MS, out), LA_REPLY_NONE);
    /* kept keep_ms from when it was first seen, then gone */
    ck_assert_int_eq(la_replies_lookup(r, &k, 999 * MS, out), LA_REPLY_ANSWERED);
    ck_assert_int_eq(la_replies_lookup(r, &k, 1000 * MS, out), LA_REPLY_NONE);
    ck_assert_uint_eq(la_replies_count(r), 0);
    la_replies_free(r);
    ck_assert_ptr_null(la_replies_new(0, 1000));
    ck_assert_ptr_null(la_replies_new(8, 0));
}
END_TEST

START_TEST(a_flood_stays_within_the_capacity_oldest_first)
{
    la_replies *r = la_replies_new(100, 60000);
    ck_assert_ptr_nonnull(r);
    uint8_t reply[MC_LOGIN_REPLY_SIZE] = {0};
    for (uint32_t i = 0; i < 10000; i++) {
        la_reply_key k = key(i, (uint16_t)i, (uint8_t)i);
        ck_assert_int_eq(la_replies_answered(r, &k, i, reply), 0);
        ck_assert_uint_le(la_replies_count(r), 100);
    }
    ck_assert_uint_eq(la_replies_count(r), 100);
    /* the last 100 (9900..9999) are kept, the ones before went */
    la_reply_key newest = key(9999, 9999, (uint8_t)9999), oldest_kept = key(9900, 9900, (uint8_t)9900);
    la_reply_key last_gone = key(9899, 9899, (uint8_t)9899), first = key(0, 0, 0);
    ck_assert_int_eq(la_replies_lookup(r, &newest, 10000, NULL), LA_REPLY_ANSWERED);
    ck_assert_int_eq(la_replies_lookup(r, &oldest_kept, 10000, NULL), LA_REPLY_ANSWERED);
    ck_assert_int_eq(la_replies_lookup(r, &last_gone, 10000, NULL), LA_REPLY_NONE);
    ck_assert_int_eq(la_replies_lookup(r, &first, 10000, NULL), LA_REPLY_NONE);
    la_replies_free(r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("replies");
    TCase *tc = tcase_create("replies");
    tcase_add_test(tc, pending_then_answered_by_address_and_nonce);
    tcase_add_test(tc, a_flood_stays_within_the_capacity_oldest_first);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
