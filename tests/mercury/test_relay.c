/* Loss, duplication, reordering and corruption from outside: two nubs talk through the
 * benchmark's relay (bench/src/relay.c) running as a separate process, not through
 * mercury's own rehearsal layer. The relay is stopped at the end of each test (and dies
 * with the test process if it fails: PR_SET_PDEATHSIG). */
#include "check_main.h"
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "harness.h"
#include "relay.h"

typedef struct {
    bench_relay_config cfg;
    bench_child child;
    int stop_w;
    uint16_t port;
} relay_proc;

static int relay_main(void *ctx, int fd)
{
    const bench_relay_config *cfg = ctx;
    bench_report r;
    memset(&r, 0, sizeof r);
    bench_sink s = {fd, &r, 0};
    return bench_relay_run(cfg, &s);
}

/* Start a relay forwarding to target with these impairments; its front port in r->port. */
static void relay_start(relay_proc *r, const mc_address *target, double loss, double dup,
                        double reorder, double corrupt, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    int stop[2];
    ck_assert_int_eq(pipe(stop), 0);
    r->cfg.loss = loss;
    r->cfg.dup = dup;
    r->cfg.reorder = reorder;
    r->cfg.corrupt = corrupt;
    r->cfg.seed = seed;
    r->cfg.front.sin_family = AF_INET;
    r->cfg.front.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    mc_address_to_sockaddr(target, &r->cfg.target);
    r->cfg.stop_fd = stop[0];
    r->cfg.deadline = mc_clock_now_us() + 120 * MC_US_PER_S;
    ck_assert_int_eq(bench_child_spawn(&r->child, "relay", relay_main, &r->cfg, &stop[1], 1), 0);
    close(stop[0]);
    r->stop_w = stop[1];
    bench_child *one = &r->child;
    for (int i = 0; i < 100 && !r->child.ready && !r->child.eof; i++)
        bench_children_pump(&one, 1, 50);
    ck_assert_msg(r->child.ready, "the relay did not start");
    r->port = r->child.ready_report.port;
}

/* Stop the relay and return its counters. */
static bench_report relay_stop(relay_proc *r)
{
    close(r->stop_w);
    bench_child *one = &r->child;
    for (int i = 0; i < 40 && !r->child.has_result && !r->child.eof; i++)
        bench_children_pump(&one, 1, 50);
    bench_child_wait(&r->child, 1000);
    ck_assert_msg(r->child.has_result, "no counters from the relay");
    return r->child.result;
}

static mc_address relay_front(const relay_proc *r)
{
    mc_address a = {0x7F000001u, r->port};
    return a;
}

static void checksums(mc_nub_config *cfg, int which)
{
    (void)which;
    cfg->checksums = true;
}

static bool idle(void *ch) { return mc_channel_idle(ch); }

/* a's channel goes to the relay, which forwards to b: b's channel is the relay's address */
static mc_channel *through(pair *p, const relay_proc *r)
{
    mc_address front = relay_front(r);
    /* the pair's direct channel is not used: it must not open a second channel at b with
     * its keepalive (a run under load may take longer than the keepalive interval) */
    mc_channel_condemn(p->ab);
    p->ab = NULL;
    mc_channel *ch = mc_nub_channel(p->a, &front, MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(ch);
    return ch;
}

static void check_clean(const recv_state *r, uint64_t total)
{
    ck_assert_uint_eq(r->received, total);
    ck_assert_uint_eq(r->out_of_order, 0);
    ck_assert_uint_eq(r->bad_content, 0);
    ck_assert_uint_eq(r->stale_seen, 0);
}

START_TEST(loss_duplication_reordering_through_relay)
{
    pair p;
    pair_open(&p, NULL);
    relay_proc r;
    relay_start(&r, mc_nub_address(p.b), 0.10, 0.05, 0.05, 0, 7);
    mc_channel *ch = through(&p, &r);
    send_stream(ch, 0, 20000, 40);
    ck_assert_msg(wait_received(&p, &p.rb, 20000, 60), "received %llu of 20000",
                  (unsigned long long)p.rb.received);
    ck_assert(pump_until(p.base, idle, ch, 20));
    check_clean(&p.rb, 20000);
    mc_nub_stats sbc;
    mc_nub_get_stats(p.b, &sbc);
    ck_assert_uint_eq(sbc.channels, 1); /* b sees one peer: the relay */
    mc_nub_stats sa, sb;
    mc_nub_get_stats(p.a, &sa);
    mc_nub_get_stats(p.b, &sb);
    bench_report rep = relay_stop(&r);
    /* the impairments happened outside mercury, both ways, and mercury repaired them */
    ck_assert_uint_gt(rep.relay_dropped, 0);
    ck_assert_uint_gt(rep.relay_duplicated, 0);
    ck_assert_uint_gt(rep.relay_reordered, 0);
    ck_assert_uint_eq(sa.rehearsal_dropped + sb.rehearsal_dropped, 0);
    ck_assert_uint_gt(sa.resends, 0);
    ck_assert_uint_gt(sb.drops[MC_DROP_DUPLICATE], 0);
    pair_close(&p);
}
END_TEST

START_TEST(corruption_through_relay_with_checksums)
{
    pair p;
    pair_open(&p, checksums);
    relay_proc r;
    relay_start(&r, mc_nub_address(p.b), 0.02, 0, 0, 0.2, 11);
    mc_channel *ch = through(&p, &r);
    send_stream(ch, 0, 5000, 100);
    ck_assert_msg(wait_received(&p, &p.rb, 5000, 60), "received %llu of 5000",
                  (unsigned long long)p.rb.received);
    ck_assert(pump_until(p.base, idle, ch, 20));
    check_clean(&p.rb, 5000);
    mc_nub_stats sa, sb;
    mc_nub_get_stats(p.a, &sa);
    mc_nub_get_stats(p.b, &sb);
    bench_report rep = relay_stop(&r);
    ck_assert_uint_gt(rep.relay_corrupted, 0);
    /* corrupted datagrams were refused by their checksum on both sides */
    ck_assert_uint_gt(sb.drops[MC_DROP_BAD_CHECKSUM], 0);
    ck_assert_uint_gt(sa.drops[MC_DROP_BAD_CHECKSUM] + sb.drops[MC_DROP_BAD_CHECKSUM],
                      rep.relay_corrupted / 2);
    pair_close(&p);
}
END_TEST

START_TEST(large_message_through_lossy_relay)
{
    pair p;
    pair_open(&p, NULL);
    relay_proc r;
    relay_start(&r, mc_nub_address(p.b), 0.10, 0.02, 0.05, 0, 3);
    mc_channel *ch = through(&p, &r);
    send_stream(ch, 0, 2, 1024 * 1024);
    ck_assert(wait_received(&p, &p.rb, 2, 60));
    check_clean(&p.rb, 2);
    ck_assert_uint_eq(p.rb.last_length, 1024 * 1024);
    bench_report rep = relay_stop(&r);
    ck_assert_uint_gt(rep.relay_dropped, 0);
    pair_close(&p);
}
END_TEST

static Suite *relay_suite(void)
{
    Suite *s = suite_create("mercury_relay");
    TCase *tc = tcase_create("relay");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, loss_duplication_reordering_through_relay);
    tcase_add_test(tc, corruption_through_relay_with_checksums);
    tcase_add_test(tc, large_message_through_lossy_relay);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(relay_suite)
