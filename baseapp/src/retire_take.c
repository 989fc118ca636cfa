/* Taking over a base a retiring baseapp offloads (OFFLOAD_BASE; retire.h): a live base here
 * with the same id, as a restore makes one from a backup (backup_restore.c) but with its
 * owner alive and frozen meanwhile: properties and cellData, its cell kept (told
 * BASE_RESTORED), timers by the time they had left, global names registered again (the
 * owner deregistered them), the client's ticket serial and account (it resumes here), and
 * for a persistent base its check-out taken over with its token (mc_persist_take_over)
 * before the answer: never two live copies. No game hook runs: for the game the base never
 * stopped. Taken only from a live baseapp, never while retiring ourselves. */
#include "backup.h"
#include "base_db.h"
#include "common/log.h"
#include "common/map.h"
#include "entity/backup_wire.h"
#include "proxy.h"
#include "retire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    mc_origin origin;
} pending_answer;

static void answer(mc_engine *e, const mc_origin *o, int status, const char *why)
{
    retire_count_received(e, status == MC_CALL_OK);
    if (status != MC_CALL_OK) {
        char a[MC_ADDRESS_STRLEN];
        MC_WARNING("OFFLOAD_BASE from %s refused: %s",
                   mc_address_format(&o->addr, a, sizeof a), why);
    }
    mc_engine_reply_status(e, o, status, status == MC_CALL_OK ? "" : why);
}

static void on_taken(mc_engine *e, int32_t id, bool ok, void *ctx)
{
    pending_answer *p = ctx;
    if (!mc_engine_freeing(e)) {
        if (ok)
            answer(e, &p->origin, MC_CALL_OK, "");
        else
            answer(e, &p->origin, MC_CALL_ERR_STATE,
                   "its check-out could not be taken over (the copy here went)");
        (void)id;
    }
    free(p);
}

void retire_on_offload(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    char owner[64] = "";
    char why[200];
    if (o->local || !o->is_request ||
        !mc_server_peer_is_live(mc_engine_server(e), &o->addr, MC_ROLE_BASEAPP)) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        answer(e, o, MC_CALL_ERR_UNAVAILABLE, "OFFLOAD_BASE is taken from live baseapps only");
        return;
    }
    if (!mc_read_string_into(is, owner, sizeof owner) || !owner[0]) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        answer(e, o, MC_CALL_ERR_ARGS, "malformed OFFLOAD_BASE (its owner's name)");
        return;
    }
    if (retire_is_retiring(e)) {
        answer(e, o, MC_CALL_ERR_UNAVAILABLE, "this baseapp is retiring too");
        return;
    }
    const mc_entity_defs *defs = mc_engine_defs(e);
    mc_backup_head h;
    if (!mc_backup_decode(defs, is, &h, why, sizeof why)) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        answer(e, o, MC_CALL_ERR_ARGS, why);
        return;
    }
    if (h.flags & MC_BACKUP_FLAG_CREATING) {
        mc_backup_head_free(&h);
        answer(e, o, MC_CALL_ERR_STATE, "its first write is in flight");
        return;
    }
    mc_entity *here = mc_engine_find(e, h.entity_id);
    if (here) {
        int32_t id = h.entity_id;
        mc_backup_head_free(&h);
        if (!retire_was_taken_from(e, id, &o->addr)) {
            /* ids are the cluster's: it is that base, restored here from the backup of a
             * baseapp the sender had sent it to (which died); the sender drops its copy,
             * so it never lives twice */
            MC_WARNING("entity %d (OFFLOAD_BASE from %s): it lives here already", (int)id,
                       owner);
            answer(e, o, MC_CALL_OK, "");
            return;
        }
        /* sent again (our answer was late): it is ours once its check-out is */
        db_rec *rec = db_rec_of(base_db_of(e), id);
        if (here->in_reap || here->destroying || (rec && rec->fenced))
            answer(e, o, MC_CALL_ERR_STATE, "its takeover failed here");
        else if (rec && rec->creating)
            answer(e, o, MC_CALL_ERR_BUSY, "its check-out is being taken over");
        else
            answer(e, o, MC_CALL_OK, "");
        return;
    }
    /* a backup of it held here from a dead baseapp (one the sender had sent it to) is
     * newer than this state: it is restored from that backup here (then taken as above) */
    base_backup *bk = backup_of(e);
    backup_held *newer = bk ? mc_map_get(&bk->held, (uint64_t)h.entity_id, 0) : NULL;
    if (newer && !mc_address_equal(&newer->owner, &o->addr) &&
        !mc_server_peer_is_live(mc_engine_server(e), &newer->owner, MC_ROLE_BASEAPP)) {
        mc_backup_head_free(&h);
        answer(e, o, MC_CALL_ERR_STATE, "its backup from its dead new home is restored here");
        return;
    }
    mc_entity *ent = mc_engine_new_entity(e, h.type, h.entity_id, why, sizeof why);
    if (!ent) {
        mc_backup_head_free(&h);
        answer(e, o, MC_CALL_ERR_BUSY, why);
        return;
    }
    mc_istream bp, cp;
    mc_istream_init(&bp, h.base_props, h.base_len);
    mc_istream_init(&cp, h.cell_props, h.cell_len);
    if (ent->gt->props_decode(defs, MC_PART_BASE, ent->props, false, &bp, why, sizeof why) !=
            MC_CALL_OK ||
        ent->gt->props_decode(defs, MC_PART_CELL, ent->cell_data, false, &cp, why,
                              sizeof why) != MC_CALL_OK) {
        mc_engine_discard_entity(e, ent);
        mc_backup_head_free(&h);
        answer(e, o, MC_CALL_ERR_ARGS, why);
        return;
    }
    retire_note_taken(e, h.entity_id, &o->addr);
    /* a backup of it held here (we are its backup baseapp) is void now */
    base_backup *b = backup_of(e);
    backup_held *held = b ? mc_map_get(&b->held, (uint64_t)h.entity_id, 0) : NULL;
    if (held)
        backup_forget(b, held);
    ent->cell_position = h.position;
    ent->cell_direction = h.direction;
    ent->cell_space = h.space;
    bool lost_cell = false;
    if (h.flags & MC_BACKUP_FLAG_CELL) {
        ent->cell = h.cell;
        ent->cell_state = MC_CELL_LIVE;
        if (backup_cellapp_alive(e, &h.cell))
            backup_tell_cell(e, ent);
        else
            lost_cell = true; /* its cellapp died meanwhile: made again below */
    }
    backup_restore_timers(e, ent, &h, mc_clock_now_us());
    for (size_t i = 0; i < h.nnames; i++)
        if (base_globals_register_restored(e, ent, h.names[i]) != MC_CALL_OK)
            MC_WARNING("%s %d (offloaded here): cannot register '%s' again", ent->td->name,
                       (int)ent->id, h.names[i]);
    int32_t id = ent->id;
    if ((h.flags & MC_BACKUP_FLAG_CLIENT) &&
        !proxy_resume_import(e, id, h.proxy, h.proxy_len))
        backup_wait_for_client(e, ent);
    MC_INFO("%s %d offloaded here by %s%s", ent->td->name, (int)id, owner,
            h.dbid ? "; taking its check-out over" : "");
    if (h.dbid) {
        pending_answer *p = malloc(sizeof *p);
        if (p)
            p->origin = *o;
        int rc = p ? db_take_over_then(e, ent, h.dbid, h.token, on_taken, p)
                   : MC_CALL_ERR_BUSY;
        if (rc != MC_CALL_OK) {
            free(p);
            /* no database here: the base must not live on without its check-out (it
             * stays with its owner) */
            mc_engine_discard_entity(e, ent);
            mc_backup_head_free(&h);
            answer(e, o, rc, "cannot take its check-out over");
            return;
        }
    } else {
        answer(e, o, MC_CALL_OK, "");
    }
    mc_backup_head_free(&h);
    ent = mc_engine_find(e, id);
    if (ent && lost_cell && !ent->in_reap)
        base_restore_lost(e, &id, 1);
}
