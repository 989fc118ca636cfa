/* Resumption tickets and the RESUME exchange (secure/resume.h): a ticket opens only with
 * the cluster's ticket key and says what it was sealed with; a RESUME is accepted only from a
 * proven address, with a proof by the ticket's own resume key; its reply reaches only the
 * holder of that key; every changed, forged, foreign or misdirected packet gets the right
 * verdict. */
#include "check_main.h"

#include <sodium.h>
#include <string.h>

#include "secure/resume.h"

static const mc_secure_peer ADDR = {0x0a000002u, 50000};

static mc_resume_ticket_info info_of(int32_t id, uint32_t serial, const char *name)
{
    mc_resume_ticket_info i;
    memset(&i, 0, sizeof i);
    i.entity_id = id;
    i.serial = serial;
    i.expires_ms = 1700000000000ull;
    randombytes_buf(i.resume_key, sizeof i.resume_key);
    snprintf(i.name, sizeof i.name, "%s", name);
    return i;
}

static void challenged(mc_secure_client *c, const mc_secure_secret *s, uint64_t now)
{
    uint8_t zero[32] = {0}, hello[256], chal[MC_SECURE_CHALLENGE_SIZE];
    mc_secure_keys none;
    ck_assert_int_eq(mc_secure_client_init(c, 0, zero), 0);
    mc_secure_client_packet(c, hello);
    ck_assert_int_eq(mc_secure_server_hello(s, ADDR, now, hello, 256, chal), MC_SECURE_OK);
    ck_assert_int_eq(mc_secure_client_receive(c, chal, sizeof chal, &none), MC_SECURE_OK);
}

START_TEST(a_ticket_opens_with_the_cluster_key_only)
{
    uint8_t secret[32], key[32], other[32];
    randombytes_buf(secret, sizeof secret);
    ck_assert_int_eq(mc_resume_ticket_key(secret, key), 0);
    ck_assert(memcmp(key, secret, 32) != 0); /* a key of its own, never the secret */
    randombytes_buf(other, sizeof other);
    mc_resume_ticket_info in = info_of(4097, 77, "alice"), out;
    uint8_t t[MC_RESUME_TICKET_SIZE];
    ck_assert_int_eq(mc_resume_ticket_seal(key, &in, t), MC_SECURE_OK);
    ck_assert(memmem(t, sizeof t, "alice", 5) == NULL);              /* sealed */
    ck_assert(memmem(t, sizeof t, in.resume_key, 32) == NULL);
    ck_assert_int_eq(mc_resume_ticket_open(key, t, &out), MC_SECURE_OK);
    ck_assert_int_eq(out.entity_id, 4097);
    ck_assert_uint_eq(out.serial, 77);
    ck_assert_uint_eq(out.expires_ms, in.expires_ms);
    ck_assert_mem_eq(out.resume_key, in.resume_key, 32);
    ck_assert_str_eq(out.name, "alice");
    ck_assert_int_eq(mc_resume_ticket_open(other, t, &out), MC_SECURE_AUTH);
    for (size_t i = 0; i < sizeof t; i += 13) {
        uint8_t changed[MC_RESUME_TICKET_SIZE];
        memcpy(changed, t, sizeof t);
        changed[i] ^= 0x40;
        ck_assert_int_eq(mc_resume_ticket_open(key, changed, &out), MC_SECURE_AUTH);
    }
    /* nothing that is not a ticket is sealed */
    mc_resume_ticket_info bad = info_of(0, 1, "a");
    ck_assert_int_eq(mc_resume_ticket_seal(key, &bad, t), MC_SECURE_MALFORMED);
    bad = info_of(1, 0, "a");
    ck_assert_int_eq(mc_resume_ticket_seal(key, &bad, t), MC_SECURE_MALFORMED);
    bad = info_of(1, 1, "a\nb");
    ck_assert_int_eq(mc_resume_ticket_seal(key, &bad, t), MC_SECURE_MALFORMED);
}
END_TEST

START_TEST(a_resume_needs_its_ticket_key_and_answers_only_its_holder)
{
    uint8_t key[32];
    randombytes_buf(key, sizeof key);
    mc_secure_secret s;
    ck_assert_int_eq(mc_secure_secret_init(&s), 0);
    mc_resume_ticket_info in = info_of(12, 3, "bob");
    uint8_t t[MC_RESUME_TICKET_SIZE];
    ck_assert_int_eq(mc_resume_ticket_seal(key, &in, t), MC_SECURE_OK);
    mc_secure_client c;
    challenged(&c, &s, 1000);
    uint8_t pkt[MC_RESUME_SIZE];
    ck_assert_int_eq(mc_resume_client_request(&c, t, in.resume_key, pkt), MC_SECURE_OK);
    mc_resume_request req;
    ck_assert_int_eq(mc_resume_server_check(&s, ADDR, 1100, pkt, sizeof pkt, &req), MC_SECURE_OK);
    ck_assert_int_eq(mc_resume_server_open(key, pkt, sizeof pkt, &req), MC_SECURE_OK);
    ck_assert(req.opened);
    ck_assert_int_eq(req.ticket.entity_id, 12);
    ck_assert_str_eq(req.ticket.name, "bob");

    /* from another address, or past the cookie: dropped before the ticket is looked at */
    mc_secure_peer elsewhere = {0x0a000009u, 50000};
    mc_resume_request r2;
    ck_assert_int_eq(mc_resume_server_check(&s, elsewhere, 1100, pkt, sizeof pkt, &r2),
                     MC_SECURE_BAD_COOKIE);
    ck_assert_int_eq(mc_resume_server_check(&s, ADDR, 1000 + MC_SECURE_COOKIE_MS + 1, pkt,
                                            sizeof pkt, &r2),
                     MC_SECURE_EXPIRED);
    ck_assert_int_eq(mc_resume_server_check(&s, ADDR, 1100, pkt, sizeof pkt - 1, &r2),
                     MC_SECURE_MALFORMED);
    uint8_t padded[MC_RESUME_SIZE];
    memcpy(padded, pkt, sizeof pkt);
    padded[MC_RESUME_SIZE - 1] = 1;
    ck_assert_int_eq(mc_resume_server_check(&s, ADDR, 1100, padded, sizeof padded, &r2),
                     MC_SECURE_MALFORMED);

    /* the real ticket with another key's proof: a copy without its key is worth nothing */
    uint8_t thief[32], stolen[MC_RESUME_SIZE];
    randombytes_buf(thief, sizeof thief);
    ck_assert_int_eq(mc_resume_client_request(&c, t, thief, stolen), MC_SECURE_OK);
    ck_assert_int_eq(mc_resume_server_check(&s, ADDR, 1100, stolen, sizeof stolen, &r2),
                     MC_SECURE_OK);
    ck_assert_int_eq(mc_resume_server_open(key, stolen, sizeof stolen, &r2), MC_SECURE_BAD_PROOF);
    ck_assert(!r2.opened);
    /* a ticket by another key (another cluster, or made up) */
    uint8_t strange[32], forged_t[MC_RESUME_TICKET_SIZE], forged[MC_RESUME_SIZE];
    randombytes_buf(strange, sizeof strange);
    ck_assert_int_eq(mc_resume_ticket_seal(strange, &in, forged_t), MC_SECURE_OK);
    ck_assert_int_eq(mc_resume_client_request(&c, forged_t, in.resume_key, forged), MC_SECURE_OK);
    ck_assert_int_eq(mc_resume_server_open(key, forged, sizeof forged, &r2), MC_SECURE_AUTH);

    /* the answer: only the holder of the resume key reads it, and only for this attempt */
    mc_login_result res = {.status = MC_LOGIN_OK, .baseapp_ip = 0x0a000003u,
                           .baseapp_port = 21031, .session_id = 99};
    randombytes_buf(res.session_key, sizeof res.session_key);
    uint8_t reply[MC_RESUME_REPLY_SIZE];
    ck_assert_uint_lt(MC_RESUME_REPLY_SIZE, MC_RESUME_SIZE); /* never amplifies */
    ck_assert_int_eq(mc_resume_server_reply(&req, &res, reply), 0);
    ck_assert(memmem(reply, sizeof reply, res.session_key, 32) == NULL);
    mc_login_result got;
    ck_assert_int_eq(mc_resume_client_reply(&c, thief, reply, sizeof reply, &got),
                     MC_SECURE_AUTH);
    ck_assert_int_eq(mc_resume_client_reply(&c, in.resume_key, reply, sizeof reply, &got),
                     MC_SECURE_OK);
    ck_assert_int_eq(got.status, MC_LOGIN_OK);
    ck_assert_uint_eq(got.baseapp_ip, 0x0a000003u);
    ck_assert_uint_eq(got.baseapp_port, 21031);
    ck_assert_uint_eq(got.session_id, 99);
    ck_assert_mem_eq(got.session_key, res.session_key, 32);
    mc_secure_client c2;
    challenged(&c2, &s, 1000);
    ck_assert_int_eq(mc_resume_client_reply(&c2, in.resume_key, reply, sizeof reply, &got),
                     MC_SECURE_UNEXPECTED);
    /* a refusal carries its status only */
    mc_login_result no = {.status = MC_LOGIN_TICKET_USED};
    ck_assert_int_eq(mc_resume_server_reply(&req, &no, reply), 0);
    ck_assert_int_eq(mc_resume_client_reply(&c, in.resume_key, reply, sizeof reply, &got),
                     MC_SECURE_OK);
    ck_assert_int_eq(got.status, MC_LOGIN_TICKET_USED);
    ck_assert_str_eq(mc_login_status_name(got.status), "ticket used");
    ck_assert_int_eq(got.session_id, 0);
    /* nothing is answered to a request that did not open */
    ck_assert_int_eq(mc_resume_server_reply(&r2, &res, reply), -1);
    mc_resume_request_clear(&req);
    mc_secure_client_clear(&c);
    mc_secure_client_clear(&c2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("resume");
    TCase *tc = tcase_create("resume");
    tcase_add_test(tc, a_ticket_opens_with_the_cluster_key_only);
    tcase_add_test(tc, a_resume_needs_its_ticket_key_and_answers_only_its_holder);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
