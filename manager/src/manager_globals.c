/* The manager's GLOBAL_REGISTER, GLOBAL_DEREGISTER and GLOBAL_LOOKUP requests over the
 * globals table (globals.c), and its watchers (globals/count, globals/lookup NAME). */
#include "manager_internal.h"
#include "common/log.h"
#include "server/control.h"
#include "server/pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static Mc__Control__GlobalStatus to_wire(mc_globals_status st)
{
    switch (st) {
    case MC_GLOBALS_OK: return MC__CONTROL__GLOBAL_STATUS__GLOBAL_OK;
    case MC_GLOBALS_TAKEN: return MC__CONTROL__GLOBAL_STATUS__GLOBAL_TAKEN;
    case MC_GLOBALS_NOT_FOUND: return MC__CONTROL__GLOBAL_STATUS__GLOBAL_NOT_FOUND;
    case MC_GLOBALS_FULL:
    case MC_GLOBALS_NO_MEMORY: return MC__CONTROL__GLOBAL_STATUS__GLOBAL_FULL;
    default: return MC__CONTROL__GLOBAL_STATUS__GLOBAL_BAD_REQUEST;
    }
}

/* The name of a request as a C string, or NULL when it is not a valid global name. */
static const char *valid_name(const char *name)
{
    return name && mc_globals_name_ok(name, strnlen(name, MC_GLOBAL_NAME_MAX + 1)) ? name : NULL;
}

void mc_manager_handle_global(mc_manager *m, uint8_t msg_id, const char *src,
                              const uint8_t *data, size_t len, mc_server_request *request)
{
    if (!request) {
        mc_manager_unusable(m, "a GLOBAL message that is not a request", src);
        return;
    }
    Mc__Control__GlobalReply reply = MC__CONTROL__GLOBAL_REPLY__INIT;
    uint8_t wire[MC_MAILBOX_WIRE_SIZE];
    char why[200] = "";
    mc_globals_status st = MC_GLOBALS_BAD;
    const char *what = mc_control_name(msg_id);
    if (msg_id == MC_CTL_GLOBAL_LOOKUP) {
        Mc__Control__GlobalLookup *q = mc__control__global_lookup__unpack(NULL, len, data);
        const char *name = q ? valid_name(q->name) : NULL;
        mc_mailbox_ref mb;
        if (!name) {
            snprintf(why, sizeof why, q ? "not a valid global name" : "malformed GLOBAL_LOOKUP");
        } else {
            st = mc_globals_lookup(m->globals, name, &mb, NULL);
            if (st == MC_GLOBALS_OK) {
                mc_server_mailbox_pack(&mb, wire);
                reply.mailbox.data = wire;
                reply.mailbox.len = sizeof wire;
            } else {
                snprintf(why, sizeof why, "no base is registered as '%s'", name);
            }
        }
        if (!q)
            mc_manager_unusable(m, "malformed GLOBAL_LOOKUP", src);
        mc_pb_free(q);
        m->global_lookups++;
    } else {
        Mc__Control__GlobalEntry *q = mc__control__global_entry__unpack(NULL, len, data);
        const char *name = q ? valid_name(q->name) : NULL;
        mc_mailbox_ref mb;
        mc_reg_entry *e = mc_registry_find_alive_addr(m->registry, src);
        bool mb_ok = q && mc_server_mailbox_unpack(q->mailbox.data, q->mailbox.len, &mb);
        if (!q) {
            mc_manager_unusable(m, msg_id == MC_CTL_GLOBAL_REGISTER ? "malformed GLOBAL_REGISTER"
                                                                    : "malformed GLOBAL_DEREGISTER",
                                src);
            snprintf(why, sizeof why, "malformed %s", what);
        } else if (!e) {
            reply.status = MC__CONTROL__GLOBAL_STATUS__GLOBAL_NOT_REGISTERED;
            snprintf(why, sizeof why, "%s is not a live registered process", src);
        } else if (!name) {
            snprintf(why, sizeof why, "not a valid global name (1..%u printable characters, no "
                     "spaces)", MC_GLOBAL_NAME_MAX);
        } else if (!mb_ok) {
            snprintf(why, sizeof why, "not a valid mailbox (12 bytes, not none)");
        } else if (msg_id == MC_CTL_GLOBAL_REGISTER) {
            st = mc_globals_register(m->globals, name, &mb, e->id);
            if (st == MC_GLOBALS_TAKEN)
                snprintf(why, sizeof why, "'%s' is registered already", name);
            else if (st != MC_GLOBALS_OK)
                snprintf(why, sizeof why, "%s names registered already",
                         st == MC_GLOBALS_FULL ? "the most" : "out of memory:");
            if (st == MC_GLOBALS_OK)
                MC_DEBUG("%s registered '%s'", e->name, name);
            else if (st == MC_GLOBALS_FULL)
                MC_WARNING("%s: cannot register '%s': %u names registered", e->name, name,
                           MC_GLOBALS_MAX);
        } else {
            st = mc_globals_deregister(m->globals, name, &mb);
            if (st != MC_GLOBALS_OK)
                snprintf(why, sizeof why, "no '%s' with that mailbox", name);
        }
        mc_pb_free(q);
    }
    if (reply.status == MC__CONTROL__GLOBAL_STATUS__GLOBAL_OK)
        reply.status = to_wire(st);
    if (reply.status != MC__CONTROL__GLOBAL_STATUS__GLOBAL_OK)
        reply.reason = why;
    mc_server_reply(m->server, request, &reply);
}

void mc_manager_drop_globals(mc_manager *m, const mc_reg_entry *e)
{
    size_t n = mc_globals_drop_owner(m->globals, e->id);
    if (n)
        MC_INFO("dropped %zu global name%s registered by %s (%s)", n, n == 1 ? "" : "s", e->name,
                mc_state_name(e->state));
}

static void get_count(void *ctx, mc_watch_value *out)
{
    out->as.u = mc_globals_count(((mc_manager *)ctx)->globals);
}

/* globals/lookup NAME: "mailbox id=.. addr=IP:PORT component=.. type=.. owner=NAME". */
static bool call_lookup(void *ctx, int argc, const char *const *argv, char **result, char *why,
                        size_t whylen)
{
    mc_manager *m = ctx;
    if (argc != 1 || !valid_name(argv[0])) {
        snprintf(why, whylen, "usage: globals/lookup NAME");
        return false;
    }
    mc_mailbox_ref mb;
    uint32_t owner = 0;
    if (mc_globals_lookup(m->globals, argv[0], &mb, &owner) != MC_GLOBALS_OK) {
        snprintf(why, whylen, "no base is registered as '%s'", argv[0]);
        return false;
    }
    mc_reg_entry *e = mc_registry_find_id(m->registry, owner);
    char text[256];
    snprintf(text, sizeof text, "id=%d addr=%u.%u.%u.%u:%u component=%s type=%u owner=%s",
             (int)mb.id, mb.ip >> 24, (mb.ip >> 16) & 255, (mb.ip >> 8) & 255, mb.ip & 255,
             mb.port, mc_component_name(mc_mailbox_ref_component(&mb)),
             mc_mailbox_ref_type(&mb), e ? e->name : "?");
    *result = strdup(text);
    return *result != NULL;
}

void mc_manager_publish_globals(mc_manager *m)
{
    mc_watchers *w = mc_server_watchers(m->server);
    mc_watch_add(w, "globals/count", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_count, NULL, m);
    mc_watch_add_uint(w, "globals/lookups", &m->global_lookups, MC_WATCH_READ_ONLY);
    mc_watch_add_callable(w, "globals/lookup", call_lookup, m,
                          "globals/lookup NAME: the mailbox registered under NAME");
}
