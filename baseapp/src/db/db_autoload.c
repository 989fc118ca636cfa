/* Auto-load: --autoLoadDelayMs after a baseapp is registered (with Redis ready and entity
 * ids in hand), it asks the manager for the live baseapps, reads the auto-load set and has
 * every entity in it loaded on one of them, chosen by rendezvous hashing of the entry and the
 * baseapps' names (every baseapp chooses the same one; the first request loads the entity,
 * the others find it live). When the chosen baseapp cannot be asked or does not answer, the
 * entity is loaded here. */
#include "db.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    base_db *db;
    const mc_entity_type_def *td;
    uint64_t dbid;
    bool remote;
} autoload_req;

static void autoloaded(mc_engine *e, void *ctx, int status, const mc_mailbox_ref *base,
                       uint64_t dbid, bool was_live, const char *reason);

static void load_here(autoload_req *a)
{
    a->remote = false;
    int rc = db_load(a->db, a->td, a->dbid, NULL, autoloaded, a);
    if (rc != MC_CALL_OK) {
        MC_WARNING("persistence: cannot auto-load %s %llu: %s", a->td->name,
                   (unsigned long long)a->dbid, mc_call_status_name(rc));
        free(a);
    }
}

static void autoloaded(mc_engine *e, void *ctx, int status, const mc_mailbox_ref *base,
                       uint64_t dbid, bool was_live, const char *reason)
{
    autoload_req *a = ctx;
    base_db *db = base_db_of(e);
    if (status == MC_CALL_OK) {
        if (!was_live && db)
            db->st.autoloaded++;
        mc_address at;
        mc_mailbox_address(base, &at);
        mc_entity *ent = mc_engine_is_self(e, &at) ? mc_engine_find(e, base->id) : NULL;
        db_rec *rec = db && ent ? db_rec_of(db, ent->id) : NULL;
        if (rec)
            rec->autoload = rec->autoload_stored = true;
    } else if (a->remote && db && !mc_engine_freeing(e) &&
               (status == MC_CALL_ERR_PROCESS_DEAD || status == MC_CALL_ERR_TIMEOUT ||
                status == MC_CALL_ERR_UNAVAILABLE)) {
        MC_INFO("persistence: auto-load of %s %llu elsewhere failed (%s): loading it here",
                a->td->name, (unsigned long long)dbid, reason);
        load_here(a);
        return;
    } else {
        MC_WARNING("persistence: auto-load of %s %llu failed: %s", a->td->name,
                   (unsigned long long)dbid, reason);
    }
    free(a);
}

static uint64_t fnv64(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ULL;
    return h;
}

/* The live baseapp an entry goes to (index in autoload_name), or -1 for this one. */
static int choose(base_db *db, const char *ref)
{
    int best = -1;
    uint64_t best_h = 0;
    for (size_t i = 0; i < db->autoload_n; i++) {
        uint64_t h = fnv64(fnv64(14695981039346656037ULL, ref), db->autoload_name[i]);
        if (best < 0 || h > best_h) {
            best = (int)i;
            best_h = h;
        }
    }
    if (best >= 0 && strcmp(db->autoload_name[best], db->owner) == 0)
        return -1;
    return best;
}

static void autoload_one(base_db *db, const char *ref)
{
    char type[128];
    const char *colon = strrchr(ref, ':');
    if (!colon || (size_t)(colon - ref) >= sizeof type) {
        MC_WARNING("persistence: auto-load entry '%s' is malformed", ref);
        return;
    }
    memcpy(type, ref, (size_t)(colon - ref));
    type[colon - ref] = '\0';
    char *end;
    unsigned long long dbid = strtoull(colon + 1, &end, 10);
    const mc_entity_type_def *td = mc_defs_type_by_name(mc_engine_defs(db->e), type);
    if (!td || *end || dbid == 0) {
        MC_WARNING("persistence: auto-load entry '%s' names no entity of these defs", ref);
        return;
    }
    autoload_req *a = calloc(1, sizeof *a);
    if (!a)
        return;
    a->db = db;
    a->td = td;
    a->dbid = dbid;
    int target = choose(db, ref);
    if (target >= 0) {
        a->remote = true;
        if (db_load_on(db, db->autoload_addr[target], td, dbid, NULL, autoloaded, a) ==
            MC_CALL_OK)
            return;
    }
    load_here(a);
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
    for (size_t i = 0; i < r->nrefs; i++)
        autoload_one(db, r->refs[i]);
    if (r->cursor == 0) {
        db->autoload_done = true;
        MC_INFO("persistence: auto-load entries read (spread over %zu baseapps)",
                db->autoload_n ? db->autoload_n : 1);
        return;
    }
    int st;
    mc_persist_store *store = db_store(db, &st);
    if (store)
        mc_persist_scan_autoload(store, r->cursor, on_autoload_page, db);
}

static void start_scan(base_db *db)
{
    int st;
    mc_persist_store *store = db_store(db, &st);
    if (store)
        mc_persist_scan_autoload(store, 0, on_autoload_page, db);
    else
        db->autoload_started = false;
}

static void on_baseapps(mc_server *s, void *ctx, const Mc__Control__QueryReply *reply)
{
    (void)s;
    base_db *db = mc_engine_wait_ctx(ctx);
    if (!mc_engine_wait_end(ctx))
        return;
    db->autoload_n = 0;
    for (size_t i = 0; reply && reply->status == MC__CONTROL__QUERY_STATUS__QUERY_OK &&
                       i < reply->n_processes && db->autoload_n < 64;
         i++) {
        const Mc__Control__ProcessInfo *p = reply->processes[i];
        if (!p->name || !p->internal_addr ||
            p->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
            continue;
        snprintf(db->autoload_name[db->autoload_n], sizeof db->autoload_name[0], "%s", p->name);
        snprintf(db->autoload_addr[db->autoload_n], sizeof db->autoload_addr[0], "%s",
                 p->internal_addr);
        db->autoload_n++;
    }
    start_scan(db);
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
    mc_time_us now = mc_clock_now_us();
    if (!db->autoload_ready_at)
        db->autoload_ready_at = now;
    if (now - db->autoload_ready_at < db->autoload_delay_ms * MC_US_PER_MS)
        return;
    db->autoload_started = true;
    /* The baseapps alive now share the entries; without an answer, this one loads them. */
    mc_engine_wait *w = mc_engine_wait_new(db->e, NULL, db);
    if (!w || mc_server_query(mc_engine_server(db->e), MC__CONTROL__QUERY_KIND__QUERY_BY_ROLE,
                              MC_ROLE_BASEAPP, NULL, on_baseapps, w) != 0) {
        if (w)
            mc_engine_wait_drop(w);
        db->autoload_n = 0;
        start_scan(db);
    }
}
