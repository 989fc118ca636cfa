/* Entity messages to other processes held while the process is out of touch with the
 * manager (its lease has run out, server/lease.h): one-way messages and requests wait in the
 * lease in order, and go when it is renewed; dropped (never sent) when the process is fenced
 * or freed. A request keeps its place among the waiting calls (calls/waiting) and hears
 * TIMEOUT when held past the call timeout, UNAVAILABLE when dropped, PROCESS_DEAD when its
 * peer died meanwhile. */
#include "engine_internal.h"
#include "common/log.h"
#include "server/lease.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    mc_engine *e;
    mc_address addr;
    mc_pending *pending;   /* a request's waiter (NULL: one-way) */
    uint8_t id;
    size_t len;
    uint8_t data[];
} held_msg;

bool engine_must_hold(mc_engine *e)
{
    mc_lease *l = mc_server_lease(e->server);
    return l && mc_lease_must_hold(l, mc_clock_now_us());
}

static void log_addr(const char *what, const mc_address *a, int rc)
{
    char text[MC_ADDRESS_STRLEN];
    MC_WARNING("%s to %s: %s", what, mc_address_format(a, text, sizeof text),
               mc_call_status_name(rc));
}

static void finish_request(mc_engine *e, mc_pending *p, int status)
{
    if (!p->done)
        engine_pending_finish(p, status, NULL);
    engine_pending_unlink(p);
    (void)e;
    free(p);
}

static void on_held(void *arg, mc_lease_outcome outcome)
{
    held_msg *h = arg;
    mc_engine *e = h->e;
    if (outcome != MC_LEASE_RELEASE) {
        e->st.lease_dropped++;
        if (h->pending)
            finish_request(e, h->pending, outcome == MC_LEASE_EXPIRED ? MC_CALL_ERR_TIMEOUT
                                                                      : MC_CALL_ERR_UNAVAILABLE);
        free(h);
        return;
    }
    int rc;
    if (h->pending) {
        if (h->pending->done) { /* its peer died while it was held: answered already */
            finish_request(e, h->pending, MC_CALL_ERR_PROCESS_DEAD);
            free(h);
            return;
        }
        rc = engine_request_now(e, h->pending, h->id, h->data, h->len);
        if (rc != MC_CALL_OK)
            finish_request(e, h->pending, rc);
    } else {
        rc = engine_send_now(e, &h->addr, h->id, h->data, h->len);
    }
    if (rc != MC_CALL_OK && engine_log_allowed(++e->st.lease_release_failed))
        log_addr("a held entity message could not be sent", &h->addr, rc);
    free(h);
}

static held_msg *held_new(mc_engine *e, const mc_address *addr, uint8_t id, const uint8_t *data,
                          size_t len)
{
    held_msg *h = malloc(sizeof *h + len);
    if (!h)
        return NULL;
    h->e = e;
    h->addr = *addr;
    h->pending = NULL;
    h->id = id;
    h->len = len;
    if (len)
        memcpy(h->data, data, len);
    return h;
}

static int refuse_full(mc_engine *e, const mc_address *addr, held_msg *h)
{
    free(h);
    if (engine_log_allowed(++e->st.lease_full)) {
        char text[MC_ADDRESS_STRLEN];
        MC_WARNING("out of touch with the manager and the held entity messages are at their "
                   "bound (leaseHeldMax/leaseHeldBytes): a message to %s refused (%llu so far)",
                   mc_address_format(addr, text, sizeof text),
                   (unsigned long long)e->st.lease_full);
    }
    return MC_CALL_ERR_BUSY;
}

int engine_hold_message(mc_engine *e, const mc_address *addr, uint8_t id, const uint8_t *data,
                        size_t len)
{
    held_msg *h = held_new(e, addr, id, data, len);
    if (!h)
        return MC_CALL_ERR_BUSY;
    if (mc_lease_hold(mc_server_lease(e->server), MC_LEASE_CALL, len, 0, on_held, h) != 0)
        return refuse_full(e, addr, h);
    e->st.lease_held++;
    return MC_CALL_OK;
}

int engine_hold_request(mc_engine *e, const mc_address *addr, uint8_t id, const uint8_t *data,
                        size_t len, mc_engine_done_fn done, void *ctx)
{
    held_msg *h = held_new(e, addr, id, data, len);
    mc_pending *p = h ? engine_pending_new(e, addr, false, done, ctx) : NULL;
    if (!p) {
        free(h);
        return MC_CALL_ERR_BUSY;
    }
    h->pending = p;
    mc_time_us deadline = mc_clock_now_us() + e->call_timeout_us;
    if (mc_lease_hold(mc_server_lease(e->server), MC_LEASE_CALL, len, deadline, on_held, h) !=
        0) {
        engine_pending_unlink(p);
        e->npending--;
        free(p);
        return refuse_full(e, addr, h);
    }
    e->st.lease_held++;
    return MC_CALL_OK;
}
