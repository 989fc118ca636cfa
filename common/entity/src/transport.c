/* Getting entity messages to where they go: to a live peer now (peer_send.c), held in the
 * lease while out of touch with the manager (lease_hold.c), or to ourselves through a queue
 * delivered from the event loop in order (to e->deliver, the one dispatch by id); calls,
 * requests and their answers. */
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
            e->deliver(e, m->id, &o, m->data, m->len);
        }
        bool last = m == tail;
        free(m);
        if (last)
            break;
    }
    if (e->lq_head)
        event_active(e->local_ev, 0, 0);
}

/* ---- to peers (through peer_send.c, or held in the lease) ---------------------------- */

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
    int rc = engine_check_peer(e, addr, &ch);
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
    if (mc_bundle_start_message(b, engine_message_def(e, MC_MSG_ENTITY_CALL),
                                MC_RELIABLE_DRIVER) != MC_OK)
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
    engine_mark_dirty(e, addr);
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
