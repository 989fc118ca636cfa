/* The entity engine: what baseapps and cellapps share to host entities.
 *
 * An engine sits on an mc_server (common/server). It loads the game module (--game) checked
 * against the process's defs, keeps the entity table, routes every mailbox call (one-way and
 * two-way) to the process holding the part it names, dispatches the calls that arrive to the
 * game's handlers after checking entity, part, method and arguments, runs timers, counts
 * everything under watchers (entities/, calls/) and offers operator commands (command/...).
 *
 * What differs between a baseapp and a cellapp (which components it accepts, how it relays
 * *via* calls, cells and spaces) is the role's: it hands the engine an mc_role_part table.
 * Everything runs on the server's event loop; nothing blocks.
 */
#ifndef MC_ENTITY_ENGINE_H
#define MC_ENTITY_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/entity_api.h"
#include "common/game_module.h"
#include "entity/entity.h"
#include "entity/wire.h"
#include "mercury/address.h"
#include "server/server.h"

typedef struct mc_engine mc_engine;

/* Where a message came from, so that it can be answered: a peer (on the channel to its
 * address) or this process itself (the local queue). */
typedef struct {
    bool local;
    mc_address addr;            /* the peer, or our own address */
    bool is_request;
    uint32_t reply_id;          /* peer requests */
    struct mc_pending *pending; /* local requests: who waits */
} mc_origin;

/* Reasons a call is refused by its receiver (watchers calls/refused/<name>). */
typedef enum {
    MC_REFUSE_MALFORMED = 0,
    MC_REFUSE_NO_ENTITY,
    MC_REFUSE_WRONG_TYPE,
    MC_REFUSE_WRONG_PART,
    MC_REFUSE_NO_METHOD,
    MC_REFUSE_BAD_ARGS,
    MC_REFUSE_HANDLER,
    MC_REFUSE_DESTROYED,
    MC_REFUSE_NO_CLIENT,
    MC_REFUSE_NO_CELL,
    MC_REFUSE_QUEUE_FULL,
    MC_REFUSE_NOT_SERVICE,
    MC_REFUSE_PROCESS_DEAD,
    MC_REFUSE_COUNT
} mc_refuse_reason;

const char *mc_refuse_reason_name(mc_refuse_reason r);

/* An entity message the role takes (CREATE_BASE, CREATE_CELL, ...), with its payload. */
typedef void (*mc_role_message_fn)(mc_engine *e, const mc_origin *o, mc_istream *data);
typedef struct {
    uint8_t id;
    mc_role_message_fn fn;
} mc_role_message;

/* The role's part of the engine. */
typedef struct {
    mc_part part; /* MC_PART_BASE (baseapp) or MC_PART_CELL (cellapp) */
    /* An ENTITY_CALL arrived (header checked, args not yet). */
    void (*on_call)(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                    const uint8_t *args, size_t len);
    /* Every other entity message the role takes, one handler per id: the engine's one
     * dispatch of an entity message runs the handler of its id; a message the role does not
     * list is refused (wrongPart). The engine refuses to start with an id listed twice, or
     * ENTITY_CALL (that is on_call). */
    const mc_role_message *messages;
    size_t message_count;
    /* The manager declared the process at addr dead (after the engine failed its calls). */
    void (*on_peer_death)(mc_engine *e, const char *addr);
    /* The same death, told first (before the engine fails its calls, which may run the
     * role's answer handlers): stopped is true when the process deregistered after a
     * graceful stop, false when it was declared dead (killed, silent, fenced). May be NULL. */
    void (*on_peer_down)(mc_engine *e, const char *addr, bool stopped);
    /* Release the role's state of an entity about to be freed (after onDestroy). */
    void (*on_destroy)(mc_engine *e, mc_entity *ent);
    /* The process is shutting down (before the engine's own cleanup). */
    void (*on_shutdown)(mc_engine *e);
    /* Graceful shutdown, after on_shutdown, before deregistering (may be NULL): true while
     * the role still hands work over (mc_server_desc.draining). */
    bool (*draining)(mc_engine *e);
    /* Watchers of one entity beyond the engine's (dir is "entities/<id>"): getters take
     * `ref` as their ctx and find the entity with mc_engine_watch_entity (the watchers go
     * with the entity's directory). */
    void (*add_entity_watchers)(mc_engine *e, mc_entity *ent, const char *dir, void *ref);
    /* The engine is being freed (entities are gone): release the role's state. */
    void (*on_free)(mc_engine *e);
    /* Set up the role's state once the engine exists (0, or -1 with a reason). */
    int (*on_init)(mc_engine *e, char *err, size_t errlen);
    /* The engine API table game code reaches through call->ops. */
    const mc_engine_ops *ops;
    /* Options of the role beside the engine's (may be NULL); the role checks them in
     * on_init (a bad value fails the start with its reason). */
    const mc_option *options;
    size_t option_count;
    /* The loop ended after a graceful shutdown, before the server is freed: the role may
     * run it again, bounded, to finish work it started in on_shutdown (may be NULL). */
    void (*after_run)(mc_engine *e);
    /* The manager declared a process dead or stopped (after on_peer_death): its registered
     * name, pid, host and incarnation (random per start, 0 when it gave none) as the manager
     * knew them; stopped: it deregistered after a graceful shutdown (may be NULL). */
    void (*on_process_death)(mc_engine *e, const char *name, uint32_t pid, const char *host,
                             uint64_t incarnation, const char *addr, bool stopped);
    /* A cell entity called a client method on its allClients / otherClients (all: its own
     * client too): 0 or an mc_call_status (may be NULL: such calls are refused). */
    int (*client_fan_out)(mc_engine *e, mc_entity *ent, bool all, uint16_t method,
                          const uint8_t *args, size_t len);
    /* A control message the framework passes to the role (CELL_LAYOUT, from the manager
     * only, on a cellapp): the protobuf payload (may be NULL: such messages are logged and
     * dropped). */
    void (*on_control)(mc_engine *e, uint8_t msg_id, const char *src, const uint8_t *data,
                       size_t len);
    /* An entity's onTimer ran for work_us microseconds (by the one clock; may be NULL): the
     * cellapp counts it as the work of the entity's space (docs/WORLD.md "Load balancing").
     * The entity may be gone: look it up by id. */
    void (*on_timer_work)(mc_engine *e, int32_t entity, uint64_t work_us);
} mc_role_part;

/* ---- the server glue (main.c) -------------------------------------------------------- */

/* Options every entity process takes (--game, --callTimeoutMs, --cellQueueMax). */
extern const mc_option mc_engine_options[];
extern const size_t mc_engine_option_count;
/* The role messages to put in mc_server_desc (handlers take the server as ctx and find the
 * engine as the role ctx). */
extern const mc_message_def mc_engine_messages[];
extern const size_t mc_engine_message_count;
/* Fill a server desc for an entity role (role, summary, options, messages, callbacks);
 * the engine itself is made in on_ready-time by mc_engine_attach. */
void mc_engine_fill_desc(mc_server_desc *desc, const mc_role_part *part, void *holder);
/* main(): builds the server and the engine and runs them. */
int mc_engine_main(mc_role role, const char *summary, bool has_external,
                   const mc_role_part *part, int argc, char **argv);

/* ---- for the role ---------------------------------------------------------------------- */

mc_server *mc_engine_server(mc_engine *e);
const mc_entity_defs *mc_engine_defs(mc_engine *e);
const mc_game_module *mc_engine_module(mc_engine *e);
const mc_role_part *mc_engine_part(mc_engine *e);
mc_entity_table *mc_engine_table(mc_engine *e);
/* Our internal address (what our mailboxes carry). */
const mc_address *mc_engine_address(mc_engine *e);
bool mc_engine_is_self(mc_engine *e, const mc_address *a);
/* A mailbox to a part of an entity held here. */
mc_mailbox_ref mc_engine_mailbox(mc_engine *e, const mc_entity *ent, mc_component c);
/* The address a mailbox names. */
void mc_mailbox_address(const mc_mailbox_ref *m, mc_address *out);
uint32_t mc_engine_cell_queue_max(mc_engine *e);
/* --callTimeoutMs: how long a request waits for its answer. */
mc_time_us mc_engine_call_timeout(mc_engine *e);
/* The entity a per-entity watcher ref names (NULL once it is gone); *e_out its engine. */
mc_entity *mc_engine_watch_entity(void *ref, mc_engine **e_out);
/* True while the engine is being freed (nothing is sent any more). */
bool mc_engine_freeing(mc_engine *e);
/* Text of a mailbox for logs and watchers: "BASE 12 at 10.0.0.1:20013 (Avatar)". */
void mc_engine_mailbox_text(mc_engine *e, const mc_mailbox_ref *m, char *out, size_t outlen);

/* Entities: a new record of type with a fresh id (or `id` when positive) and props of its
 * part initialised to defaults; added to the table with its watchers. NULL with why. */
mc_entity *mc_engine_new_entity(mc_engine *e, uint16_t type, int32_t id, char *why,
                                size_t whylen);
/* Ask for an entity's destruction: it is freed once the current handler has returned
 * (onDestroy first, then the role's on_destroy). */
void mc_engine_destroy_entity(mc_engine *e, mc_entity *ent);
mc_entity *mc_engine_find(mc_engine *e, int32_t id);
/* The entity the call context names, on this engine and of this part (NULL otherwise). */
mc_entity *mc_engine_entity_of(const mc_call_ctx *call, mc_part part);
mc_engine *mc_engine_of(const mc_call_ctx *call);

/* Run a hook: the call context is the entity's. Returns the hook's result (0 when the game
 * defines none). A failure is logged and counted. */
typedef enum {
    MC_HOOK_CREATED,
    MC_HOOK_DESTROY,
    MC_HOOK_GET_CELL,
    MC_HOOK_LOSE_CELL,
    MC_HOOK_CREATE_CELL_FAILURE,
    MC_HOOK_SPACE_GONE,
    MC_HOOK_CLIENT_DEATH,       /* base proxies: its client went */
    MC_HOOK_ENTITIES_ENABLED,   /* base proxies: a client has it as its player now */
    MC_HOOK_CLIENT_RESUMED,     /* base proxies: its client resumed (a ticket, no login) */
    MC_HOOK_RESTORE_CELL,       /* base: its cell came back after its cellapp died */
    MC_HOOK_RESTORE,            /* bases: restored from a backup after its baseapp died */
} mc_hook;
int mc_engine_run_hook(mc_engine *e, mc_entity *ent, mc_hook hook, const char *reason);
/* Run a cell's onTeleportFailure(reason) (an MC_TELEPORT_* of common/entity_api.h): its
 * move to another cellapp failed and it stays here as it was. Like mc_engine_run_hook. */
int mc_engine_run_teleport_failure(mc_engine *e, mc_entity *ent, int32_t reason);

/* Dispatch a call to a part of an entity held here: checks method and arguments, runs the
 * handler, answers a request (counts and logs refusals). */
void mc_engine_dispatch(mc_engine *e, const mc_origin *o, mc_entity *ent, mc_part part,
                        const mc_call_header *h, const uint8_t *args, size_t len);
/* The entity a call names, held here with the mailbox's type; NULL after refusing the call
 * (noEntity, wrongType). */
mc_entity *mc_engine_call_target(mc_engine *e, const mc_origin *o, const mc_call_header *h);
/* Refuse a call: count, log (rate-limited) and, for a request, answer with status. */
void mc_engine_refuse(mc_engine *e, const mc_origin *o, mc_refuse_reason r, int status,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Forward a call to `to` (its component is what the receiver acts on): a request is
 * forwarded as a request and its answer relayed back to o. */
void mc_engine_relay(mc_engine *e, const mc_origin *o, const mc_mailbox_ref *to,
                     uint16_t method, int32_t caller_id, const uint8_t *args, size_t len);
/* Answer a request (no-op for one-way messages). */
void mc_engine_reply(mc_engine *e, const mc_origin *o, const uint8_t *data, size_t len);
void mc_engine_reply_status(mc_engine *e, const mc_origin *o, int status, const char *reason);

/* Send an entity message (one-way) to addr; 0 or an mc_call_status. */
int mc_engine_send(mc_engine *e, const mc_address *addr, uint8_t msg_id, const uint8_t *data,
                   size_t len);
/* Send a request; done(e, ctx, status, payload) is called exactly once unless the engine
 * is freed first (then never): status MC_CALL_OK with the reply's payload, or
 * MC_CALL_ERR_TIMEOUT / MC_CALL_ERR_PROCESS_DEAD with payload NULL. Returns 0 or an
 * mc_call_status (then done is not called). */
typedef void (*mc_engine_done_fn)(mc_engine *e, void *ctx, int status, mc_istream *payload);
int mc_engine_request(mc_engine *e, const mc_address *addr, uint8_t msg_id,
                      const uint8_t *data, size_t len, mc_engine_done_fn done, void *ctx);
/* An ENTITY_CALL to a mailbox, one-way or (done != NULL) a request; 0 or a status. */
int mc_engine_call(mc_engine *e, const mc_mailbox_ref *to, uint16_t method, int32_t caller_id,
                   const uint8_t *args, size_t len, mc_engine_done_fn done, void *ctx);

/* Build a call context for an entity held here (or, with ent NULL, for an operator:
 * self is none). The frame owns the sink the context points at. */
typedef struct {
    mc_call_ctx ctx;
    mc_call_sink sink;
} mc_call_frame;
void mc_engine_frame(mc_engine *e, mc_call_frame *f, mc_entity *ent);

/* Encode every property of a part of an entity (props_encode) / apply initial values given
 * by property index to a part struct (each checked against its type and limits). */
int mc_engine_apply_props(mc_engine *e, uint16_t type, mc_part part, void *props,
                          const uint16_t *indices, const mc_value *values, size_t n,
                          char *why, size_t whylen);
/* Resolve mc_prop_init names of a type into indices and value copies (heap; free with
 * mc_json_props_free from common/value_json.h). */
int mc_engine_props_by_name(mc_engine *e, const mc_entity_type_def *td,
                            const mc_prop_init *props, size_t n, uint16_t **indices,
                            mc_value **values, char *why, size_t whylen);

/* A baseapp born after `retired` stopped was told where its bases live (RETIRED_HOMES):
 * calls on mailboxes naming it go to this process, whose part sends each on to its base's
 * home. Forgotten when a process is born at that address. */
void mc_engine_route_retired_here(mc_engine *e, const mc_address *retired);

/* The baseapp that restores (or restored) entity id of the dead baseapp at `dead`: its
 * backup on the ring published with that death (server/backup_ring.h). False when the
 * engine knows of no such death or the ring named no other baseapp. */
bool mc_engine_new_home(mc_engine *e, const mc_address *dead, int32_t id, mc_address *out);
/* RETIRED (entity message 83) from a retiring baseapp: calls for its bases go to their new
 * homes from now on (while it lives, and after its stop). Both roles list it in their
 * message tables. */
void mc_engine_on_retired(mc_engine *e, const mc_origin *o, mc_istream *is);

/* Counters the roles bump. */
void mc_engine_count_relayed(mc_engine *e);
void mc_engine_count_refused(mc_engine *e, mc_refuse_reason r);

/* Ask the manager for the least-loaded process of a role; fn gets its internal address
 * (NULL with a reason when there is none or no answer). Called exactly once unless the
 * engine is freed. */
typedef void (*mc_engine_pick_fn)(mc_engine *e, void *ctx, const char *addr,
                                  const char *reason);
int mc_engine_pick(mc_engine *e, mc_role role, mc_engine_pick_fn fn, void *ctx);
/* The same for the cellapp a lost space is restored on (the manager's QUERY_SPACE_HOME: the
 * least-loaded live cellapp the first time, the same one for every later ask while it
 * lives). */
int mc_engine_pick_space_home(mc_engine *e, int32_t space, mc_engine_pick_fn fn, void *ctx);

/* Waiting on the server (a manager query, a global name) safely: the server's callback gets
 * the wait as its ctx, takes the role's ctx with mc_engine_wait_ctx and ends the wait with
 * mc_engine_wait_end, which returns the engine, or NULL when the engine was freed first (the
 * wait's cancel(e, ctx) ran then, exactly once, and the callback must not touch ctx). */
typedef struct mc_engine_wait mc_engine_wait;
mc_engine_wait *mc_engine_wait_new(mc_engine *e, void (*cancel)(mc_engine *e, void *ctx),
                                   void *ctx);
void *mc_engine_wait_ctx(const mc_engine_wait *w);
mc_engine *mc_engine_wait_end(mc_engine_wait *w);
/* Forget a wait the server never took (its request could not be sent). */
void mc_engine_wait_drop(mc_engine_wait *w);

/* The role's own state (set in on_init). */
void *mc_engine_role_state(mc_engine *e);
void mc_engine_set_role_state(mc_engine *e, void *state);
/* Free a record at once, without onDestroy (an entity whose creation failed half way). */
void mc_engine_discard_entity(mc_engine *e, mc_entity *ent);

/* Generic engine API functions the roles put in their mc_engine_ops tables. */
void *mc_engine_op_self(const mc_call_ctx *call);
double mc_engine_op_time(const mc_call_ctx *call);
int mc_engine_op_add_timer(const mc_call_ctx *call, double initial_s, double repeat_s,
                           int64_t user_arg, uint32_t *out_id);
int mc_engine_op_del_timer(const mc_call_ctx *call, uint32_t timer_id);

/* Timers of an entity go with it. */
void mc_engine_drop_timers(mc_engine *e, mc_entity *ent);

/* An entity's live timers leave with it (a cell moving to another cellapp): each one's id,
 * absolute due time, period (0: once) and user argument. Returns how many were written (at
 * most max; the rest stay); those written are the entity's no longer (they never fire
 * here). */
typedef struct {
    uint32_t id;
    mc_time_us due;
    mc_time_us repeat;
    int64_t user_arg;
} mc_timer_export;
size_t mc_engine_export_timers(mc_engine *e, mc_entity *ent, mc_timer_export *out, size_t max);
/* The same without taking them: a copy of the entity's live timers (a base's backup). */
size_t mc_engine_peek_timers(mc_engine *e, const mc_entity *ent, mc_timer_export *out,
                             size_t max);
/* A timer arriving with an entity keeps its id (the game may have stored it): 0, or an
 * mc_call_status (MC_CALL_ERR_ARGS: id 0 or one the entity has; MC_CALL_ERR_BUSY: out of
 * memory). Timers this engine gives later get higher ids, so they never collide with one
 * imported. */
int mc_engine_import_timer(mc_engine *e, mc_entity *ent, const mc_timer_export *t);

#endif
