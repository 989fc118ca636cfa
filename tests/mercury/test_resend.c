/* Resend rules as the issue states them: at most window/8 resends per check, and RTT
 * samples only from packets that were never resent. */
#include "check_main.h"
#include <stdlib.h>

#include "common/stream.h"
#include "harness.h"
#include "internal.h"

START_TEST(at_most_window_eighth_per_check)
{
    pair p;
    pair_open(&p, NULL);
    ck_assert_int_eq(mc_channel_set_window(p.ab, 64), MC_OK);
    mc_nub_rehearse_drop_next(p.a, 64); /* the whole window is lost */
    send_stream(p.ab, 0, 64, 1400);    /* one message per packet, no loop runs */
    ck_assert_uint_eq(mc_channel_unacked(p.ab), 64);
    mc_channel_stats before, after;
    mc_channel_get_stats(p.ab, &before);
    ck_assert_uint_eq(before.packets_resent, 0);
    /* long past any resend delay: every unacked packet is due, one check sends 64/8 */
    fake_clock fc = {2 * MC_US_PER_S};
    mc_clock_set_source(fake_clock_now, &fc);
    mc_channel_check_resends(p.ab, mc_clock_now_us(), true);
    mc_clock_set_source(NULL, NULL);
    mc_channel_get_stats(p.ab, &after);
    ck_assert_uint_eq(after.packets_resent, 8);
    /* and everything still arrives, in order */
    ck_assert(wait_received(&p, &p.rb, 64, 30));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert_uint_eq(p.rb.bad_content, 0);
    pair_close(&p);
}
END_TEST

START_TEST(late_ack_of_a_resent_packet_causes_no_spurious_resends)
{
    pair p;
    pair_open(&p, NULL);
    ck_assert_int_eq(mc_channel_set_window(p.ab, 8), MC_OK); /* one resend per check */
    mc_nub_rehearse_drop_next(p.a, 8);
    send_stream(p.ab, 0, 8, 1400); /* sequences 0..7, transmissions 1..8, all lost */
    fake_clock fc = {2 * MC_US_PER_S};
    mc_clock_set_source(fake_clock_now, &fc);
    mc_channel_check_resends(p.ab, mc_clock_now_us(), true); /* sequence 0 again: 9th */
    mc_channel_stats cs;
    mc_channel_get_stats(p.ab, &cs);
    ck_assert_uint_eq(cs.packets_resent, 1);
    /* the peer acknowledges sequence 0: its first transmission was only late. That does
     * not show that sequences 1..5 (sent before the resend) are lost. */
    uint8_t ack[7];
    mc_store_u16(ack, 0x0008 | 0x0004); /* ON_CHANNEL | HAS_ACKS */
    mc_store_u32(ack + 2, cs.first_send_seq); /* the channel's first sequence number */
    ack[6] = 1;
    ck_assert_int_eq(mc_nub_process_datagram(p.a, mc_nub_address(p.b), ack, sizeof ack), MC_OK);
    mc_clock_set_source(NULL, NULL);
    mc_channel_get_stats(p.ab, &cs);
    ck_assert_uint_eq(cs.unacked, 7);
    ck_assert_uint_eq(cs.packets_resent, 1);
    ck_assert(wait_received(&p, &p.rb, 8, 30));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    pair_close(&p);
}
END_TEST

static bool acked_all(void *ctx) { return mc_channel_unacked(ctx) == 0; }

START_TEST(rtt_only_from_packets_never_resent)
{
    pair p;
    pair_open(&p, NULL);
    mc_nub_rehearse_drop_next(p.a, 1);
    send_stream(p.ab, 0, 1, 40); /* the first packet is lost, then resent and acked */
    ck_assert(wait_received(&p, &p.rb, 1, 10));
    ck_assert(pump_until(p.base, acked_all, p.ab, 10));
    mc_channel_stats cs;
    mc_channel_get_stats(p.ab, &cs);
    ck_assert_uint_ge(cs.packets_resent, 1);
    ck_assert_uint_eq(cs.rtt_us, 0); /* the resent packet gave no sample */
    send_stream(p.ab, 1, 1, 40);
    ck_assert(wait_received(&p, &p.rb, 2, 10));
    ck_assert(pump_until(p.base, acked_all, p.ab, 10));
    mc_channel_get_stats(p.ab, &cs);
    ck_assert_uint_gt(cs.rtt_us, 0);
    ck_assert_uint_lt(cs.rtt_us, MC_US_PER_S);
    pair_close(&p);
}
END_TEST

static bool one_unacked(void *ctx) { return mc_channel_unacked(ctx) == 1; }

/* A sparse stream (a message now and then, acks of later messages flowing): a lost packet
 * is resent once it is older than SRTT plus a margin (at least the minimum resend delay),
 * without waiting for three later packets to be acknowledged or for acks to stop. */
START_TEST(sparse_stream_loss_resent_after_a_round_trip_while_acks_flow)
{
    pair p;
    pair_open(&p, NULL);
    /* time moves only when the test says so: the RTT sample is 1 ms whatever the load (a
     * real-clock sample on a loaded machine can pass the 25 ms this test steps to) */
    frozen_clock fz = {mc_clock_now_us()};
    mc_clock_set_source(frozen_clock_now, &fz);
    send_stream(p.ab, 0, 1, 40);
    fz.at += 1 * MC_US_PER_MS;
    bool a_acked = pump_loops_until(p.base, acked_all, p.ab, 2000);
    mc_nub_rehearse_drop_next(p.a, 1);
    send_stream(p.ab, 1, 1, 40); /* lost */
    send_stream(p.ab, 2, 1, 40);
    bool b_acked = pump_loops_until(p.base, one_unacked, p.ab, 2000);
    fz.at += 15 * MC_US_PER_MS; /* younger than the 20 ms minimum: not yet */
    mc_channel_check_resends(p.ab, mc_clock_now_us(), true);
    mc_channel_stats early;
    mc_channel_get_stats(p.ab, &early);
    send_stream(p.ab, 3, 1, 40); /* acked at once: acks keep arriving */
    bool c_acked = pump_loops_until(p.base, one_unacked, p.ab, 2000);
    fz.at += 10 * MC_US_PER_MS; /* 25 ms old; the last ack 10 ms ago; 2 later packets acked */
    mc_channel_check_resends(p.ab, mc_clock_now_us(), true);
    mc_channel_stats late;
    mc_channel_get_stats(p.ab, &late);
    /* time runs on from where it stood (never backwards: the channels would see their
     * last packet in the future) */
    mc_clock_set_source(NULL, NULL);
    fake_clock fc = {fz.at - mc_clock_now_us()};
    mc_clock_set_source(fake_clock_now, &fc);
    ck_assert(a_acked);
    ck_assert(b_acked);
    ck_assert(c_acked);
    ck_assert_uint_eq(early.packets_resent, 0);
    ck_assert_uint_eq(late.packets_resent, 1);
    ck_assert(wait_received(&p, &p.rb, 4, 10));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    mc_clock_set_source(NULL, NULL);
    pair_close(&p);
}
END_TEST


/* A packet lost twice (first send and first resend) on an interactive channel goes twice
 * at its second resend: it is late again only if both copies are lost. Later resends go once
 * (a packet whose acks are only late gets one extra copy in all). */
START_TEST(packet_lost_twice_is_resent_twice)
{
    pair p;
    pair_open(&p, NULL);
    send_stream(p.ab, 0, 1, 40);
    ck_assert(wait_received(&p, &p.rb, 1, 10));
    ck_assert(pump_until(p.base, acked_all, p.ab, 10)); /* an RTT sample: interactive */
    /* the next packet, its first resend and both copies of its second are lost */
    mc_nub_rehearse_drop_next(p.a, 4);
    send_stream(p.ab, 1, 1, 40);
    mc_channel_stats cs;
    /* time moves only when the test says so, within a keepalive interval of the last
     * packet heard from b (so b counts as alive) */
    fake_clock fc = {300 * MC_US_PER_MS};
    mc_clock_set_source(fake_clock_now, &fc);
    mc_channel_check_resends(p.ab, mc_clock_now_us(), true);
    mc_channel_get_stats(p.ab, &cs);
    ck_assert_uint_eq(cs.packets_resent, 1); /* the first resend: once (and lost) */
    fc.offset = 600 * MC_US_PER_MS;
    mc_channel_check_resends(p.ab, mc_clock_now_us(), true);
    mc_channel_get_stats(p.ab, &cs);
    ck_assert_uint_eq(cs.packets_resent, 3); /* the second: two copies (both lost) */
    fc.offset = 900 * MC_US_PER_MS;
    mc_channel_check_resends(p.ab, mc_clock_now_us(), true);
    mc_channel_get_stats(p.ab, &cs);
    ck_assert_uint_eq(cs.packets_resent, 4); /* the third: once again */
    mc_clock_set_source(NULL, NULL);
    ck_assert(wait_received(&p, &p.rb, 2, 10));
    ck_assert(pump_until(p.base, acked_all, p.ab, 10));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert_uint_eq(p.rb.received, 2);
    pair_close(&p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mercury_resend");
    TCase *tc = tcase_create("resend");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, at_most_window_eighth_per_check);
    tcase_add_test(tc, rtt_only_from_packets_never_resent);
    tcase_add_test(tc, late_ack_of_a_resent_packet_causes_no_spurious_resends);
    tcase_add_test(tc, sparse_stream_loss_resent_after_a_round_trip_while_acks_flow);
    tcase_add_test(tc, packet_lost_twice_is_resent_twice);
    suite_add_tcase(s, tc);
    return mc_check_run(s);
}
