/* Movement from a player's client: the client sends its own entity's position and direction
 * (unreliably) to its base, which relays them to the cell (CLIENT_MOVE). The cell takes a
 * move only from its own base, with finite numbers, and within what --maxClientSpeed allows
 * (a bucket of distance filled at that speed, a second plus --clientMoveSlack deep, that
 * every accepted move draws from, however many there are); a refused move is counted and
 * the client told where its entity really is (a CORRECTION record, at most one per
 * --clientCorrectionMs). docs/WORLD.md "Movement from clients". */
#include "cellapp.h"
#include "common/clock.h"
#include "common/log.h"
#include "entity/wire.h"

#include <math.h>
#include <stdio.h>

static client_moves *moves(mc_engine *e)
{
    return &((cell_state *)mc_engine_role_state(e))->client_moves;
}

int client_moves_init(mc_engine *e, char *err, size_t errlen)
{
    client_moves *m = moves(e);
    double v = mc_config_get_float(mc_server_config(mc_engine_server(e)), "maxClientSpeed");
    if (!isfinite(v) || v < 0.1 || v > 100000) {
        snprintf(err, errlen, "--maxClientSpeed %g: must be within 0.1..100000", v);
        return -1;
    }
    m->max_speed = v;
    double slack = mc_config_get_float(mc_server_config(mc_engine_server(e)), "clientMoveSlack");
    if (!isfinite(slack) || slack < 0 || slack > 100) {
        snprintf(err, errlen, "--clientMoveSlack %g: must be within 0..100", slack);
        return -1;
    }
    m->slack = slack;
    uint64_t gap = mc_config_get_uint(mc_server_config(mc_engine_server(e)), "clientCorrectionMs");
    if (gap > 60000) {
        snprintf(err, errlen, "--clientCorrectionMs %llu: must be within 0..60000",
                 (unsigned long long)gap);
        return -1;
    }
    m->correction_gap_us = (mc_time_us)gap * 1000;
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    int bad = mc_watch_add_uint(w, "clientMoves/accepted", &m->accepted, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "clientMoves/refused/tooFast", &m->refused_speed, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "clientMoves/refused/malformed", &m->refused_malformed,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "clientMoves/refused/notItsCell", &m->refused_not_cell,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "clientMoves/corrections", &m->corrections, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "clientMoves/correctionsSkipped", &m->corrections_skipped,
                             MC_WATCH_READ_ONLY);
    if (bad) {
        snprintf(err, errlen, "cannot publish the moves watchers");
        return -1;
    }
    return 0;
}

/* How far the entity may go now: a bucket that fills at the speed limit (plus 10% for the
 * difference between the client's clock and ours) up to one second's worth plus the slack
 * for rounding at the client, and that each move taken empties by its length. The slack is
 * part of the bucket, never added per move: however many moves come, their total over T
 * seconds stays within 1.1 x speed x (T + 1) + slack. Moves that arrive bunched together
 * (sent a tick apart, delivered in one burst by a busy network or process) spend what the
 * time between them earned; a jump beyond what the last second allows never fits. */
static double allowed(const client_moves *m, client_move_state *st, mc_time_us now)
{
    double cap = m->max_speed * 1.1 + m->slack;
    if (!st->at)
        st->allowance = cap;
    else if (now > st->at)
        st->allowance += m->max_speed * 1.1 * (double)(now - st->at) / 1e6;
    if (st->allowance > cap)
        st->allowance = cap;
    st->at = now;
    return st->allowance;
}

/* Tell the client where its entity is, at most once per --clientCorrectionMs: a client that
 * keeps sending bad moves gets one correction per interval, not one per move. */
static void correct(mc_engine *e, client_moves *m, mc_entity *ent, client_move_state *st,
                    mc_time_us now)
{
    if (st->corrected_at && m->correction_gap_us && now >= st->corrected_at &&
        now - st->corrected_at < m->correction_gap_us) {
        m->corrections_skipped++;
        return;
    }
    st->corrected_at = now ? now : 1;
    cell_aoi_correct(e, ent);
}

void cell_on_client_move(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    client_moves *m = moves(e);
    int32_t id = mc_read_i32(is);
    mc_vector3 pos, dir;
    bool numbers = mc_read_vec3(is, &pos) && mc_read_vec3(is, &dir) && mc_istream_done(is);
    mc_entity *ent = id > 0 ? mc_engine_find(e, id) : NULL;
    mc_address base;
    if (ent && ent->part == MC_PART_CELL && !ent->in_reap)
        mc_mailbox_address(&ent->base, &base);
    client_move_state *st = ent && ent->part == MC_PART_CELL && !ent->in_reap && ent->space
                              ? cell_aoi_client_move(ent)
                              : NULL;
    if (!st || o->local || !mc_address_equal(&base, &o->addr)) {
        /* not a cell here, or not from its base: a late move after a teleport or a forgery */
        m->refused_not_cell++;
        return;
    }
    if (!numbers) {
        /* its own client sent a move that is not finite numbers: refused, told where it is */
        m->refused_malformed++;
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                         "CLIENT_MOVE of %s %d: malformed or not finite", ent->td->name,
                         (int)ent->id);
        correct(e, m, ent, st, mc_clock_now_us());
        return;
    }
    mc_time_us now = mc_clock_now_us();
    double dx = pos.x - ent->position.x, dy = pos.y - ent->position.y,
           dz = pos.z - ent->position.z;
    double d = sqrt(dx * dx + dy * dy + dz * dz);
    if (d > allowed(m, st, now)) {
        m->refused_speed++;
        if (m->refused_speed <= 10 || m->refused_speed % 1000 == 0)
            MC_INFO("%s %d: a move of %.1f m from its client refused (faster than %g m/s); "
                    "%llu refused so far",
                    ent->td->name, (int)ent->id, d, m->max_speed,
                    (unsigned long long)m->refused_speed);
        correct(e, m, ent, st, now);
        return;
    }
    ent->position = pos;
    ent->direction = dir;
    st->allowance = st->allowance > d ? st->allowance - d : 0;
    cell_aoi_moved(e, ent);
    m->accepted++;
}
