/* A cell entity moving to a space on another cellapp (mc_teleport with a CELL mailbox held
 * elsewhere; docs/WORLD.md "Teleports", messages in entity/move_wire.h).
 *
 * The old cellapp (A), once the handler that asked has returned: turns the witness off (its
 * client is told everything left), takes the timers out, encodes the properties and sends
 * CELL_MIGRATE to the new cellapp (B); from the teleport on, every message arriving for the
 * entity (ENTITY_CALL of any component, DESTROY_CELL, FETCH_CELL) is queued. B makes the cell
 * (in the space of the cell `nearby`), dormant: in its space, no timers, calls from anyone
 * but A held, and answers. On yes A sends CELL_MIGRATE_END commit (B starts the timers),
 * drops its copy without telling the base it went, forwards the queue to B in order, tells
 * the base the new address (CELL_MOVED, a request: the base answers after every call it
 * sent to A, on the same channel) and keeps forwarding what still arrives for the entity for
 * six call timeouts (the forwarding table). On the base's answer (or its failure) A sends
 * CELL_MIGRATE_END flushed: B delivers what it held, in order, and turns the witness on (its
 * client is introduced to the new view afresh; its updates now reach a base that knows B).
 * On no, a timeout or B's death A restores the entity as it was (timers at their old due
 * times, witness and radius) and delivers the queue locally; after a timeout it also sends
 * CELL_MIGRATE_END abort, and B drops a dormant copy that never hears commit within three
 * call timeouts (or whose old cellapp dies), so only one cellapp ever runs the cell. */
#include "cellapp.h"
#include "entity/move_wire.h"
#include "entity/persist_wire.h"
#include "common/log.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A message for a moving entity, as it arrived. */
typedef struct move_msg {
    struct move_msg *next;
    uint8_t id;
    mc_origin o;
    size_t len;
    uint8_t data[];
} move_msg;

typedef enum {
    MV_OUT_PREPARE, /* A: asked, CELL_MIGRATE not sent yet (the handler is still running) */
    MV_OUT_WAIT,    /* A: CELL_MIGRATE sent */
    MV_OUT_MOVED,   /* A: it left; what arrives is forwarded until `expires` */
    MV_IN_DORMANT,  /* B: made, waiting for commit or abort */
    MV_IN_LIVE,     /* B: committed (timers run), holding others' calls until flushed */
    MV_IN_DONE,     /* B: flushed; A's forwards of DESTROY_CELL / FETCH_CELL accepted */
} move_kind;

typedef struct {
    int32_t id;
    uint16_t type;
    move_kind kind;
    mc_address peer;          /* OUT: the new cellapp; IN: the old one */
    mc_mailbox_ref base;
    int32_t near_id;
    mc_vector3 position, direction;
    mc_time_us expires;       /* MOVED, DONE: forgotten then; DORMANT, LIVE: the deadline */
    move_msg *head, *tail;
    size_t nq;
    mc_timer_export *timers;  /* OUT: taken out (restored on failure); IN: to start */
    size_t ntimers;
    bool hold_all;            /* IN: a DESTROY_CELL is held: everything after it waits too */
    uint8_t *gone;            /* IN: CELL_GONE of a cell that went while arriving */
    size_t gone_len;
    bool witness;
    float radius, hysteresis;
} move_rec;

#define MOVES_MAX 65536u
#define SWEEP_MS 250

typedef struct cell_moves {
    move_rec **recs;
    size_t n, cap;
    struct event *kick_ev, *sweep_ev;
    uint64_t started, moved, failed, arrived, refused, queued, held, forwarded, aborted,
        discarded, dropped, records;
} cell_moves;

static cell_moves *moves(mc_engine *e)
{
    cell_state *cs = mc_engine_role_state(e);
    return cs ? cs->moves : NULL;
}

static mc_time_us forward_period(mc_engine *e) { return 6 * mc_engine_call_timeout(e); }
static mc_time_us arrival_deadline(mc_engine *e) { return 3 * mc_engine_call_timeout(e); }

static bool log_ok(uint64_t n) { return n <= 10 || n % 1000 == 0; }

/* ---- records --------------------------------------------------------------------------- */

static move_rec *find_rec(cell_moves *m, int32_t id, bool out)
{
    for (size_t i = 0; m && i < m->n; i++) {
        move_rec *r = m->recs[i];
        if (r->id == id && (r->kind <= MV_OUT_MOVED) == out)
            return r;
    }
    return NULL;
}

static void free_queue(move_msg *q)
{
    while (q) {
        move_msg *next = q->next;
        free(q);
        q = next;
    }
}

static void rec_free(move_rec *r)
{
    free(r->gone);
    free_queue(r->head);
    free(r->timers);
    free(r);
}

static void rec_remove(cell_moves *m, move_rec *r)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->recs[i] == r) {
            m->recs[i] = m->recs[--m->n];
            break;
        }
    m->records = m->n;
    rec_free(r);
}

static move_rec *rec_new(mc_engine *e, cell_moves *m, int32_t id, move_kind kind)
{
    /* one record per entity and direction: an older one (a forwarding entry of an entity
     * that came back and leaves again) goes */
    move_rec *old = find_rec(m, id, kind <= MV_OUT_MOVED);
    if (old)
        rec_remove(m, old);
    if (m->n == MOVES_MAX) {
        /* full of forwarding entries: the one nearest its expiry goes first */
        size_t at = m->n;
        for (size_t i = 0; i < m->n; i++)
            if ((m->recs[i]->kind == MV_OUT_MOVED || m->recs[i]->kind == MV_IN_DONE) &&
                (at == m->n || m->recs[i]->expires < m->recs[at]->expires))
                at = i;
        if (at == m->n)
            return NULL;
        m->dropped++;
        rec_remove(m, m->recs[at]);
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        move_rec **l = realloc(m->recs, cap * sizeof *l);
        if (!l)
            return NULL;
        m->recs = l;
        m->cap = cap;
    }
    move_rec *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->id = id;
    r->kind = kind;
    (void)e;
    m->recs[m->n++] = r;
    m->records = m->n;
    return r;
}

static move_msg *take_queue(move_rec *r)
{
    move_msg *q = r->head;
    r->head = r->tail = NULL;
    r->nq = 0;
    return q;
}

static bool enqueue(mc_engine *e, move_rec *r, uint8_t msg_id, const mc_origin *o,
                    const uint8_t *data, size_t len)
{
    if (r->nq >= mc_engine_cell_queue_max(e)) {
        mc_engine_refuse(e, o, MC_REFUSE_QUEUE_FULL, MC_CALL_ERR_BUSY,
                         "entity %d is moving and %zu messages wait for it already",
                         (int)r->id, r->nq);
        return true;
    }
    move_msg *q = malloc(sizeof *q + len);
    if (!q) {
        mc_engine_refuse(e, o, MC_REFUSE_QUEUE_FULL, MC_CALL_ERR_BUSY,
                         "out of memory queueing for moving entity %d", (int)r->id);
        return true;
    }
    q->next = NULL;
    q->id = msg_id;
    q->o = *o;
    q->len = len;
    if (len)
        memcpy(q->data, data, len);
    if (r->tail)
        r->tail->next = q;
    else
        r->head = q;
    r->tail = q;
    r->nq++;
    return true;
}

/* ---- delivering and forwarding ----------------------------------------------------------- */

static void deliver_one(mc_engine *e, move_msg *q)
{
    mc_istream is;
    mc_istream_init(&is, q->data, q->len);
    if (q->id == MC_MSG_ENTITY_CALL) {
        mc_call_header h;
        if (mc_call_header_read(&is, &h))
            cell_on_call(e, &q->o, &h, q->data + MC_CALL_HEADER_SIZE,
                         q->len - MC_CALL_HEADER_SIZE);
    } else if (q->id == MC_MSG_DESTROY_CELL) {
        cell_on_destroy_cell(e, &q->o, &is);
    } else if (q->id == MC_MSG_FETCH_CELL) {
        cell_on_fetch_cell(e, &q->o, &is);
    }
}

/* Deliver here, in order (the entity stayed, or arrived): handlers may start another move. */
static void deliver_all(mc_engine *e, move_msg *q)
{
    while (q) {
        move_msg *next = q->next;
        if (!mc_engine_freeing(e))
            deliver_one(e, q);
        free(q);
        q = next;
    }
}

/* The answer to a FETCH_CELL forwarded to the new cellapp, relayed to whoever asked. */
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
static void forward_one(mc_engine *e, move_rec *r, uint8_t msg_id, const mc_origin *o,
                        const uint8_t *data, size_t len)
{
    cell_moves *m = moves(e);
    int rc = MC_CALL_OK;
    if (msg_id == MC_MSG_ENTITY_CALL) {
        mc_istream is;
        mc_istream_init(&is, data, len);
        mc_call_header h;
        if (!mc_call_header_read(&is, &h))
            return;
        mc_mailbox_ref to;
        if (mc_mailbox_ref_init(&to, h.entity_id, r->peer.ip, r->peer.port,
                                (mc_component)(h.salt >> 13), h.salt & 0x1fff) != 0) {
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
    if (msg_id == MC_MSG_DESTROY_CELL) {
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
    else if (log_ok(++m->refused))
        MC_WARNING("cannot forward message %u to moved entity %d: %s", (unsigned)msg_id,
                   (int)r->id, mc_call_status_name(rc));
}

/* ---- the old cellapp ------------------------------------------------------------------- */

static void restore(mc_engine *e, move_rec *r, mc_entity *ent, const char *why)
{
    cell_moves *m = moves(e);
    m->failed++;
    if (log_ok(m->failed))
        MC_WARNING("%s %d stays here: its move to space of cell %d failed (%s) (%llu failed "
                   "moves)",
                   ent ? ent->td->name : "entity", (int)r->id, (int)r->near_id, why,
                   (unsigned long long)m->failed);
    if (ent) {
        ent->move_state = 0;
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
    move_msg *q = take_queue(r);
    rec_remove(m, r);
    deliver_all(e, q);
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

static void on_base_told(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    int32_t id = (int32_t)(intptr_t)ctx;
    if (mc_engine_freeing(e))
        return;
    if (status == MC_CALL_OK) {
        int8_t st = mc_read_i8(payload);
        char why[MC_REASON_MAX] = "";
        mc_read_string_into(payload, why, sizeof why);
        if (st != MC_CALL_OK)
            MC_INFO("entity %d: its base refused the new address: %s", (int)id, why);
    } else {
        MC_INFO("entity %d: its base did not take the new address: %s", (int)id,
                mc_call_status_name(status));
    }
    move_rec *r = find_rec(moves(e), id, true);
    if (r && r->kind == MV_OUT_MOVED)
        send_end(e, &r->peer, id, MC_MIGRATE_FLUSHED); /* the base's earlier calls came first */
}

static void committed(mc_engine *e, move_rec *r, mc_entity *ent)
{
    cell_moves *m = moves(e);
    send_end(e, &r->peer, r->id, MC_MIGRATE_COMMIT);
    /* the copy here goes without a word to the base or the game: it lives on there */
    ent->gone_why = -1;
    ent->move_state = 0;
    mc_engine_discard_entity(e, ent);
    r->kind = MV_OUT_MOVED;
    r->expires = mc_clock_now_us() + forward_period(e);
    free(r->timers);
    r->timers = NULL;
    r->ntimers = 0;
    m->moved++;
    move_msg *q = take_queue(r);
    for (move_msg *x = q; x; x = x->next)
        forward_one(e, r, x->id, &x->o, x->data, x->len);
    free_queue(q);
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
        send_end(e, &r->peer, r->id, MC_MIGRATE_FLUSHED);
    }
}

static void on_migrate_reply(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    int32_t id = (int32_t)(intptr_t)ctx;
    if (mc_engine_freeing(e))
        return;
    cell_moves *m = moves(e);
    move_rec *r = find_rec(m, id, true);
    if (!r || r->kind != MV_OUT_WAIT)
        return;
    char why[MC_REASON_MAX] = "";
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
    restore(e, r, here ? ent : NULL, here ? why : "the entity went meanwhile");
}

/* Send CELL_MIGRATE for one prepared move (the handler that asked has returned). */
static void launch(mc_engine *e, move_rec *r)
{
    mc_entity *ent = mc_engine_find(e, r->id);
    if (!ent || ent->in_reap) {
        if (ent)
            ent->move_state = 0;
        restore(e, r, NULL, "the entity went before it left");
        return;
    }
    bool witness = false;
    float radius = 0, hysteresis = 0;
    cell_aoi_settings(ent, &witness, &radius, &hysteresis);
    r->witness = witness;
    r->radius = radius;
    r->hysteresis = hysteresis;
    if (witness) {
        /* its client hears everything in the old view leave, its game onLeftAoI */
        mc_call_frame f;
        mc_engine_frame(e, &f, ent);
        cell_aoi_set_witness(&f.ctx, false);
        ent = mc_engine_find(e, r->id);
        if (!ent || ent->in_reap) {
            if (ent)
                ent->move_state = 0;
            restore(e, r, NULL, "the entity went before it left");
            return;
        }
    }
    r->base = ent->base;
    r->timers = ent->ntimers ? calloc(ent->ntimers, sizeof *r->timers) : NULL;
    if (ent->ntimers && !r->timers) {
        restore(e, r, ent, "out of memory");
        return;
    }
    r->ntimers = mc_engine_export_timers(e, ent, r->timers, ent->ntimers);
    mc_time_us now = mc_clock_now_us();
    mc_migrate_timer *wt = r->ntimers ? calloc(r->ntimers, sizeof *wt) : NULL;
    if (r->ntimers && !wt) {
        restore(e, r, ent, "out of memory");
        return;
    }
    for (size_t i = 0; i < r->ntimers; i++)
        wt[i] = (mc_migrate_timer){.id = r->timers[i].id,
                                   .remaining_us = r->timers[i].due > now
                                                       ? r->timers[i].due - now : 0,
                                   .repeat_us = r->timers[i].repeat,
                                   .user_arg = r->timers[i].user_arg};
    mc_migrate_head h = {.cell = {.entity_id = ent->id, .type = ent->type,
                                  .near_id = r->near_id, .base = ent->base,
                                  .position = r->position, .direction = r->direction},
                         .witness = witness, .radius = radius, .hysteresis = hysteresis,
                         .timers = wt, .ntimers = r->ntimers};
    mc_ostream os;
    mc_ostream_init(&os);
    mc_migrate_encode(&os, &h);
    free(wt);
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
        restore(e, r, ent, why);
        return;
    }
    r->kind = MV_OUT_WAIT;
}

static void on_kick(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    mc_engine *e = ctx;
    cell_moves *m = moves(e);
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

int cell_move_start(mc_engine *e, mc_entity *ent, const mc_mailbox_ref *nearby,
                    const mc_address *where, mc_vector3 position, mc_vector3 direction)
{
    cell_moves *m = moves(e);
    if (!m || mc_engine_freeing(e))
        return MC_CALL_ERR_UNAVAILABLE;
    if (ent->move_state)
        return MC_CALL_ERR_STATE;
    move_rec *r = rec_new(e, m, ent->id, MV_OUT_PREPARE);
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

/* ---- the new cellapp ------------------------------------------------------------------- */

static void answer(mc_engine *e, const mc_origin *o, int status, int32_t space, const char *why)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_write_i8(&os, (int8_t)status);
    mc_write_i32(&os, space);
    mc_write_string(&os, why ? why : "");
    mc_engine_reply(e, o, os.data, os.size);
    mc_ostream_free(&os);
    if (status != MC_CALL_OK) {
        cell_moves *m = moves(e);
        if (log_ok(++m->refused))
            MC_INFO("CELL_MIGRATE refused: %s", why);
    }
}

void cell_on_migrate(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    cell_moves *m = moves(e);
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
    mc_entity *ent = mc_engine_new_entity(e, h.cell.type, h.cell.entity_id, why, sizeof why);
    if (!ent) {
        mc_migrate_free(&h);
        answer(e, o, MC_CALL_ERR_STATE, 0, why);
        return;
    }
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
    move_rec *r = rec_new(e, m, ent->id, MV_IN_DORMANT);
    mc_space *sp = near->space;
    if (!r || space_add(e, sp, ent) != 0) {
        if (r)
            rec_remove(m, r);
        ent->gone_why = -1;
        mc_engine_discard_entity(e, ent);
        mc_migrate_free(&h);
        answer(e, o, MC_CALL_ERR_BUSY, 0, "out of memory");
        return;
    }
    mc_time_us now = mc_clock_now_us();
    r->type = ent->type;
    r->peer = o->addr;
    r->base = ent->base;
    r->near_id = h.cell.near_id;
    r->expires = now + arrival_deadline(e);
    r->witness = h.witness;
    r->radius = h.radius;
    r->hysteresis = h.hysteresis;
    if (h.ntimers && !(r->timers = calloc(h.ntimers, sizeof *r->timers))) {
        rec_remove(m, r);
        ent->gone_why = -1;
        mc_engine_discard_entity(e, ent);
        mc_migrate_free(&h);
        answer(e, o, MC_CALL_ERR_BUSY, 0, "out of memory");
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
static void drop_arrival(mc_engine *e, move_rec *r, bool tell_base)
{
    cell_moves *m = moves(e);
    mc_entity *ent = mc_engine_find(e, r->id);
    move_msg *q = take_queue(r);
    rec_remove(m, r);
    if (ent && ent->move_state == 2) {
        ent->move_state = 0;
        if (tell_base)
            cell_tell_base_gone(e, ent, MC_CELL_GONE_SELF);
        ent->gone_why = -1;
        mc_engine_discard_entity(e, ent);
        m->discarded++;
    }
    deliver_all(e, q); /* refused: no such entity */
}

static void start_timers(mc_engine *e, move_rec *r, mc_entity *ent)
{
    for (size_t i = 0; i < r->ntimers; i++)
        if (mc_engine_import_timer(e, ent, &r->timers[i]) != MC_CALL_OK)
            MC_ERROR("%s %d: timer %u did not come along", ent->td->name, (int)ent->id,
                     (unsigned)r->timers[i].id);
    free(r->timers);
    r->timers = NULL;
    r->ntimers = 0;
    r->kind = MV_IN_LIVE;
    r->expires = mc_clock_now_us() + arrival_deadline(e);
}

/* The base knows the new address (or will never answer): held messages are delivered and
 * the witness starts over here. */
static void settle(mc_engine *e, move_rec *r)
{
    cell_moves *m = moves(e);
    mc_entity *ent = mc_engine_find(e, r->id);
    if (ent && r->kind == MV_IN_DORMANT)
        start_timers(e, r, ent);
    r->kind = MV_IN_DONE;
    r->expires = mc_clock_now_us() + forward_period(e);
    move_msg *q = take_queue(r);
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
            if (cell_aoi_set_witness(&f.ctx, true) != MC_CALL_OK)
                MC_ERROR("%s %d: could not be a witness here", ent->td->name, (int)ent->id);
        }
    }
    deliver_all(e, q);
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
    move_rec *r = find_rec(moves(e), id, false);
    if (!r || o->local || !mc_address_equal(&r->peer, &o->addr) || r->kind == MV_IN_DONE) {
        mc_engine_refuse(e, o, MC_REFUSE_NO_ENTITY, MC_CALL_ERR_NO_ENTITY,
                         "CELL_MIGRATE_END for %d ignored: no such arrival from there",
                         (int)id);
        return;
    }
    mc_entity *ent = mc_engine_find(e, id);
    if (outcome == MC_MIGRATE_ABORT) {
        if (r->kind == MV_IN_DORMANT) {
            moves(e)->aborted++;
            drop_arrival(e, r, false);
        }
        return;
    }
    if (outcome == MC_MIGRATE_COMMIT) {
        if (r->kind == MV_IN_DORMANT && ent)
            start_timers(e, r, ent);
        return;
    }
    settle(e, r); /* flushed */
}

/* ---- both ------------------------------------------------------------------------------ */

bool cell_move_has_work(mc_engine *e)
{
    cell_moves *m = moves(e);
    return m && m->n;
}

bool cell_move_intercept(mc_engine *e, uint8_t msg_id, const mc_origin *o, int32_t id,
                         const uint8_t *data, size_t len)
{
    cell_moves *m = moves(e);
    if (!m || !m->n)
        return false;
    mc_entity *ent = mc_engine_find(e, id);
    if (ent && ent->move_state == 1) {
        move_rec *r = find_rec(m, id, true);
        if (!r)
            return false;
        m->queued++;
        return enqueue(e, r, msg_id, o, data, len);
    }
    if (ent && ent->move_state == 2) {
        move_rec *r = find_rec(m, id, false);
        if (!r)
            return false;
        bool from_old = !o->local && mc_address_equal(&o->addr, &r->peer);
        /* what the old cellapp forwards goes first, but a DESTROY_CELL (and all after it)
         * waits until the base knows this address, so that it hears the CELL_GONE */
        if (from_old && !r->hold_all && msg_id != MC_MSG_DESTROY_CELL)
            return false;
        if (msg_id == MC_MSG_DESTROY_CELL)
            r->hold_all = true;
        m->held++;
        return enqueue(e, r, msg_id, o, data, len);
    }
    if (ent)
        return false;
    move_rec *r = find_rec(m, id, true);
    if (!r || r->kind != MV_OUT_MOVED || r->expires <= mc_clock_now_us())
        return false;
    forward_one(e, r, msg_id, o, data, len);
    return true;
}

bool cell_move_arrival_gone(mc_engine *e, mc_entity *ent)
{
    if (ent->move_state != 2)
        return false;
    move_rec *r = find_rec(moves(e), ent->id, false);
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
    move_rec *r = find_rec(moves(e), id, false);
    return r && mc_address_equal(&r->peer, addr);
}

void cell_moves_on_peer_death(mc_engine *e, const char *addr)
{
    cell_moves *m = moves(e);
    mc_address a;
    if (!m || mc_address_parse(addr, &a) != MC_OK)
        return;
    /* handlers run: restart after each */
    for (int guard = 0; guard < 100000; guard++) {
        move_rec *r = NULL;
        for (size_t i = 0; i < m->n && !r; i++)
            if (mc_address_equal(&m->recs[i]->peer, &a) &&
                (m->recs[i]->kind == MV_IN_DORMANT || m->recs[i]->kind == MV_IN_LIVE ||
                 m->recs[i]->kind == MV_OUT_MOVED))
                r = m->recs[i];
        if (!r)
            return;
        if (r->kind == MV_IN_DORMANT) {
            MC_WARNING("entity %d: its old cellapp %s died before it let go: dropped here",
                       (int)r->id, addr);
            drop_arrival(e, r, true);
        } else if (r->kind == MV_IN_LIVE) {
            settle(e, r);
            r->kind = MV_IN_DONE;
            rec_remove(m, r);
        } else {
            rec_remove(m, r);
        }
    }
}

static void on_sweep(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    mc_engine *e = ctx;
    cell_moves *m = moves(e);
    mc_time_us now = mc_clock_now_us();
    for (int guard = 0; guard < 100000; guard++) {
        move_rec *r = NULL;
        for (size_t i = 0; i < m->n && !r; i++)
            if (m->recs[i]->expires && m->recs[i]->expires <= now &&
                m->recs[i]->kind >= MV_OUT_MOVED)
                r = m->recs[i];
        if (!r)
            return;
        switch (r->kind) {
        case MV_IN_DORMANT:
            MC_WARNING("entity %d: no word from its old cellapp: dropped here", (int)r->id);
            drop_arrival(e, r, true);
            break;
        case MV_IN_LIVE:
            settle(e, r);
            break;
        default:
            rec_remove(m, r);
            break;
        }
    }
}

/* ---- set up ---------------------------------------------------------------------------- */

int cell_moves_init(mc_engine *e, char *err, size_t errlen)
{
    cell_state *cs = mc_engine_role_state(e);
    cell_moves *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cs->moves = m;
    struct event_base *base = mc_server_event_base(mc_engine_server(e));
    m->kick_ev = event_new(base, -1, 0, on_kick, e);
    m->sweep_ev = event_new(base, -1, EV_PERSIST, on_sweep, e);
    struct timeval tv = {0, SWEEP_MS * 1000};
    if (!m->kick_ev || !m->sweep_ev || event_add(m->sweep_ev, &tv) != 0) {
        snprintf(err, errlen, "cannot start the moves' timers");
        return -1;
    }
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    struct {
        const char *path;
        uint64_t *v;
    } c[] = {{"moves/started", &m->started},     {"moves/out", &m->moved},
             {"moves/failed", &m->failed},       {"moves/in", &m->arrived},
             {"moves/refused", &m->refused},     {"moves/queued", &m->queued},
             {"moves/held", &m->held},           {"moves/forwarded", &m->forwarded},
             {"moves/aborted", &m->aborted},     {"moves/discarded", &m->discarded},
             {"moves/dropped", &m->dropped},     {"moves/records", &m->records}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (mc_watch_add_uint(w, c[i].path, c[i].v, MC_WATCH_READ_ONLY) != MC_WATCH_OK) {
            snprintf(err, errlen, "cannot publish %s", c[i].path);
            return -1;
        }
    return 0;
}

void cell_moves_free(mc_engine *e)
{
    cell_state *cs = mc_engine_role_state(e);
    cell_moves *m = cs ? cs->moves : NULL;
    if (!m)
        return;
    if (m->kick_ev)
        event_free(m->kick_ev);
    if (m->sweep_ev)
        event_free(m->sweep_ev);
    for (size_t i = 0; i < m->n; i++)
        rec_free(m->recs[i]);
    free(m->recs);
    free(m);
    cs->moves = NULL;
}
