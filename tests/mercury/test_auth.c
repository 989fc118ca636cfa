/* Authenticated nubs (mercury/auth.h): two nubs sharing the cluster secret talk as usual,
 * including messages that fill whole packets and span many; a nub without the secret, or
 * with another one, gets nothing processed and nothing back; a tampered datagram is dropped
 * before parsing. Real sockets on 127.0.0.1. Also the secret file's checks. */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "harness.h"
#include "mercury/auth.h"

static const uint8_t secret_one[MC_AUTH_SECRET_BYTES] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const uint8_t secret_two[MC_AUTH_SECRET_BYTES] = {9, 8, 7, 6, 5, 4, 3, 2, 1};

static void both_secret_one(mc_nub_config *cfg, int which)
{
    (void)which;
    cfg->authenticate = true;
    memcpy(cfg->auth_secret, secret_one, sizeof secret_one);
}

static void b_only(mc_nub_config *cfg, int which)
{
    if (which == 1)
        both_secret_one(cfg, which);
}

static void different_secrets(mc_nub_config *cfg, int which)
{
    cfg->authenticate = true;
    memcpy(cfg->auth_secret, which ? secret_one : secret_two, MC_AUTH_SECRET_BYTES);
}

static uint64_t drops(mc_nub *nub, mc_drop_reason why)
{
    mc_nub_stats st;
    mc_nub_get_stats(nub, &st);
    return st.drops[why];
}

typedef struct {
    mc_nub *nub;
    uint64_t at_least;
} drop_wait;

static bool bad_auth_reached(void *ctx)
{
    drop_wait *w = ctx;
    return drops(w->nub, MC_DROP_BAD_AUTH) >= w->at_least;
}

START_TEST(shared_secret_delivers_everything)
{
    pair p;
    pair_open(&p, both_secret_one);
    ck_assert_uint_eq(mc_nub_max_packet(p.a), MC_PACKET_MAX_SIZE - MC_AUTH_OVERHEAD);
    /* small messages that fill packets, then messages of 1 to 40 packets each */
    send_stream(p.ab, 0, 2000, 32);
    ck_assert(wait_received(&p, &p.rb, 2000, 30));
    send_stream(p.ab, 2000, 20, 60000);
    ck_assert(wait_received(&p, &p.rb, 2020, 60));
    ck_assert_uint_eq(p.rb.bad_content, 0);
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert_uint_eq(drops(p.b, MC_DROP_BAD_AUTH), 0);
    ck_assert_uint_eq(drops(p.a, MC_DROP_BAD_AUTH), 0);
    /* a request and its reply both ways */
    reply_rec rr = {0};
    uint8_t req[4] = {1, 'a', 'b', 'c'};
    ck_assert_int_eq(mc_channel_request(p.ab, tdef(T_REQ), req, sizeof req, on_reply, &rr,
                                        5 * MC_US_PER_S),
                     MC_OK);
    ck_assert(pump_until(p.base, reply_done, &rr, 10));
    ck_assert_int_eq(rr.status, MC_REPLY_OK);
    pair_close(&p);
}
END_TEST

START_TEST(sender_without_the_secret_gets_nothing)
{
    pair p;
    pair_open(&p, b_only); /* a has no secret, b authenticates */
    send_stream(p.ab, 0, 50, 32);
    reply_rec rr = {0};
    uint8_t req[4] = {1, 'x', 'y', 'z'};
    ck_assert_int_eq(mc_channel_request(p.ab, tdef(T_REQ), req, sizeof req, on_reply, &rr,
                                        2 * MC_US_PER_S),
                     MC_OK);
    drop_wait w = {p.b, 3};
    ck_assert(pump_until(p.base, bad_auth_reached, &w, 20));
    pump_until(p.base, reply_done, &rr, 5);
    ck_assert_uint_eq(p.rb.received, 0);
    ck_assert_uint_eq(p.rb.requests, 0);
    ck_assert_int_ne(rr.status, MC_REPLY_OK); /* timed out: b answered nothing */
    mc_nub_stats st;
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_eq(st.packets_sent, 0); /* not even an ack */
    ck_assert_uint_eq(st.channels, 0);     /* and no channel was made for the stranger */
    pair_close(&p);
}
END_TEST

START_TEST(another_clusters_secret_gets_nothing)
{
    pair p;
    pair_open(&p, different_secrets);
    send_stream(p.ab, 0, 50, 32);
    drop_wait w = {p.b, 2};
    ck_assert(pump_until(p.base, bad_auth_reached, &w, 20));
    pump_for(p.base, 0.3);
    ck_assert_uint_eq(p.rb.received, 0);
    mc_nub_stats st;
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_eq(st.packets_sent, 0);
    pair_close(&p);
}
END_TEST

/* A raw socket sends datagrams at an authenticating nub: forged, truncated, tampered. */
START_TEST(forged_and_tampered_datagrams_are_dropped_before_parsing)
{
    pair p;
    pair_open(&p, both_secret_one);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in to;
    mc_address_to_sockaddr(mc_nub_address(p.b), &to);
    mc_auth auth;
    ck_assert_int_eq(mc_auth_init(&auth, secret_one, false), 0);
    /* a well-formed off-channel packet: flags 0, message T_NOTE (id 6, 2-byte length 3) */
    uint8_t pkt[64] = {0x00, 0x00, T_NOTE, 0x00, 0x03, 'h', 'e', 'y'};
    size_t plen = 8;
    uint8_t dg[64];
    /* 1: no tag at all */
    sendto(fd, pkt, plen, 0, (struct sockaddr *)&to, sizeof to);
    /* 2: shorter than a tag */
    sendto(fd, pkt, 3, 0, (struct sockaddr *)&to, sizeof to);
    /* 3: a valid tag, then one byte of the packet flipped */
    memcpy(dg, pkt, plen);
    mc_auth_seal(&auth, dg, plen, dg + plen);
    dg[6] ^= 0x20;
    sendto(fd, dg, plen + MC_AUTH_OVERHEAD, 0, (struct sockaddr *)&to, sizeof to);
    /* 4: a valid tag with its last byte flipped */
    memcpy(dg, pkt, plen);
    mc_auth_seal(&auth, dg, plen, dg + plen);
    dg[plen + MC_AUTH_OVERHEAD - 1] ^= 1;
    sendto(fd, dg, plen + MC_AUTH_OVERHEAD, 0, (struct sockaddr *)&to, sizeof to);
    drop_wait w = {p.b, 4};
    ck_assert(pump_until(p.base, bad_auth_reached, &w, 10));
    ck_assert_uint_eq(p.rb.notes, 0);
    /* 5: the same packet correctly tagged is taken: the test can fail */
    memcpy(dg, pkt, plen);
    mc_auth_seal(&auth, dg, plen, dg + plen);
    sendto(fd, dg, plen + MC_AUTH_OVERHEAD, 0, (struct sockaddr *)&to, sizeof to);
    for (int i = 0; i < 200 && p.rb.notes == 0; i++)
        pump_for(p.base, 0.05);
    ck_assert_uint_eq(p.rb.notes, 1);
    ck_assert_uint_eq(drops(p.b, MC_DROP_BAD_AUTH), 4);
    mc_auth_clear(&auth);
    close(fd);
    pair_close(&p);
}
END_TEST

/* A nub that tags with ChaCha20-Poly1305 (portable) and one that tags with AES-GCM (where
 * the CPU has it) understand each other both ways. */
static void a_portable(mc_nub_config *cfg, int which)
{
    both_secret_one(cfg, which);
    cfg->auth_portable = which == 0;
}

START_TEST(portable_and_aes_tags_are_both_verified)
{
    pair p;
    pair_open(&p, a_portable);
    send_stream(p.ab, 0, 500, 32);
    ck_assert(wait_received(&p, &p.rb, 500, 30));
    reply_rec rr = {0};
    uint8_t req[4] = {1, 'a', 'b', 'c'};
    ck_assert_int_eq(mc_channel_request(p.ab, tdef(T_REQ), req, sizeof req, on_reply, &rr,
                                        5 * MC_US_PER_S),
                     MC_OK);
    ck_assert(pump_until(p.base, reply_done, &rr, 10));
    ck_assert_int_eq(rr.status, MC_REPLY_OK);
    ck_assert_uint_eq(drops(p.a, MC_DROP_BAD_AUTH) + drops(p.b, MC_DROP_BAD_AUTH), 0);
    pair_close(&p);
}
END_TEST

/* Every datagram gets its own nonce: the same packet sealed twice has two trailers. */
START_TEST(nonces_never_repeat)
{
    mc_auth a;
    ck_assert_int_eq(mc_auth_init(&a, secret_one, false), 0);
    uint8_t pkt[8] = {0}, t1[MC_AUTH_OVERHEAD], t2[MC_AUTH_OVERHEAD];
    mc_auth_seal(&a, pkt, sizeof pkt, t1);
    mc_auth_seal(&a, pkt, sizeof pkt, t2);
    ck_assert(memcmp(t1, t2, MC_AUTH_NONCE_BYTES) != 0);
    ck_assert(memcmp(t1 + MC_AUTH_NONCE_BYTES, t2 + MC_AUTH_NONCE_BYTES, MC_AUTH_TAG_BYTES) != 0);
    uint8_t dg[8 + MC_AUTH_OVERHEAD];
    size_t n = 0;
    memcpy(dg, pkt, 8);
    memcpy(dg + 8, t2, MC_AUTH_OVERHEAD);
    ck_assert(mc_auth_check(&a, dg, sizeof dg, &n));
    ck_assert_uint_eq(n, 8);
    dg[8] ^= 0x01; /* another nonce, the same tag: refused */
    ck_assert(!mc_auth_check(&a, dg, sizeof dg, &n));
    mc_auth_clear(&a);
}
END_TEST

START_TEST(max_packet_stays_below_the_tag)
{
    pair p;
    pair_open(&p, both_secret_one);
    ck_assert_int_eq(mc_nub_set_max_packet(p.a, MC_PACKET_MAX_SIZE), MC_OK);
    ck_assert_uint_eq(mc_nub_max_packet(p.a), MC_PACKET_MAX_SIZE - MC_AUTH_OVERHEAD);
    ck_assert_int_eq(mc_nub_set_max_packet(p.a, 1300), MC_OK);
    ck_assert_uint_eq(mc_nub_max_packet(p.a), 1300);
    pair_close(&p);
}
END_TEST

static void write_file(const char *path, const char *text, mode_t mode)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(fchmod(fd, mode), 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

START_TEST(secret_file_checks)
{
    char dir[] = "/tmp/mc-auth-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/secret", dir);
    uint8_t s[MC_AUTH_SECRET_BYTES];
    char err[256];
    const char *good = "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F\n";
    write_file(path, good, 0600);
    ck_assert_int_eq(mc_auth_load_secret(path, s, err, sizeof err), 0);
    ck_assert_uint_eq(s[0], 0);
    ck_assert_uint_eq(s[31], 0x1f);
    write_file(path, good, 0644);
    ck_assert_int_eq(mc_auth_load_secret(path, s, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "readable or writable by others"));
    write_file(path, "00112233", 0600);
    ck_assert_int_eq(mc_auth_load_secret(path, s, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "64 hexadecimal"));
    write_file(path, "zz0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", 0600);
    ck_assert_int_eq(mc_auth_load_secret(path, s, err, sizeof err), -1);
    unlink(path);
    ck_assert_int_eq(mc_auth_load_secret(path, s, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "cannot open"));
    rmdir(dir);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mercury_auth");
    TCase *tc = tcase_create("auth");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, shared_secret_delivers_everything);
    tcase_add_test(tc, sender_without_the_secret_gets_nothing);
    tcase_add_test(tc, another_clusters_secret_gets_nothing);
    tcase_add_test(tc, forged_and_tampered_datagrams_are_dropped_before_parsing);
    tcase_add_test(tc, max_packet_stays_below_the_tag);
    tcase_add_test(tc, portable_and_aes_tags_are_both_verified);
    tcase_add_test(tc, nonces_never_repeat);
    tcase_add_test(tc, secret_file_checks);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
