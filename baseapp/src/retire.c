/* Retiring this baseapp: command/retire, the waves of offloads, the calls that wait for a
 * base on its way or are sent on to its new home, the graceful stop (retire.h). */
#include "retire.h"
#include "backup.h"
#include "base_db.h"
#include "common/log.h"
#include "common/map.h"
#include "entity/backup_wire.h"
#include "proxy.h"
#include "server/pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RETIRE_TICK_MS 50
#define RETIRE_WAIT_MAX 100000 /* calls waiting for bases on their way, at most */
#define RETIRE_TIMERS_MAX 1024

typedef enum { R_IDLE, R_MARKING, R_MOVING, R_LINGER, R_STOPPING } retire_phase;
static const char *const phase_names[] = {"idle", "marking", "moving", "lingering",
                                          "stopping"};

typedef struct retire_call {
    struct retire_call *next;
    mc_origin origin;
    mc_call_header header;
    size_t len;
    uint8_t args[];
} retire_call;

/* A base on its way (frozen here). */
typedef struct {
    int32_t id;
    mc_address to;
    size_t bytes;
    retire_call *head, *tail;
    size_t ncalls;
    mc_timer_export *timers; /* taken out of the engine while it is away */
    size_t ntimers;
    char **names;            /* its global names (registered again if it stays) */
    size_t nnames;
    size_t names_pending;    /* deregistrations not answered yet: OFFLOAD_BASE waits */
    uint64_t gen;            /* which move of this id (stale answers are ignored) */
    unsigned tries;          /* OFFLOAD_BASE sent so far (resent while unanswered) */
    uint8_t *payload;        /* the OFFLOAD_BASE payload (the frozen state) */
    size_t len;
} retire_move;

typedef struct base_retire {
    mc_engine *e;
    retire_phase phase;
    uint64_t bytes_per_sec, in_flight_max, linger_ms;
    struct event *tick_ev;
    mc_map moving;           /* id -> retire_move */
    mc_map moved;            /* id -> mc_address (its new home) */
    mc_map taken;            /* receiving side: id -> mc_address of the baseapp it came from */
    uint64_t gen;
    uint64_t nmoving, nmoved_map, nwaiting;
    double budget;
    mc_time_us last_tick, linger_until;
    uint64_t started_at_ms;
    struct {
        uint64_t offloaded, failed, bytes, forwarded, waited, refused_calls, clients,
            no_target, waves, received, receive_refused, resent;
    } st;
} base_retire;

static base_retire *retire_of(mc_engine *e)
{
    base_db *db = base_db_of(e);
    return db ? db->retire : NULL;
}

static bool log_allowed(uint64_t n) { return n <= 10 || n % 1000 == 0; }

static size_t live_count(mc_engine *e) { return mc_engine_table(e)->count; }

/* ---- calls ---------------------------------------------------------------------------- */

static void relay_to(mc_engine *e, const mc_address *home, const mc_origin *o,
                     const mc_call_header *h, const uint8_t *args, size_t len)
{
    mc_mailbox_ref to = {.id = h->entity_id, .ip = home->ip, .port = home->port,
                         .salt = h->salt};
    mc_engine_relay(e, o, &to, h->method, h->caller_id, args, len);
}

bool retire_take_call(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                      const uint8_t *args, size_t len)
{
    base_retire *r = retire_of(e);
    if (!r || (!r->nmoving && !r->nmoved_map))
        return false;
    mc_address *home = mc_map_get(&r->moved, (uint64_t)h->entity_id, 0);
    if (home) {
        r->st.forwarded++;
        relay_to(e, home, o, h, args, len);
        return true;
    }
    retire_move *m = mc_map_get(&r->moving, (uint64_t)h->entity_id, 0);
    if (!m)
        return false;
    if (r->nwaiting >= RETIRE_WAIT_MAX) {
        r->st.refused_calls++;
        mc_engine_refuse(e, o, MC_REFUSE_QUEUE_FULL, MC_CALL_ERR_BUSY,
                         "entity %d is moving to another baseapp and %llu calls wait already",
                         (int)h->entity_id, (unsigned long long)r->nwaiting);
        return true;
    }
    retire_call *c = malloc(sizeof *c + len);
    if (!c) {
        r->st.refused_calls++;
        mc_engine_refuse(e, o, MC_REFUSE_QUEUE_FULL, MC_CALL_ERR_BUSY, "out of memory");
        return true;
    }
    c->next = NULL;
    c->origin = *o;
    c->header = *h;
    c->len = len;
    if (len)
        memcpy(c->args, args, len);
    if (m->tail)
        m->tail->next = c;
    else
        m->head = c;
    m->tail = c;
    m->ncalls++;
    r->nwaiting++;
    r->st.waited++;
    return true;
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
    retire_call *list = m->head;
    m->head = m->tail = NULL;
    r->nwaiting -= m->ncalls;
    mc_entity *ent = mc_engine_find(e, m->id);
    if (log_allowed(r->st.failed))
        MC_WARNING("%s %d stays here for now: its move failed: %s", ent ? ent->td->name : "base",
                   (int)m->id, why);
    if (ent) {
        for (size_t i = 0; i < m->ntimers; i++)
            mc_engine_import_timer(e, ent, &m->timers[i]);
        for (size_t i = 0; i < m->nnames; i++)
            base_globals_register_restored(e, ent, m->names[i]);
    }
    free_move(r, m);
    while (list) {
        retire_call *c = list;
        list = c->next;
        base_on_call(e, &c->origin, &c->header, c->args, c->len);
        free(c);
    }
}

static void send_offload(base_retire *r, retire_move *m);

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
        if (log_allowed(r->st.resent))
            MC_WARNING("entity %d: OFFLOAD_BASE %s (try %u): sent again", (int)id,
                       mc_call_status_name(st), m->tries);
        send_offload(r, m);
        return;
    }
    if (st != MC_CALL_OK) {
        char text[MC_REASON_MAX + 64];
        snprintf(text, sizeof text, "%s%s%s", mc_call_status_name(st), why[0] ? ": " : "", why);
        thaw(r, m, text);
        return;
    }
    /* it lives at its new home: calls go there from now on, the waiting ones first */
    mc_address *home = malloc(sizeof *home);
    if (home) {
        *home = m->to;
        if (!mc_map_put(&r->moved, (uint64_t)id, 0, home))
            free(home);
        else
            r->nmoved_map++;
    }
    r->st.offloaded++;
    r->st.bytes += m->bytes;
    retire_call *list = m->head;
    m->head = m->tail = NULL;
    r->nwaiting -= m->ncalls;
    mc_address to = m->to;
    free_move(r, m);
    while (list) {
        retire_call *c = list;
        list = c->next;
        r->st.forwarded++;
        relay_to(e, &to, &c->origin, &c->header, c->args, c->len);
        free(c);
    }
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
    if (rc != MC_CALL_OK)
        thaw(r, m, mc_call_status_name(rc));
}

/* Whether a base can leave now: not being created, destroyed, given a cell or written, and
 * no client on its way to it or within its grace time to resume here. */
static bool movable(base_retire *r, mc_entity *ent)
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
    if ((db->sessions && base_sessions_has_entity(db->sessions, ent->id)) ||
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
static size_t start_move(base_retire *r, mc_entity *ent)
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

/* ---- the waves --------------------------------------------------------------------------- */

static void wave(base_retire *r, mc_time_us now)
{
    mc_engine *e = r->e;
    double dt = r->last_tick ? (double)(now - r->last_tick) / 1e6 : 0;
    r->last_tick = now;
    r->budget += dt * (double)r->bytes_per_sec;
    if (r->budget > (double)r->bytes_per_sec)
        r->budget = (double)r->bytes_per_sec;
    size_t n = 0;
    mc_entity **all = mc_entity_table_snapshot(mc_engine_table(e), &n);
    if (!all && n)
        return;
    size_t left = 0, started = 0;
    for (size_t i = 0; i < n; i++) {
        mc_entity *ent = all[i];
        if (ent->part != MC_PART_BASE || mc_map_get(&r->moving, (uint64_t)ent->id, 0))
            continue;
        left++;
        if (r->budget <= 0 || r->nmoving >= r->in_flight_max || !movable(r, ent))
            continue;
        size_t bytes = start_move(r, ent);
        if (bytes) {
            r->budget -= (double)bytes;
            started++;
        }
    }
    free(all);
    if (started)
        r->st.waves++;
    if (!left && !r->nmoving) {
        r->phase = R_LINGER;
        r->linger_until = now + r->linger_ms * MC_US_PER_MS;
        MC_WARNING("retiring: every base is offloaded (%llu); sending calls on for %llu ms, "
                   "then stopping", (unsigned long long)r->st.offloaded,
                   (unsigned long long)r->linger_ms);
    }
}

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    base_retire *r = ctx;
    mc_time_us now = mc_clock_now_us();
    if (r->phase == R_MOVING) {
        wave(r, now);
    } else if (r->phase == R_LINGER) {
        if (live_count(r->e)) {
            r->phase = R_MOVING; /* a base was made here meanwhile: it goes too */
        } else if (now >= r->linger_until) {
            r->phase = R_STOPPING;
            mc_server_shutdown(mc_engine_server(r->e), "retired: every base offloaded");
        }
    }
}

/* ---- command/retire ----------------------------------------------------------------------- */

typedef struct {
    mc_engine_wait *wait;
    mc_watch_done *done;
} retire_ask;

static void ask_cancel(mc_engine *e, void *ctx)
{
    (void)e;
    retire_ask *a = ctx;
    mc_watch_complete(a->done, false, NULL, "the baseapp is going");
    free(a);
}

static void on_marked(mc_server *s, void *ctx, const Mc__Control__WatcherReply *reply)
{
    (void)s;
    mc_engine_wait *w = ctx;
    retire_ask *a = mc_engine_wait_ctx(w);
    mc_engine *e = mc_engine_wait_end(w);
    if (!e)
        return;
    base_retire *r = retire_of(e);
    if (!reply || reply->status != MC__CONTROL__WATCHER_STATUS__WS_OK) {
        char why[300];
        snprintf(why, sizeof why, "the manager did not mark it retiring: %s",
                 !reply ? "no answer" : reply->error && *reply->error ? reply->error
                                                                     : "refused");
        if (r)
            r->phase = R_IDLE;
        mc_watch_complete(a->done, false, NULL, why);
        free(a);
        return;
    }
    char text[200];
    snprintf(text, sizeof text, "retiring: %zu bases to offload", live_count(e));
    if (r && r->phase == R_MARKING) {
        r->phase = R_MOVING;
        r->last_tick = mc_clock_now_us();
        r->budget = 0;
        MC_WARNING("%s", text);
    }
    mc_watch_complete(a->done, true, text, NULL);
    free(a);
}

static void cmd_retire(void *ctx, int argc, const char *const *argv, mc_watch_done *done)
{
    (void)argv;
    mc_engine *e = ctx;
    base_retire *r = retire_of(e);
    if (argc != 0) {
        mc_watch_complete(done, false, NULL, "usage: retire");
        return;
    }
    if (!r) {
        mc_watch_complete(done, false, NULL, "retiring is not set up");
        return;
    }
    if (r->phase != R_IDLE) {
        char text[120];
        snprintf(text, sizeof text, "already %s: %zu bases left", phase_names[r->phase],
                 live_count(e));
        mc_watch_complete(done, true, text, NULL);
        return;
    }
    mc_server *s = mc_engine_server(e);
    const char *manager = mc_config_get_string(mc_server_config(s), "manager");
    retire_ask *a = calloc(1, sizeof *a);
    mc_engine_wait *w = a ? mc_engine_wait_new(e, ask_cancel, a) : NULL;
    if (!w) {
        free(a);
        mc_watch_complete(done, false, NULL, "out of memory");
        return;
    }
    a->done = done;
    a->wait = w;
    Mc__Control__WatcherRequest req = MC__CONTROL__WATCHER_REQUEST__INIT;
    req.op = MC__CONTROL__WATCHER_OP__WATCHER_CALL;
    req.path = "command/retireBaseapp";
    char *args[1] = {(char *)mc_server_name(s)};
    req.n_args = 1;
    req.args = args;
    r->phase = R_MARKING;
    if (!manager || mc_server_ask_watcher(s, manager, &req, 10000, on_marked, w) != 0) {
        r->phase = R_IDLE;
        mc_engine_wait_drop(w);
        free(a);
        mc_watch_complete(done, false, NULL, "cannot reach the manager");
    }
}

/* ---- watchers, life ------------------------------------------------------------------------ */

static void get_phase(void *ctx, mc_watch_value *out)
{
    base_retire *r = ctx;
    out->as.s = strdup(phase_names[r->phase]);
}

static void get_left(void *ctx, mc_watch_value *out)
{
    base_retire *r = ctx;
    out->as.u = live_count(r->e);
}

static int add_watchers(base_retire *r)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(r->e));
    struct {
        const char *path;
        uint64_t *v;
    } u[] = {
        {"retire/offloaded", &r->st.offloaded},
        {"retire/failed", &r->st.failed},
        {"retire/bytes", &r->st.bytes},
        {"retire/forwarded", &r->st.forwarded},
        {"retire/callsWaited", &r->st.waited},
        {"retire/callsRefused", &r->st.refused_calls},
        {"retire/callsWaiting", &r->nwaiting},
        {"retire/clientsMoved", &r->st.clients},
        {"retire/noTarget", &r->st.no_target},
        {"retire/waves", &r->st.waves},
        {"retire/moving", &r->nmoving},
        {"retire/received", &r->st.received},
        {"retire/receiveRefused", &r->st.receive_refused},
        {"retire/resent", &r->st.resent},
        {"retire/bytesPerSec", &r->bytes_per_sec},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        bad |= mc_watch_add_uint(w, u[i].path, u[i].v, MC_WATCH_READ_ONLY) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "retire/state", MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_phase, NULL,
                        r) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "retire/basesLeft", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_left,
                        NULL, r) != MC_WATCH_OK;
    bad |= mc_watch_add_async_callable(w, "command/retire", cmd_retire, r->e,
                                       "retire: offload every base (and its client) to the "
                                       "other baseapps, then stop (docs/ENTITIES.md)") !=
           MC_WATCH_OK;
    return bad ? -1 : 0;
}

void retire_count_received(mc_engine *e, bool ok)
{
    base_retire *r = retire_of(e);
    if (!r)
        return;
    if (ok)
        r->st.received++;
    else
        r->st.receive_refused++;
}

void retire_note_taken(mc_engine *e, int32_t id, const mc_address *from)
{
    base_retire *r = retire_of(e);
    mc_address *a = r ? malloc(sizeof *a) : NULL;
    if (!a)
        return;
    *a = *from;
    mc_address *old = mc_map_get(&r->taken, (uint64_t)id, 0);
    if (old) {
        *old = *from;
        free(a);
    } else if (!mc_map_put(&r->taken, (uint64_t)id, 0, a)) {
        free(a);
    }
}

bool retire_was_taken_from(mc_engine *e, int32_t id, const mc_address *from)
{
    base_retire *r = retire_of(e);
    mc_address *a = r ? mc_map_get(&r->taken, (uint64_t)id, 0) : NULL;
    return a && mc_address_equal(a, from);
}

bool retire_is_retiring(mc_engine *e)
{
    base_retire *r = retire_of(e);
    return r && r->phase != R_IDLE;
}

int retire_init(mc_engine *e, char *err, size_t errlen)
{
    base_db *db = base_db_of(e);
    base_retire *r = calloc(1, sizeof *r);
    if (!db || !r) {
        free(r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->e = e;
    mc_map_init(&r->moving);
    mc_map_init(&r->moved);
    mc_map_init(&r->taken);
    db->retire = r;
    const mc_config *cfg = mc_server_config(mc_engine_server(e));
    r->bytes_per_sec = mc_config_get_uint(cfg, "retireBytesPerSec");
    r->in_flight_max = mc_config_get_uint(cfg, "retireInFlight");
    r->linger_ms = mc_config_get_uint(cfg, "retireLingerMs");
    if (r->bytes_per_sec < 1000 || r->bytes_per_sec > 1000000000) {
        snprintf(err, errlen, "--retireBytesPerSec must be 1000..1000000000");
        return -1;
    }
    if (r->in_flight_max < 1 || r->in_flight_max > 100000) {
        snprintf(err, errlen, "--retireInFlight must be 1..100000");
        return -1;
    }
    if (r->linger_ms > 600000) {
        snprintf(err, errlen, "--retireLingerMs must be 0..600000");
        return -1;
    }
    r->tick_ev = event_new(mc_server_event_base(mc_engine_server(e)), -1, EV_PERSIST, on_tick, r);
    if (!r->tick_ev || add_watchers(r) != 0) {
        snprintf(err, errlen, "cannot set up retiring (out of memory)");
        return -1;
    }
    struct timeval tv = {0, RETIRE_TICK_MS * 1000};
    event_add(r->tick_ev, &tv);
    return 0;
}

void retire_free(mc_engine *e)
{
    base_db *db = base_db_of(e);
    base_retire *r = db ? db->retire : NULL;
    if (!r)
        return;
    if (r->tick_ev)
        event_free(r->tick_ev);
    size_t pos = 0;
    retire_move *m;
    while ((m = mc_map_next(&r->moving, &pos))) {
        while (m->head) {
            retire_call *c = m->head;
            m->head = c->next;
            free(c);
        }
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
    while ((v = mc_map_next(&r->taken, &pos)))
        free(v);
    mc_map_free(&r->taken);
    pos = 0;
    while ((v = mc_map_next(&r->moved, &pos)))
        free(v);
    mc_map_free(&r->moved);
    free(r);
    db->retire = NULL;
}
