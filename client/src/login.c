/* The client side of logging in (mcclient/login.h). */
#include "mcclient/login.h"
#include "secure/resume.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct mc_login_attempt {
    mc_login_config cfg;
    int fd;
    mc_secure_client sc;
    mc_login_credentials cred;
    bool resume;                                 /* a RESUME (mc_resume_start) */
    uint8_t ticket[MC_RESUME_TICKET_SIZE];
    uint8_t resume_key[MC_RESUME_KEY_BYTES];
    uint64_t started_ms, last_sent_ms, challenged_ms;
    int final;                 /* MC_LOGIN_PENDING until done */
    mc_login_result result;
    uint32_t sent, received, ignored;
};

static int parse_addr(const char *text, struct sockaddr_in *out)
{
    char host[64];
    const char *colon = text ? strrchr(text, ':') : NULL;
    if (!colon || (size_t)(colon - text) >= sizeof host)
        return -1;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    char *end;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || errno || port == 0 || port > 65535 || colon[1] == '-' || colon[1] == '\0')
        return -1;
    memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    out->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &out->sin_addr) == 1 ? 0 : -1;
}

static void send_now(mc_login_attempt *a, uint64_t now_ms)
{
    uint8_t buf[MC_LOGIN_SIZE];
    size_t n = 0;
    if (a->sc.state == MC_SECURE_CLIENT_HELLO)
        n = mc_secure_client_packet(&a->sc, buf);
    else if (a->resume)
        n = mc_resume_client_request(&a->sc, a->ticket, a->resume_key, buf) == MC_SECURE_OK
                ? MC_RESUME_SIZE
                : 0;
    else if (mc_login_client_request(&a->sc, &a->cred, a->cfg.loginapp_pk, buf) == MC_SECURE_OK)
        n = MC_LOGIN_SIZE;
    if (n && send(a->fd, buf, n, 0) == (ssize_t)n)
        a->sent++;
    sodium_memzero(buf, sizeof buf);
    a->last_sent_ms = now_ms;
}

static void finish(mc_login_attempt *a, int status)
{
    a->final = status;
    a->result.status = status;
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    sodium_memzero(&a->cred, sizeof a->cred);
    sodium_memzero(a->resume_key, sizeof a->resume_key);
    mc_secure_client_clear(&a->sc);
}

/* The attempt's socket, connected to the loginapp (bound to cfg->bind_ip when set), and the
 * first packet. 0, or -1 with a reason (the attempt is then finished). */
static int open_and_send(mc_login_attempt *a, const struct sockaddr_in *to, uint64_t now_ms,
                         char *err, size_t errlen)
{
    const mc_login_config *cfg = &a->cfg;
    uint8_t zero[MC_SECURE_KEY_BYTES] = {0};
    a->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in src = {.sin_family = AF_INET};
    errno = 0;
    if (a->fd >= 0 && cfg->bind_ip &&
        (inet_pton(AF_INET, cfg->bind_ip, &src.sin_addr) != 1 ||
         bind(a->fd, (struct sockaddr *)&src, sizeof src) != 0)) {
        snprintf(err, errlen, "cannot bind the login socket to '%s': %s", cfg->bind_ip,
                 strerror(errno ? errno : EINVAL));
        finish(a, MC_LOGIN_SERVER_ERROR);
        return -1;
    }
    if (a->fd < 0 || connect(a->fd, (const struct sockaddr *)to, sizeof *to) != 0 ||
        mc_secure_client_init(&a->sc, 0, zero) != 0) {
        snprintf(err, errlen, "cannot open a socket to %s: %s", cfg->loginapp, strerror(errno));
        finish(a, MC_LOGIN_SERVER_ERROR);
        return -1;
    }
    a->started_ms = now_ms;
    send_now(a, now_ms);
    return 0;
}

static mc_login_attempt *new_attempt(const mc_login_config *cfg)
{
    mc_login_attempt *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->cfg = *cfg;
    if (!a->cfg.resend_ms)
        a->cfg.resend_ms = 250;
    if (!a->cfg.timeout_ms)
        a->cfg.timeout_ms = 10000;
    a->final = MC_LOGIN_PENDING;
    a->fd = -1;
    return a;
}

mc_login_attempt *mc_login_start(const mc_login_config *cfg, const char *name,
                                 const char *password, uint8_t flags, uint64_t now_ms,
                                 char *err, size_t errlen)
{
    struct sockaddr_in to;
    if (!cfg || parse_addr(cfg->loginapp, &to) != 0) {
        snprintf(err, errlen, "loginapp address '%s' is not a.b.c.d:port",
                 cfg && cfg->loginapp ? cfg->loginapp : "");
        return NULL;
    }
    size_t nl = name ? strlen(name) : 0, pl = password ? strlen(password) : 0;
    if (nl == 0 || nl > MC_LOGIN_NAME_MAX) {
        snprintf(err, errlen, "account name must be 1..%u bytes", MC_LOGIN_NAME_MAX);
        return NULL;
    }
    if (pl > MC_LOGIN_PASSWORD_MAX) {
        snprintf(err, errlen, "password must be at most %u bytes", MC_LOGIN_PASSWORD_MAX);
        return NULL;
    }
    if (flags & ~MC_LOGIN_FLAG_TAKEOVER) {
        snprintf(err, errlen, "unknown login flags 0x%x", (unsigned)flags);
        return NULL;
    }
    mc_login_attempt *a = new_attempt(cfg);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    memcpy(a->cred.name, name, nl);
    memcpy(a->cred.password, password, pl);
    a->cred.password_len = pl;
    memcpy(a->cred.digest, cfg->digest, MC_LOGIN_DIGEST_BYTES);
    a->cred.flags = flags;
    if (open_and_send(a, &to, now_ms, err, errlen) != 0) {
        free(a);
        return NULL;
    }
    return a;
}

mc_login_attempt *mc_resume_start(const mc_login_config *cfg,
                                  const uint8_t ticket[MC_RESUME_TICKET_SIZE],
                                  const uint8_t resume_key[MC_RESUME_KEY_BYTES], uint64_t now_ms,
                                  char *err, size_t errlen)
{
    struct sockaddr_in to;
    if (!cfg || parse_addr(cfg->loginapp, &to) != 0) {
        snprintf(err, errlen, "loginapp address '%s' is not a.b.c.d:port",
                 cfg && cfg->loginapp ? cfg->loginapp : "");
        return NULL;
    }
    mc_login_attempt *a = new_attempt(cfg);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    a->resume = true;
    memcpy(a->ticket, ticket, MC_RESUME_TICKET_SIZE);
    memcpy(a->resume_key, resume_key, MC_RESUME_KEY_BYTES);
    if (open_and_send(a, &to, now_ms, err, errlen) != 0) {
        free(a);
        return NULL;
    }
    return a;
}

int mc_login_fd(const mc_login_attempt *a) { return a->fd; }

uint64_t mc_login_next_ms(const mc_login_attempt *a)
{
    uint64_t resend = a->last_sent_ms + a->cfg.resend_ms;
    uint64_t end = a->started_ms + a->cfg.timeout_ms;
    return resend < end ? resend : end;
}

/* One datagram from the loginapp. */
static void receive(mc_login_attempt *a, const uint8_t *buf, size_t n, uint64_t now_ms)
{
    mc_secure_keys unused;
    if (n && buf[0] == MC_SECURE_CHALLENGE) {
        int prev = a->sc.state;
        if (mc_secure_client_receive(&a->sc, buf, n, &unused) != MC_SECURE_OK) {
            a->ignored++;
            return;
        }
        a->challenged_ms = now_ms;
        if (prev == MC_SECURE_CLIENT_HELLO)
            send_now(a, now_ms); /* the LOGIN at once */
        return;
    }
    if (n && buf[0] == (a->resume ? MC_SECURE_RESUME_REPLY : MC_SECURE_LOGIN_REPLY) &&
        a->sc.state == MC_SECURE_CLIENT_CONNECT) {
        mc_login_result r;
        int rc = a->resume ? mc_resume_client_reply(&a->sc, a->resume_key, buf, n, &r)
                           : mc_login_client_reply(&a->sc, a->cfg.loginapp_pk, buf, n, &r);
        if (rc != MC_SECURE_OK) {
            a->ignored++;
            return;
        }
        a->result = r;
        sodium_memzero(&r, sizeof r);
        finish(a, a->result.status);
        return;
    }
    a->ignored++;
}

int mc_login_tick(mc_login_attempt *a, uint64_t now_ms)
{
    if (a->final != MC_LOGIN_PENDING)
        return a->final;
    uint8_t buf[2048];
    for (int i = 0; i < 64 && a->final == MC_LOGIN_PENDING; i++) {
        ssize_t n = recv(a->fd, buf, sizeof buf, 0);
        if (n < 0)
            break; /* EAGAIN, or an ICMP error (refused): resends go on until the timeout */
        a->received++;
        receive(a, buf, (size_t)n, now_ms);
    }
    if (a->final != MC_LOGIN_PENDING)
        return a->final;
    if (now_ms >= a->started_ms + a->cfg.timeout_ms) {
        finish(a, MC_LOGIN_TIMED_OUT);
        return a->final;
    }
    /* a cookie lives MC_SECURE_COOKIE_MS: past most of it without an answer, ask again */
    if (a->sc.state == MC_SECURE_CLIENT_CONNECT &&
        now_ms >= a->challenged_ms + MC_SECURE_COOKIE_MS * 3 / 4)
        a->sc.state = MC_SECURE_CLIENT_HELLO;
    if (now_ms >= a->last_sent_ms + a->cfg.resend_ms)
        send_now(a, now_ms);
    return MC_LOGIN_PENDING;
}

const mc_login_result *mc_login_result_of(const mc_login_attempt *a) { return &a->result; }

void mc_login_counts(const mc_login_attempt *a, uint32_t *sent, uint32_t *received,
                     uint32_t *ignored)
{
    *sent = a->sent;
    *received = a->received;
    *ignored = a->ignored;
}

void mc_login_free(mc_login_attempt *a)
{
    if (!a)
        return;
    if (a->fd >= 0)
        close(a->fd);
    sodium_memzero(a, sizeof *a);
    free(a);
}
