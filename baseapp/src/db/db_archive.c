/* Archiving (every base with a database id written once per --archivePeriodS, a slice per
 * tick) and the last writes of a graceful shutdown (bounded by --shutdownWriteMs). */
#include "db.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- archiving ---------------------------------------------------------------------------- */

void db_archive_tick(base_db *db, uint64_t elapsed_ms)
{
    if (!db->archive_period_ms || !db->narchive)
        return;
    db->archive_carry += (double)db->narchive * (double)elapsed_ms / (double)db->archive_period_ms;
    size_t n = (size_t)db->archive_carry;
    db->archive_carry -= (double)n;
    if (n > db->narchive)
        n = db->narchive;
    for (size_t i = 0; i < n && db->narchive; i++) {
        if (db->archive_cursor >= db->narchive)
            db->archive_cursor = 0;
        int32_t id = db->archive[db->archive_cursor++];
        db_rec *rec = db_rec_of(db, id);
        mc_entity *ent = mc_engine_find(db->e, id);
        if (!rec || !ent || ent->in_reap || rec->inflight || rec->fenced || rec->creating ||
            (db->hooks.is_leaving && db->hooks.is_leaving(db->e, id))) /* on its way: its new home writes it */
            continue;
        if (db_write(db, ent, false, NULL, NULL) == MC_CALL_OK)
            db->st.archived++;
    }
}

/* ---- graceful shutdown ------------------------------------------------------------------ */

static void on_shutdown_written(mc_engine *e, void *ctx, int status, uint64_t dbid,
                                const char *reason)
{
    (void)e;
    (void)dbid;
    (void)reason;
    base_db *db = ctx;
    if (db->shutdown_outstanding)
        db->shutdown_outstanding--;
    if (status != MC_CALL_OK)
        db->shutdown_failed++;
}

void db_on_shutdown(mc_engine *e)
{
    base_db *db = base_db_of(e);
    int st;
    if (!db || !db_store(db, &st) || db->shutting_down)
        return;
    db->shutting_down = true;
    db->shutdown_started = mc_clock_now_us();
    size_t n = 0;
    for (size_t i = 0; i < db->narchive; i++) {
        db_rec *rec = db_rec_of(db, db->archive[i]);
        mc_entity *ent = mc_engine_find(e, db->archive[i]);
        if (!rec || !ent || ent->in_reap || rec->fenced || rec->creating)
            continue;
        if (db_write(db, ent, true, on_shutdown_written, db) == MC_CALL_OK) {
            db->shutdown_outstanding++;
            n++;
        }
    }
    /* Bases whose first write (create) is in flight have no database id yet: their last
     * write waits for the create (db_write queues it) and then releases; counted alike, so
     * the process does not exit before they are answered. (Writing changes neither map.) */
    size_t creating = 0;
    size_t pos = 0;
    for (db_rec *rec; (rec = mc_map_next(&db->by_id, &pos));) {
        if (!rec->creating || rec->gone || rec->fenced || rec->dbid)
            continue;
        mc_entity *ent = mc_engine_find(e, rec->id);
        if (!ent || ent->in_reap)
            continue;
        if (db_write(db, ent, true, on_shutdown_written, db) == MC_CALL_OK) {
            db->shutdown_outstanding++;
            n++;
            creating++;
        }
    }
    MC_INFO("persistence: shutting down: writing %zu entities and releasing them (%zu of them "
            "after their first write, in flight)",
            n, creating);
}

static void on_drain_check(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    base_db *db = ctx;
    mc_time_us waited = mc_clock_now_us() - db->shutdown_started;
    if (db->shutdown_outstanding == 0 || waited > db->shutdown_write_ms * MC_US_PER_MS)
        event_base_loopexit(mc_server_event_base(mc_engine_server(db->e)), NULL);
}

void db_after_run(mc_engine *e)
{
    base_db *db = base_db_of(e);
    if (!db || !db->shutting_down)
        return;
    if (db->shutdown_outstanding) {
        struct event_base *base = mc_server_event_base(mc_engine_server(e));
        struct event *ev = event_new(base, -1, EV_PERSIST, on_drain_check, db);
        struct timeval tv = {0, 20 * 1000};
        if (ev && event_add(ev, &tv) == 0)
            event_base_dispatch(base);
        if (ev)
            event_free(ev);
    }
    double ms = (double)(mc_clock_now_us() - db->shutdown_started) / 1000.0;
    if (db->shutdown_outstanding)
        MC_WARNING("persistence: shutdown: gave up after %.0f ms with %zu writes unanswered "
                   "(%zu failed)",
                   ms, db->shutdown_outstanding, db->shutdown_failed);
    else if (db->shutdown_failed)
        MC_WARNING("persistence: shutdown: %zu last writes failed (%.0f ms)", db->shutdown_failed,
                   ms);
    else
        MC_INFO("persistence: shutdown: every entity written and released (%.0f ms)", ms);
}
