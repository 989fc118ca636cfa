/* PREPARE_LOGIN on a baseapp (login_prepare.h): load or create the account's base, issue a
 * session for it, answer the loginapp. */
#include "login_prepare.h"
#include "clients/client_sessions.h"
#include "db/db.h"
#include "common/log.h"
#include "proto/login.h"
#include "secure/login.h"
#include "server/pb.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct login_prepare {
    uint64_t requests, ok, created, already, elsewhere, failed, malformed, not_loginapp;
} login_prepare;

typedef struct {
    mc_engine *e;
    mc_origin origin;
    char name[MC_LOGIN_NAME_MAX + 1];
    const mc_entity_type_def *td;
    uint64_t dbid;
    bool takeover;
    bool by_identifier; /* the load was by the identifier (the account name) */
    int32_t created_id; /* a base created here, waiting for its first write */
} prepare_op;

static login_prepare *state_of(mc_engine *e) { return login_prepare_of(e); }

static void reply(mc_engine *e, const mc_origin *o, const Mc__Login__PrepareLoginReply *r)
{
    if (mc_engine_freeing(e))
        return;
    size_t n = 0;
    uint8_t *buf = mc_pb_pack(r, &n);
    if (!buf) {
        MC_WARNING("PREPARE_LOGIN: cannot answer (out of memory)");
        return;
    }
    mc_engine_reply(e, o, buf, n);
    sodium_memzero(buf, n);
    free(buf);
}

static void reply_status(mc_engine *e, const mc_origin *o, Mc__Login__PrepareStatus st,
                         const char *reason, const char *live_on)
{
    login_prepare *lp = state_of(e);
    if (lp) {
        if (st == MC__LOGIN__PREPARE_STATUS__PREPARE_ALREADY_LOGGED_IN)
            lp->already++;
        else if (st == MC__LOGIN__PREPARE_STATUS__PREPARE_LIVE_ELSEWHERE)
            lp->elsewhere++;
        else if (st == MC__LOGIN__PREPARE_STATUS__PREPARE_BAD_REQUEST)
            lp->malformed++;
        else
            lp->failed++;
    }
    Mc__Login__PrepareLoginReply r = MC__LOGIN__PREPARE_LOGIN_REPLY__INIT;
    r.status = st;
    r.reason = (char *)(reason ? reason : "");
    r.live_on = (char *)(live_on ? live_on : "");
    reply(e, o, &r);
}

static void finish(prepare_op *op) { free(op); }

/* The base is here: a new session for it. */
static void issue(prepare_op *op, mc_entity *ent, uint64_t dbid, bool forget_older)
{
    mc_engine *e = op->e;
    base_sessions *sessions = base_sessions_of(e);
    if (forget_older) {
        size_t n = base_sessions_forget_entity(sessions, ent->id);
        MC_INFO("login of '%s' takes over entity %d (%zu older sessions forgotten)", op->name,
                (int)ent->id, n);
    }
    uint64_t sid = 0;
    uint8_t key[MC_SECURE_KEY_BYTES];
    if (base_sessions_issue(sessions, ent->id, op->name, false, &sid, key) != 0) {
        reply_status(e, &op->origin, MC__LOGIN__PREPARE_STATUS__PREPARE_BUSY,
                     "too many login sessions waiting (--maxSessions)", NULL);
        finish(op);
        return;
    }
    Mc__Login__PrepareLoginReply r = MC__LOGIN__PREPARE_LOGIN_REPLY__INIT;
    r.status = MC__LOGIN__PREPARE_STATUS__PREPARE_OK;
    r.reason = "";
    r.session_id = sid;
    r.session_key.data = key;
    r.session_key.len = sizeof key;
    r.external_addr = (char *)mc_server_external_addr(mc_engine_server(e));
    r.dbid = dbid;
    r.live_on = "";
    r.entity_id = ent->id;
    r.taken_over = forget_older;
    if (state_of(e))
        state_of(e)->ok++;
    MC_DEBUG("login of '%s': session issued for entity %d", op->name, (int)ent->id);
    reply(e, &op->origin, &r);
    sodium_memzero(key, sizeof key);
    finish(op);
}

/* ---- creating a new account base --------------------------------------------------------- */

static void on_written(mc_engine *e, void *ctx, int status, uint64_t dbid, const char *reason)
{
    prepare_op *op = ctx;
    mc_entity *ent = mc_engine_find(e, op->created_id);
    if (mc_engine_freeing(e)) {
        finish(op);
        return;
    }
    if (status != MC_CALL_OK || !dbid || !ent || ent->destroying) {
        char why[300];
        snprintf(why, sizeof why, "the new account's first write failed: %s",
                 status != MC_CALL_OK ? (reason && *reason ? reason : mc_call_status_name(status))
                                      : "its base is gone");
        MC_WARNING("login of '%s': %s", op->name, why);
        if (ent && !ent->destroying && ent->cell_state == MC_CELL_NONE)
            mc_engine_destroy_entity(e, ent);
        reply_status(e, &op->origin, MC__LOGIN__PREPARE_STATUS__PREPARE_FAILED, why, NULL);
        finish(op);
        return;
    }
    if (state_of(e))
        state_of(e)->created++;
    MC_INFO("login of '%s': new %s entity %d, database id %llu", op->name, op->td->name,
            (int)ent->id, (unsigned long long)dbid);
    issue(op, ent, dbid, false);
}

static void create_account(prepare_op *op)
{
    mc_engine *e = op->e;
    const mc_entity_type_def *td = op->td;
    uint16_t idx[1];
    mc_value val[1];
    size_t n = 0;
    memset(val, 0, sizeof val);
    for (size_t i = 0; i < td->nprops; i++) {
        const mc_def_property *p = &td->props[i];
        /* the identifier, on the base or in the cellData (an Identifier on the cell) */
        if (p->identifier &&
            (p->type->kind == MC_TYPE_STRING || p->type->kind == MC_TYPE_UNICODE_STRING)) {
            if (mc_value_set_bytes(&val[0], p->type->kind, op->name, strlen(op->name)) != 0)
                break;
            idx[0] = p->index;
            n = 1;
            break;
        }
    }
    int status = MC_CALL_OK;
    char why[MC_REASON_MAX] = "";
    mc_entity *ent = base_create(e, td->id, idx, val, n, &status, why, sizeof why);
    mc_value_free(&val[0]);
    if (!ent) {
        char msg[300];
        snprintf(msg, sizeof msg, "cannot create the account's %s base: %s", td->name, why);
        reply_status(e, &op->origin, status == MC_CALL_ERR_BUSY || status == MC_CALL_ERR_UNAVAILABLE
                                         ? MC__LOGIN__PREPARE_STATUS__PREPARE_BUSY
                                         : MC__LOGIN__PREPARE_STATUS__PREPARE_FAILED,
                     msg, NULL);
        finish(op);
        return;
    }
    op->created_id = ent->id;
    int rc = db_write(base_db_of(e), ent, false, on_written, op);
    if (rc != MC_CALL_OK) {
        mc_engine_destroy_entity(e, ent);
        reply_status(e, &op->origin, MC__LOGIN__PREPARE_STATUS__PREPARE_FAILED,
                     "cannot write the new account", NULL);
        finish(op);
    }
}

/* ---- loading ---------------------------------------------------------------------------------- */

static void on_loaded(mc_engine *e, void *ctx, int status, const mc_mailbox_ref *base,
                      uint64_t dbid, bool was_live, const char *reason)
{
    prepare_op *op = ctx;
    if (mc_engine_freeing(e)) {
        finish(op);
        return;
    }
    if (status == MC_CALL_ERR_NOT_FOUND) {
        /* No such entity (by the name, or the record's id points at a deleted one): new. */
        create_account(op);
        return;
    }
    if (status != MC_CALL_OK || !base) {
        char why[300];
        snprintf(why, sizeof why, "cannot load the account: %s",
                 reason && *reason ? reason : mc_call_status_name(status));
        reply_status(e, &op->origin, status == MC_CALL_ERR_BUSY
                                         ? MC__LOGIN__PREPARE_STATUS__PREPARE_BUSY
                                         : MC__LOGIN__PREPARE_STATUS__PREPARE_FAILED,
                     why, NULL);
        finish(op);
        return;
    }
    mc_address where;
    mc_mailbox_address(base, &where);
    bool here = mc_engine_is_self(e, &where);
    mc_entity *ent = here ? mc_engine_find(e, base->id) : NULL;
    if (was_live && !op->takeover) {
        reply_status(e, &op->origin, MC__LOGIN__PREPARE_STATUS__PREPARE_ALREADY_LOGGED_IN,
                     "the account's base is live", NULL);
        finish(op);
        return;
    }
    if (!here) {
        char addr[MC_ADDRESS_STRLEN];
        mc_address_format(&where, addr, sizeof addr);
        reply_status(e, &op->origin, MC__LOGIN__PREPARE_STATUS__PREPARE_LIVE_ELSEWHERE,
                     "the account's base lives on another baseapp", addr);
        finish(op);
        return;
    }
    if (!ent || ent->destroying) {
        reply_status(e, &op->origin, MC__LOGIN__PREPARE_STATUS__PREPARE_FAILED,
                     "the account's base went while it was loaded", NULL);
        finish(op);
        return;
    }
    issue(op, ent, dbid, was_live);
}

void login_on_prepare(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    login_prepare *lp = state_of(e);
    if (lp)
        lp->requests++;
    size_t len = mc_istream_remaining(is);
    const uint8_t *bytes = len ? mc_read_bytes(is, len) : (const uint8_t *)"";
    Mc__Login__PrepareLoginRequest *q =
        bytes && len <= MC_PREPARE_LOGIN_MAX_PAYLOAD
            ? mc__login__prepare_login_request__unpack(NULL, len, bytes)
            : NULL;
    size_t nlen = q && q->account_name ? strlen(q->account_name) : 0;
    if (o->local || !mc_server_peer_is_live(mc_engine_server(e), &o->addr, MC_ROLE_LOGINAPP)) {
        /* sessions are issued to the cluster's loginapps only, never to another member
         * (or a process declared dead) that happens to hold the secret */
        char from[MC_ADDRESS_STRLEN];
        mc_address_format(&o->addr, from, sizeof from);
        uint64_t n = lp ? ++lp->not_loginapp : 1;
        if (n <= 10 || n % 1000 == 0)
            MC_WARNING("PREPARE_LOGIN from %s refused: not a live loginapp of the cluster "
                       "(%llu so far)", from, (unsigned long long)n);
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        if (o->is_request) {
            /* answered, but counted in notLoginapp only (not as malformed) */
            Mc__Login__PrepareLoginReply r = MC__LOGIN__PREPARE_LOGIN_REPLY__INIT;
            r.status = MC__LOGIN__PREPARE_STATUS__PREPARE_BAD_REQUEST;
            r.reason = "PREPARE_LOGIN is taken from the cluster's loginapps only";
            r.live_on = "";
            reply(e, o, &r);
        }
        mc_pb_free(q);
        return;
    }
    if (!o->is_request) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        mc_pb_free(q);
        return; /* nobody to answer */
    }
    if (!q || nlen < 1 || nlen > MC_LOGIN_NAME_MAX ||
        !mc_login_name_ok(q->account_name, nlen) || !q->entity_type) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        reply_status(e, o, MC__LOGIN__PREPARE_STATUS__PREPARE_BAD_REQUEST,
                     "malformed PREPARE_LOGIN", NULL);
        mc_pb_free(q);
        return;
    }
    const mc_entity_type_def *td = mc_defs_type_by_name(mc_engine_defs(e), q->entity_type);
    int st;
    if (!td) {
        char why[160];
        snprintf(why, sizeof why, "no entity type '%.64s' in the defs", q->entity_type);
        reply_status(e, o, MC__LOGIN__PREPARE_STATUS__PREPARE_BAD_REQUEST, why, NULL);
    } else if (!db_store(base_db_of(e), &st)) {
        reply_status(e, o, MC__LOGIN__PREPARE_STATUS__PREPARE_NO_DATABASE,
                     st == MC_CALL_ERR_UNAVAILABLE ? "this baseapp has no database (--redis)"
                                                   : mc_call_status_name(st),
                     NULL);
    } else {
        prepare_op *op = calloc(1, sizeof *op);
        if (!op) {
            reply_status(e, o, MC__LOGIN__PREPARE_STATUS__PREPARE_BUSY, "out of memory", NULL);
            mc_pb_free(q);
            return;
        }
        op->e = e;
        op->origin = *o;
        memcpy(op->name, q->account_name, nlen + 1);
        op->td = td;
        op->dbid = q->dbid;
        op->takeover = q->takeover;
        int rc;
        if (op->dbid)
            rc = db_load(base_db_of(e), td, op->dbid, NULL, on_loaded, op);
        else if (db_has_identifier(td) && nlen <= MC_LOAD_IDENT_MAX)
            rc = db_load(base_db_of(e), td, 0, op->name, on_loaded, op);
        else {
            create_account(op);
            rc = MC_CALL_OK;
        }
        if (rc != MC_CALL_OK) {
            char why[160];
            snprintf(why, sizeof why, "cannot load the account: %s", mc_call_status_name(rc));
            reply_status(e, o, rc == MC_CALL_ERR_BUSY ? MC__LOGIN__PREPARE_STATUS__PREPARE_BUSY
                                                      : MC__LOGIN__PREPARE_STATUS__PREPARE_FAILED,
                         why, NULL);
            free(op);
        }
    }
    mc_pb_free(q);
}

int login_prepare_init(mc_engine *e)
{
    baseapp *a = baseapp_of(e);
    login_prepare *lp = calloc(1, sizeof *lp);
    if (!lp)
        return -1;
    a->login = lp;
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    struct {
        const char *path;
        uint64_t *var;
    } u[] = {
        {"login/prepare/requests", &lp->requests},
        {"login/prepare/ok", &lp->ok},
        {"login/prepare/created", &lp->created},
        {"login/prepare/alreadyLoggedIn", &lp->already},
        {"login/prepare/liveElsewhere", &lp->elsewhere},
        {"login/prepare/failed", &lp->failed},
        {"login/prepare/malformed", &lp->malformed},
        {"login/prepare/notLoginapp", &lp->not_loginapp},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        bad |= mc_watch_add_uint(w, u[i].path, u[i].var, MC_WATCH_READ_ONLY);
    return bad ? -1 : 0;
}

void login_prepare_free(mc_engine *e)
{
    baseapp *a = baseapp_of(e);
    if (a) {
        free(a->login);
        a->login = NULL;
    }
}
