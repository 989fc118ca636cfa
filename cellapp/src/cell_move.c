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
#include "cell_move.h"
#include "entity/persist_wire.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- routing: what arrives for a moving cell -------------------------------------------- */

bool cell_move_wants(mc_engine *e, int32_t id)
{
    cell_moves *m = mv_moves(e);
    if (!m || !m->n)
        return false;
    mc_entity *ent = mc_engine_find(e, id);
    return !ent || ent->move_state != 0 || ent->is_ghost;
}

bool cell_move_left(mc_engine *e, int32_t id, mc_mailbox_ref *base, mc_address *went)
{
    cell_moves *m = mv_moves(e);
    move_rec *r = m && m->n ? mv_find(m, id, true) : NULL;
    if (!r || r->kind != MV_OUT_MOVED || r->expires <= mc_clock_now_us())
        return false;
    *base = r->base;
    *went = r->peer;
    return true;
}

void cell_move_left_base(mc_engine *e, int32_t id, const mc_mailbox_ref *base)
{
    cell_moves *m = mv_moves(e);
    move_rec *r = m && m->n ? mv_find(m, id, true) : NULL;
    if (r && r->kind == MV_OUT_MOVED) {
        r->base = *base;
        m->restored_passed++;
    }
}

bool cell_move_intercept(mc_engine *e, uint8_t msg_id, const mc_origin *o, int32_t id,
                         const uint8_t *data, size_t len)
{
    cell_moves *m = mv_moves(e);
    if (!m || !m->n)
        return false;
    mc_entity *ent = mc_engine_find(e, id);
    if (ent && ent->move_state == 1) {
        move_rec *r = mv_find(m, id, true);
        if (!r)
            return false;
        m->queued++;
        return mv_enqueue(e, r, msg_id, o, data, len);
    }
    if (ent && ent->move_state == 2) {
        move_rec *r = mv_find(m, id, false);
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
        return mv_enqueue(e, r, msg_id, o, data, len);
    }
    if (ent && !ent->is_ghost)
        return false;
    /* not here, or here only as the ghost of what moved away (an offload) */
    move_rec *r = mv_find(m, id, true);
    if (!r || r->kind != MV_OUT_MOVED || r->expires <= mc_clock_now_us())
        return false;
    mv_forward_one(e, r, msg_id, o, data, len);
    return true;
}

void cell_moves_on_peer_death(mc_engine *e, const char *addr)
{
    cell_moves *m = mv_moves(e);
    mc_address a;
    if (!m || mc_address_parse(addr, &a) != MC_OK)
        return;
    /* handlers run: restart after each */
    for (int guard = 0; guard < 100000; guard++) {
        move_rec *r = NULL;
        for (size_t i = 0; i < m->n && !r; i++)
            if (mc_address_equal(&m->recs[i]->peer, &a) && !m->recs[i]->asking &&
                (m->recs[i]->kind == MV_IN_DORMANT || m->recs[i]->kind == MV_IN_LIVE ||
                 m->recs[i]->kind == MV_OUT_MOVED))
                r = m->recs[i];
        if (!r)
            return;
        if (r->kind == MV_OUT_MOVED) {
            mv_rec_remove(m, r);
        } else {
            MC_WARNING("entity %d: its old cellapp %s died before the move settled: asking "
                       "its base",
                       (int)r->id, addr);
            mv_ask_base(e, r);
        }
    }
}

static void on_sweep(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    mc_engine *e = ctx;
    cell_moves *m = mv_moves(e);
    mc_time_us now = mc_clock_now_us();
    /* forwarding entries and settled arrivals that expired: one pass */
    for (size_t i = 0; i < m->n;) {
        move_rec *r = m->recs[i];
        if ((r->kind == MV_OUT_MOVED || r->kind == MV_IN_DONE) && r->expires <= now) {
            m->recs[i] = m->recs[--m->n]; /* the last record takes its place */
            mv_rec_free(r);
        } else {
            i++;
        }
    }
    m->records = m->n;
    /* arrivals whose old cellapp is silent past the deadline (rare; asking the base may
     * run handlers: look again after each) */
    for (int guard = 0; guard < 100000; guard++) {
        move_rec *r = NULL;
        for (size_t i = 0; i < m->n && !r; i++)
            if ((m->recs[i]->kind == MV_IN_DORMANT || m->recs[i]->kind == MV_IN_LIVE) &&
                !m->recs[i]->asking && m->recs[i]->expires <= now)
                r = m->recs[i];
        if (!r)
            return;
        MC_WARNING("entity %d: no word from its old cellapp: asking its base", (int)r->id);
        mv_ask_base(e, r);
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
    cell_ghosts_set_offload(e, cell_move_offload); /* the ghosts' tick offloads through us */
    struct event_base *base = mc_server_event_base(mc_engine_server(e));
    m->kick_ev = event_new(base, -1, 0, mv_on_kick, e);
    m->sweep_ev = event_new(base, -1, EV_PERSIST, on_sweep, e);
    struct timeval tv = {0, MOVES_SWEEP_MS * 1000};
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
             {"moves/dropped", &m->dropped},     {"moves/records", &m->records},
             {"moves/askedBase", &m->asked},     {"moves/baseRestoredPassed", &m->restored_passed}};
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
        mv_rec_free(m->recs[i]);
    free(m->recs);
    free(m);
    cs->moves = NULL;
}
