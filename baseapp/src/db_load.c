/* Loading bases from the database (createBaseFromDB): check the entity out (atomic in
 * Redis), load it and create it here; or, when another check-out holds it, answer with the
 * live entity's mailbox, waiting (bounded) while it is being loaded and releasing the
 * check-out of an owner that is gone (the manager declared it dead, or does not know it as
 * the process that checked the entity out). A check-out still "loading" after --loadWaitMs
 * gets the same owner check: one left by a crash between check-out and mark_live is
 * released. The release is of that one check-out, by its key (owner and incarnation checked
 * in Redis), and a load releases at most MAX_RELEASES times: it always ends. */
#include "base_db.h"
#include "common/log.h"
#include "entity/persist_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RETRY_MS 50
#define MAX_RELEASES 3

typedef struct db_load_op {
    struct db_load_op *prev, *next;
    base_db *db;
    const mc_entity_type_def *td;
    uint64_t dbid;
    char ident[MC_LOAD_IDENT_MAX + 1];
    char token[96];
    char owner[64];            /* who holds it, for the reason when we give up */
    uint64_t owner_inc;        /* its incarnation */
    mc_mailbox_ref live;       /* the mailbox its check-out names */
    mc_time_us deadline;       /* waiting for a check-out "loading" ends then */
    mc_time_us hard_deadline;  /* the load ends by then, whatever happens */
    int releases;              /* check-outs of gone owners released for this load */
    bool owner_live;           /* the check-out being checked is live (else loading) */
    struct event *ev;          /* retry, or a result delivered from the loop */
    bool in_store;             /* a store request holds this record */
    bool have_result;
    int status;
    mc_mailbox_ref mb;
    bool was_live;
    char reason[MC_REASON_MAX];
    db_loaded_fn done;
    void *ctx;
} db_load_op;

static void unlink_load(db_load_op *op)
{
    if (op->prev)
        op->prev->next = op->next;
    else if (op->db->loads == op)
        op->db->loads = op->next;
    if (op->next)
        op->next->prev = op->prev;
    op->prev = op->next = NULL;
}

static void finish(db_load_op *op, int status, const mc_mailbox_ref *mb, bool was_live,
                   const char *reason)
{
    base_db *db = op->db;
    unlink_load(op);
    if (status == MC_CALL_OK && was_live)
        db->st.loads_live++;
    else if (status == MC_CALL_OK)
        db->st.loads_ok++;
    else
        db->st.loads_failed++;
    if (status != MC_CALL_OK) {
        char what[MC_LOAD_IDENT_MAX + 32];
        if (op->dbid)
            snprintf(what, sizeof what, "%llu", (unsigned long long)op->dbid);
        else
            snprintf(what, sizeof what, "named '%s'", op->ident);
        MC_INFO("persistence: loading %s %s failed: %s (%s)", op->td->name, what,
                mc_call_status_name(status), reason ? reason : "");
    }
    mc_mailbox_ref none = {0};
    op->done(db->e, op->ctx, status, status == MC_CALL_OK && mb ? mb : &none, op->dbid, was_live,
             reason ? reason : "");
    if (op->ev)
        event_free(op->ev);
    free(op);
}

static void attempt(db_load_op *op);

static void on_event(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    db_load_op *op = ctx;
    if (op->have_result)
        finish(op, op->status, &op->mb, op->was_live, op->reason);
    else
        attempt(op);
}

static void schedule(db_load_op *op, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    if (event_add(op->ev, &tv) != 0) {
        op->have_result = false;
        finish(op, MC_CALL_ERR_BUSY, NULL, false, "cannot arm a timer");
    }
}

static void finish_later(db_load_op *op, int status, const mc_mailbox_ref *mb, bool was_live,
                         const char *reason)
{
    op->have_result = true;
    op->status = status;
    if (mb)
        op->mb = *mb;
    op->was_live = was_live;
    snprintf(op->reason, sizeof op->reason, "%s", reason ? reason : "");
    schedule(op, 0);
}

static void fail_busy(db_load_op *op)
{
    char why[MC_REASON_MAX];
    snprintf(why, sizeof why, "being loaded by %s for more than %llu ms",
             op->owner[0] ? op->owner : "another baseapp",
             (unsigned long long)op->db->load_wait_ms);
    finish(op, MC_CALL_ERR_BUSY, NULL, false, why);
}

static void retry_later(db_load_op *op)
{
    if (mc_clock_now_us() > op->deadline) {
        fail_busy(op);
        return;
    }
    schedule(op, RETRY_MS);
}

static void on_loaded(void *ctx, const mc_persist_result *r)
{
    db_load_op *op = ctx;
    base_db *db = op->db;
    op->in_store = false;
    int st;
    mc_persist_store *store = db_store(db, &st);
    if (r->status == MC_PERSIST_CLOSED || !store) {
        finish(op, MC_CALL_ERR_UNAVAILABLE, NULL, false, "the process is shutting down");
        return;
    }
    char why[MC_REASON_MAX] = "";
    int status = db_call_status(r->status);
    mc_entity *ent = NULL;
    if (r->status == MC_PERSIST_OK && r->record)
        ent = db_create_loaded(db, r->record, op->token, &status, why, sizeof why);
    else
        snprintf(why, sizeof why, "%s", r->reason ? r->reason : mc_persist_status_name(r->status));
    if (!ent) {
        /* Not loaded: let others have it (retried: a check-out left "loading" by a live
         * process would make every later load fail busy). */
        db_give_back(db, op->td, op->dbid, op->token, "a load that could not create it");
        finish(op, status == MC_CALL_OK ? MC_CALL_ERR_ARGS : status, NULL, false, why);
        return;
    }
    db_rec *rec = db_rec_of(db, ent->id);
    if (rec)
        db_mark_live(db, rec);
    db_restore_cell(db, ent, r->record->engine.space_id);
    mc_mailbox_ref mb = mc_engine_mailbox(db->e, ent, MC_COMPONENT_BASE);
    finish(op, MC_CALL_OK, &mb, false, NULL);
}

static void on_dead_released(void *ctx, const mc_persist_result *r)
{
    db_load_op *op = ctx;
    op->in_store = false;
    if (r->status == MC_PERSIST_CLOSED) {
        finish(op, MC_CALL_ERR_UNAVAILABLE, NULL, false, "the process is shutting down");
        return;
    }
    if (r->status == MC_PERSIST_OK && r->count)
        op->db->st.released_of_dead += r->count;
    if (r->status != MC_PERSIST_OK) {
        char why[MC_REASON_MAX];
        snprintf(why, sizeof why, "cannot release the check-out of %s: %s", op->owner,
                 r->reason && *r->reason ? r->reason : mc_persist_status_name(r->status));
        finish(op, db_call_status(r->status) == MC_CALL_OK ? MC_CALL_ERR_UNAVAILABLE
                                                           : db_call_status(r->status),
               NULL, false, why);
        return;
    }
    /* Released, or already gone, or taken by someone else since: look again, within the
     * load's bounds (a check-out that keeps coming back never makes a load spin). */
    if (op->releases >= MAX_RELEASES || mc_clock_now_us() > op->hard_deadline) {
        char why[MC_REASON_MAX];
        snprintf(why, sizeof why, "still checked out by %s after releasing it %d times",
                 op->owner[0] ? op->owner : "another baseapp", op->releases);
        finish(op, MC_CALL_ERR_BUSY, NULL, false, why);
        return;
    }
    attempt(op);
}

static void release_gone_owner(db_load_op *op, mc_persist_store *store, const char *why)
{
    /* A baseapp that died just now: its bases are being restored from their backups, each
     * taking its check-out over; the load waits for that (or for the release after the
     * grace) and finds the restored base then. */
    if (backup_owner_in_grace(op->db->e, op->owner, op->owner_inc)) {
        if (mc_clock_now_us() > op->hard_deadline)
            fail_busy(op);
        else
            schedule(op, 250);
        return;
    }
    /* Its owner is gone but its check-out was not released yet: release it, by its key
     * (the owner's set may not name it), only if owner and incarnation still match. */
    base_db *db = op->db;
    mc_time_us now = mc_clock_now_us();
    if (now - db->release_log_at >= MC_US_PER_S) {
        char quiet[64] = "";
        if (db->release_log_quiet)
            snprintf(quiet, sizeof quiet, " (%llu more since, not logged)",
                     (unsigned long long)db->release_log_quiet);
        MC_INFO("persistence: %s %llu is held by %s (incarnation %016llx, %s), which is %s: "
                "releasing its check-out%s",
                op->td->name, (unsigned long long)op->dbid, op->owner,
                (unsigned long long)op->owner_inc, op->owner_live ? "live" : "loading", why,
                quiet);
        db->release_log_at = now;
        db->release_log_quiet = 0;
    } else {
        db->release_log_quiet++;
    }
    op->releases++;
    op->in_store = true;
    mc_persist_release_checkout(store, op->td, op->dbid, op->owner, op->owner_inc,
                                on_dead_released, op);
}

static void owner_check_cancel(mc_engine *e, void *ctx)
{
    (void)e;
    finish(ctx, MC_CALL_ERR_UNAVAILABLE, NULL, false, "the process is shutting down");
}

/* What the manager knows of the owner. The owner is the process of the check-out's
 * incarnation (and, for a live one, at its mailbox's address), whatever name it has now: a
 * restarted manager hands names out again in re-registration order, so asking about the
 * name could find another process (even this one). That process alive: the check-out
 * holds. Known to the manager but not alive (dead, stopped, fenced): released. Unknown: the
 * check-out outlived its owner (a baseapp that died with no other baseapp to release its
 * check-outs, or a cluster started again after a crash) - but only once the manager has been
 * up --ownerGraceMs (a live owner re-registers with a restarted manager within it); before
 * that the load looks again, within its bounds. */
#define GRACE_RECHECK_MS 250
static void on_owner_info(mc_server *s, void *ctx, const Mc__Control__QueryReply *reply)
{
    (void)s;
    db_load_op *op = mc_engine_wait_ctx(ctx);
    mc_engine *e = mc_engine_wait_end(ctx);
    if (!e)
        return;
    if (!reply) { /* the manager did not answer: take the check-out at its word */
        if (op->owner_live)
            finish(op, MC_CALL_OK, &op->live, true, NULL);
        else
            fail_busy(op);
        return;
    }
    char text[MC_ADDRESS_STRLEN] = "";
    if (op->owner_live) {
        mc_address addr;
        mc_mailbox_address(&op->live, &addr);
        mc_address_format(&addr, text, sizeof text);
    }
    const Mc__Control__ProcessInfo *p = NULL;
    bool have_manager = false;
    uint64_t manager_up_ms = 0;
    for (size_t i = 0; reply->status == MC__CONTROL__QUERY_STATUS__QUERY_OK &&
                       i < reply->n_processes;
         i++) {
        const Mc__Control__ProcessInfo *q = reply->processes[i];
        if (!q)
            continue;
        if ((int)q->role == (int)MC_ROLE_MANAGER) {
            have_manager = true;
            manager_up_ms = q->uptime_ms;
            continue;
        }
        if ((int)q->role != (int)MC_ROLE_BASEAPP || !q->incarnation ||
            q->incarnation != op->owner_inc)
            continue;
        /* A loading check-out names no address: the process of that incarnation. */
        if (op->owner_live && (!q->internal_addr || strcmp(q->internal_addr, text) != 0))
            continue;
        if (!p || q->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
            p = q; /* an alive entry wins over older dead ones of the same process */
    }
    bool alive = p && p->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE;
    /* Another live process at the owner's address: the owner is gone for sure. */
    const Mc__Control__ProcessInfo *other = NULL;
    for (size_t i = 0; !p && op->owner_live &&
                       reply->status == MC__CONTROL__QUERY_STATUS__QUERY_OK &&
                       i < reply->n_processes;
         i++) {
        const Mc__Control__ProcessInfo *q = reply->processes[i];
        if (q && q->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE && q->internal_addr &&
            strcmp(q->internal_addr, text) == 0)
            other = q;
    }
    int st;
    mc_persist_store *store = db_store(op->db, &st);
    if (alive || !store) {
        if (op->owner_live)
            finish(op, MC_CALL_OK, &op->live, true, NULL);
        else
            fail_busy(op); /* really being loaded, for longer than --loadWaitMs */
        return;
    }
    if (p) {
        char why[96];
        snprintf(why, sizeof why, "%s to the manager (as %s)", mc_state_name(p->state),
                 p->name ? p->name : "?");
        release_gone_owner(op, store, why);
        return;
    }
    if (other) {
        release_gone_owner(op, store, "not the process that checked it out");
        return;
    }
    uint64_t grace_ms = op->db->owner_grace_ms;
    if (!grace_ms)
        grace_ms = mc_server_manager_silent_ms(mc_engine_server(op->db->e)) + 2000;
    if (have_manager && manager_up_ms >= grace_ms) {
        release_gone_owner(op, store, "unknown to the manager");
        return;
    }
    /* The manager may have restarted: the owner may not have registered again yet. */
    if (mc_clock_now_us() > op->hard_deadline) {
        if (op->owner_live)
            finish(op, MC_CALL_OK, &op->live, true, NULL); /* at its word */
        else
            fail_busy(op);
        return;
    }
    schedule(op, GRACE_RECHECK_MS);
}

/* Ask the manager whether the owner is the live process that checked the entity out
 * (on_owner_info decides); without an answer possible, the check-out is taken at its word. */
static void ask_manager(db_load_op *op, const mc_persist_owner *owner)
{
    base_db *db = op->db;
    /* Every process the manager knows (dead ones too) and the manager itself. */
    mc_engine_wait *w = owner->name ? mc_engine_wait_new(db->e, owner_check_cancel, op) : NULL;
    if (!w || mc_server_query(mc_engine_server(db->e), MC__CONTROL__QUERY_KIND__QUERY_ALL,
                              MC_ROLE_BASEAPP, "", on_owner_info, w) != 0) {
        if (w)
            mc_engine_wait_drop(w);
        if (op->owner_live)
            finish(op, MC_CALL_OK, &op->live, true, NULL);
        else
            fail_busy(op);
    }
}

/* Our own name with another incarnation: an earlier process under this name (a cluster
 * restarted without its check-outs released) holds it. */
static bool stale_owner(const base_db *db, const mc_persist_owner *owner)
{
    return db->owner_set && owner->name && strcmp(owner->name, db->owner) == 0 &&
           owner->incarnation != db->incarnation;
}

/* Another check-out holds the entity. */
static void owned(db_load_op *op, mc_persist_store *store, const mc_persist_owner *owner)
{
    base_db *db = op->db;
    snprintf(op->owner, sizeof op->owner, "%s", owner && owner->name ? owner->name : "");
    mc_mailbox_ref mb;
    if (!owner || owner->state != MC_PERSIST_LIVE || !owner->mailbox ||
        !mc_server_mailbox_unpack(owner->mailbox, owner->mailbox_len, &mb)) {
        /* Being loaded: wait until it is live. After --loadWaitMs, or at once for an earlier
         * process of our own name, check its owner as for a live one: a crash between
         * check-out and mark_live leaves a "loading" check-out nobody would end. */
        if (!owner || !owner->name || !*owner->name) {
            retry_later(op);
            return;
        }
        op->owner_live = false;
        op->owner_inc = owner->incarnation;
        if (stale_owner(db, owner)) {
            release_gone_owner(op, store, "an earlier process of our name");
            return;
        }
        if (mc_clock_now_us() <= op->deadline) {
            schedule(op, RETRY_MS);
            return;
        }
        ask_manager(op, owner);
        return;
    }
    mc_address addr;
    mc_mailbox_address(&mb, &addr);
    bool here = mc_engine_is_self(db->e, &addr);
    if (here && db->owner_set && owner->incarnation != db->incarnation) {
        /* Live at our address but checked out by another incarnation: an earlier process
         * that had this address (a cluster started again on the same ports after a crash,
         * whatever name it went by), never to come back: without this the load waited for
         * an entity of ours that does not exist and failed busy. */
        op->owner_inc = owner->incarnation;
        op->owner_live = true;
        op->live = mb;
        release_gone_owner(op, store, "an earlier process at our address");
        return;
    }
    if (here) {
        mc_entity *ent = mc_engine_find(db->e, mb.id);
        if (ent && !ent->in_reap && ent->type == op->td->id) {
            finish(op, MC_CALL_OK, &mb, true, NULL);
            return;
        }
        retry_later(op); /* destroyed here: its release is on its way */
        return;
    }
    char text[MC_ADDRESS_STRLEN];
    mc_address_format(&addr, text, sizeof text);
    op->owner_inc = owner->incarnation;
    op->owner_live = true;
    op->live = mb;
    bool stale = stale_owner(db, owner);
    Mc__Control__ProcessState ps = mc_server_peer_state(mc_engine_server(db->e), text);
    bool gone = ps != MC__CONTROL__PROCESS_STATE__STATE_ALIVE &&
                ps != MC__CONTROL__PROCESS_STATE__STATE_UNKNOWN; /* dead, stopped, fenced */
    if (stale || gone) {
        release_gone_owner(op, store, stale ? "an earlier process of our name" : "gone");
        return;
    }
    /* Ask the manager whether the owner is that live process. */
    ask_manager(op, owner);
}

static void on_checkout(void *ctx, const mc_persist_result *res)
{
    db_load_op *op = ctx;
    base_db *db = op->db;
    op->in_store = false;
    mc_persist_result lost;
    const mc_persist_result *r = db_fault_lose_won(db, res, &lost) ? &lost : res;
    int st;
    mc_persist_store *store = db_store(db, &st);
    if (r->status == MC_PERSIST_CLOSED || !store) {
        finish(op, MC_CALL_ERR_UNAVAILABLE, NULL, false, "the process is shutting down");
        return;
    }
    if (r->dbid)
        op->dbid = r->dbid;
    char why[MC_REASON_MAX];
    switch (r->status) {
    case MC_PERSIST_OK:
        snprintf(op->token, sizeof op->token, "%s", r->token ? r->token : "");
        op->in_store = true;
        mc_persist_load(store, op->td, op->dbid, on_loaded, op);
        return;
    case MC_PERSIST_OWNED:
        owned(op, store, r->owner);
        return;
    case MC_PERSIST_NOT_FOUND:
        if (!op->ident[0])
            snprintf(why, sizeof why, "no %s with database id %llu", op->td->name,
                     (unsigned long long)op->dbid);
        else
            snprintf(why, sizeof why, "no %s named '%.64s%s'%s", op->td->name, op->ident,
                     strlen(op->ident) > 64 ? "..." : "",
                     r->reason && strstr(r->reason, "stale identifier entry")
                         ? " (its stale identifier entry was removed)"
                         : "");
        finish(op, MC_CALL_ERR_NOT_FOUND, NULL, false, why);
        return;
    default:
        /* The check-out may have landed although its answer did not come (in time): the
         * load gives up, and gives the token back so the entity stays loadable. */
        if (db_may_have_won(r->status) && r->dbid && r->token)
            db_give_back(db, op->td, r->dbid, r->token, "an abandoned load");
        finish(op, db_call_status(r->status), NULL, false,
               r->reason && *r->reason ? r->reason : mc_persist_status_name(r->status));
        return;
    }
}

static void attempt(db_load_op *op)
{
    base_db *db = op->db;
    int st;
    mc_persist_store *store = db_store(db, &st);
    if (!store) {
        finish(op, st, NULL, false, "no database");
        return;
    }
    mc_entity *ent = op->dbid ? db_find_live(db, op->td->id, op->dbid) : NULL;
    if (ent) {
        mc_mailbox_ref mb = mc_engine_mailbox(db->e, ent, MC_COMPONENT_BASE);
        finish(op, MC_CALL_OK, &mb, true, NULL);
        return;
    }
    op->in_store = true;
    if (op->dbid)
        mc_persist_checkout(store, op->td, op->dbid, on_checkout, op);
    else
        mc_persist_checkout_ident(store, op->td, op->ident, on_checkout, op);
}

bool db_has_identifier(const mc_entity_type_def *td)
{
    for (size_t i = 0; i < td->nprops; i++)
        if (td->props[i].identifier)
            return true;
    return false;
}

int db_load(base_db *db, const mc_entity_type_def *td, uint64_t dbid, const char *ident,
            db_loaded_fn done, void *ctx)
{
    int st;
    if (!db_store(db, &st))
        return st;
    if (!td || !done)
        return MC_CALL_ERR_NOT_FOUND;
    bool by_name = ident && *ident;
    if (by_name == (dbid != 0) || dbid > 0xFFFFFFFFFFFFULL ||
        (by_name && (strlen(ident) > MC_LOAD_IDENT_MAX || !db_has_identifier(td))))
        return MC_CALL_ERR_ARGS;
    if (db->shutting_down)
        return MC_CALL_ERR_UNAVAILABLE;
    db_load_op *op = calloc(1, sizeof *op);
    if (!op)
        return MC_CALL_ERR_BUSY;
    op->ev = event_new(mc_server_event_base(mc_engine_server(db->e)), -1, 0, on_event, op);
    if (!op->ev) {
        free(op);
        return MC_CALL_ERR_BUSY;
    }
    op->db = db;
    op->td = td;
    op->dbid = dbid;
    snprintf(op->ident, sizeof op->ident, "%s", by_name ? ident : "");
    op->deadline = mc_clock_now_us() + db->load_wait_ms * MC_US_PER_MS;
    /* Waiting (loadWaitMs), then checking and releasing a gone owner's check-out: bounded. */
    op->hard_deadline = op->deadline + db->load_wait_ms * MC_US_PER_MS + 10 * MC_US_PER_S;
    op->done = done;
    op->ctx = ctx;
    op->next = db->loads;
    if (db->loads)
        db->loads->prev = op;
    db->loads = op;
    db->st.loads++;
    mc_entity *ent = dbid ? db_find_live(db, td->id, dbid) : NULL;
    if (ent) {
        mc_mailbox_ref mb = mc_engine_mailbox(db->e, ent, MC_COMPONENT_BASE);
        finish_later(op, MC_CALL_OK, &mb, true, NULL);
    } else {
        attempt(op); /* the store answers from the loop, never from here */
    }
    return MC_CALL_OK;
}

void db_loads_free(base_db *db)
{
    /* Loads waiting on a timer end now; those held by the store end when it is freed (it
     * answers MC_PERSIST_CLOSED). */
    db_load_op *op = db->loads;
    while (op) {
        db_load_op *next = op->next;
        if (!op->in_store)
            finish(op, MC_CALL_ERR_UNAVAILABLE, NULL, false, "the process is shutting down");
        op = next;
    }
}
