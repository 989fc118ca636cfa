/* Internals of the persistence store shared by its source files (not a public API).
 *
 * store_new.c creating the store: configuration, connections, the first steps; it hands the
 *            operations' reply dispatch down (s->on_reply), so nothing below calls up into ops
 * store.c    the store: queue, sending in order, timers, dead connections, freeing
 * request.c  requests: lists, arguments, finishing (callbacks, counters)
 * watch.c    the store's watchers
 * conn.c     one connection to one Redis node: connect, AUTH, SCRIPT LOAD, back-off, replies
 * cluster.c  Redis Cluster: key slots, the slot map (CLUSTER SLOTS), MOVED/ASK
 * ops*.c     the operations: each a sequence of steps (one command each), see ops.h
 * keys.c     key names
 */
#ifndef MC_PERSIST_INTERNAL_H
#define MC_PERSIST_INTERNAL_H

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <event2/util.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"
#include "persist/schema.h"
#include "persist/store.h"
#include "scripts.h"

struct event;
typedef struct mc_persist_conn mc_persist_conn;
typedef struct mc_persist_req mc_persist_req;

/* A list of requests (pending, in flight on a connection, or done). */
typedef struct {
    mc_persist_req *head, *tail;
    size_t count;
} mc_req_list;

typedef enum {
    OP_SCHEMA, OP_CREATE, OP_WRITE, OP_DELETE, OP_IMPORT, OP_CHECKOUT, OP_MARK_LIVE,
    OP_RELEASE, OP_RELEASE_OWNER, OP_LOAD, OP_LOOKUP, OP_LIST_TYPES, OP_SCAN_TYPE,
    OP_AUTOLOAD, OP_SCAN_AUTOLOAD, OP_LOAD_RAW, OP_READ_SCHEMA, OP_SLOTS, OP_SCAN_KEYS,
    OP_DROP_IDENT, OP_TAKE_OVER,
} mc_op;

struct mc_persist_req {
    mc_persist_req *prev, *next;
    mc_persist_store *s;
    uint64_t seq;            /* submission order (0: the store's own, first) */
    mc_op op;
    int step;
    mc_persist_cb cb;
    void *ctx;
    mc_time_us deadline;
    mc_time_us sent_at;      /* when its current command was sent */
    bool abandoned;          /* its callback already ran (timed out); drop the reply */
    bool use_eval;           /* NOSCRIPT seen: send the script's source */
    bool retried;            /* sent again after a lost connection */
    mc_persist_conn *sent_on;
    mc_persist_conn *ask;    /* ASK redirection: send once to this node with ASKING */
    mc_persist_conn *node;   /* a command for one node (SCAN), whatever the slot map */
    bool asking_sent;
    /* The current step's command: a script (EVALSHA sha numkeys ...args) or a plain
     * command (args). */
    int script;              /* mc_script_id, or -1 */
    int numkeys;
    char **args;
    size_t *lens;
    bool *borrowed;          /* args[i] points into the request's fields: not freed */
    int nargs, capargs;
    char *route;             /* key whose slot the command goes to (cluster), NULL = any */
    /* Op state. */
    const mc_entity_type_def *type;
    char *type_name;
    uint64_t dbid;
    char token[33];
    char *ident;             /* identifier value (raw text), NULL = none */
    char *ident_json;        /* its canonical JSON text */
    char *old_ident;         /* the value the entity held before (write) */
    bool claim_created;
    uint64_t serial;         /* write: the check-out's write serial (0: unordered) */
    char **fields;           /* rendered name/value pairs (write, create, import, schema) */
    size_t *field_lens;
    size_t nfields;          /* entries (2 per pair) */
    bool flag;               /* force (delete), replace (import), on (autoload) */
    uint64_t cursor;
    uint64_t count;
    char *owner;
    uint64_t incarnation;
    char **names;            /* list_types: type names; release_owner: members */
    size_t nnames;
    uint64_t *counts;
    size_t idx;
    mc_persist_status status;
    char reason[256];
};

#define MC_PERSIST_SLOTS 16384

struct mc_persist_store {
    struct event_base *base;
    mc_persist_config cfg;
    char *process_name, *address, *user, *password, *prefix;
    char *seeds[MC_PERSIST_MAX_SEEDS];
    bool cluster;
    char *owner;
    uint64_t incarnation;
    char shas[MC_SCRIPT_COUNT][41];
    mc_req_list pending;
    mc_req_list done;           /* failed at once: callbacks run from the deferred event */
    size_t inflight;
    struct event *tick_ev, *done_ev;
    mc_time_us resume_at;       /* pause sending until then (LOADING, TRYAGAIN) */
    mc_persist_conn **conns;
    size_t nconns;
    uint16_t *slot_map;         /* cluster: slot -> conn index + 1 (0 = unknown) */
    bool slots_wanted, slots_pending;
    bool auth_failed;
    bool closing;
    bool schema_done;
    size_t schema_left;
    char **schema_state;        /* per type id: "ok", "added: ...", "refused: ..." */
    bool *schema_refused;
    /* Counters (watchers). */
    uint64_t writes_ok, writes_failed, writes_retried, loads_ok, loads_failed;
    uint64_t checkouts_won, checkouts_owned, fenced, reconnects, redirects;
    uint64_t stale_idents_removed; /* by checkout_ident (ops_checkout.c) */
    bool connected_flag;
    char last_error[256];
    void *schema_watch;         /* per type: the watcher's context */
    size_t internal_reqs;
    int depth;                  /* inside a callback from the loop (see mc_store_enter) */
    bool free_pending;          /* mc_persist_store_free was called at depth > 0 */
    uint64_t next_seq;       /* schema and slot requests (not counted in the queue) */
    bool (*gate)(void *ctx); /* mc_persist_set_write_gate: NULL = always open */
    void *gate_ctx;
    /* The operations' reply dispatch (ops.c: mc_ops_reply), set by mc_persist_store_new: a
     * connection hands every non-error reply up through it. */
    void (*on_reply)(mc_persist_req *r, const redisReply *reply);
};

/* store.c */
/* How often the store looks at deadlines and stuck connections (its tick event). */
#define MC_STORE_TICK_MS 100
void mc_store_tick_cb(evutil_socket_t fd, short what, void *arg);
/* Around every callback from the loop into the store (hiredis replies and connection events,
 * timers): a store freed by a user callback inside is only closed then, and freed by the
 * leave of the outermost callback, which returns true then (touch nothing of it after). */
void mc_store_enter(mc_persist_store *s);
bool mc_store_leave(mc_persist_store *s);
/* Queue r again (retry, redirection or its next step): front = at its place in submission
 * order among the waiting requests, so a request sent again never overtakes an older one. */
void mc_store_enqueue(mc_persist_store *s, mc_persist_req *r, bool front);
void mc_store_pump(mc_persist_store *s);
/* Queue a new request from an API call (bounded; a refusal's callback runs from the loop). */
void mc_store_submit(mc_persist_store *s, mc_persist_req *r);
/* Refuse a request: its callback runs from the loop with st and the reason. */
void mc_store_reject(mc_persist_req *r, mc_persist_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void mc_store_conn_ready(mc_persist_store *s, mc_persist_conn *c);
/* A connection went down: its requests in flight go back to the front of the queue. */
void mc_store_conn_lost(mc_persist_store *s, mc_persist_conn *c, mc_req_list *inflight);
void mc_store_error(mc_persist_store *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void mc_store_auth_failed(mc_persist_store *s, const char *why);
/* Finish a request: its callback runs with status/reason (and the op's extra result). */
void mc_req_finish(mc_persist_req *r, mc_persist_result *res);
void mc_req_fail(mc_persist_req *r, mc_persist_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
mc_persist_req *mc_req_new(mc_persist_store *s, mc_op op, mc_persist_cb cb, void *ctx);
void mc_req_free(mc_persist_req *r);
/* Build the current step's command. */
void mc_req_command(mc_persist_req *r, int script, int numkeys);
void mc_req_arg(mc_persist_req *r, const void *data, size_t len);
/* An argument that stays valid as long as the request (its rendered fields): not copied. */
void mc_req_arg_ref(mc_persist_req *r, const char *data, size_t len);
void mc_req_argf(mc_persist_req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mc_req_route(mc_persist_req *r, const char *key);
bool mc_req_oom(const mc_persist_req *r);

/* request.c: whether an operation counts as a write; whether it changes Redis (held by a
 * closed write gate); run the callbacks of the requests refused so far (mc_store_reject). */
bool mc_op_is_write(mc_op op);
bool mc_op_changes(mc_op op);
void mc_req_run_done(mc_persist_store *s);
/* store.c: the done event, which runs mc_req_run_done from the loop. */
void mc_store_done_cb(evutil_socket_t fd, short what, void *arg);

/* list helpers */
void mc_list_push_back(mc_req_list *l, mc_persist_req *r);
void mc_list_push_front(mc_req_list *l, mc_persist_req *r);
void mc_list_remove(mc_req_list *l, mc_persist_req *r);

/* conn.c */
typedef struct {
    mc_persist_conn *c;
    int i;
} mc_conn_hs;
struct mc_persist_conn {
    mc_persist_store *s;
    char host[64];
    int port;
    char addr[80];
    redisAsyncContext *ac;
    enum { CONN_DOWN, CONN_CONNECTING, CONN_HANDSHAKE, CONN_READY } state;
    mc_req_list inflight;
    struct event *retry_ev;
    uint32_t backoff_ms;
    mc_time_us state_since;
    int handshake_left;
    bool handshake_failed;
    bool ever_ready;
    mc_conn_hs hs[MC_SCRIPT_COUNT]; /* SCRIPT LOAD replies: which script */
    char *fmt;                      /* a command in the Redis protocol, being built */
    size_t fmt_len, fmt_cap;
};
mc_persist_conn *mc_conn_new(mc_persist_store *s, const char *host, int port);
void mc_conn_free(mc_persist_conn *c);
void mc_conn_start(mc_persist_conn *c);
/* Drop the connection now (timeouts): requests in flight go back to the queue. */
void mc_conn_drop(mc_persist_conn *c, const char *why);
/* Send r's current command on c (c is READY). 0, or -1 (then r is untouched). */
int mc_conn_send(mc_persist_conn *c, mc_persist_req *r);
/* ASKING before a command redirected by ASK. */
int mc_conn_send_asking(mc_persist_conn *c);
/* "HOST:PORT" split: 0; -1 malformed; -2 HOST is not a numeric IP address (never resolved:
 * hiredis would resolve it with a blocking lookup on the loop). */
int mc_parse_addr(const char *addr, char *host, size_t hostlen, int *port);
bool mc_is_numeric_host(const char *host);

/* cluster.c */
uint16_t mc_key_slot(const char *key, size_t len);
/* The connection a request goes to (NULL: none ready yet). */
mc_persist_conn *mc_cluster_route(mc_persist_store *s, mc_persist_req *r);
/* A MOVED/ASK error: returns true when it was one and r was redirected (requeued). */
bool mc_cluster_redirect(mc_persist_store *s, mc_persist_req *r, const redisReply *reply);
void mc_cluster_want_slots(mc_persist_store *s);
mc_persist_conn *mc_cluster_conn_for(mc_persist_store *s, const char *host, int port);
void mc_cluster_slots_reply(mc_persist_store *s, const redisReply *reply);
/* The nodes that hold slots (all connections while the slot map is unknown; the one
 * connection with one Redis): count and the i-th. */
size_t mc_cluster_node_count(const mc_persist_store *s);
mc_persist_conn *mc_cluster_node(const mc_persist_store *s, size_t i);

/* ops.c: advance r with the reply to its current step (not an error reply unless the op
 * handles it: errors go through mc_ops_error). */
void mc_ops_reply(mc_persist_req *r, const redisReply *reply);
void mc_ops_schema_start(mc_persist_store *s);

/* keys.c: heap strings (NULL on allocation failure). */
char *mc_key_entity(const mc_persist_store *s, const char *type, uint64_t dbid);
char *mc_key_owner(const mc_persist_store *s, const char *type, uint64_t dbid);
char *mc_key_ident(const mc_persist_store *s, const char *type, const char *value);
char *mc_key_type_set(const mc_persist_store *s, const char *type);
char *mc_key_schema(const mc_persist_store *s, const char *type);
char *mc_key_owned(const mc_persist_store *s, const char *owner, uint64_t inc);
char *mc_key_plain(const mc_persist_store *s, const char *name); /* types, autoload, dbid */
/* Strict decimal uint64 from reply bytes. */
int mc_parse_u64(const char *s, size_t len, uint64_t *out);

#endif
