/* Watcher requests on the internal interface: ls, get and set answered at once; calls
 * answered when the callable completes, which for an asynchronous callable is later, from
 * the event loop. A call waiting for its answer keeps what a reply needs (the requester's
 * address, whether it came on a channel, the reply id), never the handler's info.
 *
 * At most MC_SERVER_MAX_WATCH_CALLS asynchronous calls wait at once; beyond, a call is
 * refused ("busy"). When the server is freed, calls still waiting are not answered (their
 * requesters time out): the registry detaches their dones (the callable's owner completes
 * them later as a no-op) and the server frees its records. */
#include "server_internal.h"
#include "common/log.h"
#include "server/pb.h"
#include "server/watcher_service.h"

#include <stdlib.h>
#include <string.h>

struct server_watch_call {
    mc_server *s;
    server_watch_call *prev, *next;
    mc_address source;
    bool on_channel;
    uint32_t reply_id;
};

static void unlink_call(mc_server *s, server_watch_call *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        s->watch_calls = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nwatch_calls--;
}

/* Pack and send a reply to the request c describes; frees reply. */
static void send_reply(mc_server *s, const server_watch_call *c, Mc__Control__WatcherReply *reply)
{
    if (!reply) {
        MC_ERROR("out of memory answering a watcher request");
        return;
    }
    size_t n = 0;
    uint8_t *buf = mc_pb_pack(reply, &n);
    mc_pb_free(reply);
    if (!buf) {
        MC_ERROR("out of memory packing a watcher reply");
        return;
    }
    mc_channel *ch = NULL;
    if (c->on_channel) {
        ch = mc_nub_find_channel(s->internal, &c->source);
        if (!ch) { /* the requester's channel died: it has been told, nobody waits */
            free(buf);
            return;
        }
    }
    int rc = mc_reply_to(s->internal, ch, &c->source, c->reply_id, buf, n);
    if (rc != MC_OK)
        MC_WARNING("cannot answer a watcher request: %s", mc_status_name(rc));
    free(buf);
}

static Mc__Control__WatcherReply *new_reply(Mc__Control__WatcherStatus st, const char *error)
{
    Mc__Control__WatcherReply *r = malloc(sizeof *r);
    if (!r)
        return NULL;
    mc__control__watcher_reply__init(r);
    r->status = st;
    if (error && error[0]) {
        char *e = mc_pb_strdup(error);
        if (e)
            r->error = e;
    }
    return r;
}

static void on_call_result(void *ctx, mc_watch_status st, const char *result, const char *err)
{
    server_watch_call *c = ctx;
    mc_server *s = c->s;
    unlink_call(s, c);
    if (!s->freeing) {
        Mc__Control__WatcherReply *r =
            new_reply(mc_watcher_status_to_wire(st),
                      st == MC_WATCH_OK ? NULL : (err && err[0] ? err : mc_watch_status_name(st)));
        if (r && st == MC_WATCH_OK && result) {
            r->result = mc_pb_strdup(result);
            r->has_result = r->result != NULL;
            if (!r->result)
                r->result = (char *)protobuf_c_empty_string;
        }
        send_reply(s, c, r);
    }
    free(c);
}

static void handle_call(mc_server *s, server_watch_call *c, const Mc__Control__WatcherRequest *req)
{
    const char *path = req->path ? req->path : "";
    if (mc_watch_is_async(s->watchers, path) && s->nwatch_calls >= MC_SERVER_MAX_WATCH_CALLS) {
        send_reply(s, c, new_reply(MC__CONTROL__WATCHER_STATUS__WS_REFUSED,
                                   "busy: too many asynchronous watcher calls waiting"));
        free(c);
        return;
    }
    /* Linked first: the callable may answer before mc_watch_call_async returns. */
    c->next = s->watch_calls;
    if (s->watch_calls)
        s->watch_calls->prev = c;
    s->watch_calls = c;
    s->nwatch_calls++;
    char err[512] = "";
    mc_watch_status st = mc_watch_call_async(s->watchers, path, (int)req->n_args,
                                             (const char *const *)req->args, on_call_result, c,
                                             err, sizeof err);
    if (st == MC_WATCH_OK)
        return; /* on_call_result answers (perhaps already has) and frees c */
    unlink_call(s, c);
    send_reply(s, c, new_reply(mc_watcher_status_to_wire(st),
                               err[0] ? err : mc_watch_status_name(st)));
    free(c);
}

void mc_server_watcher_request(mc_server *s, const mc_message_info *info, const uint8_t *data,
                               size_t len)
{
    s->watcher_requests++;
    if (!info->is_request || !info->source) {
        MC_WARNING("WATCHER message that is not a request; ignored");
        return;
    }
    server_watch_call *c = calloc(1, sizeof *c);
    if (!c) {
        MC_ERROR("out of memory answering a watcher request");
        return;
    }
    c->s = s;
    c->source = *info->source;
    c->on_channel = info->channel != NULL;
    c->reply_id = info->reply_id;
    Mc__Control__WatcherRequest *req = mc__control__watcher_request__unpack(NULL, len, data);
    if (!req) {
        send_reply(s, c, new_reply(MC__CONTROL__WATCHER_STATUS__WS_BAD_REQUEST,
                                   "malformed watcher request"));
        free(c);
        return;
    }
    if (req->op == MC__CONTROL__WATCHER_OP__WATCHER_CALL) {
        handle_call(s, c, req); /* takes c */
    } else {
        send_reply(s, c, mc_watcher_service_handle(s->watchers, req));
        free(c);
    }
    mc_pb_free(req);
}

void mc_server_watch_calls_free(mc_server *s)
{
    while (s->watch_calls) {
        server_watch_call *c = s->watch_calls;
        unlink_call(s, c);
        free(c);
    }
}
