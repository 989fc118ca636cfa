/* The baseapp's persistence: entities in Redis through the data layer (persist/store.h).
 *
 * With --redis or --redisCluster the baseapp opens one store; every base it writes or loads
 * gets a record here: its database id, the check-out token every write carries, its
 * auto-load flag and what destroy does to it. writeToDB writes the base's Persistent
 * properties with its cell's (fetched from the cell with FETCH_CELL, or its cellData when it
 * has no cell); createBaseFromDB checks the entity out (atomically, in Redis) and loads it
 * here, or answers with the live entity's mailbox when another check-out holds it (waiting,
 * bounded by --loadWaitMs, while it is being loaded); LOAD_BASE does the same for another
 * process (createBaseAnywhereFromDB). Every entity with a database id is written once per
 * --archivePeriodS, spread over the ticks; a graceful shutdown writes and releases them all
 * (bounded by --shutdownWriteMs); the check-outs of a baseapp the manager declares dead
 * are released (by owner, idempotent) so that its entities can be loaded again; auto-load
 * entities are loaded, spread over the live baseapps, --autoLoadDelayMs after registration.
 * Without a database every function here answers MC_CALL_ERR_UNAVAILABLE.
 * docs/ENTITIES.md, "Persistence".
 */
#ifndef MC_BASEAPP_BASE_DB_H
#define MC_BASEAPP_BASE_DB_H

#include "baseapp.h"
#include "backup.h"
#include "base_world.h"
#include "retire.h"
#include "client_sessions.h"
#include "entity/persist_wire.h"
#include "persist/store.h"
#include "common/map.h"

#include <event2/event.h>

/* Options the baseapp adds for persistence. */
#define BASE_DB_OPTION_COUNT (12 + BACKUP_OPTION_COUNT + RETIRE_OPTION_COUNT)
extern const mc_option base_db_options[BASE_DB_OPTION_COUNT];

struct db_waiter;
struct db_load_op;
struct db_live_req;
struct db_giveback;
struct db_restore;
struct db_held;

typedef struct db_rec {
    int32_t id;                 /* entity id */
    uint16_t type;
    uint64_t dbid;              /* 0 until its first write was acknowledged */
    char token[96];             /* the check-out's token (with dbid) */
    bool creating;              /* the first write (create) is in flight */
    bool gone;                  /* the entity was destroyed while creating */
    bool fenced;                /* not ours to write: refused by token, or released */
    bool evict;                 /* refused by token: the copy here goes (cell, then base) */
    bool autoload;              /* the flag the game wants */
    bool autoload_stored;       /* the flag as last stored */
    bool destroy_delete;        /* destroy deletes it from the database */
    bool destroy_nowrite;       /* destroy does not write it */
    uint32_t inflight;          /* writes sent, not yet answered */
    uint64_t write_serial;      /* the last write's serial (the order Redis keeps) */
    struct db_waiter *waiting;  /* writes waiting for the create */
    int64_t space_id;           /* its cell's space when last written or loaded */
    size_t archive_slot;        /* index in base_db.archive, SIZE_MAX when not there */
} db_rec;

typedef struct {
    uint64_t writes, writes_ok, writes_failed, fenced, loads, loads_ok, loads_live,
        loads_failed, archived, released_of_dead, autoloaded, deleted, released,
        given_back; /* abandoned check-outs given back (db_giveback.c) */
} db_stats;

typedef struct base_db {
    mc_engine *e;
    struct base_clients *clients; /* the external interface and its proxies (proxy.h) */
    mc_persist_store *store;    /* NULL: no database */
    char where[600];            /* what --redis / --redisCluster named (logs, watchers) */
    char owner[64];
    bool owner_set;
    uint64_t incarnation;
    mc_map by_id;               /* entity id -> db_rec */
    mc_map by_dbid;             /* db_key(type, dbid) -> db_rec */
    int32_t *archive;           /* ids of entities with a database id */
    size_t narchive, archive_cap, archive_cursor;
    double archive_carry;
    uint64_t archive_period_ms, load_wait_ms, shutdown_write_ms;
    uint64_t owner_grace_ms;      /* --ownerGraceMs */
    struct event *tick_ev;
    bool autoload_started, autoload_done;
    uint64_t autoload_delay_ms;
    mc_time_us autoload_ready_at; /* when registration, Redis and ids were first all there */
    size_t autoload_n;            /* the live baseapps auto-load entries are spread over */
    char autoload_name[64][32];
    char autoload_addr[64][MC_ADDRESS_STRLEN];
    struct db_load_op *loads;      /* loads in progress (list) */
    struct db_live_req *lives;     /* mark_live requests in progress or waiting to retry */
    uint64_t fail_mark_live;       /* db/faults/failMarkLive: mark_live sends to drop */
    struct db_giveback *givebacks; /* abandoned check-outs being given back (db_giveback.c) */
    uint64_t fault_lose_won;       /* db/faults/loseWonAnswer: won answers taken for lost */
    uint64_t fault_fail_releases;  /* db/faults/failReleases: release sends to drop */
    uint64_t fault_hold_writes;    /* db/faults/holdWrites: writes to hold back */
    struct db_held *held;          /* the writes held back, oldest first */
    bool restore_cells;            /* --restoreCells (db_cells.c) */
    struct base_restore *lost_cells; /* cells restored after their cellapp died (base_restore.c) */
    struct db_restore *restores;   /* loaded bases whose cells are being restored */
    mc_map space_anchor;           /* space id -> a base here standing for that space */
    mc_time_us live_log_at;        /* mark_live failure logs: at most one a second */
    uint64_t live_log_quiet;       /* failures not logged since */
    mc_time_us release_log_at;     /* loads releasing a gone owner's check-out: at most */
    uint64_t release_log_quiet;    /* one line a second, and how many were not logged */
    /* failed writes/releases (db_log_failure): at most one line a second per status (the
     * first FENCED is never hidden behind an UNAVAILABLE), and how many were not logged */
    mc_time_us failure_log_at[MC_PERSIST_CLOSED + 1];
    uint64_t failure_log_quiet[MC_PERSIST_CLOSED + 1];
    /* login sessions issued for clients (--sessionExpiryMs, --maxSessions): the loginapp's
     * preparation issues them, the external interface takes them */
    base_sessions *sessions;
    struct login_prepare *login;  /* PREPARE_LOGIN's counters (login_prepare.c) */
    base_world_stats world;       /* world updates for clients (base_world.c) */
    uint64_t session_sweep;       /* ticks, to sweep expired sessions once a second */
    uint64_t sessions_unclaimed;  /* bases told onClientDeath: their client never came */
    struct db_session_watch {
        size_t off;               /* of the counter in base_sessions_stats; -1: live count */
        struct base_db *db;
    } session_watch[7];
    struct base_backup *backup;   /* backups of bases and their restore (backup.h) */
    struct base_retire *retire;   /* retiring: offloading every base (retire.h) */
    bool shutting_down;
    size_t shutdown_outstanding, shutdown_failed;
    mc_time_us shutdown_started;
    db_stats st;
} base_db;

static inline uint64_t db_key(uint16_t type, uint64_t dbid)
{
    return ((uint64_t)type << 48) | (dbid & 0xFFFFFFFFFFFFULL);
}

/* db_state.c */
/* Read the options, open the store (when configured), publish the watchers and commands. */
int base_db_init(mc_engine *e, char *err, size_t errlen);
void base_db_free(mc_engine *e);
base_db *base_db_of(mc_engine *e);
/* The store once this baseapp can use it (registered: its owner name is known); NULL with
 * an mc_call_status in *status otherwise. */
mc_persist_store *db_store(base_db *db, int *status);
db_rec *db_rec_of(base_db *db, int32_t id);
/* The record of a base, made when missing (NULL when out of memory). */
db_rec *db_rec_get(base_db *db, const mc_entity *ent);
/* The base holds dbid now (token): indexed and archived from now on. */
void db_rec_set_dbid(base_db *db, db_rec *r, uint64_t dbid, const char *token);
/* Forget a record (its entity is gone). */
void db_rec_drop(base_db *db, db_rec *r);
/* The live base of (type, dbid) held here, or NULL. */
mc_entity *db_find_live(base_db *db, uint16_t type, uint64_t dbid);
/* An mc_call_status for a store status. */
int db_call_status(mc_persist_status st);
void db_on_process_death(mc_engine *e, const char *name, uint32_t pid, const char *host,
                         uint64_t incarnation, const char *addr, bool stopped);
void db_add_entity_watchers(mc_engine *e, mc_entity *ent, const char *dir, void *ref);

/* db_values.c: property values of a base (and its cell part) for the store. */
/* values[td->nprops], zeroed by the caller: the Persistent properties of `part` from a
 * persistent_only part stream. 0 or -1 with the reason. */
int db_values_from_stream(mc_engine *e, const mc_entity_type_def *td, mc_part part,
                          mc_istream *is, mc_value *values, char *why, size_t whylen);
/* The same from a part's property struct. */
int db_values_from_struct(mc_engine *e, const mc_entity *ent, mc_part part, const void *props,
                          mc_value *values, char *why, size_t whylen);
void db_values_free(const mc_entity_type_def *td, mc_value *values);
/* Create a base here from a loaded record (onCreated runs once its record holds dbid and
 * token). NULL with a status and reason. */
mc_entity *db_create_loaded(base_db *db, const mc_persist_record *rec, const char *token,
                            int *status, char *why, size_t whylen);

/* db_write.c */
/* Log a failed store request of an entity. */
void db_log_failure(base_db *db, const char *what, uint16_t type, int32_t id,
                    const mc_persist_result *r);
/* The engine fields the store writes with the properties. */
mc_persist_engine db_engine_fields(const mc_vector3 *pos, const mc_vector3 *dir, int64_t space);
typedef void (*db_written_fn)(mc_engine *e, void *ctx, int status, uint64_t dbid,
                              const char *reason);
/* A write asked while the first one (create) is in flight: it goes when that one ends. */
typedef struct db_waiter {
    struct db_waiter *next;
    bool release_after;
    db_written_fn done;
    void *ctx;
} db_waiter;
/* Release a check-out of ours (counted in db/released once acknowledged; retried with
 * back-off as a give-back is, db_giveback.c). */
void db_release(base_db *db, const mc_entity_type_def *td, uint64_t dbid, const char *token);
/* Tell the store the check-out is live with the base's mailbox; a failure is retried with
 * back-off (bounded), FENCED ends the copy as a fenced write does. */
void db_mark_live(base_db *db, db_rec *rec);
/* Send the writes that waited for a base's create (or check-out takeover): gone, they fail
 * DESTROYED; closed, UNAVAILABLE. */
void db_send_waiting(base_db *db, int32_t id, struct db_waiter *waiting, bool gone,
                     bool closed);
/* The copy here holds no check-out (refused by token, or a takeover failed): its cell is
 * destroyed, then the base, without writing. */
void db_evict(base_db *db, db_rec *rec);
/* db_takeover.c: a restored base takes its check-out over from its dead owner (issue 20):
 * writes wait meanwhile; refused, the copy here goes (db_evict). 0 or an mc_call_status. */
int db_take_over(mc_engine *e, mc_entity *ent, uint64_t dbid, const char *old_token);
/* The same for an offload (retire_take.c), whose owner is alive: done(e, id, ok, ctx) hears
 * the outcome exactly once (ok: the check-out is this baseapp's now) unless the call
 * fails at once (then never). */
typedef void (*db_taken_fn)(mc_engine *e, int32_t id, bool ok, void *ctx);
int db_take_over_then(mc_engine *e, mc_entity *ent, uint64_t dbid, const char *old_token,
                      db_taken_fn done, void *ctx);
/* Free the mark_live retries still waiting (the store was freed: none is in it). */
void db_lives_free(base_db *db);
/* db/faults/holdWrites and db/faults/heldWrites (the rehearsal of a late resent write). */
int db_add_fault_watchers(base_db *db, mc_watchers *w);
/* Send the held writes (before the store goes: they end CLOSED with it). */
void db_held_free(base_db *db);
/* Store the record's auto-load flag when it differs from what was stored. */
void db_store_autoload(base_db *db, db_rec *rec);
/* Its cell was created, destroyed or lost (or could not be created): a fenced copy's next
 * step (destroy the cell, or the base once the cell is gone). */
void db_on_cell_change(mc_engine *e, int32_t id);
/* Write a base (and its cell part): done (may be NULL) gets the outcome exactly once, later,
 * unless this returns an error. release_after: release the check-out after the write. */
int db_write(base_db *db, mc_entity *ent, bool release_after, db_written_fn done, void *ctx);

/* db_giveback.c */
/* Give back a check-out Redis may have applied for a load or create that was taken for
 * failed (or a won check-out not used): released with its token, retried with back-off. */
void db_give_back(base_db *db, const mc_entity_type_def *td, uint64_t dbid, const char *token,
                  const char *what);
/* A failed create or check-out may have been applied (no answer in time, unreadable). */
bool db_may_have_won(mc_persist_status st);
/* db/faults/loseWonAnswer: when set and r won, *lost is r taken for unanswered (true). */
bool db_fault_lose_won(base_db *db, const mc_persist_result *r, mc_persist_result *lost);
/* Free the give-backs waiting for a retry (after the store was freed). */
void db_givebacks_free(base_db *db);

/* db_cells.c */
/* A loaded base whose record names a space gets its cell back (from the loop, unless the
 * game gave it one first): near a live cell of that space known here, else in a new space
 * that then stands for it here. */
void db_restore_cell(base_db *db, mc_entity *ent, int64_t space);
/* A base's cell was created in space (CREATE_CELL's answer). */
void db_note_cell_space(mc_engine *e, int32_t id, int32_t space);
/* Free the restores waiting (shutting down) and the space map. */
void db_restores_free(base_db *db);

/* db_destroy.c */
/* The base is being destroyed: write, delete or just release it as its record says. */
void db_on_destroy(mc_engine *e, mc_entity *ent);
/* The entity is gone and its record holds a database id: delete or release it, forget the
 * record. */
void db_end_gone(base_db *db, db_rec *rec);

/* db_archive.c */
/* Archive a slice of the entities (tick). */
void db_archive_tick(base_db *db, uint64_t elapsed_ms);
/* Graceful shutdown: write and release every entity with a database id. */
void db_on_shutdown(mc_engine *e);
/* After the loop ended: run it again until those writes are answered (bounded). */
void db_after_run(mc_engine *e);

/* db_load.c */
/* The type has an <Identifier> property. */
bool db_has_identifier(const mc_entity_type_def *td);
typedef void (*db_loaded_fn)(mc_engine *e, void *ctx, int status, const mc_mailbox_ref *base,
                             uint64_t dbid, bool was_live, const char *reason);
/* Load (type, dbid) or (type, identifier) here: done gets the outcome exactly once, later,
 * unless this returns an error. */
int db_load(base_db *db, const mc_entity_type_def *td, uint64_t dbid, const char *ident,
            db_loaded_fn done, void *ctx);
/* Fail every load in progress (shutting down). */
void db_loads_free(base_db *db);

/* db_remote.c */
/* The same on the least-loaded baseapp (LOAD_BASE). */
int db_load_anywhere(base_db *db, const mc_entity_type_def *td, uint64_t dbid,
                     const char *ident, db_loaded_fn done, void *ctx);
/* The same on the baseapp at addr ("IP:PORT"). */
int db_load_on(base_db *db, const char *addr, const mc_entity_type_def *td, uint64_t dbid,
               const char *ident, db_loaded_fn done, void *ctx);
void db_on_load_base(mc_engine *e, const mc_origin *o, mc_istream *is);

/* db_autoload.c */
/* Load the entities flagged auto-load (once, when registered). */
void db_autoload_tick(base_db *db);

/* db_api.c: the game's persistence functions and the operator's commands. */
int db_op_write(const mc_call_ctx *call, mc_write_fn fn, void *ud);
int64_t db_op_database_id(const mc_call_ctx *call);
int db_op_set_auto_load(const mc_call_ctx *call, bool on);
int db_op_create_from_db(const mc_call_ctx *call, bool anywhere, const char *type,
                         int64_t dbid, const char *name, mc_load_fn fn, void *ud);
int db_op_destroy_base(const mc_call_ctx *call, bool delete_from_db, bool write_to_db);
int db_add_commands(mc_engine *e);

#endif
