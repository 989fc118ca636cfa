/* The loginapp's external socket: a plain non-blocking UDP socket (login packets are not
 * Mercury) bound on the framework's external address once the framework released its own
 * (mc_server_release_external). HELLO is answered
 * with a CHALLENGE at once, keeping nothing; a LOGIN is checked (cookie), answered from the
 * remembered replies, held to its address's bucket, and only then opened (the boxed
 * credentials: one X25519) and becomes a login, or is answered or dropped and counted. A
 * RESUME (secure/resume.h) goes through the same checks, then its ticket is opened and its
 * proof checked (no public-key work) and it becomes a resumption (resume_flow.c). Every
 * other datagram is dropped and counted. */
#include "loginapp.h"
#include "common/clock.h"
#include "common/log.h"
#include "mercury/address.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READS_PER_WAKE 256

static uint64_t now_ms(void) { return mc_clock_now_us() / 1000u; }

int la_open_external(loginapp *la, char *err, size_t errlen)
{
    /* The framework's plain external socket makes way for ours on the same address (the
     * one registration announces). */
    char addr[MC_ADDRESS_STRLEN];
    snprintf(addr, sizeof addr, "%s", mc_server_external_addr(la->server));
    mc_server_release_external(la->server);
    mc_address a;
    if (mc_address_parse(addr, &a) != 0) {
        snprintf(err, errlen, "the external address '%s' is not IP:PORT", addr);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open the external socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_in sa;
    mc_address_to_sockaddr(&a, &sa);
    int buf = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(err, errlen, "cannot open the external interface on %s: %s", addr,
                 strerror(errno));
        close(fd);
        return -1;
    }
    la->fd = fd;
    return 0;
}

void la_send(loginapp *la, mc_secure_peer to, const uint8_t *data, size_t len)
{
    if (la->freeing || la->fd < 0)
        return;
    mc_address a = {.ip = to.ip, .port = to.port};
    struct sockaddr_in sa;
    mc_address_to_sockaddr(&a, &sa);
    if (sendto(la->fd, data, len, 0, (struct sockaddr *)&sa, sizeof sa) != (ssize_t)len)
        la->st.send_errors++;
}

/* The verdict of a cookie check (LOGIN and RESUME): true to go on; else the drop is
 * counted by its reason. */
static bool cookie_ok(loginapp *la, int rc)
{
    switch (rc) {
    case MC_SECURE_OK:
        return true;
    case MC_SECURE_BAD_COOKIE:
        la->st.dropped[LA_DROP_BAD_COOKIE]++;
        return false;
    case MC_SECURE_EXPIRED:
        la->st.dropped[LA_DROP_EXPIRED]++;
        return false;
    default:
        la->st.dropped[LA_DROP_MALFORMED]++;
        return false;
    }
}

/* What a LOGIN or a RESUME with a good cookie meets before any key work: a loginapp
 * shutting down, a remembered answer (sent again) or one still pending, then the source
 * address's bucket: over it, a few answers (each costs the work of its box), then silence.
 * True to go on, *within false when over the bucket (a refusal is answered). */
static bool before_key_work(loginapp *la, mc_secure_peer from,
                            const uint8_t nonce[8], bool *within)
{
    if (la->freeing || la->shutting_down) {
        la->st.dropped[LA_DROP_SHUTDOWN]++;
        return false;
    }
    uint64_t now = mc_clock_now_us();
    la_reply_key key = {.ip = from.ip, .port = from.port};
    memcpy(key.nonce, nonce, sizeof key.nonce);
    uint8_t reply[MC_LOGIN_REPLY_SIZE];
    switch (la_replies_lookup(la->replies, &key, now, reply)) {
    case LA_REPLY_ANSWERED:
        la->st.repeated++;
        la_send(la, from, reply, sizeof reply);
        return false;
    case LA_REPLY_PENDING:
        la->st.dropped[LA_DROP_PENDING]++;
        return false;
    case LA_REPLY_NONE:
        break;
    }
    uint32_t ip = from.ip;
    *within = mc_limits_take(la->addr_limits, &ip, sizeof ip, now, NULL);
    if (!*within && !mc_limits_take(la->addr_refusals, &ip, sizeof ip, now, NULL)) {
        la->st.dropped[LA_DROP_RATE_LIMITED]++;
        return false;
    }
    return true;
}

/* A LOGIN: everything that costs no public-key operation comes first (the cookie, the
 * remembered answers, the source address's bucket); only then the one X25519 that opens the
 * credentials and boxes the answer. */
static void on_login_packet(loginapp *la, mc_secure_peer from, const uint8_t *pkt, size_t len)
{
    if (!la->has_key) {
        la->st.dropped[LA_DROP_NO_KEY]++;
        return;
    }
    mc_login_request req;
    int rc = mc_login_server_check(&la->secret, from, now_ms(), pkt, len, &req);
    if (!cookie_ok(la, rc))
        return;
    /* The cookie is good: the source address is proven. */
    la->st.logins++;
    bool within;
    if (!before_key_work(la, from, req.client_nonce, &within))
        return;
    rc = mc_login_server_unbox(la->sk, pkt, len, &req);
    if (rc == MC_SECURE_MALFORMED) { /* no key can be agreed with the client's: no answer */
        la->st.dropped[LA_DROP_MALFORMED]++;
        mc_login_request_clear(&req);
        return;
    }
    if (!within)
        la_login_refuse(la, from, &req, MC_LOGIN_RATE_LIMITED);
    else if (rc == MC_SECURE_AUTH) /* the box does not open here, or is malformed inside */
        la_login_refuse(la, from, &req, MC_LOGIN_MALFORMED);
    else
        la_login_start(la, from, &req);
    mc_login_request_clear(&req);
}

/* A RESUME: as a LOGIN, everything without key work first (the cookie, the remembered
 * answers, the source address's bucket); then the ticket is opened (symmetric: no public-key
 * operation at all) and its proof checked. A ticket that does not open, or a proof not by its
 * resume key, is dropped unanswered and counted (whoever sent it cannot read an answer). */
static void on_resume_packet(loginapp *la, mc_secure_peer from, const uint8_t *pkt, size_t len)
{
    mc_resume_request req;
    int rc = mc_resume_server_check(&la->secret, from, now_ms(), pkt, len, &req);
    if (!cookie_ok(la, rc))
        return;
    la->st.resumes++;
    bool within;
    if (!before_key_work(la, from, req.client_nonce, &within))
        return;
    rc = mc_resume_server_open(la->ticket_key, pkt, len, &req);
    if (rc == MC_SECURE_AUTH) {
        la->st.resume_forged++;
        if (la->st.resume_forged <= 10 || la->st.resume_forged % 1000 == 0)
            MC_WARNING("RESUME from %u.%u.%u.%u dropped: its ticket was not sealed by this "
                       "cluster (%llu so far)", from.ip >> 24, (from.ip >> 16) & 255,
                       (from.ip >> 8) & 255, from.ip & 255,
                       (unsigned long long)la->st.resume_forged);
    } else if (rc == MC_SECURE_BAD_PROOF) {
        la->st.resume_bad_proof++;
        if (la->st.resume_bad_proof <= 10 || la->st.resume_bad_proof % 1000 == 0)
            MC_WARNING("RESUME from %u.%u.%u.%u dropped: a real ticket without its key's "
                       "proof (copied?) (%llu so far)", from.ip >> 24, (from.ip >> 16) & 255,
                       (from.ip >> 8) & 255, from.ip & 255,
                       (unsigned long long)la->st.resume_bad_proof);
    } else if (rc != MC_SECURE_OK) {
        la->st.dropped[LA_DROP_MALFORMED]++;
    } else if (!within) {
        la_resume_refuse(la, from, &req, MC_LOGIN_RATE_LIMITED);
    } else {
        la_resume_start(la, from, &req);
    }
    mc_resume_request_clear(&req);
}

static void on_datagram(loginapp *la, mc_secure_peer from, const uint8_t *pkt, size_t len)
{
    la->st.datagrams++;
    if (len < 1) {
        la->st.dropped[LA_DROP_MALFORMED]++;
        return;
    }
    if (pkt[0] == MC_SECURE_HELLO) {
        uint8_t out[MC_SECURE_CHALLENGE_SIZE];
        if (mc_secure_server_hello(&la->secret, from, now_ms(), pkt, len, out) != MC_SECURE_OK) {
            la->st.dropped[LA_DROP_MALFORMED]++;
            return;
        }
        la->st.hellos++;
        la_send(la, from, out, sizeof out);
        return;
    }
    if (pkt[0] == MC_SECURE_LOGIN) {
        on_login_packet(la, from, pkt, len);
        return;
    }
    if (pkt[0] == MC_SECURE_RESUME) {
        on_resume_packet(la, from, pkt, len);
        return;
    }
    la->st.dropped[LA_DROP_MALFORMED]++;
}

static void on_readable(evutil_socket_t fd, short what, void *ctx)
{
    (void)what;
    loginapp *la = ctx;
    uint8_t buf[2048];
    for (int i = 0; i < READS_PER_WAKE; i++) {
        struct sockaddr_in sa;
        socklen_t slen = sizeof sa;
        ssize_t n = recvfrom(fd, buf, sizeof buf, MSG_TRUNC, (struct sockaddr *)&sa, &slen);
        if (n < 0)
            return; /* EAGAIN: empty (other errors: ICMP reports, try again later) */
        if (slen != sizeof sa || sa.sin_family != AF_INET)
            continue;
        mc_address a;
        mc_address_from_sockaddr(&sa, &a);
        mc_secure_peer from = {.ip = a.ip, .port = a.port};
        if ((size_t)n > sizeof buf) {
            la->st.datagrams++;
            la->st.dropped[LA_DROP_MALFORMED]++;
            continue;
        }
        on_datagram(la, from, buf, (size_t)n);
    }
}

int la_external_start(loginapp *la)
{
    if (mc_secure_secret_init(&la->secret) != 0)
        return -1;
    la->secret_rotated_ms = now_ms();
    la->read_ev = event_new(la->base, la->fd, EV_READ | EV_PERSIST, on_readable, la);
    return la->read_ev && event_add(la->read_ev, NULL) == 0 ? 0 : -1;
}

void la_external_close(loginapp *la)
{
    if (la->read_ev) {
        event_free(la->read_ev);
        la->read_ev = NULL;
    }
    if (la->fd >= 0) {
        close(la->fd);
        la->fd = -1;
    }
}
