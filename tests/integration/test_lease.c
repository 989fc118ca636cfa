/* The manager lease (server/lease.h) without a network: valid for half the dead-after time
 * from the send time of the last answered request; while it has run out, items are held in
 * order and bounded in count and bytes; released in order on renewal; dropped (never sent)
 * when fenced; an item past its own deadline dropped as expired. */
#include "server/lease.h"

#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#define MS(x) ((mc_time_us)(x) * MC_US_PER_MS)

typedef struct {
    int order[64];
    mc_lease_outcome outcome[64];
    int n;
} log_t;

typedef struct {
    log_t *log;
    int id;
} item;

static item items[64];

static void on_item(void *arg, mc_lease_outcome outcome)
{
    item *it = arg;
    log_t *lg = it->log;
    lg->order[lg->n] = it->id;
    lg->outcome[lg->n] = outcome;
    lg->n++;
}

static int hold(mc_lease *l, log_t *lg, int id, size_t bytes, mc_time_us deadline)
{
    items[id].log = lg;
    items[id].id = id;
    return mc_lease_hold(l, MC_LEASE_CALL, bytes, deadline, on_item, &items[id]);
}

START_TEST(not_valid_before_renewal)
{
    mc_lease *l = mc_lease_new(0, 0);
    ck_assert(!mc_lease_valid(l, MS(1)));
    ck_assert_str_eq(mc_lease_state_name(l, MS(1)), "none");
    /* no term known yet: a renewal does not make it valid */
    mc_lease_renew(l, MS(0), MS(1));
    ck_assert(!mc_lease_valid(l, MS(1)));
    mc_lease_set_dead_after(l, 3000);
    mc_lease_renew(l, MS(100), MS(120));
    ck_assert(mc_lease_valid(l, MS(120)));
    ck_assert_str_eq(mc_lease_state_name(l, MS(120)), "valid");
    /* half the dead-after time from the SEND time of the answered request */
    ck_assert(mc_lease_valid(l, MS(1599)));
    ck_assert(!mc_lease_valid(l, MS(1600)));
    ck_assert_str_eq(mc_lease_state_name(l, MS(1600)), "holding");
    ck_assert_uint_eq(mc_lease_stats_of(l)->expiries, 1);
    /* an answer to an older request never shortens it */
    mc_lease_renew(l, MS(2000), MS(2010));
    mc_lease_renew(l, MS(1000), MS(2020));
    ck_assert_uint_eq(mc_lease_expires_at(l), MS(3500));
    mc_lease_free(l);
}
END_TEST

START_TEST(held_then_released_in_order)
{
    log_t lg = {0};
    mc_lease *l = mc_lease_new(0, 0);
    mc_lease_set_dead_after(l, 2000);
    mc_lease_renew(l, MS(0), MS(0));
    ck_assert(!mc_lease_must_hold(l, MS(500)));
    /* ran out at 1000 ms */
    ck_assert(mc_lease_must_hold(l, MS(1000)));
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(hold(l, &lg, i, 10, 0), 0);
    ck_assert_uint_eq(mc_lease_stats_of(l)->calls_held, 5);
    ck_assert_uint_eq(mc_lease_stats_of(l)->held_bytes, 50);
    ck_assert_int_eq(lg.n, 0);
    /* a tick while it has run out releases nothing */
    mc_lease_tick(l, MS(1500));
    ck_assert_int_eq(lg.n, 0);
    /* items are held while any are waiting, even with a valid lease (order) */
    ck_assert(mc_lease_must_hold(l, MS(1500)));
    /* renewed: all five, in order, released */
    ck_assert_uint_eq(mc_lease_renew(l, MS(1600), MS(1700)), 5);
    ck_assert_int_eq(lg.n, 5);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(lg.order[i], i);
        ck_assert_int_eq(lg.outcome[i], MC_LEASE_RELEASE);
    }
    const mc_lease_stats *st = mc_lease_stats_of(l);
    ck_assert_uint_eq(st->calls_held, 0);
    ck_assert_uint_eq(st->held_bytes, 0);
    ck_assert_uint_eq(st->released, 5);
    ck_assert_uint_eq(st->held_dropped, 0);
    ck_assert(!mc_lease_must_hold(l, MS(1700)));
    mc_lease_free(l);
}
END_TEST

START_TEST(bounded_in_count_and_bytes)
{
    log_t lg = {0};
    mc_lease *l = mc_lease_new(3, 100);
    mc_lease_set_dead_after(l, 2000);
    ck_assert_int_eq(hold(l, &lg, 0, 10, 0), 0);
    ck_assert_int_eq(hold(l, &lg, 1, 10, 0), 0);
    ck_assert_int_eq(hold(l, &lg, 2, 10, 0), 0);
    ck_assert_int_eq(hold(l, &lg, 3, 10, 0), -1); /* count */
    ck_assert_uint_eq(mc_lease_stats_of(l)->held_refused, 1);
    mc_lease_free(l);
    memset(&lg, 0, sizeof lg);
    l = mc_lease_new(10, 100);
    ck_assert_int_eq(hold(l, &lg, 0, 60, 0), 0);
    ck_assert_int_eq(hold(l, &lg, 1, 41, 0), -1); /* bytes */
    ck_assert_int_eq(hold(l, &lg, 2, 101, 0), -1);
    ck_assert_int_eq(hold(l, &lg, 3, 40, 0), 0);
    ck_assert_uint_eq(mc_lease_stats_of(l)->held_refused, 2);
    ck_assert_uint_eq(mc_lease_stats_of(l)->held_bytes, 100);
    ck_assert_int_eq(lg.n, 0); /* a refused item's callback is never called */
    /* freed: the held ones dropped, never released */
    mc_lease_free(l);
    ck_assert_int_eq(lg.n, 2);
    ck_assert_int_eq(lg.outcome[0], MC_LEASE_DROPPED);
    ck_assert_int_eq(lg.outcome[1], MC_LEASE_DROPPED);
}
END_TEST

START_TEST(fenced_drops_without_release)
{
    log_t lg = {0};
    mc_lease *l = mc_lease_new(0, 0);
    mc_lease_set_dead_after(l, 2000);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(hold(l, &lg, i, 1, 0), 0);
    ck_assert_uint_eq(mc_lease_drop_all(l), 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(lg.order[i], i);
        ck_assert_int_eq(lg.outcome[i], MC_LEASE_DROPPED);
    }
    ck_assert_uint_eq(mc_lease_stats_of(l)->held_dropped, 4);
    ck_assert_uint_eq(mc_lease_renew(l, MS(0), MS(1)), 0);
    ck_assert_int_eq(lg.n, 4);
    mc_lease_free(l);
}
END_TEST

START_TEST(expired_items_dropped_others_kept_in_order)
{
    log_t lg = {0};
    mc_lease *l = mc_lease_new(0, 0);
    mc_lease_set_dead_after(l, 2000);
    ck_assert_int_eq(hold(l, &lg, 0, 1, 0), 0);
    ck_assert_int_eq(hold(l, &lg, 1, 1, MS(500)), 0);
    ck_assert_int_eq(hold(l, &lg, 2, 1, 0), 0);
    ck_assert_int_eq(hold(l, &lg, 3, 1, MS(500)), 0);
    mc_lease_tick(l, MS(499));
    ck_assert_int_eq(lg.n, 0);
    mc_lease_tick(l, MS(500));
    ck_assert_int_eq(lg.n, 2);
    ck_assert_int_eq(lg.order[0], 1);
    ck_assert_int_eq(lg.outcome[0], MC_LEASE_EXPIRED);
    ck_assert_int_eq(lg.order[1], 3);
    ck_assert_int_eq(lg.outcome[1], MC_LEASE_EXPIRED);
    ck_assert_int_eq(hold(l, &lg, 4, 1, 0), 0); /* the tail is still right */
    mc_lease_renew(l, MS(600), MS(600));
    ck_assert_int_eq(lg.n, 5);
    ck_assert_int_eq(lg.order[2], 0);
    ck_assert_int_eq(lg.order[3], 2);
    ck_assert_int_eq(lg.order[4], 4);
    mc_lease_free(l);
}
END_TEST

static Suite *lease_suite(void)
{
    Suite *s = suite_create("lease_units");
    TCase *tc = tcase_create("lease");
    tcase_add_test(tc, not_valid_before_renewal);
    tcase_add_test(tc, held_then_released_in_order);
    tcase_add_test(tc, bounded_in_count_and_bytes);
    tcase_add_test(tc, fenced_drops_without_release);
    tcase_add_test(tc, expired_items_dropped_others_kept_in_order);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(lease_suite)
