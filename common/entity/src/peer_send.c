/* Sending to a live peer now, past the lease: into its channel's bundle, each channel a
 * handler wrote to sent once (the flush event) when the handler returns; requests answered
 * through their pending record. What decides between this, the local queue and the lease is
 * transport.c; what the lease held comes here when it is renewed (lease_hold.c). */
#include "engine_internal.h"
#include "common/log.h"

#include <stdlib.h>

void engine_mark_dirty(mc_engine *e, const mc_address *a)
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

const mc_message_def *engine_message_def(const mc_engine *e, uint8_t id)
{
    for (size_t i = 0; i < e->message_def_count; i++)
        if (e->message_defs[i].id == id)
            return &e->message_defs[i];
    return NULL;
}

int engine_check_peer(mc_engine *e, const mc_address *addr, mc_channel **out)
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
    int rc = engine_check_peer(e, addr, &ch);
    if (rc != MC_CALL_OK)
        return rc;
    if (mc_channel_send_message(ch, engine_message_def(e, msg_id), data, len) != MC_OK)
        return MC_CALL_ERR_SEND;
    engine_mark_dirty(e, addr);
    return MC_CALL_OK;
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
    int rc = engine_check_peer(e, &p->dest, &ch);
    if (rc != MC_CALL_OK)
        return rc;
    /* Into the channel's bundle like a one-way message (mc_channel_request would send the
     * bundle at once): everything a handler sends on a channel goes out together when it
     * returns, so two calls made in one handler arrive in one bundle. */
    mc_bundle *b = mc_channel_bundle(ch);
    if (mc_bundle_start_request(b, engine_message_def(e, msg_id), on_mercury_reply, p,
                                e->call_timeout_us) != MC_OK)
        return MC_CALL_ERR_SEND; /* mercury did not take it: nothing will call back */
    /* Once started, mercury owns the request: a failure from here is answered through
     * on_mercury_reply (timeout, or the channel's death). */
    int wr = mc_bundle_write(b, data, len);
    if (mc_bundle_end_message(b) != MC_OK || wr != MC_OK) {
        char a[MC_ADDRESS_STRLEN];
        MC_WARNING("a request of %zu bytes to %s could not be written whole", len,
                   mc_address_format(&p->dest, a, sizeof a));
    }
    engine_mark_dirty(e, &p->dest);
    return MC_CALL_OK;
}
