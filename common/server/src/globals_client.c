/* Globally named bases, the process side: GLOBAL_REGISTER, GLOBAL_DEREGISTER and
 * GLOBAL_LOOKUP requests to the manager, each answered through its callback exactly once.
 * A name registered is kept (globals_kept.c) until it is deregistered, so that it can be
 * registered again with a restarted manager. */
#include "server_internal.h"
#include "common/log.h"
#include "server/control.h"
#include "server/pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GLOBAL_REPLY_TIMEOUT_US (5000 * MC_US_PER_MS)

const char *mc_global_status_name(mc_global_status st)
{
    switch (st) {
    case MC_GLOBAL_OK: return "ok";
    case MC_GLOBAL_TAKEN: return "taken";
    case MC_GLOBAL_NOT_FOUND: return "not found";
    case MC_GLOBAL_BAD: return "bad request";
    case MC_GLOBAL_FULL: return "full";
    case MC_GLOBAL_NOT_REGISTERED: return "not registered";
    case MC_GLOBAL_NO_ANSWER: return "no answer";
    }
    return "?";
}

void mc_server_mailbox_pack(const mc_mailbox_ref *mb, uint8_t out[MC_MAILBOX_WIRE_SIZE])
{
    mc_store_u32(out, (uint32_t)mb->id);
    mc_store_u32(out + 4, mb->ip);
    mc_store_u16(out + 8, mb->port);
    mc_store_u16(out + 10, mb->salt);
}

bool mc_server_mailbox_unpack(const uint8_t *data, size_t len, mc_mailbox_ref *out)
{
    memset(out, 0, sizeof *out);
    if (!data || len != MC_MAILBOX_WIRE_SIZE)
        return false;
    mc_istream is;
    mc_istream_init(&is, data, len);
    return mc_mailbox_ref_read(&is, out, 0) && mc_istream_ok(&is) && !mc_mailbox_ref_is_none(out);
}

static bool name_ok(const char *name)
{
    size_t n = name ? strnlen(name, MC_GLOBAL_NAME_MAX + 1) : 0;
    if (n < 1 || n > MC_GLOBAL_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (name[i] <= ' ' || name[i] > '~')
            return false;
    return true;
}

typedef struct {
    mc_server_global_fn fn;
    void *ctx;
    bool lookup;
    bool keep; /* a register: kept once the manager says OK */
    char name[MC_GLOBAL_NAME_MAX + 1];
    mc_mailbox_ref mb;
} global_wait;

static mc_global_status from_wire(Mc__Control__GlobalStatus st)
{
    switch (st) {
    case MC__CONTROL__GLOBAL_STATUS__GLOBAL_OK: return MC_GLOBAL_OK;
    case MC__CONTROL__GLOBAL_STATUS__GLOBAL_TAKEN: return MC_GLOBAL_TAKEN;
    case MC__CONTROL__GLOBAL_STATUS__GLOBAL_NOT_FOUND: return MC_GLOBAL_NOT_FOUND;
    case MC__CONTROL__GLOBAL_STATUS__GLOBAL_NOT_REGISTERED: return MC_GLOBAL_NOT_REGISTERED;
    case MC__CONTROL__GLOBAL_STATUS__GLOBAL_FULL: return MC_GLOBAL_FULL;
    default: return MC_GLOBAL_BAD;
    }
}

static void on_global_reply(mc_server *s, int status, const uint8_t *data, size_t len, void *arg)
{
    global_wait *w = arg;
    Mc__Control__GlobalReply *r =
        status == MC_REPLY_OK ? mc__control__global_reply__unpack(NULL, len, data) : NULL;
    mc_global_status st = MC_GLOBAL_NO_ANSWER;
    const char *reason = "the manager did not answer in time";
    mc_mailbox_ref mb;
    const mc_mailbox_ref *found = NULL;
    if (status == MC_REPLY_CANCELLED) {
        reason = "the server is shutting down";
    } else if (status == MC_REPLY_OK && !r) {
        st = MC_GLOBAL_BAD;
        reason = "malformed reply from the manager";
    } else if (r) {
        st = from_wire(r->status);
        reason = r->reason ? r->reason : "";
        if (st == MC_GLOBAL_OK && w->lookup) {
            if (mc_server_mailbox_unpack(r->mailbox.data, r->mailbox.len, &mb)) {
                found = &mb;
            } else {
                st = MC_GLOBAL_BAD;
                reason = "the manager's reply holds no valid mailbox";
            }
        }
    }
    if (w->keep && st == MC_GLOBAL_OK)
        mc_server_globals_keep(s, w->name, &w->mb); /* before fn, which may deregister it */
    if (w->fn)
        w->fn(s, w->ctx, st, found, st == MC_GLOBAL_OK ? "" : reason);
    mc_pb_free(r);
    free(w);
}

static int send_global(mc_server *s, uint8_t msg_id, const void *msg, mc_server_global_fn fn,
                       void *ctx, bool keep, const char *name, const mc_mailbox_ref *mb)
{
    global_wait *w = calloc(1, sizeof *w);
    if (!w)
        return MC_ERR_NO_MEMORY;
    w->fn = fn;
    w->ctx = ctx;
    w->lookup = msg_id == MC_CTL_GLOBAL_LOOKUP;
    w->keep = keep;
    if (keep) {
        snprintf(w->name, sizeof w->name, "%s", name);
        w->mb = *mb;
    }
    int rc = mc_server_send_request(s, &s->manager, msg_id, msg, on_global_reply, w,
                                    GLOBAL_REPLY_TIMEOUT_US, false);
    if (rc != MC_OK)
        free(w);
    return rc;
}

static int send_entry(mc_server *s, uint8_t msg_id, const char *name, const mc_mailbox_ref *mb,
                      mc_server_global_fn fn, void *ctx, bool keep)
{
    if (s->desc.role == MC_ROLE_MANAGER || !name_ok(name) || !mb || mc_mailbox_ref_is_none(mb))
        return MC_ERR_INVALID;
    uint8_t wire[MC_MAILBOX_WIRE_SIZE];
    mc_server_mailbox_pack(mb, wire);
    Mc__Control__GlobalEntry e = MC__CONTROL__GLOBAL_ENTRY__INIT;
    e.name = (char *)name;
    e.mailbox.data = wire;
    e.mailbox.len = sizeof wire;
    return send_global(s, msg_id, &e, fn, ctx, keep, name, mb);
}

int mc_server_global_register(mc_server *s, const char *name, const mc_mailbox_ref *mb,
                              mc_server_global_fn fn, void *ctx)
{
    if (!fn)
        return MC_ERR_INVALID;
    return send_entry(s, MC_CTL_GLOBAL_REGISTER, name, mb, fn, ctx, true);
}

int mc_server_global_register_again(mc_server *s, const char *name, const mc_mailbox_ref *mb,
                                    mc_server_global_fn fn, void *ctx)
{
    return send_entry(s, MC_CTL_GLOBAL_REGISTER, name, mb, fn, ctx, false);
}

int mc_server_global_deregister(mc_server *s, const char *name, const mc_mailbox_ref *mb,
                                mc_server_global_fn fn, void *ctx)
{
    /* The owner wants it gone, whatever the manager answers: never registered again. */
    if (s->desc.role != MC_ROLE_MANAGER && name && mb)
        mc_server_globals_forget(s, name, mb);
    return send_entry(s, MC_CTL_GLOBAL_DEREGISTER, name, mb, fn, ctx, false);
}

int mc_server_global_lookup(mc_server *s, const char *name, mc_server_global_fn fn, void *ctx)
{
    if (s->desc.role == MC_ROLE_MANAGER || !fn || !name_ok(name))
        return MC_ERR_INVALID;
    Mc__Control__GlobalLookup q = MC__CONTROL__GLOBAL_LOOKUP__INIT;
    q.name = (char *)name;
    return send_global(s, MC_CTL_GLOBAL_LOOKUP, &q, fn, ctx, false, NULL, NULL);
}
