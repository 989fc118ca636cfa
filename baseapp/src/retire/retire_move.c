/* One base's move off a retiring baseapp (retire.h, retire_internal.h): frozen (its state
 * taken, timers stopped, client told to resume elsewhere, names deregistered, calls held in
 * order), sent as OFFLOAD_BASE to its backup on the ring (again while unanswered), then gone
 * (waiting calls sent on, the copy here dropped without a word, later calls sent on to its
 * new home) or, refused, thawed. */
#include "backup/backup.h"
#include "clients/client_sessions.h"
#include "db/db.h"
#include "common/log.h"
#include "entity/backup_wire.h"
#include "entity/wire.h"
#include "clients/proxy.h"
#include "retire_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- calls ---------------------------------------------------------------------------- */

void retire_relay_to(mc_engine *e, const mc_address *home, const mc_origin *o,
                     const mc_call_header *h, const uint8_t *args, size_t len)
{
    mc_mailbox_ref to = {.id = h->entity_id, .ip = home->ip, .port = home->port,
                         .salt = h->salt};
    mc_engine_relay(e, o, &to, h->method, h->caller_id, args, len);
}

/* What arrives for a base on its way waits (in order); for one gone it is sent on now. */
static bool take_item(base_retire *r, retire_item_kind kind, uint8_t msg, const mc_origin *o,
                      const mc_call_header *h, int32_t id, const uint8_t *data, size_t len)
{
    mc_engine *e = r->e;
    retire_gone *gone = mc_map_get(&r->moved, (uint64_t)id, 0);
    if (gone && gone->retarget) { /* its new home died: it waits to be sent again */
        if (!retire_enqueue(r, &gone->q, kind, msg, o, h, id, data, len))
            goto busy;
        r->st.waited++;
        return true;
    }
    mc_address *home = gone ? &gone->home : NULL;
    if (home) {
        retire_call c = {.kind = kind, .msg = msg};
        if (o)
            c.origin = *o;
        if (h)
            c.header = *h;
        c.header.entity_id = id;
        retire_call *full = malloc(sizeof c + len);
        if (!full)
            goto busy;
        *full = c;
        full->len = len;
        if (len)
            memcpy(full->args, data, len);
        if (r->phase == R_STOPPING || (r->phase == R_HANDOVER && r->handover_step >= 3))
            r->st.late++; /* after RETIRE_END (step 3): from a late peer, held for at the
                           * new home until its stream ended (RETIRE_SENDER_END) */
        retire_pass_item(r, home, full);
        free(full);
        return true;
    }
    retire_move *m = mc_map_get(&r->moving, (uint64_t)id, 0);
    if (!m)
        return false;
    if (!retire_enqueue(r, &m->q, kind, msg, o, h, id, data, len))
        goto busy;
    r->st.waited++;
    return true;
busy:
    r->st.refused_calls++;
    if (o)
        mc_engine_refuse(e, o, MC_REFUSE_QUEUE_FULL, MC_CALL_ERR_BUSY,
                         "entity %d is moving to another baseapp and %llu calls wait already",
                         (int)id, (unsigned long long)r->nwaiting);
    return true;
}

bool retire_take_call(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                      const uint8_t *args, size_t len)
{
    base_retire *r = retire_of(e);
    if (!r)
        return false;
    if ((r->nmoving || r->nmoved_map) &&
        take_item(r, RI_CALL, 0, o, h, h->entity_id, args, len))
        return true;
    /* a base taken from a retiring baseapp: what comes straight here waits for its stream */
    if ((r->nheld || r->lags.n) && retire_hold_take(r, RI_CALL, 0, o, h, h->entity_id, args, len))
        return true;
    /* a retired baseapp's base living elsewhere than its pick on the ring: sent there */
    mc_address *home = r->nhomes ? mc_map_get(&r->homes, (uint64_t)h->entity_id, 0) : NULL;
    if (home && !mc_engine_find(e, h->entity_id)) {
        r->st.homes_forwarded++;
        retire_relay_to(e, home, o, h, args, len);
        return true;
    }
    return false;
}

bool retire_take_cell_msg(mc_engine *e, const mc_origin *o, uint8_t msg, int32_t id,
                          const uint8_t *data, size_t len)
{
    base_retire *r = retire_of(e);
    if (!r)
        return false;
    if ((r->nmoving || r->nmoved_map) && take_item(r, RI_CELL_MSG, msg, o, NULL, id, data, len))
        return true;
    /* the new home holds what the cell sends straight to it, but its client's world updates
     * (the client resumes later, and its witness then tells it everything afresh) */
    return (r->nheld || r->lags.n) && msg != MC_MSG_CLIENT_UPDATE &&
           retire_hold_take(r, RI_CELL_MSG, msg, o, NULL, id, data, len);
}

void retire_take_client_call(mc_engine *e, int32_t id, mc_part part, const uint8_t *data,
                             size_t len)
{
    base_retire *r = retire_of(e);
    if (r && take_item(r, RI_CLIENT_CALL, (uint8_t)part, NULL, NULL, id, data, len)) {
        r->st.client_calls++;
        return;
    }
    /* neither on its way nor gone (thawed: it stays, its client went): run here */
    mc_entity *ent = mc_engine_find(e, id);
    char why[MC_REASON_MAX];
    if (ent && ent->part == MC_PART_BASE && !ent->in_reap &&
        proxy_run_client_call(e, ent, part, data, len, why, sizeof why) >= 0)
        MC_INFO("entity %d: a call of its departed client refused: %s", (int)id, why);
}

bool retire_is_leaving(mc_engine *e, int32_t id)
{
    base_retire *r = retire_of(e);
    return r && (mc_map_get(&r->moving, (uint64_t)id, 0) || mc_map_get(&r->moved, (uint64_t)id, 0));
}

bool retire_quiet_destroy(mc_engine *e, mc_entity *ent)
{
    base_retire *r = retire_of(e);
    if (!r || !mc_map_get(&r->moved, (uint64_t)ent->id, 0))
        return false;
    /* its check-out is its new home's: no last write, no release */
    base_db *db = base_db_of(e);
    db_rec *rec = db_rec_of(db, ent->id);
    if (rec)
        db_rec_drop(db, rec);
    return true;
}

/* ---- one base's move ------------------------------------------------------------------- */

static void free_move(base_retire *r, retire_move *m)
{
    retire_queue_free(r, &m->q);
    mc_map_remove(&r->moving, (uint64_t)m->id, 0);
    r->nmoving--;
    for (size_t i = 0; i < m->nnames; i++)
        free(m->names[i]);
    free(m->names);
    free(m->timers);
    free(m->payload);
    free(m);
}

/* Thaw a base whose move failed: it stays here. */
static void thaw(base_retire *r, retire_move *m, const char *why)
{
    mc_engine *e = r->e;
    r->st.failed++;
    retire_queue q = m->q;
    m->q = (retire_queue){0};
    mc_entity *ent = mc_engine_find(e, m->id);
    if (retire_log_allowed(r->st.failed))
        MC_WARNING("%s %d stays here for now: its move failed: %s", ent ? ent->td->name : "base",
                   (int)m->id, why);
    if (ent) {
        for (size_t i = 0; i < m->ntimers; i++)
            mc_engine_import_timer(e, ent, &m->timers[i]);
        for (size_t i = 0; i < m->nnames; i++)
            base_globals_register_restored(e, ent, m->names[i]);
    }
    free_move(r, m);
    retire_queue_run(r, &q);
}

static void send_offload(base_retire *r, retire_move *m);
static void gone_again(base_retire *r, retire_move *m, const char *why);

static void on_offloaded(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    int32_t id = (int32_t)(intptr_t)ctx;
    base_retire *r = retire_of(e);
    retire_move *m = r ? mc_map_get(&r->moving, (uint64_t)id, 0) : NULL;
    if (!m)
        return;
    int st = status;
    char why[MC_REASON_MAX + 1] = "";
    if (st == MC_CALL_OK && (!payload || !mc_call_reply_read(payload, &st, why, sizeof why)))
        st = MC_CALL_ERR_ARGS, snprintf(why, sizeof why, "a malformed answer");
    if (st == MC_CALL_ERR_TIMEOUT || st == MC_CALL_ERR_BUSY) {
        /* unanswered, or the new home is still taking it over: it may live there already,
         * so it is never thawed here for this; asked again (the new home answers OK for a
         * base it took from us) */
        r->st.resent++;
        if (retire_log_allowed(r->st.resent))
            MC_WARNING("entity %d: OFFLOAD_BASE %s (try %u): sent again", (int)id,
                       mc_call_status_name(st), m->tries);
        send_offload(r, m);
        return;
    }
    if (st != MC_CALL_OK) {
        if (st == MC_CALL_ERR_PROCESS_DEAD)
            r->st.retargeted++; /* its target died: the next wave picks a live one */
        char text[MC_REASON_MAX + 64];
        snprintf(text, sizeof text, "%s%s%s", mc_call_status_name(st), why[0] ? ": " : "", why);
        if (m->retarget)
            gone_again(r, m, text); /* nothing here to thaw: tried again later */
        else
            thaw(r, m, text);
        return;
    }
    /* it lives at its new home: calls go there from now on, the waiting ones first */
    retire_gone *g = calloc(1, sizeof *g);
    if (g) {
        g->home = m->to;
        g->payload = m->payload;
        g->len = m->len;
        m->payload = NULL; /* kept with it */
        if (!mc_map_put(&r->moved, (uint64_t)id, 0, g)) {
            free(g->payload);
            free(g);
        } else {
            r->nmoved_map++;
        }
    }
    r->st.offloaded++;
    r->st.bytes += m->bytes;
    retire_queue q = m->q;
    m->q = (retire_queue){0};
    mc_address to = m->to;
    free_move(r, m);
    retire_queue_send(r, &q, &to);
    mc_entity *ent = mc_engine_find(e, id);
    if (ent && !ent->in_reap) {
        char a[MC_ADDRESS_STRLEN];
        MC_INFO("%s %d offloaded to %s", ent->td->name, (int)id,
                mc_address_format(&to, a, sizeof a));
        mc_engine_discard_entity(e, ent); /* quietly (retire_quiet_destroy) */
    }
}

static void send_offload(base_retire *r, retire_move *m)
{
    m->tries++;
    int rc = mc_engine_request(r->e, &m->to, MC_MSG_OFFLOAD_BASE, m->payload, m->len,
                               on_offloaded, (void *)(intptr_t)m->id);
    if (rc != MC_CALL_OK) {
        if (rc == MC_CALL_ERR_PROCESS_DEAD)
            r->st.retargeted++;
        if (m->retarget)
            gone_again(r, m, mc_call_status_name(rc));
        else
            thaw(r, m, mc_call_status_name(rc));
    }
}

/* ---- a new home that died ------------------------------------------------------------- */

static void drop_gone(base_retire *r, int32_t id, retire_gone *g)
{
    mc_map_remove(&r->moved, (uint64_t)id, 0);
    r->nmoved_map--;
    if (g->retarget)
        r->nretarget--;
    retire_queue_free(r, &g->q);
    free(g->payload);
    free(g);
}

void retire_home_died(base_retire *r, const mc_address *home)
{
    size_t pos = 0;
    uint64_t key, unused;
    retire_gone *g;
    size_t n = 0;
    while ((g = mc_map_next_key(&r->moved, &pos, &key, &unused)))
        if (!g->retarget && mc_address_equal(&g->home, home) && g->payload) {
            g->retarget = true;
            r->nretarget++;
            n++;
        }
    if (n) {
        char a[MC_ADDRESS_STRLEN];
        MC_WARNING("retiring: %s died with %zu of the bases we sent it: sending them again",
                   mc_address_format(home, a, sizeof a), n);
    }
}

/* A re-target that did not land: tried again at a later wave, at most RETIRE_RETARGET_MAX
 * times (then lost, logged). */
static void gone_again(base_retire *r, retire_move *m, const char *why)
{
    int32_t id = m->id;
    unsigned attempts = m->attempts;
    retire_gone *g = calloc(1, sizeof *g);
    if (g && attempts < RETIRE_RETARGET_MAX) {
        g->home = m->to;
        g->payload = m->payload;
        g->len = m->len;
        g->retarget = true;
        g->attempts = attempts;
        m->payload = NULL;
        if (mc_map_put(&r->moved, (uint64_t)id, 0, g)) {
            r->nmoved_map++;
            r->nretarget++;
            g->q = m->q; /* what came meanwhile goes with it next time */
            m->q = (retire_queue){0};
            free_move(r, m);
            return;
        }
        free(g->payload);
    }
    free(g);
    r->st.failed++;
    MC_ERROR("entity %d is lost: sending it again after its new home died failed %u times "
             "(%s)", (int)id, attempts, why);
    free_move(r, m);
}

size_t retire_retarget_wave(base_retire *r)
{
    mc_engine *e = r->e;
    size_t started = 0, pos = 0;
    uint64_t key, unused;
    retire_gone *g;
    int32_t *ids = r->nretarget ? malloc(r->nretarget * sizeof *ids) : NULL;
    size_t n = 0;
    while (ids && n < r->nretarget && (g = mc_map_next_key(&r->moved, &pos, &key, &unused)))
        if (g->retarget)
            ids[n++] = (int32_t)key;
    for (size_t i = 0; i < n && r->nmoving < r->in_flight_max; i++) {
        g = mc_map_get(&r->moved, (uint64_t)ids[i], 0);
        mc_address to;
        if (!g || !mc_backup_ring_pick(mc_server_backup_ring(mc_engine_server(e)), ids[i],
                                       mc_engine_address(e), &to) ||
            !mc_server_peer_is_live(mc_engine_server(e), &to, MC_ROLE_BASEAPP))
            continue; /* no live baseapp on the ring yet */
        retire_move *m = calloc(1, sizeof *m);
        if (!m || !mc_map_put(&r->moving, (uint64_t)ids[i], 0, m)) {
            free(m);
            continue;
        }
        m->id = ids[i];
        m->to = to;
        m->payload = g->payload;
        m->len = m->bytes = g->len;
        m->gen = ++r->gen;
        m->retarget = true;
        m->attempts = g->attempts + 1;
        m->q = g->q;
        g->q = (retire_queue){0};
        g->payload = NULL;
        drop_gone(r, ids[i], g);
        r->nmoving++;
        started++;
        send_offload(r, m);
    }
    free(ids);
    return started;
}

/* Whether a base can leave now: not being created, destroyed, given a cell or written, and
 * no client on its way to it or within its grace time to resume here. */
bool retire_movable(base_retire *r, mc_entity *ent)
{
    if (ent->destroying || ent->in_reap || ent->part != MC_PART_BASE)
        return false;
    if (ent->cell_state != MC_CELL_NONE && ent->cell_state != MC_CELL_LIVE)
        return false;
    base_db *db = base_db_of(r->e);
    db_rec *rec = db_rec_of(db, ent->id);
    if (rec && (rec->creating || rec->fenced || rec->evict || rec->inflight || rec->waiting))
        return false;
    /* a client is on its way here with a session for it (a login or a resumption under
     * way), or its channel died and it may still resume here: it goes once that client
     * came (or its session or grace ran out) */
    if ((base_sessions_of(r->e) && base_sessions_has_entity(base_sessions_of(r->e), ent->id)) ||
        proxy_in_grace(r->e, ent->id))
        return false;
    return true;
}

/* Its global names are deregistered (the new home registers them again once they are):
 * OFFLOAD_BASE goes when every deregistration is answered. */
typedef struct {
    int32_t id;
    uint64_t gen;
} name_ask;

static void names_cancel(mc_engine *e, void *ctx)
{
    (void)e;
    free(ctx);
}

static void on_name_dropped(mc_server *s, void *ctx, mc_global_status st,
                            const mc_mailbox_ref *mb, const char *reason)
{
    (void)s;
    (void)st;
    (void)mb;
    (void)reason;
    name_ask *a = mc_engine_wait_ctx(ctx);
    mc_engine *e = mc_engine_wait_end(ctx);
    name_ask copy = *a;
    free(a);
    if (!e)
        return;
    base_retire *r = retire_of(e);
    retire_move *m = r ? mc_map_get(&r->moving, (uint64_t)copy.id, 0) : NULL;
    if (!m || m->gen != copy.gen || !m->names_pending)
        return;
    if (--m->names_pending == 0)
        send_offload(r, m);
}

static void hand_names_over(base_retire *r, retire_move *m, mc_entity *ent)
{
    mc_engine *e = r->e;
    mc_server *s = mc_engine_server(e);
    mc_mailbox_ref mb = mc_engine_mailbox(e, ent, MC_COMPONENT_BASE);
    if (ent->nglobal_names && (m->names = calloc(ent->nglobal_names, sizeof *m->names))) {
        for (size_t i = 0; i < ent->nglobal_names; i++)
            if ((m->names[m->nnames] = strdup(ent->global_names[i])))
                m->nnames++;
    }
    for (size_t i = 0; i < ent->nglobal_names; i++) {
        name_ask *a = malloc(sizeof *a);
        mc_engine_wait *w = a ? mc_engine_wait_new(e, names_cancel, a) : NULL;
        if (!w) {
            free(a);
        } else {
            a->id = ent->id;
            a->gen = m->gen;
            if (mc_server_global_deregister(s, ent->global_names[i], &mb, on_name_dropped, w) ==
                0)
                m->names_pending++;
            else {
                mc_engine_wait_drop(w);
                free(a);
            }
        }
        free(ent->global_names[i]);
    }
    free(ent->global_names);
    ent->global_names = NULL;
    ent->nglobal_names = 0;
}

/* Start one base's move: the bytes it sends (0: not now). */
size_t retire_start_move(base_retire *r, mc_entity *ent)
{
    mc_engine *e = r->e;
    mc_address to;
    if (!mc_backup_ring_pick(mc_server_backup_ring(mc_engine_server(e)), ent->id,
                             mc_engine_address(e), &to)) {
        r->st.no_target++;
        return 0;
    }
    mc_ostream state;
    mc_ostream_init(&state);
    if (backup_encode_live(e, ent, &state) != MC_CALL_OK) {
        mc_ostream_free(&state);
        return 0;
    }
    mc_ostream os;
    mc_ostream_init(&os);
    mc_write_string(&os, mc_server_name(mc_engine_server(e)));
    mc_write_bytes(&os, state.data, state.size);
    mc_ostream_free(&state);
    retire_move *m = calloc(1, sizeof *m);
    uint8_t *payload = mc_ostream_ok(&os) ? malloc(os.size) : NULL;
    if (!m || !payload || !mc_map_put(&r->moving, (uint64_t)ent->id, 0, m)) {
        free(m);
        free(payload);
        mc_ostream_free(&os);
        return 0;
    }
    memcpy(payload, os.data, os.size);
    r->nmoving++;
    m->id = ent->id;
    m->to = to;
    m->bytes = m->len = os.size;
    m->payload = payload;
    m->gen = ++r->gen;
    mc_ostream_free(&os);
    /* frozen: its timers stop here (they travel in the state) */
    size_t cap = ent->ntimers < RETIRE_TIMERS_MAX ? ent->ntimers : RETIRE_TIMERS_MAX;
    if (cap && (m->timers = malloc(cap * sizeof *m->timers)))
        m->ntimers = mc_engine_export_timers(e, ent, m->timers, cap);
    /* its client resumes at the new home once the base is there (the loginapp asks every
     * baseapp, and this one says "not here" from now on) */
    if (proxy_send_to_resume(e, ent->id))
        r->st.clients++;
    size_t bytes = m->bytes;
    hand_names_over(r, m, ent);
    if (!m->names_pending)
        send_offload(r, m); /* (may thaw it: m is gone then) */
    return bytes;
}

void retire_moves_free(base_retire *r)
{
    size_t pos = 0;
    retire_move *m;
    while ((m = mc_map_next(&r->moving, &pos))) {
        retire_queue_free(r, &m->q);
        for (size_t j = 0; j < m->nnames; j++)
            free(m->names[j]);
        free(m->names);
        free(m->timers);
        free(m->payload);
        free(m);
    }
    mc_map_free(&r->moving);
    void *v;
    pos = 0;
    while ((v = mc_map_next(&r->moved, &pos))) {
        retire_queue_free(r, &((retire_gone *)v)->q);
        free(((retire_gone *)v)->payload);
        free(v);
    }
    mc_map_free(&r->moved);
}
