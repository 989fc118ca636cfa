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
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 1200, l.pk, l.sk, pkt, sizeof pkt,
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
    ck_assert_int_eq(mc_login_server_reply(l.sk, &req, &res, reply), 0);
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
    ck_assert_int_eq(mc_login_server_reply(l.sk, &req, &no, reply), 0);
    ck_assert_int_eq(mc_login_client_reply(&c, l.pk, reply, sizeof reply, &got), MC_SECURE_OK);
    ck_assert_int_eq(got.status, MC_LOGIN_BAD_PASSWORD);
    ck_assert(got.session_id == 0);
    ck_assert_str_eq(mc_login_status_name(got.status), "bad password");
    /* a reply by another key, for another attempt, or changed: refused */
    loginapp other;
    loginapp_init(&other);
    ck_assert_int_eq(mc_login_server_reply(other.sk, &req, &res, reply), 0);
    ck_assert_int_eq(mc_login_client_reply(&c, l.pk, reply, sizeof reply, &got), MC_SECURE_AUTH);
    ck_assert_int_eq(mc_login_server_reply(l.sk, &req, &res, reply), 0);
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
    ck_assert_int_eq(mc_login_server_open(&l.secret, moved, 0, l.pk, l.sk, pkt, sizeof pkt, &req),
                     MC_SECURE_BAD_COOKIE);
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, MC_SECURE_COOKIE_MS + 1, l.pk, l.sk, pkt,
                                          sizeof pkt, &req),
                     MC_SECURE_EXPIRED);
    loginapp other;
    loginapp_init(&other);
    ck_assert_int_eq(mc_login_server_open(&other.secret, ADDR, 0, other.pk, other.sk, pkt,
                                          sizeof pkt, &req),
                     MC_SECURE_BAD_COOKIE);
    /* sealed to another loginapp's key, or changed inside: the address is proven, so it is
     * answered "malformed" by the caller */
    challenged(&c, &l, 0);
    ck_assert_int_eq(mc_login_client_request(&c, &cr, other.pk, bad), MC_SECURE_OK);
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.pk, l.sk, bad, sizeof bad, &req),
                     MC_SECURE_AUTH);
    ck_assert_int_eq(mc_login_client_request(&c, &cr, l.pk, pkt), MC_SECURE_OK);
    memcpy(bad, pkt, sizeof bad);
    bad[120] ^= 1;
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.pk, l.sk, bad, sizeof bad, &req),
                     MC_SECURE_AUTH);
    /* the wrong size, type, version, session field, sealed length or padding: dropped */
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.pk, l.sk, pkt, 511, &req),
                     MC_SECURE_MALFORMED);
    size_t at[] = {0, 1, 45, 90, 511};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        memcpy(bad, pkt, sizeof bad);
        bad[at[i]] ^= 0x40;
        ck_assert_msg(mc_login_server_open(&l.secret, ADDR, 0, l.pk, l.sk, bad, sizeof bad,
                                           &req) == MC_SECURE_MALFORMED,
                      "byte %zu", at[i]);
    }
    /* and the genuine one opens */
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.pk, l.sk, pkt, sizeof pkt, &req),
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
    ck_assert_int_eq(mc_login_server_open(&l.secret, ADDR, 0, l.pk, l.sk, pkt, sizeof pkt, &req),
                     MC_SECURE_OK);
    ck_assert_uint_eq(strlen(req.cred.name), MC_LOGIN_NAME_MAX);
    ck_assert_uint_eq(req.cred.password_len, MC_LOGIN_PASSWORD_MAX);
    mc_login_request_clear(&req);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("login");
    TCase *tc = tcase_create("login");
    tcase_add_test(tc, a_login_reaches_the_loginapp_and_its_answer_the_client);
    tcase_add_test(tc, bad_logins_are_dropped_or_refused);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
