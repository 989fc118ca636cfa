/* Getting entity messages to where they go: channels to peers (batched: every channel a
 * handler wrote to is sent once the handler returns), a queue for messages to ourselves
 * (delivered from the event loop, in order), requests and their answers, and failing at
 * once what waits on a process the manager declared dead. */
#include "engine_internal.h"
#include "entity/backup_wire.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void engine_transport_init(mc_engine *e)
{
    e->pending.next = e->pending.prev = &e->pending;
}

void engine_pending_unlink(mc_pending *p)
{
    if (p->next) {
        p->prev->next = p->next;
        p->next->prev = p->prev;
    }
    p->next = p->prev = NULL;
}

mc_pending *engine_pending_new(mc_engine *e, const mc_address *dest, bool local,
                               mc_engine_done_fn fn, void *ctx)
{
    mc_pending *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->e = e;
    p->dest = *dest;
    p->local = local;
    p->fn = fn;
    p->ctx = ctx;
    p->next = e->pending.next;
    p->prev = &e->pending;
    e->pending.next->prev = p;
    e->pending.next = p;
    e->npending++;
    return p;
}

/* Deliver the outcome once. */
void engine_pending_finish(mc_pending *p, int status, mc_istream *payload)
{
    if (p->done || !p->e)
        return;
    p->done = true;
    mc_engine *e = p->e;
    if (e->npending)
        e->npending--;
    if (status == MC_CALL_OK)
        e->st.replies_received++;
    p->fn(e, p->ctx, status, payload);
}

static void free_local_queue(mc_engine *e)
{
    while (e->lq_head) {
        local_msg *m = e->lq_head;
        e->lq_head = m->next;
        free(m);
    }
    e->lq_tail = NULL;
}

void engine_transport_free(mc_engine *e)
{
    /* Whoever waits hears "unavailable" (every callback exactly once); nothing new is sent
     * while the engine is freeing. */
    for (bool again = true; again;) {
        again = false;
        for (mc_pending *p = e->pending.next; p != &e->pending; p = p->next)
            if (!p->done) {
                engine_pending_finish(p, MC_CALL_ERR_UNAVAILABLE, NULL);
                again = true;
                break;
            }
    }
    free_local_queue(e);
    for (mc_pending *p = e->pending.next; p != &e->pending;) {
        mc_pending *next = p->next;
        engine_pending_unlink(p);
        if (p->local)
            free(p);
        else
            p->e = NULL; /* mercury still holds it: freed when its request is cancelled */
        p = next;
    }
}

void engine_fail_pending_to(mc_engine *e, const char *addr)
{
    mc_address a;
    if (mc_address_parse(addr, &a) != MC_OK)
        return;
    size_t failed = 0;
    /* A finishing callback may add or finish others: restart after each. */
    for (bool again = true; again;) {
        again = false;
        for (mc_pending *p = e->pending.next; p != &e->pending; p = p->next) {
            if (p->done || p->local || !mc_address_equal(&p->dest, &a))
                continue;
            failed++;
            engine_pending_finish(p, MC_CALL_ERR_PROCESS_DEAD, NULL);
            again = true;
            break;
        }
    }
    if (failed)
        MC_INFO("%zu calls waiting on %s failed: the process is dead", failed, addr);
}

/* ---- the local queue --------------------------------------------------------------- */

static int local_push(mc_engine *e, uint8_t id, bool is_request, mc_pending *p,
                      const uint8_t *data, size_t len)
{
    if (e->freeing)
        return MC_CALL_ERR_UNAVAILABLE;
    local_msg *m = malloc(sizeof *m + len);
    if (!m)
        return MC_CALL_ERR_BUSY;
    m->next = NULL;
    m->id = id;
    m->is_request = is_request;
    m->pending = p;
    m->len = len;
    if (len)
        memcpy(m->data, data, len);
    if (e->lq_tail)
        e->lq_tail->next = m;
    else
        e->lq_head = m;
    e->lq_tail = m;
    event_active(e->local_ev, 0, 0);
    return MC_CALL_OK;
}

void engine_on_local_event(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    mc_engine *e = ctx;
    /* Only what is queued now: messages queued by these handlers wait for the next turn. */
    local_msg *tail = e->lq_tail;
    while (e->lq_head) {
        local_msg *m = e->lq_head;
        e->lq_head = m->next;
        if (!e->lq_head)
            e->lq_tail = NULL;
        if (m->id == 0) {
            mc_pending *p = m->pending;
            mc_istream is;
            mc_istream_init(&is, m->data, m->len);
            engine_pending_unlink(p);
            engine_pending_finish(p, MC_CALL_OK, &is);
            free(p);
        } else {
            mc_origin o = {.local = true, .addr = e->self_addr, .is_request = m->is_request,
                           .pending = m->pending};
            engine_handle_message(e, m->id, &o, m->data, m->len);
        }
        bool last = m == tail;
        free(m);
        if (last)
            break;
    }
    if (e->lq_head)
        event_active(e->local_ev, 0, 0);
}

/* ---- channels ------------------------------------------------------------------------ */

static void mark_dirty(mc_engine *e, const mc_address *a)
{
    for (size_t i = 0; i < e->ndirty; i++)
        if (mc_address_equal(&e->dirty[i], a))
            return;
    if (e->ndirty == e->dirty_cap) {
        size_t cap = e->dirty_cap ? e->dirty_cap * 2 : 8;
        mc_address *d = realloc(e->dirty, cap * sizeof *d);
        if (!d)
            return; /* the nub's timer sends it within a tick */
        e->dirty = d;
        e->dirty_cap = cap;
    }
    e->dirty[e->ndirty++] = *a;
    if (e->ndirty == 1)
        event_active(e->flush_ev, 0, 0);
}

void engine_on_flush_event(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    mc_engine *e = ctx;
    for (size_t i = 0; i < e->ndirty; i++) {
        mc_channel *ch = mc_nub_find_channel(e->nub, &e->dirty[i]);
        if (ch)
            mc_channel_send(ch);
    }
    e->ndirty = 0;
}

static const mc_message_def *def_of(uint8_t id)
{
    for (size_t i = 0; i < mc_engine_message_count; i++)
        if (mc_engine_messages[i].id == id)
            return &mc_engine_messages[i];
    return NULL;
}

static int check_peer(mc_engine *e, const mc_address *addr, mc_channel **out)
{
    if (engine_peer_dead(e, addr))
        return MC_CALL_ERR_PROCESS_DEAD;
    *out = mc_nub_find_channel(e->nub, addr);
    if (!*out)
        *out = mc_server_channel(e->server, addr);
    return *out ? MC_CALL_OK : MC_CALL_ERR_SEND;
}

int engine_send_now(mc_engine *e, const mc_address *addr, uint8_t msg_id, const uint8_t *data,
                    size_t len)
{
    mc_channel *ch = NULL;
    int rc = check_peer(e, addr, &ch);
    if (rc != MC_CALL_OK)
        return rc;
    if (mc_channel_send_message(ch, def_of(msg_id), data, len) != MC_OK)
        return MC_CALL_ERR_SEND;
    mark_dirty(e, addr);
    return MC_CALL_OK;
}

int mc_engine_send(mc_engine *e, const mc_address *addr, uint8_t msg_id, const uint8_t *data,
                   size_t len)
{
    if (e->freeing)
        return MC_CALL_ERR_UNAVAILABLE;
    if (mc_engine_is_self(e, addr))
        return local_push(e, msg_id, false, NULL, data, len);
    if (engine_peer_dead(e, addr))
        return MC_CALL_ERR_PROCESS_DEAD;
    if (engine_must_hold(e))
        return engine_hold_message(e, addr, msg_id, data, len);
    return engine_send_now(e, addr, msg_id, data, len);
}

static void on_mercury_reply(void *ctx, mc_reply_status status, const mc_message_info *info,
                             mc_istream *data)
{
    (void)info;
    mc_pending *p = ctx;
    if (p->e) {
        engine_pending_unlink(p);
        int st = status == MC_REPLY_OK        ? MC_CALL_OK
                 : status == MC_REPLY_TIMEOUT ? MC_CALL_ERR_TIMEOUT
                                              : MC_CALL_ERR_PROCESS_DEAD;
        if (status != MC_REPLY_CANCELLED)
            engine_pending_finish(p, st, status == MC_REPLY_OK ? data : NULL);
        else if (!p->done && p->e->npending)
            p->e->npending--;
    }
    free(p);
}

int engine_request_now(mc_engine *e, mc_pending *p, uint8_t msg_id, const uint8_t *data,
                       size_t len)
{
    mc_channel *ch = NULL;
    int rc = check_peer(e, &p->dest, &ch);
    if (rc != MC_CALL_OK)
        return rc;
    /* Into the channel's bundle like a one-way message (mc_channel_request would send the
     * bundle at once): everything a handler sends on a channel goes out together when it
     * returns, so two calls made in one handler arrive in one bundle. */
    mc_bundle *b = mc_channel_bundle(ch);
    if (mc_bundle_start_request(b, def_of(msg_id), on_mercury_reply, p, e->call_timeout_us) !=
        MC_OK)
        return MC_CALL_ERR_SEND; /* mercury did not take it: nothing will call back */
    /* Once started, mercury owns the request: a failure from here is answered through
     * on_mercury_reply (timeout, or the channel's death). */
    int wr = mc_bundle_write(b, data, len);
    if (mc_bundle_end_message(b) != MC_OK || wr != MC_OK) {
        char a[MC_ADDRESS_STRLEN];
        MC_WARNING("a request of %zu bytes to %s could not be written whole", len,
                   mc_address_format(&p->dest, a, sizeof a));
    }
    mark_dirty(e, &p->dest);
    return MC_CALL_OK;
}

int mc_engine_request(mc_engine *e, const mc_address *addr, uint8_t msg_id,
                      const uint8_t *data, size_t len, mc_engine_done_fn done, void *ctx)
{
    if (e->freeing)
        return MC_CALL_ERR_UNAVAILABLE;
    bool local = mc_engine_is_self(e, addr);
    if (!local && engine_peer_dead(e, addr))
        return MC_CALL_ERR_PROCESS_DEAD;
    if (!local && engine_must_hold(e))
        return engine_hold_request(e, addr, msg_id, data, len, done, ctx);
    mc_pending *p = engine_pending_new(e, addr, local, done, ctx);
    if (!p)
        return MC_CALL_ERR_BUSY;
    int rc = local ? local_push(e, msg_id, true, p, data, len)
                   : engine_request_now(e, p, msg_id, data, len);
    if (rc != MC_CALL_OK) {
        engine_pending_unlink(p);
        e->npending--;
        free(p);
    }
    return rc;
}

/* Arguments up to this size are copied next to the call header and written at once. */
#define CALL_JOIN_MAX 116u

/* A one-way call to a peer: header and arguments go straight into the channel's bundle. */
static int send_call_direct(mc_engine *e, const mc_address *addr, const uint8_t hdr[12],
                            const uint8_t *args, size_t len)
{
    mc_channel *ch = NULL;
    int rc = check_peer(e, addr, &ch);
    if (rc != MC_CALL_OK)
        return rc;
    if (engine_must_hold(e)) {
        /* out of touch with the manager: the call waits in the lease, whole */
        uint8_t *buf = malloc(MC_CALL_HEADER_SIZE + len);
        if (!buf)
            return MC_CALL_ERR_BUSY;
        memcpy(buf, hdr, MC_CALL_HEADER_SIZE);
        if (len)
            memcpy(buf + MC_CALL_HEADER_SIZE, args, len);
        rc = engine_hold_message(e, addr, MC_MSG_ENTITY_CALL, buf, MC_CALL_HEADER_SIZE + len);
        free(buf);
        return rc;
    }
    mc_bundle *b = mc_channel_bundle(ch);
    if (mc_bundle_start_message(b, def_of(MC_MSG_ENTITY_CALL), MC_RELIABLE_DRIVER) != MC_OK)
        return MC_CALL_ERR_SEND;
    bool ok;
    if (len <= CALL_JOIN_MAX) {
        /* small calls (most): header and arguments in one write */
        uint8_t buf[MC_CALL_HEADER_SIZE + CALL_JOIN_MAX];
        memcpy(buf, hdr, MC_CALL_HEADER_SIZE);
        if (len)
            memcpy(buf + MC_CALL_HEADER_SIZE, args, len);
        ok = mc_bundle_write(b, buf, MC_CALL_HEADER_SIZE + len) == MC_OK;
    } else {
        ok = mc_bundle_write(b, hdr, MC_CALL_HEADER_SIZE) == MC_OK &&
             mc_bundle_write(b, args, len) == MC_OK;
    }
    /* end_message also removes a message whose writes failed */
    if (mc_bundle_end_message(b) != MC_OK || !ok)
        return MC_CALL_ERR_SEND;
    mark_dirty(e, addr);
    return MC_CALL_OK;
}

int mc_engine_call(mc_engine *e, const mc_mailbox_ref *to, uint16_t method, int32_t caller_id,
                   const uint8_t *args, size_t len, mc_engine_done_fn done, void *ctx)
{
    char why[128];
    if (e->freeing)
        return MC_CALL_ERR_UNAVAILABLE;
    if (mc_mailbox_ref_is_none(to) ||
        !mc_mailbox_ref_valid(to, mc_defs_type_count(e->defs), why, sizeof why))
        return MC_CALL_ERR_MAILBOX;
    mc_call_header h = {.entity_id = to->id, .salt = to->salt, .method = method,
                        .caller_id = caller_id > 0 ? caller_id : 0};
    uint8_t hdr[MC_CALL_HEADER_SIZE];
    mc_call_header_pack(hdr, &h);
    mc_address addr;
    mc_mailbox_address(to, &addr);
    engine_redirect(e, to, &addr); /* a dead baseapp's base: to its new home */
    int rc;
    if (!done && !mc_engine_is_self(e, &addr)) {
        rc = send_call_direct(e, &addr, hdr, args, len);
    } else {
        mc_ostream os;
        mc_ostream_init(&os);
        mc_write_bytes(&os, hdr, sizeof hdr);
        if (len)
            mc_write_bytes(&os, args, len);
        if (!mc_ostream_ok(&os)) {
            mc_ostream_free(&os);
            return MC_CALL_ERR_ARGS;
        }
        rc = done ? mc_engine_request(e, &addr, MC_MSG_ENTITY_CALL, os.data, os.size, done, ctx)
                  : mc_engine_send(e, &addr, MC_MSG_ENTITY_CALL, os.data, os.size);
        mc_ostream_free(&os);
    }
    if (rc == MC_CALL_OK) {
        e->st.sent++;
        if (done)
            e->st.two_way_sent++;
    }
    return rc;
}

/* ---- answers ------------------------------------------------------------------------- */

void mc_engine_reply(mc_engine *e, const mc_origin *o, const uint8_t *data, size_t len)
{
    if (!o->is_request)
        return;
    if (o->local) {
        if (o->pending && local_push(e, 0, false, o->pending, data, len) != MC_CALL_OK)
            MC_ERROR("out of memory answering a local request");
        return;
    }
    mc_channel *ch = mc_nub_find_channel(e->nub, &o->addr);
    int rc = mc_reply_to(e->nub, ch, &o->addr, o->reply_id, data, len);
    if (rc != MC_OK) {
        char a[MC_ADDRESS_STRLEN];
        MC_WARNING("cannot answer %s: %s", mc_address_format(&o->addr, a, sizeof a),
                   mc_status_name(rc));
    }
}

void mc_engine_reply_status(mc_engine *e, const mc_origin *o, int status, const char *reason)
{
    if (!o->is_request)
        return;
    mc_ostream os;
    mc_ostream_init(&os);
    mc_call_reply_write(&os, status, NULL, 0, reason);
    mc_engine_reply(e, o, os.data, os.size);
    mc_ostream_free(&os);
}
