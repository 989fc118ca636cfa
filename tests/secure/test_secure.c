/* The secure handshake agrees the same keys on both sides only with the right session key,
 * keeps no state and never answers more bytes than it got before the address is proven,
 * binds its cookie to the address, the client's key and time; sealed packets open once, in
 * any order within the window, and any change to one is refused without touching the
 * session. */
#include "check_main.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "secure/handshake.h"
#include "secure/session.h"

static const uint8_t KEY[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const mc_secure_peer ADDR = {0x7f000001u, 40000};

/* Sessions the server knows: id 42 with KEY. */
static int lookup(void *ctx, uint64_t id, uint8_t key[32])
{
    int *calls = ctx;
    (*calls)++;
    if (id != 42)
        return -1;
    memcpy(key, KEY, 32);
    return 0;
}

/* Run a client to CONNECT against s; the CONNECT packet in out. */
static void to_connect(mc_secure_client *c, const mc_secure_secret *s, uint64_t session,
                       const uint8_t key[32], uint64_t now, uint8_t out[256])
{
    ck_assert_int_eq(mc_secure_client_init(c, session, key), 0);
    uint8_t hello[256], chal[MC_SECURE_CHALLENGE_SIZE];
    mc_secure_keys none;
    ck_assert_uint_eq(mc_secure_client_packet(c, hello), 256);
    ck_assert_int_eq(mc_secure_server_hello(s, ADDR, now, hello, 256, chal), MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_client_receive(c, chal, sizeof chal, &none), MC_SECURE_OK);
    ck_assert_int_eq(c->state, MC_SECURE_CLIENT_CONNECT);
    ck_assert_uint_eq(mc_secure_client_packet(c, out), 256);
}

START_TEST(handshake_agrees_on_keys_and_data_flows_both_ways)
{
    mc_secure_secret s;
    ck_assert_int_eq(mc_secure_secret_init(&s), 0);
    mc_secure_client c;
    uint8_t conn[256];
    to_connect(&c, &s, 42, KEY, 1000, conn);
    int calls = 0;
    mc_secure_accepted acc;
    ck_assert_int_eq(mc_secure_server_connect(&s, ADDR, 1500, conn, 256, lookup, &calls, &acc),
                     MC_SECURE_OK);
    ck_assert_int_eq(calls, 1);
    ck_assert(acc.session_id == 42);
    ck_assert_uint_eq(acc.reply_len, MC_SECURE_ACCEPT_SIZE);
    mc_secure_keys ck;
    ck_assert_int_eq(mc_secure_client_receive(&c, acc.reply, acc.reply_len, &ck), MC_SECURE_OK);
    ck_assert_int_eq(c.state, MC_SECURE_CLIENT_DONE);
    ck_assert_mem_eq(ck.c2s, acc.keys.c2s, 32);
    ck_assert_mem_eq(ck.s2c, acc.keys.s2c, 32);
    ck_assert(memcmp(ck.c2s, ck.s2c, 32) != 0);
    ck_assert_uint_eq(mc_secure_client_packet(&c, conn), 0); /* nothing more to send */

    mc_secure_session cs, ss;
    mc_secure_session_init(&cs, &ck, false);
    mc_secure_session_init(&ss, &acc.keys, true);
    uint8_t pkt[300], plain[300];
    size_t n, m;
    const char *msg = "hello server";
    ck_assert_int_eq(mc_secure_seal(&cs, (const uint8_t *)msg, strlen(msg), pkt, sizeof pkt, &n),
                     MC_SECURE_OK);
    ck_assert_uint_eq(n, strlen(msg) + MC_SECURE_DATA_OVERHEAD);
    ck_assert(memmem(pkt, n, msg, strlen(msg)) == NULL); /* encrypted */
    ck_assert_int_eq(mc_secure_open(&ss, pkt, n, plain, sizeof plain, &m), MC_SECURE_OK);
    ck_assert_uint_eq(m, strlen(msg));
    ck_assert_mem_eq(plain, msg, m);
    /* and back; the client cannot open its own packets (another key each way) */
    ck_assert_int_eq(mc_secure_seal(&ss, (const uint8_t *)"ok", 2, pkt, sizeof pkt, &n),
                     MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_open(&cs, pkt, n, plain, sizeof plain, &m), MC_SECURE_OK);
    ck_assert_mem_eq(plain, "ok", 2);
    ck_assert_int_eq(mc_secure_seal(&cs, (const uint8_t *)"x", 1, pkt, sizeof pkt, &n),
                     MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_open(&cs, pkt, n, plain, sizeof plain, &m), MC_SECURE_OPEN_AUTH);
    /* an empty payload is a packet too */
    ck_assert_int_eq(mc_secure_seal(&cs, NULL, 0, pkt, sizeof pkt, &n), MC_SECURE_OK);
    ck_assert_uint_eq(n, MC_SECURE_DATA_OVERHEAD);
    ck_assert_int_eq(mc_secure_open(&ss, pkt, n, plain, sizeof plain, &m), MC_SECURE_OK);
    ck_assert_uint_eq(m, 0);

    /* another handshake with the same session key gets other keys (ephemeral exchange) */
    mc_secure_client c2;
    to_connect(&c2, &s, 42, KEY, 2000, conn);
    mc_secure_accepted acc2;
    ck_assert_int_eq(mc_secure_server_connect(&s, ADDR, 2000, conn, 256, lookup, &calls, &acc2),
                     MC_SECURE_OK);
    ck_assert(memcmp(acc2.keys.c2s, acc.keys.c2s, 32) != 0);
    mc_secure_client_clear(&c);
    mc_secure_client_clear(&c2);
    mc_secure_session_clear(&cs);
    mc_secure_session_clear(&ss);
}
END_TEST

START_TEST(unproven_sources_get_no_more_than_they_sent_and_bad_packets_nothing)
{
    mc_secure_secret s;
    ck_assert_int_eq(mc_secure_secret_init(&s), 0);
    mc_secure_client c;
    ck_assert_int_eq(mc_secure_client_init(&c, 42, KEY), 0);
    uint8_t hello[256], chal[MC_SECURE_CHALLENGE_SIZE];
    mc_secure_client_packet(&c, hello);
    /* every answer is smaller than the 256 bytes that asked for it */
    ck_assert_uint_lt(MC_SECURE_CHALLENGE_SIZE, MC_SECURE_HELLO_SIZE);
    ck_assert_uint_lt(MC_SECURE_ACCEPT_SIZE, MC_SECURE_HELLO_SIZE);
    ck_assert_uint_lt(MC_SECURE_REJECT_SIZE, MC_SECURE_HELLO_SIZE);
    /* the wrong size, type, version or padding: nothing */
    uint8_t bad[300];
    memcpy(bad, hello, 256);
    memset(bad + 256, 0, sizeof bad - 256);
    ck_assert_int_eq(mc_secure_server_hello(&s, ADDR, 0, bad, 255, chal), MC_SECURE_MALFORMED);
    ck_assert_int_eq(mc_secure_server_hello(&s, ADDR, 0, bad, 257, chal), MC_SECURE_MALFORMED);
    ck_assert_int_eq(mc_secure_server_hello(&s, ADDR, 0, NULL, 0, chal), MC_SECURE_MALFORMED);
    bad[255] = 1;
    ck_assert_int_eq(mc_secure_server_hello(&s, ADDR, 0, bad, 256, chal), MC_SECURE_MALFORMED);
    bad[255] = 0;
    bad[1] = MC_SECURE_VERSION + 1;
    ck_assert_int_eq(mc_secure_server_hello(&s, ADDR, 0, bad, 256, chal), MC_SECURE_MALFORMED);
    bad[1] = MC_SECURE_VERSION;
    bad[0] = MC_SECURE_CONNECT;
    ck_assert_int_eq(mc_secure_server_hello(&s, ADDR, 0, bad, 256, chal), MC_SECURE_MALFORMED);
    /* a HELLO is answered without any state: twice the same answer at the same time */
    uint8_t chal2[MC_SECURE_CHALLENGE_SIZE];
    ck_assert_int_eq(mc_secure_server_hello(&s, ADDR, 7, hello, 256, chal), MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_server_hello(&s, ADDR, 7, hello, 256, chal2), MC_SECURE_OK);
    ck_assert_mem_eq(chal, chal2, sizeof chal);
    /* a CONNECT whose cookie is not this server's, for this address: dropped, no lookup */
    mc_secure_keys none;
    ck_assert_int_eq(mc_secure_client_receive(&c, chal, sizeof chal, &none), MC_SECURE_OK);
    uint8_t conn[256];
    mc_secure_client_packet(&c, conn);
    int calls = 0;
    mc_secure_accepted acc;
    mc_secure_peer other = {ADDR.ip, (uint16_t)(ADDR.port + 1)};
    ck_assert_int_eq(mc_secure_server_connect(&s, other, 7, conn, 256, lookup, &calls, &acc),
                     MC_SECURE_BAD_COOKIE);
    ck_assert_uint_eq(acc.reply_len, 0);
    mc_secure_secret stranger;
    ck_assert_int_eq(mc_secure_secret_init(&stranger), 0);
    ck_assert_int_eq(mc_secure_server_connect(&stranger, ADDR, 7, conn, 256, lookup, &calls, &acc),
                     MC_SECURE_BAD_COOKIE);
    /* the cookie binds the client's key: another key with it is refused */
    uint8_t forged[256];
    memcpy(forged, conn, 256);
    forged[20] ^= 1;
    ck_assert_int_eq(mc_secure_server_connect(&s, ADDR, 7, forged, 256, lookup, &calls, &acc),
                     MC_SECURE_BAD_COOKIE);
    ck_assert_int_eq(calls, 0);
    /* too late: dropped (the client starts again) */
    ck_assert_int_eq(mc_secure_server_connect(&s, ADDR, 7 + MC_SECURE_COOKIE_MS + 1, conn, 256,
                                              lookup, &calls, &acc),
                     MC_SECURE_EXPIRED);
    ck_assert_uint_eq(acc.reply_len, 0);
    /* one rotation of the secret keeps it valid, two do not */
    mc_secure_secret_rotate(&s);
    ck_assert_int_eq(mc_secure_server_connect(&s, ADDR, 8, conn, 256, lookup, &calls, &acc),
                     MC_SECURE_OK);
    mc_secure_secret_rotate(&s);
    ck_assert_int_eq(mc_secure_server_connect(&s, ADDR, 8, conn, 256, lookup, &calls, &acc),
                     MC_SECURE_BAD_COOKIE);
}
END_TEST

START_TEST(a_wrong_session_is_refused_with_a_reason)
{
    mc_secure_secret s;
    ck_assert_int_eq(mc_secure_secret_init(&s), 0);
    int calls = 0;
    mc_secure_accepted acc;
    mc_secure_keys keys;
    uint8_t conn[256];
    /* no such session */
    mc_secure_client c;
    to_connect(&c, &s, 43, KEY, 100, conn);
    ck_assert_int_eq(mc_secure_server_connect(&s, ADDR, 100, conn, 256, lookup, &calls, &acc),
                     MC_SECURE_NO_SESSION);
    ck_assert_uint_eq(acc.reply_len, MC_SECURE_REJECT_SIZE);
    ck_assert_int_eq(mc_secure_client_receive(&c, acc.reply, acc.reply_len, &keys),
                     MC_SECURE_REJECTED);
    ck_assert_int_eq(c.state, MC_SECURE_CLIENT_REFUSED);
    ck_assert_int_eq(c.reject_status, -MC_SECURE_NO_SESSION);
    /* the right session, the wrong key */
    uint8_t wrong[32];
    memcpy(wrong, KEY, 32);
    wrong[31] ^= 0x80;
    to_connect(&c, &s, 42, wrong, 100, conn);
    ck_assert_int_eq(mc_secure_server_connect(&s, ADDR, 100, conn, 256, lookup, &calls, &acc),
                     MC_SECURE_BAD_PROOF);
    ck_assert_int_eq(mc_secure_client_receive(&c, acc.reply, acc.reply_len, &keys),
                     MC_SECURE_REJECTED);
    ck_assert_int_eq(c.reject_status, -MC_SECURE_BAD_PROOF);
    /* the proof covers the session id: a CONNECT moved to another id fails it */
    to_connect(&c, &s, 42, KEY, 100, conn);
    conn[49] ^= 1;
    ck_assert_int_ne(mc_secure_server_connect(&s, ADDR, 100, conn, 256, lookup, &calls, &acc),
                     MC_SECURE_OK);
}
END_TEST

START_TEST(the_client_takes_only_its_own_genuine_answers)
{
    mc_secure_secret s;
    ck_assert_int_eq(mc_secure_secret_init(&s), 0);
    mc_secure_client c;
    uint8_t conn[256];
    to_connect(&c, &s, 42, KEY, 0, conn);
    int calls = 0;
    mc_secure_accepted acc;
    ck_assert_int_eq(mc_secure_server_connect(&s, ADDR, 0, conn, 256, lookup, &calls, &acc),
                     MC_SECURE_OK);
    mc_secure_keys keys;
    uint8_t a[MC_SECURE_ACCEPT_SIZE];
    /* another attempt's nonce, a changed server key or confirmation, a wrong size */
    memcpy(a, acc.reply, sizeof a);
    a[3] ^= 1;
    ck_assert_int_eq(mc_secure_client_receive(&c, a, sizeof a, &keys), MC_SECURE_UNEXPECTED);
    for (size_t at = 9; at < sizeof a; at += 7) {
        memcpy(a, acc.reply, sizeof a);
        a[at] ^= 0x10;
        ck_assert_int_eq(mc_secure_client_receive(&c, a, sizeof a, &keys), MC_SECURE_AUTH);
        ck_assert_int_eq(c.state, MC_SECURE_CLIENT_CONNECT);
    }
    ck_assert_int_eq(mc_secure_client_receive(&c, acc.reply, sizeof a - 1, &keys),
                     MC_SECURE_MALFORMED);
    /* the genuine one still works, once */
    ck_assert_int_eq(mc_secure_client_receive(&c, acc.reply, sizeof a, &keys), MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_client_receive(&c, acc.reply, sizeof a, &keys),
                     MC_SECURE_UNEXPECTED);
}
END_TEST

START_TEST(sealed_packets_open_once_and_any_change_is_refused)
{
    mc_secure_keys k;
    randombytes_buf(&k, sizeof k);
    mc_secure_session tx, rx;
    mc_secure_session_init(&tx, &k, true);
    mc_secure_session_init(&rx, &k, false);
    enum { N = 40 };
    uint8_t pkts[N][64];
    size_t lens[N];
    for (int i = 0; i < N; i++) {
        uint8_t msg[32];
        memset(msg, i, sizeof msg);
        ck_assert_int_eq(mc_secure_seal(&tx, msg, sizeof msg, pkts[i], sizeof pkts[i], &lens[i]),
                         MC_SECURE_OK);
    }
    uint8_t plain[64];
    size_t m;
    /* every single-bit change of packet 5 is refused and changes nothing */
    for (size_t bit = 0; bit < lens[5] * 8; bit++) {
        uint8_t p[64];
        memcpy(p, pkts[5], lens[5]);
        p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int rc = mc_secure_open(&rx, p, lens[5], plain, sizeof plain, &m);
        ck_assert_msg(rc != MC_SECURE_OK, "bit %zu accepted", bit);
    }
    ck_assert_uint_eq(rx.opened, 0);
    ck_assert_uint_gt(rx.auth_failures, 200);
    /* out of order within the window: each once */
    int order[N];
    for (int i = 0; i < N; i++)
        order[i] = (i * 7) % N;
    for (int i = 0; i < N; i++) {
        int k2 = order[i];
        ck_assert_int_eq(mc_secure_open(&rx, pkts[k2], lens[k2], plain, sizeof plain, &m),
                         MC_SECURE_OK);
        ck_assert_uint_eq(plain[0], (uint8_t)k2);
    }
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(mc_secure_open(&rx, pkts[i], lens[i], plain, sizeof plain, &m),
                         MC_SECURE_OPEN_REPLAY);
    ck_assert_uint_eq(rx.replays, N);
    /* too small an output, too short a packet */
    ck_assert_int_eq(mc_secure_seal(&tx, plain, 40, pkts[0], 64, &m), MC_SECURE_OPEN_MALFORMED);
    ck_assert_int_eq(mc_secure_open(&rx, pkts[1], 24, plain, sizeof plain, &m),
                     MC_SECURE_OPEN_MALFORMED);
    /* more than the window later, an old number is refused as too old */
    uint8_t big[64];
    size_t blen;
    tx.next_out = 5000;
    ck_assert_int_eq(mc_secure_seal(&tx, plain, 4, big, sizeof big, &blen), MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_open(&rx, big, blen, plain, sizeof plain, &m), MC_SECURE_OK);
    tx.next_out = 5000 - MC_SECURE_REPLAY_WINDOW;
    ck_assert_int_eq(mc_secure_seal(&tx, plain, 4, big, sizeof big, &blen), MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_open(&rx, big, blen, plain, sizeof plain, &m),
                     MC_SECURE_OPEN_TOO_OLD);
    tx.next_out = 5000 - MC_SECURE_REPLAY_WINDOW + 1;
    ck_assert_int_eq(mc_secure_seal(&tx, plain, 4, big, sizeof big, &blen), MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_open(&rx, big, blen, plain, sizeof plain, &m), MC_SECURE_OK);
    tx.next_out = UINT64_MAX;
    ck_assert_int_eq(mc_secure_seal(&tx, plain, 4, big, sizeof big, &blen),
                     MC_SECURE_SEAL_EXHAUSTED);
}
END_TEST

/* The window against a model (a plain set of accepted numbers) over random arrivals. */
START_TEST(replay_window_matches_a_model)
{
    mc_secure_replay r = {0};
    enum { MAXN = 20000 };
    uint8_t *seen = calloc(MAXN + 1, 1);
    ck_assert_ptr_nonnull(seen);
    uint64_t highest = 0;
    uint32_t st = 99;
    for (int i = 0; i < 100000; i++) {
        st ^= st << 13;
        st ^= st >> 17;
        st ^= st << 5;
        uint64_t n;
        if (st % 10 == 0)
            n = 1 + st % MAXN; /* anywhere */
        else
            n = highest + 3 > (st % 2000) ? highest + 3 - st % 2000 : 1 + st % 7;
        if (n == 0 || n > MAXN)
            continue;
        int want;
        if (n > highest)
            want = MC_SECURE_OK;
        else if (highest - n >= MC_SECURE_REPLAY_WINDOW)
            want = MC_SECURE_OPEN_TOO_OLD;
        else
            want = seen[n] ? MC_SECURE_OPEN_REPLAY : MC_SECURE_OK;
        ck_assert_int_eq(mc_secure_replay_check(&r, n), want);
        if (want == MC_SECURE_OK) {
            mc_secure_replay_mark(&r, n);
            seen[n] = 1;
            if (n > highest)
                highest = n;
        }
    }
    ck_assert(r.highest == highest);
    ck_assert_int_eq(mc_secure_replay_check(&r, 0), MC_SECURE_OPEN_MALFORMED);
    free(seen);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("secure");
    TCase *tc = tcase_create("secure");
    tcase_add_test(tc, handshake_agrees_on_keys_and_data_flows_both_ways);
    tcase_add_test(tc, unproven_sources_get_no_more_than_they_sent_and_bad_packets_nothing);
    tcase_add_test(tc, a_wrong_session_is_refused_with_a_reason);
    tcase_add_test(tc, the_client_takes_only_its_own_genuine_answers);
    tcase_add_test(tc, sealed_packets_open_once_and_any_change_is_refused);
    tcase_add_test(tc, replay_window_matches_a_model);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
