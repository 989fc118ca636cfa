/* Calls through proxies (proxy.h): what a client sends (BASE_CALL and CELL_CALL on the
 * client nub, checked by client_parse.h, then run on its base or relayed to its cell), and
 * what the game sends to a client (CLIENT, CLIENT_VIA_BASE; CLIENT_VIA_CELL arrives from the
 * cell as CLIENT_VIA_BASE). */
#include "common/log.h"
#include "entity/client_wire.h"
#include "proxy_internal.h"
#include "retire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The client whose message this is, with a player (else refused). */
static proxy_client *sender(base_clients *bc, const mc_message_info *info)
{
    proxy_client *pc = mc_map_get(&bc->by_peer, proxy_peer_key(info->source), 0);
    if (!pc || pc->closing || pc->entity_id <= 0) {
        if (!pc || !pc->closing) /* a closing client's last words are ignored, not counted */
            proxy_refuse(bc, info->source, CLIENT_REFUSE_NO_PLAYER, "no player (yet)");
        return NULL;
    }
    return pc;
}

/* Run a checked client call (BASE_CALL or CELL_CALL bytes) on its player ent: -1 when it
 * ran (or was relayed to its cell), else the refusal with the reason in why. Shared with a
 * call its client sent to the baseapp the player retired from (retire_pass.c). */
int proxy_run_client_call(mc_engine *e, mc_entity *ent, mc_part part, const uint8_t *bytes,
                          size_t len, char *why, size_t whylen)
{
    client_call c;
    int r = client_parse_call(mc_engine_defs(e), ent->type, ent->id, part, bytes, len, &c, why,
                              whylen);
    if (r >= 0)
        return r;
    base_clients *bc = proxy_state(e);
    if (bc)
        bc->st.calls_in++;
    if (part == MC_PART_CELL) {
        if (ent->cell_state != MC_CELL_LIVE) {
            snprintf(why, whylen, "%s %d has no cell for %s", ent->td->name, (int)ent->id,
                     c.method->name);
            return CLIENT_REFUSE_NO_CELL;
        }
        /* relayed as the base relays CELL_VIA_BASE calls; the caller is the player */
        int rc = mc_engine_call(e, &ent->cell, c.method->index, ent->id, c.args, c.len, NULL,
                                NULL);
        if (rc != MC_CALL_OK) {
            snprintf(why, whylen, "relaying %s to its cell: %s", c.method->name,
                     mc_call_status_name(rc));
            return CLIENT_REFUSE_NO_CELL;
        }
        return -1;
    }
    mc_call_frame f;
    mc_engine_frame(e, &f, ent);
    f.ctx.caller_id = ent->id;
    f.ctx.from_client = true;
    why[0] = '\0';
    int st = mc_game_dispatch_exposed(mc_engine_module(e), &f.ctx, ent->type, MC_PART_BASE,
                                      (uint16_t)c.method->exposed_index, ent->props, c.args,
                                      c.len, why, whylen);
    if (!ent->in_reap)
        proxy_after_call(e, ent);
    if (st == MC_CALL_OK)
        return -1;
    if (!why[0])
        snprintf(why, whylen, "%s", mc_call_status_name(st));
    return st == MC_CALL_ERR_ARGS ? CLIENT_REFUSE_BAD_ARGS : CLIENT_REFUSE_HANDLER;
}

static void run_call(base_clients *bc, const mc_message_info *info, mc_istream *data,
                     mc_part part)
{
    mc_engine *e = bc->e;
    size_t len = mc_istream_remaining(data);
    /* its player is on its way to another baseapp (this one retires): the call follows it */
    proxy_client *was = mc_map_get(&bc->by_peer, proxy_peer_key(info->source), 0);
    if (was && was->closing && was->moved_id > 0) {
        if (proxy_limit_call(bc, was))
            retire_take_client_call(e, was->moved_id, part,
                                    len ? mc_read_bytes(data, len) : (const uint8_t *)"", len);
        return;
    }
    proxy_client *pc = sender(bc, info);
    if (!pc || !proxy_limit_call(bc, pc))
        return; /* over --clientCallsPerS: dropped before it is even parsed */
    mc_entity *ent = mc_engine_find(e, pc->entity_id);
    if (!ent || ent->part != MC_PART_BASE || ent->in_reap) {
        proxy_refuse(bc, info->source, CLIENT_REFUSE_NO_PLAYER, "its player is being destroyed");
        return;
    }
    const uint8_t *bytes = len ? mc_read_bytes(data, len) : (const uint8_t *)"";
    char why[MC_REASON_MAX];
    int r = proxy_run_client_call(e, ent, part, bytes, len, why, sizeof why);
    if (r >= 0)
        proxy_refuse(bc, info->source, (client_refuse)r, why);
}

static void mc_cw_on_base_call(void *ctx, const mc_message_info *info, mc_istream *data)
{
    run_call(ctx, info, data, MC_PART_BASE);
}

static void mc_cw_on_cell_call(void *ctx, const mc_message_info *info, mc_istream *data)
{
    run_call(ctx, info, data, MC_PART_CELL);
}

/* The client logs off: its base hears onClientDeath now rather than after the idle time. */
static void mc_cw_on_log_off(void *ctx, const mc_message_info *info, mc_istream *data)
{
    (void)data;
    base_clients *bc = ctx;
    proxy_client *pc = sender(bc, info);
    if (!pc)
        return;
    char a[MC_ADDRESS_STRLEN];
    MC_INFO("client %s of entity %d logged off", mc_address_format(&pc->peer, a, sizeof a),
            (int)pc->entity_id);
    proxy_gone(bc, pc, true); /* no grace: it went on purpose (proxy_resume_forget) */
}

static const mc_message_def iface_defs[] = {MC_CW_TO_BASEAPP(MC_DEF_WITH_HANDLER)};
const mc_interface proxy_client_iface = MC_INTERFACE("baseappExternal", iface_defs);

/* ---- the game's calls to a client -------------------------------------------------------- */

bool proxy_client_call(mc_engine *e, const mc_origin *o, mc_entity *ent,
                       const mc_call_header *h, const uint8_t *args, size_t len)
{
    base_clients *bc = proxy_state(e);
    proxy_client *pc = proxy_of_entity(bc, ent->id);
    if (!pc || !pc->ch)
        return false;
    const mc_def_method *m = mc_defs_method(ent->td, MC_PART_CLIENT, h->method);
    if (!m) {
        mc_engine_refuse(e, o, MC_REFUSE_NO_METHOD, MC_CALL_ERR_NO_METHOD,
                         "%s has no client method %u", ent->td->name, (unsigned)h->method);
        return true;
    }
    if (o->is_request) {
        mc_engine_refuse(e, o, MC_REFUSE_NO_METHOD, MC_CALL_ERR_NO_METHOD,
                         "client method %s.%s is one-way", ent->td->name, m->name);
        return true;
    }
    /* the arguments came from another process: check them before a client sees them */
    mc_value *vals = calloc(m->nargs ? m->nargs : 1, sizeof *vals);
    bool oom = !vals;
    char why[MC_REASON_MAX];
    mc_istream is;
    mc_istream_init(&is, args, len);
    int rc = vals ? mc_defs_decode_args(mc_engine_defs(e), m, &is, vals, why, sizeof why) : -1;
    for (size_t i = 0; vals && i < m->nargs; i++)
        mc_value_free(&vals[i]);
    free(vals);
    if (rc != 0) {
        mc_engine_refuse(e, o, MC_REFUSE_BAD_ARGS, MC_CALL_ERR_ARGS, "%s.%s for its client: %s",
                         ent->td->name, m->name, oom ? "out of memory" : why);
        return true;
    }
    if (pc->need_player)
        proxy_send_ready(bc); /* the player first, then what is said to it */
    pc = proxy_of_entity(bc, ent->id);
    if (!pc || !pc->ch)
        return false;
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cw_write_call(&os, ent->id, h->method, args, len);
    const mc_message_def *def = mc_cw_def(&mc_cw_client_send_iface, MC_CW_CALL);
    int sent = mc_ostream_ok(&os) ? mc_channel_send_message(pc->ch, def, os.data, os.size) : -1;
    mc_ostream_free(&os);
    if (sent != MC_OK) {
        mc_engine_refuse(e, o, MC_REFUSE_NO_CLIENT, MC_CALL_ERR_NO_CLIENT,
                         "%s %d: its client's channel refused the call", ent->td->name,
                         (int)ent->id);
        return true;
    }
    mc_channel_send(pc->ch);
    bc->st.calls_out++;
    return true;
}
