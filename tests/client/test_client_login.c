/* The client library logs in over a real UDP socket: against a loginapp made of the real
 * secure/login server functions (in this process, on its own socket), it gets the baseapp
 * and session on the right password and the loginapp's verdict otherwise, resends what was
 * lost, ignores forged answers, and gives up with "timed out" when nobody answers. */
#include "check_main.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "mcclient/login.h"

typedef struct {
    int fd;
    uint16_t port;
    uint8_t pk[32], sk[32];
    mc_secure_secret secret;
    int drop_hellos, drop_logins;   /* lose the first ones */
    int hellos, logins, forged;     /* seen */
    bool send_forged_first;         /* answer a LOGIN with a reply boxed by another key first */
    uint8_t session_key[32];
} fake_loginapp;

static uint64_t now_ms(void) { return mc_clock_now_us() / 1000; }

static void fake_start(fake_loginapp *f)
{
    memset(f, 0, sizeof *f);
    f->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(f->fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t l = sizeof a;
    getsockname(f->fd, (struct sockaddr *)&a, &l);
    f->port = ntohs(a.sin_port);
    ck_assert_int_eq(mc_login_keypair(f->pk, f->sk), 0);
    ck_assert_int_eq(mc_secure_secret_init(&f->secret), 0);
    randombytes_buf(f->session_key, 32);
}

/* Answer whatever arrived, like a loginapp whose only account is alice / "right". */
static void fake_serve(fake_loginapp *f)
{
    uint8_t buf[2048], out[MC_LOGIN_SIZE];
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    ssize_t n;
    while ((n = recvfrom(f->fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl)) > 0) {
        mc_secure_peer p = {ntohl(from.sin_addr.s_addr), ntohs(from.sin_port)};
        if (buf[0] == MC_SECURE_HELLO) {
            if (f->hellos++ < f->drop_hellos)
                continue;
            if (mc_secure_server_hello(&f->secret, p, now_ms(), buf, (size_t)n, out) ==
                MC_SECURE_OK)
                sendto(f->fd, out, MC_SECURE_CHALLENGE_SIZE, 0, (struct sockaddr *)&from, fl);
        } else if (buf[0] == MC_SECURE_LOGIN) {
            if (f->logins++ < f->drop_logins)
                continue;
            mc_login_request req;
            int rc = mc_login_server_open(&f->secret, p, now_ms(), f->sk, buf, (size_t)n, &req);
            if (rc != MC_SECURE_OK && rc != MC_SECURE_AUTH)
                continue;
            mc_login_result res = {.status = MC_LOGIN_MALFORMED};
            if (rc == MC_SECURE_OK) {
                if (strcmp(req.cred.name, "alice"))
                    res.status = MC_LOGIN_NO_SUCH_USER;
                else if (req.cred.password_len != 5 || memcmp(req.cred.password, "right", 5))
                    res.status = MC_LOGIN_BAD_PASSWORD;
                else if (req.cred.digest[0] != 0xd1)
                    res.status = MC_LOGIN_BAD_DIGEST;
                else
                    res = (mc_login_result){.status = MC_LOGIN_OK, .baseapp_ip = 0x7f000001,
                                            .baseapp_port = 4444, .session_id = 77};
                memcpy(res.session_key, f->session_key, 32);
            }
            if (f->send_forged_first && !f->forged++) {
                /* boxed with a key agreed by another key pair: a forgery */
                uint8_t opk[32], osk[32];
                mc_login_keypair(opk, osk);
                mc_login_request forged = req;
                mc_login_server_unbox(osk, buf, (size_t)n, &forged);
                mc_login_server_reply(&forged, &res, out);
                mc_login_request_clear(&forged);
                sendto(f->fd, out, MC_LOGIN_REPLY_SIZE, 0, (struct sockaddr *)&from, fl);
            }
            mc_login_server_reply(&req, &res, out);
            sendto(f->fd, out, MC_LOGIN_REPLY_SIZE, 0, (struct sockaddr *)&from, fl);
            mc_login_request_clear(&req);
        }
        fl = sizeof from;
    }
}

/* Drive a login to its end (bounded by its own timeout plus a margin). */
static int drive(fake_loginapp *f, mc_login_attempt *a)
{
    uint64_t limit = now_ms() + 20000;
    int st;
    while ((st = mc_login_tick(a, now_ms())) == MC_LOGIN_PENDING && now_ms() < limit) {
        struct pollfd p[2] = {{.fd = mc_login_fd(a), .events = POLLIN},
                              {.fd = f ? f->fd : -1, .events = POLLIN}};
        uint64_t next = mc_login_next_ms(a), t = now_ms();
        poll(p, 2, next > t ? (int)(next - t) : 0);
        if (f)
            fake_serve(f);
    }
    return st;
}

static mc_login_config config(const fake_loginapp *f, char *addr, size_t n)
{
    snprintf(addr, n, "127.0.0.1:%u", (unsigned)f->port);
    mc_login_config c = {.loginapp = addr};
    memcpy(c.loginapp_pk, f->pk, 32);
    c.digest[0] = 0xd1;
    c.resend_ms = 100;
    c.timeout_ms = 5000;
    return c;
}

START_TEST(logs_in_and_hears_every_verdict)
{
    fake_loginapp f;
    fake_start(&f);
    char addr[32], err[256];
    mc_login_config cfg = config(&f, addr, sizeof addr);
    mc_login_attempt *a = mc_login_start(&cfg, "alice", "right", 0, now_ms(), err, sizeof err);
    ck_assert_msg(a != NULL, "%s", err);
    ck_assert_int_eq(drive(&f, a), MC_LOGIN_OK);
    const mc_login_result *r = mc_login_result_of(a);
    ck_assert_uint_eq(r->baseapp_ip, 0x7f000001);
    ck_assert_uint_eq(r->baseapp_port, 4444);
    ck_assert(r->session_id == 77);
    ck_assert_mem_eq(r->session_key, f.session_key, 32);
    ck_assert_int_eq(mc_login_fd(a), -1); /* closed once final */
    ck_assert_int_eq(mc_login_tick(a, now_ms()), MC_LOGIN_OK); /* stays final */
    mc_login_free(a);

    struct {
        const char *name, *pw;
        uint8_t digest0;
        int want;
    } cases[] = {
        {"alice", "wrong", 0xd1, MC_LOGIN_BAD_PASSWORD},
        {"bob", "right", 0xd1, MC_LOGIN_NO_SUCH_USER},
        {"alice", "right", 0x00, MC_LOGIN_BAD_DIGEST},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfg.digest[0] = cases[i].digest0;
        a = mc_login_start(&cfg, cases[i].name, cases[i].pw, 0, now_ms(), err, sizeof err);
        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(drive(&f, a), cases[i].want);
        mc_login_free(a);
    }
    close(f.fd);
}
END_TEST

START_TEST(resends_what_was_lost_and_ignores_forgeries)
{
    fake_loginapp f;
    fake_start(&f);
    f.drop_hellos = 2;
    f.drop_logins = 2;
    f.send_forged_first = true;
    char addr[32], err[256];
    mc_login_config cfg = config(&f, addr, sizeof addr);
    mc_login_attempt *a = mc_login_start(&cfg, "alice", "right", MC_LOGIN_FLAG_TAKEOVER,
                                         now_ms(), err, sizeof err);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(drive(&f, a), MC_LOGIN_OK);
    ck_assert_int_ge(f.hellos, 3);
    ck_assert_int_ge(f.logins, 3);
    uint32_t sent, received, ignored;
    mc_login_counts(a, &sent, &received, &ignored);
    ck_assert_uint_ge(sent, 6);
    ck_assert_uint_ge(ignored, 1); /* the forged reply */
    ck_assert_mem_eq(mc_login_result_of(a)->session_key, f.session_key, 32);
    mc_login_free(a);
    close(f.fd);
}
END_TEST

START_TEST(gives_up_when_nobody_answers_and_refuses_bad_input)
{
    fake_loginapp f;
    fake_start(&f);
    char addr[32], err[256];
    mc_login_config cfg = config(&f, addr, sizeof addr);
    close(f.fd); /* nobody there: refused datagrams, then silence */
    cfg.timeout_ms = 600;
    uint64_t t0 = now_ms();
    mc_login_attempt *a = mc_login_start(&cfg, "alice", "right", 0, t0, err, sizeof err);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(drive(NULL, a), MC_LOGIN_TIMED_OUT);
    ck_assert_uint_ge(now_ms() - t0, 600);
    ck_assert_str_eq(mc_login_status_name(mc_login_result_of(a)->status), "timed out");
    mc_login_free(a);
    /* what cannot even start */
    cfg.loginapp = "localhost";
    ck_assert_ptr_null(mc_login_start(&cfg, "a", "b", 0, 0, err, sizeof err));
    ck_assert_msg(strstr(err, "address"), "%s", err);
    cfg.loginapp = "127.0.0.1:0";
    ck_assert_ptr_null(mc_login_start(&cfg, "a", "b", 0, 0, err, sizeof err));
    cfg.loginapp = addr;
    ck_assert_ptr_null(mc_login_start(&cfg, "", "b", 0, 0, err, sizeof err));
    char longname[80];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ck_assert_ptr_null(mc_login_start(&cfg, longname, "b", 0, 0, err, sizeof err));
    ck_assert_ptr_null(mc_login_start(&cfg, "a", "b", 0x40, 0, err, sizeof err));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("client_login");
    TCase *tc = tcase_create("login");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, logs_in_and_hears_every_verdict);
    tcase_add_test(tc, resends_what_was_lost_and_ignores_forgeries);
    tcase_add_test(tc, gives_up_when_nobody_answers_and_refuses_bad_input);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
