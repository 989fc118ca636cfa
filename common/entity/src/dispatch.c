/* Running calls on entities held here: the call frame (context + sink) game code sees,
 * dispatch with its checks, and relaying *via* calls. */
#include "engine_internal.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the sink generated senders use ---------------------------------------------------- */

static int sink_send(void *ctx, const mc_mailbox_ref *to, mc_part part, uint16_t index,
                     const uint8_t *args, size_t len)
{
    (void)part;
    mc_call_frame *f = ctx;
    return mc_engine_call(f->ctx.engine, to, index, f->ctx.self.id, args, len, NULL, NULL);
}

/* allClients / otherClients: only the entity itself, on a role that fans out. */
static int sink_fan_out(void *ctx, const mc_clients *to, uint16_t index, const uint8_t *args,
                        size_t len)
{
    mc_call_frame *f = ctx;
    mc_engine *e = f->ctx.engine;
    mc_entity *ent = mc_engine_entity_of(&f->ctx, MC_PART_CELL);
    if (!ent || ent->id != to->entity_id || ent->type != to->entity_type ||
        !e->part->client_fan_out)
        return MC_CALL_ERR_MAILBOX;
    return e->part->client_fan_out(e, ent, to->own_client, index, args, len);
}

/* A two-way call the game made: who made it and what to call back. */
typedef struct {
    mc_mailbox_ref caller;
    mc_reply_fn on_reply;
    void *cb;
    void *ud;
} game_request;

static void game_request_done(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    game_request *g = ctx;
    mc_call_frame f;
    mc_entity *ent = mc_mailbox_ref_is_none(&g->caller) ? NULL : mc_engine_find(e, g->caller.id);
    mc_part want = mc_mailbox_ref_component(&g->caller) == MC_COMPONENT_CELL ? MC_PART_CELL
                                                                            : MC_PART_BASE;
    if (ent && (ent->part != want || ent->in_reap))
        ent = NULL;
    mc_engine_frame(e, &f, ent);
    f.ctx.self = g->caller;
    int st = status;
    if (st == MC_CALL_OK && payload) {
        char why[MC_REASON_MAX];
        if (!mc_call_reply_read(payload, &st, why, sizeof why))
            st = MC_CALL_ERR_ARGS;
        else if (st != MC_CALL_OK)
            MC_DEBUG("two-way call of entity %d answered %s: %s", (int)g->caller.id,
                     mc_call_status_name(st), why);
    }
    g->on_reply(&f.ctx, st, st == MC_CALL_OK ? payload : NULL, g->cb, g->ud);
    free(g);
}

static int sink_request(void *ctx, const mc_mailbox_ref *to, mc_part part, uint16_t index,
                        const uint8_t *args, size_t len, mc_reply_fn on_reply, void *cb,
                        void *ud)
{
    (void)part;
    mc_call_frame *f = ctx;
    mc_engine *e = f->ctx.engine;
    game_request *g = malloc(sizeof *g);
    if (!g)
        return MC_CALL_ERR_BUSY;
    g->caller = f->ctx.self;
    g->on_reply = on_reply;
    g->cb = cb;
    g->ud = ud;
    int rc = mc_engine_call(e, to, index, f->ctx.self.id, args, len, game_request_done, g);
    if (rc != MC_CALL_OK)
        free(g);
    return rc;
}

void mc_engine_frame(mc_engine *e, mc_call_frame *f, mc_entity *ent)
{
    /* Built field by field: this runs for every call dispatched. */
    f->sink = (mc_call_sink){.defs = e->defs, .send = sink_send, .request = sink_request,
                             .fan_out = sink_fan_out, .ctx = f};
    f->ctx = (mc_call_ctx){.defs = e->defs, .sink = &f->sink, .engine = e,
                           .ops = e->part->ops};
    if (ent) {
        mc_component c = ent->part == MC_PART_CELL ? MC_COMPONENT_CELL : MC_COMPONENT_BASE;
        f->ctx.self.id = ent->id;
        f->ctx.self.ip = e->self_addr.ip;
        f->ctx.self.port = e->self_addr.port;
        f->ctx.self.salt = mc_salt_pack(c, ent->type);
    }
}

mc_engine *mc_engine_of(const mc_call_ctx *call) { return call ? call->engine : NULL; }

mc_entity *mc_engine_entity_of(const mc_call_ctx *call, mc_part part)
{
    mc_engine *e = mc_engine_of(call);
    if (!e || mc_mailbox_ref_is_none(&call->self))
        return NULL;
    mc_entity *ent = mc_engine_find(e, call->self.id);
    if (!ent || ent->part != part || ent->in_reap)
        return NULL;
    return ent;
}

mc_entity *mc_engine_call_target(mc_engine *e, const mc_origin *o, const mc_call_header *h)
{
    mc_entity *ent = mc_engine_find(e, h->entity_id);
    if (!ent) {
        mc_engine_refuse(e, o, MC_REFUSE_NO_ENTITY, MC_CALL_ERR_NO_ENTITY, "no %s %d here",
                         mc_part_name(e->part->part), (int)h->entity_id);
        return NULL;
    }
    uint16_t type = mc_salt_type(h->salt);
    if (ent->type != type) {
        mc_engine_refuse(e, o, MC_REFUSE_WRONG_TYPE, MC_CALL_ERR_MAILBOX,
                         "entity %d is a %s, the mailbox says type %u", (int)ent->id,
                         ent->td->name, (unsigned)type);
        return NULL;
    }
    return ent;
}

/* ---- dispatch ------------------------------------------------------------------------- */

void mc_engine_dispatch(mc_engine *e, const mc_origin *o, mc_entity *ent, mc_part part,
                        const mc_call_header *h, const uint8_t *args, size_t len)
{
    if (ent->destroying || ent->in_reap) {
        mc_engine_refuse(e, o, MC_REFUSE_DESTROYED, MC_CALL_ERR_DESTROYED,
                         "entity %d is being destroyed", (int)ent->id);
        return;
    }
    /* The method index is checked once, where it picks the handler (mc_game_dispatch):
     * MC_CALL_ERR_NO_METHOD below, counted as noMethod. Relays do not check it. */
    mc_call_frame f;
    mc_engine_frame(e, &f, ent);
    f.ctx.caller_id = h->caller_id;
    mc_ostream reply;
    mc_ostream_init(&reply);
    char why[MC_REASON_MAX];
    why[0] = '\0';
    int st = mc_game_dispatch(e->module, &f.ctx, ent->type, part, h->method, ent->props, args,
                              len, o->is_request ? &reply : NULL, why, sizeof why);
    if (st == MC_CALL_OK) {
        if (o->is_request) {
            mc_ostream out;
            mc_ostream_init(&out);
            mc_call_reply_write(&out, MC_CALL_OK, reply.data, reply.size, NULL);
            mc_engine_reply(e, o, out.data, out.size);
            mc_ostream_free(&out);
        }
    } else {
        mc_refuse_reason r = st == MC_CALL_ERR_ARGS     ? MC_REFUSE_BAD_ARGS
                             : st == MC_CALL_ERR_NO_METHOD ? MC_REFUSE_NO_METHOD
                                                        : MC_REFUSE_HANDLER;
        const mc_def_method *m = mc_defs_method(ent->td, part, h->method);
        if (!m)
            mc_engine_refuse(e, o, r, st, "%s has no %s method %u", ent->td->name,
                             mc_part_name(part), (unsigned)h->method);
        else
            mc_engine_refuse(e, o, r, st, "%s.%s on entity %d: %s", ent->td->name, m->name,
                             (int)ent->id, why[0] ? why : mc_call_status_name(st));
    }
    mc_ostream_free(&reply);
}

/* ---- relaying ------------------------------------------------------------------------- */

typedef struct {
    mc_origin origin;
} relay_wait;

static void relay_done(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    relay_wait *w = ctx;
    if (status == MC_CALL_OK && payload) {
        size_t n = mc_istream_remaining(payload);
        const uint8_t *b = n ? mc_read_bytes(payload, n) : (const uint8_t *)"";
        mc_engine_reply(e, &w->origin, b, n);
    } else {
        mc_engine_reply_status(e, &w->origin, status, mc_call_status_name(status));
    }
    free(w);
}

void mc_engine_relay(mc_engine *e, const mc_origin *o, const mc_mailbox_ref *to,
                     uint16_t method, int32_t caller_id, const uint8_t *args, size_t len)
{
    int rc;
    if (o->is_request) {
        relay_wait *w = malloc(sizeof *w);
        if (!w) {
            mc_engine_reply_status(e, o, MC_CALL_ERR_BUSY, "out of memory");
            return;
        }
        w->origin = *o;
        rc = mc_engine_call(e, to, method, caller_id, args, len, relay_done, w);
        if (rc != MC_CALL_OK)
            free(w);
    } else {
        rc = mc_engine_call(e, to, method, caller_id, args, len, NULL, NULL);
    }
    if (rc == MC_CALL_OK) {
        e->st.relayed++;
        e->st.sent--; /* a relay is counted as relayed, not as a call this process made */
        return;
    }
    mc_refuse_reason r = rc == MC_CALL_ERR_PROCESS_DEAD ? MC_REFUSE_PROCESS_DEAD : MC_REFUSE_NO_ENTITY;
    mc_engine_refuse(e, o, r, rc, "cannot relay to entity %d: %s", (int)to->id,
                     mc_call_status_name(rc));
}
