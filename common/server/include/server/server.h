/* The server process framework every Mercury Cluster process runs on.
 *
 * mc_server_new parses the options (defaults, --config FILE, command line), loads the
 * entity defs from --res, opens the internal mercury interface (and, for loginapp and
 * baseapp, the external one), publishes the standard watchers (uptime, pid, role, name,
 * load, config/..., nub/..., peers/..., manager/..., command/shutdown) and, for every role
 * but the manager, registers with the manager and then sends a heartbeat carrying the
 * process's load every interval the manager asked for. Birth and death notifications from
 * the manager are kept in peers/ and passed to the role's on_peer_event. A role that
 * creates entities sets desc.entity_ids and takes ids with mc_server_next_entity_id; global
 * names of bases go through mc_server_global_register/deregister/lookup. Watcher requests
 * are answered here, a call on an asynchronous callable when it completes (at most 256
 * waiting; a server freed with calls waiting answers none of them).
 *
 * mc_server_run runs the libevent loop until shutdown: SIGTERM, SIGINT or the
 * command/shutdown watcher start a graceful shutdown (deregister from the manager, flush
 * the channels, exit 0). A registration the manager refuses (different def digest) is
 * logged with the manager's reason and ends the run with exit code 1.
 *
 * Fencing: a process the manager declared dead (silent too long, say behind a network
 * partition or stopped) never acts as a live one again. When it reaches that manager again
 * (a heartbeat, or a registration carrying the id and manager instance it had) it is told
 * it was replaced, logs why and ends the run at once with MC_SERVER_EXIT_FENCED, without a
 * graceful shutdown (on_shutdown is not called). A restarted manager, which declared nobody
 * dead, registers such a process as a new one.
 *
 * Everything lives in the mc_server instance; two can run in one process (tests).
 */
#ifndef MC_SERVER_SERVER_H
#define MC_SERVER_SERVER_H

#include "common/config.h"
#include "common/mailbox_ref.h"
#include "common/watcher.h"
#include "mercury/address.h"
#include "mercury/channel.h"
#include "mercury/interface.h"
#include "proto/control.pb-c.h"
#include "server/backup_ring.h"
#include "server/role.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct mc_lease;
struct mc_http;
struct mc_histogram;
typedef struct mc_server mc_server;

/* A control message the framework does not handle itself (the manager's register,
 * heartbeat, deregister and query), passed to the role. `request` is non-NULL when the
 * sender waits for a reply: answer with mc_server_reply. */
typedef struct mc_server_request mc_server_request;
typedef void (*mc_server_control_fn)(mc_server *s, void *ctx, uint8_t msg_id,
                                     const char *source_addr, const uint8_t *data, size_t len,
                                     mc_server_request *request);

typedef struct {
    mc_role role;
    const char *summary;         /* one line for --help */
    bool has_external;           /* opens an external interface (loginapp, baseapp) */
    const mc_option *options;    /* role-specific options, may be NULL */
    size_t option_count;
    void *ctx;                   /* passed to every callback */
    /* Check the role's options once they are parsed (may be NULL): false with a one-line
     * reason in err makes mc_server_new fail (exit code 1). */
    bool (*check_config)(const mc_config *cfg, char *err, size_t errlen);
    /* The process is set up (manager: listening; others: registered; name known). */
    void (*on_ready)(mc_server *s, void *ctx);
    /* Another process was born or died (manager's notification). */
    void (*on_peer_event)(mc_server *s, void *ctx, const Mc__Control__ProcessEvent *ev);
    /* Control messages for the role (the manager's; and CELL_LAYOUT, taken only from the
     * manager, for a cellapp). */
    mc_server_control_fn on_control;
    /* A peer's channel died (the manager uses it to mark a process dead). */
    void (*on_channel_dead)(mc_server *s, void *ctx, const char *peer_addr);
    /* Graceful shutdown has begun (before deregistering). */
    void (*on_shutdown)(mc_server *s, void *ctx);
    /* Graceful shutdown, after on_shutdown and before deregistering (may be NULL): the role
     * hands its work over to others (a retiring cellapp's reals). Called every poll (20 ms)
     * while it returns true; the process stays registered and keeps its heartbeats
     * meanwhile. The role bounds it in time itself; --shutdownTimeoutMs counts from its
     * end. */
    bool (*draining)(mc_server *s, void *ctx);
    /* The server is being freed: release the role's events (the event_base is still
     * valid). */
    void (*on_free)(mc_server *s, void *ctx);
    /* Messages the role handles on the internal interface beside the control messages
     * (ids 1..31 are the framework's; a role uses 32 and up). Their handlers receive the
     * mc_server as ctx (mc_server_role_ctx gives the role's own). May be NULL. */
    const mc_message_def *role_messages;
    size_t role_message_count;
    /* The role creates entities: once registered the framework asks the manager for entity
     * id ranges and keeps some in hand (mc_server_next_entity_id). */
    bool entity_ids;
} mc_server_desc;

/* The exit code of a process the manager fenced (declared dead, then heard from again). */
#define MC_SERVER_EXIT_FENCED 4

/* Build the process from its command line. Returns NULL when it should not run, with
 * *exit_code set: 0 after --help, 1 after a one-line error on stderr (bad option, bad
 * defs, address in use). */
mc_server *mc_server_new(const mc_server_desc *desc, int argc, char **argv, int *exit_code);
/* Run the loop until shutdown; returns the process exit code (0 after a graceful
 * shutdown). */
int mc_server_run(mc_server *s);
void mc_server_free(mc_server *s);

/* new + run + free, for main(). */
int mc_server_main(const mc_server_desc *desc, int argc, char **argv);

/* Start a graceful shutdown (idempotent). */
void mc_server_shutdown(mc_server *s, const char *reason);

struct event_base *mc_server_event_base(mc_server *s);
mc_watchers *mc_server_watchers(mc_server *s);
const mc_config *mc_server_config(const mc_server *s);
mc_role mc_server_role(const mc_server *s);
/* "baseapp01" once registered; the role name before; "manager" for the manager. */
const char *mc_server_name(const mc_server *s);
void mc_server_set_name(mc_server *s, const char *name);
/* A retiring baseapp (baseapp/src/retire.c) says so in every registration from now on
 * (RegisterRequest.retiring): a restarted manager keeps it out of the backup ring. */
void mc_server_set_retiring(mc_server *s, bool retiring);
/* This run of the process: random per start (never 0), the same across re-registrations;
 * sent to the manager when registering (ProcessInfo.incarnation). */
uint64_t mc_server_incarnation(const mc_server *s);
/* The entity definitions the process loaded (--res). */
const struct mc_entity_defs *mc_server_defs(const mc_server *s);
/* The def digest (64 hex characters) the process loaded. */
const char *mc_server_digest(const mc_server *s);
/* "IP:PORT" of the internal / external interface ("" when there is none). */
const char *mc_server_internal_addr(const mc_server *s);
const char *mc_server_external_addr(const mc_server *s);
/* The most recent load measurement (CPU time / wall time over the last interval). */
double mc_server_load(const mc_server *s);

/* --- operators' HTTP port (--metrics IP:PORT; off by default) -------------------------
 * /metrics serves the watchers as Prometheus text (server/metrics.h); the manager adds its
 * web console to the same server. NULL when --metrics is not given. */
struct mc_http *mc_server_http(mc_server *s);
/* A latency histogram (server/histogram.h) named name (the metric after "mc_", ending in
 * _seconds), served on /metrics and published under histograms/<name>/; the same one when
 * asked twice. NULL when out of memory or MC_SERVER_MAX_HISTOGRAMS (8) exist. The role
 * records with mc_histogram_observe_us. */
struct mc_histogram *mc_server_histogram(mc_server *s, const char *name, const char *help);

/* Ask the process whose internal address is addr ("IP:PORT", not this process's) for one
 * watcher operation (a WATCHER request, as the watcher tool sends) on the channel to it. fn
 * is called exactly once: with the reply, or with NULL when no answer came within
 * timeout_ms (or the server is being freed); the reply is valid during the call only.
 * Returns 0 or a negative mercury status (then fn is not called). */
typedef void (*mc_server_watcher_fn)(mc_server *s, void *ctx,
                                     const Mc__Control__WatcherReply *reply);
int mc_server_ask_watcher(mc_server *s, const char *addr,
                              const Mc__Control__WatcherRequest *req, uint64_t timeout_ms,
                              mc_server_watcher_fn fn, void *ctx);

/* Send a protobuf-c message as control message msg_id to addr ("IP:PORT") on the channel
 * to that address (one-way). Returns 0 or a negative mercury status. */
int mc_server_send(mc_server *s, const char *addr, uint8_t msg_id, const void *msg);
/* The same to the manager (MC_ERR_STATE on the manager itself, or before an address is
 * known). */
int mc_server_send_manager(mc_server *s, uint8_t msg_id, const void *msg);
/* Ask the manager (on the channel to it): every process (QUERY_ALL), the live processes
 * of a role (QUERY_BY_ROLE), one by name (QUERY_BY_NAME), the least-loaded live process of
 * a role (QUERY_LEAST_LOADED). fn is called exactly once: with the reply (status QUERY_OK,
 * or QUERY_NO_MATCH with a reason), or with reply NULL when the manager did not answer in
 * time (or the server is being freed). The reply is valid during the call only. Returns 0
 * or a negative mercury status (then fn is not called). */
typedef void (*mc_server_query_fn)(mc_server *s, void *ctx,
                                   const Mc__Control__QueryReply *reply);
int mc_server_query(mc_server *s, Mc__Control__QueryKind kind, mc_role role, const char *name,
                    mc_server_query_fn fn, void *ctx);

/* The role's ctx (desc.ctx), for handlers of role_messages. */
void *mc_server_role_ctx(mc_server *s);
/* The internal interface's nub. */
mc_nub *mc_server_internal_nub(mc_server *s);
/* Close the plain external interface's socket (and its externalNub/ watchers) so that the
 * role can bind its own endpoint on exactly mc_server_external_addr() (the baseapp's secure
 * client transport); the address stays what registration announces. Idempotent. */
void mc_server_release_external(mc_server *s);
/* Read the cluster secret again (--secretFile or $MC_SECRET_FILE, as the internal nub did)
 * into secret (MC_AUTH_SECRET_BYTES), for a part that derives a key of its own from it with
 * a context of its own (then wipes it: mc_auth_wipe_secret). 0, or -1 with a reason. */
int mc_server_load_secret(mc_server *s, uint8_t secret[32], char *err, size_t errlen);
/* The channel to a peer's internal address (created if needed; flushed at shutdown like
 * the framework's own). NULL when out of memory or addr is our own address. */
mc_channel *mc_server_channel(mc_server *s, const mc_address *addr);
/* What the manager last said about the process at this internal address: ALIVE when a
 * live process has it, DEAD when only dead or stopped ones had it, UNKNOWN when none. */
Mc__Control__ProcessState mc_server_peer_state(const mc_server *s, const char *internal_addr);
/* Whether the manager told us of a live process of that role at this internal address
 * (what a request that only a certain role may make is checked against). */
bool mc_server_peer_is_live(const mc_server *s, const mc_address *addr, mc_role role);
/* The internal addresses of the live peers of a role (up to cap): how many were written. */
size_t mc_server_live_peers(const mc_server *s, mc_role role, mc_address *out, size_t cap);
/* The manager's latest backup ring (server/backup_ring.h; version 0 until one came): the
 * live baseapps, from the registration reply and every birth and death notice. */
const mc_backup_ring *mc_server_backup_ring(const mc_server *s);

/* How long a registered process waits for a silent manager before it registers again: twice
 * the dead-after time the manager last gave, at least 5 s. A live
 * process registers again with a restarted manager within about this plus a retry (1 s). */
uint64_t mc_server_manager_silent_ms(const mc_server *s);

/* --- the manager lease (server/lease.h) ---------------------------------------------
 * A process acts as the live owner of anything only while in touch with the manager: every
 * heartbeat is a request the manager answers; the lease lasts half the dead-after time from
 * the send time of the last one answered "alive" (or of the registration). While it has run
 * out, entity messages to other processes wait in it (bounded: leaseHeldMax, leaseHeldBytes)
 * and persistence writes wait in the store; renewed, they go in order; fenced, they never
 * go. Watchers lease/ (state, callsHeld, writesHeld, heldBytes, released, heldDropped,
 * heldRefused, renewals, expiries). */
/* The lease (NULL for the manager, which has none). */
struct mc_lease *mc_server_lease(mc_server *s);
/* True when the process may act now: the lease is valid (always on the manager). */
bool mc_server_lease_valid(mc_server *s);
/* True once the manager confirmed this process's deregistration (a graceful stop): it will
 * neither declare the process dead nor fence it any more, so the lease's doubt (declared
 * dead without knowing) is gone; a stopping baseapp's last writes go then, lease or not
 * (each still carries its check-out's token: a copy restored elsewhere meanwhile fences
 * them). */
bool mc_server_left_cleanly(const mc_server *s);
/* The role's count of writes it holds while the lease has run out (lease/writesHeld). */
void mc_server_lease_writes_source(mc_server *s, size_t (*fn)(void *ctx), void *ctx);

/* --- entity ids (desc.entity_ids) ---------------------------------------------------
 * Entity ids are 1 .. 2^31-1, unique in the cluster. The framework asks the manager for a
 * range of MC_SERVER_ID_BATCH ids as soon as it is registered, and for the next one (one
 * request at a time) when fewer than half a batch remain; unused ids are kept, also across
 * a re-registration with a restarted manager. Watchers entityIds/left, entityIds/ranges. */
#define MC_SERVER_ID_BATCH 4096u
/* The next unused entity id (consumed): 0, or -1 when none is available yet (the first
 * range has not arrived, or the role did not set entity_ids). */
int mc_server_next_entity_id(mc_server *s, int32_t *out);
uint64_t mc_server_entity_ids_left(const mc_server *s);

/* --- globally named bases (BigWorld's registerGlobally / lookUpBaseByName) -------------
 * The manager keeps name -> mailbox for the whole cluster and drops a process's names
 * when it dies or stops. Names are 1..64 bytes of printable ASCII without spaces. The
 * process keeps the names it registered (until it deregisters them) and registers them
 * again, by itself, when it registers with a new manager instance (a restarted manager
 * starts with none); a name another process took meanwhile is logged, counted
 * (globals/clashes) and no longer this process's. Watchers globals/kept, registeredAgain,
 * clashes, againFailed. */
typedef enum {
    MC_GLOBAL_OK = 0,
    MC_GLOBAL_TAKEN,          /* register: the name is taken */
    MC_GLOBAL_NOT_FOUND,      /* deregister: no such name with that mailbox; lookup: no name */
    MC_GLOBAL_BAD,            /* bad name or mailbox (or a malformed exchange) */
    MC_GLOBAL_FULL,           /* the manager holds as many names as it may */
    MC_GLOBAL_NOT_REGISTERED, /* this process is not (yet, or any more) registered */
    MC_GLOBAL_NO_ANSWER,      /* the manager did not answer in time, or the server is freed */
} mc_global_status;

const char *mc_global_status_name(mc_global_status st);
/* The outcome: mailbox is the registered one for a successful lookup, else NULL; reason is
 * a one-line explanation when status != OK ("" otherwise). Valid during the call only. */
typedef void (*mc_server_global_fn)(mc_server *s, void *ctx, mc_global_status status,
                                    const mc_mailbox_ref *mailbox, const char *reason);
/* Each returns 0 when the request was sent, and then calls fn exactly once (fn may be NULL
 * for deregister); or a negative mercury status (MC_ERR_INVALID for a bad name, a none
 * mailbox, or on the manager itself), and then fn is not called. */
int mc_server_global_register(mc_server *s, const char *name, const mc_mailbox_ref *mb,
                              mc_server_global_fn fn, void *ctx);
int mc_server_global_deregister(mc_server *s, const char *name, const mc_mailbox_ref *mb,
                                mc_server_global_fn fn, void *ctx);
int mc_server_global_lookup(mc_server *s, const char *name, mc_server_global_fn fn, void *ctx);

/* The 12-byte MAILBOX wire form of a reference, and back (false when len is not 12, the
 * bytes do not form a valid reference, or it is the none mailbox). */
void mc_server_mailbox_pack(const mc_mailbox_ref *mb, uint8_t out[MC_MAILBOX_WIRE_SIZE]);
bool mc_server_mailbox_unpack(const uint8_t *data, size_t len, mc_mailbox_ref *out);

/* Stop waiting for the channel to addr when flushing at shutdown (its process is gone). */
void mc_server_forget_peer(mc_server *s, const char *addr);
/* Answer a request passed to on_control. Returns 0 or a negative mercury status. */
int mc_server_reply(mc_server *s, mc_server_request *request, const void *msg);

#endif
