/* Memory limits of on-channel reassembly: max_message_size (a larger message kills the
 * channel; off-channel it is dropped) and max_reassembly_bytes (a per-nub budget; the
 * reassembly that started first always continues). Real sockets on 127.0.0.1. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

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


/* ---- a per-nub packet size (external nubs carried by a wrapping transport) ---- */
typedef struct {
    mc_nub *nub;
    size_t datagrams, largest;
} size_tap;

/* The nub's output: record the size, then send it from the nub's own socket. */
static int tap_send(void *ctx, const mc_address *to, const uint8_t *data, size_t len)
{
    size_tap *t = ctx;
    t->datagrams++;
    if (len > t->largest)
        t->largest = len;
    struct sockaddr_in sa;
    mc_address_to_sockaddr(to, &sa);
    ssize_t n = sendto(mc_nub_fd(t->nub), data, len, 0, (struct sockaddr *)&sa, sizeof sa);
    return n == (ssize_t)len ? 0 : -1;
}

static bool notes_reached(void *ctx) { return ((recv_state *)ctx)->notes >= 1; }

START_TEST(max_packet_bounds_every_datagram)
{
    enum { LIMIT = 1472 - 25 }; /* what an external nub under common/secure sets */
    pair p;
    pair_open(&p, NULL);
    ck_assert_uint_eq(mc_nub_max_packet(p.a), MC_PACKET_MAX_SIZE);
    ck_assert_int_eq(mc_nub_set_max_packet(p.a, MC_PACKET_MIN_LIMIT - 1), MC_ERR_INVALID);
    ck_assert_int_eq(mc_nub_set_max_packet(p.a, MC_PACKET_MAX_SIZE + 1), MC_ERR_INVALID);
    ck_assert_int_eq(mc_nub_set_max_packet(p.a, LIMIT), MC_OK);
    ck_assert_int_eq(mc_nub_set_max_packet(p.b, LIMIT), MC_OK);
    ck_assert_uint_eq(mc_nub_max_packet(p.a), LIMIT);
    size_tap ta = {p.a, 0, 0}, tb = {p.b, 0, 0};
    mc_nub_set_output(p.a, tap_send, &ta);
    mc_nub_set_output(p.b, tap_send, &tb);
    /* messages around the limit and above it (fragments), small ones filling packets */
    uint32_t counter = 0;
    static const size_t sizes[] = {1380, 1400, 1410, 1415, 1420, 1425, 1430, 1440, 1445,
                                   1447, 1450, 1460, 1472, 1500, 3000, 70000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        send_stream(p.ab, counter, 3, sizes[i]);
        counter += 3;
    }
    send_stream(p.ab, counter, 2000, 40);
    counter += 2000;
    ck_assert(wait_received(&p, &p.rb, counter, 30));
    /* a big reply from b (its channel was opened by a: first a probe, then the answer) */
    reply_rec rr = {0};
    uint8_t ask[1] = {2};
    ck_assert_int_eq(mc_channel_request(p.ab, tdef(T_REQ), ask, 1, on_reply, &rr, 0), MC_OK);
    ck_assert(pump_until(p.base, reply_done, &rr, 10));
    ck_assert_int_eq(rr.status, MC_REPLY_OK);
    /* b asks a for echoes of nearly a packet under loss: a's replies are written while
     * selective acks of b's out-of-order requests are pending, and carry what fits */
    mc_channel *ba = mc_nub_find_channel(p.b, mc_nub_address(p.a));
    ck_assert_ptr_nonnull(ba);
    mc_rehearsal lossy = {0};
    lossy.loss = 0.3;
    mc_nub_set_rehearsal(p.b, &lossy);
    static reply_rec echoes[60];
    memset(echoes, 0, sizeof echoes);
    uint8_t echo[1400];
    memset(echo, 0x5A, sizeof echo);
    echo[0] = 1; /* mode 1: echo the rest */
    mc_bundle *bb = mc_channel_bundle(ba);
    for (int i = 0; i < 60; i++) {
        ck_assert_int_eq(mc_bundle_start_request(bb, tdef(T_REQ), on_reply, &echoes[i], 0), MC_OK);
        mc_bundle_write(bb, echo, sizeof echo);
        ck_assert_int_eq(mc_bundle_end_message(bb), MC_OK);
    }
    ck_assert_int_eq(mc_channel_send(ba), MC_OK);
    ck_assert(pump_until(p.base, reply_done, &echoes[59], 30));
    for (int i = 0; i < 60; i++)
        ck_assert_int_eq(echoes[i].status, MC_REPLY_OK);
    mc_rehearsal calm = {0};
    mc_nub_set_rehearsal(p.b, &calm);
    ck_assert(pump_until(p.base, idle, ba, 10));
    /* a reply of nearly a packet written while 30 selective acks are pending: datagrams
     * from b's socket with b's next sequence numbers, the 30 after it first (buffered out
     * of order), then the request itself, all read by a in one batch */
    mc_channel_stats bs;
    mc_channel_get_stats(ba, &bs);
    uint8_t dg[1500];
    struct sockaddr_in to;
    mc_address_to_sockaddr(mc_nub_address(p.a), &to);
    for (uint32_t k = 1; k <= 30; k++) {
        mc_store_u16(dg, 0x0008 | 0x0010 | 0x0040); /* ON_CHANNEL, IS_RELIABLE, HAS_SEQ */
        dg[2] = T_NOTE;
        mc_store_u16(dg + 3, 1);
        dg[5] = 0;
        mc_store_u32(dg + 6, (bs.next_send_seq + k) & 0x0FFFFFFFu);
        ck_assert_int_eq(sendto(mc_nub_fd(p.b), dg, 10, 0, (struct sockaddr *)&to, sizeof to), 10);
    }
    size_t n = 0;
    mc_store_u16(dg, 0x0008 | 0x0010 | 0x0040 | 0x0001); /* ... HAS_REQUESTS */
    n = 2;
    dg[n++] = T_REQ;
    mc_store_u32(dg + n, 12345); /* reply id (b has no such request: a late reply there) */
    n += 4;
    mc_store_u16(dg + n, 0); /* no next request */
    n += 2;
    mc_store_u16(dg + n, 1400);
    n += 2;
    memcpy(dg + n, echo, 1400);
    n += 1400;
    mc_store_u16(dg + n, 2); /* first request */
    n += 2;
    mc_store_u32(dg + n, bs.next_send_seq);
    n += 4;
    ck_assert_int_eq(sendto(mc_nub_fd(p.b), dg, n, 0, (struct sockaddr *)&to, sizeof to),
                     (ssize_t)n);
    uint64_t requests = p.ra.requests;
    for (int i = 0; i < 200 && p.ra.requests == requests; i++)
        pump_for(p.base, 0.01);
    ck_assert_uint_eq(p.ra.requests, requests + 1);
    /* an external channel under loss: lost packets ride along as piggybacks */
    mc_channel *ext = mc_nub_indexed_channel(p.a, mc_nub_address(p.b), 3, MC_CHANNEL_EXTERNAL);
    ck_assert_ptr_nonnull(ext);
    mc_rehearsal r = {0};
    r.loss = 0.2;
    mc_nub_set_rehearsal(p.a, &r);
    mc_rehearsal rb = {0};
    rb.loss = 1.0; /* b's acks are lost for a while: unacked packets age and ride along */
    mc_nub_set_rehearsal(p.b, &rb);
    static const size_t ext_sizes[] = {40, 690, 700, 710, 720, 1300};
    for (uint32_t i = 0; i < 400; i++) {
        if (i == 200) {
            rb.loss = 0;
            mc_nub_set_rehearsal(p.b, &rb);
        }
        send_stream(ext, counter, 1, ext_sizes[i % 6]);
        counter++;
        pump_for(p.base, 0.004);
    }
    ck_assert(wait_received(&p, &p.rb, counter, 30));
    ck_assert(pump_until(p.base, idle, ext, 30));
    mc_rehearsal none = {0};
    mc_nub_set_rehearsal(p.a, &none);
    /* off-channel: a message spanning packets, once-off reliable */
    mc_bundle *b = mc_bundle_new(p.a);
    uint8_t big[5000];
    memset(big, 7, sizeof big);
    ck_assert_int_eq(mc_bundle_add_message(b, tdef(T_NOTE), MC_RELIABLE_DRIVER, big, sizeof big),
                     MC_OK);
    ck_assert_int_eq(mc_nub_send_bundle(p.a, mc_nub_address(p.b), b, MC_SEND_RELIABLE_ONCE),
                     MC_OK);
    mc_bundle_free(b);
    ck_assert(pump_until(p.base, notes_reached, &p.rb, 10));
    pump_for(p.base, 0.1);
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert_uint_eq(p.rb.bad_content, 0);
    mc_nub_stats st;
    mc_nub_get_stats(p.a, &st);
    ck_assert_uint_gt(st.piggybacks, 0);
    ck_assert_uint_eq(st.send_errors, 0);
    /* nothing over the limit left either nub, and packets were filled up to it */
    ck_assert_uint_le(ta.largest, LIMIT);
    ck_assert_uint_le(tb.largest, LIMIT);
    ck_assert_uint_ge(ta.largest, LIMIT - 16);
    ck_assert_uint_gt(tb.datagrams, 0);
    mc_nub_set_output(p.a, NULL, NULL);
    mc_nub_set_output(p.b, NULL, NULL);
    pair_close(&p);
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
    tcase_add_test(tc, max_packet_bounds_every_datagram);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(limits_suite)
