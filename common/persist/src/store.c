/* The store: the request queue, sending in submission order, timeouts and dead connections,
 * and freeing it (creating it: store_new.c). */
#include <event2/event.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "internal.h"

/* --- queue and sending ------------------------------------------------------------------ */

/* Before the first waiting request submitted after r. */
static void insert_ordered(mc_req_list *l, mc_persist_req *r)
{
    mc_persist_req *at = l->head;
    while (at && at->seq <= r->seq)
        at = at->next;
    if (!at) {
        mc_list_push_back(l, r);
        return;
    }
    r->next = at;
    r->prev = at->prev;
    if (at->prev)
        at->prev->next = r;
    else
        l->head = r;
    at->prev = r;
    l->count++;
}

void mc_store_enqueue(mc_persist_store *s, mc_persist_req *r, bool front)
{
    if (s->closing) {
        mc_req_fail(r, MC_PERSIST_CLOSED, "store closed");
        return;
    }
    if (mc_req_oom(r)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "out of memory");
        return;
    }
    if (front)
        insert_ordered(&s->pending, r);
    else
        mc_list_push_back(&s->pending, r);
}

/* Queue a new request from an API call: bounded, failing later (from the loop). */
void mc_store_submit(mc_persist_store *s, mc_persist_req *r)
{
    if (mc_persist_queue_depth(s) >= s->cfg.queue_max) {
        mc_store_reject(r, MC_PERSIST_QUEUE_FULL, "queue full (%zu requests waiting)",
                        mc_persist_queue_depth(s));
        return;
    }
    if (s->auth_failed) {
        mc_store_reject(r, MC_PERSIST_AUTH, "%s", s->last_error);
        return;
    }
    if (mc_req_oom(r)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "out of memory");
        return;
    }
    r->seq = ++s->next_seq;
    mc_list_push_back(&s->pending, r);
    mc_store_pump(s);
}

/* How many waiting requests one pump may pass over (their node is not connected) before it
 * gives up until the next event: bounds the work while a Redis Cluster node is down. */
#define PUMP_SKIP_MAX 2000

void mc_store_pump(mc_persist_store *s)
{
    if (s->closing || (s->resume_at && mc_clock_now_us() < s->resume_at))
        return;
    s->resume_at = 0;
    size_t skipped = 0;
    mc_persist_req *r = s->pending.head;
    while (r && s->inflight < s->cfg.inflight_max && skipped < PUMP_SKIP_MAX) {
        mc_persist_req *next = r->next;
        /* The schema is checked before anything else is sent. */
        if (!s->schema_done && r->op != OP_SCHEMA && r->op != OP_SLOTS)
            return;
        /* A closed write gate holds a change, and (order) everything behind it. */
        if (s->gate && mc_op_changes(r->op) && !s->gate(s->gate_ctx))
            return;
        mc_persist_conn *c = mc_cluster_route(s, r);
        if (!c || c->state != CONN_READY) {
            /* With one Redis nothing else can go. With a cluster, requests for the other
             * nodes go on: a request passed over here only waits for its own node, and every
             * later request for that node (same slot: same node) waits behind it. */
            if (!s->cluster)
                return;
            skipped++;
            r = next;
            continue;
        }
        mc_list_remove(&s->pending, r);
        if (r->ask && !r->asking_sent) {
            r->asking_sent = true;
            if (mc_conn_send_asking(c) != 0) {
                insert_ordered(&s->pending, r);
                return;
            }
        }
        if (mc_conn_send(c, r) != 0) {
            insert_ordered(&s->pending, r);
            return;
        }
        r = next;
    }
}

void mc_store_conn_ready(mc_persist_store *s, mc_persist_conn *c)
{
    MC_INFO("persist: connected to redis %s", c->addr);
    s->connected_flag = true;
    s->auth_failed = false;
    if (s->cluster)
        mc_cluster_want_slots(s);
    mc_store_pump(s);
}

void mc_store_conn_lost(mc_persist_store *s, mc_persist_conn *c, mc_req_list *inflight)
{
    (void)c;
    s->connected_flag = false;
    /* Back to the front of the queue in their original order. */
    while (inflight->tail) {
        mc_persist_req *r = inflight->tail;
        mc_list_remove(inflight, r);
        s->inflight--;
        r->sent_on = NULL;
        if (r->abandoned) {
            mc_req_free(r);
            continue;
        }
        if (mc_op_is_write(r->op))
            s->writes_retried++;
        r->retried = true;
        r->asking_sent = false;
        insert_ordered(&s->pending, r);
    }
    if (s->cluster)
        mc_cluster_want_slots(s);
}

void mc_store_error(mc_persist_store *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->last_error, sizeof s->last_error, fmt, ap);
    va_end(ap);
    MC_WARNING("persist: %s", s->last_error);
}

void mc_store_auth_failed(mc_persist_store *s, const char *why)
{
    snprintf(s->last_error, sizeof s->last_error, "redis refused the credentials (%s)", why);
    MC_ERROR("persist: %s", s->last_error);
    s->auth_failed = true;
    /* Everything waiting fails now (retrying cannot help until the password is fixed),
     * except the store's own schema and slot requests. */
    for (mc_persist_req *r = s->pending.head, *next; r; r = next) {
        next = r->next;
        if (r->op == OP_SCHEMA || r->op == OP_SLOTS)
            continue;
        mc_list_remove(&s->pending, r);
        mc_req_fail(r, MC_PERSIST_AUTH, "%s", s->last_error);
        if (s->closing)
            return; /* freed by that callback */
    }
}

static void tick_run(mc_persist_store *s);

/* The done event: refused requests called back from the loop (request.c). */
void mc_store_done_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    mc_persist_store *s = arg;
    mc_store_enter(s);
    mc_req_run_done(s);
    mc_store_leave(s);
}

void mc_store_tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    mc_persist_store *s = arg;
    mc_store_enter(s);
    tick_run(s);
    mc_store_leave(s);
}

static void tick_run(mc_persist_store *s)
{
    mc_time_us now = mc_clock_now_us();
    mc_time_us connect_limit = (mc_time_us)(s->cfg.backoff_max_ms + 5000) * MC_US_PER_MS;
    for (size_t i = 0; i < s->nconns; i++) {
        mc_persist_conn *c = s->conns[i];
        if ((c->state == CONN_CONNECTING || c->state == CONN_HANDSHAKE) &&
            now - c->state_since > connect_limit)
            mc_conn_drop(c, "no answer to connect/handshake in time");
    }
    /* A node that stopped answering (the oldest request on its connection has waited a whole
     * request timeout, or 15 s): drop the connection, so the requests are sent again after the
     * reconnect instead of waiting on it forever. */
    uint32_t hung_ms = s->cfg.request_timeout_ms < 15000 ? s->cfg.request_timeout_ms : 15000;
    mc_time_us hung = (mc_time_us)hung_ms * MC_US_PER_MS;
    for (size_t i = 0; i < s->nconns; i++) {
        mc_persist_conn *c = s->conns[i];
        if (c->state == CONN_READY && c->inflight.head &&
            now - c->inflight.head->sent_at > hung)
            mc_conn_drop(c, "no reply within the request timeout");
    }
    /* Requests past their deadline, waiting or in flight. */
    for (mc_persist_req *r = s->pending.head, *next; r; r = next) {
        next = r->next;
        if (now >= r->deadline) {
            mc_list_remove(&s->pending, r);
            mc_req_fail(r, MC_PERSIST_UNAVAILABLE, "not acknowledged in %u ms (%s)",
                        s->cfg.request_timeout_ms, s->last_error[0] ? s->last_error : "redis busy");
            if (s->closing)
                return; /* freed by that callback */
        }
    }
    for (size_t i = 0; i < s->nconns; i++) {
        for (mc_persist_req *r = s->conns[i]->inflight.head; r; r = r->next) {
            if (!r->abandoned && now >= r->deadline) {
                mc_persist_result res = {.status = MC_PERSIST_UNAVAILABLE,
                                         .reason = "no reply in time (may have been applied)",
                                         .dbid = r->dbid};
                mc_persist_cb cb = r->cb;
                r->abandoned = true;
                r->cb = NULL;
                if (mc_op_is_write(r->op))
                    s->writes_failed++;
                if (cb)
                    cb(r->ctx, &res);
                if (s->closing)
                    return;
            }
        }
    }
    mc_store_pump(s);
}

/* --- the store (created by store_new.c) ------------------------------------------------- */

static void fail_list(mc_req_list *l)
{
    while (l->head) {
        mc_persist_req *r = l->head;
        mc_list_remove(l, r);
        if (r->abandoned)
            mc_req_free(r);
        else
            mc_req_fail(r, MC_PERSIST_CLOSED, "store closed");
    }
}

static void destroy(mc_persist_store *s)
{
    s->closing = true;
    /* Connections first (hiredis calls the callbacks of requests in flight with no reply:
     * they ignore it), then every request fails with CLOSED. */
    mc_req_list inflight = {0};
    for (size_t i = 0; i < s->nconns; i++) {
        mc_persist_conn *c = s->conns[i];
        while (c->inflight.head) {
            mc_persist_req *r = c->inflight.head;
            mc_list_remove(&c->inflight, r);
            r->sent_on = NULL;
            mc_list_push_back(&inflight, r);
        }
        mc_conn_free(c);
    }
    free(s->conns);
    s->conns = NULL;
    s->nconns = 0;
    fail_list(&inflight);
    fail_list(&s->done);
    fail_list(&s->pending);
    if (s->tick_ev)
        event_free(s->tick_ev);
    if (s->done_ev)
        event_free(s->done_ev);
    size_t ntypes = s->cfg.defs ? mc_defs_type_count(s->cfg.defs) : 0;
    if (s->schema_state)
        for (size_t i = 0; i < ntypes; i++)
            free(s->schema_state[i]);
    free(s->schema_state);
    free(s->schema_refused);
    free(s->schema_watch);
    free(s->slot_map);
    if (s->password) {
        sodium_memzero(s->password, strlen(s->password));
        free(s->password);
    }
    free(s->process_name);
    free(s->prefix);
    free(s->user);
    free(s->address);
    free(s->owner);
    for (size_t i = 0; i < MC_PERSIST_MAX_SEEDS; i++)
        free(s->seeds[i]);
    free(s);
}

/* Inside a callback: fail every request now (their callbacks run with CLOSED, requests in
 * flight stay with their connection, abandoned), free later. */
static void close_now(mc_persist_store *s)
{
    s->closing = true;
    for (size_t i = 0; i < s->nconns; i++)
        for (mc_persist_req *r = s->conns[i]->inflight.head; r; r = r->next) {
            if (r->abandoned)
                continue;
            mc_persist_cb cb = r->cb;
            r->abandoned = true;
            r->cb = NULL;
            mc_persist_result res = {.status = MC_PERSIST_CLOSED, .reason = "store closed",
                                     .dbid = r->dbid};
            if (cb)
                cb(r->ctx, &res);
        }
    fail_list(&s->done);
    fail_list(&s->pending);
}

void mc_persist_store_free(mc_persist_store *s)
{
    if (!s || s->free_pending)
        return;
    if (s->depth > 0) {
        s->free_pending = true;
        close_now(s);
        return;
    }
    destroy(s);
}

void mc_store_enter(mc_persist_store *s) { s->depth++; }

bool mc_store_leave(mc_persist_store *s)
{
    if (--s->depth == 0 && s->free_pending) {
        destroy(s);
        return true;
    }
    return false;
}

void mc_persist_set_owner(mc_persist_store *s, const char *owner, uint64_t incarnation)
{
    char *o = owner && owner[0] ? strdup(owner) : NULL;
    if (o) {
        free(s->owner);
        s->owner = o;
    }
    s->incarnation = incarnation;
}

bool mc_persist_ready(const mc_persist_store *s)
{
    if (!s->schema_done)
        return false;
    for (size_t i = 0; i < s->nconns; i++)
        if (s->conns[i]->state == CONN_READY)
            return true;
    return false;
}

void mc_persist_set_write_gate(mc_persist_store *s, bool (*open)(void *ctx), void *ctx)
{
    s->gate = open;
    s->gate_ctx = ctx;
    mc_store_pump(s);
}

size_t mc_persist_gated(const mc_persist_store *s)
{
    if (!s->gate || s->gate(s->gate_ctx))
        return 0;
    size_t n = 0;
    for (const mc_persist_req *r = s->pending.head; r; r = r->next)
        n += mc_op_changes(r->op);
    return n;
}

size_t mc_persist_queue_depth(const mc_persist_store *s)
{
    size_t all = s->pending.count + s->inflight;
    return all > s->internal_reqs ? all - s->internal_reqs : 0;
}
