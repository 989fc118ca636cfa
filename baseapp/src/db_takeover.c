/* A base restored from its backup takes its check-out over from its dead owner (issue 20;
 * docs/PERSISTENCE.md "Check-outs pass to a restorer"): one atomic script in Redis that
 * requires the owner record to still name the dead owner and the token the backup carried,
 * then names this baseapp, a new token and the restored base's mailbox. Meanwhile the base's
 * writes wait (as they wait for a create). Refused (released meanwhile, or loaded elsewhere),
 * the copy here must not live on: it goes without writing (db_evict); its entity can be
 * loaded from Redis again. */
#include "backup.h"
#include "base_db.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    base_db *db;
    int32_t id;
    uint16_t type;
    uint64_t dbid;
    db_taken_fn done; /* an offload's (retire_take.c): told the outcome, exactly once */
    void *done_ctx;
} takeover;

static void tell(takeover *t, bool ok)
{
    if (t->done)
        t->done(t->db->e, t->id, ok, t->done_ctx);
}

static void on_taken(void *ctx, const mc_persist_result *res)
{
    takeover *t = ctx;
    base_db *db = t->db;
    base_backup *b = db->backup;
    db_rec *rec = db_rec_of(db, t->id);
    const mc_entity_type_def *td = mc_defs_type(mc_engine_defs(db->e), t->type);
    if (!rec) {
        /* freed meanwhile (the engine is going): give back what we may have won */
        if (res->status == MC_PERSIST_OK && res->token && td)
            db_give_back(db, td, t->dbid, res->token, "a takeover of a base now gone");
        tell(t, false);
        free(t);
        return;
    }
    db_waiter *waiting = rec->waiting;
    rec->waiting = NULL;
    rec->creating = false;
    bool gone = rec->gone;
    if (res->status == MC_PERSIST_OK) {
        if (b)
            b->st.takeovers++;
        db_rec_set_dbid(db, rec, t->dbid, res->token);
        MC_INFO("%s %d (database id %llu): check-out taken over from its dead baseapp",
                td ? td->name : "?", (int)t->id, (unsigned long long)t->dbid);
        if (gone)
            db_end_gone(db, rec); /* destroyed meanwhile: written and released now */
        db_send_waiting(db, t->id, waiting, gone, false);
        tell(t, !gone);
    } else {
        if (b)
            b->st.takeovers_failed++;
        MC_WARNING("%s %d (database id %llu): its check-out could not be taken over (%s: "
                   "%s): the restored copy goes without writing",
                   td ? td->name : "?", (int)t->id, (unsigned long long)t->dbid,
                   mc_persist_status_name(res->status), res->reason);
        rec->dbid = t->dbid; /* for the logs; never written: fenced */
        if (gone)
            db_end_gone(db, rec);
        else
            db_evict(db, rec);
        db_send_waiting(db, t->id, waiting, true, res->status == MC_PERSIST_CLOSED);
        tell(t, false);
    }
    free(t);
}

int db_take_over(mc_engine *e, mc_entity *ent, uint64_t dbid, const char *old_token)
{
    return db_take_over_then(e, ent, dbid, old_token, NULL, NULL);
}

int db_take_over_then(mc_engine *e, mc_entity *ent, uint64_t dbid, const char *old_token,
                      db_taken_fn done, void *ctx)
{
    base_db *db = base_db_of(e);
    int status;
    mc_persist_store *store = db_store(db, &status);
    if (!store)
        return status;
    db_rec *rec = db_rec_get(db, ent);
    takeover *t = calloc(1, sizeof *t);
    if (!rec || !t) {
        free(t);
        return MC_CALL_ERR_BUSY;
    }
    t->db = db;
    t->id = ent->id;
    t->type = ent->type;
    t->dbid = dbid;
    t->done = done;
    t->done_ctx = ctx;
    rec->creating = true; /* writes wait for the takeover's answer */
    mc_mailbox_ref mb = mc_engine_mailbox(e, ent, MC_COMPONENT_BASE);
    uint8_t bytes[MC_MAILBOX_WIRE_SIZE];
    mc_server_mailbox_pack(&mb, bytes);
    mc_persist_take_over(store, ent->td, dbid, old_token, bytes, sizeof bytes, on_taken, t);
    return MC_CALL_OK;
}
