/* The baseapp's persistence state: options, the store, the records of bases, watchers, the
 * tick (archiving, auto-load) and releasing a dead baseapp's check-outs. */
#include "base_db.h"
#include "proxy.h"
#include "common/log.h"
#include "mercury/address.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DB_TICK_MS 100

const mc_option base_db_options[BASE_DB_OPTION_COUNT] = {
    {"redis", MC_OPT_STRING, "",
     "IP:PORT of the Redis that keeps entities (none: no persistence; the persistence "
     "functions answer 'unavailable')"},
    {"redisCluster", MC_OPT_STRING, "",
     "IP:PORT[,IP:PORT...]: seed nodes of a Redis Cluster instead of --redis"},
    {"redisUser", MC_OPT_STRING, "", "Redis ACL user (default: Redis's default user)"},
    {"redisPasswordFile", MC_OPT_STRING, "",
     "file whose first line is the Redis password (none: no AUTH)"},
    {"archivePeriodS", MC_OPT_UINT, "60",
     "every entity with a database id is written once per this many seconds, spread over "
     "the ticks (0: never; 1..86400)"},
    {"loadWaitMs", MC_OPT_UINT, "3000",
     "how long createBaseFromDB waits for an entity another baseapp is loading (100..600000; "
     "keep it below --callTimeoutMs, which bounds createBaseAnywhereFromDB)"},
    {"autoLoadDelayMs", MC_OPT_UINT, "2000",
     "how long after it is registered a baseapp waits before it loads the auto-load entities, "
     "spread over the baseapps alive then (0..600000)"},
    {"shutdownWriteMs", MC_OPT_UINT, "5000",
     "how long a graceful shutdown waits for its last writes (100..600000)"},
    {"ownerGraceMs", MC_OPT_UINT, "0",
     "a check-out whose owner the manager does not know is released only once the manager "
     "has been up this long, so that after a manager restart the live owner can register "
     "again first (0: automatic, the time a process waits for a silent manager - twice its "
     "--deadAfterMs, at least 5 s - plus 2 s; 0..600000)"},
    {"sessionExpiryMs", MC_OPT_UINT, "30000",
     "how long a login session the baseapp issued waits for its client to connect "
     "(1000..600000)"},
    {"maxSessions", MC_OPT_UINT, "100000",
     "login sessions waiting for their clients at most (1..10000000)"},
    {"restoreCells", MC_OPT_BOOL, "false",
     "a base loaded from a record written while it had a cell gets its cell back, in its "
     "space when a live cell of that space is known here, else in a new space (default "
     "false: the game creates cells itself, as the example game does)"},
    BACKUP_OPTIONS,
    RETIRE_OPTIONS,
};

base_db *base_db_of(mc_engine *e) { return mc_engine_role_state(e); }

static bool check_addr(const char *opt, const char *text, char *err, size_t errlen)
{
    mc_address a;
    if (mc_address_parse(text, &a) == MC_OK && a.port != 0)
        return true;
    const char *colon = strrchr(text, ':');
    size_t hostlen = colon ? (size_t)(colon - text) : strlen(text);
    bool named = false;
    for (size_t i = 0; i < hostlen; i++)
        named |= (text[i] >= 'a' && text[i] <= 'z') || (text[i] >= 'A' && text[i] <= 'Z');
    if (named)
        snprintf(err, errlen,
                 "--%s: '%s' names a host: give its numeric IPv4 address (host names are not "
                 "resolved: a lookup would block the event loop; e.g. 'getent ahostsv4 %.*s')",
                 opt, text, (int)hostlen, text);
    else
        snprintf(err, errlen, "--%s: '%s' is not IP:PORT (a numeric IPv4 address and a port)",
                 opt, text);
    return false;
}

/* Fill the store's config from the options; false with a reason on a bad value. */
/* The store's write gate: the manager lease (server/lease.h), or a stop the manager confirmed
 * (the shutdown's last writes must not wait for heartbeats that no longer go). */
static bool lease_open(void *ctx)
{
    return mc_server_lease_valid(ctx) || mc_server_left_cleanly(ctx);
}
static size_t writes_held(void *ctx) { return mc_persist_gated(ctx); }

static bool read_options(base_db *db, const mc_config *cfg, mc_persist_config *pc,
                         char *seeds_buf, size_t seeds_len, bool *enabled, char *err,
                         size_t errlen)
{
    const char *redis = mc_config_get_string(cfg, "redis");
    const char *cluster = mc_config_get_string(cfg, "redisCluster");
    const char *user = mc_config_get_string(cfg, "redisUser");
    const char *pwfile = mc_config_get_string(cfg, "redisPasswordFile");
    static const struct {
        const char *name;
        uint64_t min, max;
    } ranges[] = {{"archivePeriodS", 0, 86400},
                  {"loadWaitMs", 100, 600000},
                  {"shutdownWriteMs", 100, 600000},
                  {"autoLoadDelayMs", 0, 600000},
                  {"ownerGraceMs", 0, 600000},
                  {"sessionExpiryMs", 1000, 600000},
                  {"maxSessions", 1, 10000000}};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        uint64_t v = mc_config_get_uint(cfg, ranges[i].name);
        if (v < ranges[i].min || v > ranges[i].max) {
            snprintf(err, errlen, "--%s: %llu is not within %llu..%llu", ranges[i].name,
                     (unsigned long long)v, (unsigned long long)ranges[i].min,
                     (unsigned long long)ranges[i].max);
            return false;
        }
    }
    db->archive_period_ms = mc_config_get_uint(cfg, "archivePeriodS") * 1000;
    db->load_wait_ms = mc_config_get_uint(cfg, "loadWaitMs");
    db->shutdown_write_ms = mc_config_get_uint(cfg, "shutdownWriteMs");
    db->autoload_delay_ms = mc_config_get_uint(cfg, "autoLoadDelayMs");
    db->owner_grace_ms = mc_config_get_uint(cfg, "ownerGraceMs");
    db->restore_cells = mc_config_get_bool(cfg, "restoreCells");
    *enabled = (redis && *redis) || (cluster && *cluster);
    if (redis && *redis && cluster && *cluster) {
        snprintf(err, errlen, "--redis and --redisCluster: give one of them, not both");
        return false;
    }
    if (!*enabled) {
        if ((user && *user) || (pwfile && *pwfile)) {
            snprintf(err, errlen, "--%s needs --redis or --redisCluster",
                     user && *user ? "redisUser" : "redisPasswordFile");
            return false;
        }
        return true;
    }
    if (redis && *redis) {
        if (!check_addr("redis", redis, err, errlen))
            return false;
        pc->address = redis;
        snprintf(db->where, sizeof db->where, "%s", redis);
    } else {
        snprintf(seeds_buf, seeds_len, "%s", cluster);
        snprintf(db->where, sizeof db->where, "cluster %s", cluster);
        char *save = NULL;
        for (char *tok = strtok_r(seeds_buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            if (pc->nseeds == MC_PERSIST_MAX_SEEDS) {
                snprintf(err, errlen, "--redisCluster: at most %d seed addresses",
                         MC_PERSIST_MAX_SEEDS);
                return false;
            }
            if (!check_addr("redisCluster", tok, err, errlen))
                return false;
            pc->seeds[pc->nseeds++] = tok;
        }
        if (pc->nseeds == 0) {
            snprintf(err, errlen, "--redisCluster: no address in '%s'", cluster);
            return false;
        }
    }
    if (user && *user)
        pc->user = user;
    if (pwfile && *pwfile) {
        if (access(pwfile, R_OK) != 0) {
            snprintf(err, errlen, "--redisPasswordFile: cannot read '%s'", pwfile);
            return false;
        }
        pc->password_file = pwfile;
    }
    return true;
}

/* A login session expired unused: if its base is here without a client and no other session
 * waits for one, the client never came (the login reply was lost, the client crashed): the
 * base hears onClientDeath as if its client had gone, so the game can end it (else an
 * account would stay online with nobody playing, and --onlineLogin=refuse lock it out). */
static void session_expired(void *ctx, int32_t entity_id)
{
    base_db *db = ctx;
    mc_entity *ent = mc_engine_find(db->e, entity_id);
    if (!ent || ent->part != MC_PART_BASE || ent->in_reap || proxy_has_client(db->e, ent) ||
        base_sessions_has_entity(db->sessions, entity_id) || proxy_in_grace(db->e, entity_id))
        return;
    MC_INFO("%s %d: its client never came with its login session: onClientDeath",
            ent->td->name, (int)ent->id);
    db->sessions_unclaimed++;
    mc_engine_run_hook(db->e, ent, MC_HOOK_CLIENT_DEATH, NULL);
}

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    base_db *db = ctx;
    if (++db->session_sweep % 10 == 0) /* once a second */
        base_sessions_expire(db->sessions, session_expired, db);
    if (!db->store || db->shutting_down)
        return;
    db_autoload_tick(db);
    db_archive_tick(db, DB_TICK_MS);
}

static void get_u64(void *ctx, mc_watch_value *out) { out->as.u = *(const uint64_t *)ctx; }

static void get_sessions(void *ctx, mc_watch_value *out)
{
    const struct db_session_watch *sw = ctx;
    base_sessions_stats st;
    base_sessions_get_stats(sw->db->sessions, &st);
    out->as.u = sw->off == (size_t)-1   ? base_sessions_count(sw->db->sessions)
                : sw->off == (size_t)-2 ? sw->db->sessions_unclaimed
                                        : *(const uint64_t *)((const char *)&st + sw->off);
}

static void get_records(void *ctx, mc_watch_value *out)
{
    out->as.u = ((base_db *)ctx)->by_id.count;
}

static void get_archived_entities(void *ctx, mc_watch_value *out)
{
    out->as.u = ((base_db *)ctx)->narchive;
}

static void get_where(void *ctx, mc_watch_value *out)
{
    base_db *db = ctx;
    out->as.s = strdup(db->store ? db->where : "none");
}

static void get_archive_period(void *ctx, mc_watch_value *out)
{
    out->as.u = ((base_db *)ctx)->archive_period_ms / 1000;
}

static int add_watchers(base_db *db)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(db->e));
    static const struct {
        const char *path;
        size_t off;
    } counters[] = {
        {"db/writes", offsetof(db_stats, writes)},
        {"db/writesOk", offsetof(db_stats, writes_ok)},
        {"db/writesFailed", offsetof(db_stats, writes_failed)},
        {"db/fenced", offsetof(db_stats, fenced)},
        {"db/loads", offsetof(db_stats, loads)},
        {"db/loadsOk", offsetof(db_stats, loads_ok)},
        {"db/loadsLive", offsetof(db_stats, loads_live)},
        {"db/loadsFailed", offsetof(db_stats, loads_failed)},
        {"db/archived", offsetof(db_stats, archived)},
        {"db/releasedOfDead", offsetof(db_stats, released_of_dead)},
        {"db/autoloaded", offsetof(db_stats, autoloaded)},
        {"db/deleted", offsetof(db_stats, deleted)},
        {"db/released", offsetof(db_stats, released)},
        {"db/givenBack", offsetof(db_stats, given_back)},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        bad |= mc_watch_add(w, counters[i].path, MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_u64,
                            NULL, (char *)&db->st + counters[i].off) != MC_WATCH_OK;
    bad |= mc_watch_add_uint(w, "db/faults/failMarkLive", &db->fail_mark_live,
                             MC_WATCH_READ_WRITE) != MC_WATCH_OK;
    bad |= mc_watch_add_uint(w, "db/faults/loseWonAnswer", &db->fault_lose_won,
                             MC_WATCH_READ_WRITE) != MC_WATCH_OK;
    bad |= db_add_fault_watchers(db, w) != 0;
    bad |= mc_watch_add_uint(w, "db/faults/failReleases", &db->fault_fail_releases,
                             MC_WATCH_READ_WRITE) != MC_WATCH_OK;
    static const struct {
        const char *path;
        size_t off;
    } sess[] = {{"sessions/live", (size_t)-1},
                {"sessions/issued", offsetof(base_sessions_stats, issued)},
                {"sessions/taken", offsetof(base_sessions_stats, taken)},
                {"sessions/expired", offsetof(base_sessions_stats, expired)},
                {"sessions/refusedFull", offsetof(base_sessions_stats, refused_full)},
                {"sessions/unknownLookups", offsetof(base_sessions_stats, unknown_lookups)},
                {"sessions/unclaimed", (size_t)-2}};
    for (size_t i = 0; i < sizeof sess / sizeof sess[0]; i++) {
        db->session_watch[i].off = sess[i].off;
        db->session_watch[i].db = db;
        bad |= mc_watch_add(w, sess[i].path, MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_sessions,
                            NULL, &db->session_watch[i]) != MC_WATCH_OK;
    }
    bad |= mc_watch_add(w, "db/incarnation", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_u64, NULL,
                        &db->incarnation) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "db/redis", MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_where, NULL,
                        db) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "db/records", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_records, NULL,
                        db) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "db/withDatabaseId", MC_WATCH_UINT, MC_WATCH_READ_ONLY,
                        get_archived_entities, NULL, db) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "db/archivePeriodS", MC_WATCH_UINT, MC_WATCH_READ_ONLY,
                        get_archive_period, NULL, db) != MC_WATCH_OK;
    if (db->store)
        bad |= mc_persist_add_watchers(db->store, w, "db/store") != MC_WATCH_OK;
    return bad ? -1 : 0;
}

int base_db_init(mc_engine *e, char *err, size_t errlen)
{
    base_db *db = calloc(1, sizeof *db);
    if (!db) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    db->e = e;
    mc_engine_set_role_state(e, db);
    mc_server *s = mc_engine_server(e);
    mc_persist_config pc;
    memset(&pc, 0, sizeof pc);
    char seeds[600];
    bool enabled = false;
    if (!read_options(db, mc_server_config(s), &pc, seeds, sizeof seeds, &enabled, err, errlen))
        return -1;
    /* The check-outs carry the process's incarnation: random per start, registered with the
     * manager (ProcessInfo.incarnation), so that others find the owner of a check-out among
     * the processes the manager knows, and a pid and host name that come back after a
     * reboot (or in a new container) are never taken for it. */
    db->incarnation = mc_server_incarnation(s);
    if (enabled) {
        pc.process_name = mc_server_name(s);
        pc.defs = mc_engine_defs(e);
        char why[512] = "";
        db->store = mc_persist_store_new(mc_server_event_base(s), &pc, why, sizeof why);
        if (!db->store) {
            snprintf(err, errlen, "persistence (%s): %s", db->where, why);
            return -1;
        }
        /* Out of touch with the manager (the lease ran out) nothing is written: a process the
         * manager may have declared dead must not act as the owner of its check-outs. */
        mc_persist_set_write_gate(db->store, lease_open, s);
        mc_server_lease_writes_source(s, writes_held, db->store);
        MC_INFO("persistence: entities in Redis at %s", db->where);
    } else {
        MC_INFO("persistence: off (no --redis or --redisCluster): the persistence functions "
                "answer 'unavailable'");
    }
    db->sessions = base_sessions_new((size_t)mc_config_get_uint(mc_server_config(s), "maxSessions"),
                                     (uint32_t)mc_config_get_uint(mc_server_config(s),
                                                                  "sessionExpiryMs"));
    if (!db->sessions) {
        snprintf(err, errlen, "cannot create the login session table");
        return -1;
    }
    db->tick_ev = event_new(mc_server_event_base(s), -1, EV_PERSIST, on_tick, db);
    struct timeval tv = {0, DB_TICK_MS * 1000};
    if (!db->tick_ev || event_add(db->tick_ev, &tv) != 0) {
        snprintf(err, errlen, "cannot create the persistence timer");
        return -1;
    }
    if (add_watchers(db) != 0 || db_add_commands(e) != 0 || base_world_add_watchers(e) != 0) {
        snprintf(err, errlen, "cannot publish the persistence watchers");
        return -1;
    }
    return 0;
}

static void free_rec(db_rec *r);

void base_db_free(mc_engine *e)
{
    base_db *db = base_db_of(e);
    if (!db)
        return;
    if (db->tick_ev)
        event_free(db->tick_ev);
    db_loads_free(db);
    db_held_free(db); /* sent to the store, which answers them CLOSED as it goes */
    if (db->store) {
        mc_persist_remove_watchers(db->store, mc_server_watchers(mc_engine_server(e)),
                                   "db/store");
        /* Pending callbacks run now with MC_PERSIST_CLOSED (they find no entities, and no
         * store to send anything more to). */
        mc_persist_store *store = db->store;
        db->store = NULL;
        mc_server_lease_writes_source(mc_engine_server(e), NULL, NULL);
        mc_persist_store_free(store);
    }
    db_lives_free(db);
    db_givebacks_free(db);
    db_restores_free(db);
    size_t pos = 0;
    for (db_rec *rec; (rec = mc_map_next(&db->by_id, &pos));)
        free_rec(rec);
    mc_map_free(&db->by_id);
    mc_map_free(&db->by_dbid);
    free(db->archive);
    base_sessions_free(db->sessions);
    mc_engine_set_role_state(e, NULL);
    free(db);
}

mc_persist_store *db_store(base_db *db, int *status)
{
    if (!db || !db->store) {
        *status = MC_CALL_ERR_UNAVAILABLE;
        return NULL;
    }
    if (!db->owner_set) {
        mc_server *s = mc_engine_server(db->e);
        const char *name = mc_server_name(s);
        if (strcmp(name, mc_role_name(mc_server_role(s))) == 0) {
            *status = MC_CALL_ERR_UNAVAILABLE; /* not registered yet: no owner name */
            return NULL;
        }
        snprintf(db->owner, sizeof db->owner, "%s", name);
        mc_persist_set_owner(db->store, db->owner, db->incarnation);
        db->owner_set = true;
        MC_INFO("persistence: check-outs are owned by %s (incarnation %016llx)", db->owner,
                (unsigned long long)db->incarnation);
    }
    *status = MC_CALL_OK;
    return db->store;
}

int db_call_status(mc_persist_status st)
{
    switch (st) {
    case MC_PERSIST_OK: return MC_CALL_OK;
    case MC_PERSIST_NOT_FOUND: return MC_CALL_ERR_NOT_FOUND;
    case MC_PERSIST_FENCED: return MC_CALL_ERR_STATE;
    case MC_PERSIST_IDENT_TAKEN: return MC_CALL_ERR_TAKEN;
    case MC_PERSIST_EXISTS: return MC_CALL_ERR_TAKEN;
    case MC_PERSIST_SCHEMA:
    case MC_PERSIST_BAD_DATA:
    case MC_PERSIST_BAD_REQUEST: return MC_CALL_ERR_ARGS;
    case MC_PERSIST_QUEUE_FULL: return MC_CALL_ERR_BUSY;
    default: return MC_CALL_ERR_UNAVAILABLE;
    }
}

db_rec *db_rec_of(base_db *db, int32_t id) { return db ? mc_map_get(&db->by_id, (uint32_t)id, 0) : NULL; }

db_rec *db_rec_get(base_db *db, const mc_entity *ent)
{
    db_rec *r = db_rec_of(db, ent->id);
    if (r)
        return r;
    r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->id = ent->id;
    r->type = ent->type;
    r->archive_slot = SIZE_MAX;
    if (!mc_map_put(&db->by_id, (uint32_t)ent->id, 0, r)) {
        free(r);
        return NULL;
    }
    return r;
}

void db_rec_set_dbid(base_db *db, db_rec *r, uint64_t dbid, const char *token)
{
    r->dbid = dbid;
    snprintf(r->token, sizeof r->token, "%s", token ? token : "");
    backup_send_now(db->e, r->id); /* its backup holds its check-out from now on */
    if (!mc_map_put(&db->by_dbid, db_key(r->type, dbid), 0, r))
        MC_ERROR("out of memory indexing database id %llu", (unsigned long long)dbid);
    if (r->archive_slot != SIZE_MAX)
        return;
    if (db->narchive == db->archive_cap) {
        size_t cap = db->archive_cap ? db->archive_cap * 2 : 64;
        int32_t *a = realloc(db->archive, cap * sizeof *a);
        if (!a) {
            MC_ERROR("out of memory: entity %d is not archived", (int)r->id);
            return;
        }
        db->archive = a;
        db->archive_cap = cap;
    }
    r->archive_slot = db->narchive;
    db->archive[db->narchive++] = r->id;
}

static void free_rec(db_rec *r)
{
    /* Waiters are handled by the create's answer, which always comes before a record goes
     * (the store answers every request, CLOSED when freed); none is left here. */
    while (r->waiting) {
        db_waiter *next = r->waiting->next;
        free(r->waiting);
        r->waiting = next;
    }
    free(r);
}

void db_rec_drop(base_db *db, db_rec *r)
{
    if (r->archive_slot != SIZE_MAX && r->archive_slot < db->narchive) {
        int32_t last = db->archive[--db->narchive];
        if (r->archive_slot < db->narchive) {
            db->archive[r->archive_slot] = last;
            db_rec *moved = db_rec_of(db, last);
            if (moved)
                moved->archive_slot = r->archive_slot;
        }
    }
    if (r->dbid && mc_map_get(&db->by_dbid, db_key(r->type, r->dbid), 0) == r)
        mc_map_remove(&db->by_dbid, db_key(r->type, r->dbid), 0);
    mc_map_remove(&db->by_id, (uint32_t)r->id, 0);
    free_rec(r);
}

mc_entity *db_find_live(base_db *db, uint16_t type, uint64_t dbid)
{
    db_rec *r = mc_map_get(&db->by_dbid, db_key(type, dbid), 0);
    if (!r || r->gone || r->fenced)
        return NULL;
    mc_entity *ent = mc_engine_find(db->e, r->id);
    return ent && !ent->in_reap ? ent : NULL;
}

/* ---- a dead baseapp's check-outs ------------------------------------------------------- */

typedef struct {
    base_db *db;
    char name[64];
} release_ctx;

static void on_released(void *ctx, const mc_persist_result *r)
{
    release_ctx *rc = ctx;
    if (r->status == MC_PERSIST_OK) {
        rc->db->st.released_of_dead += r->count;
        MC_INFO("persistence: released %llu check-outs of %s (dead)",
                (unsigned long long)r->count, rc->name);
        if (r->count && rc->db->backup) {
            /* after the restore's grace: bases nobody restored (their backup never arrived
             * or could not be restored): loadable again with their last write */
            rc->db->backup->st.lost_bases += r->count;
            MC_WARNING("%llu persistent bases of %s were not restored from a backup "
                       "(backups/lostBases): their check-outs are released, they can be "
                       "loaded again with what they had at their last write",
                       (unsigned long long)r->count, rc->name);
        }
    } else if (r->status != MC_PERSIST_CLOSED) {
        MC_WARNING("persistence: cannot release the check-outs of %s: %s (%s)", rc->name,
                   mc_persist_status_name(r->status), r->reason ? r->reason : "");
    }
    free(rc);
}

void db_on_process_death(mc_engine *e, const char *name, uint32_t pid, const char *host,
                         uint64_t incarnation, const char *addr, bool stopped)
{
    (void)pid;
    (void)host;
    base_db *db = base_db_of(e);
    int status;
    mc_persist_store *store = db_store(db, &status);
    if (!store || !name || strncmp(name, "baseapp", 7) != 0)
        return;
    if (stopped) {
        /* A graceful shutdown writes and releases its own entities (its last writes may
         * still be on their way: releasing now could refuse them). What it could not
         * release is released by whoever loads such an entity next (db_load.c). */
        MC_INFO("persistence: %s (%s) stopped: it releases its own check-outs", name, addr);
        return;
    }
    if (!incarnation) {
        /* A process that registered no incarnation holds no check-out we could tell from
         * another run's: whoever loads one of its entities checks its owner then. */
        MC_INFO("persistence: %s (%s) is dead but gave no incarnation: its check-outs are "
                "released by the loads that find them", name, addr);
        return;
    }
    release_ctx *rc = calloc(1, sizeof *rc);
    if (!rc)
        return;
    rc->db = db;
    snprintf(rc->name, sizeof rc->name, "%s", name);
    MC_INFO("persistence: %s (%s) is dead: releasing its check-outs", name, addr);
    mc_persist_release_owner(store, name, incarnation, on_released, rc);
}

/* ---- per-entity watchers ---------------------------------------------------------------- */

static void get_dbid(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    db_rec *r = ent ? db_rec_of(base_db_of(e), ent->id) : NULL;
    out->as.u = r ? r->dbid : 0;
}

void db_add_entity_watchers(mc_engine *e, mc_entity *ent, const char *dir, void *ref)
{
    (void)ent;
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    char path[MC_WATCH_MAX_PATH];
    snprintf(path, sizeof path, "%s/databaseID", dir);
    mc_watch_add(w, path, MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_dbid, NULL, ref);
}
