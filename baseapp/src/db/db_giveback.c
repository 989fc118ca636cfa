/* Giving back check-outs that were abandoned: a load or a create whose check-out Redis may
 * have applied although the baseapp took it for failed (its answer timed out, or was lost),
 * or a load that won the check-out but could not create the base; and the release of a
 * destroyed base's check-out (db_release), retried the same way. While that baseapp lives,
 * such a check-out ("loading", owned by a live process) would make every later load of the
 * entity wait and fail BUSY; so the token is given back: released with that token (fenced:
 * a check-out won by anyone else since is left alone; one that never landed is already
 * "released"), retried after 200 ms, doubling, GB_TRIES times in all, as mark_live is. */
#include "db.h"
#include "common/clock.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GB_FIRST_MS 200
#define GB_TRIES 7

typedef struct db_giveback {
    struct db_giveback *prev, *next;
    base_db *db;
    const mc_entity_type_def *td;
    uint64_t dbid;
    char token[96];
    char what[48];       /* whose check-out: "an abandoned load", ... (logs) */
    bool released;       /* a base's own release (db/released), not a give-back */
    int tries;
    bool in_store;
    struct event *ev;
} db_giveback;

static void gb_drop(db_giveback *g)
{
    base_db *db = g->db;
    if (g->prev)
        g->prev->next = g->next;
    else if (db->givebacks == g)
        db->givebacks = g->next;
    if (g->next)
        g->next->prev = g->prev;
    if (g->ev)
        event_free(g->ev);
    free(g);
}

void db_givebacks_free(base_db *db)
{
    /* Only timers are left (the store, freed before, answered every request CLOSED). */
    while (db->givebacks)
        gb_drop(db->givebacks);
}

static void gb_send(db_giveback *g);

static void on_retry(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    gb_send(ctx);
}

static void gb_failed(db_giveback *g, const mc_persist_result *r)
{
    base_db *db = g->db;
    if (r->status != MC_PERSIST_CLOSED)
        db_log_failure(db, "giving back a check-out", g->td->id, 0, r);
    if (db->shutting_down || r->status == MC_PERSIST_CLOSED || ++g->tries >= GB_TRIES) {
        if (r->status != MC_PERSIST_CLOSED && !db->shutting_down)
            MC_WARNING("persistence: giving up giving back the check-out of %s %llu (%s): "
                       "loads elsewhere fail busy until it is released",
                       g->td->name, (unsigned long long)g->dbid, g->what);
        gb_drop(g);
        return;
    }
    if (!g->ev)
        g->ev = event_new(mc_server_event_base(mc_engine_server(db->e)), -1, 0, on_retry, g);
    uint32_t ms = GB_FIRST_MS << (g->tries - 1);
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    if (!g->ev || event_add(g->ev, &tv) != 0) {
        MC_WARNING("persistence: cannot arm a timer to give back the check-out of %s %llu",
                   g->td->name, (unsigned long long)g->dbid);
        gb_drop(g);
    }
}

static void on_given_back(void *ctx, const mc_persist_result *r)
{
    db_giveback *g = ctx;
    g->in_store = false;
    if (r->status == MC_PERSIST_OK || r->status == MC_PERSIST_FENCED) {
        /* OK: released (or it never landed); FENCED: another check-out holds it now. */
        if (r->status == MC_PERSIST_OK && g->released)
            g->db->st.released++;
        else if (r->status == MC_PERSIST_OK)
            g->db->st.given_back++;
        gb_drop(g);
        return;
    }
    gb_failed(g, r);
}

static void gb_send(db_giveback *g)
{
    int st;
    mc_persist_store *store = db_store(g->db, &st);
    if (!store) {
        gb_drop(g);
        return;
    }
    if (g->released && g->db->fault_fail_releases) {
        /* Rehearsal (db/faults/failReleases): this send is dropped as if Redis failed it. */
        g->db->fault_fail_releases--;
        gb_failed(g, &(mc_persist_result){.status = MC_PERSIST_UNAVAILABLE,
                                          .reason = "dropped by db/faults/failReleases"});
        return;
    }
    g->in_store = true;
    mc_persist_release(store, g->td, g->dbid, g->token, on_given_back, g);
}

bool db_may_have_won(mc_persist_status st)
{
    /* The request may have been applied: no answer in time, or an answer we could not
     * read. Every other failure was decided by Redis or before sending. */
    return st == MC_PERSIST_UNAVAILABLE || st == MC_PERSIST_REDIS || st == MC_PERSIST_BAD_DATA;
}

static void give_back(base_db *db, const mc_entity_type_def *td, uint64_t dbid,
                      const char *token, const char *what, bool released);

void db_give_back(base_db *db, const mc_entity_type_def *td, uint64_t dbid, const char *token,
                  const char *what)
{
    give_back(db, td, dbid, token, what, false);
}

void db_release(base_db *db, const mc_entity_type_def *td, uint64_t dbid, const char *token)
{
    /* A base's check-out released when it is destroyed: retried the same way (a release
     * lost would leave the entity held by this live process: every load of it BUSY). */
    give_back(db, td, dbid, token, "a destroyed base", true);
}

static void give_back(base_db *db, const mc_entity_type_def *td, uint64_t dbid,
                      const char *token, const char *what, bool released)
{
    if (!td || !dbid || !token || !*token)
        return; /* while shutting down: sent once, not retried (gb_failed) */
    db_giveback *g = calloc(1, sizeof *g);
    if (!g) {
        MC_ERROR("persistence: out of memory giving back the check-out of %s %llu",
                 td->name, (unsigned long long)dbid);
        return;
    }
    g->db = db;
    g->td = td;
    g->dbid = dbid;
    snprintf(g->token, sizeof g->token, "%s", token);
    snprintf(g->what, sizeof g->what, "%s", what ? what : "");
    g->released = released;
    g->next = db->givebacks;
    if (db->givebacks)
        db->givebacks->prev = g;
    db->givebacks = g;
    gb_send(g);
}

bool db_fault_lose_won(base_db *db, const mc_persist_result *r, mc_persist_result *lost)
{
    if (!db->fault_lose_won || r->status != MC_PERSIST_OK || !r->token)
        return false;
    db->fault_lose_won--;
    *lost = *r;
    lost->status = MC_PERSIST_UNAVAILABLE;
    lost->reason = "its answer was dropped by db/faults/loseWonAnswer";
    return true;
}
