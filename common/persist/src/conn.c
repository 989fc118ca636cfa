/* One connection to one Redis node: non-blocking connect through hiredis's libevent adapter,
 * AUTH, SCRIPT LOAD of every script, then READY; reconnect with exponential back-off. */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "internal.h"

/* A numeric IPv4 or IPv6 address (host names are never resolved: hiredis would resolve
 * them with a blocking getaddrinfo on the event loop). */
bool mc_is_numeric_host(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

int mc_parse_addr(const char *addr, char *host, size_t hostlen, int *port)
{
    const char *colon = addr ? strrchr(addr, ':') : NULL;
    if (!colon || colon == addr || (size_t)(colon - addr) >= hostlen)
        return -1;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p <= 0 || p > 65535)
        return -1;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    *port = (int)p;
    return mc_is_numeric_host(host) ? 0 : -2;
}

static void retry_cb(evutil_socket_t fd, short what, void *arg);

mc_persist_conn *mc_conn_new(mc_persist_store *s, const char *host, int port)
{
    mc_persist_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->s = s;
    snprintf(c->host, sizeof c->host, "%s", host);
    c->port = port;
    snprintf(c->addr, sizeof c->addr, "%s:%d", host, port);
    c->retry_ev = evtimer_new(s->base, retry_cb, c);
    if (!c->retry_ev) {
        free(c);
        return NULL;
    }
    c->backoff_ms = s->cfg.backoff_min_ms;
    return c;
}

/* Detach and free the hiredis context from outside its callbacks. */
static void close_ctx(mc_persist_conn *c)
{
    redisAsyncContext *ac = c->ac;
    if (!ac)
        return;
    c->ac = NULL;
    ac->data = NULL; /* the disconnect callback then ignores it */
    redisAsyncFree(ac);
}

void mc_conn_free(mc_persist_conn *c)
{
    if (!c)
        return;
    close_ctx(c);
    free(c->fmt);
    event_free(c->retry_ev);
    free(c);
}

static void schedule_retry(mc_persist_conn *c)
{
    c->state = CONN_DOWN;
    c->state_since = mc_clock_now_us();
    if (c->s->closing)
        return;
    struct timeval tv = {c->backoff_ms / 1000, (c->backoff_ms % 1000) * 1000};
    evtimer_add(c->retry_ev, &tv);
    uint32_t next = c->backoff_ms * 2;
    c->backoff_ms = next > c->s->cfg.backoff_max_ms ? c->s->cfg.backoff_max_ms : next;
}

static void lost(mc_persist_conn *c, const char *why)
{
    bool was_ready = c->state == CONN_READY;
    if (was_ready || c->ever_ready)
        c->s->reconnects++;
    if (c->s->auth_failed)
        MC_DEBUG("persist: redis %s: %s", c->addr, why); /* keep the credentials error */
    else
        mc_store_error(c->s, "redis %s: %s", c->addr, why);
    mc_store_conn_lost(c->s, c, &c->inflight);
    schedule_retry(c);
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    mc_persist_conn *c = ac->data;
    if (!c)
        return; /* freed by us */
    c->ac = NULL;
    lost(c, status == REDIS_OK ? "connection closed" : (ac->errstr[0] ? ac->errstr : "I/O error"));
}

static void handshake_step_done(mc_persist_conn *c)
{
    if (--c->handshake_left > 0 || c->handshake_failed)
        return;
    c->state = CONN_READY;
    c->state_since = mc_clock_now_us();
    c->backoff_ms = c->s->cfg.backoff_min_ms;
    c->ever_ready = true;
    mc_store_conn_ready(c->s, c);
}

static void handshake_fail(mc_persist_conn *c, const char *what, const redisReply *reply)
{
    if (c->handshake_failed)
        return;
    c->handshake_failed = true;
    char why[300];
    snprintf(why, sizeof why, "%s: %.*s", what, reply ? (int)reply->len : 0,
             reply && reply->str ? reply->str : "");
    bool auth = reply && reply->str &&
                (strncmp(reply->str, "WRONGPASS", 9) == 0 || strncmp(reply->str, "NOAUTH", 6) == 0 ||
                 strstr(reply->str, "invalid password") || strstr(reply->str, "invalid username"));
    if (auth)
        mc_store_auth_failed(c->s, why);
    else
        mc_store_error(c->s, "redis %s: %s", c->addr, why);
    /* Graceful: the disconnect callback schedules the reconnect. */
    redisAsyncDisconnect(c->ac);
}

static void auth_reply(redisAsyncContext *ac, void *r, void *priv)
{
    mc_persist_conn *c = priv;
    const redisReply *reply = r;
    if (!reply || !ac->data)
        return;
    mc_persist_store *s = c->s;
    mc_store_enter(s);
    if (reply->type == REDIS_REPLY_ERROR)
        handshake_fail(c, "AUTH refused", reply);
    else
        handshake_step_done(c);
    mc_store_leave(s);
}

static void script_reply(redisAsyncContext *ac, void *r, void *priv)
{
    const redisReply *reply = r;
    /* hs lives inside the connection: not read before we know the connection is ours (a
     * context being freed answers its pending commands with NULL, data cleared). */
    if (!reply || !ac->data)
        return;
    mc_conn_hs *hs = priv;
    mc_persist_conn *c = hs->c;
    if (c->handshake_failed)
        return;
    /* A refusal fails requests whose callbacks may free the store: inside enter/leave, and
     * nothing of c or s touched after leave. */
    mc_persist_store *s = c->s;
    mc_store_enter(s);
    if (reply->type != REDIS_REPLY_STRING || reply->len != 40) {
        handshake_fail(c, "SCRIPT LOAD failed", reply);
    } else {
        /* The sha of a script is the same on every node and after every restart. */
        memcpy(s->shas[hs->i], reply->str, 40);
        s->shas[hs->i][40] = '\0';
        handshake_step_done(c);
    }
    mc_store_leave(s);
}

static void on_connect(const redisAsyncContext *cac, int status)
{
    mc_persist_conn *c = cac->data;
    if (!c)
        return;
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    if (status != REDIS_OK) {
        c->ac = NULL; /* hiredis frees it after this callback */
        lost(c, ac->errstr[0] ? ac->errstr : "connect failed");
        return;
    }
    c->state = CONN_HANDSHAKE;
    c->state_since = mc_clock_now_us();
    c->handshake_failed = false;
    c->handshake_left = 0;
    mc_persist_store *s = c->s;
    if (s->password) {
        if (s->user)
            redisAsyncCommand(ac, auth_reply, c, "AUTH %s %s", s->user, s->password);
        else
            redisAsyncCommand(ac, auth_reply, c, "AUTH %s", s->password);
        c->handshake_left++;
    }
    for (int i = 0; i < MC_SCRIPT_COUNT; i++) {
        c->hs[i].c = c;
        c->hs[i].i = i;
        redisAsyncCommand(ac, script_reply, &c->hs[i], "SCRIPT LOAD %s", mc_script_source(i));
        c->handshake_left++;
    }
}

void mc_conn_start(mc_persist_conn *c)
{
    if (c->ac || c->s->closing)
        return;
    c->state = CONN_CONNECTING;
    c->state_since = mc_clock_now_us();
    redisAsyncContext *ac = redisAsyncConnect(c->host, c->port);
    if (!ac) {
        lost(c, "out of memory");
        return;
    }
    if (ac->err) {
        char why[200];
        snprintf(why, sizeof why, "%s", ac->errstr);
        redisAsyncFree(ac);
        lost(c, why);
        return;
    }
    ac->data = c;
    c->ac = ac;
    if (redisLibeventAttach(ac, c->s->base) != REDIS_OK) {
        close_ctx(c);
        lost(c, "cannot attach to the event loop");
        return;
    }
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
}

static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    mc_persist_conn *c = arg;
    mc_persist_store *s = c->s;
    mc_store_enter(s);
    mc_conn_start(c);
    mc_store_leave(s);
}

void mc_conn_drop(mc_persist_conn *c, const char *why)
{
    if (!c->ac)
        return;
    close_ctx(c);
    lost(c, why);
}

static void req_reply(redisAsyncContext *ac, void *r, void *priv);

/* The Redis protocol (RESP) form of a command, built in the connection's buffer (one
 * allocation per connection instead of hiredis formatting every argument). */
static bool fmt_room(mc_persist_conn *c, size_t more)
{
    if (c->fmt_len + more <= c->fmt_cap)
        return true;
    size_t cap = c->fmt_cap ? c->fmt_cap : 4096;
    while (cap < c->fmt_len + more)
        cap *= 2;
    char *g = realloc(c->fmt, cap);
    if (!g)
        return false;
    c->fmt = g;
    c->fmt_cap = cap;
    return true;
}

static bool fmt_header(mc_persist_conn *c, char kind, size_t n)
{
    char digits[24];
    int k = 0;
    do {
        digits[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    if (!fmt_room(c, (size_t)k + 3))
        return false;
    c->fmt[c->fmt_len++] = kind;
    while (k)
        c->fmt[c->fmt_len++] = digits[--k];
    c->fmt[c->fmt_len++] = '\r';
    c->fmt[c->fmt_len++] = '\n';
    return true;
}

static bool fmt_arg(mc_persist_conn *c, const char *data, size_t len)
{
    if (!fmt_header(c, '$', len) || !fmt_room(c, len + 2))
        return false;
    memcpy(c->fmt + c->fmt_len, data, len);
    c->fmt_len += len;
    c->fmt[c->fmt_len++] = '\r';
    c->fmt[c->fmt_len++] = '\n';
    return true;
}

int mc_conn_send(mc_persist_conn *c, mc_persist_req *r)
{
    c->fmt_len = 0;
    bool ok;
    if (r->script >= 0) {
        char nk[16];
        int nkl = snprintf(nk, sizeof nk, "%d", r->numkeys);
        const char *body = r->use_eval ? mc_script_source(r->script) : c->s->shas[r->script];
        ok = fmt_header(c, '*', (size_t)r->nargs + 3) &&
             (r->use_eval ? fmt_arg(c, "EVAL", 4) : fmt_arg(c, "EVALSHA", 7)) &&
             fmt_arg(c, body, strlen(body)) && fmt_arg(c, nk, (size_t)nkl);
    } else {
        ok = fmt_header(c, '*', (size_t)r->nargs);
    }
    for (int i = 0; ok && i < r->nargs; i++)
        ok = fmt_arg(c, r->args[i], r->lens[i]);
    /* hiredis looks at the command with strchr (to spot SUBSCRIBE): it must end in a NUL */
    ok = ok && fmt_room(c, 1);
    if (ok)
        c->fmt[c->fmt_len] = '\0';
    if (!ok || redisAsyncFormattedCommand(c->ac, req_reply, r, c->fmt, c->fmt_len) != REDIS_OK)
        return -1;
    r->sent_on = c;
    r->sent_at = mc_clock_now_us();
    mc_list_push_back(&c->inflight, r);
    c->s->inflight++;
    return 0;
}

/* An ASKING before a redirected command: its reply needs no handling. */
static void asking_reply(redisAsyncContext *ac, void *r, void *priv)
{
    (void)ac;
    (void)r;
    (void)priv;
}

int mc_conn_send_asking(mc_persist_conn *c)
{
    return redisAsyncCommand(c->ac, asking_reply, NULL, "ASKING") == REDIS_OK ? 0 : -1;
}

static bool starts(const redisReply *reply, const char *word)
{
    size_t n = strlen(word);
    return reply->str && reply->len >= n && memcmp(reply->str, word, n) == 0;
}

static void req_reply(redisAsyncContext *ac, void *rp, void *priv)
{
    const redisReply *reply = rp;
    mc_persist_req *r = priv;
    mc_persist_conn *c = ac->data;
    if (!reply || !c || r->sent_on != c)
        return; /* connection lost: mc_store_conn_lost requeues it */
    mc_persist_store *s = c->s;
    mc_list_remove(&c->inflight, r);
    s->inflight--;
    r->sent_on = NULL;
    if (r->abandoned) {
        mc_req_free(r);
        mc_store_pump(s);
        return;
    }
    mc_store_enter(s);
    if (reply->type == REDIS_REPLY_ERROR) {
        if (starts(reply, "NOSCRIPT") && !r->use_eval) {
            r->use_eval = true;
            mc_store_enqueue(s, r, true);
        } else if (starts(reply, "MOVED ") || starts(reply, "ASK ")) {
            if (!mc_cluster_redirect(s, r, reply))
                mc_req_fail(r, MC_PERSIST_REDIS, "%.*s", (int)reply->len, reply->str);
        } else if (starts(reply, "LOADING") || starts(reply, "TRYAGAIN") ||
                   starts(reply, "CLUSTERDOWN") || starts(reply, "MASTERDOWN") ||
                   starts(reply, "BUSY")) {
            /* Transient: back off and send again. */
            s->resume_at = mc_clock_now_us() + (mc_time_us)s->cfg.backoff_min_ms * MC_US_PER_MS;
            if (starts(reply, "CLUSTERDOWN"))
                mc_cluster_want_slots(s);
            mc_store_enqueue(s, r, true);
        } else if (starts(reply, "NOAUTH") || starts(reply, "WRONGPASS")) {
            mc_req_fail(r, MC_PERSIST_AUTH, "%.*s", (int)reply->len, reply->str);
        } else {
            mc_req_fail(r, MC_PERSIST_REDIS, "%.*s", (int)reply->len, reply->str);
        }
    } else {
        s->on_reply(r, reply);
    }
    if (!mc_store_leave(s))
        mc_store_pump(s);
}
