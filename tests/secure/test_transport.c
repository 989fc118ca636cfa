/* Mercury over the secure layer, end to end on real loopback sockets: a client transport
 * completes the handshake with a server transport, then a Mercury channel carries thousands
 * of ordered messages each way through them (every datagram sealed and opened); a wrong
 * session key is rejected with its status; a server that never answers ends the handshake
 * as expired; a dropped client's packets are no longer delivered. */
#include "check_main.h"

#include <sodium.h>
#include <string.h>

#include "harness.h"
#include "secure/transport.h"

static const uint8_t KEY[32] = {42, 1, 2, 3};

static int lookup(void *ctx, uint64_t id, uint8_t key[32])
{
    (void)ctx;
    if (id != 7)
        return -1;
    memcpy(key, KEY, 32);
    return 0;
}

typedef struct {
    int handshakes, status, reject;
    int connected, gone;
} events;

static void on_handshake(void *ctx, int status, uint8_t reject)
{
    events *e = ctx;
    e->handshakes++;
    e->status = status;
    e->reject = reject;
}

static int on_connected(void *ctx, mc_secure_endpoint *ep)
{
    events *e = ctx;
    e->connected++;
    return ep->session_id == 7 ? 0 : -1;
}

static void on_gone(void *ctx, mc_secure_endpoint *ep)
{
    (void)ep;
    ((events *)ctx)->gone++;
}

static bool handshook(void *ctx) { return ((events *)ctx)->handshakes > 0; }

static mc_secure_transport_config server_cfg(mc_nub *nub, events *e)
{
    mc_secure_transport_config c = {.bind = "127.0.0.1:0", .nub = nub, .ctx = e,
                                    .lookup = lookup, .on_connected = on_connected,
                                    .on_gone = on_gone};
    c.limits = (mc_secure_endpoints_config){.max_clients = 8, .idle_timeout_ms = 30000,
                                            .max_packets_per_s = 100000,
                                            .max_bytes_per_s = 100e6};
    return c;
}

START_TEST(mercury_channels_run_encrypted_both_ways)
{
    pair p;
    pair_open(&p, NULL);
    events se = {0}, ce = {0};
    char err[256], addr[MC_ADDRESS_STRLEN];
    mc_secure_transport_config scfg = server_cfg(p.b, &se);
    mc_secure_transport *srv = mc_secure_transport_server(p.base, &scfg, err, sizeof err);
    ck_assert_msg(srv != NULL, "%s", err);
    mc_address_format(mc_secure_transport_address(srv), addr, sizeof addr);
    mc_secure_transport_config ccfg = {.bind = "127.0.0.1:0", .nub = p.a, .ctx = &ce,
                                       .on_handshake = on_handshake, .resend_ms = 100};
    mc_secure_transport *cli =
        mc_secure_transport_client(p.base, &ccfg, addr, 7, KEY, err, sizeof err);
    ck_assert_msg(cli != NULL, "%s", err);
    ck_assert(pump_until(p.base, handshook, &ce, 10));
    ck_assert_int_eq(ce.status, MC_SECURE_OK);
    ck_assert(mc_secure_transport_connected(cli));
    ck_assert_int_eq(se.connected, 1);

    /* a channel from the client's nub to the server's transport address */
    mc_channel *up = mc_nub_channel(p.a, mc_secure_transport_address(srv), MC_CHANNEL_EXTERNAL);
    ck_assert_ptr_nonnull(up);
    send_stream(up, 0, 2000, 300);
    ck_assert(wait_received(&p, &p.rb, 2000, 60));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert_uint_eq(p.rb.bad_content, 0);
    /* and back on the channel the server's nub accepted, to the client's transport */
    mc_channel *down = mc_nub_find_channel(p.b, mc_secure_transport_address(cli));
    ck_assert_ptr_nonnull(down);
    send_stream(down, 0, 2000, 700);
    ck_assert(wait_received(&p, &p.ra, 2000, 60));
    ck_assert_uint_eq(p.ra.bad_content, 0);
    /* full packets, sealed, still fit 1472 bytes: the nubs' packets are limited */
    ck_assert_uint_eq(mc_nub_max_packet(p.a), MC_PACKET_MAX_SIZE - MC_SECURE_DATA_OVERHEAD);

    mc_secure_transport_stats ss, cs;
    mc_secure_transport_get_stats(srv, &ss);
    mc_secure_transport_get_stats(cli, &cs);
    ck_assert_uint_le(ss.largest_out, MC_PACKET_MAX_SIZE);
    ck_assert_uint_le(cs.largest_out, MC_PACKET_MAX_SIZE);
    ck_assert_uint_gt(ss.largest_out, MC_PACKET_MAX_SIZE - 100); /* they were full */
    ck_assert_uint_ge(ss.data_in, 100);
    ck_assert_uint_ge(ss.data_out, 100);
    ck_assert_uint_ge(cs.data_in, 100);
    ck_assert_uint_eq(ss.auth_failures + cs.auth_failures, 0);
    /* the nubs' own sockets carried nothing: everything went through the transports */
    mc_nub_stats nb;
    mc_nub_get_stats(p.b, &nb);
    ck_assert_uint_eq(nb.packets_received, ss.data_in);

    /* a dropped client: what it sends is not delivered any more */
    uint64_t before = p.rb.received;
    mc_secure_transport_drop(srv, mc_secure_transport_address(cli));
    send_stream(up, 2000, 10, 300);
    pump_for(p.base, 0.5);
    ck_assert_uint_eq(p.rb.received, before);
    mc_secure_transport_get_stats(srv, &ss);
    ck_assert_uint_gt(ss.no_endpoint, 0);

    mc_secure_transport_free(cli);
    mc_secure_transport_free(srv);
    ck_assert_uint_eq(mc_nub_max_packet(p.a), MC_PACKET_MAX_SIZE); /* the nub's own again */
    pair_close(&p);
}
END_TEST

START_TEST(a_wrong_key_is_rejected_and_silence_expires)
{
    pair p;
    pair_open(&p, NULL);
    events se = {0}, ce = {0};
    char err[256], addr[MC_ADDRESS_STRLEN];
    mc_secure_transport_config scfg = server_cfg(p.b, &se);
    mc_secure_transport *srv = mc_secure_transport_server(p.base, &scfg, err, sizeof err);
    mc_address_format(mc_secure_transport_address(srv), addr, sizeof addr);
    uint8_t wrong[32];
    memcpy(wrong, KEY, 32);
    wrong[0] ^= 1;
    mc_secure_transport_config ccfg = {.nub = p.a, .ctx = &ce, .on_handshake = on_handshake,
                                       .resend_ms = 100};
    mc_secure_transport *cli =
        mc_secure_transport_client(p.base, &ccfg, addr, 7, wrong, err, sizeof err);
    ck_assert(pump_until(p.base, handshook, &ce, 10));
    ck_assert_int_eq(ce.status, MC_SECURE_REJECTED);
    ck_assert_int_eq(ce.reject, -MC_SECURE_BAD_PROOF);
    ck_assert(!mc_secure_transport_connected(cli));
    ck_assert_int_eq(se.connected, 0);
    mc_secure_transport_free(cli);
    mc_secure_transport_free(srv);

    /* nobody at that address any more: the handshake expires */
    events e2 = {0};
    ccfg.ctx = &e2;
    ccfg.timeout_ms = 500;
    cli = mc_secure_transport_client(p.base, &ccfg, addr, 7, KEY, err, sizeof err);
    ck_assert_ptr_nonnull(cli);
    ck_assert(pump_until(p.base, handshook, &e2, 10));
    ck_assert_int_eq(e2.status, MC_SECURE_EXPIRED);
    mc_secure_transport_free(cli);
    /* bad configurations */
    ccfg.nub = NULL;
    ck_assert_ptr_null(mc_secure_transport_client(p.base, &ccfg, addr, 7, KEY, err, sizeof err));
    ccfg.nub = p.a;
    ck_assert_ptr_null(mc_secure_transport_client(p.base, &ccfg, "nowhere", 7, KEY, err,
                                                  sizeof err));
    scfg.lookup = NULL;
    ck_assert_ptr_null(mc_secure_transport_server(p.base, &scfg, err, sizeof err));
    pair_close(&p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("secure_transport");
    TCase *tc = tcase_create("transport");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, mercury_channels_run_encrypted_both_ways);
    tcase_add_test(tc, a_wrong_key_is_rejected_and_silence_expires);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
