/* Auth records in Redis (accounts.h): one hiredis asynchronous connection on the loop. */
#include "accounts.h"
#include "common/clock.h"
#include "common/log.h"
#include "secure/login.h"

#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BACKOFF_MIN_MS 100u
#define BACKOFF_MAX_MS 2000u
#define STALL_MS 5000u
#define MAX_WAITING 4096u

/* Creates the record only when the key does not exist: 1 created, 0 it existed. */
static const char CREATE_SCRIPT[] =
    "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end "
    "redis.call('HSET', KEYS[1], 'pw', ARGV[1], 'type', ARGV[2]) return 1";

typedef enum { CMD_GET, CMD_CREATE, CMD_SET_DBID, CMD_SET_HASH } cmd_kind;

typedef struct cmd {
    struct la_accounts *a;
    cmd_kind kind;
    void *fn;
    void *ud;
} cmd;

struct la_accounts {
    struct event_base *base;
    char host[64];
    int port;
    char addr[80];
    char *password;
    redisAsyncContext *ac;
    bool connected;
    struct event *retry_ev, *watch_ev;
    uint32_t backoff_ms;
    uint64_t last_answer_us; /* last reply (or connect) on this connection */
    bool ever_connected;
    bool freeing;
    la_accounts_stats st;
};

static void start(la_accounts *a);

static void schedule_retry(la_accounts *a)
{
    if (a->freeing)
        return;
    struct timeval tv = {a->backoff_ms / 1000, (a->backoff_ms % 1000) * 1000};
    evtimer_add(a->retry_ev, &tv);
    a->backoff_ms = a->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : a->backoff_ms * 2;
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    start(arg);
}

/* Free the context from outside its callbacks: pending commands get NULL replies. */
static void drop(la_accounts *a, const char *why)
{
    redisAsyncContext *ac = a->ac;
    if (!ac)
        return;
    MC_WARNING("accounts: redis %s: %s (reconnecting)", a->addr, why);
    a->ac = NULL;
    a->connected = false;
    ac->data = NULL;
    redisAsyncFree(ac);
    schedule_retry(a);
}

static void on_watch(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    la_accounts *a = arg;
    uint64_t now = mc_clock_now_us();
    if (a->ac && a->st.waiting > 0 && now - a->last_answer_us > STALL_MS * 1000u) {
        a->st.stalls++;
        drop(a, "no answer for 5 s with commands waiting");
    }
}

static void on_connect(const redisAsyncContext *cac, int status)
{
    la_accounts *a = cac->data;
    if (!a)
        return;
    if (status != REDIS_OK) {
        if (!a->ever_connected || a->backoff_ms <= BACKOFF_MIN_MS * 2)
            MC_WARNING("accounts: cannot connect to redis %s: %s", a->addr,
                       cac->errstr[0] ? cac->errstr : "connect failed");
        a->ac = NULL; /* hiredis frees it after this callback */
        a->connected = false;
        schedule_retry(a);
        return;
    }
    if (a->ever_connected)
        a->st.reconnects++;
    a->ever_connected = true;
    a->connected = true;
    a->backoff_ms = BACKOFF_MIN_MS;
    a->last_answer_us = mc_clock_now_us();
    MC_INFO("accounts: connected to redis %s", a->addr);
}

static void on_disconnect(const redisAsyncContext *cac, int status)
{
    la_accounts *a = cac->data;
    if (!a)
        return;
    a->ac = NULL;
    a->connected = false;
    MC_WARNING("accounts: redis %s: %s (reconnecting)", a->addr,
               status == REDIS_OK ? "connection closed" : (cac->errstr[0] ? cac->errstr : "I/O error"));
    schedule_retry(a);
}

static void on_auth(redisAsyncContext *ac, void *r, void *priv)
{
    (void)priv;
    const redisReply *reply = r;
    la_accounts *a = ac->data;
    if (!a || !reply)
        return;
    if (reply->type == REDIS_REPLY_ERROR)
        MC_ERROR("accounts: redis %s refused AUTH: %s", a->addr, reply->str);
}

static void start(la_accounts *a)
{
    if (a->ac || a->freeing)
        return;
    redisAsyncContext *ac = redisAsyncConnect(a->host, a->port);
    if (!ac) {
        schedule_retry(a);
        return;
    }
    if (ac->err) {
        MC_WARNING("accounts: cannot connect to redis %s: %s", a->addr, ac->errstr);
        redisAsyncFree(ac);
        schedule_retry(a);
        return;
    }
    ac->data = a;
    if (redisLibeventAttach(ac, a->base) != REDIS_OK) {
        ac->data = NULL;
        redisAsyncFree(ac);
        schedule_retry(a);
        return;
    }
    a->ac = ac;
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    if (a->password && *a->password)
        redisAsyncCommand(ac, on_auth, NULL, "AUTH %s", a->password);
}

la_accounts *la_accounts_new(struct event_base *base, const char *addr, const char *password,
                             char *err, size_t errlen)
{
    const char *colon = addr ? strrchr(addr, ':') : NULL;
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : 0;
    struct in_addr_check {
        unsigned a, b, c, d;
    } q;
    char tail;
    if (!colon || (size_t)(colon - addr) >= 64 || !end || *end || port <= 0 || port > 65535 ||
        sscanf(addr, "%u.%u.%u.%u%c", &q.a, &q.b, &q.c, &q.d, &tail) != 5 || tail != ':' ||
        q.a > 255 || q.b > 255 || q.c > 255 || q.d > 255) {
        snprintf(err, errlen, "--redis: '%s' is not a numeric IP:PORT", addr ? addr : "");
        return NULL;
    }
    la_accounts *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    a->base = base;
    memcpy(a->host, addr, (size_t)(colon - addr));
    a->port = (int)port;
    snprintf(a->addr, sizeof a->addr, "%s", addr);
    a->password = password && *password ? strdup(password) : NULL;
    a->backoff_ms = BACKOFF_MIN_MS;
    a->retry_ev = evtimer_new(base, on_retry, a);
    a->watch_ev = event_new(base, -1, EV_PERSIST, on_watch, a);
    struct timeval tv = {1, 0};
    if (!a->retry_ev || !a->watch_ev || (password && *password && !a->password) ||
        event_add(a->watch_ev, &tv) != 0) {
        snprintf(err, errlen, "out of memory");
        la_accounts_free(a);
        return NULL;
    }
    start(a);
    return a;
}

void la_accounts_free(la_accounts *a)
{
    if (!a)
        return;
    a->freeing = true;
    if (a->ac) {
        redisAsyncContext *ac = a->ac;
        a->ac = NULL;
        ac->data = NULL;
        redisAsyncFree(ac); /* every waiting callback gets a NULL reply */
    }
    if (a->retry_ev)
        event_free(a->retry_ev);
    if (a->watch_ev)
        event_free(a->watch_ev);
    if (a->password) {
        memset(a->password, 0, strlen(a->password));
        free(a->password);
    }
    free(a);
}

bool la_accounts_ready(const la_accounts *a) { return a && a->connected && a->ac; }

static bool name_ok(const char *name)
{
    size_t n = name ? strnlen(name, LA_ACCOUNT_NAME_MAX + 1) : 0;
    return mc_login_name_ok(name, n); /* 1..64 bytes, no control characters */
}

static void copy_str(char *out, size_t outlen, const redisReply *r)
{
    out[0] = '\0';
    if (r && r->type == REDIS_REPLY_STRING && r->len < outlen) {
        memcpy(out, r->str, r->len);
        out[r->len] = '\0';
    }
}

static void on_reply(redisAsyncContext *ac, void *r, void *priv)
{
    cmd *c = priv;
    la_accounts *a = c->a;
    const redisReply *reply = r;
    bool live = ac->data != NULL && !a->freeing;
    if (live) {
        a->last_answer_us = mc_clock_now_us();
        a->st.replies++;
    }
    if (a->st.waiting)
        a->st.waiting--;
    const char *why = NULL;
    char buf[160];
    if (!reply) {
        why = a->freeing ? "shutting down" : "the connection to redis was lost";
    } else if (reply->type == REDIS_REPLY_ERROR) {
        snprintf(buf, sizeof buf, "redis: %.120s", reply->str);
        why = buf;
    }
    if (why)
        a->st.errors++;
    switch (c->kind) {
    case CMD_GET: {
        la_account acc;
        memset(&acc, 0, sizeof acc);
        if (!why && (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3))
            why = "redis: unexpected answer to HMGET";
        if (!why) {
            const redisReply *pw = reply->element[0];
            acc.found = pw->type == REDIS_REPLY_STRING;
            copy_str(acc.hash, sizeof acc.hash, pw);
            char num[32];
            copy_str(num, sizeof num, reply->element[1]);
            acc.dbid = num[0] ? strtoull(num, NULL, 10) : 0;
            copy_str(acc.type, sizeof acc.type, reply->element[2]);
            if (acc.found && !acc.hash[0])
                why = "the auth record's pw field is not a password hash";
        }
        if (why)
            a->st.errors += reply && reply->type != REDIS_REPLY_ERROR;
        ((la_account_fn)c->fn)(c->ud, why ? -1 : 0, why ? NULL : &acc, why ? why : "");
        memset(&acc, 0, sizeof acc);
        break;
    }
    case CMD_CREATE:
        if (!why && reply->type != REDIS_REPLY_INTEGER)
            why = "redis: unexpected answer to the create script";
        ((la_create_fn)c->fn)(c->ud, why ? -1 : 0, !why && reply->integer == 1, why ? why : "");
        break;
    case CMD_SET_DBID:
        if (why && !a->freeing)
            MC_WARNING("accounts: cannot store the database id of an account: %s", why);
        break;
    case CMD_SET_HASH:
        if (why && !a->freeing)
            MC_WARNING("accounts: cannot store the upgraded password hash of an account: %s",
                       why);
        break;
    }
    free(c);
}

static cmd *new_cmd(la_accounts *a, cmd_kind kind, void *fn, void *ud)
{
    if (!la_accounts_ready(a) || a->st.waiting >= MAX_WAITING)
        return NULL;
    cmd *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->a = a;
    c->kind = kind;
    c->fn = fn;
    c->ud = ud;
    return c;
}

static int sent(la_accounts *a, cmd *c, int rc)
{
    if (rc != REDIS_OK) {
        free(c);
        return -1;
    }
    a->st.commands++;
    if (a->st.waiting++ == 0)
        a->last_answer_us = mc_clock_now_us(); /* the stall clock starts with the first */
    return 0;
}

int la_accounts_get(la_accounts *a, const char *name, la_account_fn fn, void *ud)
{
    cmd *c = name_ok(name) && fn ? new_cmd(a, CMD_GET, (void *)fn, ud) : NULL;
    if (!c)
        return -1;
    return sent(a, c,
                redisAsyncCommand(a->ac, on_reply, c, "HMGET mc:a:%b pw dbid type", name,
                                  strlen(name)));
}

int la_accounts_create(la_accounts *a, const char *name, const char *hash, const char *type,
                       la_create_fn fn, void *ud)
{
    cmd *c = name_ok(name) && fn && hash && type ? new_cmd(a, CMD_CREATE, (void *)fn, ud) : NULL;
    if (!c)
        return -1;
    return sent(a, c,
                redisAsyncCommand(a->ac, on_reply, c, "EVAL %s 1 mc:a:%b %s %s", CREATE_SCRIPT,
                                  name, strlen(name), hash, type));
}

int la_accounts_set_dbid(la_accounts *a, const char *name, uint64_t dbid)
{
    cmd *c = name_ok(name) && dbid ? new_cmd(a, CMD_SET_DBID, NULL, NULL) : NULL;
    if (!c)
        return -1;
    char num[32];
    snprintf(num, sizeof num, "%llu", (unsigned long long)dbid);
    /* Only into an existing record (HSET would make a record without a password). */
    return sent(a, c,
                redisAsyncCommand(a->ac, on_reply, c,
                                  "EVAL %s 1 mc:a:%b %s",
                                  "if redis.call('EXISTS', KEYS[1]) == 1 then "
                                  "redis.call('HSET', KEYS[1], 'dbid', ARGV[1]) end return 0",
                                  name, strlen(name), num));
}

int la_accounts_set_hash(la_accounts *a, const char *name, const char *old_hash,
                         const char *new_hash)
{
    cmd *c = name_ok(name) && old_hash && new_hash ? new_cmd(a, CMD_SET_HASH, NULL, NULL)
                                                   : NULL;
    if (!c)
        return -1;
    return sent(a, c,
                redisAsyncCommand(a->ac, on_reply, c, "EVAL %s 1 mc:a:%b %s %s",
                                  "if redis.call('HGET', KEYS[1], 'pw') == ARGV[1] then "
                                  "redis.call('HSET', KEYS[1], 'pw', ARGV[2]) return 1 end "
                                  "return 0",
                                  name, strlen(name), old_hash, new_hash));
}

void la_accounts_get_stats(const la_accounts *a, la_accounts_stats *out) { *out = a->st; }
