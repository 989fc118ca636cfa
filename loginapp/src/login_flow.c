/* One login, from an opened LOGIN to its LOGIN_REPLY: limits, the auth record in Redis (or
 * a new one with --autoCreateAccounts), the password on the hashing pool (a name without an
 * account is checked against a dummy hash of the same cost and answered like a wrong
 * password: the client cannot tell them apart, the watchers can), the least-loaded
 * baseapp from the manager, PREPARE_LOGIN to it (and, for a takeover of a base live on
 * another baseapp, to that one), then the answer. Each step is asynchronous; a login holds a
 * reference per step in flight and is freed once answered and its last step returned, so a
 * login answered early (its deadline passed) never leaves a callback pointing at freed
 * memory. */
#include "loginapp.h"
#include "common/clock.h"
#include "server/histogram.h"
#include "common/log.h"
#include "mercury/channel.h"
#include "mercury/request.h"
#include "mercury/status.h"
#include "proto/login.h"
#include "server/pb.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct login_op {
    login_op *next, *prev;
    loginapp *la;
    int refs;           /* asynchronous steps in flight */
    bool answered;
    mc_secure_peer from;
    mc_login_request req;
    la_reply_key key;
    uint64_t deadline_us;
    uint64_t dbid;      /* the account entity's database id (0: none yet) */
    bool dbid_stored;   /* the auth record holds dbid */
    char type[LA_ACCOUNT_TYPE_MAX];
    int lookups;        /* auth record reads (a concurrent auto-create reads it again) */
    int prepares;       /* PREPARE_LOGIN sent (a takeover may go to a second baseapp) */
    char stored[LA_ACCOUNT_HASH_MAX]; /* the record's hash (to upgrade its cost) */
};

/* A stored hash being upgraded to the current cost after a good login (login_op may be
 * gone by then); kept on la->rehashes so that none leaks when the pool drops it. */
struct la_rehash {
    la_rehash *next, *prev;
    loginapp *la;
    char name[MC_LOGIN_NAME_MAX + 1];
    char old_hash[LA_ACCOUNT_HASH_MAX];
};

/* The pool's source of a login: its address (never 0). */
static uint64_t source_of(mc_secure_peer from) { return (uint64_t)from.ip | 1ull << 32; }

/* The back-off key: the source address and the name (one source's failures never make
 * another source wait). */
static size_t backoff_key(mc_secure_peer from, const char *name, uint8_t out[MC_LIMIT_KEY_MAX])
{
    size_t n = strlen(name);
    memcpy(out, &from.ip, 4);
    if (n > MC_LIMIT_KEY_MAX - 4)
        n = MC_LIMIT_KEY_MAX - 4;
    memcpy(out + 4, name, n);
    return 4 + n;
}

static const mc_message_def prepare_def = {MC_MSG_PREPARE_LOGIN, "PREPARE_LOGIN",
                                           MC_MSG_VARIABLE, 4, NULL};

/* ---- life ----------------------------------------------------------------------------- */

static void op_free(login_op *op)
{
    loginapp *la = op->la;
    if (op->prev)
        op->prev->next = op->next;
    else if (la->ops == op)
        la->ops = op->next;
    if (op->next)
        op->next->prev = op->prev;
    sodium_memzero(op, sizeof *op);
    free(op);
}

/* A step returned: false when the login was answered meanwhile (then it may be freed). */
static bool step_back(login_op *op)
{
    op->refs--;
    if (!op->answered)
        return true;
    if (op->refs <= 0)
        op_free(op);
    return false;
}

static void log_error(loginapp *la, const char *name, const char *why)
{
    uint64_t now = mc_clock_now_us();
    if (now - la->error_log_us < 1000000u && la->error_log_us) {
        la->errors_unlogged++;
        return;
    }
    if (la->errors_unlogged)
        MC_WARNING("login of '%s': server error: %s (%llu more since the last line)", name, why,
                   (unsigned long long)la->errors_unlogged);
    else
        MC_WARNING("login of '%s': server error: %s", name, why);
    la->error_log_us = now;
    la->errors_unlogged = 0;
}

/* Send the reply, remember it for a resent LOGIN, count it. "No such user" is counted as
 * such (operators see it) but the client is told "bad password": it cannot learn which
 * names have accounts. */
static void reply(loginapp *la, mc_secure_peer from, const mc_login_request *req,
                  const la_reply_key *key, const mc_login_result *res)
{
    la->st.status[res->status]++;
    if (la->freeing)
        return;
    mc_login_result told = *res;
    if (told.status == MC_LOGIN_NO_SUCH_USER)
        told.status = MC_LOGIN_BAD_PASSWORD;
    uint8_t out[MC_LOGIN_REPLY_SIZE];
    int rc = mc_login_server_reply(req, &told, out);
    sodium_memzero(&told, sizeof told);
    if (rc != 0)
        return; /* a client key no box can be made for: nothing to answer */
    la_send(la, from, out, sizeof out);
    la_replies_answered(la->replies, key, mc_clock_now_us(), out);
    sodium_memzero(out, sizeof out);
}

static void answer_result(login_op *op, const mc_login_result *res, const char *why)
{
    if (op->answered)
        return;
    loginapp *la = op->la;
    op->answered = true;
    la->in_flight--;
    mc_time_us now = mc_clock_now_us();
    struct mc_histogram *lh = mc_server_histogram(la->server, LA_LOGIN_HISTOGRAM, LA_LOGIN_HISTOGRAM_HELP);
    if (lh)
        mc_histogram_observe_us(lh, now - (op->deadline_us - la->login_timeout_ms * MC_US_PER_MS),
                                now);
    if (res->status == MC_LOGIN_SERVER_ERROR)
        log_error(la, op->req.cred.name, why ? why : "?");
    else
        MC_DEBUG("login of '%s': %s%s%s", op->req.cred.name, mc_login_status_name(res->status),
                 why && *why ? ": " : "", why ? why : "");
    reply(la, op->from, &op->req, &op->key, res);
    sodium_memzero(&op->req.cred, sizeof op->req.cred);
    if (op->refs <= 0)
        op_free(op);
}

static void answer(login_op *op, int status, const char *why)
{
    mc_login_result res;
    memset(&res, 0, sizeof res);
    res.status = status;
    answer_result(op, &res, why);
}

/* ---- the baseapp ------------------------------------------------------------------------ */

static void send_prepare(login_op *op, const char *internal_addr);

static void on_prepared(void *ctx, mc_reply_status status, const mc_message_info *info,
                        mc_istream *data)
{
    (void)info;
    login_op *op = ctx;
    if (!step_back(op))
        return;
    if (status != MC_REPLY_OK) {
        answer(op, MC_LOGIN_SERVER_ERROR, status == MC_REPLY_TIMEOUT
                                              ? "the baseapp did not answer PREPARE_LOGIN in time"
                                              : "the channel to the baseapp died");
        return;
    }
    size_t len = mc_istream_remaining(data);
    const uint8_t *bytes = len ? mc_read_bytes(data, len) : NULL;
    Mc__Login__PrepareLoginReply *r =
        len <= MC_PREPARE_LOGIN_MAX_PAYLOAD
            ? mc__login__prepare_login_reply__unpack(NULL, len, bytes ? bytes : (const uint8_t *)"")
            : NULL;
    if (!r) {
        answer(op, MC_LOGIN_SERVER_ERROR, "malformed answer to PREPARE_LOGIN");
        return;
    }
    loginapp *la = op->la;
    char why[300];
    snprintf(why, sizeof why, "%s", r->reason ? r->reason : "");
    switch (r->status) {
    case MC__LOGIN__PREPARE_STATUS__PREPARE_OK: {
        mc_address ext;
        if (!r->external_addr || mc_address_parse(r->external_addr, &ext) != 0 ||
            r->session_key.len != MC_SECURE_KEY_BYTES || r->session_id == 0) {
            answer(op, MC_LOGIN_SERVER_ERROR, "the baseapp's PREPARE_LOGIN answer lacks a session");
            break;
        }
        if (r->dbid && (!op->dbid_stored || r->dbid != op->dbid) && la->accounts &&
            la_accounts_set_dbid(la->accounts, op->req.cred.name, r->dbid) != 0)
            MC_WARNING("login of '%s': cannot store its database id %llu now (Redis)",
                       op->req.cred.name, (unsigned long long)r->dbid);
        if (r->taken_over)
            la->st.takeovers++;
        mc_login_result res;
        memset(&res, 0, sizeof res);
        res.status = MC_LOGIN_OK;
        res.baseapp_ip = ext.ip;
        res.baseapp_port = ext.port;
        res.session_id = r->session_id;
        memcpy(res.session_key, r->session_key.data, MC_SECURE_KEY_BYTES);
        answer_result(op, &res, NULL);
        sodium_memzero(&res, sizeof res);
        sodium_memzero(r->session_key.data, r->session_key.len);
        break;
    }
    case MC__LOGIN__PREPARE_STATUS__PREPARE_ALREADY_LOGGED_IN:
        answer(op, MC_LOGIN_ALREADY_LOGGED_IN, why);
        break;
    case MC__LOGIN__PREPARE_STATUS__PREPARE_LIVE_ELSEWHERE:
        if (op->prepares >= 2 || !r->live_on || !*r->live_on) {
            answer(op, MC_LOGIN_SERVER_ERROR, "the account's base moved again during a takeover");
            break;
        }
        la->st.redirects++;
        send_prepare(op, r->live_on);
        break;
    case MC__LOGIN__PREPARE_STATUS__PREPARE_BUSY:
        answer(op, MC_LOGIN_OVERLOADED, why);
        break;
    default:
        answer(op, MC_LOGIN_SERVER_ERROR, why[0] ? why : "the baseapp could not prepare the login");
        break;
    }
    mc_pb_free(r);
}

static void send_prepare(login_op *op, const char *internal_addr)
{
    loginapp *la = op->la;
    mc_address a;
    mc_channel *ch = NULL;
    if (mc_address_parse(internal_addr, &a) != 0 || !(ch = mc_server_channel(la->server, &a))) {
        answer(op, MC_LOGIN_SERVER_ERROR, "no channel to the baseapp");
        return;
    }
    Mc__Login__PrepareLoginRequest q = MC__LOGIN__PREPARE_LOGIN_REQUEST__INIT;
    q.account_name = op->req.cred.name;
    q.dbid = op->dbid;
    q.entity_type = op->type;
    /* a takeover only when the configuration allows it and the client asked for it */
    q.takeover = la->online == LA_ONLINE_TAKEOVER &&
                 (op->req.cred.flags & MC_LOGIN_FLAG_TAKEOVER) != 0;
    size_t n = 0;
    uint8_t *buf = mc_pb_pack(&q, &n);
    if (!buf) {
        answer(op, MC_LOGIN_OVERLOADED, "out of memory");
        return;
    }
    op->prepares++;
    op->refs++;
    int rc = mc_channel_request(ch, &prepare_def, buf, n, on_prepared, op,
                                la->prepare_timeout_ms * MC_US_PER_MS);
    free(buf);
    if (rc != MC_OK) {
        op->refs--;
        answer(op, MC_LOGIN_SERVER_ERROR, "cannot send PREPARE_LOGIN");
    }
}

static void on_picked(mc_server *s, void *ctx, const Mc__Control__QueryReply *r)
{
    (void)s;
    login_op *op = ctx;
    if (!step_back(op))
        return;
    if (!r) {
        answer(op, MC_LOGIN_SERVER_ERROR, "the manager did not answer");
        return;
    }
    if (r->status != MC__CONTROL__QUERY_STATUS__QUERY_OK || r->n_processes < 1 ||
        !r->processes[0]->internal_addr || !*r->processes[0]->internal_addr) {
        answer(op, MC_LOGIN_NO_BASEAPP, r->reason ? r->reason : "no live baseapp");
        return;
    }
    send_prepare(op, r->processes[0]->internal_addr);
}

static void pick_baseapp(login_op *op)
{
    op->refs++;
    if (mc_server_query(op->la->server, MC__CONTROL__QUERY_KIND__QUERY_LEAST_LOADED,
                        MC_ROLE_BASEAPP, NULL, on_picked, op) != 0) {
        op->refs--;
        answer(op, MC_LOGIN_SERVER_ERROR, "cannot ask the manager for a baseapp");
    }
}

/* ---- the account ---------------------------------------------------------------------------- */

static void read_account(login_op *op);

static void on_created(void *ud, int status, bool created, const char *why)
{
    login_op *op = ud;
    if (!step_back(op))
        return;
    if (status != 0) {
        op->la->st.redis_errors++;
        answer(op, MC_LOGIN_SERVER_ERROR, why);
        return;
    }
    if (!created) { /* a concurrent login made it first: check the password against it */
        read_account(op);
        return;
    }
    op->la->st.created++;
    MC_INFO("account '%s' created (type %s)", op->req.cred.name, op->type);
    pick_baseapp(op);
}

static void on_hashed(void *ud, int status, const char *hash, bool match)
{
    (void)match;
    login_op *op = ud;
    if (!step_back(op))
        return;
    if (status != MC_PWHASH_OK) {
        answer(op, MC_LOGIN_SERVER_ERROR, "cannot hash the password");
        return;
    }
    op->refs++;
    if (la_accounts_create(op->la->accounts, op->req.cred.name, hash, op->type, on_created, op) !=
        0) {
        op->refs--;
        answer(op, MC_LOGIN_SERVER_ERROR, "Redis is not reachable");
    }
}

static void on_rehashed(void *ud, int status, const char *hash, bool match)
{
    (void)match;
    la_rehash *r = ud;
    loginapp *la = r->la;
    if (status == MC_PWHASH_OK && hash && la->accounts &&
        la_accounts_set_hash(la->accounts, r->name, r->old_hash, hash) == 0)
        la->st.rehashed++;
    else
        MC_WARNING("login of '%s': cannot upgrade its password hash now", r->name);
    if (r->prev)
        r->prev->next = r->next;
    else
        la->rehashes = r->next;
    if (r->next)
        r->next->prev = r->prev;
    sodium_memzero(r, sizeof *r);
    free(r);
}

/* A good password whose stored hash was made at another cost: hash it again at the
 * current one and write it back (only over the same old hash), in the background. */
static void upgrade_hash(login_op *op)
{
    loginapp *la = op->la;
    if (!op->stored[0] || !mc_pwhash_needs_rehash(la->pool, op->stored))
        return;
    la_rehash *r = calloc(1, sizeof *r);
    if (!r)
        return;
    r->la = la;
    snprintf(r->name, sizeof r->name, "%s", op->req.cred.name);
    snprintf(r->old_hash, sizeof r->old_hash, "%s", op->stored);
    if (mc_pwhash_hash(la->pool, op->req.cred.password, op->req.cred.password_len, on_rehashed,
                       r) != MC_PWHASH_OK) {
        free(r);
        return; /* the pool is busy: the next login tries again */
    }
    r->next = la->rehashes;
    if (la->rehashes)
        la->rehashes->prev = r;
    la->rehashes = r;
}

/* A failed check (a wrong password, or a name without an account: the same to everyone):
 * this source backs off on this name, and the name's ceiling of failures loses a token. */
static void failed_check(login_op *op)
{
    loginapp *la = op->la;
    const char *name = op->req.cred.name;
    uint8_t bk[MC_LIMIT_KEY_MAX];
    uint64_t now = mc_clock_now_us();
    mc_limits_failed(la->backoff, bk, backoff_key(op->from, name, bk), now);
    mc_limits_take(la->account_limits, name, strlen(name), now, NULL);
}

static void on_verified(void *ud, int status, const char *hash, bool match)
{
    (void)hash;
    login_op *op = ud;
    if (!step_back(op))
        return;
    loginapp *la = op->la;
    const char *name = op->req.cred.name;
    if (status != MC_PWHASH_OK) {
        answer(op, MC_LOGIN_SERVER_ERROR, "the stored password hash cannot be checked");
        return;
    }
    if (!match) {
        failed_check(op);
        answer(op, MC_LOGIN_BAD_PASSWORD, NULL);
        return;
    }
    uint8_t bk[MC_LIMIT_KEY_MAX];
    mc_limits_succeeded(la->backoff, bk, backoff_key(op->from, name, bk));
    upgrade_hash(op);
    pick_baseapp(op);
}

/* A name without an account, checked against the dummy hash like a real one. */
static void on_dummy_checked(void *ud, int status, const char *hash, bool match)
{
    (void)hash;
    (void)match;
    login_op *op = ud;
    if (!step_back(op))
        return;
    if (status != MC_PWHASH_OK) {
        answer(op, MC_LOGIN_SERVER_ERROR, "the dummy password hash cannot be checked");
        return;
    }
    failed_check(op);
    answer(op, MC_LOGIN_NO_SUCH_USER, NULL);
}

static int pool_status(int rc)
{
    if (rc == MC_PWHASH_SOURCE_BUSY)
        return MC_LOGIN_RATE_LIMITED;
    return rc == MC_PWHASH_BUSY || rc == MC_PWHASH_NO_MEMORY ? MC_LOGIN_OVERLOADED
                                                              : MC_LOGIN_SERVER_ERROR;
}

static void on_account(void *ud, int status, const la_account *acc, const char *why)
{
    login_op *op = ud;
    if (!step_back(op))
        return;
    loginapp *la = op->la;
    const mc_login_credentials *c = &op->req.cred;
    if (status != 0) {
        la->st.redis_errors++;
        answer(op, MC_LOGIN_SERVER_ERROR, why);
        return;
    }
    int rc;
    uint64_t src = source_of(op->from);
    if (!acc->found && la->auto_create && op->lookups <= 1) {
        op->refs++;
        rc = mc_pwhash_hash_from(la->pool, src, c->password, c->password_len, on_hashed, op);
    } else if (!acc->found) {
        op->refs++;
        rc = mc_pwhash_verify_from(la->pool, src, la->dummy_hash, c->password, c->password_len,
                                   on_dummy_checked, op);
    } else {
        op->dbid = acc->dbid;
        op->dbid_stored = acc->dbid != 0;
        if (acc->type[0])
            snprintf(op->type, sizeof op->type, "%s", acc->type);
        snprintf(op->stored, sizeof op->stored, "%s", acc->hash);
        op->refs++;
        rc = mc_pwhash_verify_from(la->pool, src, acc->hash, c->password, c->password_len,
                                   on_verified, op);
    }
    if (rc != MC_PWHASH_OK) {
        op->refs--;
        answer(op, pool_status(rc), rc == MC_PWHASH_SOURCE_BUSY
                                        ? "this address has its share of the hashing queue"
                                        : "the password hashing queue is full");
    }
}

static void read_account(login_op *op)
{
    op->lookups++;
    op->refs++;
    if (la_accounts_get(op->la->accounts, op->req.cred.name, on_account, op) != 0) {
        op->refs--;
        answer(op, MC_LOGIN_SERVER_ERROR, "Redis is not reachable");
    }
}

/* ---- start ------------------------------------------------------------------------------------ */

static void answer_now(loginapp *la, mc_secure_peer from, const mc_login_request *req,
                       const la_reply_key *key, int status)
{
    mc_login_result res;
    memset(&res, 0, sizeof res);
    res.status = status;
    MC_DEBUG("login of '%s': %s", req->cred.name, mc_login_status_name(status));
    reply(la, from, req, key, &res);
}

void la_login_refuse(loginapp *la, mc_secure_peer from, const mc_login_request *req, int status)
{
    mc_login_result res;
    memset(&res, 0, sizeof res);
    res.status = status;
    la->st.status[status]++;
    uint8_t out[MC_LOGIN_REPLY_SIZE];
    if (la->freeing || mc_login_server_reply(req, &res, out) != 0)
        return;
    la_send(la, from, out, sizeof out);
}

void la_login_start(loginapp *la, mc_secure_peer from, const mc_login_request *req)
{
    uint64_t now = mc_clock_now_us();
    la_reply_key key = {.ip = from.ip, .port = from.port};
    memcpy(key.nonce, req->client_nonce, sizeof key.nonce);
    const char *name = req->cred.name;
    if (sodium_memcmp(req->cred.digest, la->digest, sizeof la->digest) != 0) {
        answer_now(la, from, req, &key, MC_LOGIN_BAD_DIGEST);
        return;
    }
    if (la->in_flight >= la->max_in_flight) {
        answer_now(la, from, req, &key, MC_LOGIN_OVERLOADED);
        return;
    }
    uint8_t bk[MC_LIMIT_KEY_MAX];
    if (!mc_limits_may_try(la->backoff, bk, backoff_key(from, name, bk), now, NULL) ||
        !mc_limits_ready(la->account_limits, name, strlen(name), now)) {
        answer_now(la, from, req, &key, MC_LOGIN_RATE_LIMITED);
        return;
    }
    login_op *op = calloc(1, sizeof *op);
    if (!op || la_replies_pending(la->replies, &key, now) != 0) {
        free(op);
        answer_now(la, from, req, &key, MC_LOGIN_OVERLOADED);
        return;
    }
    op->la = la;
    op->from = from;
    op->req = *req;
    op->key = key;
    op->deadline_us = now + la->login_timeout_ms * MC_US_PER_MS;
    snprintf(op->type, sizeof op->type, "%s", la->account_type);
    op->next = la->ops;
    if (la->ops)
        la->ops->prev = op;
    la->ops = op;
    la->in_flight++;
    read_account(op);
}

void la_logins_tick(loginapp *la)
{
    uint64_t now = mc_clock_now_us();
    for (login_op *op = la->ops; op;) {
        login_op *next = op->next; /* answering may free op, never another */
        if (!op->answered && now >= op->deadline_us)
            answer(op, MC_LOGIN_SERVER_ERROR, "not finished within --loginTimeoutMs");
        op = next;
    }
}

void la_logins_free(loginapp *la)
{
    while (la->ops)
        op_free(la->ops);
    la->in_flight = 0;
    while (la->rehashes) { /* dropped by the pool when it was freed */
        la_rehash *r = la->rehashes;
        la->rehashes = r->next;
        sodium_memzero(r, sizeof *r);
        free(r);
    }
}
