/* Memory limits of on-channel reassembly: max_message_size (a larger message kills the
 * channel; off-channel it is dropped) and max_reassembly_bytes (a per-nub budget; the
 * reassembly that started first always continues). Real sockets on 127.0.0.1. */
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/stream.h"
#include "common/watcher.h"
#include "harness.h"

static void small_messages(mc_nub_config *cfg, int which)
{
    if (which == 1)
        cfg->max_message_size = 64u * 1024u;
}

static uint64_t watch_uint(mc_watchers *w, const char *path)
{
    mc_watch_value v;
    char err[128];
    ck_assert_int_eq(mc_watch_get(w, path, &v, err, sizeof err), MC_WATCH_OK);
    return v.as.u;
}

static bool idle(void *ch) { return mc_channel_idle(ch); }

typedef struct {
    mc_watchers *w;
    const char *path;
} watch_ctx;

static bool watch_positive(void *ctx)
{
    watch_ctx *c = ctx;
    mc_watch_value v;
    char err[128];
    return mc_watch_get(c->w, c->path, &v, err, sizeof err) == MC_WATCH_OK && v.as.u > 0;
}

static bool no_channels(void *nub)
{
    mc_nub_stats st;
    mc_nub_get_stats(nub, &st);
    return st.channels == 0 && st.reassembly_bytes == 0;
}

START_TEST(message_over_max_kills_channel)
{
    pair p;
    pair_open(&p, small_messages);
    ck_assert_uint_eq(mc_nub_get_config(p.b)->max_message_size, 64u * 1024u);
    mc_watchers *w = mc_watchers_new();
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(mc_nub_register_watchers(p.b, w, "nub"), MC_OK);
    death_rec d = {0};
    mc_nub_set_channel_dead_handler(p.b, on_dead, &d);

    /* exactly the limit is delivered */
    send_stream(p.ab, 0, 1, 64u * 1024u);
    ck_assert(wait_received(&p, &p.rb, 1, 10));
    ck_assert_int_eq(d.deaths, 0);
    ck_assert_uint_eq(watch_uint(w, "nub/drops/messageTooLarge"), 0);
    ck_assert_uint_eq(watch_uint(w, "nub/reassemblyBytes"), 0);
    /* a learns that b has its channel (no more CREATE_CHANNEL packets that would make b
     * accept a new channel after it closed this one) */
    ck_assert(pump_until(p.base, idle, p.ab, 5));

    /* one byte more kills the receiving channel with the reason; nothing is delivered */
    send_stream(p.ab, 1, 1, 64u * 1024u + 1u);
    ck_assert(pump_until(p.base, died, &d, 10));
    ck_assert_int_eq(d.reason, MC_CHANNEL_DEATH_MESSAGE_TOO_LARGE);
    ck_assert_str_eq(mc_channel_death_name(d.reason), "message-too-large");
    ck_assert_uint_eq(watch_uint(w, "nub/drops/messageTooLarge"), 1);
    /* the rest of the large message finds no channel */
    watch_ctx nc = {w, "nub/drops/noChannel"};
    ck_assert(pump_until(p.base, watch_positive, &nc, 5));
    ck_assert_uint_eq(p.rb.received, 1);
    ck_assert_uint_eq(p.rb.bad_content, 0);
    ck_assert_int_eq(d.deaths, 1);
    ck_assert_uint_eq(watch_uint(w, "nub/reassemblyBytes"), 0);
    ck_assert_uint_eq(watch_uint(w, "nub/channels/count"), 0);
    ck_assert_uint_gt(watch_uint(w, "nub/drops/noChannel"), 0); /* the rest of it */
    ck_assert_ptr_null(mc_nub_find_channel(p.b, mc_nub_address(p.a)));

    /* off-channel: dropped and counted, the nub goes on */
    mc_bundle *b = mc_bundle_new(p.a);
    uint8_t *big = malloc(100u * 1024u);
    ck_assert_ptr_nonnull(big);
    pattern_fill(big, 100u * 1024u, 9);
    ck_assert_int_eq(mc_bundle_add_message(b, tdef(T_VAR4), MC_RELIABLE_DRIVER, big,
                                           100u * 1024u), MC_OK);
    ck_assert_int_eq(mc_nub_send_bundle(p.a, mc_nub_address(p.b), b, MC_SEND_RELIABLE_ONCE),
                     MC_OK);
    free(big);
    mc_bundle_free(b);
    for (int i = 0; i < 100 && watch_uint(w, "nub/drops/messageTooLarge") < 2; i++)
        pump_for(p.base, 0.1);
    ck_assert_uint_eq(watch_uint(w, "nub/drops/messageTooLarge"), 2);
    ck_assert_uint_eq(p.rb.received, 1);

    pair_close(&p); /* unregisters the nub's watchers */
    mc_watchers_free(w);
}
END_TEST

/* The too-large message follows a message spanning packets in the same bundle (100 KiB and
 * 200 KiB, over the 64 KiB limit): the channel dies with the reason whichever check finds
 * it; what came before it in order may be delivered, nothing after or corrupted. */
START_TEST(too_large_message_after_another_kills_channel)
{
    static const size_t sizes[] = {100u * 1024u, 200u * 1024u};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        pair p;
        pair_open(&p, small_messages);
        death_rec d = {0};
        mc_nub_set_channel_dead_handler(p.b, on_dead, &d);
        send_stream(p.ab, 0, 1, 40);
        ck_assert(wait_received(&p, &p.rb, 1, 10));
        ck_assert(pump_until(p.base, idle, p.ab, 5));
        mc_nub_stats before;
        mc_nub_get_stats(p.b, &before);
        /* one bundle: a 3000-byte message spanning packets, then the large one */
        uint8_t *buf = malloc(sizes[k]);
        ck_assert_ptr_nonnull(buf);
        pattern_fill(buf, 3000, 1);
        ck_assert_int_eq(mc_channel_send_message(p.ab, tdef(T_VAR4), buf, 3000), MC_OK);
        pattern_fill(buf, sizes[k], 2);
        ck_assert_int_eq(mc_channel_send_message(p.ab, tdef(T_VAR4), buf, sizes[k]), MC_OK);
        ck_assert_int_eq(mc_channel_send(p.ab), MC_OK);
        free(buf);
        ck_assert(pump_until(p.base, died, &d, 10));
        ck_assert_int_eq(d.reason, MC_CHANNEL_DEATH_MESSAGE_TOO_LARGE);
        ck_assert(pump_until(p.base, no_channels, p.b, 5));
        mc_nub_stats after;
        mc_nub_get_stats(p.b, &after);
        ck_assert_uint_eq(after.drops[MC_DROP_MESSAGE_TOO_LARGE], 1);
        ck_assert_uint_eq(after.reassembly_bytes, 0);
        ck_assert_uint_eq(after.channels, 0);
        ck_assert_uint_le(after.messages_received, before.messages_received + 1);
        ck_assert_uint_le(p.rb.received, 2);
        ck_assert_uint_eq(p.rb.bad_content, 0);
        ck_assert_uint_eq(p.rb.out_of_order, 0);
        pair_close(&p);
    }
}
END_TEST

/* ---- two senders, one receiver with a small reassembly budget ---- */
#define BIG_MSG (1024u * 1024u)
#define BIG_COUNT 2u
#define BUDGET (256u * 1024u)

typedef struct {
    mc_nub *s[2];
    uint32_t next[2];
    uint64_t received[2];
    uint64_t bad;
} budget_state;

static void on_big(void *ctx, const mc_message_info *info, mc_istream *is)
{
    budget_state *st = ctx;
    size_t n = mc_istream_remaining(is);
    const uint8_t *data = mc_read_bytes(is, n);
    int who = -1;
    for (int i = 0; i < 2; i++)
        if (st->s[i] && mc_address_equal(info->source, mc_nub_address(st->s[i])))
            who = i;
    if (who < 0 || n != BIG_MSG || !data) {
        st->bad++;
        return;
    }
    uint32_t counter = mc_load_u32(data) - 100u * (uint32_t)who;
    if (counter != st->next[who] || !pattern_check(data, n, counter + 100u * (uint32_t)who))
        st->bad++;
    st->next[who] = counter + 1;
    st->received[who]++;
}

#define BIG_IFACE(X) X(B_BIG_, 1, MC_VARIABLE(4), on_big)
static const mc_message_def big_defs[] = {BIG_IFACE(MC_DEF_WITH_HANDLER)};
static const mc_interface big_iface = MC_INTERFACE("big", big_defs);

static bool both_done(void *ctx)
{
    budget_state *st = ctx;
    return st->received[0] >= BIG_COUNT && st->received[1] >= BIG_COUNT;
}

START_TEST(reassembly_budget_two_channels_complete)
{
    struct event_base *base = event_base_new();
    ck_assert_ptr_nonnull(base);
    budget_state st;
    memset(&st, 0, sizeof st);
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    ck_assert_uint_eq(cfg.max_reassembly_bytes, 256ull * 1024u * 1024u);
    ck_assert_uint_eq(cfg.max_message_size, MC_MAX_MESSAGE_SIZE);
    cfg.iface = &big_iface;
    cfg.handler_ctx = &st;
    cfg.max_reassembly_bytes = BUDGET;
    mc_nub *r = NULL;
    ck_assert_int_eq(mc_nub_new(base, &cfg, &r), MC_OK);
    mc_watchers *w = mc_watchers_new();
    ck_assert_int_eq(mc_nub_register_watchers(r, w, "nub"), MC_OK);
    death_rec d = {0};
    mc_nub_set_channel_dead_handler(r, on_dead, &d);

    mc_nub_config scfg;
    mc_nub_config_init(&scfg);
    scfg.iface = &big_iface;
    scfg.handler_ctx = &st;
    /* some loss and reordering: the two transfers overlap at the receiver */
    scfg.rehearsal.loss = 0.02;
    scfg.rehearsal.reorder = 0.05;
    mc_channel *ch[2];
    for (int i = 0; i < 2; i++) {
        scfg.rehearsal_seed = 77 + (uint64_t)i;
        ck_assert_int_eq(mc_nub_new(base, &scfg, &st.s[i]), MC_OK);
        ch[i] = mc_nub_channel(st.s[i], mc_nub_address(r), MC_CHANNEL_INTERNAL);
        ck_assert_ptr_nonnull(ch[i]);
    }
    /* both senders put all their messages on the wire at once, interleaved */
    uint8_t *buf = malloc(BIG_MSG);
    ck_assert_ptr_nonnull(buf);
    for (uint32_t c = 0; c < BIG_COUNT; c++) {
        for (int i = 0; i < 2; i++) {
            pattern_fill(buf, BIG_MSG, c + 100u * (uint32_t)i);
            ck_assert_int_eq(mc_channel_send_message(ch[i], &big_defs[0], buf, BIG_MSG),
                             MC_OK);
            ck_assert_int_eq(mc_channel_send(ch[i]), MC_OK);
        }
    }
    free(buf);
    ck_assert(pump_until(base, both_done, &st, 120));
    ck_assert_uint_eq(st.bad, 0);
    ck_assert_uint_eq(st.received[0], BIG_COUNT);
    ck_assert_uint_eq(st.received[1], BIG_COUNT);
    ck_assert_int_eq(d.deaths, 0);
    /* the budget was in the way and fragments were refused (and resent) */
    ck_assert_uint_gt(watch_uint(w, "nub/drops/reassemblyBudget"), 0);
    ck_assert_uint_eq(watch_uint(w, "nub/drops/messageTooLarge"), 0);
    ck_assert_uint_eq(watch_uint(w, "nub/reassemblyBytes"), 0);

    mc_nub_free(st.s[0]);
    mc_nub_free(st.s[1]);
    mc_nub_free(r);
    mc_watchers_free(w);
    event_base_free(base);
}
END_TEST

static Suite *limits_suite(void)
{
    Suite *s = suite_create("mercury_limits");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, 280);
    tcase_add_test(tc, message_over_max_kills_channel);
    tcase_add_test(tc, too_large_message_after_another_kills_channel);
    tcase_add_test(tc, reassembly_budget_two_channels_complete);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(limits_suite)
