/* The old cellapp's side of a cell moving to another cellapp (cell_move.h, docs/WORLD.md
 * "Teleports"): CELL_MIGRATE sent once the handler that asked has returned (witness off,
 * timers and properties taken), the answer taken (commit: the copy here goes, the queue is
 * forwarded, the base told with CELL_MOVED, the new cellapp told "flushed" once the base
 * answered) or the entity restored as it was, and forwarding to where it went. */
#include "cell_move.h"
#include "entity/persist_wire.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_forwarded_reply(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    mc_origin *o = ctx;
    if (!mc_engine_freeing(e)) {
        if (status == MC_CALL_OK) {
            size_t n = mc_istream_remaining(payload);
            mc_engine_reply(e, o, payload->data + payload->pos, n);
        } else {
            mc_ostream os;
            mc_ostream_init(&os);
            mc_fetch_cell_reply_error(&os, status, mc_call_status_name(status));
            mc_engine_reply(e, o, os.data, os.size);
            mc_ostream_free(&os);
        }
    }
    free(o);
}

static bool from_base(const move_rec *r, const mc_origin *o)
{
    mc_address a;
    mc_mailbox_address(&r->base, &a);
    return !o->local && mc_address_equal(&a, &o->addr);
}

/* Forward one message for the entity that left to where it is now. */
void mv_forward_one(mc_engine *e, move_rec *r, uint8_t msg_id, const mc_origin *o,
                    const uint8_t *data, size_t len)
{
    cell_moves *m = mv_moves(e);
    int rc = MC_CALL_OK;
    if (msg_id == MC_MSG_ENTITY_CALL) {
        mc_istream is;
        mc_istream_init(&is, data, len);
        mc_call_header h;
        if (!mc_call_header_read(&is, &h))
            return;
        mc_mailbox_ref to;
        if (mc_mailbox_ref_init(&to, h.entity_id, r->peer.ip, r->peer.port,
                                mc_salt_component(h.salt), mc_salt_type(h.salt)) != 0) {
            mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_MAILBOX,
                             "cannot forward a call to moved entity %d", (int)r->id);
            return;
        }
        m->forwarded++;
        /* counted as relayed by the engine; refusals answered by it */
        mc_engine_relay(e, o, &to, h.method, h.caller_id, data + MC_CALL_HEADER_SIZE,
                        len - MC_CALL_HEADER_SIZE);
        return;
    }
    if (!from_base(r, o)) {
        mc_engine_refuse(e, o, MC_REFUSE_WRONG_PART, MC_CALL_ERR_MAILBOX,
                         "message %u for moved entity %d not from its base: ignored",
                         (unsigned)msg_id, (int)r->id);
        return;
    }
    if (msg_id == MC_MSG_DESTROY_CELL || msg_id == MC_MSG_CLIENT_ATTACHED) {
        rc = mc_engine_send(e, &r->peer, msg_id, data, len);
    } else if (msg_id == MC_MSG_FETCH_CELL) {
        mc_origin *keep = malloc(sizeof *keep);
        rc = keep ? MC_CALL_OK : MC_CALL_ERR_BUSY;
        if (keep) {
            *keep = *o;
            rc = mc_engine_request(e, &r->peer, msg_id, data, len, on_forwarded_reply, keep);
            if (rc != MC_CALL_OK)
                free(keep);
        }
        if (rc != MC_CALL_OK) {
            mc_ostream os;
            mc_ostream_init(&os);
            mc_fetch_cell_reply_error(&os, rc, "cannot reach the cell's new cellapp");
            mc_engine_reply(e, o, os.data, os.size);
            mc_ostream_free(&os);
            return;
        }
    }
    if (rc == MC_CALL_OK)
        m->forwarded++;
    else
        mc_engine_refuse(e, o, MC_REFUSE_NO_ENTITY, rc,
                         "cannot forward message %u to moved entity %d: %s", (unsigned)msg_id,
                         (int)r->id, mc_call_status_name(rc));
}

/* ---- the old cellapp ------------------------------------------------------------------- */

/* What onTeleportFailure is told for a failed CELL_MIGRATE: the new cellapp's answer or
 * the request's failure (st: its status). */
static int32_t failure_reason(int st, bool answered)
{
    if (answered)
        return MC_TELEPORT_REFUSED;
    if (st == MC_CALL_ERR_TIMEOUT)
        return MC_TELEPORT_TIMED_OUT;
    if (st == MC_CALL_ERR_PROCESS_DEAD)
        return MC_TELEPORT_PEER_DEAD;
    return MC_TELEPORT_NOT_SENT;
}

/* The move failed: the entity (when it is still here, ent) gets its timers and witness state
 * back, then its onTeleportFailure(reason), then the calls that waited for it, in order (if
 * the callback moves it again, they wait again and go with it). */
static void restore(mc_engine *e, move_rec *r, mc_entity *ent, int32_t reason,
                    const char *why)
{
    cell_moves *m = mv_moves(e);
    m->failed++;
    if (mv_log_ok(m->failed))
        MC_WARNING("%s %d stays here: its move to space of cell %d failed (%s) (%llu failed "
                   "moves)",
                   ent ? ent->td->name : "entity", (int)r->id, (int)r->near_id, why,
                   (unsigned long long)m->failed);
    if (ent) {
        ent->move_state = 0;
        cell_aoi_carry_drop(e, ent, "its move failed: its client is introduced afresh");
        for (size_t i = 0; i < r->ntimers; i++)
            if (mc_engine_import_timer(e, ent, &r->timers[i]) != MC_CALL_OK)
                MC_ERROR("%s %d: timer %u could not be restored", ent->td->name, (int)ent->id,
                         (unsigned)r->timers[i].id);
        if (r->witness) {
            mc_call_frame f;
            mc_engine_frame(e, &f, ent);
            if (r->radius > 0)
                cell_aoi_set_radius(&f.ctx, r->radius, r->hysteresis);
            if (cell_aoi_set_witness(&f.ctx, true) != MC_CALL_OK)
                MC_ERROR("%s %d: could not be a witness again", ent->td->name, (int)ent->id);
        }
    }
    int32_t id = r->id;
    move_msg *q = mv_take_queue(r);
    mv_rec_remove(m, r); /* before the callback: it may start another move */
    if (ent) {
        ent = mc_engine_find(e, id); /* found again: game code may have run meanwhile */
        if (ent && !ent->in_reap && !mc_engine_freeing(e))
            mc_engine_run_teleport_failure(e, ent, reason);
    }
    mv_deliver_all(e, q);
}

static void send_end(mc_engine *e, const mc_address *to, int32_t id, uint8_t outcome)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_migrate_end_encode(&os, id, outcome);
    int rc = mc_engine_send(e, to, MC_MSG_CELL_MIGRATE_END, os.data, os.size);
    mc_ostream_free(&os);
    if (rc != MC_CALL_OK)
        MC_INFO("entity %d: cannot tell its new cellapp %s: %s", (int)id,
                outcome == MC_MIGRATE_ABORT ? "abort" : "go on", mc_call_status_name(rc));
}

/* What the offloaded witness's client heard (WITNESS_HEARD), its client calls carried here
 * (cell_aoi_carry_take), then "flushed":
 * on one channel, so the new cellapp queues them before it goes on with the view. */
static void send_flushed(mc_engine *e, move_rec *r)
{
    mc_entity *ent = mc_engine_find(e, r->id); /* its ghost here, if it stayed as one */
    if (ent && !ent->in_reap) {
        mc_ostream os;
        mc_ostream_init(&os);
        /* first what its client heard of each entity it knows (then the new cellapp gives
         * it what its ghosts took after that, and skips what they take up to it) */
        if (cell_aoi_carry_record(e, ent, &os) &&
            (!mc_ostream_ok(&os) ||
             mc_engine_send(e, &r->peer, MC_MSG_WITNESS_HEARD, os.data, os.size) != MC_CALL_OK))
            MC_WARNING("entity %d: what its client heard could not be sent to its new cellapp",
                       (int)r->id);
        mc_ostream_reset(&os);
        size_t n = cell_aoi_carry_take(e, ent, &os);
        if (n && (!mc_ostream_ok(&os) ||
                  mc_engine_send(e, &r->peer, MC_MSG_WITNESS_CALLS, os.data, os.size) !=
                      MC_CALL_OK))
            MC_WARNING("entity %d: %zu client calls carried for its client could not be sent "
                       "to its new cellapp",
                       (int)r->id, n);
        mc_ostream_free(&os);
    }
    send_end(e, &r->peer, r->id, MC_MIGRATE_FLUSHED);
}

static void on_base_told(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    int32_t id = (int32_t)(intptr_t)ctx;
    if (mc_engine_freeing(e))
        return;
    move_rec *r = mv_find(mv_moves(e), id, true);
    if (!r || r->kind != MV_OUT_MOVED)
        return;
    if (status == MC_CALL_OK) {
        int8_t st = mc_read_i8(payload);
        char why[MC_REASON_MAX] = "";
        mc_read_string_into(payload, why, sizeof why);
        if (st != MC_CALL_OK) {
            /* its base has no cell here any more (it went, or the base did): the cell that
             * arrived there would be nobody's, so it goes (once flushed, like any DESTROY_CELL
             * forwarded from here) */
            MC_WARNING("entity %d: its base refused the new address (%s): its cell there is "
                       "destroyed",
                       (int)id, why);
            mc_ostream os;
            mc_ostream_init(&os);
            mc_destroy_cell_encode(&os, id);
            (void)mc_engine_send(e, &r->peer, MC_MSG_DESTROY_CELL, os.data, os.size);
            mc_ostream_free(&os);
        }
    } else {
        /* no answer (the baseapp died or is cut off): the cell goes on there, as cells
         * whose base died do */
        MC_INFO("entity %d: its base did not take the new address: %s", (int)id,
                mc_call_status_name(status));
    }
    send_flushed(e, r); /* the base's earlier calls came first */
}

static void committed(mc_engine *e, move_rec *r, mc_entity *ent)
{
    cell_moves *m = mv_moves(e);
    send_end(e, &r->peer, r->id, MC_MIGRATE_COMMIT);
    /* the copy here goes without a word to the base or the game: it lives on there; an
     * offloaded one stays as its ghost (the witnesses here see nothing happen) */
    ent->gone_why = -1;
    ent->move_state = 0;
    cell_aoi_carry_committed(e, ent);
    if (!r->offload || cell_ghosts_become(e, ent, &r->peer, r->handed_ghosts) != 0)
        mc_engine_discard_entity(e, ent);
    r->kind = MV_OUT_MOVED;
    r->expires = mc_clock_now_us() + mv_forward_period(e);
    free(r->timers);
    r->timers = NULL;
    r->ntimers = 0;
    m->moved++;
    move_msg *q = mv_take_queue(r);
    for (move_msg *x = q; x; x = x->next)
        mv_forward_one(e, r, x->id, &x->o, x->data, x->len);
    mv_free_queue(q);
    mc_mailbox_ref cell;
    mc_mailbox_ref_init(&cell, r->id, r->peer.ip, r->peer.port, MC_COMPONENT_CELL, r->type);
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cell_moved_encode(&os, r->id, &cell);
    mc_address base;
    mc_mailbox_address(&r->base, &base);
    int rc = mc_engine_request(e, &base, MC_MSG_CELL_MOVED, os.data, os.size, on_base_told,
                               (void *)(intptr_t)r->id);
    mc_ostream_free(&os);
    char a[MC_ADDRESS_STRLEN];
    MC_DEBUG("entity %d moved to %s", (int)r->id, mc_address_format(&r->peer, a, sizeof a));
    if (rc != MC_CALL_OK) {
        MC_INFO("entity %d: cannot tell its base it moved: %s", (int)r->id,
                mc_call_status_name(rc));
        send_flushed(e, r);
    }
}

static void on_migrate_reply(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    int32_t id = (int32_t)(intptr_t)ctx;
    if (mc_engine_freeing(e))
        return;
    cell_moves *m = mv_moves(e);
    move_rec *r = mv_find(m, id, true);
    if (!r || r->kind != MV_OUT_WAIT)
        return;
    char why[MC_REASON_MAX] = "";
    bool answered = status == MC_CALL_OK; /* refused, if not a yes */
    if (status == MC_CALL_OK) {
        int8_t st = mc_read_i8(payload);
        (void)mc_read_i32(payload);
        if (!mc_read_string_into(payload, why, sizeof why))
            st = MC_CALL_ERR_ARGS, snprintf(why, sizeof why, "malformed answer");
        status = st;
    } else {
        snprintf(why, sizeof why, "%s", mc_call_status_name(status));
    }
    mc_entity *ent = mc_engine_find(e, id);
    bool here = ent && !ent->in_reap && ent->move_state == 1;
    if (status == MC_CALL_OK && here) {
        committed(e, r, ent);
        return;
    }
    if (status == MC_CALL_OK || status == MC_CALL_ERR_TIMEOUT)
        send_end(e, &r->peer, id, MC_MIGRATE_ABORT); /* a copy made there must not live */
    if (!here && ent)
        ent->move_state = 0;
    restore(e, r, here ? ent : NULL, failure_reason(status, answered),
            here ? why : "the entity went meanwhile");
}

/* Send CELL_MIGRATE for one prepared move (the handler that asked has returned). */
static void launch(mc_engine *e, move_rec *r)
{
    mc_entity *ent = mc_engine_find(e, r->id);
    if (!ent || ent->in_reap) {
        if (ent)
            ent->move_state = 0;
        restore(e, r, NULL, 0, "the entity went before it left");
        return;
    }
    bool witness = false;
    float radius = 0, hysteresis = 0;
    cell_aoi_settings(ent, &witness, &radius, &hysteresis);
    r->witness = witness;
    r->radius = radius;
    r->hysteresis = hysteresis;
    int32_t *told = NULL;
    size_t ntold = 0;
    if (witness && r->offload && cell_aoi_handover_out(e, ent, &r->peer, &told, &ntold) == 0) {
        /* an offload: the view goes on at the new cellapp, the client hears nothing */
        r->handover = true;
    } else if (witness) {
        /* its client hears everything in the old view leave, its game onLeftAoI */
        mc_call_frame f;
        mc_engine_frame(e, &f, ent);
        cell_aoi_set_witness(&f.ctx, false);
        ent = mc_engine_find(e, r->id);
        if (!ent || ent->in_reap) {
            if (ent)
                ent->move_state = 0;
            restore(e, r, NULL, 0, "the entity went before it left");
            return;
        }
    }
    r->base = ent->base;
    r->timers = ent->ntimers ? calloc(ent->ntimers, sizeof *r->timers) : NULL;
    if (ent->ntimers && !r->timers) {
        free(told);
        restore(e, r, ent, MC_TELEPORT_NOT_SENT, "out of memory");
        return;
    }
    r->ntimers = mc_engine_export_timers(e, ent, r->timers, ent->ntimers);
    mc_time_us now = mc_clock_now_us();
    mc_migrate_timer *wt = r->ntimers ? calloc(r->ntimers, sizeof *wt) : NULL;
    if (r->ntimers && !wt) {
        free(told);
        restore(e, r, ent, MC_TELEPORT_NOT_SENT, "out of memory");
        return;
    }
    for (size_t i = 0; i < r->ntimers; i++)
        wt[i] = (mc_migrate_timer){.id = r->timers[i].id,
                                   .remaining_us = r->timers[i].due > now
                                                       ? r->timers[i].due - now : 0,
                                   .repeat_us = r->timers[i].repeat,
                                   .user_arg = r->timers[i].user_arg};
    /* an offload hands its ghosts on third cellapps over: the new real keeps them */
    mc_address holders[MC_MIGRATE_HOLDERS_MAX];
    size_t nholders = r->offload ? cell_ghosts_holders(ent, &r->peer, holders,
                                                       MC_MIGRATE_HOLDERS_MAX)
                                 : 0;
    r->handed_ghosts = nholders > 0;
    mc_migrate_head h = {.cell = {.entity_id = ent->id, .type = ent->type,
                                  .near_id = r->near_id, .base = ent->base,
                                  .position = r->position, .direction = r->direction},
                         .witness = witness, .radius = radius, .hysteresis = hysteresis,
                         .timers = wt, .ntimers = r->ntimers, .handover = r->handover,
                         .told = told, .ntold = ntold, .holders = holders,
                         .nholders = nholders, .calls_seq = cell_ghosts_calls_seen(ent)};
    mc_ostream os;
    mc_ostream_init(&os);
    mc_migrate_encode(&os, &h);
    free(wt);
    free(told);
    char why[MC_REASON_MAX];
    int rc = ent->gt->props_encode(mc_engine_defs(e), MC_PART_CELL, ent->props, false, &os, why,
                                   sizeof why);
    if (rc == MC_CALL_OK && r->ntimers > MC_MIGRATE_TIMERS_MAX)
        rc = MC_CALL_ERR_ARGS, snprintf(why, sizeof why, "too many timers");
    if (rc == MC_CALL_OK) {
        rc = mc_engine_request(e, &r->peer, MC_MSG_CELL_MIGRATE, os.data, os.size,
                               on_migrate_reply, (void *)(intptr_t)r->id);
        snprintf(why, sizeof why, "%s", mc_call_status_name(rc));
    }
    mc_ostream_free(&os);
    if (rc != MC_CALL_OK) {
        restore(e, r, ent, failure_reason(rc, false), why);
        return;
    }
    r->kind = MV_OUT_WAIT;
}

void mv_on_kick(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    mc_engine *e = ctx;
    cell_moves *m = mv_moves(e);
    /* launch may restore (deliver, run handlers that start moves): one at a time, by id */
    for (int guard = 0; guard < 100000; guard++) {
        move_rec *r = NULL;
        for (size_t i = 0; i < m->n && !r; i++)
            if (m->recs[i]->kind == MV_OUT_PREPARE)
                r = m->recs[i];
        if (!r)
            return;
        r->kind = MV_OUT_WAIT; /* taken */
        launch(e, r);
    }
}

int cell_move_offload(mc_engine *e, mc_entity *ent, const mc_address *where)
{
    mc_mailbox_ref near;
    if (mc_mailbox_ref_init(&near, ent->id, where->ip, where->port, MC_COMPONENT_CELL,
                            ent->type) != 0)
        return MC_CALL_ERR_ARGS;
    int rc = cell_move_start(e, ent, &near, where, ent->position, ent->direction);
    if (rc == MC_CALL_OK) {
        move_rec *r = mv_find(mv_moves(e), ent->id, true);
        if (r)
            r->offload = true;
    }
    return rc;
}

int cell_move_start(mc_engine *e, mc_entity *ent, const mc_mailbox_ref *nearby,
                    const mc_address *where, mc_vector3 position, mc_vector3 direction)
{
    cell_moves *m = mv_moves(e);
    if (!m || mc_engine_freeing(e))
        return MC_CALL_ERR_UNAVAILABLE;
    if (ent->move_state)
        return MC_CALL_ERR_STATE;
    move_rec *r = mv_rec_new(e, m, ent->id, MV_OUT_PREPARE);
    if (!r)
        return MC_CALL_ERR_BUSY;
    r->type = ent->type;
    r->peer = *where;
    r->near_id = nearby->id;
    r->position = position;
    r->direction = direction;
    r->base = ent->base;
    ent->move_state = 1; /* messages for it wait from now on */
    m->started++;
    event_active(m->kick_ev, 0, 0);
    return MC_CALL_OK;
}
