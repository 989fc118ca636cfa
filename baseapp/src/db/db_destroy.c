/* What destroying a base does in the database: a last write then the release of its
 * check-out, a delete (destroy(deleteFromDB)), or only the release. */
#include "db.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- destroy ----------------------------------------------------------------------------- */

typedef struct {
    base_db *db;
    const mc_entity_type_def *td;
    int32_t id;
    uint64_t dbid;
    char token[96];
    bool release;
} final_op;

static void on_final(void *ctx, const mc_persist_result *r)
{
    final_op *f = ctx;
    int st;
    mc_persist_store *store = db_store(f->db, &st);
    if (r->status != MC_PERSIST_OK && r->status != MC_PERSIST_CLOSED) {
        db_log_failure(f->db, f->release ? "the last write" : "deleting", f->td->id, f->id, r);
        if (r->status == MC_PERSIST_FENCED)
            f->db->st.fenced++;
    }
    if (r->status == MC_PERSIST_OK && !f->release)
        f->db->st.deleted++;
    if (r->status == MC_PERSIST_OK && f->release)
        f->db->st.writes_ok++;
    if (f->release && store && r->status != MC_PERSIST_CLOSED &&
        r->status != MC_PERSIST_FENCED) {
        f->release = false;
        db_release(f->db, f->td, f->dbid, f->token);
    }
    free(f);
}

static final_op *final_new(base_db *db, db_rec *rec)
{
    final_op *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->db = db;
    f->td = mc_defs_type(mc_engine_defs(db->e), rec->type);
    f->id = rec->id;
    f->dbid = rec->dbid;
    snprintf(f->token, sizeof f->token, "%s", rec->token);
    return f;
}

/* The entity is gone and its record holds a database id: delete or release it. */
/* The entity is going: its check-out stops naming a mailbox (state live, no mailbox), so a
 * load elsewhere waits for the release rather than answer with a base that is gone. */
static void unpublish(mc_persist_store *store, const mc_entity_type_def *td, db_rec *rec)
{
    mc_persist_mark_live(store, td, rec->dbid, rec->token, NULL, 0, NULL, NULL);
}

void db_end_gone(base_db *db, db_rec *rec)
{
    int st;
    mc_persist_store *store = db_store(db, &st);
    const mc_entity_type_def *td = mc_defs_type(mc_engine_defs(db->e), rec->type);
    if (store && td && rec->dbid && !rec->fenced) {
        unpublish(store, td, rec);
        if (rec->destroy_delete) {
            final_op *f = final_new(db, rec);
            if (f)
                mc_persist_delete(store, td, rec->dbid, rec->token, false, on_final, f);
        } else {
            db_release(db, td, rec->dbid, rec->token);
        }
    }
    db_rec_drop(db, rec);
}

void db_on_destroy(mc_engine *e, mc_entity *ent)
{
    base_db *db = base_db_of(e);
    db_rec *rec = db_rec_of(db, ent->id);
    if (!rec || mc_engine_freeing(e))
        return; /* freeing: base_db_free forgets the records */
    if (rec->creating) {
        rec->gone = true; /* the first write's answer ends it */
        return;
    }
    int st;
    mc_persist_store *store = db_store(db, &st);
    if (!store || !rec->dbid || rec->fenced || rec->destroy_delete || rec->destroy_nowrite) {
        db_end_gone(db, rec);
        return;
    }
    /* The last write (the base has no cell: destroy is refused while it has one), then the
     * check-out's release. */
    mc_value *values = calloc(ent->td->nprops + 1, sizeof *values);
    char why[MC_REASON_MAX];
    final_op *f = values ? final_new(db, rec) : NULL;
    if (!f || db_values_from_struct(e, ent, MC_PART_CELL, ent->cell_data, values, why,
                                    sizeof why) != 0 ||
        db_values_from_struct(e, ent, MC_PART_BASE, ent->props, values, why, sizeof why) != 0) {
        MC_WARNING("persistence: %s %d: no last write (%s)", ent->td->name, (int)ent->id,
                   f ? why : "out of memory");
        free(f);
        db_values_free(ent->td, values);
        db_end_gone(db, rec);
        return;
    }
    f->release = true;
    mc_persist_entity pe = {.type = ent->td, .dbid = rec->dbid, .values = values,
                            .engine = db_engine_fields(&ent->cell_position, &ent->cell_direction,
                                                    rec->space_id),
                            .serial = ++rec->write_serial};
    db->st.writes++;
    unpublish(store, ent->td, rec);
    mc_persist_write(store, &pe, rec->token, on_final, f);
    db_values_free(ent->td, values);
    db_rec_drop(db, rec);
}
