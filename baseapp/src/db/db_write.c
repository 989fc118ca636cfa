/* Writing bases to the database: writeToDB (the cell part fetched from the cell), the first
 * write that gives a database id (create), writes fenced by the check-out's token. */
#include "db.h"
#include "common/clock.h"
#include "common/log.h"
#include "entity/persist_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One write in progress. */
typedef struct {
    base_db *db;
    int32_t id;
    uint16_t type;
    uint64_t dbid;
    char token[96];
    bool release_after;
    int status;          /* the write's outcome while its release runs */
    db_written_fn done;
    void *ctx;
} wreq;

static void finish(wreq *w, int status, uint64_t dbid, const char *reason)
{
    if (w->done)
        w->done(w->db->e, w->ctx, status, dbid, reason ? reason : "");
    free(w);
}

void db_log_failure(base_db *db, const char *what, uint16_t type, int32_t id,
                        const mc_persist_result *r)
{
    /* one line a second at most per status (a cut-off baseapp's queued writes all fail at
     * once when it reaches Redis again), with how many were not logged */
    mc_time_us now = mc_clock_now_us();
    size_t k = r->status <= MC_PERSIST_CLOSED ? (size_t)r->status : (size_t)MC_PERSIST_CLOSED;
    if (db->failure_log_at[k] && now - db->failure_log_at[k] < MC_US_PER_S) {
        db->failure_log_quiet[k]++;
        return;
    }
    const mc_entity_type_def *td = mc_defs_type(mc_engine_defs(db->e), type);
    char tail[64] = "";
    if (db->failure_log_quiet[k])
        snprintf(tail, sizeof tail, "; %llu more not logged",
                 (unsigned long long)db->failure_log_quiet[k]);
    MC_WARNING("persistence: %s of %s %d failed: %s (%s)%s", what, td ? td->name : "?",
               (int)id, mc_persist_status_name(r->status), r->reason ? r->reason : "", tail);
    db->failure_log_at[k] = now;
    db->failure_log_quiet[k] = 0;
}

/* The next step of a fenced copy's end: its cell destroyed (as destroyCellEntity does),
 * then, once the cell is gone (db_on_cell_change), the base. */
static void evict_step(base_db *db, mc_entity *ent)
{
    if (!ent || ent->in_reap || mc_engine_freeing(db->e))
        return;
    switch (ent->cell_state) {
    case MC_CELL_NONE:
        mc_engine_destroy_entity(db->e, ent);
        return;
    case MC_CELL_LIVE: {
        int rc = base_destroy_cell(db->e, ent);
        if (rc != MC_CALL_OK)
            MC_WARNING("persistence: %s %d is fenced but its cell cannot be destroyed: %s",
                       ent->td->name, (int)ent->id, mc_call_status_name(rc));
        return;
    }
    default:
        return; /* being created (destroyed once created) or being destroyed */
    }
}

void db_on_cell_change(mc_engine *e, int32_t id)
{
    base_db *db = base_db_of(e);
    db_rec *rec = db ? db_rec_of(db, id) : NULL;
    if (rec && rec->evict)
        evict_step(db, mc_engine_find(e, id));
}

/* Redis refused a write by token: another check-out holds the entity now (this baseapp was
 * declared dead and the entity loaded elsewhere). The copy here must not live on: its cell
 * is destroyed, then the base, without writing. */
static void fenced(base_db *db, db_rec *rec);
void db_evict(base_db *db, db_rec *rec) { fenced(db, rec); }

static void fenced(base_db *db, db_rec *rec)
{
    db->st.fenced++;
    if (!rec || rec->evict)
        return;
    rec->fenced = true;
    rec->evict = true;
    rec->destroy_nowrite = true;
    mc_entity *ent = mc_engine_find(db->e, rec->id);
    MC_WARNING("persistence: %s %d (database id %llu) is checked out by another baseapp now: "
               "its copy here is destroyed%s",
               ent ? ent->td->name : "entity", (int)rec->id, (unsigned long long)rec->dbid,
               ent && ent->cell_state != MC_CELL_NONE ? " (its cell first)" : "");
    evict_step(db, ent);
}

static void on_released(void *ctx, const mc_persist_result *r)
{
    wreq *w = ctx;
    if (r->status == MC_PERSIST_OK) {
        w->db->st.released++;
        /* No longer ours: no further write, and destroy neither writes nor releases. */
        db_rec *rec = db_rec_of(w->db, w->id);
        if (rec && rec->dbid == w->dbid)
            rec->fenced = true;
    }
    if (r->status != MC_PERSIST_OK && r->status != MC_PERSIST_CLOSED)
        db_log_failure(w->db, "releasing the check-out", w->type, w->id, r);
    finish(w, w->status, w->dbid, w->status == MC_CALL_OK ? "" : "write failed");
}

static void release_then_finish(wreq *w, int status)
{
    w->status = status;
    int st;
    mc_persist_store *store = db_store(w->db, &st);
    const mc_entity_type_def *td = mc_defs_type(mc_engine_defs(w->db->e), w->type);
    if (!store || !td || !w->dbid) {
        finish(w, status, w->dbid, "");
        return;
    }
    mc_persist_release(store, td, w->dbid, w->token, on_released, w);
}

static void on_written(void *ctx, const mc_persist_result *r)
{
    wreq *w = ctx;
    base_db *db = w->db;
    db_rec *rec = db_rec_of(db, w->id);
    if (rec && rec->inflight)
        rec->inflight--;
    int status = db_call_status(r->status);
    if (r->status == MC_PERSIST_OK) {
        db->st.writes_ok++;
    } else {
        db->st.writes_failed++;
        if (r->status != MC_PERSIST_CLOSED)
            db_log_failure(db, "a write", w->type, w->id, r);
        if (r->status == MC_PERSIST_FENCED)
            fenced(db, rec && rec->dbid == w->dbid ? rec : NULL);
    }
    if (w->release_after && r->status != MC_PERSIST_CLOSED && r->status != MC_PERSIST_FENCED) {
        release_then_finish(w, status);
        return;
    }
    finish(w, status, w->dbid, r->reason);
}

/* ---- mark_live, retried ----------------------------------------------------------------- */

/* A failed mark_live leaves the check-out "loading": loaders would wait and fail BUSY instead
 * of getting the live mailbox. It is retried after 200 ms, doubling, LIVE_TRIES times in all
 * (about 12 s of back-off), while the record still holds that check-out. */
#define LIVE_FIRST_MS 200
#define LIVE_TRIES 7

typedef struct db_live_req {
    struct db_live_req *prev, *next;
    base_db *db;
    int32_t id;
    uint64_t dbid;
    char token[96];
    int tries;
    bool in_store;
    struct event *ev;
} live_req;

static void live_drop(live_req *lr)
{
    base_db *db = lr->db;
    if (lr->prev)
        lr->prev->next = lr->next;
    else if (db->lives == lr)
        db->lives = lr->next;
    if (lr->next)
        lr->next->prev = lr->prev;
    if (lr->ev)
        event_free(lr->ev);
    free(lr);
}

void db_lives_free(base_db *db)
{
    while (db->lives)
        live_drop(db->lives);
}

/* The record still holds the check-out this request marks. */
static db_rec *live_rec(live_req *lr)
{
    db_rec *rec = db_rec_of(lr->db, lr->id);
    if (!rec || rec->dbid != lr->dbid || strcmp(rec->token, lr->token) != 0 || rec->fenced ||
        rec->gone)
        return NULL;
    return rec;
}

static void live_log(base_db *db, const live_req *lr, const char *what, const char *why)
{
    mc_time_us now = mc_clock_now_us();
    if (now - db->live_log_at < MC_US_PER_S) {
        db->live_log_quiet++;
        return;
    }
    const mc_entity_type_def *td = NULL;
    db_rec *rec = db_rec_of(db, lr->id);
    if (rec)
        td = mc_defs_type(mc_engine_defs(db->e), rec->type);
    char quiet[64] = "";
    if (db->live_log_quiet)
        snprintf(quiet, sizeof quiet, "; %llu more not logged",
                 (unsigned long long)db->live_log_quiet);
    MC_WARNING("persistence: marking %s %d (database id %llu) live failed: %s (%s)%s",
               td ? td->name : "entity", (int)lr->id, (unsigned long long)lr->dbid, why, what,
               quiet);
    db->live_log_at = now;
    db->live_log_quiet = 0;
}

static void live_send(live_req *lr);

static void on_live_retry(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    live_send(ctx);
}

static void live_failed(live_req *lr, const char *why)
{
    base_db *db = lr->db;
    if (!live_rec(lr) || db->shutting_down) {
        live_drop(lr);
        return;
    }
    if (++lr->tries >= LIVE_TRIES) {
        live_log(db, lr, "giving up: loaders wait for it and fail busy until it is released",
                 why);
        live_drop(lr);
        return;
    }
    live_log(db, lr, "retrying", why);
    if (!lr->ev)
        lr->ev = event_new(mc_server_event_base(mc_engine_server(db->e)), -1, 0, on_live_retry,
                           lr);
    uint32_t ms = LIVE_FIRST_MS << (lr->tries - 1);
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    if (!lr->ev || event_add(lr->ev, &tv) != 0) {
        live_log(db, lr, "giving up: cannot arm a timer", why);
        live_drop(lr);
    }
}

static void on_marked_live(void *ctx, const mc_persist_result *r)
{
    live_req *lr = ctx;
    base_db *db = lr->db;
    lr->in_store = false;
    if (r->status == MC_PERSIST_OK || r->status == MC_PERSIST_CLOSED) {
        live_drop(lr);
        return;
    }
    if (r->status == MC_PERSIST_FENCED) {
        /* Another check-out holds it now: this copy must not live on. */
        db_rec *rec = live_rec(lr);
        live_drop(lr);
        if (rec)
            fenced(db, rec);
        return;
    }
    char why[MC_REASON_MAX];
    snprintf(why, sizeof why, "%s: %s", mc_persist_status_name(r->status),
             r->reason ? r->reason : "");
    live_failed(lr, why);
}

static void live_send(live_req *lr)
{
    base_db *db = lr->db;
    int st;
    mc_persist_store *store = db_store(db, &st);
    db_rec *rec = live_rec(lr);
    mc_entity *ent = rec ? mc_engine_find(db->e, rec->id) : NULL;
    if (!store || !ent || ent->in_reap) {
        live_drop(lr);
        return;
    }
    if (db->fail_mark_live) {
        /* Rehearsal (db/faults/failMarkLive): this send is dropped as if Redis failed it. */
        db->fail_mark_live--;
        live_failed(lr, "dropped by db/faults/failMarkLive");
        return;
    }
    mc_mailbox_ref mb = mc_engine_mailbox(db->e, ent, MC_COMPONENT_BASE);
    uint8_t bytes[MC_MAILBOX_WIRE_SIZE];
    mc_server_mailbox_pack(&mb, bytes);
    lr->in_store = true;
    mc_persist_mark_live(store, ent->td, rec->dbid, rec->token, bytes, sizeof bytes,
                         on_marked_live, lr);
}

void db_mark_live(base_db *db, db_rec *rec)
{
    live_req *lr = calloc(1, sizeof *lr);
    if (!lr) {
        MC_ERROR("persistence: out of memory marking entity %d live", (int)rec->id);
        return;
    }
    lr->db = db;
    lr->id = rec->id;
    lr->dbid = rec->dbid;
    snprintf(lr->token, sizeof lr->token, "%s", rec->token);
    lr->next = db->lives;
    if (db->lives)
        db->lives->prev = lr;
    db->lives = lr;
    live_send(lr);
}

static void store_autoload(base_db *db, db_rec *rec)
{
    int st;
    mc_persist_store *store = db_store(db, &st);
    const mc_entity_type_def *td = mc_defs_type(mc_engine_defs(db->e), rec->type);
    if (!store || !td || !rec->dbid || rec->autoload == rec->autoload_stored)
        return;
    mc_persist_set_autoload(store, td, rec->dbid, rec->autoload, NULL, NULL);
    rec->autoload_stored = rec->autoload;
}

void db_store_autoload(base_db *db, db_rec *rec) { store_autoload(db, rec); }

static void on_created(void *ctx, const mc_persist_result *res)
{
    wreq *w = ctx;
    base_db *db = w->db;
    mc_persist_result lost;
    const mc_persist_result *r = db_fault_lose_won(db, res, &lost) ? &lost : res;
    db_rec *rec = db_rec_of(db, w->id);
    db_waiter *waiting = NULL;
    if (rec) {
        rec->creating = false;
        if (rec->inflight)
            rec->inflight--;
        waiting = rec->waiting;
        rec->waiting = NULL;
    }
    int status = db_call_status(r->status);
    if (r->status == MC_PERSIST_OK) {
        db->st.writes_ok++;
        w->dbid = r->dbid;
        snprintf(w->token, sizeof w->token, "%s", r->token ? r->token : "");
        if (rec) {
            db_rec_set_dbid(db, rec, r->dbid, r->token);
            const mc_entity_type_def *td = mc_defs_type(mc_engine_defs(db->e), rec->type);
            MC_INFO("%s %d has database id %llu", td ? td->name : "?", (int)rec->id,
                    (unsigned long long)r->dbid);
            if (!rec->gone) {
                db_mark_live(db, rec);
                store_autoload(db, rec);
            }
        }
    } else {
        db->st.writes_failed++;
        if (r->status != MC_PERSIST_CLOSED)
            db_log_failure(db, "the first write", w->type, w->id, r);
        /* The create may have landed (a new entity checked out by us, "loading") although
         * its answer did not come: the base here has no database id, so the token is given
         * back and that record stays loadable. */
        const mc_entity_type_def *td = mc_defs_type(mc_engine_defs(db->e), w->type);
        if (db_may_have_won(r->status) && r->dbid && r->token)
            db_give_back(db, td, r->dbid, r->token, "an abandoned create");
    }
    bool gone = rec && rec->gone;
    int32_t id = w->id;
    if (gone)
        db_end_gone(db, rec); /* destroyed meanwhile: delete or release it now */
    if (w->release_after && !gone && r->status == MC_PERSIST_OK)
        release_then_finish(w, status);
    else
        finish(w, status, w->dbid, r->reason);
    db_send_waiting(db, id, waiting, gone, r->status == MC_PERSIST_CLOSED);
}

void db_send_waiting(base_db *db, int32_t id, struct db_waiter *waiting, bool gone,
                     bool closed)
{
    /* Writes asked meanwhile go now (with the values the base has now). */
    while (waiting) {
        db_waiter *next = waiting->next;
        mc_entity *ent = gone ? NULL : mc_engine_find(db->e, id);
        int rc = MC_CALL_ERR_DESTROYED;
        if (closed)
            rc = MC_CALL_ERR_UNAVAILABLE;
        else if (ent && !ent->in_reap)
            rc = db_write(db, ent, waiting->release_after, waiting->done, waiting->ctx);
        if (rc != MC_CALL_OK && waiting->done)
            waiting->done(db->e, waiting->ctx, rc, 0, mc_call_status_name(rc));
        free(waiting);
        waiting = next;
    }
}

/* ---- db/faults/holdWrites: writes held back and sent late --------------------------------- */

/* A write held back by the rehearsal (db/faults/holdWrites): sent, with the serial and
 * values it had when it was made, only when db/faults/heldWrites is set to 0 - after newer
 * writes of the same check-out, as a write resent after a lost connection may arrive. */
typedef struct db_held {
    struct db_held *next;
    wreq *w;
    mc_persist_entity pe; /* values owned here */
    char token[96];
} db_held;

static void hold_write(base_db *db, const mc_persist_entity *pe, const char *token, wreq *w)
{
    db_held *h = calloc(1, sizeof *h);
    if (!h) {
        db_values_free(pe->type, (mc_value *)pe->values);
        on_written(w, &(mc_persist_result){.status = MC_PERSIST_QUEUE_FULL,
                                           .reason = "out of memory holding a write"});
        return;
    }
    h->w = w;
    h->pe = *pe;
    snprintf(h->token, sizeof h->token, "%s", token);
    db_held **tail = &db->held;
    while (*tail)
        tail = &(*tail)->next;
    *tail = h;
    MC_INFO("persistence: a write of %s %llu (serial %llu) is held back (db/faults/holdWrites)",
            pe->type->name, (unsigned long long)pe->dbid, (unsigned long long)pe->serial);
}

/* Send every held write now, in the order they were made (or fail them: no store). */
static void send_held(base_db *db)
{
    db_held *h = db->held;
    db->held = NULL;
    while (h) {
        db_held *next = h->next;
        int st;
        mc_persist_store *store = db_store(db, &st);
        if (store)
            mc_persist_write(store, &h->pe, h->token, on_written, h->w);
        else
            on_written(h->w, &(mc_persist_result){.status = MC_PERSIST_CLOSED,
                                                  .reason = "the process is shutting down"});
        db_values_free(h->pe.type, (mc_value *)h->pe.values);
        free(h);
        h = next;
    }
}

void db_held_free(base_db *db) { send_held(db); }

static void get_held(void *ctx, mc_watch_value *out)
{
    uint64_t n = 0;
    for (const db_held *h = ((base_db *)ctx)->held; h; h = h->next)
        n++;
    out->as.u = n;
}

static bool set_held(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    if (v->as.u != 0) {
        snprintf(why, whylen, "only 0 (send the held writes now) can be set");
        return false;
    }
    send_held(ctx);
    return true;
}

int db_add_fault_watchers(base_db *db, mc_watchers *w)
{
    int bad = mc_watch_add_uint(w, "db/faults/holdWrites", &db->fault_hold_writes,
                                MC_WATCH_READ_WRITE) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "db/faults/heldWrites", MC_WATCH_UINT, MC_WATCH_READ_WRITE, get_held,
                        set_held, db) != MC_WATCH_OK;
    return bad ? -1 : 0;
}

/* Hand the values to the store: the first write creates the entity's database record. */
static int submit(base_db *db, mc_entity *ent, db_rec *rec, wreq *w, mc_value *values,
                  const mc_persist_engine *eng)
{
    char why[MC_REASON_MAX];
    int st;
    mc_persist_store *store = db_store(db, &st);
    if (!store) {
        db_values_free(ent->td, values);
        return st;
    }
    if (!values) {
        values = calloc(ent->td->nprops + 1, sizeof *values);
        if (!values)
            return MC_CALL_ERR_BUSY;
        if (db_values_from_struct(db->e, ent, MC_PART_CELL, ent->cell_data, values, why,
                                  sizeof why) != 0) {
            MC_WARNING("persistence: %s %d: %s", ent->td->name, (int)ent->id, why);
            db_values_free(ent->td, values);
            return MC_CALL_ERR_ARGS;
        }
    }
    if (db_values_from_struct(db->e, ent, MC_PART_BASE, ent->props, values, why, sizeof why) !=
        0) {
        MC_WARNING("persistence: %s %d: %s", ent->td->name, (int)ent->id, why);
        db_values_free(ent->td, values);
        return MC_CALL_ERR_ARGS;
    }
    if (rec->dbid == 0 && rec->creating) {
        db_values_free(ent->td, values);
        db_waiter *wt = calloc(1, sizeof *wt);
        if (!wt)
            return MC_CALL_ERR_BUSY;
        wt->release_after = w->release_after;
        wt->done = w->done;
        wt->ctx = w->ctx;
        db_waiter **tail = &rec->waiting;
        while (*tail)
            tail = &(*tail)->next;
        *tail = wt;
        free(w);
        return MC_CALL_OK;
    }
    mc_persist_entity pe = {.type = ent->td, .dbid = rec->dbid, .values = values, .engine = *eng};
    if (rec->dbid)
        pe.serial = ++rec->write_serial; /* Redis applies none older than the last applied */
    db->st.writes++;
    rec->inflight++;
    w->dbid = rec->dbid;
    snprintf(w->token, sizeof w->token, "%s", rec->token);
    if (rec->dbid == 0) {
        rec->creating = true;
        mc_persist_create(store, &pe, on_created, w);
    } else {
        /* A last write (shutdown): loads elsewhere wait for the release from now on rather
         * than answer with a base that is about to go. */
        if (w->release_after)
            mc_persist_mark_live(store, ent->td, rec->dbid, rec->token, NULL, 0, NULL, NULL);
        if (db->fault_hold_writes && !w->release_after) {
            db->fault_hold_writes--;
            hold_write(db, &pe, rec->token, w); /* owns values from now on */
            return MC_CALL_OK;
        }
        mc_persist_write(store, &pe, rec->token, on_written, w);
    }
    db_values_free(ent->td, values);
    return MC_CALL_OK;
}

mc_persist_engine db_engine_fields(const mc_vector3 *pos, const mc_vector3 *dir,
                                       int64_t space)
{
    mc_persist_engine eng = {.position = {pos->x, pos->y, pos->z},
                             .direction = {dir->x, dir->y, dir->z},
                             .space_id = space};
    return eng;
}

static void on_fetched(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    wreq *w = ctx;
    base_db *db = w->db;
    char why[MC_REASON_MAX] = "";
    if (mc_engine_freeing(e)) {
        finish(w, MC_CALL_ERR_UNAVAILABLE, 0, "the process is shutting down");
        return;
    }
    mc_fetch_cell_head head;
    if (status == MC_CALL_OK && !mc_fetch_cell_reply_read(payload, &head, why, sizeof why)) {
        status = MC_CALL_ERR_ARGS;
        snprintf(why, sizeof why, "malformed answer to FETCH_CELL");
    } else if (status == MC_CALL_OK) {
        status = head.status;
    } else {
        snprintf(why, sizeof why, "its cell did not answer: %s", mc_call_status_name(status));
    }
    mc_entity *ent = mc_engine_find(e, w->id);
    db_rec *rec = db_rec_of(db, w->id);
    if (status == MC_CALL_OK && (!ent || ent->in_reap || !rec)) {
        status = MC_CALL_ERR_DESTROYED;
        snprintf(why, sizeof why, "destroyed before its cell answered");
    }
    if (status != MC_CALL_OK) {
        db->st.writes_failed++;
        MC_WARNING("persistence: cannot write entity %d: %s", (int)w->id, why);
        finish(w, status, rec ? rec->dbid : 0, why);
        return;
    }
    mc_value *values = calloc(ent->td->nprops + 1, sizeof *values);
    if (!values) {
        finish(w, MC_CALL_ERR_BUSY, rec->dbid, "out of memory");
        return;
    }
    if (db_values_from_stream(e, ent->td, MC_PART_CELL, payload, values, why, sizeof why) != 0) {
        db_values_free(ent->td, values);
        db->st.writes_failed++;
        MC_WARNING("persistence: %s %d: its cell's properties: %s", ent->td->name, (int)ent->id,
                   why);
        finish(w, MC_CALL_ERR_ARGS, rec->dbid, why);
        return;
    }
    rec->space_id = head.space_id;
    mc_persist_engine eng = db_engine_fields(&head.position, &head.direction, head.space_id);
    int rc = submit(db, ent, rec, w, values, &eng);
    if (rc != MC_CALL_OK)
        finish(w, rc, rec->dbid, mc_call_status_name(rc));
}

int db_write(base_db *db, mc_entity *ent, bool release_after, db_written_fn done, void *ctx)
{
    int st;
    if (!db_store(db, &st))
        return st;
    if (ent->part != MC_PART_BASE)
        return MC_CALL_ERR_STATE;
    db_rec *rec = db_rec_get(db, ent);
    if (!rec)
        return MC_CALL_ERR_BUSY;
    if (rec->fenced)
        return MC_CALL_ERR_STATE;
    wreq *w = calloc(1, sizeof *w);
    if (!w)
        return MC_CALL_ERR_BUSY;
    w->db = db;
    w->id = ent->id;
    w->type = ent->type;
    w->release_after = release_after;
    w->done = done;
    w->ctx = ctx;
    if (ent->cell_state == MC_CELL_LIVE) {
        mc_ostream os;
        mc_ostream_init(&os);
        mc_fetch_cell_encode(&os, ent->id);
        mc_address addr;
        mc_mailbox_address(&ent->cell, &addr);
        int rc = mc_engine_request(db->e, &addr, MC_MSG_FETCH_CELL, os.data, os.size,
                                   on_fetched, w);
        mc_ostream_free(&os);
        if (rc != MC_CALL_OK)
            free(w);
        return rc;
    }
    mc_persist_engine eng = db_engine_fields(&ent->cell_position, &ent->cell_direction,
                                          rec->space_id);
    int rc = submit(db, ent, rec, w, NULL, &eng);
    if (rc != MC_CALL_OK)
        free(w);
    return rc;
}
