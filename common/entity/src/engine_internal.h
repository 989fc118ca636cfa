/* The engine's private state (common/entity/src only). */
#ifndef MC_ENTITY_ENGINE_INTERNAL_H
#define MC_ENTITY_ENGINE_INTERNAL_H

#include "entity/engine.h"
#include "common/clock.h"
#include "mercury/mercury.h"

#include <event2/event.h>
#include <limits.h>

/* A request this engine waits on (to a peer through mercury, or to itself). */
typedef struct mc_pending {
    struct mc_pending *prev, *next;
    mc_engine *e;               /* NULL once the engine is gone (mercury still holds it) */
    mc_address dest;
    bool local;
    bool done;                  /* outcome delivered (the record may live on for mercury) */
    mc_engine_done_fn fn;
    void *ctx;
} mc_pending;

/* A message to ourselves, delivered from the event loop in order. */
typedef struct local_msg {
    struct local_msg *next;
    uint8_t id;                 /* entity message id, or 0 for a reply */
    bool is_request;
    mc_pending *pending;        /* request: who waits; reply: whom it answers */
    size_t len;
    uint8_t data[];
} local_msg;

typedef struct {
    mc_time_us due;
    mc_time_us repeat;
    int32_t entity;
    uint32_t id;
    int64_t user_arg;
} engine_timer;

/* A game module replaced by a reload, kept open (reload.c). */
typedef struct {
    mc_game *game;
    int fd;                     /* its private copy's descriptor, -1 when loaded by path */
} engine_module_slot;

/* Hot reload of the game module (reload.c). */
typedef struct {
    char game_path[PATH_MAX];   /* --game: what a reload without a path loads again */
    char module_path[PATH_MAX]; /* where the running module was loaded from */
    int fd;                     /* the running module's private copy, -1 when loaded by path */
    uint64_t loaded_at;         /* Unix seconds */
    uint64_t reloads, failures;
    engine_module_slot *retired;
    size_t nretired;
    uint32_t retired_max;       /* --gameRetiredMax */
    struct event *ev;           /* the swap runs from here, between two turns of the loop */
    mc_watch_done *done;        /* the reloadGame call waiting for it */
    char want_path[PATH_MAX];
} engine_reload;

typedef struct {
    uint64_t sent, received, relayed, refused_total, two_way_sent, replies_received;
    uint64_t refused[MC_REFUSE_COUNT];
    uint64_t created, destroyed, hook_failures, timers_fired;
    /* The manager lease (lease_hold.c) and peers declared dead (peers.c). */
    uint64_t lease_held, lease_full, lease_dropped, lease_release_failed;
    uint64_t dropped_from_dead;
    uint64_t redirected; /* calls to a dead baseapp's base sent to its new home */
    uint64_t retired_noted; /* RETIRED taken: a retiring baseapp's bases are at new homes */
} engine_stats;


/* The server's role context: the engine once made (engine.c makes and frees it). */
typedef struct {
    mc_engine *e;
    const mc_role_part *part;
} engine_holder;

struct mc_engine {
    mc_server *server;
    const mc_role_part *part;
    const mc_entity_defs *defs;
    mc_game *game;
    const mc_game_module *module;
    mc_nub *nub;
    mc_address self_addr;
    char self_addr_text[MC_ADDRESS_STRLEN];
    mc_entity_table table;
    mc_time_us started_at;

    mc_time_us call_timeout_us;
    uint32_t cell_queue_max;

    struct event *local_ev;
    local_msg *lq_head, *lq_tail;
    struct event *reap_ev;
    mc_entity **reap;
    size_t nreap, reap_cap;
    struct event *flush_ev;
    mc_address *dead;           /* internal addresses of processes declared dead */
    size_t ndead, dead_cap;
    mc_address *dirty;
    size_t ndirty, dirty_cap;
    struct event *tick_ev;
    struct engine_new_home *homes[16]; /* backup rings at baseapp deaths (new_homes.c) */
    size_t nhomes;

    engine_timer *timers;       /* min-heap on due */
    size_t ntimers, timers_cap;
    uint32_t next_timer_id;

    mc_pending pending;         /* list head (sentinel) */
    size_t npending;
    mc_engine_wait *waits;      /* list head (sentinel) */
    void *role_state;

    /* Handed down by engine.c, so that the transport names nothing above it: the entity
     * messages' table (messages.c) it sends with, and the one dispatch by id
     * (engine_handle_message) it delivers the messages to ourselves to. */
    const mc_message_def *message_defs;
    size_t message_def_count;
    void (*deliver)(mc_engine *e, uint8_t id, const mc_origin *o, const uint8_t *data,
                    size_t len);

    mc_role_message_fn handlers[256]; /* by entity message id: the role's table, and
                                         ENTITY_CALL (engine_on_call) */
    engine_stats st;
    uint64_t *type_counts;      /* live entities per type */
    uint64_t live;
    bool freeing;
    engine_reload rl;
};

/* transport.c */
void engine_transport_init(mc_engine *e);
void engine_transport_free(mc_engine *e);
void engine_on_local_event(evutil_socket_t fd, short what, void *ctx);

/* pending.c: waiters on requests (a request's record in the pending list); fail at once
 * those waiting on the process at addr (declared dead). */
mc_pending *engine_pending_new(mc_engine *e, const mc_address *dest, bool local,
                               mc_engine_done_fn fn, void *ctx);
void engine_pending_finish(mc_pending *p, int status, mc_istream *payload);
void engine_pending_unlink(mc_pending *p);
void engine_fail_pending_to(mc_engine *e, const char *addr);

/* peer_send.c: send to a peer now, past the lease (a live peer's channel): a one-way
 * message, or the request p waits on (p->dest). A status; for a request a failure leaves p
 * to the caller. */
int engine_send_now(mc_engine *e, const mc_address *addr, uint8_t msg_id, const uint8_t *data,
                    size_t len);
int engine_request_now(mc_engine *e, mc_pending *p, uint8_t msg_id, const uint8_t *data,
                       size_t len);
/* The channel to a live peer (a status: PROCESS_DEAD, SEND when none can be made); the
 * definition of an entity message (e->message_defs); remember that addr's channel has
 * something to send (sent by the flush event once the handler returns). */
int engine_check_peer(mc_engine *e, const mc_address *addr, mc_channel **out);
const mc_message_def *engine_message_def(const mc_engine *e, uint8_t id);
void engine_mark_dirty(mc_engine *e, const mc_address *a);
void engine_on_flush_event(evutil_socket_t fd, short what, void *ctx);

/* lease_hold.c: out of touch with the manager, messages to peers wait in the lease. */
bool engine_must_hold(mc_engine *e);
/* Hold a copy (MC_CALL_OK), or MC_CALL_ERR_BUSY at the lease's bound. */
int engine_hold_message(mc_engine *e, const mc_address *addr, uint8_t id, const uint8_t *data,
                        size_t len);
int engine_hold_request(mc_engine *e, const mc_address *addr, uint8_t id, const uint8_t *data,
                        size_t len, mc_engine_done_fn done, void *ctx);

/* peers.c: remember that the process at addr died (dead) or that one was born there (!dead);
 * whether the manager declared the process at addr dead (and none was born there since). */
void engine_mark_peer(mc_engine *e, const char *addr, bool dead);
bool engine_peer_dead(const mc_engine *e, const mc_address *addr);

/* messages.c: fill e->handlers from the role's table (-1 with the reason: an id twice,
 * ENTITY_CALL). */
int engine_handlers_init(mc_engine *e, char *err, size_t errlen);
/* Handle an entity message from a peer or from ourselves: the one dispatch by its id. */
void engine_handle_message(mc_engine *e, uint8_t id, const mc_origin *o, const uint8_t *data,
                           size_t len);

/* new_homes.c: the backup ring at each baseapp's death, and calls sent on to the new home
 * of a dead baseapp's base. */
void engine_note_new_homes(mc_engine *e, const char *addr);
/* A retiring baseapp said RETIRED (retired.c): calls for its bases go to their new homes
 * on the ring of now, while it lives and after; false when it had said so already. */
bool engine_note_retired(mc_engine *e, const mc_address *addr);
void engine_forget_new_home(mc_engine *e, const char *addr);
void engine_new_homes_free(mc_engine *e);
/* A call to `to` whose address (*addr) is a dead baseapp's: *addr becomes the entity's backup
 * baseapp on the ring of that death (true), or stays (false). */
bool engine_redirect(mc_engine *e, const mc_mailbox_ref *to, mc_address *addr);

/* pick.c */
void engine_waits_init(mc_engine *e);
void engine_waits_free(mc_engine *e);

/* timers.c */
void engine_timers_tick(mc_engine *e, mc_time_us now);
void engine_timers_free(mc_engine *e);

/* lifecycle.c */
void engine_on_reap_event(evutil_socket_t fd, short what, void *ctx);
void engine_free_entity(mc_engine *e, mc_entity *ent);

/* watchers.c */
int engine_add_watchers(mc_engine *e);
void engine_add_entity_watchers(mc_engine *e, mc_entity *ent);
void engine_remove_entity_watchers(mc_engine *e, mc_entity *ent);

/* props.c: one property of a part struct as JSON text (heap), NULL when unavailable. */
char *engine_property_text(mc_engine *e, const mc_entity *ent, mc_part part, const void *props,
                           uint16_t part_index);

/* reload.c: command/reloadGame and the game/ watchers (path: the module loaded at start). */
int engine_reload_init(mc_engine *e, const char *path, uint32_t retired_max);
/* Close the replaced modules (after everything that could call into them is gone). */
void engine_reload_free(mc_engine *e);
/* Close the running module's private copy (after the module itself). */
void engine_reload_close_running(mc_engine *e);

/* commands.c */
int engine_add_commands(mc_engine *e);

/* engine_state.c: rate-limited logging (the first ten, then one in a thousand), and the
 * engine of a server (NULL before it is made and after it is freed). */
bool engine_log_allowed(uint64_t count);
mc_engine *engine_from_server(mc_server *s);

#endif
