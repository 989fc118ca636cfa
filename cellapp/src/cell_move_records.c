/* The records of cells moving between cellapps and their queues (cell_move.h): the part
 * the old cellapp's side (cell_move_out.c) and the new one's (cell_move_in.c) share, below
 * both. Queued messages are delivered through the role's one dispatch (mc_role_part). */
#include "cell_move.h"
#include "common/log.h"

#include <stdlib.h>
#include <string.h>

cell_moves *mv_moves(mc_engine *e)
{
    cell_state *cs = mc_engine_role_state(e);
    return cs ? cs->moves : NULL;
}

mc_time_us mv_forward_period(mc_engine *e) { return 6 * mc_engine_call_timeout(e); }
mc_time_us mv_arrival_deadline(mc_engine *e) { return 3 * mc_engine_call_timeout(e); }

bool mv_log_ok(uint64_t n) { return n <= 10 || n % 1000 == 0; }

/* ---- records --------------------------------------------------------------------------- */

move_rec *mv_find(cell_moves *m, int32_t id, bool out)
{
    for (size_t i = 0; m && i < m->n; i++) {
        move_rec *r = m->recs[i];
        if (r->id == id && (r->kind <= MV_OUT_MOVED) == out)
            return r;
    }
    return NULL;
}

void mv_free_queue(move_msg *q)
{
    while (q) {
        move_msg *next = q->next;
        free(q);
        q = next;
    }
}

void mv_rec_free(move_rec *r)
{
    free(r->gone);
    mv_free_queue(r->head);
    free(r->timers);
    free(r->told);
    free(r);
}

void mv_rec_remove(cell_moves *m, move_rec *r)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->recs[i] == r) {
            m->recs[i] = m->recs[--m->n];
            break;
        }
    m->records = m->n;
    mv_rec_free(r);
}

move_rec *mv_rec_new(mc_engine *e, cell_moves *m, int32_t id, move_kind kind)
{
    /* one record per entity and direction: an older one (a forwarding entry of an entity
     * that came back and leaves again) goes */
    move_rec *old = mv_find(m, id, kind <= MV_OUT_MOVED);
    if (old)
        mv_rec_remove(m, old);
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
        mv_rec_remove(m, m->recs[at]);
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

move_msg *mv_take_queue(move_rec *r)
{
    move_msg *q = r->head;
    r->head = r->tail = NULL;
    r->nq = 0;
    return q;
}

bool mv_enqueue(mc_engine *e, move_rec *r, uint8_t msg_id, const mc_origin *o,
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

/* A queued message goes where it would have gone had it not waited: the role's one
 * dispatch (mc_role_part: on_call for ENTITY_CALL, the messages table's entry for the
 * others), so that the table's checks run for it as for any message. */
static void deliver_one(mc_engine *e, move_msg *q)
{
    const mc_role_part *part = mc_engine_part(e);
    mc_istream is;
    mc_istream_init(&is, q->data, q->len);
    if (q->id == MC_MSG_ENTITY_CALL) {
        mc_call_header h;
        if (mc_call_header_read(&is, &h))
            part->on_call(e, &q->o, &h, q->data + MC_CALL_HEADER_SIZE,
                          q->len - MC_CALL_HEADER_SIZE);
        return;
    }
    for (size_t i = 0; i < part->message_count; i++)
        if (part->messages[i].id == q->id) {
            part->messages[i].fn(e, &q->o, &is);
            return;
        }
}

/* Deliver here, in order (the entity stayed, or arrived): handlers may start another move. */
void mv_deliver_all(mc_engine *e, move_msg *q)
{
    while (q) {
        move_msg *next = q->next;
        if (!mc_engine_freeing(e))
            deliver_one(e, q);
        free(q);
        q = next;
    }
}

