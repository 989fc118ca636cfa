/* 28-bit sequence numbers: wrap-safe comparison and a channel carried across the wrap
 * under loss (the 16-bit wrap trap of seed 002 must not exist here). */
#include "check_main.h"
#include <stdlib.h>

#include "channel_debug.h"
#include "harness.h"
#include "internal.h"

START_TEST(seq_arithmetic)
{
    ck_assert_int_eq(mc_seq_diff(0, MC_SEQ_MASK), 1);
    ck_assert_int_eq(mc_seq_diff(MC_SEQ_MASK, 0), -1);
    ck_assert_int_eq(mc_seq_diff(5, MC_SEQ_MASK - 4), 10);
    ck_assert_int_eq(mc_seq_diff(70000, 3), 69997); /* beyond 16 bits */
    ck_assert_uint_eq(mc_seq_add(MC_SEQ_MASK, 1), 0);
    ck_assert_int_lt(mc_seq_diff(MC_SEQ_HALF + 10, 0), 0);
}
END_TEST

START_TEST(channel_across_wrap_under_loss)
{
    pair p;
    pair_open(&p, NULL);
    send_stream(p.ab, 0, 10, 40);
    ck_assert(wait_received(&p, &p.rb, 10, 10));
    ck_assert(pump_until(p.base, (bool (*)(void *))mc_channel_idle, p.ab, 5));
    pump_for(p.base, 0.05);
    mc_channel *peer = mc_nub_find_channel(p.b, mc_nub_address(p.a));
    ck_assert_ptr_nonnull(peer);
    uint32_t start = MC_SEQ_MASK - 300;
    test_channel_set_sequences(p.ab, start, p.ab->in_seq_at);
    test_channel_set_sequences(peer, 0, start);
    mc_rehearsal r = {0};
    r.loss = 0.3;
    mc_nub_set_rehearsal(p.a, &r);
    mc_nub_set_rehearsal(p.b, &r);
    send_stream(p.ab, 10, 1500, 1000); /* one message per packet: crosses the wrap */
    ck_assert(wait_received(&p, &p.rb, 1510, 60));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert_uint_eq(p.rb.bad_content, 0);
    mc_channel_stats cs;
    mc_channel_get_stats(p.ab, &cs);
    ck_assert_uint_lt(cs.next_send_seq, 2000); /* wrapped */
    pair_close(&p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mercury_wrap");
    TCase *tc = tcase_create("wrap");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, seq_arithmetic);
    tcase_add_test(tc, channel_across_wrap_under_loss);
    suite_add_tcase(s, tc);
    return mc_check_run(s);
}
