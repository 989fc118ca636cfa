/* Passing on what arrives for a base that left a retiring baseapp (retire.h): its cell's
 * messages (CELL_COPY, CELL_GONE, CELL_MOVED, CLIENT_UPDATE) wait with its calls while it is
 * on its way and go on, in order, as RETIRE_PASS (entity message 80); its client's calls on
 * the channel it is leaving go on as RETIRE_CLIENT_CALL (81). The new home takes both only
 * from the baseapp it took the base from, and runs them as if they came from the cell (its
 * address checked as ever) or the player's client. */
#include "base_world.h"
#include "baseapp.h"
#include "common/log.h"
#include "entity/backup_wire.h"
#include "entity/move_wire.h"
#include "entity/restore_wire.h"
#include "entity/retire_wire.h"
#include "proxy.h"
#include "retire_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- the cell's messages, at the retiring baseapp and at the new home ------------------ */

static mc_role_message_fn handler_of(uint8_t msg)
{
    switch (msg) {
    case MC_MSG_CELL_GONE:
        return base_on_cell_gone;
    case MC_MSG_CELL_MOVED:
        return base_on_cell_moved;
    case MC_MSG_CELL_COPY:
        return base_on_cell_copy;
    case MC_MSG_CLIENT_UPDATE:
        return base_on_client_update;
    default:
        return NULL;
    }
}

void retire_run_cell_msg(mc_engine *e, const mc_origin *o, uint8_t msg, const uint8_t *data,
                         size_t len)
{
    mc_role_message_fn fn = handler_of(msg);
    mc_istream is;
    mc_istream_init(&is, data, len);
    if (fn)
        fn(e, o, &is);
}

/* Each of the four starts with the entity id: a base leaving, gone or held takes it. */
static void take_or_run(mc_engine *e, const mc_origin *o, mc_istream *is, uint8_t msg)
{
    size_t len = mc_istream_remaining(is);
    const uint8_t *data = len ? mc_read_bytes(is, len) : (const uint8_t *)"";
    if (len >= 4 && !o->local) {
        mc_istream peek;
        mc_istream_init(&peek, data, len);
        int32_t id = mc_read_i32(&peek);
        if (id > 0 && retire_take_cell_msg(e, o, msg, id, data, len))
            return;
    }
    retire_run_cell_msg(e, o, msg, data, len);
}

void retire_on_cell_gone(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    take_or_run(e, o, is, MC_MSG_CELL_GONE);
}

void retire_on_cell_moved(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    take_or_run(e, o, is, MC_MSG_CELL_MOVED);
}

void retire_on_cell_copy(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    take_or_run(e, o, is, MC_MSG_CELL_COPY);
}

void retire_on_client_update(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    take_or_run(e, o, is, MC_MSG_CLIENT_UPDATE);
}

/* ---- sending on -------------------------------------------------------------------------- */

typedef struct {
    mc_origin origin; /* the cellapp's request (CELL_MOVED): its answer is relayed back */
} pass_wait;

static void on_pass_answer(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    pass_wait *w = ctx;
    if (!mc_engine_freeing(e)) {
        size_t len = payload ? mc_istream_remaining(payload) : 0;
        if (status == MC_CALL_OK && len)
            mc_engine_reply(e, &w->origin, mc_read_bytes(payload, len), len);
        else
            mc_engine_reply_status(e, &w->origin, status == MC_CALL_OK ? MC_CALL_ERR_ARGS
                                                                        : status,
                                   "its base's new home did not answer");
    }
    free(w);
}

static void pass_cell_msg(base_retire *r, const mc_address *to, retire_call *c)
{
    mc_engine *e = r->e;
    mc_ostream os;
    mc_ostream_init(&os);
    mc_retire_pass p = {.entity_id = c->header.entity_id, .msg = c->msg,
                        .from = c->origin.addr, .payload = c->args, .len = c->len};
    mc_retire_pass_encode(&os, &p);
    int rc = MC_CALL_ERR_ARGS;
    if (mc_ostream_ok(&os)) {
        pass_wait *w = c->origin.is_request ? malloc(sizeof *w) : NULL;
        if (w) {
            w->origin = c->origin;
            rc = mc_engine_request(e, to, MC_MSG_RETIRE_PASS, os.data, os.size, on_pass_answer,
                                   w);
            if (rc != MC_CALL_OK)
                free(w);
        } else if (!c->origin.is_request) {
            rc = mc_engine_send(e, to, MC_MSG_RETIRE_PASS, os.data, os.size);
        }
    }
    mc_ostream_free(&os);
    if (rc == MC_CALL_OK)
        r->st.passed++;
    else if (c->origin.is_request)
        mc_engine_reply_status(e, &c->origin, rc, "cannot pass it on to the base's new home");
}

static void pass_client_call(base_retire *r, const mc_address *to, retire_call *c)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_retire_client_call cc = {.entity_id = c->header.entity_id,
                                .part = c->msg == MC_PART_CELL ? 1 : 0, .payload = c->args,
                                .len = c->len};
    mc_retire_client_call_encode(&os, &cc);
    if (mc_ostream_ok(&os) &&
        mc_engine_send(r->e, to, MC_MSG_RETIRE_CLIENT_CALL, os.data, os.size) == MC_CALL_OK)
        r->st.passed++;
    mc_ostream_free(&os);
}

void retire_pass_item(base_retire *r, const mc_address *to, retire_call *c)
{
    switch (c->kind) {
    case RI_CALL:
        r->st.forwarded++;
        retire_relay_to(r->e, to, &c->origin, &c->header, c->args, c->len);
        return;
    case RI_CELL_MSG:
        pass_cell_msg(r, to, c);
        return;
    case RI_CLIENT_CALL:
        pass_client_call(r, to, c);
        return;
    }
}

/* ---- at the new home ---------------------------------------------------------------------- */

static bool from_its_old_home(mc_engine *e, const mc_origin *o, int32_t id)
{
    return !o->local && id > 0 && retire_was_taken_from(e, id, &o->addr);
}

static void pass_answer(mc_engine *e, const mc_origin *o, int status, const char *why)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_write_i8(&os, (int8_t)status);
    mc_write_string(&os, why);
    mc_engine_reply(e, o, os.data, os.size);
    mc_ostream_free(&os);
}

void retire_on_pass(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    mc_retire_pass p;
    if (!mc_retire_pass_decode(is, &p) || !from_its_old_home(e, o, p.entity_id)) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        pass_answer(e, o, MC_CALL_ERR_ARGS,
                    "RETIRE_PASS is taken for a base taken from its sender only");
        return;
    }
    /* as if it came from the cellapp (no answer from the handler: ours is below) */
    mc_origin as_cell = {.local = false, .addr = p.from, .is_request = false};
    retire_run_cell_msg(e, &as_cell, p.msg, p.payload, p.len);
    if (p.msg != MC_MSG_CELL_MOVED || !o->is_request)
        return;
    /* CELL_MOVED: taken when the base now names that cell */
    mc_entity *ent = mc_engine_find(e, p.entity_id);
    mc_mailbox_ref moved;
    int32_t mid;
    char why[MC_REASON_MAX] = "";
    mc_istream inner;
    mc_istream_init(&inner, p.payload, p.len);
    bool ok = mc_cell_moved_decode(mc_engine_defs(e), &inner, &mid, &moved, why, sizeof why) &&
              ent && memcmp(&ent->cell, &moved, sizeof moved) == 0;
    pass_answer(e, o, ok ? MC_CALL_OK : MC_CALL_ERR_NO_ENTITY,
                ok ? "" : "CELL_MOVED ignored: no such cell from there");
}

void retire_on_client_call(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    mc_retire_client_call cc;
    mc_entity *ent = mc_retire_client_call_decode(is, &cc) ? mc_engine_find(e, cc.entity_id)
                                                            : NULL;
    if (!ent || !from_its_old_home(e, o, cc.entity_id) || ent->part != MC_PART_BASE ||
        ent->in_reap) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        MC_WARNING("RETIRE_CLIENT_CALL refused: not for a base taken from its sender");
        return;
    }
    char why[MC_REASON_MAX];
    mc_part part = cc.part ? MC_PART_CELL : MC_PART_BASE;
    if (proxy_run_client_call(e, ent, part, cc.payload, cc.len, why, sizeof why) >= 0)
        MC_INFO("%s %d: a call its client sent to its old home refused: %s", ent->td->name,
                (int)ent->id, why);
}
