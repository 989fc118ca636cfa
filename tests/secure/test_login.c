/* The login exchange: credentials sealed to the loginapp reach only it, from a proven
 * address, intact; its reply reaches only that client and only the loginapp can have made
 * it; every malformed, forged or misdirected packet is refused with the right verdict. */
#include "check_main.h"

#include <sodium.h>
#include <string.h>

#include "secure/login.h"

static const mc_secure_peer ADDR = {0x0a000002u, 50000};

typedef struct {
    uint8_t pk[32], sk[32];
    mc_secure_secret secret;
} loginapp;

static void loginapp_init(loginapp *l)
{
    ck_assert_int_eq(mc_login_keypair(l->pk, l->sk), 0);
    ck_assert_int_eq(mc_secure_secret_init(&l->secret), 0);
}

/* A client that got its cookie from l at now. */
static void challenged(mc_secure_client *c, const loginapp *l, uint64_t now)
{
    uint8_t zero[32] = {0}, hello[256], chal[MC_SECURE_CHALLENGE_SIZE];
    mc_secure_keys none;
    ck_assert_int_eq(mc_secure_client_init(c, 0, zero), 0);
    mc_secure_client_packet(c, hello);
    ck_assert_int_eq(mc_secure_server_hello(&l->secret, ADDR, now, hello, 256, chal),
                     MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_client_receive(c, chal, sizeof chal, &none), MC_SECURE_OK);
}

static mc_login_credentials creds(const char *name, const char *pw)
{
    mc_login_credentials c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    c.password_len = strlen(pw);
    memcpy(c.password, pw, c.password_len);
    for (int i = 0; i < 32; i++)
        c.digest[i] = (uint8_t)(i * 7);
    return c;
}

START_TEST(a_login_reaches_the_loginapp_and_its_answer_the_client)
{
    loginapp l;
    loginapp_init(&l);
    mc_secure_client c;
    challenged(&c, &l, 1000);
    mc_login_credentials cr = creds("alice", "correct horse");
    cr.flags = MC_LOGIN_FLAG_TAKEOVER;
    uint8_t pkt[MC_LOGIN_SIZE];
    ck_assert_int_eq(mc_login_client_request(&c, &cr, l.pk, pkt), MC_SECURE_OK);
    ck_assert(memmem(pkt, sizeof pkt, "correct horse", 13) == NULL); /* sealed */
    ck_assert(memmem(pkt, sizeof pkt, "alice", 5) == NULL);
    mc_login_request req;
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 1200, l.sk, pkt, sizeof pkt,
                                          &req), MC_SECURE_OK);
    ck_assert_str_eq(req.cred.name, "alice");
    ck_assert_uint_eq(req.cred.password_len, 13);
    ck_assert_mem_eq(req.cred.password, "correct horse", 13);
    ck_assert_mem_eq(req.cred.digest, cr.digest, 32);
    ck_assert_uint_eq(req.cred.flags, MC_LOGIN_FLAG_TAKEOVER);

    mc_login_result res = {.status = MC_LOGIN_OK, .baseapp_ip = 0x0a000003u,
                           .baseapp_port = 21021, .session_id = 0x0102030405060708ull};
    randombytes_buf(res.session_key, sizeof res.session_key);
    uint8_t reply[MC_LOGIN_REPLY_SIZE];
    ck_assert_uint_lt(MC_LOGIN_REPLY_SIZE, MC_LOGIN_SIZE); /* never amplifies */
    ck_assert_int_eq(mc_login_server_reply(&req, &res, reply), 0);
    ck_assert(memmem(reply, sizeof reply, res.session_key, 32) == NULL);
    mc_login_result got;
    ck_assert_int_eq(mc_login_client_reply(&c, l.pk, reply, sizeof reply, &got), MC_SECURE_OK);
    ck_assert_int_eq(got.status, MC_LOGIN_OK);
    ck_assert_uint_eq(got.baseapp_ip, 0x0a000003u);
    ck_assert_uint_eq(got.baseapp_port, 21021);
    ck_assert(got.session_id == 0x0102030405060708ull);
    ck_assert_mem_eq(got.session_key, res.session_key, 32);

    /* a refusal is authenticated too, and carries nothing else */
    mc_login_result no = {.status = MC_LOGIN_BAD_PASSWORD, .session_id = 99};
    ck_assert_int_eq(mc_login_server_reply(&req, &no, reply), 0);
    ck_assert_int_eq(mc_login_client_reply(&c, l.pk, reply, sizeof reply, &got), MC_SECURE_OK);
    ck_assert_int_eq(got.status, MC_LOGIN_BAD_PASSWORD);
    ck_assert(got.session_id == 0);
    ck_assert_str_eq(mc_login_status_name(got.status), "bad password");
    /* a reply by another key, for another attempt, or changed: refused */
    loginapp other;
    loginapp_init(&other);
    mc_login_request forged = req;
    ck_assert_int_eq(mc_login_server_unbox(other.sk, pkt, sizeof pkt, &forged), MC_SECURE_AUTH);
    ck_assert_int_eq(mc_login_server_reply(&forged, &res, reply), 0);
    ck_assert_int_eq(mc_login_client_reply(&c, l.pk, reply, sizeof reply, &got), MC_SECURE_AUTH);
    mc_login_request_clear(&forged);
    ck_assert_int_eq(mc_login_server_reply(&forged, &res, reply), -1); /* no box key */
    ck_assert_int_eq(mc_login_server_reply(&req, &res, reply), 0);
    for (size_t i = 9; i < sizeof reply; i += 5) {
        uint8_t r2[MC_LOGIN_REPLY_SIZE];
        memcpy(r2, reply, sizeof r2);
        r2[i] ^= 4;
        ck_assert_int_eq(mc_login_client_reply(&c, l.pk, r2, sizeof r2, &got), MC_SECURE_AUTH);
    }
    reply[2] ^= 1;
    ck_assert_int_eq(mc_login_client_reply(&c, l.pk, reply, sizeof reply, &got),
                     MC_SECURE_UNEXPECTED);
    ck_assert_int_eq(mc_login_client_reply(&c, l.pk, reply, sizeof reply - 1, &got),
                     MC_SECURE_MALFORMED);
    mc_login_request_clear(&req);
    mc_secure_client_clear(&c);
}
END_TEST

START_TEST(bad_logins_are_dropped_or_refused)
{
    loginapp l;
    loginapp_init(&l);
    mc_secure_client c;
    challenged(&c, &l, 0);
    mc_login_credentials cr = creds("bob", "pw");
    uint8_t pkt[MC_LOGIN_SIZE], bad[MC_LOGIN_SIZE];
    ck_assert_int_eq(mc_login_client_request(&c, &cr, l.pk, pkt), MC_SECURE_OK);
    mc_login_request req;
    /* from another address, expired, or to another loginapp's cookie: dropped */
    mc_secure_peer moved = {ADDR.ip + 1, ADDR.port};
    ck_assert_int_eq(mc_login_server_open(&l.secret, moved, 0, l.sk, pkt, sizeof pkt, &req),
                     MC_SECURE_BAD_COOKIE);
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, MC_SECURE_COOKIE_MS + 1, l.sk, pkt,
                                          sizeof pkt, &req),
                     MC_SECURE_EXPIRED);
    loginapp other;
    loginapp_init(&other);
    ck_assert_int_eq(mc_login_server_open(&other.secret, ADDR, 0, other.sk, pkt,
                                          sizeof pkt, &req),
                     MC_SECURE_BAD_COOKIE);
    /* boxed to another loginapp's key, or changed inside: the address is proven, so it is
     * answered "malformed" by the caller (a reply can be boxed) */
    challenged(&c, &l, 0);
    ck_assert_int_eq(mc_login_client_request(&c, &cr, other.pk, bad), MC_SECURE_OK);
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.sk, bad, sizeof bad, &req),
                     MC_SECURE_AUTH);
    ck_assert(req.has_box_key);
    ck_assert_int_eq(mc_login_client_request(&c, &cr, l.pk, pkt), MC_SECURE_OK);
    memcpy(bad, pkt, sizeof bad);
    bad[120] ^= 1;
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.sk, bad, sizeof bad, &req),
                     MC_SECURE_AUTH);
    /* the wrong size, type, version, session field, sealed length or padding: dropped */
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.sk, pkt, 511, &req),
                     MC_SECURE_MALFORMED);
    size_t at[] = {0, 1, 45, 90, 511};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        memcpy(bad, pkt, sizeof bad);
        bad[at[i]] ^= 0x40;
        ck_assert_msg(mc_login_server_open(&l.secret, ADDR, 0, l.sk, bad, sizeof bad,
                                           &req) == MC_SECURE_MALFORMED,
                      "byte %zu", at[i]);
    }
    /* and the genuine one opens */
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.sk, pkt, sizeof pkt, &req),
                     MC_SECURE_OK);
    ck_assert_str_eq(req.cred.name, "bob");
    /* what a client refuses to send */
    mc_login_credentials e = creds("", "pw");
    ck_assert_int_eq(mc_login_client_request(&c, &e, l.pk, pkt), MC_SECURE_MALFORMED);
    e = creds("x", "pw");
    e.password_len = MC_LOGIN_PASSWORD_MAX + 1;
    ck_assert_int_eq(mc_login_client_request(&c, &e, l.pk, pkt), MC_SECURE_MALFORMED);
    e = creds("x", "pw");
    e.flags = 0x80;
    ck_assert_int_eq(mc_login_client_request(&c, &e, l.pk, pkt), MC_SECURE_MALFORMED);
    mc_secure_client fresh;
    uint8_t zero[32] = {0};
    ck_assert_int_eq(mc_secure_client_init(&fresh, 0, zero), 0); /* no cookie yet */
    ck_assert_int_eq(mc_login_client_request(&fresh, &cr, l.pk, pkt), MC_SECURE_MALFORMED);
    /* the longest name and password fit the 512 bytes */
    mc_login_credentials big;
    memset(&big, 0, sizeof big);
    memset(big.name, 'n', MC_LOGIN_NAME_MAX);
    memset(big.password, 'p', MC_LOGIN_PASSWORD_MAX);
    big.password_len = MC_LOGIN_PASSWORD_MAX;
    ck_assert_int_eq(mc_login_client_request(&c, &big, l.pk, pkt), MC_SECURE_OK);
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.sk, pkt, sizeof pkt, &req),
                     MC_SECURE_OK);
    ck_assert_uint_eq(strlen(req.cred.name), MC_LOGIN_NAME_MAX);
    ck_assert_uint_eq(req.cred.password_len, MC_LOGIN_PASSWORD_MAX);
    mc_login_request_clear(&req);
}
END_TEST

/* The box nonce of a LOGIN, as docs/PROTOCOL.md "Logging in" gives it. */
static void doc_box_nonce(const uint8_t *pkt, uint8_t n[24])
{
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 24);
    crypto_generichash_update(&st, (const uint8_t *)"mc-login\0", 9);
    crypto_generichash_update(&st, pkt, 92);
    crypto_generichash_final(&st, n, 24);
}

/* A LOGIN made by hand from docs/PROTOCOL.md's bytes (plain: name length, name, password
 * length, password, digest, flags) by client c. */
static void doc_login(const mc_secure_client *c, const uint8_t lpk[32], const uint8_t *name,
                      size_t nl, uint8_t out[MC_LOGIN_SIZE])
{
    uint8_t plain[128], n[24];
    size_t k = 0;
    plain[k++] = (uint8_t)nl;
    memcpy(plain + k, name, nl);
    k += nl;
    plain[k++] = 0;
    plain[k++] = 2;
    memcpy(plain + k, "pw", 2);
    k += 2;
    memset(plain + k, 0x33, 32);
    k += 32;
    plain[k++] = 0;
    memset(out, 0, MC_LOGIN_SIZE);
    out[0] = 0xB1;
    out[1] = 1;
    memcpy(out + 2, c->nonce, 8);
    memcpy(out + 10, c->pk, 32);
    memcpy(out + 50, c->cookie, 40);
    out[90] = (uint8_t)((k + 16) >> 8);
    out[91] = (uint8_t)(k + 16);
    doc_box_nonce(out, n);
    ck_assert_int_eq(crypto_box_easy(out + 92, plain, k, n, lpk, c->sk), 0);
}

/* The bytes are exactly what the protocol document says; a name with a control character
 * is malformed inside (answered so), whoever made the packet. */
START_TEST(the_login_bytes_are_the_documented_ones)
{
    loginapp l;
    loginapp_init(&l);
    mc_secure_client c;
    challenged(&c, &l, 0);
    uint8_t pkt[MC_LOGIN_SIZE], mine[MC_LOGIN_SIZE];
    doc_login(&c, l.pk, (const uint8_t *)"bob", 3, pkt);
    mc_login_request req;
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.sk, pkt, sizeof pkt, &req),
                     MC_SECURE_OK);
    ck_assert_str_eq(req.cred.name, "bob");
    mc_login_credentials cr = creds("bob", "pw");
    memset(cr.digest, 0x33, 32);
    ck_assert_int_eq(mc_login_client_request(&c, &cr, l.pk, mine), MC_SECURE_OK);
    ck_assert_mem_eq(mine, pkt, 92); /* the header; the box is the same plaintext boxed */
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.sk, mine, sizeof mine, &req),
                     MC_SECURE_OK);
    static const char *const bad[] = {"a\nb", "tab\there", "del\x7f", "\x1b[31mred", "\x01"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        doc_login(&c, l.pk, (const uint8_t *)bad[i], strlen(bad[i]), pkt);
        ck_assert_msg(mc_login_server_open(&l.secret, ADDR, 0, l.sk, pkt, sizeof pkt, &req) ==
                          MC_SECURE_AUTH,
                      "name %zu", i);
        ck_assert(req.has_box_key); /* answered "malformed" */
        ck_assert_uint_eq(req.cred.name[0], 0);
        mc_login_credentials e = creds(bad[i], "pw");
        ck_assert_int_eq(mc_login_client_request(&c, &e, l.pk, mine), MC_SECURE_MALFORMED);
        ck_assert(!mc_login_name_ok(bad[i], strlen(bad[i])));
    }
    doc_login(&c, l.pk, (const uint8_t *)"a\0b", 3, pkt);
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.sk, pkt, sizeof pkt, &req),
                     MC_SECURE_AUTH);
    ck_assert(mc_login_name_ok("Zoë the 2nd", strlen("Zoë the 2nd")));
    mc_login_request_clear(&req);
    mc_secure_client_clear(&c);
}
END_TEST

static const mc_secure_peer ATTACKER = {0x0a000009u, 40000};

/* Issue 19, critical 1 (a): the victim's credential bytes (90..511) spliced into the
 * attacker's own LOGIN, with the attacker's own valid cookie, nonce and key, from the
 * attacker's address: the box does not open there. */
START_TEST(a_spliced_login_is_refused)
{
    loginapp l;
    loginapp_init(&l);
    mc_secure_client victim, attacker;
    challenged(&victim, &l, 1000);
    mc_login_credentials vc = creds("victim", "victim's password");
    uint8_t vpkt[MC_LOGIN_SIZE], apkt[MC_LOGIN_SIZE];
    ck_assert_int_eq(mc_login_client_request(&victim, &vc, l.pk, vpkt), MC_SECURE_OK);
    /* the attacker's own attempt, from its own address */
    uint8_t zero[32] = {0}, hello[256], chal[MC_SECURE_CHALLENGE_SIZE];
    ck_assert_int_eq(mc_secure_client_init(&attacker, 0, zero), 0);
    mc_secure_client_packet(&attacker, hello);
    ck_assert_int_eq(mc_secure_server_hello(&l.secret, ATTACKER, 2000, hello, 256, chal),
                     MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_client_receive(&attacker, chal, sizeof chal, NULL), MC_SECURE_OK);
    mc_login_credentials ac = creds("attacker", "x");
    ck_assert_int_eq(mc_login_client_request(&attacker, &ac, l.pk, apkt), MC_SECURE_OK);
    mc_login_request req;
    ck_assert_int_eq(mc_login_server_open(&l.secret, ATTACKER, 2000, l.sk, apkt, sizeof apkt,
                                          &req), MC_SECURE_OK); /* its own LOGIN is fine */
    memcpy(apkt + 90, vpkt + 90, MC_LOGIN_SIZE - 90);
    int rc = mc_login_server_open(&l.secret, ATTACKER, 2000, l.sk, apkt, sizeof apkt, &req);
    ck_assert_msg(rc == MC_SECURE_AUTH, "spliced LOGIN: %s, name '%s'", mc_secure_status_name(rc),
                  req.cred.name);
    ck_assert_uint_eq(req.cred.name[0], 0);
    /* the same splice with the victim's key in the header (so the key agreement matches),
     * under a cookie the attacker got for that key and nonce from its own address */
    mc_secure_client fake;
    ck_assert_int_eq(mc_secure_client_init(&fake, 0, zero), 0);
    memcpy(fake.nonce, attacker.nonce, 8);
    memcpy(fake.pk, victim.pk, 32);
    mc_secure_client_packet(&fake, hello);
    ck_assert_int_eq(mc_secure_server_hello(&l.secret, ATTACKER, 2000, hello, 256, chal),
                     MC_SECURE_OK);
    memcpy(apkt, vpkt, MC_LOGIN_SIZE);
    memcpy(apkt + 2, attacker.nonce, 8);
    memcpy(apkt + 50, chal + 9, 40);
    rc = mc_login_server_open(&l.secret, ATTACKER, 2000, l.sk, apkt, sizeof apkt, &req);
    ck_assert_msg(rc == MC_SECURE_AUTH, "spliced LOGIN with the victim's key: %s",
                  mc_secure_status_name(rc));
    mc_login_request_clear(&req);
    mc_secure_client_clear(&victim);
    mc_secure_client_clear(&attacker);
    mc_secure_client_clear(&fake);
}
END_TEST

/* Issue 19, critical 1 (b): the victim's whole LOGIN replayed later under a fresh cookie,
 * got by a HELLO with the victim's nonce and key (from the attacker's address, or even from
 * the victim's own): the box does not open under another cookie. */
START_TEST(a_replayed_login_under_a_fresh_cookie_is_refused)
{
    loginapp l;
    loginapp_init(&l);
    mc_secure_client victim;
    challenged(&victim, &l, 1000);
    uint8_t vhello[256];
    ck_assert_int_eq(mc_secure_client_init(&victim, 0, (uint8_t[32]){0}), 0);
    mc_secure_client_packet(&victim, vhello); /* the HELLO an eavesdropper saw */
    uint8_t chal[MC_SECURE_CHALLENGE_SIZE];
    ck_assert_int_eq(mc_secure_server_hello(&l.secret, ADDR, 1000, vhello, 256, chal),
                     MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_client_receive(&victim, chal, sizeof chal, NULL), MC_SECURE_OK);
    mc_login_credentials vc = creds("victim", "victim's password");
    uint8_t vpkt[MC_LOGIN_SIZE], replay[MC_LOGIN_SIZE];
    ck_assert_int_eq(mc_login_client_request(&victim, &vc, l.pk, vpkt), MC_SECURE_OK);
    mc_login_request req;
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 1000, l.sk, vpkt, sizeof vpkt, &req),
                     MC_SECURE_OK);
    const mc_secure_peer from[2] = {ATTACKER, ADDR};
    for (int i = 0; i < 2; i++) {
        uint64_t later = 1000 + 60000 * (uint64_t)(i + 1);
        mc_secure_secret_rotate(&l.secret);
        mc_secure_secret_rotate(&l.secret);
        ck_assert_int_eq(mc_login_server_open(&l.secret, from[i], later, l.sk, vpkt, sizeof vpkt,
                                              &req), MC_SECURE_BAD_COOKIE); /* as captured */
        ck_assert_int_eq(mc_secure_server_hello(&l.secret, from[i], later, vhello, 256, chal),
                         MC_SECURE_OK);
        memcpy(replay, vpkt, sizeof replay);
        memcpy(replay + 50, chal + 9, 40); /* the fresh cookie: the header checks out */
        ck_assert_int_eq(mc_login_server_check(&l.secret, from[i], later, replay, sizeof replay,
                                               &req), MC_SECURE_OK);
        int rc = mc_login_server_open(&l.secret, from[i], later, l.sk, replay, sizeof replay, &req);
        ck_assert_msg(rc == MC_SECURE_AUTH, "replay %d: %s, name '%s'", i,
                      mc_secure_status_name(rc), req.cred.name);
        ck_assert_uint_eq(req.cred.name[0], 0);
    }
    mc_login_request_clear(&req);
    mc_secure_client_clear(&victim);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("login");
    TCase *tc = tcase_create("login");
    tcase_add_test(tc, a_login_reaches_the_loginapp_and_its_answer_the_client);
    tcase_add_test(tc, bad_logins_are_dropped_or_refused);
    tcase_add_test(tc, the_login_bytes_are_the_documented_ones);
    tcase_add_test(tc, a_spliced_login_is_refused);
    tcase_add_test(tc, a_replayed_login_under_a_fresh_cookie_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
