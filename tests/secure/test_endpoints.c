/* External endpoints: a CONNECT repeated by the same attempt finds its endpoint (same ACCEPT,
 * no second exchange); a new attempt from the address replaces the old one; the table is
 * bounded; each client is limited in packets and bytes a second, and only its own
 * authenticated packets spend that or keep it alive; silent ones expire. */
#include "check_main.h"

#include <sodium.h>
#include <string.h>

#include "secure/endpoints.h"

static const uint8_t KEY[32] = {9, 9, 9};

static int lookup(void *ctx, uint64_t id, uint8_t key[32])
{
    (void)ctx;
    (void)id;
    memcpy(key, KEY, 32);
    return 0;
}

/* A full handshake from peer: the client's keys, the server's result, the CONNECT sent. */
static void handshake(const mc_secure_secret *s, mc_secure_peer peer, mc_secure_keys *ck,
                      mc_secure_accepted *acc, uint8_t conn[256])
{
    mc_secure_client c;
    uint8_t hello[256], chal[MC_SECURE_CHALLENGE_SIZE];
    mc_secure_keys none;
    ck_assert_int_eq(mc_secure_client_init(&c, 5, KEY), 0);
    mc_secure_client_packet(&c, hello);
    ck_assert_int_eq(mc_secure_server_hello(s, peer, 0, hello, 256, chal), MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_client_receive(&c, chal, sizeof chal, &none), MC_SECURE_OK);
    mc_secure_client_packet(&c, conn);
    ck_assert_int_eq(mc_secure_server_connect(s, peer, 0, conn, 256, lookup, NULL, acc),
                     MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_client_receive(&c, acc->reply, acc->reply_len, ck), MC_SECURE_OK);
    mc_secure_client_clear(&c);
}

static int replaced_calls;
static void on_replaced(void *ctx, mc_secure_endpoint *old)
{
    (void)ctx;
    (void)old;
    replaced_calls++;
}

START_TEST(repeats_replacements_and_the_bound)
{
    mc_secure_secret s;
    mc_secure_secret_init(&s);
    mc_secure_endpoints_config cfg = {.max_clients = 2, .idle_timeout_ms = 1000,
                                      .max_packets_per_s = 100, .max_bytes_per_s = 100000};
    mc_secure_endpoints *eps = mc_secure_endpoints_new(&cfg);
    ck_assert_ptr_nonnull(eps);
    mc_secure_peer p1 = {0x7f000001, 1000}, p2 = {0x7f000001, 1001}, p3 = {0x7f000002, 1000};
    mc_secure_keys ck;
    mc_secure_accepted acc;
    uint8_t conn[256];
    handshake(&s, p1, &ck, &acc, conn);
    mc_secure_endpoint *ep, *again;
    ck_assert(!mc_secure_endpoints_repeat(eps, p1, conn, 256, &again));
    ck_assert_int_eq(mc_secure_endpoints_add(eps, p1, &acc, 0, on_replaced, NULL, &ep),
                     MC_SECURE_EP_ADDED);
    /* the same CONNECT again: found before any exchange, with the ACCEPT it was sent */
    ck_assert(mc_secure_endpoints_repeat(eps, p1, conn, 256, &again));
    ck_assert_ptr_eq(again, ep);
    ck_assert_mem_eq(again->accept, acc.reply, MC_SECURE_ACCEPT_SIZE);
    ck_assert(!mc_secure_endpoints_repeat(eps, p2, conn, 256, &again)); /* another address */
    ck_assert_int_eq(mc_secure_endpoints_add(eps, p1, &acc, 0, on_replaced, NULL, &again),
                     MC_SECURE_EP_REPEATED);
    /* a new attempt from the same address replaces the endpoint */
    mc_secure_keys ck2;
    mc_secure_accepted acc2;
    handshake(&s, p1, &ck2, &acc2, conn);
    ck_assert_int_eq(mc_secure_endpoints_add(eps, p1, &acc2, 0, on_replaced, NULL, &ep),
                     MC_SECURE_EP_ADDED);
    ck_assert_int_eq(replaced_calls, 1);
    ck_assert_uint_eq(mc_secure_endpoints_count(eps), 1);
    ck_assert_ptr_eq(mc_secure_endpoints_find(eps, p1), ep);
    /* the bound */
    handshake(&s, p2, &ck, &acc, conn);
    ck_assert_int_eq(mc_secure_endpoints_add(eps, p2, &acc, 0, NULL, NULL, &ep),
                     MC_SECURE_EP_ADDED);
    handshake(&s, p3, &ck, &acc, conn);
    ck_assert_int_eq(mc_secure_endpoints_add(eps, p3, &acc, 0, NULL, NULL, &ep),
                     MC_SECURE_EP_FULL);
    ck_assert_ptr_null(mc_secure_endpoints_find(eps, p3));
    mc_secure_endpoints_remove(eps, mc_secure_endpoints_find(eps, p2));
    ck_assert_int_eq(mc_secure_endpoints_add(eps, p3, &acc, 0, NULL, NULL, &ep),
                     MC_SECURE_EP_ADDED);
    /* bad configurations */
    mc_secure_endpoints_config bad = cfg;
    bad.max_bytes_per_s = 1000;
    ck_assert_ptr_null(mc_secure_endpoints_new(&bad));
    bad = cfg;
    bad.max_clients = 0;
    ck_assert_ptr_null(mc_secure_endpoints_new(&bad));
    mc_secure_endpoints_free(eps);
}
END_TEST

static void on_gone(void *ctx, mc_secure_endpoint *ep)
{
    (void)ep;
    (*(size_t *)ctx)++;
}

START_TEST(limits_count_only_the_clients_own_packets_and_silence_expires)
{
    mc_secure_secret s;
    mc_secure_secret_init(&s);
    mc_secure_endpoints_config cfg = {.max_clients = 4, .idle_timeout_ms = 5000,
                                      .max_packets_per_s = 10, .max_bytes_per_s = 3000};
    mc_secure_endpoints *eps = mc_secure_endpoints_new(&cfg);
    mc_secure_peer p = {0x0a000001, 2000};
    mc_secure_keys ck;
    mc_secure_accepted acc;
    uint8_t conn[256];
    handshake(&s, p, &ck, &acc, conn);
    mc_secure_endpoint *ep;
    ck_assert_int_eq(mc_secure_endpoints_add(eps, p, &acc, 0, NULL, NULL, &ep),
                     MC_SECURE_EP_ADDED);
    mc_secure_session client;
    mc_secure_session_init(&client, &ck, false);
    uint8_t msg[100] = {1}, pkt[200], plain[200];
    size_t n, m;
    /* forgeries in the client's name spend nothing and keep nothing alive */
    uint8_t junk[125];
    memset(junk, 0, sizeof junk);
    junk[0] = MC_SECURE_DATA;
    junk[8] = 1;
    for (int i = 0; i < 50; i++)
        ck_assert_int_eq(mc_secure_endpoints_open(eps, ep, junk, sizeof junk, 10, plain,
                                                  sizeof plain, &m),
                         MC_SECURE_OPEN_AUTH);
    ck_assert_uint_eq(ep->last_heard_ms, 0);
    /* ten genuine packets a second, then refused until the allowance refills */
    for (int i = 0; i < 10; i++) {
        mc_secure_seal(&client, msg, sizeof msg, pkt, sizeof pkt, &n);
        ck_assert_int_eq(mc_secure_endpoints_open(eps, ep, pkt, n, 10, plain, sizeof plain, &m),
                         MC_SECURE_OK);
    }
    mc_secure_seal(&client, msg, sizeof msg, pkt, sizeof pkt, &n);
    ck_assert_int_eq(mc_secure_endpoints_open(eps, ep, pkt, n, 10, plain, sizeof plain, &m),
                     MC_SECURE_EP_RATE_LIMITED);
    ck_assert_uint_eq(ep->rate_limited, 1);
    ck_assert_int_eq(mc_secure_endpoints_open(eps, ep, pkt, n, 110, plain, sizeof plain, &m),
                     MC_SECURE_OK); /* 100 ms later: one packet's worth */
    ck_assert_uint_eq(ep->last_heard_ms, 110);
    /* bytes: 3000 a second; 1,200-byte packets pass twice, then wait */
    uint8_t big[1200] = {2}, bigpkt[1300];
    uint64_t t = 100000;
    int passed = 0;
    for (int i = 0; i < 5; i++) {
        mc_secure_seal(&client, big, sizeof big, bigpkt, sizeof bigpkt, &n);
        uint8_t out[1300];
        if (mc_secure_endpoints_open(eps, ep, bigpkt, n, t, out, sizeof out, &m) == MC_SECURE_OK)
            passed++;
    }
    ck_assert_int_eq(passed, 2);
    /* silence: expires after the idle timeout, the owner told */
    size_t told = 0;
    ck_assert_uint_eq(mc_secure_endpoints_expire(eps, t + 4999, NULL, NULL), 0);
    ck_assert_uint_eq(mc_secure_endpoints_expire(eps, t + 5000, on_gone, &told), 1);
    ck_assert_uint_eq(told, 1);
    ck_assert_uint_eq(mc_secure_endpoints_count(eps), 0);
    mc_secure_session_clear(&client);
    mc_secure_endpoints_free(eps);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("endpoints");
    TCase *tc = tcase_create("endpoints");
    tcase_add_test(tc, repeats_replacements_and_the_bound);
    tcase_add_test(tc, limits_count_only_the_clients_own_packets_and_silence_expires);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
