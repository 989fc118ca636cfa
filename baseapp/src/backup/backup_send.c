/* Sending backups of this baseapp's bases to their backup baseapps (backup.h).
 *
 * Each period (--backupPeriodMs) takes the ids of the bases here and visits them spread over
 * the period (by the tick, a share proportional to the time gone). A visited base is encoded
 * with a stable view of its state (timers by phase, not by time left) and hashed; it is sent
 * when the hash or its backup baseapp changed since its last backup, as long as the byte
 * budget (--backupBytesPerSec, accrued per tick, at most one second's worth) allows; what the
 * budget stops waits for the next tick (backups/pending). A base whose backup baseapp moved
 * is sent to the new one and dropped at the old one. */
#include "backup.h"
#include "db/db.h"
#include "clients/proxy.h"
#include "common/log.h"
#include "entity/backup_wire.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t hash;
    mc_address to;
    uint32_t serial;
} backup_sent;

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* Encode a base; stable: timers by phase (the hash does not change as time passes). */
static int encode(base_backup *b, mc_entity *ent, uint32_t serial, bool stable,
                  mc_time_us now, mc_ostream *os)
{
    mc_engine *e = b->e;
    const mc_entity_defs *defs = mc_engine_defs(e);
    char why[160];
    mc_backup_head h = {0};
    h.entity_id = ent->id;
    h.type = ent->type;
    h.serial = stable ? 0 : serial;
    if (ent->cell_state == MC_CELL_LIVE) {
        h.flags |= MC_BACKUP_FLAG_CELL;
        h.cell = ent->cell;
    }
    if (proxy_has_client(e, ent))
        h.flags |= MC_BACKUP_FLAG_CLIENT;
    h.position = ent->cell_position;
    h.direction = ent->cell_direction;
    h.space = ent->cell_space > 0 ? ent->cell_space : 0;
    db_rec *r = db_rec_of(base_db_of(e), ent->id);
    if (r && r->dbid && !r->fenced && !r->creating) {
        h.dbid = r->dbid;
        snprintf(h.token, sizeof h.token, "%s", r->token);
    } else if (r && (r->creating || r->fenced)) {
        h.flags |= MC_BACKUP_FLAG_CREATING; /* no check-out to pass on yet (or any more) */
    }
    for (size_t i = 0; i < ent->nglobal_names && h.nnames < MC_BACKUP_NAMES_MAX; i++)
        snprintf(h.names[h.nnames++], sizeof h.names[0], "%.64s", ent->global_names[i]);
    size_t cap = ent->ntimers < MC_BACKUP_TIMERS_MAX ? ent->ntimers : MC_BACKUP_TIMERS_MAX;
    mc_timer_export *te = cap ? malloc(cap * sizeof *te) : NULL;
    mc_backup_timer *bt = cap ? malloc(cap * sizeof *bt) : NULL;
    if (cap && (!te || !bt)) {
        free(te);
        free(bt);
        b->st.encode_failed++;
        return MC_CALL_ERR_BUSY;
    }
    size_t nt = cap ? mc_engine_peek_timers(e, ent, te, cap) : 0;
    for (size_t i = 0; i < nt; i++) {
        bt[i].id = te[i].id;
        bt[i].repeat_us = (uint64_t)te[i].repeat;
        bt[i].user_arg = te[i].user_arg;
        uint64_t left = te[i].due > now ? (uint64_t)(te[i].due - now) : 0;
        if (stable)
            bt[i].due_in_us = te[i].repeat ? (uint64_t)te[i].due % (uint64_t)te[i].repeat
                                           : (uint64_t)te[i].due;
        else
            bt[i].due_in_us = left;
    }
    h.ntimers = nt;
    h.timers = bt;
    mc_ostream bp, cp;
    mc_ostream_init(&bp);
    mc_ostream_init(&cp);
    int rc = ent->gt->props_encode(defs, MC_PART_BASE, ent->props, false, &bp, why, sizeof why);
    if (rc == MC_CALL_OK)
        rc = ent->gt->props_encode(defs, MC_PART_CELL, ent->cell_data, false, &cp, why,
                                   sizeof why);
    if (rc == MC_CALL_OK && (!mc_ostream_ok(&bp) || !mc_ostream_ok(&cp)))
        rc = MC_CALL_ERR_ARGS, snprintf(why, sizeof why, "too large");
    mc_ostream pp; /* what a client resuming here would need (proxy_resume.c) */
    mc_ostream_init(&pp);
    if (h.flags & MC_BACKUP_FLAG_CLIENT)
        proxy_resume_export(e, ent->id, &pp);
    if (rc == MC_CALL_OK && !mc_ostream_ok(&pp))
        rc = MC_CALL_ERR_ARGS, snprintf(why, sizeof why, "too large");
    if (rc == MC_CALL_OK)
        mc_backup_encode(os, &h, bp.data, bp.size, cp.data, cp.size, pp.data, pp.size);
    mc_ostream_free(&pp);
    if (rc == MC_CALL_OK && !mc_ostream_ok(os))
        rc = MC_CALL_ERR_ARGS, snprintf(why, sizeof why, "too large");
    if (rc != MC_CALL_OK) {
        b->st.encode_failed++;
        if (b->st.encode_failed <= 10 || b->st.encode_failed % 1000 == 0)
            MC_WARNING("%s %d: no backup: %s", ent->td->name, (int)ent->id, why);
    }
    mc_ostream_free(&bp);
    mc_ostream_free(&cp);
    free(te);
    free(bt);
    return rc;
}

static void send_drop(base_backup *b, int32_t id, const mc_address *to)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_backup_drop_encode(&os, id);
    if (mc_engine_send(b->e, to, MC_MSG_BACKUP_DROP, os.data, os.size) == MC_CALL_OK)
        b->st.drops_sent++;
    mc_ostream_free(&os);
}

/* Visit one base: returns the bytes sent. */
static size_t visit(base_backup *b, int32_t id, mc_time_us now)
{
    mc_engine *e = b->e;
    mc_entity *ent = mc_engine_find(e, id);
    if (!ent || ent->destroying || ent->in_reap || (b->is_leaving && b->is_leaving(e, id)))
        return 0; /* (a base on its way to its new home is backed up there) */
    mc_address to;
    if (!mc_backup_ring_pick(mc_server_backup_ring(mc_engine_server(e)), id,
                             mc_engine_address(e), &to)) {
        b->st.no_backup_app++;
        return 0;
    }
    backup_sent *s = mc_map_get(&b->sent, (uint64_t)id, 0);
    mc_ostream os;
    mc_ostream_init(&os);
    if (encode(b, ent, 0, true, now, &os) != MC_CALL_OK) {
        mc_ostream_free(&os);
        return 0;
    }
    uint64_t hash = fnv(os.data, os.size);
    mc_ostream_free(&os);
    if (s && s->hash == hash && mc_address_equal(&s->to, &to)) {
        b->st.unchanged++;
        return 0;
    }
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s || !mc_map_put(&b->sent, (uint64_t)id, 0, s)) {
            free(s);
            return 0;
        }
    } else if (s->to.port && !mc_address_equal(&s->to, &to)) {
        send_drop(b, id, &s->to); /* its backup moved */
    }
    mc_ostream_init(&os);
    size_t bytes = 0;
    if (encode(b, ent, s->serial + 1, false, now, &os) == MC_CALL_OK &&
        mc_engine_send(e, &to, MC_MSG_BACKUP_BASE, os.data, os.size) == MC_CALL_OK) {
        s->serial++;
        s->hash = hash;
        s->to = to;
        bytes = os.size;
        b->st.sent++;
        b->st.bytes_sent += bytes;
    } else {
        memset(&s->to, 0, sizeof s->to); /* sent again next time */
    }
    mc_ostream_free(&os);
    return bytes;
}

static void start_sweep(base_backup *b, mc_time_us now)
{
    free(b->sweep);
    b->sweep = NULL;
    b->nsweep = b->sweep_pos = 0;
    b->sweep_started = now;
    size_t n = 0;
    mc_entity **all = mc_entity_table_snapshot(mc_engine_table(b->e), &n);
    if (!all)
        return;
    b->sweep = malloc(n * sizeof *b->sweep);
    if (b->sweep) {
        for (size_t i = 0; i < n; i++)
            b->sweep[i] = all[i]->id;
        b->nsweep = n;
    }
    free(all);
}

void backup_send_tick(base_backup *b, mc_time_us now)
{
    if (!b->period_ms)
        return; /* --backupPeriodMs=0: no backups */
    if (!b->last_tick)
        b->last_tick = now;
    double dt = (double)(now - b->last_tick) / 1e6;
    b->last_tick = now;
    b->budget += dt * (double)b->bytes_per_sec;
    if (b->budget > (double)b->bytes_per_sec)
        b->budget = (double)b->bytes_per_sec; /* at most a second's worth at once */
    mc_time_us period = b->period_ms * MC_US_PER_MS;
    if (b->sweep_pos >= b->nsweep && now - b->sweep_started >= period)
        start_sweep(b, now);
    /* the share of the sweep due by now */
    double share = (double)(now - b->sweep_started) / (double)period;
    size_t due = share >= 1 ? b->nsweep : (size_t)(share * (double)b->nsweep) + 1;
    if (due > b->nsweep)
        due = b->nsweep;
    while (b->sweep_pos < due && b->budget > 0)
        b->budget -= (double)visit(b, b->sweep[b->sweep_pos++], now);
}

int backup_encode_live(mc_engine *e, mc_entity *ent, mc_ostream *os)
{
    base_backup *b = backup_of(e);
    if (!b)
        return MC_CALL_ERR_UNAVAILABLE;
    backup_sent *s = mc_map_get(&b->sent, (uint64_t)ent->id, 0);
    return encode(b, ent, s ? s->serial + 1 : 1, false, mc_clock_now_us(), os);
}

void backup_send_now(mc_engine *e, int32_t id)
{
    base_backup *b = backup_of(e);
    if (!b || !b->period_ms || mc_engine_freeing(e))
        return;
    mc_time_us now = mc_clock_now_us();
    b->budget -= (double)visit(b, id, now); /* the sweep makes up for it */
}

void backup_on_refused(base_backup *b, const mc_origin *o, mc_istream *is)
{
    int32_t id;
    uint8_t reason;
    if (!mc_backup_refused_decode(is, &id, &reason)) {
        b->st.refused++;
        mc_engine_count_refused(b->e, MC_REFUSE_MALFORMED);
        return;
    }
    backup_sent *s = mc_map_get(&b->sent, (uint64_t)id, 0);
    if (!s || o->local || !mc_address_equal(&s->to, &o->addr))
        return; /* not ours, or about a backup that went elsewhere since */
    b->st.refusals++;
    if (b->st.refusals <= 10 || b->st.refusals % 1000 == 0) {
        char a[MC_ADDRESS_STRLEN];
        MC_INFO("the backup of %d was refused by %s (%s): sent again at its next visit",
                (int)id, mc_address_format(&o->addr, a, sizeof a),
                reason == MC_BACKUP_REFUSED_NOT_LIVE ? "it has not heard of us yet"
                : reason == MC_BACKUP_REFUSED_FULL   ? "it holds all it may"
                                                     : "the entity is live there");
    }
    /* Nothing is held there: no drop is owed, and the next visit sends it whole. */
    memset(&s->to, 0, sizeof s->to);
    s->hash = 0;
}

void backup_on_destroy(mc_engine *e, mc_entity *ent)
{
    base_backup *b = backup_of(e);
    backup_sent *s = b ? mc_map_get(&b->sent, (uint64_t)ent->id, 0) : NULL;
    if (!s)
        return;
    if (s->to.port && !mc_engine_freeing(e))
        send_drop(b, ent->id, &s->to);
    mc_map_remove(&b->sent, (uint64_t)ent->id, 0);
    free(s);
}

void backup_send_free(base_backup *b)
{
    size_t pos = 0;
    for (void *s; (s = mc_map_next(&b->sent, &pos));)
        free(s);
    mc_map_free(&b->sent);
    free(b->sweep);
    b->sweep = NULL;
    b->nsweep = b->sweep_pos = 0;
}
