/* One resumption, from an opened RESUME (secure/resume.h) to its RESUME_REPLY: the ticket's
 * expiry, one resumption per ticket at a time, the live baseapps from the manager, then
 * RESUME_PREPARE to them in waves of at most --resumeFanOut until one holds the proxy (it
 * issues a session) or all have said no. Like a login (login_flow.c), a resumption holds a
 * reference per request in flight and is freed once answered and its last request returned.
 * Nothing is durable: the ticket's single use is the proxy's (its serial). */
#include "loginapp.h"
#include "common/clock.h"
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

#define RESUME_BASEAPPS_MAX 256

_Static_assert(MC_RESUME_REPLY_SIZE == MC_LOGIN_REPLY_SIZE,
               "the remembered replies (replies.h) hold LOGIN_REPLYs and RESUME_REPLYs alike");

struct la_resume_op {
    la_resume_op *next, *prev;
    loginapp *la;
    int refs;            /* requests in flight (the manager's query, RESUME_PREPAREs) */
    bool answered;
    mc_secure_peer from;
    mc_resume_request req;
    la_reply_key key;
    uint64_t deadline_us;
    char addrs[RESUME_BASEAPPS_MAX][MC_ADDRESS_STRLEN]; /* the live baseapps */
    size_t naddrs, next_addr;
    int waiting;         /* RESUME_PREPAREs of this wave not answered yet */
    bool used, expired, errors;
};

static const mc_message_def resume_def = {MC_MSG_RESUME_PREPARE, "RESUME_PREPARE",
                                          MC_MSG_VARIABLE, 4, NULL};

static uint64_t wall_ms(void)
{
    int64_t s;
    int32_t us;
    mc_clock_wall(&s, &us);
    return (uint64_t)s * 1000u + (uint64_t)us / 1000u;
}

static void op_free(la_resume_op *op)
{
    loginapp *la = op->la;
    if (op->prev)
        op->prev->next = op->next;
    else if (la->resumes == op)
        la->resumes = op->next;
    if (op->next)
        op->next->prev = op->prev;
    sodium_memzero(op, sizeof *op);
    free(op);
}

static bool step_back(la_resume_op *op)
{
    op->refs--;
    if (!op->answered)
        return true;
    if (op->refs <= 0)
        op_free(op);
    return false;
}

/* Send (and remember, when `remember`) the RESUME_REPLY, count it. */
static void reply(loginapp *la, mc_secure_peer from, const mc_resume_request *req,
                  const la_reply_key *key, const mc_login_result *res, bool remember)
{
    la->st.resume_status[res->status]++;
    if (la->freeing)
        return;
    uint8_t out[MC_RESUME_REPLY_SIZE];
    if (mc_resume_server_reply(req, res, out) != 0)
        return;
    la_send(la, from, out, sizeof out);
    if (remember)
        la_replies_answered(la->replies, key, mc_clock_now_us(), out);
    sodium_memzero(out, sizeof out);
}

static void answer_result(la_resume_op *op, const mc_login_result *res, const char *why)
{
    if (op->answered)
        return;
    loginapp *la = op->la;
    op->answered = true;
    la->in_flight--;
    MC_DEBUG("resumption of '%s' (entity %d): %s%s%s", op->req.ticket.name,
             (int)op->req.ticket.entity_id, mc_login_status_name(res->status),
             why && *why ? ": " : "", why ? why : "");
    reply(la, op->from, &op->req, &op->key, res, true);
    sodium_memzero(&op->req.ticket.resume_key, sizeof op->req.ticket.resume_key);
    op->req.opened = false;
    if (op->refs <= 0)
        op_free(op);
}

static void answer(la_resume_op *op, int status, const char *why)
{
    mc_login_result res;
    memset(&res, 0, sizeof res);
    res.status = status;
    answer_result(op, &res, why);
}

static void send_wave(la_resume_op *op);

/* Every baseapp of the last wave answered and none holds the proxy: the next wave, or why
 * not. */
static void wave_done(la_resume_op *op)
{
    if (op->next_addr < op->naddrs) {
        send_wave(op);
        return;
    }
    if (op->used)
        answer(op, MC_LOGIN_TICKET_USED, "the proxy honours another ticket");
    else if (op->expired)
        answer(op, MC_LOGIN_TICKET_EXPIRED, "the proxy's grace time ran out");
    else if (op->errors)
        answer(op, MC_LOGIN_SERVER_ERROR, "a baseapp did not answer RESUME_PREPARE");
    else
        answer(op, MC_LOGIN_ENTITY_GONE, "no live baseapp holds the proxy");
}

static void on_prepared(void *ctx, mc_reply_status status, const mc_message_info *info,
                        mc_istream *data)
{
    (void)info;
    la_resume_op *op = ctx;
    if (!step_back(op))
        return;
    op->waiting--;
    Mc__Login__ResumePrepareReply *r = NULL;
    if (status == MC_REPLY_OK) {
        size_t len = mc_istream_remaining(data);
        const uint8_t *bytes = len ? mc_read_bytes(data, len) : NULL;
        r = len <= MC_PREPARE_LOGIN_MAX_PAYLOAD
                ? mc__login__resume_prepare_reply__unpack(NULL, len,
                                                          bytes ? bytes : (const uint8_t *)"")
                : NULL;
    }
    mc_address ext;
    if (!r) {
        op->errors = true;
    } else if (r->status == MC__LOGIN__RESUME_STATUS__RESUME_OK) {
        if (!r->external_addr || mc_address_parse(r->external_addr, &ext) != 0 ||
            r->session_key.len != MC_SECURE_KEY_BYTES || r->session_id == 0) {
            op->errors = true;
        } else {
            mc_login_result res;
            memset(&res, 0, sizeof res);
            res.status = MC_LOGIN_OK;
            res.baseapp_ip = ext.ip;
            res.baseapp_port = ext.port;
            res.session_id = r->session_id;
            memcpy(res.session_key, r->session_key.data, MC_SECURE_KEY_BYTES);
            op->la->st.resumed++;
            sodium_memzero(r->session_key.data, r->session_key.len);
            mc_pb_free(r);
            answer_result(op, &res, NULL); /* may free op */
            sodium_memzero(&res, sizeof res);
            return;
        }
    } else if (r->status == MC__LOGIN__RESUME_STATUS__RESUME_USED) {
        op->used = true;
    } else if (r->status == MC__LOGIN__RESUME_STATUS__RESUME_EXPIRED) {
        op->expired = true;
    } else if (r->status != MC__LOGIN__RESUME_STATUS__RESUME_NOT_HERE) {
        op->errors = true;
    }
    mc_pb_free(r);
    if (!op->answered && op->waiting <= 0)
        wave_done(op);
}

static void send_wave(la_resume_op *op)
{
    loginapp *la = op->la;
    Mc__Login__ResumePrepareRequest q = MC__LOGIN__RESUME_PREPARE_REQUEST__INIT;
    q.entity_id = op->req.ticket.entity_id;
    q.serial = op->req.ticket.serial;
    q.account_name = op->req.ticket.name;
    size_t n = 0;
    uint8_t *buf = mc_pb_pack(&q, &n);
    if (!buf) {
        answer(op, MC_LOGIN_OVERLOADED, "out of memory");
        return;
    }
    la->st.resume_waves++;
    for (uint64_t k = 0; k < la->resume_fan_out && op->next_addr < op->naddrs; k++) {
        mc_address a;
        mc_channel *ch = NULL;
        const char *addr = op->addrs[op->next_addr++];
        if (mc_address_parse(addr, &a) != 0 || !(ch = mc_server_channel(la->server, &a))) {
            op->errors = true;
            continue;
        }
        op->refs++;
        op->waiting++;
        la->st.resume_asked++;
        if (mc_channel_request(ch, &resume_def, buf, n, on_prepared, op,
                               la->prepare_timeout_ms * MC_US_PER_MS) != MC_OK) {
            op->refs--;
            op->waiting--;
            op->errors = true;
        }
    }
    free(buf);
    if (op->waiting <= 0)
        wave_done(op); /* none could be asked: the next wave, or the verdict */
}

static void on_baseapps(mc_server *s, void *ctx, const Mc__Control__QueryReply *r)
{
    (void)s;
    la_resume_op *op = ctx;
    if (!step_back(op))
        return;
    if (!r) {
        answer(op, MC_LOGIN_SERVER_ERROR, "the manager did not answer");
        return;
    }
    for (size_t i = 0; r->status == MC__CONTROL__QUERY_STATUS__QUERY_OK &&
                       i < r->n_processes && op->naddrs < RESUME_BASEAPPS_MAX;
         i++)
        if (r->processes[i]->internal_addr && *r->processes[i]->internal_addr)
            snprintf(op->addrs[op->naddrs++], MC_ADDRESS_STRLEN, "%s",
                     r->processes[i]->internal_addr);
    if (!op->naddrs) {
        answer(op, MC_LOGIN_ENTITY_GONE, "no live baseapp");
        return;
    }
    send_wave(op);
}

/* ---- start ------------------------------------------------------------------------------ */

void la_resume_refuse(loginapp *la, mc_secure_peer from, const mc_resume_request *req,
                      int status)
{
    mc_login_result res;
    memset(&res, 0, sizeof res);
    res.status = status;
    reply(la, from, req, NULL, &res, false);
}

void la_resume_start(loginapp *la, mc_secure_peer from, const mc_resume_request *req)
{
    uint64_t now = mc_clock_now_us();
    la_reply_key key = {.ip = from.ip, .port = from.port};
    memcpy(key.nonce, req->client_nonce, sizeof key.nonce);
    mc_login_result res;
    memset(&res, 0, sizeof res);
    if (wall_ms() >= req->ticket.expires_ms) {
        res.status = MC_LOGIN_TICKET_EXPIRED;
        reply(la, from, req, &key, &res, true);
        return;
    }
    for (la_resume_op *op = la->resumes; op; op = op->next)
        if (!op->answered && op->req.ticket.entity_id == req->ticket.entity_id &&
            op->req.ticket.serial == req->ticket.serial) {
            la->st.dropped[LA_DROP_PENDING]++; /* one resumption per ticket at a time */
            return;
        }
    if (la->in_flight >= la->max_in_flight) {
        res.status = MC_LOGIN_OVERLOADED;
        reply(la, from, req, &key, &res, true);
        return;
    }
    la_resume_op *op = calloc(1, sizeof *op);
    if (!op || la_replies_pending(la->replies, &key, now) != 0) {
        free(op);
        res.status = MC_LOGIN_OVERLOADED;
        reply(la, from, req, &key, &res, true);
        return;
    }
    op->la = la;
    op->from = from;
    op->req = *req;
    op->key = key;
    op->deadline_us = now + la->login_timeout_ms * MC_US_PER_MS;
    op->next = la->resumes;
    if (la->resumes)
        la->resumes->prev = op;
    la->resumes = op;
    la->in_flight++;
    op->refs++;
    if (mc_server_query(la->server, MC__CONTROL__QUERY_KIND__QUERY_BY_ROLE, MC_ROLE_BASEAPP,
                        NULL, on_baseapps, op) != 0) {
        op->refs--;
        answer(op, MC_LOGIN_SERVER_ERROR, "cannot ask the manager for the baseapps");
    }
}

void la_resumes_tick(loginapp *la)
{
    uint64_t now = mc_clock_now_us();
    for (la_resume_op *op = la->resumes; op;) {
        la_resume_op *next = op->next;
        if (!op->answered && now >= op->deadline_us)
            answer(op, MC_LOGIN_SERVER_ERROR, "not finished within --loginTimeoutMs");
        op = next;
    }
}

void la_resumes_free(loginapp *la)
{
    while (la->resumes)
        op_free(la->resumes);
}
