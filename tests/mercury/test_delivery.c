/* Ordered exactly-once delivery over real loopback sockets, under rehearsed bad networks. */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void check_clean(const recv_state *r, uint64_t total)
{
    ck_assert_uint_eq(r->received, total);
    ck_assert_uint_eq(r->out_of_order, 0);
    ck_assert_uint_eq(r->bad_content, 0);
    ck_assert_uint_eq(r->stale_seen, 0);
}

static void set_loss(mc_nub *nub, double loss)
{
    mc_rehearsal r;
    mc_nub_get_rehearsal(nub, &r);
    r.loss = loss;
    mc_nub_set_rehearsal(nub, &r);
}

START_TEST(no_loss_many_small)
{
    pair p;
    pair_open(&p, NULL);
    send_stream(p.ab, 0, 100000, 8);
    ck_assert(wait_received(&p, &p.rb, 100000, 60));
    check_clean(&p.rb, 100000);
    mc_nub_stats st;
    mc_nub_get_stats(p.a, &st);
    /* bundling: far fewer packets than messages */
    ck_assert_uint_lt(st.packets_sent, 2000);
    pair_close(&p);
}
END_TEST

static void run_loss(double loss, uint32_t count, size_t size)
{
    pair p;
    pair_open(&p, NULL);
    set_loss(p.a, loss);
    set_loss(p.b, loss);
    send_stream(p.ab, 0, count, size);
    ck_assert_msg(wait_received(&p, &p.rb, count, 90), "received %llu of %u",
                  (unsigned long long)p.rb.received, count);
    check_clean(&p.rb, count);
    mc_nub_stats st;
    mc_nub_get_stats(p.a, &st);
    ck_assert_uint_gt(st.resends, 0);
    ck_assert_uint_gt(st.rehearsal_dropped, 0);
    /* nothing delivered twice even though resends happened */
    pump_for(p.base, 0.2);
    check_clean(&p.rb, count);
    pair_close(&p);
}

START_TEST(loss_10_percent) { run_loss(0.10, 20000, 40); }
END_TEST

START_TEST(loss_50_percent) { run_loss(0.50, 3000, 100); }
END_TEST

static void slow_timer(mc_nub_config *cfg, int which)
{
    (void)which;
    cfg->min_resend_delay_us = 5 * MC_US_PER_S; /* only the newer-acked rule resends */
}

typedef struct {
    recv_state *r;
    uint64_t total;
} wait_ctx_t;

static bool reached_total(void *ctx)
{
    wait_ctx_t *w = ctx;
    return w->r->received >= w->total;
}

START_TEST(one_lost_packet_one_resend)
{
    pair p;
    pair_open(&p, slow_timer);
    send_stream(p.ab, 0, 100, 40);
    ck_assert(wait_received(&p, &p.rb, 100, 10));
    pump_for(p.base, 0.05);
    mc_nub_stats before;
    mc_nub_get_stats(p.a, &before);
    ck_assert_uint_eq(before.resends, 0);
    /* Time stands still from here: no timer can resend, so only the rule "a packet sent
     * after it was acknowledged" can recover the lost packet. */
    frozen_clock fz = {mc_clock_now_us()};
    mc_clock_set_source(frozen_clock_now, &fz);
    mc_nub_rehearse_drop_next(p.a, 1);
    send_stream(p.ab, 100, 400, 40); /* ~12 packets, the first is lost */
    wait_ctx_t w = {&p.rb, 500};
    bool all = pump_loops_until(p.base, reached_total, &w, 2000);
    bool idle = pump_loops_until(p.base, (bool (*)(void *))mc_channel_idle, p.ab, 2000);
    mc_clock_set_source(NULL, NULL);
    ck_assert_msg(all, "the lost packet was not resent without a timer (%llu of 500)",
                  (unsigned long long)p.rb.received);
    ck_assert(idle);
    check_clean(&p.rb, 500);
    pump_for(p.base, 0.1);
    mc_nub_stats after;
    mc_nub_get_stats(p.a, &after);
    ck_assert_uint_eq(after.rehearsal_dropped, 1);
    ck_assert_uint_eq(after.resends, 1);
    mc_channel_stats cs;
    mc_channel_get_stats(mc_nub_find_channel(p.b, mc_nub_address(p.a)), &cs);
    ck_assert_uint_eq(cs.duplicates, 0);
    ck_assert_uint_eq(mc_channel_unacked(p.ab), 0);
    pair_close(&p);
}
END_TEST

START_TEST(total_loss_then_recovery)
{
    pair p;
    pair_open(&p, NULL);
    death_rec d = {0};
    mc_nub_set_channel_dead_handler(p.a, on_dead, &d);
    mc_nub_set_channel_dead_handler(p.b, on_dead, &d);
    send_stream(p.ab, 0, 1000, 40);
    ck_assert(wait_received(&p, &p.rb, 1000, 10));
    /* the link goes down both ways for 3 s (the resend timer backs off to its 32x cap of
     * 640 ms meanwhile) while a keeps writing */
    set_loss(p.a, 1.0);
    set_loss(p.b, 1.0);
    send_stream(p.ab, 1000, 2000, 40);
    pump_for(p.base, 3.0);
    ck_assert_uint_eq(p.rb.received, 1000);
    ck_assert_uint_gt(mc_channel_unacked(p.ab), 0);
    mc_nub_stats during;
    mc_nub_get_stats(p.a, &during);
    ck_assert_uint_gt(during.resends, 0);
    /* backed off: a few resends of the oldest packets per timer expiry, not a storm */
    ck_assert_uint_lt(during.resends, 2000);
    /* back up: everything arrives, once and in order, and both channels live on */
    set_loss(p.a, 0.0);
    set_loss(p.b, 0.0);
    ck_assert(wait_received(&p, &p.rb, 3000, 30));
    check_clean(&p.rb, 3000);
    ck_assert(pump_until(p.base, (bool (*)(void *))mc_channel_idle, p.ab, 10));
    ck_assert_int_eq(d.deaths, 0);
    pair_close(&p);
}
END_TEST

START_TEST(overflow_two_windows_plus_one)
{
    pair p;
    pair_open(&p, NULL);
    uint32_t n = 2 * MC_WINDOW_INTERNAL + 1;
    send_stream(p.ab, 0, n, 1400); /* one message per packet */
    ck_assert_uint_gt(mc_channel_overflow(p.ab), MC_WINDOW_INTERNAL - 10);
    ck_assert_uint_le(mc_channel_unacked(p.ab), MC_WINDOW_INTERNAL);
    ck_assert(wait_received(&p, &p.rb, n, 90));
    check_clean(&p.rb, n);
    ck_assert(pump_until(p.base, (bool (*)(void *))mc_channel_idle, p.ab, 10));
    ck_assert_uint_eq(mc_channel_overflow(p.ab), 0);
    pair_close(&p);
}
END_TEST

START_TEST(far_out_of_order_past_window)
{
    pair p;
    pair_open(&p, slow_timer);
    ck_assert_int_eq(mc_channel_set_window(p.ab, 8192), MC_OK);
    send_stream(p.ab, 0, 10, 40); /* opens the channel on b (window 4096) */
    ck_assert(wait_received(&p, &p.rb, 10, 10));
    /* the first packet is lost and b's acks are lost too, so nothing fills the hole while
     * 6000 more packets arrive paced (so the socket buffer keeps up) */
    mc_nub_rehearse_drop_next(p.a, 1);
    set_loss(p.b, 1.0);
    uint32_t n = 6000;
    for (uint32_t c = 0; c < n; c += 300) {
        send_stream(p.ab, 10 + c, 300, 1400);
        pump_for(p.base, 0.03);
    }
    mc_channel_stats cs;
    mc_channel_get_stats(mc_nub_find_channel(p.b, mc_nub_address(p.a)), &cs);
    ck_assert_uint_gt(cs.out_of_window, 0);
    ck_assert_uint_eq(p.rb.received, 10);
    set_loss(p.b, 0.0);
    ck_assert(wait_received(&p, &p.rb, 10 + n, 90));
    check_clean(&p.rb, 10 + n);
    mc_channel_get_stats(mc_nub_find_channel(p.b, mc_nub_address(p.a)), &cs);
    ck_assert_uint_eq(cs.window, MC_WINDOW_INTERNAL);
    pair_close(&p);
}
END_TEST

static void big_under_loss(size_t size)
{
    pair p;
    pair_open(&p, NULL);
    set_loss(p.a, 0.10);
    set_loss(p.b, 0.10);
    send_stream(p.ab, 0, 3, size);
    ck_assert(wait_received(&p, &p.rb, 3, 90));
    check_clean(&p.rb, 3);
    ck_assert_uint_eq(p.rb.last_length, size);
    pair_close(&p);
}

START_TEST(message_8k_under_loss) { big_under_loss(8192); }
END_TEST

START_TEST(message_1m_under_loss) { big_under_loss(1024 * 1024); }
END_TEST

START_TEST(duplication_and_reordering)
{
    pair p;
    pair_open(&p, NULL);
    for (int i = 0; i < 2; i++) {
        mc_nub *n = i ? p.b : p.a;
        mc_rehearsal r;
        mc_nub_get_rehearsal(n, &r);
        r.duplicate = 0.2;
        r.reorder = 0.2;
        r.reorder_ms = 30;
        mc_nub_set_rehearsal(n, &r);
    }
    send_stream(p.ab, 0, 20000, 60);
    ck_assert(wait_received(&p, &p.rb, 20000, 60));
    ck_assert(pump_until(p.base, (bool (*)(void *))mc_channel_idle, p.ab, 10));
    check_clean(&p.rb, 20000);
    mc_nub_stats st;
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_gt(st.drops[MC_DROP_DUPLICATE], 0);
    /* reordering happened: packets arrived ahead of earlier ones and were held back */
    mc_channel_stats cs;
    mc_channel_get_stats(mc_nub_find_channel(p.b, mc_nub_address(p.a)), &cs);
    ck_assert_uint_gt(cs.out_of_order, 0);
    ck_assert_uint_gt(cs.duplicates, 0);
    pair_close(&p);
}
END_TEST

START_TEST(indexed_reset_drops_stale)
{
    pair p;
    pair_open(&p, slow_timer);
    mc_channel *ic = mc_nub_indexed_channel(p.a, mc_nub_address(p.b), 42, MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(ic);
    mc_rehearsal r;
    mc_nub_get_rehearsal(p.a, &r);
    r.latency_ms = 400;
    mc_nub_set_rehearsal(p.a, &r);
    send_stream(ic, 0, 300, 40); /* version 0: delayed in flight */
    r.latency_ms = 0;
    mc_nub_set_rehearsal(p.a, &r);
    ck_assert_int_eq(mc_channel_reset(ic), MC_OK);
    ck_assert_uint_eq(mc_channel_version(ic), 1);
    p.rb.base = 1000;
    p.rb.next = 1000;
    send_stream(ic, 1000, 300, 40); /* version 1 overtakes */
    ck_assert(wait_received(&p, &p.rb, 300, 10));
    pump_for(p.base, 0.8); /* the stale version-0 packets arrive now */
    ck_assert_uint_eq(p.rb.received, 300);
    ck_assert_uint_eq(p.rb.stale_seen, 0);
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert_uint_eq(p.rb.bad_content, 0);
    mc_nub_stats st;
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_gt(st.drops[MC_DROP_STALE_VERSION], 0);
    mc_channel *peer = mc_nub_find_indexed_channel(p.b, 42);
    ck_assert_ptr_nonnull(peer);
    ck_assert_uint_eq(mc_channel_version(peer), 1);
    ck_assert_int_eq(mc_channel_reset(p.ab), MC_ERR_INVALID);
    pair_close(&p);
}
END_TEST

static void with_checksums(mc_nub_config *cfg, int which)
{
    (void)which;
    cfg->checksums = true;
}

START_TEST(half_corrupted_with_checksums)
{
    pair p;
    pair_open(&p, with_checksums);
    for (int i = 0; i < 2; i++) {
        mc_nub *n = i ? p.b : p.a;
        mc_rehearsal r;
        mc_nub_get_rehearsal(n, &r);
        r.corrupt = 0.5;
        mc_nub_set_rehearsal(n, &r);
    }
    send_stream(p.ab, 0, 5000, 100);
    ck_assert(wait_received(&p, &p.rb, 5000, 60));
    pump_for(p.base, 0.2);
    check_clean(&p.rb, 5000);
    mc_nub_stats st;
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_gt(st.drops[MC_DROP_BAD_CHECKSUM], 0);
    pair_close(&p);
}
END_TEST

Suite *delivery_suite(void);
Suite *delivery_suite(void)
{
    Suite *s = suite_create("mercury_delivery");
    TCase *tc = tcase_create("delivery");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, no_loss_many_small);
    tcase_add_test(tc, loss_10_percent);
    tcase_add_test(tc, loss_50_percent);
    tcase_add_test(tc, one_lost_packet_one_resend);
    tcase_add_test(tc, total_loss_then_recovery);
    tcase_add_test(tc, overflow_two_windows_plus_one);
    tcase_add_test(tc, far_out_of_order_past_window);
    tcase_add_test(tc, message_8k_under_loss);
    tcase_add_test(tc, message_1m_under_loss);
    tcase_add_test(tc, duplication_and_reordering);
    tcase_add_test(tc, indexed_reset_drops_stale);
    tcase_add_test(tc, half_corrupted_with_checksums);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(delivery_suite)
