/* The engine API: what game code calls to create and destroy entities, give them cells in
 * spaces, set timers, find services by name and convert mailboxes. The names are
 * BigWorld's where it has them, with an mc_ prefix (createBaseAnywhere ->
 * mc_createBaseAnywhere). docs/ENTITIES.md tells the whole story.
 *
 * Every function takes the mc_call_ctx the handler or callback received: it names the
 * calling entity (call->self, whose component says the part: BASE or CELL) and the engine
 * (call->ops). A base-part function called from a cell handler (or the reverse) returns
 * MC_CALL_ERR_STATE. Statuses are mc_call_status values (common/game_module.h).
 *
 * Asynchronous results (creations, global names, two-way calls) arrive in callbacks that
 * get the calling entity's context again; mc_self() gives its properties then, or NULL
 * when it was destroyed in the meantime. A callback is called exactly once when the
 * function returned MC_CALL_OK, and never when it returned an error.
 *
 * Engine callbacks (onCreated, onDestroy, onGetCell, onLoseCell, onCreateCellFailure,
 * onSpaceGone, onTimer, onEnteredAoI, onLeftAoI, onTeleportFailure, onRestoreCell, onRestore,
 * and for proxies onEntitiesEnabled and onClientDeath) are functions the game defines as
 * <Type>_<part>_<callback> (see mc_game_hooks in common/game_module.h and docs/ENTITIES.md).
 */
#ifndef MC_COMMON_ENTITY_API_H
#define MC_COMMON_ENTITY_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/game_module.h"

/* An initial property value, by property name (base or cell property of the type). */
typedef struct {
    const char *name;
    const mc_value *value;
} mc_prop_init;

/* A base was created (status MC_CALL_OK, `base` its BASE mailbox) or not (an error status,
 * `reason` says why; base is none). */
typedef void (*mc_create_fn)(const mc_call_ctx *call, void *ud, int status,
                             mc_mailbox_ref base, const char *reason);
/* A global name was looked up: status MC_CALL_OK with a SERVICE mailbox, or
 * MC_CALL_ERR_NOT_FOUND / another error. */
typedef void (*mc_lookup_fn)(const mc_call_ctx *call, void *ud, int status,
                             mc_mailbox_ref service);
/* An operation finished: MC_CALL_OK or an error with a reason. */
typedef void (*mc_done_fn)(const mc_call_ctx *call, void *ud, int status, const char *reason);

/* writeToDB finished: status MC_CALL_OK once Redis acknowledged the write, with the
 * entity's database id (positive); or an error (MC_CALL_ERR_UNAVAILABLE: no database or it
 * did not answer; MC_CALL_ERR_BUSY: its queue is full; MC_CALL_ERR_TAKEN: another entity
 * holds the identifier value; MC_CALL_ERR_STATE: this baseapp no longer holds the entity's
 * check-out) with a reason and the database id it had (0 before its first write). */
typedef void (*mc_write_fn)(const mc_call_ctx *call, void *ud, int status, int64_t dbid,
                            const char *reason);
/* createBaseFromDB finished: MC_CALL_OK with the base's BASE mailbox and database id;
 * was_live is true when the entity was live already (loaded earlier, here or on another
 * baseapp): base is then that live entity's mailbox. Or an error with a reason
 * (MC_CALL_ERR_NOT_FOUND: no such entity; MC_CALL_ERR_BUSY: it is being loaded elsewhere
 * and did not become live within --loadWaitMs; MC_CALL_ERR_ARGS: the stored entity does not
 * fit the defs; MC_CALL_ERR_UNAVAILABLE: no database). */
typedef void (*mc_load_fn)(const mc_call_ctx *call, void *ud, int status, mc_mailbox_ref base,
                           int64_t dbid, bool was_live, const char *reason);

/* The engine's side (one table per engine; game code never calls these directly). */
typedef struct mc_engine_ops {
    void *(*self)(const mc_call_ctx *call);
    double (*time)(const mc_call_ctx *call);
    int (*add_timer)(const mc_call_ctx *call, double initial_s, double repeat_s,
                     int64_t user_arg, uint32_t *out_id);
    int (*del_timer)(const mc_call_ctx *call, uint32_t timer_id);
    int (*destroy)(const mc_call_ctx *call);
    int (*create_base_locally)(const mc_call_ctx *call, const char *type,
                               const mc_prop_init *props, size_t nprops, mc_mailbox_ref *out);
    int (*create_base_anywhere)(const mc_call_ctx *call, const char *type,
                                const mc_prop_init *props, size_t nprops, mc_create_fn fn,
                                void *ud);
    int (*create_base_remotely)(const mc_call_ctx *call, const mc_mailbox_ref *where,
                                const char *type, const mc_prop_init *props, size_t nprops,
                                mc_create_fn fn, void *ud);
    int (*create_cell_entity)(const mc_call_ctx *call, const mc_mailbox_ref *near,
                              const mc_vector3 *position, const mc_vector3 *direction);
    int (*create_in_new_space)(const mc_call_ctx *call, const mc_vector3 *position,
                               const mc_vector3 *direction);
    int (*destroy_cell_entity)(const mc_call_ctx *call);
    mc_mailbox_ref (*base_cell)(const mc_call_ctx *call);
    void *(*cell_data)(const mc_call_ctx *call);
    int (*register_globally)(const mc_call_ctx *call, const char *name, mc_done_fn fn,
                             void *ud);
    int (*deregister_globally)(const mc_call_ctx *call, const char *name);
    int (*look_up_base_by_name)(const mc_call_ctx *call, const char *name, mc_lookup_fn fn,
                                void *ud);
    int (*get_vec)(const mc_call_ctx *call, int which, mc_vector3 *out);
    int (*set_vec)(const mc_call_ctx *call, int which, mc_vector3 v);
    int32_t (*space_id)(const mc_call_ctx *call);
    mc_mailbox_ref (*cell_base)(const mc_call_ctx *call);
    int (*destroy_space)(const mc_call_ctx *call);
    /* Persistence (baseapps started with a database). */
    int (*write_to_db)(const mc_call_ctx *call, mc_write_fn fn, void *ud);
    int64_t (*database_id)(const mc_call_ctx *call);
    int (*set_auto_load)(const mc_call_ctx *call, bool on);
    int (*create_base_from_db)(const mc_call_ctx *call, bool anywhere, const char *type,
                               int64_t dbid, const char *name, mc_load_fn fn, void *ud);
    int (*destroy_base)(const mc_call_ctx *call, bool delete_from_db, bool write_to_db);
    /* Area of interest (cellapps). */
    int (*set_witness)(const mc_call_ctx *call, bool on);
    int (*set_aoi_radius)(const mc_call_ctx *call, float radius, float hysteresis);
    int (*entities_in_range)(const mc_call_ctx *call, float radius, const char *type,
                             mc_mailbox_ref *out, size_t max, size_t *count);
    int (*teleport)(const mc_call_ctx *call, const mc_mailbox_ref *nearby, mc_vector3 position,
                    mc_vector3 direction);
    /* Proxies (baseapps). */
    int (*give_client_to)(const mc_call_ctx *call, const mc_mailbox_ref *to);
    bool (*has_client)(const mc_call_ctx *call);
} mc_engine_ops;

/* ---- both parts ---------------------------------------------------------------------- */

/* The calling entity's property struct (<Type>_base or <Type>_cell), NULL once destroyed. */
void *mc_self(const mc_call_ctx *call);
/* Seconds on the engine's clock (monotonic; use it, not the system clock). */
double mc_time(const mc_call_ctx *call);
/* Call the part's onTimer(timerId, userArg) after initial_s seconds, then every repeat_s
 * seconds (0 = once). The id (never 0) goes to *out_id. Timers go with the entity. */
int mc_addTimer(const mc_call_ctx *call, double initial_s, double repeat_s, int64_t user_arg,
                uint32_t *out_id);
/* Cancel a timer of the calling entity (MC_CALL_ERR_NOT_FOUND if it has none of that id). */
int mc_delTimer(const mc_call_ctx *call, uint32_t timer_id);
/* Destroy the calling part once the handler returns (onDestroy runs first). A base with a
 * cell (or one being created) is refused with MC_CALL_ERR_STATE: destroyCellEntity first.
 * A cell's base is told (onLoseCell). */
int mc_destroy(const mc_call_ctx *call);

/* ---- base part ----------------------------------------------------------------------- */

/* Create a base of `type` on this baseapp now; its mailbox goes to *out. Properties not
 * given take their defaults; cell properties go to its cellData. */
int mc_createBaseLocally(const mc_call_ctx *call, const char *type, const mc_prop_init *props,
                         size_t nprops, mc_mailbox_ref *out);
/* Create a base on the least-loaded baseapp (the manager says which). */
int mc_createBaseAnywhere(const mc_call_ctx *call, const char *type, const mc_prop_init *props,
                          size_t nprops, mc_create_fn fn, void *ud);
/* Create a base on the baseapp of the base mailbox `where`. */
int mc_createBaseRemotely(const mc_call_ctx *call, const mc_mailbox_ref *where,
                          const char *type, const mc_prop_init *props, size_t nprops,
                          mc_create_fn fn, void *ud);
/* Give the calling base a cell in the space of the cell mailbox `near` (CELL component),
 * at position / direction (NULL: its cellData's, the origin at first). The result comes as
 * onGetCell or onCreateCellFailure. Calls on base.cell made meanwhile wait (bounded). */
int mc_createCellEntity(const mc_call_ctx *call, const mc_mailbox_ref *near,
                        const mc_vector3 *position, const mc_vector3 *direction);
/* The same in a new space, on the least-loaded cellapp. */
int mc_createInNewSpace(const mc_call_ctx *call, const mc_vector3 *position,
                        const mc_vector3 *direction);
/* Destroy the base's cell; onLoseCell follows (its cell properties return to cellData). */
int mc_destroyCellEntity(const mc_call_ctx *call);
/* self.cell: the cell's CELL mailbox, or none while the base has no cell. */
mc_mailbox_ref mc_base_cell(const mc_call_ctx *call);
/* self.cellData: the <Type>_cell struct the base keeps while it has no cell (its next
 * cell starts from it); NULL while a cell exists or the type has no cell part. */
void *mc_cellData(const mc_call_ctx *call);
/* Register the calling base under a cluster-wide name (MC_CALL_ERR_TAKEN if another base
 * has it). The name goes when the base is destroyed or its baseapp dies. */
int mc_registerGlobally(const mc_call_ctx *call, const char *name, mc_done_fn fn, void *ud);
int mc_deregisterGlobally(const mc_call_ctx *call, const char *name);
/* Find the base registered under name: a SERVICE mailbox to it. */
int mc_lookUpBaseByName(const mc_call_ctx *call, const char *name, mc_lookup_fn fn, void *ud);

/* ---- persistence (base part) ---------------------------------------------------------
 * A baseapp started with --redis or --redisCluster keeps entities in Redis
 * (docs/PERSISTENCE.md); without one these return MC_CALL_ERR_UNAVAILABLE. An entity lives
 * at most once in the cluster: the baseapp that loads or first writes it holds its
 * check-out until it is destroyed (or the baseapp dies). Every write and the cell part's
 * Persistent properties, position, direction and space id are stored with the base's. */

/* Write the calling base's Persistent properties (and its cell's, fetched from the cell
 * when it has one) to the database. The first write gives the entity its database id.
 * fn (may be NULL) hears the outcome once Redis acknowledged it. */
int mc_writeToDB(const mc_call_ctx *call, mc_write_fn fn, void *ud);
/* self.databaseID: the base's database id, 0 while it was never written. */
int64_t mc_databaseID(const mc_call_ctx *call);
/* Flag the base to be loaded again when the cluster starts (stored with its next write, or
 * at once when it has a database id). */
int mc_setAutoLoad(const mc_call_ctx *call, bool on);
/* Load a base of `type` from the database here, by database id / by its <Identifier>
 * property's value; fn gets its mailbox (or the live one's, was_live). */
int mc_createBaseFromDB(const mc_call_ctx *call, const char *type, int64_t dbid,
                        mc_load_fn fn, void *ud);
int mc_createBaseFromDBByName(const mc_call_ctx *call, const char *type, const char *name,
                              mc_load_fn fn, void *ud);
/* The same on the least-loaded baseapp (the manager says which). */
int mc_createBaseAnywhereFromDB(const mc_call_ctx *call, const char *type, int64_t dbid,
                                mc_load_fn fn, void *ud);
int mc_createBaseAnywhereFromDBByName(const mc_call_ctx *call, const char *type,
                                      const char *name, mc_load_fn fn, void *ud);
/* BigWorld's destroy(deleteFromDB, writeToDB): destroy the calling base once the handler
 * returns (the rules of mc_destroy apply), deleting it from the database, or writing it a
 * last time (when it has a database id), then releasing its check-out. mc_destroy on a base
 * is mc_destroyBase(call, false, true). */
int mc_destroyBase(const mc_call_ctx *call, bool delete_from_db, bool write_to_db);

/* ---- proxies (base part) --------------------------------------------------------------
 * A base with a client is a proxy: the player's client connected to its baseapp's external
 * interface with a session issued for it (docs/CLIENT.md). Its client hears the base's
 * BASE_AND_CLIENT properties and its CLIENT / CLIENT_VIA_BASE / CLIENT_VIA_CELL calls, and
 * may call its exposed base methods and its cell's exposed cell methods. onClientDeath runs
 * when the client goes (disconnected, silent too long); onEntitiesEnabled when a client has
 * the base as its player (connected, or given by giveClientTo). */

/* BigWorld's giveClientTo: hand the calling base's client to the base `to` (a BASE mailbox
 * of a base on this baseapp, without a client): the client learns its new player, `to`
 * gets onEntitiesEnabled, the caller has no client any more (no onClientDeath).
 * MC_CALL_ERR_NO_CLIENT when the caller has none, MC_CALL_ERR_NO_ENTITY when `to` is not a
 * base here, MC_CALL_ERR_STATE when `to` has a client already or is being destroyed,
 * MC_CALL_ERR_UNAVAILABLE for a base elsewhere (not built: moving clients between
 * baseapps). */
int mc_giveClientTo(const mc_call_ctx *call, const mc_mailbox_ref *to);
/* self.hasClient: whether the calling base has a client now. */
bool mc_hasClient(const mc_call_ctx *call);

/* ---- cell part ----------------------------------------------------------------------- */

mc_vector3 mc_position(const mc_call_ctx *call);
mc_vector3 mc_direction(const mc_call_ctx *call); /* roll, pitch, yaw in radians */
/* Finite values only (MC_CALL_ERR_ARGS otherwise). */
int mc_setPosition(const mc_call_ctx *call, mc_vector3 position);
int mc_setDirection(const mc_call_ctx *call, mc_vector3 direction);
/* The id of the space the cell is in (0 outside a cell handler). */
int32_t mc_spaceID(const mc_call_ctx *call);
/* self.base: the entity's BASE mailbox. */
mc_mailbox_ref mc_cell_base(const mc_call_ctx *call);
/* Destroy the space the calling cell is in, after the handler returns: every cell in it
 * gets onSpaceGone and is destroyed; their bases get onLoseCell. */
int mc_destroySpace(const mc_call_ctx *call);
/* BigWorld's teleport(nearbyMBRef, position, direction): move the calling cell to position
 * and direction in the space of `nearby` (a CELL mailbox; none: its own space). Within a
 * space it is a move; to another space of this cellapp the cell leaves its space (views lose
 * it) and joins the other, at once. To a space on another cellapp (nearby names a cell held
 * there) it answers MC_CALL_OK and the cell moves there once the handler has returned, with
 * its properties, timers and witness state, its calls following it (docs/WORLD.md,
 * "Teleports"); when that move fails (the other cellapp refuses, does not answer in time or
 * dies) the cell stays where it was, as it was, and gets onTeleportFailure(reason) there.
 * MC_CALL_ERR_ARGS for non-finite values, MC_CALL_ERR_NO_ENTITY when nearby is not a live
 * cell here, MC_CALL_ERR_MAILBOX when it is not a CELL mailbox, MC_CALL_ERR_STATE while the
 * cell is moving to another cellapp already, MC_CALL_ERR_BUSY when the cellapp's table of
 * moves is full. */
int mc_teleport(const mc_call_ctx *call, const mc_mailbox_ref *nearby, mc_vector3 position,
                mc_vector3 direction);

/* Why a move to another cellapp failed: the reason onTeleportFailure(reason) gets, on the
 * cellapp where the cell stays (its timers, witness state and queued calls back). */
enum {
    /* the new cellapp refused: nearby's cell (so its space) is not there any more, the
     * entity type is unknown there, or it ran out of memory */
    MC_TELEPORT_REFUSED = 1,
    /* no answer within the call timeout (--callTimeoutMs); a copy made there is dropped */
    MC_TELEPORT_TIMED_OUT = 2,
    /* the new cellapp was declared dead (before it answered, or before it was asked) */
    MC_TELEPORT_PEER_DEAD = 3,
    /* this cellapp could not ask: properties that do not encode, too many timers, out of
     * memory, or no channel to the new cellapp */
    MC_TELEPORT_NOT_SENT = 4,
};

/* ---- area of interest (cell part; docs/WORLD.md) -------------------------------------
 * A *witness* sees the cell entities of its space within its AoI radius (the cellapp's
 * --aoiRadius unless set here), with hysteresis: one comes into view within the radius and
 * leaves once farther than radius + hysteresis. The cellapp updates every witness's view
 * --aoiHz times a second and calls its onEnteredAoI(entity) and onLeftAoI(entityId)
 * callbacks. (A player's cell entity will be a witness while it has a client.) */

/* Make the calling cell a witness (on) or stop it being one (off: everything in view
 * leaves, onLeftAoI for each). */
int mc_setWitness(const mc_call_ctx *call, bool on);
/* The calling cell's AoI radius and hysteresis (finite, radius > 0, hysteresis >= 0, at
 * most the cellapp's --aoiMaxRadius together; MC_CALL_ERR_ARGS otherwise, logged and counted
 * in the cellapp's aoi/radiusRefused, the radius unchanged). Takes effect at the next update;
 * in a space split over several cellapps the others ghost their reals that far to the
 * caller's cell (docs/WORLD.md "Witnesses that see far"), so the view is whole across cell
 * boundaries a tick or two later. */
int mc_setAoIRadius(const mc_call_ctx *call, float radius, float hysteresis);
/* The cell entities of the calling cell's space within radius of it on the ground plane
 * (x, z), nearest first, of entity type `type` (NULL: any), not counting itself: up to max
 * CELL mailboxes into out, how many there are in all into *count (may exceed max). A fresh
 * answer (not the view), for any cell entity, witness or not. */
int mc_entitiesInRange(const mc_call_ctx *call, float radius, const char *type,
                       mc_mailbox_ref *out, size_t max, size_t *count);

/* BigWorld's allClients / otherClients of the calling cell: the target of its one-way client
 * methods' fanout_<Type>_client_<method> senders, that reaches every client whose player's
 * cell sees this entity (otherClients), and its own client too (allClients). Calls on it
 * reach each such client after the entity's introduction and before its departure, in the
 * order made (docs/WORLD.md). It is not a mailbox (mc_clients, common/game_module.h): it
 * names no process and is only called, and only by this entity. None (entity_id 0) outside
 * a cell. */
mc_clients mc_allClients(const mc_call_ctx *call);
mc_clients mc_otherClients(const mc_call_ctx *call);
/* The calling entity's own client (BigWorld's self.client on a base, self.ownClient on a
 * cell): its CLIENT_VIA_BASE mailbox from a base handler, CLIENT_VIA_CELL from a cell one
 * (the cell's base relays to the client). The one way game code reaches "my own client";
 * a call on it when the entity has none is refused with MC_CALL_ERR_NO_CLIENT and counted. */
mc_mailbox_ref mc_ownClient(const mc_call_ctx *call);

/* ---- mailboxes (no engine needed) ---------------------------------------------------- */

/* base.cell: BASE -> CELL_VIA_BASE (and CELL stays CELL); none for anything else. */
mc_mailbox_ref mc_mailbox_cell(mc_mailbox_ref m);
/* cell.base: CELL -> BASE_VIA_CELL (and BASE stays BASE); none for anything else. */
mc_mailbox_ref mc_mailbox_base(mc_mailbox_ref m);
/* .client: BASE -> CLIENT_VIA_BASE, CELL -> CLIENT_VIA_CELL; none for anything else. */
mc_mailbox_ref mc_mailbox_client(mc_mailbox_ref m);

#endif
