/* Persistence store: entities in Redis (one store per process), reached asynchronously on the
 * process's libevent loop through hiredis's async API. Never blocks.
 *
 * Layout of the keys: docs/PERSISTENCE.md. In short, with the default prefix "mc":
 *   mc:e:{Type:dbid}      hash, one field per persistent property (canonical JSON text,
 *                         common/value_json.h) and engine fields "@position", "@direction",
 *                         "@spaceId"
 *   mc:o:{Type:dbid}      hash, the check-out (owner, incarnation, state, mailbox, token)
 *   mc:id:{Type:value}    string, the dbid holding identifier value `value` of Type
 *   mc:t:{Type}           set of the type's dbids
 *   mc:types              set of the type names that have entities
 *   mc:s:{Type}           hash, schema record: property name -> type text
 *   mc:owned:{owner}      set of "Type:dbid" checked out by one owner (process name)
 *   mc:autoload           set of "Type:dbid" to load when the cluster starts
 *   mc:dbid               string, the last database id given (INCR)
 *
 * Every operation is a request with a callback (mc_persist_cb) called exactly once, from the
 * event loop, never from inside the call that started it: with MC_PERSIST_OK only after Redis
 * acknowledged the operation. Requests are sent in order (pipelined) while connected; while
 * Redis is unreachable they wait in a bounded queue (config.queue_max) and are (re)sent after
 * the automatic reconnect (back-off between config.backoff_min_ms and backoff_max_ms). A
 * request that does not fit the queue fails at once (its callback still runs from the loop)
 * with MC_PERSIST_QUEUE_FULL; one still unacknowledged after config.request_timeout_ms fails
 * with MC_PERSIST_UNAVAILABLE (it may or may not have been applied). Every request is
 * idempotent (the same request sent twice after a lost reply has the effect of one), except
 * an import without replace, which answers EXISTS the second time.
 *
 * Check-out: an entity lives at most once in the cluster. A check-out is won atomically (one
 * Lua script) and hands out a fresh random token; every write, mark_live and release of that
 * entity must carry it, and Redis refuses any whose token is not the current owner's
 * (MC_PERSIST_FENCED), so a process that lost its check-out can never overwrite an entity
 * loaded elsewhere. The data layer does not check that a load follows a won check-out: that
 * is the engine's contract (mc-db reads without one).
 *
 * Schema: at the first connection the store compares each entity type's stored schema
 * record with the current defs (mc_persist_schema_compare, schema.h): added properties take
 * their default on load, removed ones are ignored, both reported (logged); a property whose
 * type changed makes every load of that type fail with MC_PERSIST_SCHEMA and a message naming
 * it (the record is then left as it is; mc-db check lists it). A compatible record is
 * replaced by the current schema.
 *
 * Redis Cluster: config.seeds (nseeds > 0). Keys of one entity share a hash slot
 * ({Type:dbid}); identifier index keys live elsewhere (see docs/PERSISTENCE.md for the order of
 * operations that keeps identifiers unique and why it is safe). Every operation runs the same
 * steps on one Redis and on a Redis Cluster.
 *
 * Strings passed in are copied; pointers in a result are valid during the callback only.
 * Nothing here is global: two stores in one process are independent.
 */
#ifndef MC_PERSIST_STORE_H
#define MC_PERSIST_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"
#include "common/value.h"
#include "common/watcher.h"

struct event_base;

typedef struct mc_persist_store mc_persist_store;

typedef enum {
    MC_PERSIST_OK = 0,
    MC_PERSIST_NOT_FOUND,     /* no such entity / identifier */
    MC_PERSIST_OWNED,         /* check-out: already checked out (result.owner says by whom) */
    MC_PERSIST_FENCED,        /* token is not the current owner's (or nothing is checked out) */
    MC_PERSIST_IDENT_TAKEN,   /* the identifier value is held by another entity (result.dbid) */
    MC_PERSIST_EXISTS,        /* import/create of a dbid that already exists */
    MC_PERSIST_SCHEMA,        /* stored schema incompatible with the defs (reason names it) */
    MC_PERSIST_BAD_DATA,      /* data in Redis does not decode (reason names the field) */
    MC_PERSIST_BAD_REQUEST,   /* the caller's arguments (unknown type, value not of its type) */
    MC_PERSIST_QUEUE_FULL,    /* queue bound reached: not sent */
    MC_PERSIST_UNAVAILABLE,   /* not acknowledged within request_timeout_ms */
    MC_PERSIST_AUTH,          /* Redis refused the credentials */
    MC_PERSIST_REDIS,         /* Redis answered with an error (reason holds it) */
    MC_PERSIST_CLOSED,        /* the store was freed before an answer */
} mc_persist_status;

const char *mc_persist_status_name(mc_persist_status st);

/* At most this many Redis Cluster seed addresses. */
#define MC_PERSIST_MAX_SEEDS 16

typedef struct {
    const char *process_name;    /* for logs ("baseapp01"); required */
    /* Either one Redis ... */
    const char *address;         /* "IP:PORT" (default "127.0.0.1:6379" when no seeds) */
    /* ... or a Redis Cluster: seed addresses "IP:PORT" (nseeds > 0 selects cluster mode). */
    const char *seeds[MC_PERSIST_MAX_SEEDS];
    size_t nseeds;
    const char *user;            /* ACL user, NULL = default user */
    const char *password_file;   /* file whose first line is the password; NULL = no AUTH */
    const char *prefix;          /* key prefix, default "mc" */
    const mc_entity_defs *defs;  /* required; must outlive the store */
    size_t queue_max;            /* requests waiting or in flight, default 100000 */
    size_t inflight_max;         /* requests sent and not yet answered, default 1000 */
    uint32_t backoff_min_ms;     /* reconnect / resend back-off, default 100 */
    uint32_t backoff_max_ms;     /* default 5000 */
    uint32_t request_timeout_ms; /* default 30000; a request still unacknowledged then fails
                                  * UNAVAILABLE (UINT32_MAX: about 50 days, in effect never:
                                  * writes then fail only when the queue bound is hit) */
    bool schema_readonly;        /* tools (mc-db): no schema check at connection and no
                                  * schema record written; loads are never refused for it */
} mc_persist_config;

/* A check-out's owner record. */
typedef enum {
    MC_PERSIST_LOADING = 0, /* won, the entity is being loaded */
    MC_PERSIST_LIVE = 1,    /* mark_live was called: mailbox is set */
} mc_persist_owner_state;

typedef struct {
    const char *name;        /* owner process name */
    uint64_t incarnation;    /* owner's incarnation (mc_persist_set_owner) */
    mc_persist_owner_state state;
    const uint8_t *mailbox;  /* bytes given to mark_live (NULL/0 while loading) */
    size_t mailbox_len;
} mc_persist_owner;

/* Engine fields written with the properties. */
typedef struct {
    float position[3];
    float direction[3];      /* roll, pitch, yaw as the engine keeps them */
    int64_t space_id;        /* 0 = none */
} mc_persist_engine;

/* An entity to write: values[i] is the value of property type->props[i] (only persistent
 * properties are read; others may be zeroed). Values are rendered when the call is made. */
typedef struct {
    const mc_entity_type_def *type;
    uint64_t dbid;               /* 0 for create */
    const mc_value *values;      /* type->nprops entries */
    mc_persist_engine engine;
    uint64_t serial;             /* write: its place in the check-out's writes (1, 2, ...;
                                  * below 2^53); one at or below a serial already written
                                  * with that check-out is not applied (answered OK: a newer
                                  * write landed). 0: unordered. Ignored by create/import. */
} mc_persist_entity;

/* A loaded entity: values[i] for every property of the type (non-persistent and added ones
 * hold their default), engine fields, and the schema differences met. */
typedef struct {
    const mc_entity_type_def *type;
    uint64_t dbid;
    mc_value *values;            /* type->nprops entries, owned by the result */
    mc_persist_engine engine;
    size_t nadded;               /* persistent properties absent in Redis (defaulted) */
    const char *const *added;
    size_t nremoved;             /* fields in Redis that are no property now (ignored) */
    const char *const *removed;
} mc_persist_record;

typedef struct {
    const char *name;
    uint64_t count;              /* entities of the type (SCARD of mc:t:{Type}) */
} mc_persist_type_count;

/* What a request produced; fields not meaningful for the request are zero/NULL. */
typedef struct {
    mc_persist_status status;
    const char *reason;              /* one line, "" on success */
    uint64_t dbid;                   /* create, check-out, lookup; IDENT_TAKEN: the holder */
    const char *token;               /* create, check-out won; also when a create or
                                      * check-out failed (UNAVAILABLE...): the token it was
                                      * sent with, which Redis may have applied - give it
                                      * back (release) when dbid is set */
    const mc_persist_owner *owner;   /* check-out OWNED */
    const mc_persist_record *record; /* load */
    const uint64_t *dbids;           /* scan_type: one page */
    size_t ndbids;
    const char *const *refs;         /* scan_autoload: "Type:dbid" */
    size_t nrefs;
    uint64_t cursor;                 /* scans: next cursor, 0 when done */
    const mc_persist_type_count *types; /* list_types */
    size_t ntypes;
    uint64_t count;                  /* release_owner: check-outs released */
} mc_persist_result;

typedef void (*mc_persist_cb)(void *ctx, const mc_persist_result *r);

/* Create a store and start connecting (returns before any I/O completes). NULL with a reason
 * in err on a bad configuration (missing defs or name, unreadable password file, bad
 * address). */
mc_persist_store *mc_persist_store_new(struct event_base *base, const mc_persist_config *cfg,
                                       char *err, size_t errlen);
/* Free: every pending callback runs with MC_PERSIST_CLOSED first; none runs after it returns.
 * May be called from inside one of the store's own callbacks (the memory is then released when
 * that callback returns). Removes nothing from a watcher tree: call mc_persist_remove_watchers
 * before if they were added. */
void mc_persist_store_free(mc_persist_store *s);

/* The owner identity recorded by check-outs and creates (process name as registered with the
 * manager, and an incarnation that differs every time the process starts). Must be set
 * before the first check-out or create. */
void mc_persist_set_owner(mc_persist_store *s, const char *owner, uint64_t incarnation);

/* Connected, authenticated and schema checked. */
bool mc_persist_ready(const mc_persist_store *s);
/* Requests queued or in flight. */
size_t mc_persist_queue_depth(const mc_persist_store *s);

/* A gate on the requests that change Redis (create, write, delete, import, the check-outs,
 * mark_live, the releases, set_autoload, drop_stale_ident): while open(ctx) is false none of
 * them is sent, nor sent again after a lost connection; each waits in the queue at its place,
 * with everything queued behind it, until the gate opens (looked at whenever the store would
 * send, and on its 100 ms tick), failing as usual at its timeout (UNAVAILABLE) or at the
 * queue's bound (QUEUE_FULL). The baseapp gates on its manager lease (server/lease.h): a
 * process out of touch with the manager writes nothing. NULL: no gate (the default). */
void mc_persist_set_write_gate(mc_persist_store *s, bool (*open)(void *ctx), void *ctx);
/* Requests that change Redis waiting in the queue while the gate is closed (0 when open). */
size_t mc_persist_gated(const mc_persist_store *s);

/* Watchers under dir: connected, address, queueDepth, queueMax, inFlight, writesOk,
 * writesFailed, writesRetried, loadsOk, loadsFailed, checkoutsWon, checkoutsOwned,
 * fenced, reconnects, redirects, lastError, schema/<Type> ("ok", "added: a, b",
 * "refused: changed: ..."). The store must outlive them (or remove them first).
 * Returns MC_WATCH_OK or the first failure. */
mc_watch_status mc_persist_add_watchers(mc_persist_store *s, mc_watchers *w, const char *dir);
void mc_persist_remove_watchers(mc_persist_store *s, mc_watchers *w, const char *dir);

/* --- database ids, create, write, delete ------------------------------------------------ */

/* Create: a new dbid (INCR mc:dbid), the first write, the identifier index, the type set and a
 * check-out by this store's owner (state LOADING... then the caller calls mark_live). Result:
 * dbid and token; IDENT_TAKEN when the identifier value is held (result.dbid = holder). */
void mc_persist_create(mc_persist_store *s, const mc_persist_entity *e, mc_persist_cb cb,
                       void *ctx);
/* Write every persistent property and the engine fields of e->dbid, fenced by token; keeps
 * the identifier index (IDENT_TAKEN when the new value is another entity's: nothing written). */
void mc_persist_write(mc_persist_store *s, const mc_persist_entity *e, const char *token,
                      mc_persist_cb cb, void *ctx);
/* Delete the entity, its identifier index entry, its check-out and its autoload flag. With a
 * token: fenced like a write. With token NULL (operators, mc-db): refused (OWNED) while the
 * entity is checked out unless force. A second delete of a gone entity: NOT_FOUND. */
void mc_persist_delete(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                       const char *token, bool force, mc_persist_cb cb, void *ctx);
/* Import (mc-db): write e at its own dbid without a check-out (EXISTS when it is there unless
 * replace); raises mc:dbid to at least e->dbid. */
void mc_persist_import(mc_persist_store *s, const mc_persist_entity *e, bool replace,
                       mc_persist_cb cb, void *ctx);

/* --- check-out ------------------------------------------------------------------------- */

/* Check out (type, dbid): OK with a fresh token (state LOADING), OWNED with result.owner, or
 * NOT_FOUND. */
void mc_persist_checkout(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                         mc_persist_cb cb, void *ctx);
/* The same by identifier value (the type's <Identifier> property, UTF-8 text): result.dbid
 * is set for OK and OWNED. */
void mc_persist_checkout_ident(mc_persist_store *s, const mc_entity_type_def *type,
                               const char *ident, mc_persist_cb cb, void *ctx);
/* The check-out becomes LIVE with the entity's mailbox (opaque bytes, e.g. an encoded
 * mc_mailbox_ref). Fenced. */
void mc_persist_mark_live(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                          const char *token, const uint8_t *mailbox, size_t len,
                          mc_persist_cb cb, void *ctx);
/* Release one check-out. OK also when it was already released; FENCED when another token
 * holds it now. */
/* Take a check-out over from a dead owner (a base restored from its backup, issue 20): one
 * atomic script on the owner record: it must still hold old_token (the token is the
 * check-out's identity, drawn afresh for each check-out and takeover; the owner's name is
 * not checked: names are reused); it then names this store's owner and incarnation, a new
 * token (result.token), state live with mailbox, and its write serial starts afresh.
 * FENCED when the record is gone or holds another token (released meanwhile, or loaded
 * or taken over elsewhere). */
void mc_persist_take_over(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                          const char *old_token, const uint8_t *mailbox, size_t len,
                          mc_persist_cb cb, void *ctx);
void mc_persist_release(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                        const char *token, mc_persist_cb cb, void *ctx);
/* Release every check-out of a dead owner incarnation (incarnation 0: every incarnation of
 * that name). Idempotent and safe from several processes at once; result.count = released
 * by this call. */
void mc_persist_release_owner(mc_persist_store *s, const char *owner, uint64_t incarnation,
                              mc_persist_cb cb, void *ctx);

/* Release one check-out of a dead owner incarnation, found by its key (not through the
 * owner's set, which may not name it): atomic and O(1); result.count = 1 when released, 0
 * when the entity is not checked out by that owner (incarnation 0: any of that name). The
 * member "Type:dbid" leaves the owner's set unless another incarnation of the name holds
 * the check-out. Idempotent. */
void mc_persist_release_checkout(mc_persist_store *s, const mc_entity_type_def *type,
                                 uint64_t dbid, const char *owner, uint64_t incarnation,
                                 mc_persist_cb cb, void *ctx);

/* --- load, lookup, enumeration ------------------------------------------------------------ */

/* Load (type, dbid): result.record, or NOT_FOUND, SCHEMA, BAD_DATA (reason names the field). */
void mc_persist_load(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                     mc_persist_cb cb, void *ctx);
/* The dbid holding an identifier value (no check-out): result.dbid or NOT_FOUND. */
void mc_persist_lookup(mc_persist_store *s, const mc_entity_type_def *type, const char *ident,
                       mc_persist_cb cb, void *ctx);
/* Every type with entities (also those no longer in the defs) and its count. */
void mc_persist_list_types(mc_persist_store *s, mc_persist_cb cb, void *ctx);
/* One page of a type's dbids (SSCAN; start with cursor 0, continue until result.cursor == 0;
 * a page may be empty). Type by name so that types gone from the defs can be listed. */
void mc_persist_scan_type(mc_persist_store *s, const char *type_name, uint64_t cursor,
                          mc_persist_cb cb, void *ctx);
/* Flag an entity to be loaded when the cluster starts (or clear the flag). Not fenced. */
void mc_persist_set_autoload(mc_persist_store *s, const mc_entity_type_def *type,
                             uint64_t dbid, bool on, mc_persist_cb cb, void *ctx);
/* One page of the autoload set: result.refs ("Type:dbid"), result.cursor. */
void mc_persist_scan_autoload(mc_persist_store *s, uint64_t cursor, mc_persist_cb cb,
                              void *ctx);
/* The raw fields of an entity hash (mc-db export): result.refs holds name, value, name,
 * value... (nrefs even), NOT_FOUND when absent. */
void mc_persist_load_raw(mc_persist_store *s, const char *type_name, uint64_t dbid,
                         mc_persist_cb cb, void *ctx);

/* The check-out record of an entity (mc-db show): result.refs holds field, value, ... of
 * mc:o:{Type:dbid} (owner, incarnation, state, token, since, and mailbox: bytes, which end at
 * their first NUL here); nrefs 0 when it is not checked out. */
void mc_persist_read_owner(mc_persist_store *s, const char *type_name, uint64_t dbid,
                           mc_persist_cb cb, void *ctx);

/* Redis nodes holding data: 1 with one Redis; with a Redis Cluster, the masters of the slot
 * map (known once connected: mc_persist_ready). */
size_t mc_persist_node_count(const mc_persist_store *s);
/* One page of the identifier index keys on node i (SCAN MATCH prefix:id:*, start with cursor
 * 0, continue until result.cursor == 0): result.refs holds the keys. */
void mc_persist_scan_idents(mc_persist_store *s, size_t node, uint64_t cursor,
                            mc_persist_cb cb, void *ctx);
/* Delete an identifier index entry that is stale: its entity does not hold the value (or is
 * gone). OK when deleted, NOT_FOUND when there is no entry, EXISTS when the entity holds the
 * value (nothing deleted). For operators (mc-db unindex). */
void mc_persist_drop_stale_ident(mc_persist_store *s, const mc_entity_type_def *type,
                                 const char *ident, mc_persist_cb cb, void *ctx);

/* The stored schema record of a type (mc-db check): result.refs holds property, type text,
 * ... (nrefs even; empty when there is none). */
void mc_persist_read_schema(mc_persist_store *s, const char *type_name, mc_persist_cb cb,
                            void *ctx);

#endif
