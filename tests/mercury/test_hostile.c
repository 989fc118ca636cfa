/* Resource bounds under hostile traffic: spoofed sources opening channels, and fragment
 * groups from strangers that never complete, must not allocate without bound. */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "common/stream.h"
#include "harness.h"

/* wire flags (docs/PROTOCOL.md) */
enum {
    F_ON_CHANNEL = 0x0008,
    F_IS_RELIABLE = 0x0010,
    F_IS_FRAGMENT = 0x0020,
    F_HAS_SEQ = 0x0040,
    F_INDEXED = 0x0080,
    F_CREATE = 0x0200,
    F_FIRST_SEQ = 0x0800,
};

static uint64_t drops(mc_nub *n, mc_drop_reason why)
{
    mc_nub_stats st;
    mc_nub_get_stats(n, &st);
    return st.drops[why];
}

static uint64_t nub_stat_channels(mc_nub *n)
{
    mc_nub_stats st;
    mc_nub_get_stats(n, &st);
    return st.channels;
}

static void few_channels(mc_nub_config *cfg, int which)
{
    if (which == 1)
        cfg->max_channels = 8;
}

START_TEST(spoofed_sources_cannot_open_unbounded_channels)
{
    pair p;
    pair_open(&p, few_channels);
    send_stream(p.ab, 0, 10, 40); /* the real peer's channel exists first */
    ck_assert(wait_received(&p, &p.rb, 10, 10));
    ck_assert_uint_eq(nub_stat_channels(p.b), 1);
    uint8_t pk[16];
    for (uint32_t i = 0; i < 200; i++) {
        mc_address from = {0x7F000002u, (uint16_t)(41000 + i)};
        /* CREATE_CHANNEL with a nonce: opens a channel from an address */
        mc_store_u16(pk, F_ON_CHANNEL | F_CREATE);
        mc_store_u32(pk + 2, 1000 + i);
        mc_nub_process_datagram(p.b, &from, pk, 6);
        /* the same from an indexed channel id: no address needed to differ */
        mc_store_u16(pk, F_ON_CHANNEL | F_CREATE | F_INDEXED);
        mc_store_u32(pk + 2, 1000 + i); /* nonce */
        mc_store_u32(pk + 6, 7000 + i); /* channel id */
        mc_store_u32(pk + 10, 0);       /* version */
        mc_nub_process_datagram(p.b, &from, pk, 14);
    }
    ck_assert_uint_eq(nub_stat_channels(p.b), 8);
    ck_assert_uint_eq(drops(p.b, MC_DROP_CHANNEL_LIMIT), 400 - 7);
    /* channels the nub opens itself do not count against the limit */
    mc_address mine = {0x7F000002u, 45000};
    ck_assert_ptr_nonnull(mc_nub_channel(p.b, &mine, MC_CHANNEL_INTERNAL));
    ck_assert_uint_eq(nub_stat_channels(p.b), 9);
    /* a packet claiming to come from the nub itself (or port 0) opens nothing */
    mc_store_u16(pk, F_ON_CHANNEL | F_CREATE);
    mc_store_u32(pk + 2, 99);
    uint64_t before = drops(p.b, MC_DROP_NO_CHANNEL);
    mc_address zero = {0x7F000002u, 0};
    ck_assert_int_eq(mc_nub_process_datagram(p.b, mc_nub_address(p.b), pk, 6), MC_ERR_DROPPED);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &zero, pk, 6), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_NO_CHANNEL), before + 2);
    /* the real channel still delivers */
    send_stream(p.ab, 10, 1000, 40);
    ck_assert(wait_received(&p, &p.rb, 1010, 10));
    ck_assert_uint_eq(p.rb.bad_content, 0);
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    pair_close(&p);
}
END_TEST

/* An off-channel fragment packet holding one whole 5-byte T_NOTE message. */
static size_t fragment(uint8_t *pk, bool reliable, uint32_t first, uint32_t last, uint32_t seq)
{
    size_t n = 0;
    mc_store_u16(pk, (uint16_t)(F_HAS_SEQ | F_IS_FRAGMENT | (reliable ? F_IS_RELIABLE : 0)));
    n = 2;
    pk[n++] = T_NOTE;
    mc_store_u16(pk + n, 5);
    n += 2;
    memset(pk + n, 0xAB, 5);
    n += 5;
    mc_store_u32(pk + n, first);
    mc_store_u32(pk + n + 4, last);
    mc_store_u32(pk + n + 8, seq);
    return n + 12;
}

START_TEST(incomplete_off_channel_groups_are_bounded)
{
    pair p;
    pair_open(&p, NULL);
    uint8_t pk[64];
    mc_address s1 = {0x7F000002u, 42001}, s2 = {0x7F000002u, 42002}, s3 = {0x7F000002u, 42003};
    /* a group claiming more packets than any receiver holds is refused at once */
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &s3, pk, fragment(pk, false, 0, 20000, 0)),
                     MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_FRAGMENT), 1);
    /* two big groups that never complete: packets held stop at the bound (16384) */
    for (uint32_t i = 0; i < 9000; i++)
        mc_nub_process_datagram(p.b, &s1, pk, fragment(pk, false, 100, 10099, 100 + i));
    ck_assert_uint_eq(drops(p.b, MC_DROP_FRAGMENT), 1);
    mc_nub_stats before;
    mc_nub_get_stats(p.b, &before);
    uint32_t refused = 0;
    for (uint32_t i = 0; i < 9000; i++)
        if (mc_nub_process_datagram(p.b, &s2, pk, fragment(pk, true, 500, 10499, 500 + i)) !=
            MC_OK)
            refused++;
    ck_assert_uint_eq(refused, 9000 + 9000 - 16384);
    ck_assert_uint_eq(drops(p.b, MC_DROP_FRAGMENT), 1 + refused);
    /* refused once-off packets are not acknowledged (their sender tries again) */
    mc_nub_stats after;
    mc_nub_get_stats(p.b, &after);
    ck_assert_uint_eq(after.acks_sent - before.acks_sent, 9000 - refused);
    ck_assert_uint_eq(p.rb.notes, 0);
    pair_close(&p);
}
END_TEST

START_TEST(off_channel_group_count_is_bounded)
{
    pair p;
    pair_open(&p, NULL);
    uint8_t pk[64];
    /* strangers each start a group and never finish it: at most 64 are held */
    for (uint32_t g = 0; g < 100; g++) {
        mc_address s = {0x7F000002u, (uint16_t)(43000 + g)};
        mc_nub_process_datagram(p.b, &s, pk, fragment(pk, false, 0, 1, 0));
    }
    ck_assert_uint_eq(drops(p.b, MC_DROP_FRAGMENT), 100 - 64);
    /* a pending group still completes */
    mc_address s0 = {0x7F000002u, 43000};
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &s0, pk, fragment(pk, false, 0, 1, 1)),
                     MC_OK);
    ck_assert_uint_eq(p.rb.notes, 2);
    pair_close(&p);
}
END_TEST

START_TEST(receive_windows_hold_a_bounded_total)
{
    pair p;
    pair_open(&p, NULL);
    /* 17 spoofed peers open channels (first sequence number 0) and leave packet 0
     * missing, so every later packet of their 4096-packet windows would wait: 68000
     * packets, more than the 65536 held */
    uint8_t pk[16];
    for (uint32_t c = 0; c < 17; c++) {
        mc_address from = {0x7F000002u, (uint16_t)(44000 + c)};
        for (uint32_t seq = 1; seq <= 4000; seq++) {
            mc_store_u16(pk, F_ON_CHANNEL | F_CREATE | F_IS_RELIABLE | F_HAS_SEQ | F_FIRST_SEQ);
            mc_store_u32(pk + 2, seq);      /* sequence */
            mc_store_u32(pk + 6, 0);        /* first sequence number */
            mc_store_u32(pk + 10, 500 + c); /* nonce */
            mc_nub_process_datagram(p.b, &from, pk, 14);
        }
    }
    uint64_t held = 0;
    for (uint32_t c = 0; c < 17; c++) {
        mc_address from = {0x7F000002u, (uint16_t)(44000 + c)};
        mc_channel_stats cs;
        mc_channel_get_stats(mc_nub_find_channel(p.b, &from), &cs);
        held += cs.recv_buffered;
    }
    ck_assert_uint_eq(held, 65536);
    ck_assert_uint_eq(drops(p.b, MC_DROP_OUT_OF_WINDOW), 17 * 4000 - 65536);
    /* the real peer still gets through (in-order packets need no buffer) */
    send_stream(p.ab, 0, 500, 40);
    ck_assert(wait_received(&p, &p.rb, 500, 10));
    pair_close(&p);
}
END_TEST

START_TEST(once_off_queue_is_bounded)
{
    pair p;
    pair_open(&p, NULL);
    /* nothing acknowledges (all of a's datagrams are lost): e.g. replies to a flood of
     * off-channel requests from spoofed sources */
    mc_rehearsal r = {0};
    r.loss = 1.0;
    mc_nub_set_rehearsal(p.a, &r);
    mc_bundle *b = mc_bundle_new(p.a);
    uint8_t note[3] = {1, 2, 3};
    int refused = 0;
    for (int i = 0; i < 17000; i++) {
        mc_bundle_add_message(b, tdef(T_NOTE), MC_RELIABLE_DRIVER, note, sizeof note);
        int rc = mc_nub_send_bundle(p.a, mc_nub_address(p.b), b, MC_SEND_RELIABLE_ONCE);
        if (rc == MC_ERR_OVERFLOW)
            refused++;
        else
            ck_assert_int_eq(rc, MC_OK);
    }
    ck_assert_int_eq(refused, 17000 - 16384);
    mc_nub_stats st;
    mc_nub_get_stats(p.a, &st);
    ck_assert_uint_eq(st.once_off_refused, 17000 - 16384);
    /* unreliable bundles are unaffected */
    mc_bundle_add_message(b, tdef(T_NOTE), MC_RELIABLE_NO, note, sizeof note);
    ck_assert_int_eq(mc_nub_send_bundle(p.a, mc_nub_address(p.b), b, MC_SEND_UNRELIABLE), MC_OK);
    mc_bundle_free(b);
    pair_close(&p);
}
END_TEST

static bool got_request(void *ctx) { return ((recv_state *)ctx)->requests > 0; }

START_TEST(third_party_cannot_answer_a_channel_request)
{
    pair p;
    pair_open(&p, NULL);
    reply_rec rs = {0};
    uint8_t ask[] = {0, 'q'}; /* b does not answer */
    ck_assert_int_eq(mc_channel_request(p.ab, tdef(T_REQ), ask, sizeof ask, on_reply, &rs,
                                        800 * MC_US_PER_MS),
                     MC_OK);
    ck_assert(pump_until(p.base, got_request, &p.rb, 5));
    /* a third nub that learned (or guessed) the reply id answers first */
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    mc_nub *c;
    ck_assert_int_eq(mc_nub_new(p.base, &cfg, &c), MC_OK);
    ck_assert_int_eq(mc_reply_to(c, NULL, mc_nub_address(p.a), p.rb.last_reply_id, "x", 1),
                     MC_OK);
    ck_assert(pump_until(p.base, reply_done, &rs, 5));
    ck_assert_int_eq(rs.calls, 1);
    ck_assert_int_eq(rs.status, MC_REPLY_TIMEOUT);
    ck_assert_uint_ge(drops(p.a, MC_DROP_LATE_REPLY), 1);
    /* the real peer may answer off-channel from its address */
    reply_rec ok = {0};
    uint8_t ask2[] = {0, 'r'};
    ck_assert_int_eq(mc_channel_request(p.ab, tdef(T_REQ), ask2, sizeof ask2, on_reply, &ok, 0),
                     MC_OK);
    uint64_t before = p.rb.requests;
    for (int i = 0; i < 500 && p.rb.requests == before; i++)
        event_base_loop(p.base, EVLOOP_ONCE);
    ck_assert_uint_eq(p.rb.requests, before + 1);
    ck_assert_int_eq(mc_reply_to(p.b, NULL, mc_nub_address(p.a), p.rb.last_reply_id, "y", 1),
                     MC_OK);
    ck_assert(pump_until(p.base, reply_done, &ok, 5));
    ck_assert_int_eq(ok.status, MC_REPLY_OK);
    /* the same for a request sent off-channel: only its destination may answer */
    reply_rec off = {0};
    mc_bundle *b = mc_bundle_new(p.a);
    ck_assert_int_eq(mc_bundle_start_request(b, tdef(T_REQ), on_reply, &off, 800 * MC_US_PER_MS),
                     MC_OK);
    mc_bundle_write(b, ask, sizeof ask);
    ck_assert_int_eq(mc_bundle_end_message(b), MC_OK);
    before = p.rb.requests;
    ck_assert_int_eq(mc_nub_send_bundle(p.a, mc_nub_address(p.b), b, MC_SEND_RELIABLE_ONCE),
                     MC_OK);
    for (int i = 0; i < 500 && p.rb.requests == before; i++)
        event_base_loop(p.base, EVLOOP_ONCE);
    ck_assert_uint_eq(p.rb.requests, before + 1);
    uint64_t late = drops(p.a, MC_DROP_LATE_REPLY);
    ck_assert_int_eq(mc_reply_to(c, NULL, mc_nub_address(p.a), p.rb.last_reply_id, "z", 1),
                     MC_OK);
    ck_assert(pump_until(p.base, reply_done, &off, 5));
    ck_assert_int_eq(off.status, MC_REPLY_TIMEOUT);
    ck_assert_uint_gt(drops(p.a, MC_DROP_LATE_REPLY), late);
    mc_bundle_free(b);
    mc_nub_free(c);
    pair_close(&p);
}
END_TEST

/* One side restarts on the same address while the other still announces its channel and
 * acknowledges what the previous incarnation sent (a's side of a simultaneous open). The
 * restarted b accepts a's first packet (resent as first written, before a had anything to
 * acknowledge) and then sees only packets acknowledging what it never sent. It used to drop
 * them as badAcks for ever while its keepalives kept a's channel alive: a never noticed.
 * Now b closes the out-of-sync channel and a's channel falls silent and dies. */
START_TEST(restarted_peer_takes_no_channel_from_acks_of_its_previous_incarnation)
{
    pair p;
    pair_open(&p, NULL);
    mc_channel_set_inactivity_timeout(p.ab, 2500 * MC_US_PER_MS);
    death_rec d = {0};
    mc_nub_set_channel_dead_handler(p.a, on_dead, &d);
    /* a opens its channel to b, but nothing a sends gets through: it keeps announcing it */
    mc_nub_rehearse_drop_next(p.a, 1000000);
    send_stream(p.ab, 0, 1, 8);
    /* b opens its own channel to a: a takes it into its channel and acknowledges b's packet */
    mc_channel *ba = mc_nub_channel(p.b, mc_nub_address(p.a), MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(ba);
    send_stream(ba, 0, 1, 8);
    ck_assert(wait_received(&p, &p.ra, 1, 5));
    /* b restarts on the same address; a's resends (announcing, acking b's packet) reach it */
    pair_restart_b(&p);
    mc_nub_rehearse_drop_next(p.a, 0);
    ck_assert_msg(pump_until(p.base, died, &d, 10), "a's channel to the restarted b never died");
    ck_assert_int_eq(d.reason, MC_CHANNEL_DEATH_INACTIVITY);
    ck_assert_uint_gt(drops(p.b, MC_DROP_BAD_ACKS), 0);
    ck_assert_uint_eq(nub_stat_channels(p.b), 0);
    pair_close(&p);
}
END_TEST

static Suite *hostile_suite(void)
{
    Suite *s = suite_create("mercury_hostile");
    TCase *tc = tcase_create("hostile");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, spoofed_sources_cannot_open_unbounded_channels);
    tcase_add_test(tc, incomplete_off_channel_groups_are_bounded);
    tcase_add_test(tc, off_channel_group_count_is_bounded);
    tcase_add_test(tc, third_party_cannot_answer_a_channel_request);
    tcase_add_test(tc, restarted_peer_takes_no_channel_from_acks_of_its_previous_incarnation);
    tcase_add_test(tc, receive_windows_hold_a_bounded_total);
    tcase_add_test(tc, once_off_queue_is_bounded);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(hostile_suite)
