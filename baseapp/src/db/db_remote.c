/* Loading on another baseapp: LOAD_BASE answered here for any process, createBaseAnywhereFromDB
 * (LOAD_BASE to the least-loaded baseapp) and LOAD_BASE to a given one (auto-load). */
#include "db.h"
#include "common/log.h"
#include "entity/persist_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- LOAD_BASE ----------------------------------------------------------------------------- */

typedef struct {
    mc_origin origin;
} load_answer;

static void answer(mc_engine *e, const mc_origin *o, int status, const mc_mailbox_ref *mb,
                   uint64_t dbid, bool was_live, const char *reason)
{
    mc_load_base_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.status = (int8_t)status;
    if (status == MC_CALL_OK && mb)
        rep.base = *mb;
    rep.dbid = dbid;
    rep.was_live = was_live;
    snprintf(rep.reason, sizeof rep.reason, "%s", reason ? reason : "");
    mc_ostream os;
    mc_ostream_init(&os);
    mc_load_base_reply_encode(&os, &rep);
    mc_engine_reply(e, o, os.data, os.size);
    mc_ostream_free(&os);
}

static void on_load_for_peer(mc_engine *e, void *ctx, int status, const mc_mailbox_ref *base,
                             uint64_t dbid, bool was_live, const char *reason)
{
    load_answer *a = ctx;
    if (!mc_engine_freeing(e))
        answer(e, &a->origin, status, base, dbid, was_live, reason);
    free(a);
}

void db_on_load_base(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    mc_load_base_req req;
    char why[MC_REASON_MAX] = "";
    if (!mc_load_base_decode(mc_engine_defs(e), is, &req, why, sizeof why)) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        answer(e, o, MC_CALL_ERR_ARGS, NULL, 0, false, why);
        return;
    }
    load_answer *a = calloc(1, sizeof *a);
    if (!a) {
        answer(e, o, MC_CALL_ERR_BUSY, NULL, 0, false, "out of memory");
        return;
    }
    a->origin = *o;
    int rc = db_load(base_db_of(e), mc_defs_type(mc_engine_defs(e), req.type), req.dbid,
                     req.ident, on_load_for_peer, a);
    if (rc != MC_CALL_OK) {
        free(a);
        answer(e, o, rc, NULL, req.dbid, false,
               rc == MC_CALL_ERR_UNAVAILABLE ? "this baseapp has no database" : mc_call_status_name(rc));
    }
}

/* ---- anywhere -------------------------------------------------------------------------------- */

typedef struct {
    base_db *db;
    mc_load_base_req req;
    db_loaded_fn done;
    void *ctx;
} remote_load;

static void remote_finish(remote_load *rl, int status, const mc_mailbox_ref *mb, uint64_t dbid,
                          bool was_live, const char *reason)
{
    mc_mailbox_ref none = {0};
    rl->done(rl->db->e, rl->ctx, status, mb ? mb : &none, dbid, was_live, reason ? reason : "");
    free(rl);
}

static void on_remote_reply(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    remote_load *rl = ctx;
    if (status != MC_CALL_OK) {
        remote_finish(rl, status, NULL, rl->req.dbid, false, mc_call_status_name(status));
        return;
    }
    mc_load_base_reply rep;
    if (!mc_load_base_reply_decode(mc_engine_defs(e), payload, &rep)) {
        remote_finish(rl, MC_CALL_ERR_ARGS, NULL, rl->req.dbid, false,
                      "malformed answer to LOAD_BASE");
        return;
    }
    remote_finish(rl, rep.status, &rep.base, rep.dbid, rep.was_live, rep.reason);
}

static void on_picked(mc_engine *e, void *ctx, const char *addr, const char *reason)
{
    remote_load *rl = ctx;
    mc_address a;
    char why[MC_REASON_MAX];
    if (!addr || mc_address_parse(addr, &a) != MC_OK) {
        snprintf(why, sizeof why, "no baseapp: %s", reason ? reason : "bad address");
        remote_finish(rl, MC_CALL_ERR_UNAVAILABLE, NULL, rl->req.dbid, false, why);
        return;
    }
    mc_ostream os;
    mc_ostream_init(&os);
    mc_load_base_encode(&os, &rl->req);
    int rc = mc_engine_request(e, &a, MC_MSG_LOAD_BASE, os.data, os.size, on_remote_reply, rl);
    mc_ostream_free(&os);
    if (rc != MC_CALL_OK)
        remote_finish(rl, rc, NULL, rl->req.dbid, false, mc_call_status_name(rc));
}

/* A LOAD_BASE to send: NULL with a status when the arguments are wrong. */
static remote_load *remote_new(base_db *db, const mc_entity_type_def *td, uint64_t dbid,
                               const char *ident, db_loaded_fn done, void *ctx, int *status)
{
    if (!db_store(db, status))
        return NULL; /* the baseapp that asks needs a database too: the cluster shares one */
    bool by_name = ident && *ident;
    *status = MC_CALL_ERR_ARGS;
    if (!td || !done) {
        *status = MC_CALL_ERR_NOT_FOUND;
        return NULL;
    }
    if (by_name == (dbid != 0) || (by_name && strlen(ident) > MC_LOAD_IDENT_MAX) ||
        (by_name && !db_has_identifier(td)))
        return NULL;
    remote_load *rl = calloc(1, sizeof *rl);
    if (!rl) {
        *status = MC_CALL_ERR_BUSY;
        return NULL;
    }
    rl->db = db;
    rl->req.type = td->id;
    rl->req.dbid = dbid;
    snprintf(rl->req.ident, sizeof rl->req.ident, "%s", by_name ? ident : "");
    rl->done = done;
    rl->ctx = ctx;
    *status = MC_CALL_OK;
    return rl;
}

int db_load_anywhere(base_db *db, const mc_entity_type_def *td, uint64_t dbid,
                     const char *ident, db_loaded_fn done, void *ctx)
{
    int rc;
    remote_load *rl = remote_new(db, td, dbid, ident, done, ctx, &rc);
    if (!rl)
        return rc;
    rc = mc_engine_pick(db->e, MC_ROLE_BASEAPP, on_picked, rl);
    if (rc != MC_CALL_OK)
        free(rl);
    return rc;
}

int db_load_on(base_db *db, const char *addr, const mc_entity_type_def *td, uint64_t dbid,
               const char *ident, db_loaded_fn done, void *ctx)
{
    int rc;
    mc_address a;
    if (!addr || mc_address_parse(addr, &a) != MC_OK)
        return MC_CALL_ERR_MAILBOX;
    remote_load *rl = remote_new(db, td, dbid, ident, done, ctx, &rc);
    if (!rl)
        return rc;
    mc_ostream os;
    mc_ostream_init(&os);
    mc_load_base_encode(&os, &rl->req);
    rc = mc_engine_request(db->e, &a, MC_MSG_LOAD_BASE, os.data, os.size, on_remote_reply, rl);
    mc_ostream_free(&os);
    if (rc != MC_CALL_OK)
        free(rl);
    return rc;
}
