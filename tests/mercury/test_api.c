/* Mercury API behaviour: requests and replies, message lengths and the oversize case,
 * off-channel sends, channel death and condemning, watchers, hostile packets. */
#include "check_main.h"
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/watcher.h"
#include "harness.h"

/* ---- configuration errors ---- */
static void on_nothing(void *ctx, const mc_message_info *info, mc_istream *is)
{
    (void)ctx;
    (void)info;
    (void)is;
}

START_TEST(bad_interfaces_and_addresses_refused)
{
    char err[128];
    static const mc_message_def dup_defs[] = {{1, "A", MC_MSG_FIXED, 4, on_nothing},
                                              {1, "B", MC_MSG_FIXED, 4, on_nothing}};
    static const mc_interface dup = MC_INTERFACE("dup", dup_defs);
    ck_assert_int_eq(mc_interface_validate(&dup, err, sizeof err), MC_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "reuses id 1"));
    static const mc_message_def reserved_defs[] = {{0xFF, "R", MC_MSG_FIXED, 4, on_nothing}};
    static const mc_interface reserved = MC_INTERFACE("reserved", reserved_defs);
    ck_assert_int_eq(mc_interface_validate(&reserved, err, sizeof err), MC_ERR_INVALID);
    static const mc_message_def field_defs[] = {{2, "F", MC_MSG_VARIABLE, 3, on_nothing}};
    static const mc_interface field = MC_INTERFACE("field", field_defs);
    ck_assert_int_eq(mc_interface_validate(&field, err, sizeof err), MC_ERR_INVALID);
    ck_assert_int_eq(mc_interface_validate(&test_iface, err, sizeof err), MC_OK);
    ck_assert_ptr_eq(mc_interface_find_name(&test_iface, "T_VAR2_"), tdef(T_VAR2));

    struct event_base *base = event_base_new();
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    mc_nub *nub = NULL;
    cfg.iface = &dup;
    ck_assert_int_eq(mc_nub_new(base, &cfg, &nub), MC_ERR_INVALID);
    ck_assert_ptr_null(nub);
    cfg.iface = NULL;
    cfg.bind = "127.0.0.1";
    ck_assert_int_eq(mc_nub_new(base, &cfg, &nub), MC_ERR_ADDRESS);
    cfg.bind = "10.0.0.300:5";
    ck_assert_int_eq(mc_nub_new(base, &cfg, &nub), MC_ERR_ADDRESS);
    cfg.bind = "127.0.0.1:0";
    ck_assert_int_eq(mc_nub_new(base, &cfg, &nub), MC_OK);
    ck_assert_uint_ne(mc_nub_address(nub)->port, 0);
    /* a second nub on the same port is refused */
    char used[MC_ADDRESS_STRLEN];
    mc_address_format(mc_nub_address(nub), used, sizeof used);
    mc_nub *other = NULL;
    cfg.bind = used;
    ck_assert_int_eq(mc_nub_new(base, &cfg, &other), MC_ERR_SOCKET);
    ck_assert_ptr_null(mc_nub_channel(nub, mc_nub_address(nub), MC_CHANNEL_INTERNAL));
    mc_nub_free(nub);
    event_base_free(base);

    mc_address a;
    ck_assert_int_eq(mc_address_parse("127.0.0.1:65536", &a), MC_ERR_ADDRESS);
    ck_assert_int_eq(mc_address_parse(":80", &a), MC_ERR_ADDRESS);
    ck_assert_int_eq(mc_address_parse("127.0.0.1:8x", &a), MC_ERR_ADDRESS);
    ck_assert_int_eq(mc_address_parse("127.0.0.1:8080", &a), MC_OK);
    ck_assert_uint_eq(a.ip, 0x7F000001u);
    ck_assert_uint_eq(a.port, 8080);
}
END_TEST

/* Conditions to wait for instead of fixed sleeps. */
static bool idle(void *ch) { return mc_channel_idle(ch); }

typedef struct {
    const uint64_t *value;
    uint64_t target;
} at_least;

static bool reached(void *ctx)
{
    at_least *w = ctx;
    return *w->value >= w->target;
}

/* ---- requests (reply_rec, on_reply, reply_done: harness.h) ---- */

START_TEST(request_reply_on_channel)
{
    pair p;
    pair_open(&p, NULL);
    reply_rec rr = {0};
    uint8_t msg[] = {1, 'p', 'i', 'n', 'g'};
    ck_assert_int_eq(mc_channel_request(p.ab, tdef(T_REQ), msg, sizeof msg, on_reply, &rr, 0),
                     MC_OK);
    ck_assert(pump_until(p.base, reply_done, &rr, 10));
    ck_assert_int_eq(rr.calls, 1);
    ck_assert_int_eq(rr.status, MC_REPLY_OK);
    ck_assert_int_eq(rr.info_missing, 0);
    ck_assert_uint_eq(rr.len, 4);
    ck_assert(memcmp(rr.data, "ping", 4) == 0);
    ck_assert(pump_until(p.base, idle, p.ab, 5)); /* and the exchange is over */
    ck_assert_int_eq(rr.calls, 1);
    mc_nub_stats st;
    mc_nub_get_stats(p.a, &st);
    ck_assert_uint_eq(st.pending_requests, 0);
    pair_close(&p);
}
END_TEST

START_TEST(request_timeout)
{
    pair p;
    pair_open(&p, NULL);
    reply_rec rr = {0};
    uint8_t msg[] = {0, 'x'}; /* receiver does not answer */
    mc_time_us t0 = mc_clock_now_us();
    ck_assert_int_eq(mc_channel_request(p.ab, tdef(T_REQ), msg, sizeof msg, on_reply, &rr,
                                        300 * MC_US_PER_MS),
                     MC_OK);
    ck_assert(pump_until(p.base, reply_done, &rr, 10));
    ck_assert_int_eq(rr.status, MC_REPLY_TIMEOUT);
    ck_assert_uint_ge(mc_clock_now_us() - t0, 300 * MC_US_PER_MS);
    pump_for(p.base, 0.5); /* the handler is called exactly once */
    ck_assert_int_eq(rr.calls, 1);
    ck_assert_uint_eq(p.rb.requests, 1);
    mc_nub_stats st;
    mc_nub_get_stats(p.a, &st);
    ck_assert_uint_eq(st.requests_timed_out, 1);
    pair_close(&p);
}
END_TEST

START_TEST(request_off_channel_once_off)
{
    pair p;
    pair_open(&p, NULL);
    mc_bundle *b = mc_bundle_new(p.a);
    /* b answers off-channel only to an address that acknowledged its probe (request.h):
     * a proves its address with a first request on a clean link */
    reply_rec first = {0};
    ck_assert_int_eq(mc_bundle_start_request(b, tdef(T_REQ), on_reply, &first, 0), MC_OK);
    uint8_t hello[] = {1, 'h'};
    mc_bundle_write(b, hello, sizeof hello);
    ck_assert_int_eq(mc_bundle_end_message(b), MC_OK);
    ck_assert_int_eq(mc_nub_send_bundle(p.a, mc_nub_address(p.b), b, MC_SEND_RELIABLE_ONCE),
                     MC_OK);
    ck_assert(pump_until(p.base, reply_done, &first, 10));
    ck_assert_int_eq(first.status, MC_REPLY_OK);
    p.rb.requests = 0;
    mc_rehearsal r = {0};
    r.loss = 0.5;
    mc_nub_set_rehearsal(p.a, &r);
    mc_nub_set_rehearsal(p.b, &r);
    reply_rec rr = {0};
    ck_assert_int_eq(mc_bundle_start_request(b, tdef(T_REQ), on_reply, &rr, 8 * MC_US_PER_S),
                     MC_OK);
    uint8_t msg[] = {1, 'o', 'f', 'f'};
    mc_bundle_write(b, msg, sizeof msg);
    ck_assert_int_eq(mc_bundle_end_message(b), MC_OK);
    ck_assert_int_eq(mc_nub_send_bundle(p.a, mc_nub_address(p.b), b, MC_SEND_RELIABLE_ONCE),
                     MC_OK);
    ck_assert(pump_until(p.base, reply_done, &rr, 10));
    ck_assert_int_eq(rr.status, MC_REPLY_OK);
    ck_assert(memcmp(rr.data, "off", 3) == 0);
    pump_for(p.base, 1.0); /* let resends of both sides arrive: duplicates suppressed */
    ck_assert_uint_eq(p.rb.requests, 1);
    ck_assert_int_eq(rr.calls, 1);
    mc_bundle_free(b);
    pair_close(&p);
}
END_TEST

START_TEST(requests_spanning_packets)
{
    pair p;
    pair_open(&p, NULL);
    mc_bundle *b = mc_channel_bundle(p.ab);
    uint8_t note[100] = {0};
    for (int i = 0; i < 10; i++)
        mc_bundle_add_message(b, tdef(T_NOTE), MC_RELIABLE_DRIVER, note, sizeof note);
    reply_rec big = {0}, small = {0};
    /* a big request written in pieces, after other messages: moved, then spanning */
    ck_assert_int_eq(mc_bundle_start_request(b, tdef(T_REQ), on_reply, &big, 0), MC_OK);
    ck_assert_int_eq(mc_bundle_write_u8(b, 1), MC_OK);
    for (int i = 0; i < 50; i++)
        ck_assert_int_eq(mc_bundle_write(b, note, 100), MC_OK);
    ck_assert_int_eq(mc_bundle_end_message(b), MC_OK);
    ck_assert_uint_gt(mc_bundle_packet_count(b), 1);
    uint8_t msg[] = {1, 'o', 'k'};
    ck_assert_int_eq(mc_bundle_start_request(b, tdef(T_REQ), on_reply, &small, 0), MC_OK);
    mc_bundle_write(b, msg + 1, 0);
    mc_bundle_write(b, msg, sizeof msg);
    ck_assert_int_eq(mc_bundle_end_message(b), MC_OK);
    ck_assert_int_eq(mc_channel_send(p.ab), MC_OK);
    ck_assert(pump_until(p.base, reply_done, &small, 10));
    ck_assert(pump_until(p.base, reply_done, &big, 10));
    ck_assert_int_eq(big.status, MC_REPLY_OK);
    ck_assert_uint_eq(big.len, 5000);
    ck_assert_int_eq(small.status, MC_REPLY_OK);
    ck_assert_uint_eq(small.len, 2);
    ck_assert(memcmp(small.data, "ok", 2) == 0);
    ck_assert_uint_eq(p.rb.notes, 10);
    ck_assert_uint_eq(p.rb.requests, 2);
    pair_close(&p);
}
END_TEST

/* ---- lengths ---- */
static void send_len(pair *p, uint8_t id, size_t n, uint32_t counter, bool streamed)
{
    uint8_t *buf = malloc(n ? n : 1);
    pattern_fill(buf, n, counter);
    mc_bundle *b = mc_channel_bundle(p->ab);
    if (streamed) {
        ck_assert_int_eq(mc_bundle_start_message(b, tdef(id), MC_RELIABLE_DRIVER), MC_OK);
        /* uneven chunks */
        size_t off = 0, step = 1;
        while (off < n) {
            size_t k = n - off < step ? n - off : step;
            ck_assert_int_eq(mc_bundle_write(b, buf + off, k), MC_OK);
            off += k;
            step = step * 3 + 1;
        }
        ck_assert_int_eq(mc_bundle_end_message(b), MC_OK);
    } else {
        ck_assert_int_eq(mc_bundle_add_message(b, tdef(id), MC_RELIABLE_DRIVER, buf, n), MC_OK);
    }
    free(buf);
}

START_TEST(lengths_each_field_size)
{
    static const size_t lens[] = {0, 254, 255, 256, 65535, 65536, 16u * 1024u * 1024u};
    static const uint8_t ids[] = {T_VAR1, T_VAR2, T_VAR4};
    pair p;
    pair_open(&p, NULL);
    uint64_t expect = 0;
    uint32_t counter = 0;
    for (size_t k = 0; k < 3; k++) {
        p.rb.lengths_seen = 0;
        size_t nl = sizeof lens / sizeof lens[0];
        for (size_t i = 0; i < nl; i++) {
            send_len(&p, ids[k], lens[i], counter, (i % 2) == 1);
            counter = lens[i] >= 4 ? counter + 1 : counter;
            /* small messages between big ones keep the order checks honest */
            send_len(&p, ids[k], 8, counter++, false);
            mc_channel_send(p.ab);
            expect += 2;
            ck_assert_msg(wait_received(&p, &p.rb, expect, 120), "field %u len %zu",
                          (unsigned)ids[k], lens[i]);
        }
        ck_assert_uint_eq(p.rb.bad_content, 0);
        ck_assert_uint_eq(p.rb.out_of_order, 0);
        for (size_t i = 0; i < nl; i++)
            ck_assert_uint_eq(p.rb.lengths[2 * i], lens[i]);
    }
    pair_close(&p);
}
END_TEST

START_TEST(bundle_errors_roll_back)
{
    pair p;
    pair_open(&p, NULL);
    mc_bundle *b = mc_channel_bundle(p.ab);
    uint8_t buf[16] = {0};
    ck_assert_int_eq(mc_bundle_end_message(b), MC_ERR_STATE);
    ck_assert_int_eq(mc_bundle_write(b, buf, 1), MC_ERR_STATE);
    /* fixed length mismatch */
    ck_assert_int_eq(mc_bundle_add_message(b, tdef(T_SEQ), MC_RELIABLE_DRIVER, buf, 7),
                     MC_ERR_INVALID);
    ck_assert_int_eq(mc_bundle_start_message(b, tdef(T_SEQ), MC_RELIABLE_DRIVER), MC_OK);
    ck_assert_int_eq(mc_bundle_start_message(b, tdef(T_SEQ), MC_RELIABLE_DRIVER), MC_ERR_STATE);
    mc_bundle_write(b, buf, 9);
    ck_assert_int_eq(mc_bundle_end_message(b), MC_ERR_TOO_LARGE);
    /* a good message after the failed one still goes through alone */
    send_len(&p, T_VAR2, 300, 5, true);
    p.rb.next = 5;
    mc_channel_send(p.ab);
    ck_assert(wait_received(&p, &p.rb, 1, 10));
    ck_assert(pump_until(p.base, idle, p.ab, 5)); /* everything sent was acknowledged */
    ck_assert_uint_eq(p.rb.received, 1);
    ck_assert_uint_eq(p.rb.bad_content, 0);
    mc_nub_stats st;
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_eq(st.dropped_total, 0);
    ck_assert_int_eq(mc_bundle_add_message(NULL, tdef(T_SEQ), MC_RELIABLE_DRIVER, buf, 8),
                     MC_ERR_INVALID);
    pair_close(&p);
}
END_TEST

/* ---- off-channel ---- */
START_TEST(off_channel_unreliable_and_once_off)
{
    pair p;
    pair_open(&p, NULL);
    mc_bundle *b = mc_bundle_new(p.a);
    uint8_t note[3] = {1, 2, 3};
    for (int i = 0; i < 10; i++)
        mc_bundle_add_message(b, tdef(T_NOTE), MC_RELIABLE_NO, note, sizeof note);
    ck_assert_int_eq(mc_nub_send_bundle(p.a, mc_nub_address(p.b), b, MC_SEND_UNRELIABLE),
                     MC_OK);
    ck_assert_uint_eq(mc_bundle_packet_count(b), 0);
    at_least ten = {&p.rb.notes, 10};
    ck_assert(pump_until(p.base, reached, &ten, 5));
    ck_assert_uint_eq(p.rb.notes, 10);
    /* once-off reliable through 60% loss: every message exactly once */
    mc_rehearsal r = {0};
    r.loss = 0.6;
    mc_nub_set_rehearsal(p.a, &r);
    mc_nub_set_rehearsal(p.b, &r);
    for (int i = 0; i < 20; i++) {
        mc_bundle_add_message(b, tdef(T_NOTE), MC_RELIABLE_DRIVER, note, sizeof note);
        mc_nub_send_bundle(p.a, mc_nub_address(p.b), b, MC_SEND_RELIABLE_ONCE);
    }
    /* and a multi-packet (fragmented) once-off bundle */
    uint8_t *big = malloc(5000);
    pattern_fill(big, 5000, 77);
    p.rb.next = 77;
    mc_bundle_add_message(b, tdef(T_VAR2), MC_RELIABLE_DRIVER, big, 5000);
    mc_nub_send_bundle(p.a, mc_nub_address(p.b), b, MC_SEND_RELIABLE_ONCE);
    free(big);
    at_least thirty = {&p.rb.notes, 30}, one = {&p.rb.received, 1};
    ck_assert(pump_until(p.base, reached, &thirty, 20));
    ck_assert(pump_until(p.base, reached, &one, 20));
    /* once-off resends still in flight arrive as duplicates and are suppressed */
    pump_for(p.base, 0.5);
    ck_assert_uint_eq(p.rb.notes, 30);
    ck_assert_uint_eq(p.rb.received, 1);
    ck_assert_uint_eq(p.rb.bad_content, 0);
    mc_nub_stats st;
    mc_nub_get_stats(p.a, &st);
    ck_assert_uint_gt(st.once_off_resends, 0);
    mc_bundle_free(b);
    pair_close(&p);
}
END_TEST

/* ---- channel death and condemning ---- */
static void short_inactivity(mc_nub_config *cfg, int which)
{
    (void)which;
    cfg->inactivity_timeout_us = 2 * MC_US_PER_S;
    cfg->keepalive_interval_us = 200 * MC_US_PER_MS;
}

START_TEST(channel_dies_of_inactivity)
{
    pair p;
    pair_open(&p, short_inactivity);
    death_rec d = {0};
    mc_nub_set_channel_dead_handler(p.a, on_dead, &d);
    send_stream(p.ab, 0, 10, 40);
    ck_assert(wait_received(&p, &p.rb, 10, 5));
    /* keepalives keep an idle channel alive */
    pump_for(p.base, 3.0);
    ck_assert_int_eq(d.deaths, 0);
    /* the peer goes away: the channel dies, a pending request fails */
    reply_rec rr = {0};
    uint8_t msg[] = {1, 'z'};
    mc_address baddr = *mc_nub_address(p.b);
    mc_nub_free(p.b);
    p.b = NULL;
    mc_channel_request(p.ab, tdef(T_REQ), msg, sizeof msg, on_reply, &rr, 30 * MC_US_PER_S);
    ck_assert(pump_until(p.base, died, &d, 15));
    ck_assert_int_eq(d.reason, MC_CHANNEL_DEATH_INACTIVITY);
    ck_assert_int_eq(rr.calls, 1);
    ck_assert_int_eq(rr.status, MC_REPLY_CHANNEL_DEAD);
    ck_assert_ptr_null(mc_nub_find_channel(p.a, &baddr));
    mc_nub_stats st;
    mc_nub_get_stats(p.a, &st);
    ck_assert_uint_eq(st.channels, 0);
    pair_close(&p);
}
END_TEST

static bool no_channels(void *ctx)
{
    mc_nub_stats st;
    mc_nub_get_stats(ctx, &st);
    return st.channels == 0;
}

START_TEST(condemned_channel_finishes_sending)
{
    pair p;
    pair_open(&p, NULL);
    death_rec d = {0};
    mc_nub_set_channel_dead_handler(p.a, on_dead, &d);
    mc_rehearsal r = {0};
    r.loss = 0.3;
    mc_nub_set_rehearsal(p.a, &r);
    send_stream(p.ab, 0, 3000, 40);
    mc_channel_condemn(p.ab);
    p.ab = NULL;
    ck_assert(wait_received(&p, &p.rb, 3000, 30));
    ck_assert(pump_until(p.base, no_channels, p.a, 10));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert_int_eq(d.deaths, 0); /* condemned channels are not reported */
    pair_close(&p);
}
END_TEST

/* A channel closed by its owner: its dead handler hears CLOSED, the next send opens a new
 * channel (a new incarnation), which the peer takes as a restart, delivering in order. */
START_TEST(a_closed_channel_is_replaced_by_a_new_one)
{
    pair p;
    pair_open(&p, NULL);
    death_rec da = {0}, db = {0};
    mc_nub_set_channel_dead_handler(p.a, on_dead, &da);
    mc_nub_set_channel_dead_handler(p.b, on_dead, &db);
    send_stream(p.ab, 0, 200, 40);
    ck_assert(wait_received(&p, &p.rb, 200, 10));
    ck_assert(pump_until(p.base, idle, p.ab, 5));
    ck_assert_int_eq(mc_nub_close_channel(p.a, mc_nub_address(p.b)), MC_OK);
    ck_assert_ptr_null(mc_nub_find_channel(p.a, mc_nub_address(p.b)));
    ck_assert_int_eq(mc_nub_close_channel(p.a, mc_nub_address(p.b)), MC_ERR_DEAD);
    ck_assert(pump_until(p.base, died, &da, 5));
    ck_assert_int_eq(da.reason, MC_CHANNEL_DEATH_CLOSED);
    p.ab = mc_nub_channel(p.a, mc_nub_address(p.b), MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(p.ab);
    p.rb.next = 0;
    p.rb.received = 0;
    send_stream(p.ab, 0, 300, 40);
    ck_assert(wait_received(&p, &p.rb, 300, 10));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert(pump_until(p.base, died, &db, 5));
    ck_assert_int_eq(db.reason, MC_CHANNEL_DEATH_PEER_RESTARTED);
    ck_assert_str_eq(mc_channel_death_name(MC_CHANNEL_DEATH_CLOSED), "closed");
    pair_close(&p);
}
END_TEST

START_TEST(peer_restart_replaces_channel)
{
    pair p;
    pair_open(&p, NULL);
    death_rec d = {0};
    mc_nub_set_channel_dead_handler(p.b, on_dead, &d);
    send_stream(p.ab, 0, 500, 40);
    ck_assert(wait_received(&p, &p.rb, 500, 10));
    ck_assert(pump_until(p.base, idle, p.ab, 5));
    /* a restarts on the same port and opens a fresh channel (sequence numbers from 0) */
    char bind[MC_ADDRESS_STRLEN];
    mc_address_format(mc_nub_address(p.a), bind, sizeof bind);
    mc_nub_free(p.a);
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.iface = &test_iface;
    cfg.handler_ctx = &p;
    cfg.bind = bind;
    cfg.rehearsal_seed = 1234; /* same seed as before: the nonce must still differ */
    ck_assert_int_eq(mc_nub_new(p.base, &cfg, &p.a), MC_OK);
    p.ab = mc_nub_channel(p.a, mc_nub_address(p.b), MC_CHANNEL_INTERNAL);
    p.rb.next = 0;
    p.rb.received = 0;
    send_stream(p.ab, 0, 300, 40);
    ck_assert(wait_received(&p, &p.rb, 300, 10));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert(pump_until(p.base, died, &d, 5));
    ck_assert_int_eq(d.deaths, 1);
    ck_assert_int_eq(d.reason, MC_CHANNEL_DEATH_PEER_RESTARTED);
    /* the old channel's late CREATE resends do not disturb the new one */
    ck_assert(pump_until(p.base, (bool (*)(void *))mc_channel_idle, p.ab, 5));
    pair_close(&p);
}
END_TEST


/* A dead handler that opens a channel to the restarted peer at once and writes to it (as
 * the server framework re-registers with a restarted manager). */
static void reopen_on_dead(void *ctx, mc_channel *ch, mc_channel_death reason)
{
    death_rec *d = ctx;
    d->deaths++;
    d->reason = reason;
    mc_address addr = *mc_channel_address(ch);
    mc_channel *fresh = mc_nub_channel(mc_channel_nub(ch), &addr, MC_CHANNEL_INTERNAL);
    uint8_t note[1] = {5};
    if (fresh) {
        mc_channel_send_message(fresh, tdef(T_NOTE), note, sizeof note);
        mc_channel_send(fresh);
    }
}

static bool note_seen(void *ctx) { return ((recv_state *)ctx)->notes > 0; }

START_TEST(dead_handler_reopening_the_restarted_peer)
{
    pair p;
    pair_open(&p, NULL);
    death_rec d = {0}, da = {0};
    mc_nub_set_channel_dead_handler(p.b, reopen_on_dead, &d);
    send_stream(p.ab, 0, 100, 40);
    ck_assert(wait_received(&p, &p.rb, 100, 10));
    ck_assert(pump_until(p.base, idle, p.ab, 5));
    char bind[MC_ADDRESS_STRLEN];
    mc_address_format(mc_nub_address(p.a), bind, sizeof bind);
    mc_nub_free(p.a);
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.iface = &test_iface;
    cfg.handler_ctx = &p;
    cfg.bind = bind;
    ck_assert_int_eq(mc_nub_new(p.base, &cfg, &p.a), MC_OK);
    mc_nub_set_channel_dead_handler(p.a, on_dead, &da);
    p.ab = mc_nub_channel(p.a, mc_nub_address(p.b), MC_CHANNEL_INTERNAL);
    p.rb.next = 0;
    p.rb.received = 0;
    send_stream(p.ab, 0, 300, 40);
    ck_assert(wait_received(&p, &p.rb, 300, 10));
    ck_assert_int_eq(d.deaths, 1);
    ck_assert_int_eq(d.reason, MC_CHANNEL_DEATH_PEER_RESTARTED);
    /* b's handler-made channel is the new incarnation's partner: one channel, both ways */
    ck_assert(pump_until(p.base, note_seen, &p.ra, 5));
    ck_assert_uint_eq(p.ra.notes, 1);
    send_stream(p.ab, 300, 300, 40);
    ck_assert(wait_received(&p, &p.rb, 600, 10));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    mc_nub_stats st;
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_eq(st.channels, 1);
    ck_assert_int_eq(da.deaths, 0); /* a never took b for restarted */
    ck_assert_int_eq(d.deaths, 1);
    pair_close(&p);
}
END_TEST

START_TEST(accepting_peer_restart_replaces_channel)
{
    pair p;
    pair_open(&p, NULL);
    death_rec d = {0};
    mc_nub_set_channel_dead_handler(p.a, on_dead, &d);
    send_stream(p.ab, 0, 100, 40);
    ck_assert(wait_received(&p, &p.rb, 100, 10));
    /* b answers on the channel it accepted (no CREATE_CHANNEL from b) */
    mc_channel *ba = mc_nub_find_channel(p.b, mc_nub_address(p.a));
    ck_assert_ptr_nonnull(ba);
    send_stream(ba, 0, 100, 40);
    ck_assert(wait_received(&p, &p.ra, 100, 10));
    /* b restarts on the same port and opens a channel to a itself */
    char bind[MC_ADDRESS_STRLEN];
    mc_address_format(mc_nub_address(p.b), bind, sizeof bind);
    mc_nub_free(p.b);
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.iface = &test_iface;
    cfg.handler_ctx = &p;
    cfg.bind = bind;
    ck_assert_int_eq(mc_nub_new(p.base, &cfg, &p.b), MC_OK);
    ba = mc_nub_channel(p.b, mc_nub_address(p.a), MC_CHANNEL_INTERNAL);
    p.ra.next = 0;
    p.ra.received = 0;
    send_stream(ba, 0, 200, 40);
    ck_assert(wait_received(&p, &p.ra, 200, 10));
    ck_assert_uint_eq(p.ra.out_of_order, 0);
    ck_assert(pump_until(p.base, died, &d, 5));
    ck_assert_int_eq(d.reason, MC_CHANNEL_DEATH_PEER_RESTARTED);
    pair_close(&p);
}
END_TEST

START_TEST(simultaneous_open_is_not_a_restart)
{
    pair p;
    pair_open(&p, NULL);
    death_rec da = {0}, db = {0};
    mc_nub_set_channel_dead_handler(p.a, on_dead, &da);
    mc_nub_set_channel_dead_handler(p.b, on_dead, &db);
    /* b opens its own channel to a before anything arrives, but sends only later */
    mc_channel *ba = mc_nub_channel(p.b, mc_nub_address(p.a), MC_CHANNEL_INTERNAL);
    send_stream(p.ab, 0, 50, 40);
    ck_assert(wait_received(&p, &p.rb, 50, 10));
    ck_assert(pump_until(p.base, idle, p.ab, 5)); /* b has acknowledged a's packets */
    send_stream(ba, 0, 50, 40);
    ck_assert(wait_received(&p, &p.ra, 50, 10));
    send_stream(p.ab, 50, 50, 40);
    ck_assert(wait_received(&p, &p.rb, 100, 10));
    ck_assert(pump_until(p.base, idle, p.ab, 5));
    ck_assert(pump_until(p.base, idle, ba, 5));
    ck_assert_int_eq(da.deaths, 0);
    ck_assert_int_eq(db.deaths, 0);
    ck_assert_uint_eq(p.ra.out_of_order + p.rb.out_of_order, 0);
    pair_close(&p);
}
END_TEST

static void tiny_overflow(mc_nub_config *cfg, int which)
{
    (void)which;
    cfg->max_overflow_packets = 10;
}

START_TEST(overflow_bound_kills_channel)
{
    pair p;
    pair_open(&p, tiny_overflow);
    death_rec d = {0};
    mc_nub_set_channel_dead_handler(p.a, on_dead, &d);
    ck_assert_int_eq(mc_channel_set_window(p.ab, 4), MC_OK);
    uint8_t buf[1400];
    memset(buf, 1, sizeof buf);
    int refused = 0;
    for (int i = 0; i < 100; i++) {
        int rc = mc_channel_send_message(p.ab, tdef(T_VAR2), buf, sizeof buf);
        if (rc != MC_OK) {
            ck_assert(rc == MC_ERR_DEAD || rc == MC_ERR_OVERFLOW);
            refused++;
        }
    }
    ck_assert_int_gt(refused, 0);
    ck_assert(pump_until(p.base, died, &d, 5));
    ck_assert_int_eq(d.reason, MC_CHANNEL_DEATH_OVERFLOW);
    pair_close(&p);
}
END_TEST

/* ---- watchers ---- */
START_TEST(watchers_publish_and_rehearse)
{
    pair p;
    pair_open(&p, NULL);
    mc_watchers *w = mc_watchers_new();
    ck_assert_int_eq(mc_nub_register_watchers(p.a, w, "nub"), MC_OK);
    ck_assert_int_eq(mc_nub_register_watchers(p.a, w, "nub"), MC_ERR_INVALID);
    send_stream(p.ab, 0, 100, 40);
    ck_assert(wait_received(&p, &p.rb, 100, 5));
    char err[128];
    mc_watch_value v;
    ck_assert_int_eq(mc_watch_get(w, "nub/packetsSent", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_uint_gt(v.as.u, 0);
    mc_watch_value_clear(&v);
    ck_assert_int_eq(mc_watch_get(w, "nub/channels/count", &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_uint_eq(v.as.u, 1);
    char path[128];
    char a[MC_ADDRESS_STRLEN];
    snprintf(path, sizeof path, "nub/channels/%s/sent",
             mc_address_format(mc_nub_address(p.b), a, sizeof a));
    ck_assert_int_eq(mc_watch_get(w, path, &v, err, sizeof err), MC_WATCH_OK);
    ck_assert_uint_gt(v.as.u, 0);
    ck_assert_int_eq(mc_watch_set(w, "nub/rehearsal/loss", "0.25", err, sizeof err),
                     MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_set(w, "nub/rehearsal/loss", "1.5", err, sizeof err),
                     MC_WATCH_ERR_REFUSED);
    ck_assert_int_eq(mc_watch_set(w, "nub/rehearsal/latencyMs", "30", err, sizeof err),
                     MC_WATCH_OK);
    mc_rehearsal r;
    mc_nub_get_rehearsal(p.a, &r);
    ck_assert(r.loss > 0.24 && r.loss < 0.26);
    ck_assert_uint_eq(r.latency_ms, 30);
    ck_assert_int_eq(mc_watch_get(w, "nub/drops/badChecksum", &v, err, sizeof err),
                     MC_WATCH_OK);
    mc_nub_free(p.a);
    p.a = NULL;
    ck_assert(!mc_watch_is_directory(w, "nub"));
    mc_nub_free(p.b);
    event_base_free(p.base);
    mc_watchers_free(w);
}
END_TEST

/* ---- hostile packets ---- */
static uint64_t drops(mc_nub *n, mc_drop_reason why)
{
    mc_nub_stats st;
    mc_nub_get_stats(n, &st);
    return st.drops[why];
}

START_TEST(bad_packets_dropped_by_reason)
{
    pair p;
    pair_open(&p, NULL);
    mc_address from = {0x7F000002u, 40000};
    uint8_t pk[64];
    /* too short */
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &from, pk, 1), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_TOO_SHORT), 1);
    /* unknown flags */
    mc_store_u16(pk, 0x8000);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &from, pk, 2), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_BAD_FLAGS), 1);
    /* sequence footer larger than the packet */
    mc_store_u16(pk, 0x0040 | 0x0010);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &from, pk, 4), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_BAD_FOOTER), 1);
    /* ack count zero */
    mc_store_u16(pk, 0x0004);
    pk[2] = 0;
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &from, pk, 3), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_BAD_ACKS), 1);
    /* ack count larger than the packet */
    mc_store_u16(pk, 0x0004);
    memset(pk + 2, 0, 8);
    pk[10] = 200;
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &from, pk, 11), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_BAD_ACKS), 2);
    /* message length past the end */
    mc_store_u16(pk, 0);
    pk[2] = T_VAR2;
    mc_store_u16(pk + 3, 100);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &from, pk, 10), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_BAD_MESSAGE), 1);
    /* unknown message id */
    pk[2] = 99;
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &from, pk, 3), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_UNKNOWN_MESSAGE), 1);
    /* oversize escape with a length that would fit the field */
    pk[2] = T_VAR1;
    pk[3] = 0xFF;
    mc_store_u32(pk + 4, 10);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &from, pk, 20), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_BAD_MESSAGE), 2);
    /* on-channel packet from a stranger without CREATE_CHANNEL */
    mc_store_u16(pk, 0x0008);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &from, pk, 2), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_NO_CHANNEL), 1);
    /* a good off-channel unreliable packet is accepted */
    mc_store_u16(pk, 0);
    pk[2] = T_NOTE;
    mc_store_u16(pk + 3, 1);
    pk[5] = 9;
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &from, pk, 6), MC_OK);
    ck_assert_uint_eq(p.rb.notes, 1);
    pair_close(&p);
    /* checksums required: a packet without one, or with a wrong one, is refused */
    struct event_base *base = event_base_new();
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.iface = &test_iface;
    cfg.checksums = true;
    mc_nub *c;
    ck_assert_int_eq(mc_nub_new(base, &cfg, &c), MC_OK);
    ck_assert_int_eq(mc_nub_process_datagram(c, &from, pk, 6), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(c, MC_DROP_BAD_CHECKSUM), 1);
    mc_store_u16(pk, 0x0100); /* HAS_CHECKSUM */
    mc_store_u32(pk + 6, 0x12345678);
    ck_assert_int_eq(mc_nub_process_datagram(c, &from, pk, 10), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(c, MC_DROP_BAD_CHECKSUM), 2);
    mc_nub_free(c);
    event_base_free(base);
}
END_TEST

START_TEST(off_channel_fragment_expires)
{
    pair p;
    pair_open(&p, NULL);
    mc_address from = {0x7F000002u, 40001};
    uint8_t pk[64];
    size_t n = 0;
    mc_store_u16(pk, 0x0040 | 0x0020); /* HAS_SEQUENCE_NUMBER | IS_FRAGMENT */
    n = 2;
    pk[n++] = T_NOTE;
    mc_store_u16(pk + n, 10);
    n += 2;
    memset(pk + n, 7, 5);
    n += 5;
    mc_store_u32(pk + n, 100); /* first */
    mc_store_u32(pk + n + 4, 101); /* last */
    mc_store_u32(pk + n + 8, 100); /* this one */
    n += 12;
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &from, pk, n), MC_OK);
    pump_for(p.base, 0.05);
    ck_assert_uint_eq(drops(p.b, MC_DROP_FRAGMENT), 0);
    fake_clock fc = {11 * MC_US_PER_S};
    mc_clock_set_source(fake_clock_now, &fc);
    pump_for(p.base, 0.05);
    mc_clock_set_source(NULL, NULL);
    ck_assert_uint_eq(drops(p.b, MC_DROP_FRAGMENT), 1);
    ck_assert_uint_eq(p.rb.notes, 0);
    pair_close(&p);
}
END_TEST

/* Random datagrams from one generator, two ways: sent through a real UDP socket to b, and
 * handed to a reference nub through mc_nub_process_datagram. Both must account for every
 * datagram and treat each the same way (the same drops by reason, the same messages). */
static void random_datagram(uint64_t *x, uint8_t *buf, size_t *n)
{
    *n = 2 + (size_t)(*x % 190);
    for (size_t k = 0; k < *n; k++) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        buf[k] = (uint8_t)*x;
    }
}

typedef struct {
    mc_nub *nub;
    uint64_t packets;
} received_ctx;

static bool received_all(void *ctx)
{
    received_ctx *r = ctx;
    mc_nub_stats st;
    mc_nub_get_stats(r->nub, &st);
    return st.packets_received >= r->packets;
}

START_TEST(hostile_traffic_over_socket)
{
    pair p;
    pair_open(&p, NULL);
    send_stream(p.ab, 0, 10, 40);
    ck_assert(wait_received(&p, &p.rb, 10, 10));
    ck_assert(pump_until(p.base, idle, p.ab, 5));
    /* the reference: a nub like b that sees the same datagrams without a socket */
    pair refp;
    memset(&refp, 0, sizeof refp);
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.iface = &test_iface;
    cfg.handler_ctx = &refp;
    mc_nub *ref;
    ck_assert_int_eq(mc_nub_new(p.base, &cfg, &ref), MC_OK);
    /* the hostile sender: a plain UDP socket on 127.0.0.1 */
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in me;
    memset(&me, 0, sizeof me);
    me.sin_family = AF_INET;
    me.sin_addr.s_addr = htonl(0x7F000001u);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&me, sizeof me), 0);
    socklen_t ml = sizeof me;
    getsockname(fd, (struct sockaddr *)&me, &ml);
    mc_address from;
    mc_address_from_sockaddr(&me, &from);
    struct sockaddr_in to;
    mc_address_to_sockaddr(mc_nub_address(p.b), &to);
    mc_nub_stats b0, r0;
    mc_nub_get_stats(p.b, &b0);
    mc_nub_get_stats(ref, &r0);
    uint64_t x = 88172645463325252ull;
    const int count = 2000;
    for (int i = 0; i < count; i++) {
        uint8_t buf[200];
        size_t n;
        random_datagram(&x, buf, &n);
        ck_assert_int_eq(sendto(fd, buf, n, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)n);
        mc_nub_process_datagram(ref, &from, buf, n);
        if (i % 100 == 99)
            event_base_loop(p.base, EVLOOP_NONBLOCK); /* b reads as they come */
    }
    received_ctx rc = {p.b, b0.packets_received + (uint64_t)count};
    ck_assert(pump_until(p.base, received_all, &rc, 10));
    mc_nub_stats b1, r1;
    mc_nub_get_stats(p.b, &b1);
    mc_nub_get_stats(ref, &r1);
    ck_assert_uint_eq(b1.packets_received - b0.packets_received, (uint64_t)count);
    ck_assert_uint_eq(r1.packets_received - r0.packets_received, (uint64_t)count);
    /* nearly all of it is refused, by reason, the same way on both paths */
    uint64_t dropped = b1.dropped_total - b0.dropped_total;
    ck_assert_uint_ge(dropped, (uint64_t)count * 9 / 10);
    ck_assert_uint_le(dropped, (uint64_t)count);
    ck_assert_uint_eq(dropped, r1.dropped_total - r0.dropped_total);
    for (int why = 0; why < MC_DROP_REASON_COUNT; why++)
        ck_assert_msg(b1.drops[why] - b0.drops[why] == r1.drops[why] - r0.drops[why],
                      "drops/%s: %llu over the socket, %llu in process",
                      mc_drop_reason_name((mc_drop_reason)why),
                      (unsigned long long)(b1.drops[why] - b0.drops[why]),
                      (unsigned long long)(r1.drops[why] - r0.drops[why]));
    ck_assert_uint_eq(b1.messages_received - b0.messages_received,
                      r1.messages_received - r0.messages_received);
    ck_assert_uint_eq(p.rb.bad_content + refp.rb.bad_content, 0);
    close(fd);
    /* the real channel still works afterwards */
    send_stream(p.ab, 10, 1000, 40);
    ck_assert(wait_received(&p, &p.rb, 1010, 10));
    ck_assert_uint_eq(p.rb.bad_content, 0);
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    mc_nub_free(ref);
    pair_close(&p);
}
END_TEST

/* ---- external channels: lost packets ride as piggybacks ---- */
static void external_accept(mc_nub_config *cfg, int which)
{
    (void)which;
    cfg->accept_traits = MC_CHANNEL_EXTERNAL;
    cfg->min_resend_delay_us = 10 * MC_US_PER_MS;
}

START_TEST(external_channel_piggybacks)
{
    pair p;
    pair_open(&p, external_accept);
    mc_channel *ext = mc_nub_channel(p.a, mc_nub_address(p.b), MC_CHANNEL_EXTERNAL);
    ck_assert_ptr_eq(ext, p.ab); /* already open: same channel */
    mc_nub_free(p.a);
    /* reopen a as a nub whose first channel to b is external */
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.iface = &test_iface;
    cfg.handler_ctx = &p;
    cfg.rehearsal_seed = 99;
    cfg.min_resend_delay_us = 10 * MC_US_PER_MS;
    ck_assert_int_eq(mc_nub_new(p.base, &cfg, &p.a), MC_OK);
    ext = mc_nub_channel(p.a, mc_nub_address(p.b), MC_CHANNEL_EXTERNAL);
    ck_assert_uint_eq(mc_channel_get_traits(ext), MC_CHANNEL_EXTERNAL);
    mc_rehearsal r = {0};
    r.loss = 0.3;
    mc_nub_set_rehearsal(p.a, &r);
    /* b's acks are lost for a while, so unacked packets age and ride along with the small
     * bundles a keeps sending, like a client tick */
    mc_rehearsal rb = {0};
    rb.loss = 1.0;
    mc_nub_set_rehearsal(p.b, &rb);
    for (uint32_t i = 0; i < 200; i++) {
        send_stream(ext, i, 1, 40);
        pump_for(p.base, 0.004);
    }
    rb.loss = 0;
    mc_nub_set_rehearsal(p.b, &rb);
    for (uint32_t i = 200; i < 400; i++) {
        send_stream(ext, i, 1, 40);
        pump_for(p.base, 0.004);
    }
    ck_assert(wait_received(&p, &p.rb, 400, 30));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert_uint_eq(p.rb.bad_content, 0);
    mc_nub_stats st;
    mc_nub_get_stats(p.a, &st);
    ck_assert_uint_gt(st.piggybacks, 0);
    mc_channel_stats cs;
    mc_channel_get_stats(ext, &cs);
    ck_assert_uint_eq(cs.window, MC_WINDOW_EXTERNAL);
    pair_close(&p);
}
END_TEST

START_TEST(unreliable_messages_on_channel)
{
    pair p;
    pair_open(&p, NULL);
    mc_bundle *b = mc_channel_bundle(p.ab);
    uint8_t note[2] = {4, 2};
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(mc_bundle_add_message(b, tdef(T_NOTE), MC_RELIABLE_NO, note, 2), MC_OK);
        ck_assert_int_eq(mc_bundle_add_message(b, tdef(T_NOTE), MC_RELIABLE_PASSENGER, note, 2),
                         MC_OK);
        ck_assert_int_eq(mc_channel_send(p.ab), MC_OK);
    }
    /* the unreliable packets opened the channel at b (CREATE_CHANNEL) and arrived */
    at_least ten = {&p.rb.notes, 10};
    ck_assert(pump_until(p.base, reached, &ten, 5));
    ck_assert_uint_eq(p.rb.notes, 10);
    ck_assert_uint_eq(mc_channel_unacked(p.ab), 0);
    mc_channel_stats cs;
    mc_channel_get_stats(p.ab, &cs);
    ck_assert_uint_eq(cs.next_send_seq, cs.first_send_seq); /* no sequence numbers used */
    /* a regular channel checks resends on send */
    mc_channel_set_irregular(p.ab, false);
    send_stream(p.ab, 0, 100, 40);
    ck_assert(wait_received(&p, &p.rb, 100, 5));
    pair_close(&p);
}
END_TEST

static bool two_channels(void *nub)
{
    mc_nub_stats st;
    mc_nub_get_stats(nub, &st);
    return st.channels == 2;
}

START_TEST(condemned_indexed_channel_is_not_handed_out_again)
{
    pair p;
    pair_open(&p, NULL);
    mc_channel *ic = mc_nub_indexed_channel(p.a, mc_nub_address(p.b), 9, MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(ic);
    send_stream(ic, 0, 10, 40);
    ck_assert(wait_received(&p, &p.rb, 10, 10));
    mc_channel_condemn(ic);
    ck_assert_ptr_null(mc_nub_find_indexed_channel(p.a, 9));
    /* asking for id 9 again gives a live channel, not the condemned one (freed once idle) */
    mc_channel *again = mc_nub_indexed_channel(p.a, mc_nub_address(p.b), 9, MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(again);
    ck_assert_ptr_ne(again, ic);
    ck_assert_uint_eq(mc_channel_version(again), 1);
    /* the condemned one is freed once idle: p.ab and the new one remain */
    ck_assert(pump_until(p.base, two_channels, p.a, 5));
    send_stream(again, 10, 10, 40);
    ck_assert(wait_received(&p, &p.rb, 20, 10));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert_uint_eq(mc_channel_version(mc_nub_find_indexed_channel(p.b, 9)), 1);
    pair_close(&p);
}
END_TEST

static Suite *api_suite(void)
{
    Suite *s = suite_create("mercury_api");
    TCase *tc = tcase_create("api");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, bad_interfaces_and_addresses_refused);
    tcase_add_test(tc, request_reply_on_channel);
    tcase_add_test(tc, request_timeout);
    tcase_add_test(tc, request_off_channel_once_off);
    tcase_add_test(tc, requests_spanning_packets);
    tcase_add_test(tc, lengths_each_field_size);
    tcase_add_test(tc, bundle_errors_roll_back);
    tcase_add_test(tc, off_channel_unreliable_and_once_off);
    tcase_add_test(tc, channel_dies_of_inactivity);
    tcase_add_test(tc, condemned_channel_finishes_sending);
    tcase_add_test(tc, peer_restart_replaces_channel);
    tcase_add_test(tc, accepting_peer_restart_replaces_channel);
    tcase_add_test(tc, dead_handler_reopening_the_restarted_peer);
    tcase_add_test(tc, simultaneous_open_is_not_a_restart);
    tcase_add_test(tc, overflow_bound_kills_channel);
    tcase_add_test(tc, watchers_publish_and_rehearse);
    tcase_add_test(tc, bad_packets_dropped_by_reason);
    tcase_add_test(tc, hostile_traffic_over_socket);
    tcase_add_test(tc, off_channel_fragment_expires);
    tcase_add_test(tc, external_channel_piggybacks);
    tcase_add_test(tc, unreliable_messages_on_channel);
    tcase_add_test(tc, condemned_indexed_channel_is_not_handed_out_again);
    tcase_add_test(tc, a_closed_channel_is_replaced_by_a_new_one);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(api_suite)
