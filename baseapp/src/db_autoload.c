/* Auto-load: once registered, with Redis ready and entity ids in hand, a baseapp reads the
 * auto-load set and loads every entity in it (the first baseapp to check one out loads it;
 * the others find it live). */
#include "base_db.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- auto-load ------------------------------------------------------------------------------ */

static void on_autoloaded(mc_engine *e, void *ctx, int status, const mc_mailbox_ref *base,
                          uint64_t dbid, bool was_live, const char *reason)
{
    (void)ctx;
    (void)base;
    base_db *db = base_db_of(e);
    if (status == MC_CALL_OK && !was_live && db) {
        db->st.autoloaded++;
        mc_entity *ent = mc_engine_find(e, base->id);
        db_rec *rec = ent ? db_rec_of(db, ent->id) : NULL;
        if (rec)
            rec->autoload = rec->autoload_stored = true;
    } else if (status != MC_CALL_OK) {
        MC_WARNING("persistence: auto-load of database id %llu failed: %s",
                   (unsigned long long)dbid, reason);
    }
}

static void on_autoload_page(void *ctx, const mc_persist_result *r)
{
    base_db *db = ctx;
    if (r->status == MC_PERSIST_CLOSED)
        return;
    if (r->status != MC_PERSIST_OK) {
        MC_WARNING("persistence: cannot read the auto-load set: %s (%s); trying again",
                   mc_persist_status_name(r->status), r->reason ? r->reason : "");
        db->autoload_started = false;
        return;
    }
    for (size_t i = 0; i < r->nrefs; i++) {
        char type[128];
        const char *colon = strrchr(r->refs[i], ':');
        if (!colon || (size_t)(colon - r->refs[i]) >= sizeof type)
            continue;
        memcpy(type, r->refs[i], (size_t)(colon - r->refs[i]));
        type[colon - r->refs[i]] = '\0';
        char *end;
        unsigned long long dbid = strtoull(colon + 1, &end, 10);
        const mc_entity_type_def *td = mc_defs_type_by_name(mc_engine_defs(db->e), type);
        if (!td || *end || dbid == 0) {
            MC_WARNING("persistence: auto-load entry '%s' names no entity of these defs",
                       r->refs[i]);
            continue;
        }
        int rc = db_load(db, td, dbid, NULL, on_autoloaded, NULL);
        if (rc != MC_CALL_OK)
            MC_WARNING("persistence: cannot auto-load %s: %s", r->refs[i],
                       mc_call_status_name(rc));
    }
    if (r->cursor == 0) {
        db->autoload_done = true;
        MC_INFO("persistence: auto-load entries read");
        return;
    }
    int st;
    mc_persist_store *store = db_store(db, &st);
    if (store)
        mc_persist_scan_autoload(store, r->cursor, on_autoload_page, db);
}

void db_autoload_tick(base_db *db)
{
    int st;
    if (db->autoload_started || db->autoload_done)
        return;
    mc_persist_store *store = db_store(db, &st);
    /* Registered (owner known), Redis ready, and entity ids in hand to create the bases. */
    if (!store || !mc_persist_ready(store) ||
        mc_server_entity_ids_left(mc_engine_server(db->e)) == 0)
        return;
    db->autoload_started = true;
    mc_persist_scan_autoload(store, 0, on_autoload_page, db);
}
