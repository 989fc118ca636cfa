/* Restoring a dead baseapp's bases from the backups held here (backup.h). For each backup of
 * the dead owner that the ring of that death names this baseapp for, in id order: a base of
 * the same type and id, its base properties and cellData as backed up; its cell kept when
 * its cellapp lives (the cell is told BASE_RESTORED) or, its cellapp dead too, made again
 * from its cellData like any cell lost with its cellapp (base_restore.c) after onRestore; its timers with the ids, periods and phases they had; its global names
 * registered again; its check-out taken over (persistent bases); then onRestore, then the
 * calls that waited for it, in order. */
#include "backup.h"
#include "base_db.h"
#include "common/log.h"
#include "entity/backup_wire.h"
#include "proxy.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A restored base that had a client: its client resumes here with its ticket (the backup
 * carries the ticket's serial and the account: proxy_resume_import starts the grace time, and
 * onClientDeath comes when it runs out). A backup without them (the client had no ticket
 * yet, or resumption is off): the base waits as for a login session issued for it, and when
 * that expires unused (--sessionExpiryMs) with no client come, it hears onClientDeath like any
 * base whose client never came (db_state.c), so the game ends it and the account is not
 * locked out as online. The session's key is random and never given to anyone. */
void backup_wait_for_client(mc_engine *e, mc_entity *ent)
{
    base_db *db = base_db_of(e);
    uint64_t sid;
    uint8_t key[MC_SECURE_KEY_BYTES];
    if (!db || !db->sessions ||
        base_sessions_issue(db->sessions, ent->id, "", false, &sid, key) != 0) {
        MC_WARNING("%s %d (restored) had a client: it cannot wait for it (sessions full): "
                   "onClientDeath now", ent->td->name, (int)ent->id);
        mc_engine_run_hook(e, ent, MC_HOOK_CLIENT_DEATH, NULL);
    }
    sodium_memzero(key, sizeof key);
}

void backup_tell_cell(mc_engine *e, mc_entity *ent)
{
    mc_address cellapp;
    mc_mailbox_address(&ent->cell, &cellapp);
    mc_mailbox_ref base = mc_engine_mailbox(e, ent, MC_COMPONENT_BASE);
    mc_ostream os;
    mc_ostream_init(&os);
    mc_base_restored_encode(&os, ent->id, &base);
    int rc = mc_engine_send(e, &cellapp, MC_MSG_BASE_RESTORED, os.data, os.size);
    mc_ostream_free(&os);
    if (rc != MC_CALL_OK)
        MC_WARNING("%s %d (restored): cannot tell its cell where it is: %s", ent->td->name,
                   (int)ent->id, mc_call_status_name(rc));
}

bool backup_cellapp_alive(mc_engine *e, const mc_mailbox_ref *cell)
{
    mc_address a;
    char text[MC_ADDRESS_STRLEN];
    mc_mailbox_address(cell, &a);
    mc_address_format(&a, text, sizeof text);
    return mc_server_peer_state(mc_engine_server(e), text) ==
           MC__CONTROL__PROCESS_STATE__STATE_ALIVE;
}

void backup_restore_timers(mc_engine *e, mc_entity *ent, const mc_backup_head *h,
                           mc_time_us received_at)
{
    mc_time_us now = mc_clock_now_us();
    for (size_t i = 0; i < h->ntimers; i++) {
        const mc_backup_timer *t = &h->timers[i];
        mc_timer_export x = {.id = t->id, .repeat = (mc_time_us)t->repeat_us,
                             .user_arg = t->user_arg};
        x.due = received_at + (mc_time_us)t->due_in_us;
        if (x.due < now && x.repeat > 0)
            x.due += ((now - x.due) / x.repeat + 1) * x.repeat; /* its phase kept */
        else if (x.due < now)
            x.due = now;
        int rc = mc_engine_import_timer(e, ent, &x);
        if (rc != MC_CALL_OK)
            MC_WARNING("%s %d (restored): timer %u not restored: %s", ent->td->name,
                       (int)ent->id, (unsigned)t->id, mc_call_status_name(rc));
    }
}

/* Restore one backup: true when the base lives here now. */
static bool restore_one(base_backup *b, backup_held *held, const char *owner_name,
                        bool *released_later)
{
    mc_engine *e = b->e;
    const mc_entity_defs *defs = mc_engine_defs(e);
    mc_istream is;
    mc_istream_init(&is, held->data, held->len);
    mc_backup_head h;
    char why[200];
    if (!mc_backup_decode(defs, &is, &h, why, sizeof why)) {
        MC_WARNING("backup of %d from %s does not decode: %s", (int)held->id, owner_name, why);
        return false;
    }
    if (h.flags & MC_BACKUP_FLAG_CREATING) {
        /* its first write may have landed: a copy here without its database id could live
         * beside the one loaded from Redis; its check-out (if any) is released after the
         * grace, so it can be loaded */
        MC_WARNING("backup of %d from %s not restored: it was being written for the first "
                   "time (or had lost its check-out)", (int)h.entity_id, owner_name);
        mc_backup_head_free(&h);
        *released_later = true; /* counted in lostBases when its check-out is released */
        return false;
    }
    if (mc_engine_find(e, h.entity_id)) {
        MC_WARNING("backup of %d from %s not restored: an entity with that id lives here",
                   (int)h.entity_id, owner_name);
        mc_backup_head_free(&h);
        return false;
    }
    mc_entity *ent = mc_engine_new_entity(e, h.type, h.entity_id, why, sizeof why);
    if (!ent) {
        MC_WARNING("backup of %d from %s not restored: %s", (int)h.entity_id, owner_name, why);
        mc_backup_head_free(&h);
        return false;
    }
    mc_istream bp, cp;
    mc_istream_init(&bp, h.base_props, h.base_len);
    mc_istream_init(&cp, h.cell_props, h.cell_len);
    if (ent->gt->props_decode(defs, MC_PART_BASE, ent->props, false, &bp, why, sizeof why) !=
            MC_CALL_OK ||
        ent->gt->props_decode(defs, MC_PART_CELL, ent->cell_data, false, &cp, why,
                              sizeof why) != MC_CALL_OK) {
        MC_WARNING("backup of %s %d from %s not restored: its properties do not decode: %s",
                   ent->td->name, (int)h.entity_id, owner_name, why);
        mc_engine_discard_entity(e, ent);
        mc_backup_head_free(&h);
        return false;
    }
    ent->cell_position = h.position;
    ent->cell_direction = h.direction;
    ent->cell_space = h.space;
    bool lost_cell = false;
    if (h.flags & MC_BACKUP_FLAG_CELL) {
        ent->cell = h.cell;
        if (backup_cellapp_alive(e, &h.cell)) {
            ent->cell_state = MC_CELL_LIVE;
            backup_tell_cell(e, ent);
        } else {
            ent->cell_state = MC_CELL_LIVE; /* lost just below, with onLoseCell */
            lost_cell = true;
        }
    }
    backup_restore_timers(e, ent, &h, held->received_at);
    for (size_t i = 0; i < h.nnames; i++)
        if (base_globals_register_restored(e, ent, h.names[i]) != MC_CALL_OK)
            MC_WARNING("%s %d (restored): cannot register '%s' again", ent->td->name,
                       (int)ent->id, h.names[i]);
    if (h.dbid) {
        int rc = db_take_over(e, ent, h.dbid, h.token);
        if (rc != MC_CALL_OK) {
            /* no database here: the base must not live on without its check-out */
            MC_WARNING("%s %d (database id %llu) not restored: cannot take its check-out "
                       "over: %s", ent->td->name, (int)ent->id, (unsigned long long)h.dbid,
                       mc_call_status_name(rc));
            base_drop_globals(e, ent);
            mc_engine_discard_entity(e, ent);
            mc_backup_head_free(&h);
            return false;
        }
    }
    MC_INFO("%s %d restored from its backup (its baseapp %s died)%s", ent->td->name,
            (int)ent->id, owner_name, h.dbid ? "; taking its check-out over" : "");
    int32_t id = ent->id;
    bool had_client = (h.flags & MC_BACKUP_FLAG_CLIENT) != 0;
    /* what its client needs to resume here (proxy_resume.c): a ticket serial, an account */
    uint8_t proxy[128];
    size_t proxy_len = h.proxy && h.proxy_len <= sizeof proxy ? h.proxy_len : 0;
    if (proxy_len)
        memcpy(proxy, h.proxy, proxy_len);
    mc_backup_head_free(&h);
    mc_engine_run_hook(e, ent, MC_HOOK_RESTORE, NULL);
    ent = mc_engine_find(e, id);
    if (ent && had_client && !ent->in_reap && !ent->destroying &&
        !proxy_resume_import(e, id, proxy, proxy_len))
        backup_wait_for_client(e, ent);
    ent = mc_engine_find(e, id);
    if (ent && lost_cell && !ent->in_reap)
        base_restore_lost(e, &id, 1); /* its cellapp died too: made again from cellData */
    return true;
}

void backup_restore_from(base_backup *b, const mc_address *dead, const char *owner_name,
                         uint64_t incarnation)
{
    (void)incarnation;
    mc_engine *e = b->e;
    size_t n = 0;
    int32_t *ids = backup_held_ids(b, dead, &n);
    if (!n) {
        free(ids);
        return;
    }
    const mc_backup_ring *ring = mc_server_backup_ring(mc_engine_server(e));
    size_t restored = 0, lost = 0, not_ours = 0;
    for (size_t i = 0; i < n; i++) {
        backup_held *held = mc_map_get(&b->held, (uint64_t)ids[i], 0);
        if (!held)
            continue;
        mc_address home;
        if (!mc_engine_new_home(e, dead, ids[i], &home) &&
            !mc_backup_ring_pick(ring, ids[i], dead, &home)) {
            memset(&home, 0, sizeof home);
        }
        if (!mc_engine_is_self(e, &home)) {
            /* an older backup: the ring names another baseapp, which restores it */
            not_ours++;
            backup_release_calls(b, ids[i], false);
            backup_forget(b, held);
            continue;
        }
        /* taken out of the held map first: calls for it are no longer held from now on */
        mc_map_remove(&b->held, (uint64_t)held->id, 0);
        b->nheld--;
        b->held_bytes -= held->len;
        bool released_later = false;
        bool ok = restore_one(b, held, owner_name, &released_later);
        if (ok)
            restored++;
        else if (!released_later)
            lost++;
        backup_release_calls(b, ids[i], ok);
        free(held);
    }
    free(ids);
    b->st.restored += restored;
    b->st.lost_bases += lost;
    b->st.not_ours += not_ours;
    if (lost)
        b->st.restore_failed += lost;
    MC_WARNING("%s died: restored %zu of its bases from their backups here; %zu could not be "
               "restored (backups/lostBases); %zu are another baseapp's to restore",
               owner_name, restored, lost, not_ours);
}
