/* The loginapp process end to end (issue 10): a private redis-server, a manager, baseapps
 * with --redis, a cellapp and a loginapp (the example game's defs), clients logging in
 * through the client library (mcclient/login.h) and hand-made packets over real UDP sockets
 * on 127.0.0.1. Every status a client can get is reached and counted in login/status/...;
 * wrong passwords back off; a LOGIN replayed from another address is dropped, one resent
 * from its own address gets the same answer, one sent after its cookie expired is dropped;
 * accounts are auto-created or refused; an online account is refused or taken over by
 * configuration; Redis down answers "server error" and the loginapp carries on once Redis is
 * back. Every process is stopped by the test (and killed by the harness if a check fails). */
#include "common/defs.h"
#include "harness.h"
#include "mercury/mercury.h"
#include "proto/login.h"
#include "mcclient/client.h"
#include "mcclient/login.h"
#include "persist_cluster.h"
#include "redis_harness.h"
#include "secure/login.h"
#include "server/control.h"
#include "test_secret.h"
#include "proto/control.pb-c.h"

#include <arpa/inet.h>
#include <check.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 20000

typedef struct {
    pc_cluster pc;
    rh_redis *redis;
    uint8_t pk[MC_LOGIN_PUBLIC_KEY_BYTES];
    uint8_t digest[MC_LOGIN_DIGEST_BYTES];
    char keydir[700];
    char ext[32];      /* the loginapp's external address */
    pid_t login;
    char log_login[700];
} lc;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static const char *res_dir(void)
{
    static char buf[600];
    snprintf(buf, sizeof buf, "%s/defs", h_source_dir());
    return buf;
}

/* The digest clients built from the example game's defs carry. */
static void load_digest(uint8_t out[MC_LOGIN_DIGEST_BYTES])
{
    char err[256];
    mc_entity_defs *d = mc_defs_load(res_dir(), err, sizeof err);
    ck_assert_msg(d, "defs: %s", err);
    const char *hex = mc_defs_digest_hex(d);
    ck_assert_int_eq(sodium_hex2bin(out, MC_LOGIN_DIGEST_BYTES, hex, strlen(hex), NULL, NULL, NULL),
                     0);
    mc_defs_free(d);
}

/* Start the loginapp with the options given (NULL-ended, at most 16) and wait until it is
 * registered and connected to Redis. */
static void start_loginapp(lc *c, const char *const *opts)
{
    char bin[512], internal[64], external[64], mopt[64], ropt[700], key[800], redis[64],
        pwf[700];
    snprintf(c->ext, sizeof c->ext, "127.0.0.1:%d", h_free_port(false));
    snprintf(internal, sizeof internal, "--internal=127.0.0.1:%d", h_free_port(false));
    snprintf(external, sizeof external, "--external=%s", c->ext);
    snprintf(mopt, sizeof mopt, "--manager=%s", c->pc.manager);
    snprintf(ropt, sizeof ropt, "--res=%s", res_dir());
    snprintf(key, sizeof key, "--loginKey=%s/login.key", c->keydir);
    snprintf(redis, sizeof redis, "--redis=%s", rh_addr(c->redis));
    snprintf(pwf, sizeof pwf, "--redisPasswordFile=%s", rh_password_file(c->redis));
    char *argv[32] = {(char *)h_bin("loginapp", bin, sizeof bin), internal, external, mopt,
                      ropt, key, redis, pwf, "--pwhashCost=dev"};
    int n = 9;
    for (int i = 0; opts && opts[i] && n < 30; i++)
        argv[n++] = (char *)opts[i];
    argv[n] = NULL;
    snprintf(c->log_login, sizeof c->log_login, "%s/loginapp.log", c->pc.dir);
    c->login = h_spawn(argv, c->log_login);
    ck_assert_int_gt(c->login, 0);
    char want[64];
    snprintf(want, sizeof want, "counts/registrations  %d\n", ++c->pc.registrations);
    ck_assert_msg(h_wait_watch(c->pc.manager, "manager", "counts/registrations", want, WAIT_MS),
                  "the loginapp did not register (log %s)", c->log_login);
    ck_assert_msg(h_wait_watch(c->pc.manager, "loginapp01", "login/redis/connected", "true",
                               WAIT_MS),
                  "the loginapp did not reach Redis (log %s)", c->log_login);
}

/* Redis with a password, the cluster (nbase baseapps), the key pair, the loginapp. */
static void lc_start(lc *c, int nbase, const char *const *opts)
{
    memset(c, 0, sizeof *c);
    rh_options ro = {.password = true};
    c->redis = rh_start(&ro);
    ck_assert_msg(c->redis, "redis-server did not start");
    char base_opt[700];
    snprintf(base_opt, sizeof base_opt, "--redisPasswordFile=%s", rh_password_file(c->redis));
    pc_start_game(&c->pc, rh_addr(c->redis), nbase, base_opt, res_dir(), MC_EXAMPLE_GAME);
    /* The key pair, as deploy/cluster makes it. */
    snprintf(c->keydir, sizeof c->keydir, "%s/keys", c->pc.dir);
    char bin[512], out[512];
    char mk[800];
    snprintf(mk, sizeof mk, "mkdir -p '%s'", c->keydir);
    ck_assert_int_eq(system(mk), 0);
    char *kargv[] = {(char *)h_bin("mc-login-keys", bin, sizeof bin), c->keydir, NULL};
    ck_assert_int_eq(h_run(kargv, out, sizeof out, 10000), 0);
    char path[800], hex[80] = "";
    snprintf(path, sizeof path, "%s/login.pub", c->keydir);
    FILE *f = fopen(path, "r");
    ck_assert(f && fgets(hex, sizeof hex, f));
    fclose(f);
    hex[strcspn(hex, "\n")] = '\0';
    ck_assert_int_eq(sodium_hex2bin(c->pk, sizeof c->pk, hex, 64, NULL, NULL, NULL), 0);
    load_digest(c->digest);
    start_loginapp(c, opts);
    /* The loginapp derives the public key from its secret: the one clients are given. */
    char v[200];
    ck_assert(pc_value(&c->pc, "loginapp01", "login/publicKey", v, sizeof v));
    ck_assert_str_eq(v, hex);
}

static void stop_loginapp(lc *c)
{
    ck_assert_msg(h_alive(c->login), "the loginapp died (log %s)", c->log_login);
    h_kill(c->login, SIGTERM);
    int rc = h_wait_exit(c->login, 30000);
    ck_assert_msg(rc == 0, "the loginapp exited %d after SIGTERM (log %s)", rc, c->log_login);
    c->login = -1;
}

static void lc_stop(lc *c)
{
    stop_loginapp(c);
    pc_stop(&c->pc);
    rh_stop(c->redis);
}

/* ---- clients ---------------------------------------------------------------------------- */

/* A whole login through the client library: its final status (and the result). */
static int login_full(lc *c, const char *name, const char *pw, uint8_t flags,
                      const uint8_t *digest, uint32_t timeout_ms, mc_login_result *res)
{
    mc_login_config cfg = {.loginapp = c->ext, .timeout_ms = timeout_ms};
    memcpy(cfg.loginapp_pk, c->pk, sizeof cfg.loginapp_pk);
    memcpy(cfg.digest, digest ? digest : c->digest, sizeof cfg.digest);
    char err[256];
    mc_login_attempt *a = mc_login_start(&cfg, name, pw, flags, now_ms(), err, sizeof err);
    ck_assert_msg(a, "mc_login_start: %s", err);
    int st = MC_LOGIN_PENDING;
    for (int i = 0; i < 100000 && (st = mc_login_tick(a, now_ms())) == MC_LOGIN_PENDING; i++) {
        struct pollfd p = {.fd = mc_login_fd(a), .events = POLLIN};
        uint64_t next = mc_login_next_ms(a), t = now_ms();
        poll(&p, 1, next > t ? (int)(next - t) : 0);
    }
    if (res)
        *res = *mc_login_result_of(a);
    mc_login_free(a);
    return st;
}

static int login(lc *c, const char *name, const char *pw, uint8_t flags)
{
    return login_full(c, name, pw, flags, NULL, 0, NULL);
}

#define LOGIN_IS(c, name, pw, flags, want)                                                     \
    do {                                                                                       \
        int st_ = login((c), (name), (pw), (flags));                                           \
        ck_assert_msg(st_ == (want), "login of %s: %s, wanted %s (log %s)", (name),            \
                      mc_login_status_name(st_), mc_login_status_name(want), (c)->log_login);  \
    } while (0)

static long long status_count(lc *c, const char *status)
{
    char path[96];
    snprintf(path, sizeof path, "login/status/%s", status);
    return pc_int(&c->pc, "loginapp01", path);
}

/* A hand-made client on its own UDP socket (for replays). */
typedef struct {
    int fd;
    mc_secure_client sc;
} raw_client;

/* A client socket on ip (another address of the loopback network: another source). */
static void raw_open_at(raw_client *r, const char *ip)
{
    r->fd = socket(AF_INET, SOCK_DGRAM, 0);
    ck_assert_int_ge(r->fd, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    ck_assert_int_eq(inet_pton(AF_INET, ip, &sa.sin_addr), 1);
    ck_assert_int_eq(bind(r->fd, (struct sockaddr *)&sa, sizeof sa), 0);
}

static void raw_open(raw_client *r) { raw_open_at(r, "127.0.0.1"); }

static void raw_send(raw_client *r, lc *c, const uint8_t *pkt, size_t len)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    const char *colon = strchr(c->ext, ':');
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    ck_assert_int_eq(sendto(r->fd, pkt, len, 0, (struct sockaddr *)&sa, sizeof sa), (ssize_t)len);
}

/* A datagram within timeout_ms: its length, or 0. */
static size_t raw_recv(raw_client *r, uint8_t *buf, size_t cap, int timeout_ms)
{
    struct pollfd p = {.fd = r->fd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) != 1)
        return 0;
    ssize_t n = recv(r->fd, buf, cap, 0);
    return n > 0 ? (size_t)n : 0;
}

/* HELLO -> CHALLENGE: the client is ready to send its LOGIN. */
static void raw_challenge(raw_client *r, lc *c)
{
    uint8_t zero[MC_SECURE_KEY_BYTES] = {0};
    ck_assert_int_eq(mc_secure_client_init(&r->sc, 0, zero), 0);
    uint8_t hello[MC_SECURE_HELLO_SIZE], buf[2048];
    ck_assert_uint_eq(mc_secure_client_packet(&r->sc, hello), sizeof hello);
    raw_send(r, c, hello, sizeof hello);
    size_t n = raw_recv(r, buf, sizeof buf, 5000);
    ck_assert_uint_eq(n, MC_SECURE_CHALLENGE_SIZE);
    ck_assert_int_eq(mc_secure_client_receive(&r->sc, buf, n, NULL), MC_SECURE_OK);
}

/* A LOGIN built by hand (docs/PROTOCOL.md "Logging in"), so that it may carry what the
 * library refuses to send: a name with control characters. */
static void raw_login_by_hand(raw_client *r, lc *c, const char *name, const char *pw,
                              uint8_t out[MC_LOGIN_SIZE])
{
    uint8_t plain[400], n[24];
    size_t k = 0, nl = strlen(name), pl = strlen(pw);
    plain[k++] = (uint8_t)nl;
    memcpy(plain + k, name, nl);
    k += nl;
    plain[k++] = (uint8_t)(pl >> 8);
    plain[k++] = (uint8_t)pl;
    memcpy(plain + k, pw, pl);
    k += pl;
    memcpy(plain + k, c->digest, 32);
    k += 32;
    plain[k++] = 0;
    memset(out, 0, MC_LOGIN_SIZE);
    out[0] = MC_SECURE_LOGIN;
    out[1] = MC_SECURE_VERSION;
    memcpy(out + 2, r->sc.nonce, 8);
    memcpy(out + 10, r->sc.pk, 32);
    memcpy(out + 50, r->sc.cookie, MC_SECURE_COOKIE_SIZE);
    out[90] = (uint8_t)((k + 16) >> 8);
    out[91] = (uint8_t)(k + 16);
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, sizeof n);
    crypto_generichash_update(&st, (const uint8_t *)"mc-login\0", 9);
    crypto_generichash_update(&st, out, 92);
    crypto_generichash_final(&st, n, sizeof n);
    ck_assert_int_eq(crypto_box_easy(out + 92, plain, k, n, c->pk, r->sc.sk), 0);
}

static void raw_login_packet(raw_client *r, lc *c, const char *name, const char *pw,
                             uint8_t out[MC_LOGIN_SIZE])
{
    mc_login_credentials cred;
    memset(&cred, 0, sizeof cred);
    snprintf(cred.name, sizeof cred.name, "%s", name);
    snprintf(cred.password, sizeof cred.password, "%s", pw);
    cred.password_len = strlen(pw);
    memcpy(cred.digest, c->digest, sizeof cred.digest);
    ck_assert_int_eq(mc_login_client_request(&r->sc, &cred, c->pk, out), MC_SECURE_OK);
}

/* A whole login of name from source address ip (a raw client there): the answer's status
 * (made by hand when by_hand). */
static int login_from(lc *c, const char *ip, const char *name, const char *pw, bool by_hand)
{
    raw_client r;
    raw_open_at(&r, ip);
    raw_challenge(&r, c);
    uint8_t pkt[MC_LOGIN_SIZE], buf[2048];
    if (by_hand)
        raw_login_by_hand(&r, c, name, pw, pkt);
    else
        raw_login_packet(&r, c, name, pw, pkt);
    raw_send(&r, c, pkt, sizeof pkt);
    size_t n = raw_recv(&r, buf, sizeof buf, 15000);
    ck_assert_msg(n == MC_LOGIN_REPLY_SIZE, "no answer to %s's LOGIN from %s", name, ip);
    mc_login_result lr;
    ck_assert_int_eq(mc_login_client_reply(&r.sc, c->pk, buf, n, &lr), MC_SECURE_OK);
    close(r.fd);
    mc_secure_client_clear(&r.sc);
    return lr.status;
}

#define LOGIN_FROM_IS(c, ip, name, pw, want)                                                   \
    do {                                                                                       \
        int st_ = login_from((c), (ip), (name), (pw), false);                                  \
        ck_assert_msg(st_ == (want), "login of %s from %s: %s, wanted %s (log %s)", (name),    \
                      (ip), mc_login_status_name(st_), mc_login_status_name(want),             \
                      (c)->log_login);                                                         \
    } while (0)

/* mc-account (the operator's tool) against the cluster's Redis, the password on its
 * standard input: its exit status, its output in out. */
static int account_tool(lc *c, const char *cmd, const char *name, const char *pw, char *out,
                        size_t outlen)
{
    char bin[512], line[2048];
    snprintf(line, sizeof line,
             "printf '%%s\\n' '%s' | '%s' --redis=%s --redisPasswordFile='%s' --pwhashCost=dev "
             "%s %s",
             pw ? pw : "", h_bin("mc-account", bin, sizeof bin), rh_addr(c->redis),
             rh_password_file(c->redis), cmd, name);
    char *argv[] = {"/bin/sh", "-c", line, NULL};
    return h_run(argv, out, outlen, 20000);
}

/* An account made the way an operator makes one. */
static void make_account(lc *c, const char *name, const char *pw)
{
    char out[1024];
    int rc = account_tool(c, "create", name, pw, out, sizeof out);
    ck_assert_msg(rc == 0, "mc-account create %s: exit %d: %s", name, rc, out);
}

/* The account's database id in its auth record (waits: it is stored asynchronously). */
static long long record_dbid(lc *c, const char *name)
{
    char key[96], out[256];
    snprintf(key, sizeof key, "mc:a:%s", name);
    for (int waited = 0; waited < WAIT_MS; waited += 100) {
        if (rh_cli(c->redis, out, sizeof out, "HGET", key, "dbid", NULL) == 0 && atoll(out) > 0)
            return atoll(out);
        h_sleep_ms(100);
    }
    return 0;
}

static int port_of(const char *addr) { return atoi(strchr(addr, ':') + 1); }

/* The external port of the baseapp in slot i. */
static int base_ext_port(lc *c, int i)
{
    char v[64];
    ck_assert(pc_value(&c->pc, c->pc.base_name[i], "interfaces/external", v, sizeof v));
    return port_of(v);
}

/* ---- tests ------------------------------------------------------------------------------ */

/* Auto-create and refuse: ok, already logged in, bad password and its back-off, bad digest,
 * malformed, the per-account bucket, replays, an expired cookie, Redis down and back. */
START_TEST(test_autocreate_refuse)
{
    const char *opts[] = {"--autoCreateAccounts=true", "--onlineLogin=refuse",
                          "--addressRate=1000", "--addressBurst=1000", "--accountFailRate=0.001",
                          "--accountFailBurst=3", "--failedBackoffMs=3000", NULL};
    lc c;
    lc_start(&c, 1, opts);
    const char *base = c.pc.base_name[0];

    /* A new name: its account is made (record, base, database id) and the client gets a
     * session on the baseapp, which counts it. */
    mc_login_result res;
    int st = login_full(&c, "alice", "secret-1", 0, NULL, 0, &res);
    ck_assert_msg(st == MC_LOGIN_OK, "alice: %s (log %s)", mc_login_status_name(st), c.log_login);
    ck_assert_int_eq(res.baseapp_port, base_ext_port(&c, 0));
    ck_assert_uint_eq(res.baseapp_ip, 0x7F000001u);
    ck_assert_uint_ne(res.session_id, 0);
    ck_assert_int_eq(pc_int(&c.pc, base, "sessions/issued"), 1);
    ck_assert_int_eq(pc_int(&c.pc, base, "sessions/live"), 1);
    ck_assert_int_eq(pc_int(&c.pc, base, "login/prepare/created"), 1);
    ck_assert_int_eq(pc_int(&c.pc, "loginapp01", "login/accountsCreated"), 1);
    ck_assert_int_eq(status_count(&c, "ok"), 1);
    long long dbid = record_dbid(&c, "alice");
    ck_assert_int_gt(dbid, 0);
    ck_assert_int_eq(pc_int(&c.pc, base, "entities/count"), 1);

    /* Online now: refused, also when the client asks to take over (refuse configured). */
    LOGIN_IS(&c, "alice", "secret-1", 0, MC_LOGIN_ALREADY_LOGGED_IN);
    LOGIN_IS(&c, "alice", "secret-1", MC_LOGIN_FLAG_TAKEOVER, MC_LOGIN_ALREADY_LOGGED_IN);
    ck_assert_int_eq(pc_int(&c.pc, base, "sessions/issued"), 1);

    /* A wrong password, then this address backs off on alice: rate limited at once; from
     * another address alice is not backed off (issue 19, medium 5: one source cannot lock
     * the others out). */
    LOGIN_IS(&c, "alice", "wrong", 0, MC_LOGIN_BAD_PASSWORD);
    LOGIN_IS(&c, "alice", "secret-1", 0, MC_LOGIN_RATE_LIMITED);
    ck_assert_int_eq(status_count(&c, "badPassword"), 1);
    LOGIN_FROM_IS(&c, "127.0.0.2", "alice", "secret-1", MC_LOGIN_ALREADY_LOGGED_IN);

    /* Another build of the game. */
    uint8_t other[MC_LOGIN_DIGEST_BYTES];
    memcpy(other, c.digest, sizeof other);
    other[0] ^= 1;
    ck_assert_int_eq(login_full(&c, "bob", "pw", 0, other, 0, NULL), MC_LOGIN_BAD_DIGEST);
    ck_assert_int_eq(status_count(&c, "badDigest"), 1);

    /* The per-account ceiling counts failed checks only (issue 19, medium 5): bob's good
     * logins never use it up; three wrong passwords from three addresses do (3 at once,
     * then one every 1000 s), and then bob is rate limited from everywhere. */
    LOGIN_IS(&c, "bob", "pw", 0, MC_LOGIN_OK);
    for (int i = 0; i < 8; i++)
        LOGIN_IS(&c, "bob", "pw", 0, MC_LOGIN_ALREADY_LOGGED_IN);
    LOGIN_FROM_IS(&c, "127.0.0.3", "bob", "bad-1", MC_LOGIN_BAD_PASSWORD);
    LOGIN_FROM_IS(&c, "127.0.0.4", "bob", "bad-2", MC_LOGIN_BAD_PASSWORD);
    LOGIN_IS(&c, "bob", "pw", 0, MC_LOGIN_ALREADY_LOGGED_IN);
    LOGIN_FROM_IS(&c, "127.0.0.5", "bob", "bad-3", MC_LOGIN_BAD_PASSWORD);
    LOGIN_FROM_IS(&c, "127.0.0.6", "bob", "pw", MC_LOGIN_RATE_LIMITED);
    ck_assert_int_eq(status_count(&c, "rateLimited"), 2);

    /* Issue 19, low (c): a name with a control character is malformed, at login and at
     * auto-create: no account is made. */
    long long created = pc_int(&c.pc, "loginapp01", "login/accountsCreated");
    ck_assert_int_eq(login_from(&c, "127.0.0.1", "evil\nname", "pw", true), MC_LOGIN_MALFORMED);
    ck_assert_int_eq(login_from(&c, "127.0.0.1", "\x1b[2Jx", "pw", true), MC_LOGIN_MALFORMED);
    ck_assert_int_eq(login_from(&c, "127.0.0.1", "plain", "pw", true), MC_LOGIN_OK);
    ck_assert_int_eq(pc_int(&c.pc, "loginapp01", "login/accountsCreated"), created + 1);
    ck_assert_int_eq(status_count(&c, "malformed"), 2);

    /* Credentials that do not open: malformed. */
    raw_client r1, r2;
    raw_open(&r1);
    raw_open(&r2);
    raw_challenge(&r1, &c);
    uint8_t pkt[MC_LOGIN_SIZE], buf[2048];
    raw_login_packet(&r1, &c, "carol", "pw", pkt);
    uint8_t bad[MC_LOGIN_SIZE];
    memcpy(bad, pkt, sizeof bad);
    bad[100] ^= 0x40; /* inside the sealed box */
    raw_send(&r1, &c, bad, sizeof bad);
    size_t n = raw_recv(&r1, buf, sizeof buf, 5000);
    ck_assert_uint_eq(n, MC_LOGIN_REPLY_SIZE);
    mc_login_result lr;
    ck_assert_int_eq(mc_login_client_reply(&r1.sc, c.pk, buf, n, &lr), MC_SECURE_OK);
    ck_assert_int_eq(lr.status, MC_LOGIN_MALFORMED);
    ck_assert_int_eq(status_count(&c, "malformed"), 3);
    /* Issue 19, medium 5: that answer was not remembered (a box that does not open takes
     * no room from real logins' answers): the same packet again is opened and answered
     * again, not repeated from memory. */
    raw_send(&r1, &c, bad, sizeof bad);
    n = raw_recv(&r1, buf, sizeof buf, 5000);
    ck_assert_uint_eq(n, MC_LOGIN_REPLY_SIZE);
    ck_assert_int_eq(mc_login_client_reply(&r1.sc, c.pk, buf, n, &lr), MC_SECURE_OK);
    ck_assert_int_eq(lr.status, MC_LOGIN_MALFORMED);
    ck_assert_int_eq(status_count(&c, "malformed"), 4);
    ck_assert_int_eq(pc_int(&c.pc, "loginapp01", "login/repeated"), 0);

    /* A good LOGIN: answered; resent from its own address: the same answer again (no second
     * login); replayed from another address: dropped, unanswered. */
    raw_challenge(&r1, &c);
    raw_login_packet(&r1, &c, "carol", "pw", pkt);
    raw_send(&r1, &c, pkt, sizeof pkt);
    n = raw_recv(&r1, buf, sizeof buf, 10000);
    ck_assert_uint_eq(n, MC_LOGIN_REPLY_SIZE);
    ck_assert_int_eq(mc_login_client_reply(&r1.sc, c.pk, buf, n, &lr), MC_SECURE_OK);
    ck_assert_int_eq(lr.status, MC_LOGIN_OK);
    uint8_t first[MC_LOGIN_REPLY_SIZE];
    memcpy(first, buf, sizeof first);
    long long issued = pc_int(&c.pc, base, "sessions/issued");
    raw_send(&r1, &c, pkt, sizeof pkt);
    n = raw_recv(&r1, buf, sizeof buf, 5000);
    ck_assert_uint_eq(n, MC_LOGIN_REPLY_SIZE);
    ck_assert(memcmp(buf, first, n) == 0);
    ck_assert_int_eq(pc_int(&c.pc, "loginapp01", "login/repeated"), 1);
    raw_send(&r2, &c, pkt, sizeof pkt);
    ck_assert_uint_eq(raw_recv(&r2, buf, sizeof buf, 1500), 0);
    ck_assert_int_eq(pc_int(&c.pc, "loginapp01", "login/dropped/badCookie"), 1);
    ck_assert_int_eq(pc_int(&c.pc, base, "sessions/issued"), issued);

    /* Issue 19, critical 1 (a): carol's credential bytes (90..511) spliced into another
     * client's own LOGIN (its own cookie, nonce and key, from its own address): malformed,
     * not carol's session. */
    raw_challenge(&r2, &c);
    uint8_t splice[MC_LOGIN_SIZE];
    raw_login_packet(&r2, &c, "mallory", "x", splice);
    memcpy(splice + 90, pkt + 90, MC_LOGIN_SIZE - 90);
    raw_send(&r2, &c, splice, sizeof splice);
    n = raw_recv(&r2, buf, sizeof buf, 10000);
    ck_assert_uint_eq(n, MC_LOGIN_REPLY_SIZE);
    ck_assert_int_eq(mc_login_client_reply(&r2.sc, c.pk, buf, n, &lr), MC_SECURE_OK);
    ck_assert_msg(lr.status == MC_LOGIN_MALFORMED, "spliced LOGIN: %s",
                  mc_login_status_name(lr.status));
    /* (b): carol's whole LOGIN replayed under a fresh cookie got by a HELLO with carol's
     * nonce and key: malformed too (the answer is boxed to carol's key: read with it). */
    mc_secure_client as_carol = r1.sc;
    as_carol.state = MC_SECURE_CLIENT_HELLO;
    uint8_t hello[MC_SECURE_HELLO_SIZE], replay[MC_LOGIN_SIZE];
    ck_assert_uint_eq(mc_secure_client_packet(&as_carol, hello), sizeof hello);
    raw_send(&r2, &c, hello, sizeof hello);
    ck_assert_uint_eq(raw_recv(&r2, buf, sizeof buf, 5000), MC_SECURE_CHALLENGE_SIZE);
    memcpy(replay, pkt, sizeof replay);
    memcpy(replay + 50, buf + 9, MC_SECURE_COOKIE_SIZE);
    raw_send(&r2, &c, replay, sizeof replay);
    n = raw_recv(&r2, buf, sizeof buf, 10000);
    ck_assert_uint_eq(n, MC_LOGIN_REPLY_SIZE);
    ck_assert_int_eq(mc_login_client_reply(&r1.sc, c.pk, buf, n, &lr), MC_SECURE_OK);
    ck_assert_msg(lr.status == MC_LOGIN_MALFORMED, "replayed LOGIN: %s",
                  mc_login_status_name(lr.status));
    ck_assert_int_eq(status_count(&c, "malformed"), 6);
    ck_assert_int_eq(pc_int(&c.pc, base, "sessions/issued"), issued);

    /* A LOGIN sent after its cookie expired (10 s): dropped (as expired, or as not ours when
     * the secret that made it was rotated out meanwhile: rotations are 10 s apart). */
    raw_challenge(&r2, &c);
    raw_login_packet(&r2, &c, "dave", "pw", pkt);
    h_sleep_ms(11000);
    raw_send(&r2, &c, pkt, sizeof pkt);
    ck_assert_uint_eq(raw_recv(&r2, buf, sizeof buf, 1500), 0);
    ck_assert_int_eq(pc_int(&c.pc, "loginapp01", "login/dropped/expired") +
                         pc_int(&c.pc, "loginapp01", "login/dropped/badCookie"),
                     2);
    close(r1.fd);
    close(r2.fd);

    /* Redis gone: server error, and the loginapp lives on; back: logins work again. */
    ck_assert_int_eq(rh_kill(c.redis, SIGKILL), 0);
    LOGIN_IS(&c, "erin", "pw", 0, MC_LOGIN_SERVER_ERROR);
    ck_assert(h_alive(c.login));
    ck_assert_int_ge(status_count(&c, "serverError"), 1);
    ck_assert_int_eq(rh_restart(c.redis), 0);
    ck_assert_msg(h_wait_watch(c.pc.manager, "loginapp01", "login/redis/connected", "true",
                               WAIT_MS),
                  "the loginapp did not reconnect to Redis (log %s)", c.log_login);
    st = MC_LOGIN_SERVER_ERROR;
    /* The baseapp's store reconnects on its own schedule: retry for a while. */
    for (int i = 0; i < 40 && st == MC_LOGIN_SERVER_ERROR; i++) {
        char name[32];
        snprintf(name, sizeof name, "frank%d", i);
        st = login(&c, name, "pw", 0);
        if (st == MC_LOGIN_SERVER_ERROR)
            h_sleep_ms(500);
    }
    ck_assert_msg(st == MC_LOGIN_OK, "after Redis came back: %s (log %s)",
                  mc_login_status_name(st), c.log_login);
    lc_stop(&c);
}
END_TEST

/* No auto-create, takeover configured, two baseapps, one login in flight at most: no such
 * user (told "bad password", after a hash of the same cost), ok for an operator-made
 * account, already logged in without the takeover flag, takeover of the live base with it
 * (the new session is always on the baseapp holding the base), overloaded, timed out, and no
 * baseapp once the baseapps are gone. */
START_TEST(test_takeover_and_limits)
{
    const char *opts[] = {"--onlineLogin=takeover", "--maxLoginsInFlight=1",
                          "--addressRate=1000", "--addressBurst=1000", NULL};
    lc c;
    lc_start(&c, 2, opts);
    /* Issue 19, medium 5: a name without an account is told what a wrong password is told
     * (the operators' counter keeps the difference), after one hash like a real check. */
    LOGIN_IS(&c, "nobody", "pw", 0, MC_LOGIN_BAD_PASSWORD);
    ck_assert_int_eq(status_count(&c, "noSuchUser"), 1);
    ck_assert_int_eq(status_count(&c, "badPassword"), 0);
    ck_assert_msg(pc_wait_int(&c.pc, "loginapp01", "login/pwhash/done", 1, WAIT_MS),
                  "no hash was run for a name without an account");

    make_account(&c, "hank", "hunter2");
    mc_login_result res;
    ck_assert_int_eq(login_full(&c, "hank", "hunter2", 0, NULL, 0, &res), MC_LOGIN_OK);
    long long dbid = record_dbid(&c, "hank");
    ck_assert_int_gt(dbid, 0);
    int holder = res.baseapp_port == base_ext_port(&c, 0) ? 0 : 1;
    ck_assert_int_eq(res.baseapp_port, base_ext_port(&c, holder));
    /* Issue 19, low (a): takeover is configured, but the client did not ask. */
    LOGIN_IS(&c, "hank", "hunter2", 0, MC_LOGIN_ALREADY_LOGGED_IN);
    ck_assert_int_eq(status_count(&c, "alreadyLoggedIn"), 1);

    /* Takeovers: wherever the manager's pick lands, the session comes from the holder (the
     * other baseapp answers "live elsewhere" and the loginapp asks the holder). */
    for (int i = 0; i < 4; i++) {
        long long issued = pc_int(&c.pc, c.pc.base_name[holder], "sessions/issued");
        uint64_t before = res.session_id;
        ck_assert_int_eq(login_full(&c, "hank", "hunter2", MC_LOGIN_FLAG_TAKEOVER, NULL, 0, &res),
                         MC_LOGIN_OK);
        ck_assert_int_eq(res.baseapp_port, base_ext_port(&c, holder));
        ck_assert_uint_ne(res.session_id, before);
        ck_assert_int_eq(pc_int(&c.pc, c.pc.base_name[holder], "sessions/issued"), issued + 1);
        /* The older session is forgotten: one live session for hank. */
        ck_assert_int_eq(pc_int(&c.pc, c.pc.base_name[holder], "sessions/live"), 1);
    }
    /* Until the manager's pick has landed on the other baseapp at least once (loads move:
     * bounded), so that the "live elsewhere" hop is exercised. */
    for (int i = 0; i < 60 && pc_int(&c.pc, "loginapp01", "login/redirects") < 1; i++) {
        ck_assert_int_eq(login_full(&c, "hank", "hunter2", MC_LOGIN_FLAG_TAKEOVER, NULL, 0, &res),
                         MC_LOGIN_OK);
        ck_assert_int_eq(res.baseapp_port, base_ext_port(&c, holder));
        h_sleep_ms(200);
    }
    ck_assert_int_ge(pc_int(&c.pc, "loginapp01", "login/redirects"), 1);
    ck_assert_int_ge(pc_int(&c.pc, "loginapp01", "login/takeovers"), 4);
    ck_assert_int_ge(pc_int(&c.pc, c.pc.base_name[1 - holder], "login/prepare/liveElsewhere"), 1);
    ck_assert_int_eq(pc_int(&c.pc, c.pc.base_name[holder], "entities/count"), 1);
    ck_assert_int_eq(pc_int(&c.pc, c.pc.base_name[1 - holder], "entities/count"), 0);
    ck_assert_int_eq(record_dbid(&c, "hank"), dbid);

    /* One login in flight at most: while the first waits on a stopped Redis, the second is
     * overloaded. */
    ck_assert_int_eq(kill(rh_pid(c.redis), SIGSTOP), 0);
    mc_login_config cfg = {.loginapp = c.ext};
    memcpy(cfg.loginapp_pk, c.pk, sizeof cfg.loginapp_pk);
    memcpy(cfg.digest, c.digest, sizeof cfg.digest);
    char err[256];
    mc_login_attempt *a =
        mc_login_start(&cfg, "hank", "hunter2", MC_LOGIN_FLAG_TAKEOVER, now_ms(), err, sizeof err);
    ck_assert(a);
    for (int i = 0; i < 200 && pc_int(&c.pc, "loginapp01", "login/inFlight") < 1; i++) {
        mc_login_tick(a, now_ms());
        h_sleep_ms(20);
    }
    ck_assert_int_eq(pc_int(&c.pc, "loginapp01", "login/inFlight"), 1);
    LOGIN_IS(&c, "hank", "hunter2", 0, MC_LOGIN_OVERLOADED);
    kill(rh_pid(c.redis), SIGCONT);
    int st = MC_LOGIN_PENDING;
    for (int i = 0; i < 100000 && (st = mc_login_tick(a, now_ms())) == MC_LOGIN_PENDING; i++) {
        struct pollfd p = {.fd = mc_login_fd(a), .events = POLLIN};
        poll(&p, 1, 50);
    }
    mc_login_free(a);
    ck_assert_msg(st == MC_LOGIN_OK, "the first login: %s", mc_login_status_name(st));
    ck_assert_int_eq(status_count(&c, "overloaded"), 1);

    /* A loginapp that does not answer: the client's own verdict. */
    kill(c.login, SIGSTOP);
    ck_assert_int_eq(login_full(&c, "hank", "hunter2", 0, NULL, 1500, NULL), MC_LOGIN_TIMED_OUT);
    kill(c.login, SIGCONT);

    /* No baseapp left. */
    pc_stop_baseapp(&c.pc, 0);
    pc_stop_baseapp(&c.pc, 1);
    LOGIN_IS(&c, "hank", "hunter2", 0, MC_LOGIN_NO_BASEAPP);
    ck_assert_int_eq(status_count(&c, "noBaseapp"), 1);
    lc_stop(&c);
}
END_TEST

/* The per-address bucket: 3 logins at once from 127.0.0.1, then rate limited (answered
 * before anything else is looked at: here there is no baseapp at all), once
 * (--addressRefusals=1); after that the address's LOGINs are dropped unanswered before any
 * public-key work, even one whose box would not open (issue 19, medium 5). */
START_TEST(test_address_limit)
{
    const char *opts[] = {"--addressRate=0.01", "--addressBurst=3", "--addressRefusals=1",
                          "--pwhashCost=interactive", NULL};
    lc c;
    lc_start(&c, 0, opts);
    make_account(&c, "ivy", "pw"); /* at the dev cost (mc-account --pwhashCost=dev) */
    char out[1024];
    ck_assert_int_eq(rh_cli(c.redis, out, sizeof out, "HGET", "mc:a:ivy", "pw", NULL), 0);
    ck_assert_msg(!strstr(out, "m=65536,"), "%s", out);
    for (int i = 0; i < 3; i++)
        LOGIN_IS(&c, "ivy", "pw", 0, MC_LOGIN_NO_BASEAPP);
    /* Issue 19, low (b): the good password's hash was upgraded to the loginapp's cost
     * (interactive: 64 MiB) in the background, and still logs in. */
    bool upgraded = false;
    for (int waited = 0; !upgraded && waited < WAIT_MS; waited += 100) {
        upgraded = rh_cli(c.redis, out, sizeof out, "HGET", "mc:a:ivy", "pw", NULL) == 0 &&
                   strstr(out, "$argon2id$v=19$m=65536,") != NULL;
        if (!upgraded)
            h_sleep_ms(100);
    }
    ck_assert_msg(upgraded, "ivy's hash was not upgraded: %s (log %s)", out, c.log_login);
    ck_assert_int_ge(pc_int(&c.pc, "loginapp01", "login/rehashed"), 1);
    LOGIN_IS(&c, "ivy", "pw", 0, MC_LOGIN_RATE_LIMITED);
    raw_client r;
    raw_open(&r);
    raw_challenge(&r, &c);
    uint8_t pkt[MC_LOGIN_SIZE], buf[2048];
    raw_login_packet(&r, &c, "ivy", "pw", pkt);
    pkt[120] ^= 1; /* a box that does not open */
    raw_send(&r, &c, pkt, sizeof pkt);
    ck_assert_msg(pc_wait_int(&c.pc, "loginapp01", "login/dropped/rateLimited", 1, WAIT_MS),
                  "a LOGIN over the address's bucket and refusals was not dropped (log %s)",
                  c.log_login);
    ck_assert_uint_eq(raw_recv(&r, buf, sizeof buf, 0), 0); /* dropped: no answer came */
    ck_assert_int_eq(status_count(&c, "malformed"), 0);
    close(r.fd);

    /* The operator's tool: an account is made once; shown; re-passworded; deleted; never
     * with a control character in its name (issue 19, low (c)). */
    ck_assert_int_eq(account_tool(&c, "create", "\"$(printf 'bad\\001name')\"", "pw", out,
                                  sizeof out), 2);
    ck_assert_msg(strstr(out, "control characters"), "%s", out);
    ck_assert_int_eq(account_tool(&c, "create", "\"$(printf 'tab\\tname')\"", "pw", out,
                                  sizeof out), 2);
    ck_assert_int_eq(account_tool(&c, "create", "ivy", "again", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "exists already"), "%s", out);
    ck_assert_int_eq(account_tool(&c, "show", "ivy", NULL, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "account ivy type Account dbid 0 password $argon2id\n"), "%s", out);
    ck_assert_int_eq(account_tool(&c, "passwd", "ivy", "new-pw", out, sizeof out), 0);
    ck_assert_int_eq(account_tool(&c, "passwd", "nobody", "x", out, sizeof out), 1);
    ck_assert_int_eq(account_tool(&c, "delete", "ivy", NULL, out, sizeof out), 0);
    ck_assert_int_eq(account_tool(&c, "show", "ivy", NULL, out, sizeof out), 1);
    ck_assert_int_eq(account_tool(&c, "delete", "ivy", NULL, out, sizeof out), 1);
    ck_assert_int_eq(status_count(&c, "rateLimited"), 1);
    ck_assert_int_eq(status_count(&c, "noBaseapp"), 3);
    lc_stop(&c);
}
END_TEST

/* The whole way in: log in through the loginapp, open the encrypted channel to the baseapp
 * with the session and get the account as the player; a takeover login's client gets the
 * entity and the first client is told it was taken over; logging off destroys the Account
 * (the example game), so the next login loads it again (not "already logged in"). */
typedef struct {
    int players;
    int32_t player_id;
    char name[80];
    int end_how, end_reason;
} play_state;

static void on_player(void *ud, mc_client *c, const mc_cw_player *p)
{
    (void)c;
    play_state *ps = ud;
    ps->players++;
    ps->player_id = p->id;
    for (size_t i = 0; i < p->n; i++)
        if (p->indices[i] == 0 && p->values[i].as.bytes.data) /* Account.accountName */
            snprintf(ps->name, sizeof ps->name, "%s", p->values[i].as.bytes.data);
}

static void on_end(void *ud, mc_client *c, int how, int reason, const char *text)
{
    (void)c;
    (void)text;
    play_state *ps = ud;
    ps->end_how = how;
    ps->end_reason = reason;
}

static mc_client *play(const mc_entity_defs *defs, const mc_login_result *r, play_state *ps)
{
    char addr[32], err[256];
    snprintf(addr, sizeof addr, "%u.%u.%u.%u:%u", r->baseapp_ip >> 24, (r->baseapp_ip >> 16) & 255,
             (r->baseapp_ip >> 8) & 255, r->baseapp_ip & 255, r->baseapp_port);
    memset(ps, 0, sizeof *ps);
    mc_client_config cfg = {.baseapp = addr, .session_id = r->session_id, .defs = defs,
                            .ud = ps};
    cfg.cb.on_player = on_player;
    cfg.cb.on_end = on_end;
    memcpy(cfg.session_key, r->session_key, sizeof cfg.session_key);
    mc_client *c = mc_client_connect(&cfg, err, sizeof err);
    ck_assert_msg(c, "mc_client_connect: %s", err);
    return c;
}

/* Tick both clients (either may be NULL) until cond holds or 15 s pass. */
#define PUMP_UNTIL(a, b, cond)                                                                 \
    do {                                                                                       \
        uint64_t end_ = now_ms() + 15000;                                                      \
        while (!(cond) && now_ms() < end_) {                                                   \
            struct pollfd p_[2] = {{.fd = (a) ? mc_client_fd(a) : -1, .events = POLLIN},      \
                                   {.fd = (b) ? mc_client_fd(b) : -1, .events = POLLIN}};     \
            poll(p_, 2, MC_CLIENT_TICK_MS);                                                    \
            if (a)                                                                             \
                mc_client_tick(a);                                                             \
            if (b)                                                                             \
                mc_client_tick(b);                                                             \
        }                                                                                      \
    } while (0)

START_TEST(test_login_and_play)
{
    const char *opts[] = {"--autoCreateAccounts=true", "--onlineLogin=takeover",
                          "--addressRate=1000", "--addressBurst=1000", NULL};
    lc c;
    lc_start(&c, 1, opts);
    char err[256];
    mc_entity_defs *defs = mc_defs_load(res_dir(), err, sizeof err);
    ck_assert_msg(defs, "%s", err);
    const char *base = c.pc.base_name[0];

    mc_login_result r1, r2;
    ck_assert_int_eq(login_full(&c, "zoe", "pw-zoe", 0, NULL, 0, &r1), MC_LOGIN_OK);
    play_state s1, s2;
    mc_client *c1 = play(defs, &r1, &s1);
    mc_client *none = NULL;
    PUMP_UNTIL(c1, none, s1.players > 0 || s1.end_how);
    ck_assert_msg(s1.players == 1, "no player (end %d/%d)", s1.end_how, s1.end_reason);
    ck_assert_str_eq(s1.name, "zoe");
    ck_assert_int_eq(pc_int(&c.pc, base, "sessions/taken"), 1);
    long long dbid = record_dbid(&c, "zoe");

    /* Online: a takeover login gets the same entity on a new channel; the first client is
     * told it was taken over. */
    ck_assert_int_eq(login_full(&c, "zoe", "pw-zoe", MC_LOGIN_FLAG_TAKEOVER, NULL, 0, &r2),
                     MC_LOGIN_OK);
    mc_client *c2 = play(defs, &r2, &s2);
    PUMP_UNTIL(c1, c2, s2.players > 0 && s1.end_how);
    ck_assert_int_eq(s2.players, 1);
    ck_assert_int_eq(s2.player_id, s1.player_id);
    ck_assert_int_eq(s1.end_how, MC_CLIENT_END_DISCONNECTED);
    ck_assert_int_eq(s1.end_reason, MC_CW_BYE_TAKEN_OVER);
    mc_client_free(c1);

    /* Logging off ends the Account; the next login loads it again from its database id. */
    mc_client_close(c2);
    mc_client_free(c2);
    ck_assert_msg(pc_wait_int(&c.pc, base, "entities/count", 0, WAIT_MS),
                  "the Account was not destroyed after its client logged off");
    ck_assert_int_eq(login_full(&c, "zoe", "pw-zoe", 0, NULL, 0, &r1), MC_LOGIN_OK);
    ck_assert_int_eq(record_dbid(&c, "zoe"), dbid);
    ck_assert_int_eq(pc_int(&c.pc, base, "login/prepare/created"), 1);
    c1 = play(defs, &r1, &s1);
    PUMP_UNTIL(c1, none, s1.players > 0 || s1.end_how);
    ck_assert_int_eq(s1.players, 1);
    ck_assert_str_eq(s1.name, "zoe");
    mc_client_close(c1);
    mc_client_free(c1);
    mc_defs_free(defs);
    lc_stop(&c);
}
END_TEST

/* PREPARE_LOGIN from a stranger on the internal network (an in-process mercury nub), wrong
 * in every way the baseapp checks: answered with a refusal and counted, nothing created, the
 * baseapp stays up and still prepares a good one. */
typedef struct {
    int calls;
    mc_reply_status status;
    uint8_t data[1024];
    size_t len;
} peer_reply;

static void on_peer_reply(void *ctx, mc_reply_status status, const mc_message_info *info,
                          mc_istream *data)
{
    (void)info;
    peer_reply *r = ctx;
    r->calls++;
    r->status = status;
    size_t n = status == MC_REPLY_OK && data ? mc_istream_remaining(data) : 0;
    if (n > sizeof r->data)
        n = sizeof r->data;
    const uint8_t *b = n ? mc_read_bytes(data, n) : NULL;
    if (b)
        memcpy(r->data, b, n);
    r->len = b ? n : 0;
}

static const mc_message_def prepare_def = {MC_MSG_PREPARE_LOGIN, "PREPARE_LOGIN",
                                           MC_MSG_VARIABLE, 4, NULL};

/* A PREPARE_LOGIN request from the peer: whether any answer came (within 12 s, or
 * wait_s), and the reply in *out (NULL when it is not a PrepareLoginReply). */
static bool prepare_try(struct event_base *base, mc_nub *nub, const char *addr,
                        const uint8_t *d, size_t n, double wait_s,
                        Mc__Login__PrepareLoginReply **out)
{
    static const uint8_t nothing[1];
    mc_address a;
    ck_assert_int_eq(mc_address_parse(addr, &a), MC_OK);
    mc_channel *ch = mc_nub_channel(nub, &a, MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(ch);
    peer_reply r;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(mc_channel_request(ch, &prepare_def, n ? d : nothing, n, on_peer_reply, &r,
                                        (mc_time_us)(wait_s * 1e6)),
                     MC_OK);
    mc_time_us end = mc_clock_now_us() + (mc_time_us)(wait_s * 1e6) + 2 * MC_US_PER_S;
    while (r.calls == 0 && mc_clock_now_us() < end)
        event_base_loop(base, EVLOOP_ONCE);
    *out = r.calls == 1 && r.status == MC_REPLY_OK
               ? mc__login__prepare_login_reply__unpack(NULL, r.len, r.data)
               : NULL;
    return r.calls == 1 && r.status == MC_REPLY_OK;
}

/* A PREPARE_LOGIN request from the peer: the reply (NULL when it is not a PrepareLoginReply). */
static Mc__Login__PrepareLoginReply *prepare(struct event_base *base, mc_nub *nub,
                                             const char *addr, const uint8_t *d, size_t n)
{
    static const uint8_t nothing[1];
    mc_address a;
    ck_assert_int_eq(mc_address_parse(addr, &a), MC_OK);
    mc_channel *ch = mc_nub_channel(nub, &a, MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(ch);
    peer_reply r;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(mc_channel_request(ch, &prepare_def, n ? d : nothing, n, on_peer_reply, &r,
                                        10 * MC_US_PER_S),
                     MC_OK);
    mc_time_us end = mc_clock_now_us() + 12 * MC_US_PER_S;
    while (r.calls == 0 && mc_clock_now_us() < end)
        event_base_loop(base, EVLOOP_ONCE);
    ck_assert_msg(r.calls == 1 && r.status == MC_REPLY_OK, "no answer to PREPARE_LOGIN");
    return mc__login__prepare_login_reply__unpack(NULL, r.len, r.data);
}

static Mc__Login__PrepareStatus prepare_msg(struct event_base *base, mc_nub *nub,
                                            const char *addr, const char *name,
                                            const char *type, Mc__Login__PrepareLoginReply **out)
{
    Mc__Login__PrepareLoginRequest q = MC__LOGIN__PREPARE_LOGIN_REQUEST__INIT;
    q.account_name = (char *)name;
    q.entity_type = (char *)type;
    uint8_t buf[512];
    size_t n = mc__login__prepare_login_request__pack(&q, buf);
    Mc__Login__PrepareLoginReply *r = prepare(base, nub, addr, buf, n);
    ck_assert_ptr_nonnull(r);
    Mc__Login__PrepareStatus st = r->status;
    if (out)
        *out = r;
    else
        mc__login__prepare_login_reply__free_unpacked(r, NULL);
    return st;
}

/* A test nub that registers with the manager as a loginapp and keeps heartbeating (on a
 * timer of the test's event loop), so that baseapps take PREPARE_LOGIN from it. */
typedef struct {
    mc_nub *nub;
    mc_channel *to_manager;
    uint32_t id;
    uint64_t instance;
    struct event *beat;
} fake_loginapp;

static const mc_message_def *ctl_def(uint8_t id)
{
    return mc_interface_find(mc_control_interface(), id);
}

static void fake_beat(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    fake_loginapp *f = arg;
    Mc__Control__Heartbeat hb = MC__CONTROL__HEARTBEAT__INIT;
    hb.id = f->id;
    hb.manager_instance = f->instance;
    uint8_t buf[64];
    size_t n = mc__control__heartbeat__pack(&hb, buf);
    mc_channel_send_message(f->to_manager, ctl_def(MC_CTL_HEARTBEAT), buf, n);
    mc_channel_send(f->to_manager);
}

static void fake_loginapp_register(fake_loginapp *f, struct event_base *eb, mc_nub *nub,
                                   const char *manager, const uint8_t digest[32])
{
    memset(f, 0, sizeof *f);
    f->nub = nub;
    mc_address m;
    ck_assert_int_eq(mc_address_parse(manager, &m), MC_OK);
    f->to_manager = mc_nub_channel(nub, &m, MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(f->to_manager);
    char self[MC_ADDRESS_STRLEN], hex[65];
    mc_address_format(mc_nub_address(nub), self, sizeof self);
    sodium_bin2hex(hex, sizeof hex, digest, 32);
    Mc__Control__RegisterRequest q = MC__CONTROL__REGISTER_REQUEST__INIT;
    q.role = MC__CONTROL__ROLE__ROLE_LOGINAPP;
    q.pid = (uint32_t)getpid();
    q.host = "test";
    q.internal_addr = self;
    q.external_addr = "127.0.0.1:9";
    q.def_digest = hex;
    q.build_version = "test";
    q.incarnation = 77;
    uint8_t buf[512];
    size_t n = mc__control__register_request__pack(&q, buf);
    peer_reply r;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(mc_channel_request(f->to_manager, ctl_def(MC_CTL_REGISTER), buf, n,
                                        on_peer_reply, &r, 10 * MC_US_PER_S),
                     MC_OK);
    mc_time_us end = mc_clock_now_us() + 12 * MC_US_PER_S;
    while (r.calls == 0 && mc_clock_now_us() < end)
        event_base_loop(eb, EVLOOP_ONCE);
    ck_assert_msg(r.calls == 1 && r.status == MC_REPLY_OK, "no answer to REGISTER");
    Mc__Control__RegisterReply *rep = mc__control__register_reply__unpack(NULL, r.len, r.data);
    ck_assert_ptr_nonnull(rep);
    ck_assert_msg(rep->status == MC__CONTROL__REGISTER_STATUS__REGISTER_OK, "REGISTER: %s",
                  rep->reason);
    ck_assert_ptr_nonnull(rep->self);
    f->id = rep->self->id;
    f->instance = rep->manager_instance;
    mc__control__register_reply__free_unpacked(rep, NULL);
    f->beat = event_new(eb, -1, EV_PERSIST, fake_beat, f);
    struct timeval tv = {0, 300 * 1000};
    event_add(f->beat, &tv);
}

/* The internal trust boundary around PREPARE_LOGIN: a sender without the cluster secret
 * gets nothing at all; a member of the cluster that is not a live loginapp is refused; a
 * registered loginapp's requests are checked (malformed ones refused) and served. */
START_TEST(test_prepare_login_from_a_stranger)
{
    lc c;
    lc_start(&c, 1, NULL);
    const char *base = c.pc.base_name[0], *addr = c.pc.base_addr[0];
    struct event_base *eb = event_base_new();
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.bind = "127.0.0.1:0";
    mc_nub *stranger = NULL;
    ck_assert_int_eq(mc_nub_new(eb, &cfg, &stranger), MC_OK);
    mc_test_secret_apply(&cfg);
    mc_nub *nub = NULL;
    ck_assert_int_eq(mc_nub_new(eb, &cfg, &nub), MC_OK);
    Mc__Login__PrepareLoginRequest good = MC__LOGIN__PREPARE_LOGIN_REQUEST__INIT;
    good.account_name = "kim";
    good.entity_type = "Account";
    uint8_t gbuf[256];
    size_t glen = mc__login__prepare_login_request__pack(&good, gbuf);
    Mc__Login__PrepareLoginReply *r = NULL;

    /* Without the secret: no answer at all, nothing issued, the packets counted as forged. */
    long long forged = pc_int(&c.pc, base, "nub/drops/badAuth");
    ck_assert(!prepare_try(eb, stranger, addr, gbuf, glen, 2, &r));
    ck_assert_ptr_null(r);
    ck_assert_int_gt(pc_int(&c.pc, base, "nub/drops/badAuth"), forged);
    ck_assert_int_eq(pc_int(&c.pc, base, "login/prepare/requests"), 0);
    ck_assert_int_eq(pc_int(&c.pc, base, "sessions/issued"), 0);

    /* With the secret, but not a loginapp the manager announced: refused. */
    ck_assert(prepare_try(eb, nub, addr, gbuf, glen, 10, &r));
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->status, MC__LOGIN__PREPARE_STATUS__PREPARE_BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(r->reason, "loginapps only"));
    mc__login__prepare_login_reply__free_unpacked(r, NULL);
    ck_assert_int_eq(pc_int(&c.pc, base, "login/prepare/notLoginapp"), 1);
    ck_assert_int_eq(pc_int(&c.pc, base, "sessions/issued"), 0);
    ck_assert_int_eq(pc_int(&c.pc, base, "entities/count"), 0);

    /* Registered as a loginapp (and heartbeating): the baseapp hears of its birth. */
    long long births = pc_int(&c.pc, base, "peers/births");
    fake_loginapp fl;
    fake_loginapp_register(&fl, eb, nub, c.pc.manager, c.digest);
    for (int i = 0; i < 500 && pc_int(&c.pc, base, "peers/births") <= births; i++) {
        event_base_loop(eb, EVLOOP_NONBLOCK);
        h_sleep_ms(20);
    }
    ck_assert_int_gt(pc_int(&c.pc, base, "peers/births"), births);

    /* Not protobuf, empty, a name too long, an empty name, an unknown type. */
    static const uint8_t junk[] = {0xFF, 0xFF, 0xFF, 0x07, 0x12};
    r = prepare(eb, nub, addr, junk, sizeof junk);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->status, MC__LOGIN__PREPARE_STATUS__PREPARE_BAD_REQUEST);
    mc__login__prepare_login_reply__free_unpacked(r, NULL);
    r = prepare(eb, nub, addr, NULL, 0);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->status, MC__LOGIN__PREPARE_STATUS__PREPARE_BAD_REQUEST);
    mc__login__prepare_login_reply__free_unpacked(r, NULL);
    char longname[80];
    memset(longname, 'x', 65);
    longname[65] = '\0';
    ck_assert_int_eq(prepare_msg(eb, nub, addr, longname, "Account", NULL),
                     MC__LOGIN__PREPARE_STATUS__PREPARE_BAD_REQUEST);
    ck_assert_int_eq(prepare_msg(eb, nub, addr, "", "Account", NULL),
                     MC__LOGIN__PREPARE_STATUS__PREPARE_BAD_REQUEST);
    ck_assert_int_eq(prepare_msg(eb, nub, addr, "evil\nname", "Account", NULL),
                     MC__LOGIN__PREPARE_STATUS__PREPARE_BAD_REQUEST);
    ck_assert_int_eq(prepare_msg(eb, nub, addr, "kim", "NoSuchType", NULL),
                     MC__LOGIN__PREPARE_STATUS__PREPARE_BAD_REQUEST);
    /* One-way: nobody to answer; refused and counted. */
    long long refused = pc_int(&c.pc, base, "calls/refused/malformed");
    mc_address a;
    ck_assert_int_eq(mc_address_parse(addr, &a), MC_OK);
    mc_channel *ch = mc_nub_channel(nub, &a, MC_CHANNEL_INTERNAL);
    ck_assert_int_eq(mc_channel_send_message(ch, &prepare_def, junk, sizeof junk), MC_OK);
    ck_assert_int_eq(mc_channel_send(ch), MC_OK);
    for (int i = 0; i < 200 && pc_int(&c.pc, base, "calls/refused/malformed") <= refused; i++)
        event_base_loop(eb, EVLOOP_NONBLOCK), h_sleep_ms(20);
    ck_assert_int_gt(pc_int(&c.pc, base, "calls/refused/malformed"), refused);
    ck_assert_int_eq(pc_int(&c.pc, base, "login/prepare/malformed"), 6);
    ck_assert_int_eq(pc_int(&c.pc, base, "entities/count"), 0);
    ck_assert_int_eq(pc_int(&c.pc, base, "sessions/issued"), 0);

    /* Still serving: a good one makes the account's base and a session; a second one without
     * takeover is "already logged in". */
    ck_assert(h_alive(c.pc.base[0]));
    ck_assert_int_eq(prepare_msg(eb, nub, addr, "kim", "Account", &r),
                     MC__LOGIN__PREPARE_STATUS__PREPARE_OK);
    ck_assert_uint_ne(r->session_id, 0);
    ck_assert_uint_eq(r->session_key.len, 32);
    ck_assert_uint_gt(r->dbid, 0);
    ck_assert_int_eq(port_of(r->external_addr), base_ext_port(&c, 0));
    mc__login__prepare_login_reply__free_unpacked(r, NULL);
    ck_assert_int_eq(prepare_msg(eb, nub, addr, "kim", "Account", NULL),
                     MC__LOGIN__PREPARE_STATUS__PREPARE_ALREADY_LOGGED_IN);
    ck_assert_int_eq(pc_int(&c.pc, base, "entities/count"), 1);
    event_free(fl.beat);
    mc_nub_free(nub);
    mc_nub_free(stranger);
    event_base_free(eb);
    lc_stop(&c);
}
END_TEST

/* Bad configuration: one line, exit 1. */
START_TEST(test_bad_options)
{
    char bin[512], out[2048];
    char *bad_online[] = {(char *)h_bin("loginapp", bin, sizeof bin), "--loginKey=/nonexistent",
                          "--redis=127.0.0.1:1", "--onlineLogin=both", NULL};
    ck_assert_int_eq(h_run(bad_online, out, sizeof out, 10000), 1);
    ck_assert_msg(strstr(out, "--onlineLogin"), "%s", out);
    char *bad_redis[] = {(char *)h_bin("loginapp", bin, sizeof bin), "--loginKey=/nonexistent",
                         "--redis=localhost:6379", NULL};
    ck_assert_int_eq(h_run(bad_redis, out, sizeof out, 10000), 1);
    ck_assert_msg(strstr(out, "--redis"), "%s", out);
    char *bad_key[] = {(char *)h_bin("loginapp", bin, sizeof bin), "--loginKey=/nonexistent",
                       "--redis=127.0.0.1:1", "--manager=127.0.0.1:1", NULL};
    ck_assert_int_eq(h_run(bad_key, out, sizeof out, 10000), 1);
    ck_assert_msg(strstr(out, "--loginKey"), "%s", out);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("loginapp_process");
    TCase *tc = tcase_create("process");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_bad_options);
    tcase_add_test(tc, test_address_limit);
    tcase_add_test(tc, test_autocreate_refuse);
    tcase_add_test(tc, test_takeover_and_limits);
    tcase_add_test(tc, test_prepare_login_from_a_stranger);
    tcase_add_test(tc, test_login_and_play);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    return h_run_suite(suite());
}
