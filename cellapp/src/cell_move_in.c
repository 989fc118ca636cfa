/* The new cellapp's side of a cell moving here from another cellapp (cell_move.h,
 * docs/WORLD.md "Teleports"): CELL_MIGRATE makes the cell dormant in the space of the cell
 * it is to be near (no timers, others' calls held), CELL_MIGRATE_END starts its timers
 * (commit), drops it (abort) or settles it (flushed: held calls delivered, its witness on);
 * a cell that goes before its base knows this address keeps its CELL_GONE until the base
 * does. */
#include "cell_move.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the new cellapp ------------------------------------------------------------------- */

static void answer(mc_engine *e, const mc_origin *o, int status, int32_t space, const char *why)
{
    cell_answer_placed(e, o, status, space, why);
    if (status != MC_CALL_OK) {
        cell_moves *m = mv_moves(e);
        if (mv_log_ok(++m->refused))
            MC_INFO("CELL_MIGRATE refused: %s", why);
    }
}

/* An arrival this cellapp has no memory for: its record (r, when made) and copy go, and the
 * old cellapp is told (it keeps the entity). */
static void out_of_memory(mc_engine *e, const mc_origin *o, move_rec *r, mc_entity *ent,
                          mc_migrate_head *h)
{
    if (r)
        mv_rec_remove(mv_moves(e), r);
    ent->gone_why = -1;
    mc_engine_discard_entity(e, ent);
    mc_migrate_free(h);
    answer(e, o, MC_CALL_ERR_BUSY, 0, "out of memory");
}

void cell_on_migrate(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    cell_moves *m = mv_moves(e);
    const mc_entity_defs *defs = mc_engine_defs(e);
    mc_migrate_head h;
    char why[MC_REASON_MAX] = "";
    if (o->local) {
        answer(e, o, MC_CALL_ERR_STATE, 0, "a move to this cellapp itself");
        return;
    }
    if (!mc_migrate_decode(defs, is, &h, why, sizeof why)) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        answer(e, o, MC_CALL_ERR_ARGS, 0, why);
        return;
    }
    mc_entity *near = mc_engine_find(e, h.cell.near_id);
    if (!near || near->in_reap || !near->space) {
        snprintf(why, sizeof why, "no cell %d here to be near (its space is gone)",
                 (int)h.cell.near_id);
        mc_migrate_free(&h);
        answer(e, o, MC_CALL_ERR_NO_ENTITY, 0, why);
        return;
    }
    /* it arrives here real: its ghost goes (an offload names the ghost as `near`) */
    int32_t space_id = near->space->id;
    uint32_t calls_seq = cell_ghosts_make_way(e, h.cell.entity_id);
    if (h.calls_seq > calls_seq) /* the real's own number (older senders: its ghost's here) */
        calls_seq = h.calls_seq;
    if (!space_find(e, space_id)) {
        snprintf(why, sizeof why, "space %d went with the ghost", (int)space_id);
        mc_migrate_free(&h);
        answer(e, o, MC_CALL_ERR_NO_ENTITY, 0, why);
        return;
    }
    mc_entity *ent = mc_engine_new_entity(e, h.cell.type, h.cell.entity_id, why, sizeof why);
    if (!ent) {
        mc_migrate_free(&h);
        answer(e, o, MC_CALL_ERR_STATE, 0, why);
        return;
    }
    ent->gone_why = -1; /* not the base's cell until it is in its space */
    if (ent->gt->props_decode(defs, MC_PART_CELL, ent->props, false, is, why, sizeof why) !=
            MC_CALL_OK ||
        !mc_istream_done(is)) {
        if (!why[0])
            snprintf(why, sizeof why, "trailing bytes after the cell properties");
        mc_engine_discard_entity(e, ent);
        mc_migrate_free(&h);
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        answer(e, o, MC_CALL_ERR_ARGS, 0, why);
        return;
    }
    ent->base = h.cell.base;
    ent->position = h.cell.position;
    ent->direction = h.cell.direction;
    ent->gone_why = MC_CELL_GONE_SELF;
    ent->move_state = 2;
    move_rec *r = mv_rec_new(e, m, ent->id, MV_IN_DORMANT);
    mc_space *sp = space_find(e, space_id);
    if (!r || space_add(e, sp, ent) != 0) {
        out_of_memory(e, o, r, ent, &h);
        return;
    }
    if (h.cell.near_id == h.cell.entity_id) /* an offload: the old cellapp keeps its ghost */
        (void)cell_ghosts_seed_out(e, ent, &o->addr, h.holders, h.nholders, calls_seq);
    else if (calls_seq) /* a teleport: it numbers on, as it would have there */
        cell_ghosts_seed_seq(ent, calls_seq);
    mc_time_us now = mc_clock_now_us();
    r->type = ent->type;
    r->peer = o->addr;
    r->base = ent->base;
    r->near_id = h.cell.near_id;
    r->expires = now + mv_arrival_deadline(e);
    r->witness = h.witness;
    r->handover = h.handover;
    if (h.handover && cell_aoi_carry_arrive(e, ent, h.told, h.ntold, &o->addr) != 0)
        MC_WARNING("%s %d: out of memory: client calls while it arrives are not carried",
                   ent->td->name, (int)ent->id);
    r->told = h.told; /* the record keeps the handed-over view */
    r->ntold = h.ntold;
    h.told = NULL;
    h.ntold = 0;
    r->radius = h.radius;
    r->hysteresis = h.hysteresis;
    if (h.ntimers && !(r->timers = calloc(h.ntimers, sizeof *r->timers))) {
        out_of_memory(e, o, r, ent, &h);
        return;
    }
    r->ntimers = h.ntimers;
    for (size_t i = 0; i < h.ntimers; i++)
        r->timers[i] = (mc_timer_export){.id = h.timers[i].id,
                                         .due = now + h.timers[i].remaining_us,
                                         .repeat = h.timers[i].repeat_us,
                                         .user_arg = h.timers[i].user_arg};
    mc_migrate_free(&h);
    MC_DEBUG("%s %d arriving in space %d", ent->td->name, (int)ent->id, (int)sp->id);
    answer(e, o, MC_CALL_OK, sp->id, NULL);
}

/* Dormant copy dropped (abort, a silent or dead old cellapp): its base hears it went if it
 * knows it here (it refuses CELL_GONE from anyone but its cell's address). */
void mv_drop_arrival(mc_engine *e, move_rec *r, bool tell_base)
{
    cell_moves *m = mv_moves(e);
    mc_entity *ent = mc_engine_find(e, r->id);
    move_msg *q = mv_take_queue(r);
    mv_rec_remove(m, r);
    if (ent && ent->move_state == 2) {
        ent->move_state = 0;
        if (tell_base)
            cell_tell_base_gone(e, ent, MC_CELL_GONE_SELF);
        ent->gone_why = -1;
        mc_engine_discard_entity(e, ent);
        m->discarded++;
    }
    mv_deliver_all(e, q); /* refused: no such entity */
}

static void start_timers(mc_engine *e, move_rec *r, mc_entity *ent)
{
    for (size_t i = 0; ent && i < r->ntimers; i++)
        if (mc_engine_import_timer(e, ent, &r->timers[i]) != MC_CALL_OK)
            MC_ERROR("%s %d: timer %u did not come along", ent->td->name, (int)ent->id,
                     (unsigned)r->timers[i].id);
    free(r->timers);
    r->timers = NULL;
    r->ntimers = 0;
    r->kind = MV_IN_LIVE;
    r->expires = mc_clock_now_us() + mv_arrival_deadline(e);
}

/* The base knows the new address (or will never answer): held messages are delivered and
 * the witness starts over here. */
void mv_settle(mc_engine *e, move_rec *r)
{
    cell_moves *m = mv_moves(e);
    mc_entity *ent = mc_engine_find(e, r->id);
    if (r->kind == MV_IN_DORMANT)
        start_timers(e, r, ent);
    r->kind = MV_IN_DONE;
    r->expires = mc_clock_now_us() + mv_forward_period(e);
    move_msg *q = mv_take_queue(r);
    mc_address base;
    mc_mailbox_address(&r->base, &base);
    if (r->gone) {
        /* it went while arriving: its base, which knows this address now, hears it */
        (void)mc_engine_send(e, &base, MC_MSG_CELL_GONE, r->gone, r->gone_len);
        free(r->gone);
        r->gone = NULL;
    } else if (!ent) {
        mc_ostream os;
        mc_ostream_init(&os);
        mc_cell_gone_head gone = {.entity_id = r->id, .why = MC_CELL_GONE_SELF};
        mc_cell_gone_encode(&os, &gone);
        (void)mc_engine_send(e, &base, MC_MSG_CELL_GONE, os.data, os.size);
        mc_ostream_free(&os);
    }
    if (ent && ent->move_state == 2) {
        ent->move_state = 0;
        m->arrived++;
        if (r->witness) {
            mc_call_frame f;
            mc_engine_frame(e, &f, ent);
            if (r->radius > 0 && cell_aoi_set_radius(&f.ctx, r->radius, r->hysteresis) != 0)
                MC_WARNING("%s %d: its AoI radius %g is not allowed here", ent->td->name,
                           (int)ent->id, r->radius);
            if (!r->handover || cell_aoi_handover_in(e, ent, r->told, r->ntold) != 0) {
                cell_aoi_carry_drop(e, ent, "its view could not go on here");
                if (cell_aoi_set_witness(&f.ctx, true) != MC_CALL_OK)
                    MC_ERROR("%s %d: could not be a witness here", ent->td->name,
                             (int)ent->id);
            }
            free(r->told);
            r->told = NULL;
            r->ntold = 0;
        }
    }
    mv_deliver_all(e, q);
}

void cell_on_migrate_end(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    int32_t id;
    uint8_t outcome;
    if (!mc_migrate_end_decode(is, &id, &outcome)) {
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                         "CELL_MIGRATE_END malformed: ignored");
        return;
    }
    move_rec *r = mv_find(mv_moves(e), id, false);
    if (!r || o->local || !mc_address_equal(&r->peer, &o->addr) || r->kind == MV_IN_DONE) {
        mc_engine_refuse(e, o, MC_REFUSE_NO_ENTITY, MC_CALL_ERR_NO_ENTITY,
                         "CELL_MIGRATE_END for %d ignored: no such arrival from there",
                         (int)id);
        return;
    }
    mc_entity *ent = mc_engine_find(e, id);
    if (outcome == MC_MIGRATE_ABORT) {
        if (r->kind == MV_IN_DORMANT) {
            mv_moves(e)->aborted++;
            mv_drop_arrival(e, r, false);
        }
        return;
    }
    if (outcome == MC_MIGRATE_COMMIT) {
        if (r->kind == MV_IN_DORMANT)
            start_timers(e, r, ent); /* ent NULL: it went meanwhile, its timers with it */
        return;
    }
    mv_settle(e, r); /* flushed */
}

static void on_base_asked(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    int32_t id = (int32_t)(intptr_t)ctx;
    if (mc_engine_freeing(e))
        return;
    move_rec *r = mv_find(mv_moves(e), id, false);
    if (!r || !r->asking)
        return;
    r->asking = false;
    if (r->kind == MV_IN_DONE)
        return; /* the old cellapp spoke meanwhile */
    int8_t st = status == MC_CALL_OK ? mc_read_i8(payload) : (int8_t)status;
    if (status == MC_CALL_OK && st == MC_CALL_OK) {
        MC_INFO("entity %d: its base knows it is here: it lives here", (int)id);
        mv_settle(e, r);
    } else if (status == MC_CALL_OK || r->kind == MV_IN_DORMANT) {
        MC_WARNING("entity %d: its base does not know it here (%s): dropped here", (int)id,
                   status == MC_CALL_OK ? "refused" : mc_call_status_name(status));
        mv_drop_arrival(e, r, false);
    } else {
        mv_settle(e, r); /* no base to ask: it goes on, as cells whose base died do */
    }
}

void mv_ask_base(mc_engine *e, move_rec *r)
{
    if (r->asking)
        return;
    const mc_address *self = mc_engine_address(e);
    mc_mailbox_ref cell;
    mc_mailbox_ref_init(&cell, r->id, self->ip, self->port, MC_COMPONENT_CELL, r->type);
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cell_moved_encode(&os, r->id, &cell);
    mc_address base;
    mc_mailbox_address(&r->base, &base);
    r->asking = true;
    mv_moves(e)->asked++;
    r->expires = mc_clock_now_us() + mv_arrival_deadline(e);
    int rc = mc_engine_request(e, &base, MC_MSG_CELL_MOVED, os.data, os.size, on_base_asked,
                               (void *)(intptr_t)r->id);
    mc_ostream_free(&os);
    if (rc != MC_CALL_OK) {
        /* as if the base never answered */
        mc_istream empty;
        mc_istream_init(&empty, NULL, 0);
        on_base_asked(e, (void *)(intptr_t)r->id, rc, &empty);
    }
}

bool cell_move_arrival_gone(mc_engine *e, mc_entity *ent)
{
    if (ent->move_state != 2)
        return false;
    move_rec *r = mv_find(mv_moves(e), ent->id, false);
    if (!r || r->kind == MV_IN_DONE)
        return false;
    if (r->kind == MV_IN_DORMANT) {
        ent->gone_why = -1; /* never started here: the old cellapp still speaks for it */
        return true;
    }
    mc_ostream os;
    mc_ostream_init(&os);
    cell_gone_payload(e, ent, (mc_cell_gone_why)ent->gone_why, &os);
    free(r->gone);
    r->gone = mc_ostream_ok(&os) ? malloc(os.size) : NULL;
    if (r->gone) {
        memcpy(r->gone, os.data, os.size);
        r->gone_len = os.size;
    }
    mc_ostream_free(&os);
    ent->gone_why = -1;
    return true;
}

bool cell_move_from_peer(mc_engine *e, int32_t id, const mc_address *addr)
{
    move_rec *r = mv_find(mv_moves(e), id, false);
    return r && mc_address_equal(&r->peer, addr);
}

/* WITNESS_CALLS: the client calls the old cellapp carried for an arriving witness (aoi_carry.h),
 * each checked against the defs as a GHOST_CLIENT_CALL is. */
void cell_on_witness_calls(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    const mc_entity_defs *defs = mc_engine_defs(e);
    int32_t id;
    uint16_t n;
    if (!mc_witness_calls_head_decode(is, &id, &n)) {
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                         "WITNESS_CALLS malformed: ignored");
        return;
    }
    move_rec *r = mv_find(mv_moves(e), id, false);
    mc_entity *ent = mc_engine_find(e, id);
    if (!r || o->local || !mc_address_equal(&r->peer, &o->addr) || r->kind == MV_IN_DONE ||
        !ent || ent->move_state != 2) {
        mc_engine_refuse(e, o, MC_REFUSE_NO_ENTITY, MC_CALL_ERR_NO_ENTITY,
                         "WITNESS_CALLS for %d ignored: no such arrival from there", (int)id);
        return;
    }
    for (uint16_t i = 0; i < n; i++) {
        mc_witness_call c;
        char why[MC_REASON_MAX] = "malformed";
        if (!mc_witness_call_decode(is, &c)) {
            mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                             "WITNESS_CALLS for %d: entry %u malformed: the rest ignored",
                             (int)id, (unsigned)i);
            return;
        }
        const mc_entity_type_def *td = mc_defs_type(defs, c.type);
        const mc_def_method *m = td ? mc_defs_method(td, MC_PART_CLIENT, c.method) : NULL;
        int rc = -1;
        if (m) {
            mc_value *vals = calloc(m->nargs ? m->nargs : 1, sizeof *vals);
            mc_istream ai;
            mc_istream_init(&ai, c.args, c.len);
            rc = vals ? mc_defs_decode_args(defs, m, &ai, vals, why, sizeof why) : -1;
            if (rc == 0)
                for (size_t k = 0; k < m->nargs; k++)
                    mc_value_free(&vals[k]);
            free(vals);
        }
        if (rc != 0) {
            mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                             "WITNESS_CALLS for %d: entry %u refused (%s): the rest ignored",
                             (int)id, (unsigned)i, m ? why : "no such type or client method");
            return;
        }
        (void)cell_aoi_carry_add_early(e, ent, &c);
    }
    if (!mc_istream_done(is))
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                         "WITNESS_CALLS for %d: trailing bytes", (int)id);
}

/* WITNESS_HEARD: what the old cellapp's client heard of each entity it knows (aoi_carry.h),
 * kept with the arriving witness's carried calls until its view goes on. */
void cell_on_witness_heard(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    int32_t id;
    mc_witness_heard *h;
    size_t n;
    if (!mc_witness_heard_decode(is, &id, &h, &n)) {
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                         "WITNESS_HEARD malformed: ignored");
        return;
    }
    move_rec *r = mv_find(mv_moves(e), id, false);
    mc_entity *ent = mc_engine_find(e, id);
    if (!r || o->local || !mc_address_equal(&r->peer, &o->addr) || r->kind == MV_IN_DONE ||
        !ent || ent->move_state != 2) {
        free(h);
        mc_engine_refuse(e, o, MC_REFUSE_NO_ENTITY, MC_CALL_ERR_NO_ENTITY,
                         "WITNESS_HEARD for %d ignored: no such arrival from there", (int)id);
        return;
    }
    cell_aoi_carry_heard_in(e, ent, h, n);
    free(h);
}
