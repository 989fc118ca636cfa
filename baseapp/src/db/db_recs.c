/* The persistence's records of bases (one per base it writes or loads, by entity id and by
 * database id, and the ids to archive), the store once this baseapp can use it, and the
 * per-entity watcher entities/<id>/databaseID. */
#include "db.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_rec(db_rec *r);

mc_persist_store *db_store(base_db *db, int *status)
{
    if (!db || !db->store) {
        *status = MC_CALL_ERR_UNAVAILABLE;
        return NULL;
    }
    if (!db->owner_set) {
        mc_server *s = mc_engine_server(db->e);
        const char *name = mc_server_name(s);
        if (strcmp(name, mc_role_name(mc_server_role(s))) == 0) {
            *status = MC_CALL_ERR_UNAVAILABLE; /* not registered yet: no owner name */
            return NULL;
        }
        snprintf(db->owner, sizeof db->owner, "%s", name);
        mc_persist_set_owner(db->store, db->owner, db->incarnation);
        db->owner_set = true;
        MC_INFO("persistence: check-outs are owned by %s (incarnation %016llx)", db->owner,
                (unsigned long long)db->incarnation);
    }
    *status = MC_CALL_OK;
    return db->store;
}

int db_call_status(mc_persist_status st)
{
    switch (st) {
    case MC_PERSIST_OK: return MC_CALL_OK;
    case MC_PERSIST_NOT_FOUND: return MC_CALL_ERR_NOT_FOUND;
    case MC_PERSIST_FENCED: return MC_CALL_ERR_STATE;
    case MC_PERSIST_IDENT_TAKEN: return MC_CALL_ERR_TAKEN;
    case MC_PERSIST_EXISTS: return MC_CALL_ERR_TAKEN;
    case MC_PERSIST_SCHEMA:
    case MC_PERSIST_BAD_DATA:
    case MC_PERSIST_BAD_REQUEST: return MC_CALL_ERR_ARGS;
    case MC_PERSIST_QUEUE_FULL: return MC_CALL_ERR_BUSY;
    default: return MC_CALL_ERR_UNAVAILABLE;
    }
}

db_rec *db_rec_of(base_db *db, int32_t id) { return db ? mc_map_get(&db->by_id, (uint32_t)id, 0) : NULL; }

db_rec *db_rec_get(base_db *db, const mc_entity *ent)
{
    db_rec *r = db_rec_of(db, ent->id);
    if (r)
        return r;
    r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->id = ent->id;
    r->type = ent->type;
    r->archive_slot = SIZE_MAX;
    if (!mc_map_put(&db->by_id, (uint32_t)ent->id, 0, r)) {
        free(r);
        return NULL;
    }
    return r;
}

void db_rec_set_dbid(base_db *db, db_rec *r, uint64_t dbid, const char *token)
{
    r->dbid = dbid;
    snprintf(r->token, sizeof r->token, "%s", token ? token : "");
    if (db->hooks.has_dbid)
        db->hooks.has_dbid(db->e, r->id); /* its backup holds its check-out from now on */
    if (!mc_map_put(&db->by_dbid, db_key(r->type, dbid), 0, r))
        MC_ERROR("out of memory indexing database id %llu", (unsigned long long)dbid);
    if (r->archive_slot != SIZE_MAX)
        return;
    if (db->narchive == db->archive_cap) {
        size_t cap = db->archive_cap ? db->archive_cap * 2 : 64;
        int32_t *a = realloc(db->archive, cap * sizeof *a);
        if (!a) {
            MC_ERROR("out of memory: entity %d is not archived", (int)r->id);
            return;
        }
        db->archive = a;
        db->archive_cap = cap;
    }
    r->archive_slot = db->narchive;
    db->archive[db->narchive++] = r->id;
}

static void free_rec(db_rec *r)
{
    /* Waiters are handled by the create's answer, which always comes before a record goes
     * (the store answers every request, CLOSED when freed); none is left here. */
    while (r->waiting) {
        db_waiter *next = r->waiting->next;
        free(r->waiting);
        r->waiting = next;
    }
    free(r);
}

void db_recs_free(base_db *db)
{
    size_t pos = 0;
    for (db_rec *rec; (rec = mc_map_next(&db->by_id, &pos));)
        free_rec(rec);
    mc_map_free(&db->by_id);
    mc_map_free(&db->by_dbid);
    free(db->archive);
    db->archive = NULL;
    db->narchive = db->archive_cap = 0;
}

void db_rec_drop(base_db *db, db_rec *r)
{
    if (r->archive_slot != SIZE_MAX && r->archive_slot < db->narchive) {
        int32_t last = db->archive[--db->narchive];
        if (r->archive_slot < db->narchive) {
            db->archive[r->archive_slot] = last;
            db_rec *moved = db_rec_of(db, last);
            if (moved)
                moved->archive_slot = r->archive_slot;
        }
    }
    if (r->dbid && mc_map_get(&db->by_dbid, db_key(r->type, r->dbid), 0) == r)
        mc_map_remove(&db->by_dbid, db_key(r->type, r->dbid), 0);
    mc_map_remove(&db->by_id, (uint32_t)r->id, 0);
    free_rec(r);
}

mc_entity *db_find_live(base_db *db, uint16_t type, uint64_t dbid)
{
    db_rec *r = mc_map_get(&db->by_dbid, db_key(type, dbid), 0);
    if (!r || r->gone || r->fenced)
        return NULL;
    mc_entity *ent = mc_engine_find(db->e, r->id);
    return ent && !ent->in_reap ? ent : NULL;
}

/* ---- per-entity watchers ---------------------------------------------------------------- */

static void get_dbid(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    db_rec *r = ent ? db_rec_of(base_db_of(e), ent->id) : NULL;
    out->as.u = r ? r->dbid : 0;
}

void db_add_entity_watchers(mc_engine *e, mc_entity *ent, const char *dir, void *ref)
{
    (void)ent;
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    char path[MC_WATCH_MAX_PATH];
    snprintf(path, sizeof path, "%s/databaseID", dir);
    mc_watch_add(w, path, MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_dbid, NULL, ref);
}
