/* Game modules: the runtime contract between engine binaries and the code defc generates.
 *
 * A game module is a shared library built (by mc_add_game_module) from a resource folder's
 * generated code plus the studio's handler sources. It exports one function,
 * mc_game_module_get(), returning an immutable table: per entity type the size and
 * default-initialiser of each part's property struct and a dispatcher per base and cell
 * method. Engines stay generic: they load definitions with mc_defs_load, open the module
 * with mc_game_open (which checks the module was generated from the same definitions, by
 * digest), and dispatch incoming calls by type, part and method index.
 *
 * Generated senders deliver calls through an mc_call_sink the engine provides.
 */
#ifndef MC_COMMON_GAME_MODULE_H
#define MC_COMMON_GAME_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/defs.h"
#include "common/mailbox_ref.h"
#include "common/stream.h"
#include "common/value.h"

/* The layout of the tables below, as generated code fills them. Bumped whenever it changes
 * (6: mc_game_hooks.on_teleport_failure; 7: on_restore_cell; 8: on_restore; 9:
 * on_client_resumed; 10: mc_call_sink.fan_out); mc_game_check
 * refuses a module of another ABI. */
#define MC_GAME_ABI 10u
#define MC_GAME_MODULE_SYMBOL "mc_game_module_get"

/* Results of generated senders and of dispatch. */
typedef enum {
    MC_CALL_OK = 0,
    MC_CALL_ERR_MAILBOX = -1,  /* mailbox is none, of another type, or the wrong part */
    MC_CALL_ERR_ARGS = -2,     /* an argument does not fit its def type / bytes malformed */
    MC_CALL_ERR_DEFS = -3,     /* loaded definitions do not match the generated code */
    MC_CALL_ERR_SEND = -4,     /* the sink refused */
    MC_CALL_ERR_HANDLER = -5,  /* the handler returned an error */
    MC_CALL_ERR_NO_METHOD = -6,/* no such method (or not exposed, for client calls) */
    /* Entity layer (engine API, routing, two-way calls). */
    MC_CALL_ERR_NO_ENTITY = -7,    /* no such entity (or not that part) where the call went */
    MC_CALL_ERR_DESTROYED = -8,    /* the entity was destroyed before the call could run */
    MC_CALL_ERR_PROCESS_DEAD = -9, /* the process holding it was declared dead */
    MC_CALL_ERR_TIMEOUT = -10,     /* no answer within the call timeout */
    MC_CALL_ERR_NO_CLIENT = -11,   /* the entity has no client */
    MC_CALL_ERR_STATE = -12,       /* not now: e.g. destroy while a cell exists */
    MC_CALL_ERR_UNAVAILABLE = -13, /* no process of the needed role (or no entity ids yet) */
    MC_CALL_ERR_BUSY = -14,        /* a bounded queue is full */
    MC_CALL_ERR_NOT_FOUND = -15,   /* no entity type / property / name of that name */
    MC_CALL_ERR_TAKEN = -16,       /* a global name is registered already */
} mc_call_status;

const char *mc_call_status_name(int status);

typedef struct {
    float x, y;
} mc_vector2;
typedef struct {
    float x, y, z;
} mc_vector3;
typedef struct {
    float x, y, z, w;
} mc_vector4;

typedef struct mc_call_ctx mc_call_ctx;
struct mc_engine_ops; /* common/entity_api.h */

/* The answer to a two-way call, as the engine hands it to the generated trampoline of the
 * method: status MC_CALL_OK with the encoded return values in `returns`, or an error status
 * (returns NULL). The trampoline decodes the values against the def and calls the typed
 * callback `cb` the game passed to the sender, with `ud`. */
typedef void (*mc_reply_fn)(const mc_call_ctx *call, int status, mc_istream *returns,
                            void *cb, void *ud);

/* The target of a fan-out: a cell entity's allClients / otherClients (common/entity_api.h),
 * every client whose player's cell sees the entity, and its own client too when own_client.
 * Not a mailbox: it names no process, is never stored or sent as a value, only called
 * (fanout_<Type>_client_<method> senders). entity_id 0: none. */
typedef struct {
    int32_t entity_id;
    uint16_t entity_type;
    bool own_client;
} mc_clients;

/* Where generated senders put a call. send() gets the target mailbox, the part and index
 * of the method and its encoded arguments; it returns 0 or a negative mc_call_status.
 * request() does the same for a two-way call: when it returns 0 the engine calls
 * on_reply(call, status, returns, cb, ud) exactly once, later (never from inside request);
 * when it fails on_reply is never called. fan_out() takes a one-way client method's call
 * on an mc_clients (may be NULL where nothing fans out). */
typedef struct {
    const mc_entity_defs *defs;
    int (*send)(void *ctx, const mc_mailbox_ref *to, mc_part part, uint16_t method_index,
                const uint8_t *args, size_t len);
    int (*request)(void *ctx, const mc_mailbox_ref *to, mc_part part, uint16_t method_index,
                   const uint8_t *args, size_t len, mc_reply_fn on_reply, void *cb, void *ud);
    int (*fan_out)(void *ctx, const mc_clients *to, uint16_t method_index, const uint8_t *args,
                   size_t len);
    void *ctx;
} mc_call_sink;

/* What a handler knows about the call it is running. */
struct mc_call_ctx {
    const mc_entity_defs *defs;
    const mc_call_sink *sink;  /* for calls the handler makes */
    void *engine;              /* the engine's own context, opaque to the module */
    mc_mailbox_ref self;       /* the receiving entity (component = the part called) */
    int32_t caller_id;         /* for calls from a client: its player's entity id, else 0 */
    bool from_client;
    const struct mc_engine_ops *ops; /* the engine API (common/entity_api.h); NULL in tools */
};

/* Engine callbacks a game may define per type and part (defc fills the table from
 * functions named <Type>_<part>_<callback>; a slot is NULL when the game defines none).
 * Each returns 0, or non-zero to report a failure (logged and counted). */
typedef struct {
    int (*on_created)(const mc_call_ctx *call, void *props);
    int (*on_destroy)(const mc_call_ctx *call, void *props);
    int (*on_get_cell)(const mc_call_ctx *call, void *props);   /* base */
    int (*on_lose_cell)(const mc_call_ctx *call, void *props);  /* base */
    int (*on_create_cell_failure)(const mc_call_ctx *call, void *props,
                                  const char *reason);          /* base */
    int (*on_space_gone)(const mc_call_ctx *call, void *props); /* cell */
    int (*on_timer)(const mc_call_ctx *call, void *props, uint32_t timer_id,
                    int64_t user_arg);
    /* cell witnesses (area of interest): entity came into view (its CELL mailbox) / left
     * it (its id: it may be gone) */
    int (*on_entered_aoi)(const mc_call_ctx *call, void *props, mc_mailbox_ref entity);
    int (*on_left_aoi)(const mc_call_ctx *call, void *props, int32_t entity_id);
    /* base proxies: its client went (disconnected, idle, taken over by nobody) / its client
     * has it as its player now (connected, or given by giveClientTo) */
    int (*on_client_death)(const mc_call_ctx *call, void *props);
    int (*on_entities_enabled)(const mc_call_ctx *call, void *props);
    /* base proxies: its client came back with a resumption ticket (a new channel, no login)
     * after its old channel died, within the grace time (so no onClientDeath ran) */
    int (*on_client_resumed)(const mc_call_ctx *call, void *props);
    /* cell: a move to a space on another cellapp failed and the cell stays where it was, as
     * it was (reason: MC_TELEPORT_REFUSED, _TIMED_OUT, _PEER_DEAD or _NOT_SENT, in
     * common/entity_api.h); once per failed move */
    int (*on_teleport_failure)(const mc_call_ctx *call, void *props, int32_t reason);
    /* base: its cell, lost with its cellapp, was made again on a live cellapp from the copy
     * the base kept (same id, space id, position and cell properties); cell timers are not
     * restored */
    int (*on_restore_cell)(const mc_call_ctx *call, void *props);
    /* base: it was restored from its backup on this baseapp after its baseapp died (same
     * id, its last backed-up state, timers and global names back) */
    int (*on_restore)(const mc_call_ctx *call, void *props);
} mc_game_hooks;

/* Decode args for one method, run the handler on props, encode return values into reply
 * (two-way calls). Returns an mc_call_status, the reason in why. */
typedef int (*mc_method_dispatch_fn)(const mc_call_ctx *call, void *props, mc_istream *args,
                                     mc_ostream *reply, char *why, size_t whylen);

typedef struct {
    const char *name;
    mc_method_dispatch_fn dispatch;
} mc_game_method;

typedef struct {
    const char *name;
    uint16_t id;
    size_t props_size[MC_PART_COUNT];
    /* Fill a part's property struct with defaults from defs (0, or -1 out of memory). */
    int (*props_init)(const mc_entity_defs *defs, mc_part part, void *props);
    void (*props_free)(mc_part part, void *props);
    /* Stream a part's properties in index order (only the Persistent ones when
     * persistent_only), each checked and encoded as its def type with the property's
     * limits. decode replaces the struct's fields only when every value decoded. Return an
     * mc_call_status, the reason in why. */
    int (*props_encode)(const mc_entity_defs *defs, mc_part part, const void *props,
                        bool persistent_only, mc_ostream *os, char *why, size_t whylen);
    int (*props_decode)(const mc_entity_defs *defs, mc_part part, void *props,
                        bool persistent_only, mc_istream *is, char *why, size_t whylen);
    /* One property of a part, by its index in the type (mc_def_property order): encoded as
     * its def type with its limits / decoded into the struct's field (replaced only when the
     * value decoded). MC_CALL_ERR_NOT_FOUND for a property the part does not hold. For
     * property changes and entities entering a view. */
    int (*props_encode_one)(const mc_entity_defs *defs, mc_part part, const void *props,
                            uint16_t index, mc_ostream *os, char *why, size_t whylen);
    int (*props_decode_one)(const mc_entity_defs *defs, mc_part part, void *props,
                            uint16_t index, mc_istream *is, char *why, size_t whylen);
    size_t nmethods[MC_PART_COUNT];            /* base and cell (client in a client table) */
    const mc_game_method *methods[MC_PART_COUNT];
    mc_game_hooks hooks[MC_PART_COUNT];        /* base and cell (client slots unused) */
} mc_game_type;

/* abi and name come first and stay first, whatever the ABI: an engine reads them from a
 * module of any ABI to say why it refuses it. */
typedef struct {
    uint32_t abi;
    const char *name;
    const char *digest_hex;
    bool client_side;  /* a client table (game_client.c): client methods only */
    size_t ntypes;
    const mc_game_type *types;
} mc_game_module;

typedef const mc_game_module *(*mc_game_module_get_fn)(void);
/* The one symbol a game module exports (generated game_module.c defines it). */
const mc_game_module *mc_game_module_get(void);
/* The client-side table (generated game_client.c, for a C client that implements the
 * T_client_* handlers). */
const mc_game_module *mc_game_client_get(void);

/* Engine side. */
typedef struct mc_game mc_game;

/* dlopen a module and check it against defs (ABI, digest, type names and method counts). */
mc_game *mc_game_open(const char *path, const mc_entity_defs *defs, char *err, size_t errlen);
/* Check an already-linked table the same way (tests, static builds). */
int mc_game_check(const mc_game_module *m, const mc_entity_defs *defs, char *err,
                  size_t errlen);
void mc_game_close(mc_game *g);
const mc_game_module *mc_game_table(const mc_game *g);

/* Dispatch a call (method index within the part) on props of type type_id. */
int mc_game_dispatch(const mc_game_module *m, const mc_call_ctx *call, uint16_t type_id,
                     mc_part part, uint16_t method_index, void *props, const uint8_t *args,
                     size_t len, mc_ostream *reply, char *why, size_t whylen);
/* Dispatch a call from a client by exposed index: refuses methods that are not exposed, and
 * OWN_CLIENT methods called by another entity's client. */
int mc_game_dispatch_exposed(const mc_game_module *m, const mc_call_ctx *call, uint16_t type_id,
                             mc_part part, uint16_t exposed_index, void *props,
                             const uint8_t *args, size_t len, char *why, size_t whylen);

/* Helpers generated code uses. */
/* The property prop_index of type type_id if the defs match the generated code (same name),
 * else NULL. */
const mc_def_property *mc_gen_property(const mc_entity_defs *defs, uint16_t type_id,
                                       uint16_t prop_index, const char *name);
/* Encode / decode one property value with its limits; 0 or an mc_call_status. */
int mc_gen_encode_prop(const mc_entity_defs *defs, const mc_def_property *p, const mc_value *v,
                       mc_ostream *os, char *why, size_t whylen);
int mc_gen_decode_prop(const mc_entity_defs *defs, const mc_def_property *p, mc_istream *is,
                       mc_value *v, char *why, size_t whylen);
/* Check the mailbox (of type_id, reaching part) and the arguments against the def, encode
 * them and hand them to sink->send; 0 or an mc_call_status (the sink's entity-layer statuses
 * pass through, its other failures become MC_CALL_ERR_SEND). */
int mc_gen_send(const mc_call_sink *sink, const mc_mailbox_ref *to, uint16_t type_id,
                mc_part part, uint16_t index, const char *name, const mc_value *args,
                size_t nargs);
/* The same for a two-way method, through sink->request (NULL: MC_CALL_ERR_SEND); on_reply is
 * the method's generated trampoline, cb the game's typed callback. */
int mc_gen_request(const mc_call_sink *sink, const mc_mailbox_ref *to, uint16_t type_id,
                   mc_part part, uint16_t index, const char *name, const mc_value *args,
                   size_t nargs, mc_reply_fn on_reply, void *cb, void *ud);
const mc_def_method *mc_gen_method(const mc_entity_defs *defs, uint16_t type_id, mc_part part,
                                   uint16_t index, const char *name);
/* A one-way client method called on an mc_clients of type_id (part is MC_PART_CLIENT):
 * checked and encoded like mc_gen_send, handed to sink->fan_out (NULL: MC_CALL_ERR_MAILBOX). */
int mc_gen_fan_out(const mc_call_sink *sink, const mc_clients *to, uint16_t type_id,
                   mc_part part, uint16_t index, const char *name, const mc_value *args,
                   size_t nargs);

/* Flat calls: methods whose arguments (or return values) are all fixed-size numbers and
 * vectors. Their generated senders write the arguments straight into a buffer on the stack
 * and their dispatchers read them straight from the call's bytes, with no mc_value, no
 * allocation and no generic type walk; the bytes are exactly what mc_value_encode writes
 * (big-endian, IEEE 754 bit patterns), so both ends interoperate with the generic path. Such
 * values need no range check: the C parameter types hold exactly the def types' ranges. */
/* The method at (type_id, part, index) if its mc_def_method_signature() is sig (flat
 * generated code checks methods this way), else NULL. */
const mc_def_method *mc_gen_method_sig(const mc_entity_defs *defs, uint16_t type_id,
                                       mc_part part, uint16_t index, uint32_t sig);
/* Check the method (by signature, and one-way) and the mailbox like mc_gen_send, then hand
 * the already encoded arguments to sink->send. */
int mc_gen_send_flat(const mc_call_sink *sink, const mc_mailbox_ref *to, uint16_t type_id,
                     mc_part part, uint16_t index, uint32_t sig, const uint8_t *args,
                     size_t len);
/* The same for a fan-out (mc_gen_fan_out), through sink->fan_out. */
int mc_gen_fan_out_flat(const mc_call_sink *sink, const mc_clients *to, uint16_t type_id,
                        mc_part part, uint16_t index, uint32_t sig, const uint8_t *args,
                        size_t len);
/* The same for a two-way method, through sink->request. */
int mc_gen_request_flat(const mc_call_sink *sink, const mc_mailbox_ref *to, uint16_t type_id,
                        mc_part part, uint16_t index, uint32_t sig, const uint8_t *args,
                        size_t len, mc_reply_fn on_reply, void *cb, void *ud);
/* The n bytes of a flat argument (or return value) list: NULL, with the reason in why (when
 * given), unless exactly n bytes remain in is. */
const uint8_t *mc_gen_flat_take(mc_istream *is, size_t n, const char *method, char *why,
                                size_t whylen);

static inline uint8_t *mc_gen_put_u8(uint8_t *p, uint8_t v)
{
    p[0] = v;
    return p + 1;
}
static inline uint8_t *mc_gen_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
    return p + 2;
}
static inline uint8_t *mc_gen_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
    return p + 4;
}
static inline uint8_t *mc_gen_put_u64(uint8_t *p, uint64_t v)
{
    return mc_gen_put_u32(mc_gen_put_u32(p, (uint32_t)(v >> 32)), (uint32_t)v);
}
static inline uint8_t *mc_gen_put_f32(uint8_t *p, float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return mc_gen_put_u32(p, b);
}
static inline uint8_t *mc_gen_put_f64(uint8_t *p, double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return mc_gen_put_u64(p, b);
}
static inline uint8_t mc_gen_get_u8(const uint8_t *p) { return p[0]; }
static inline uint16_t mc_gen_get_u16(const uint8_t *p)
{
    return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}
static inline uint32_t mc_gen_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t mc_gen_get_u64(const uint8_t *p)
{
    return (uint64_t)mc_gen_get_u32(p) << 32 | mc_gen_get_u32(p + 4);
}
static inline float mc_gen_get_f32(const uint8_t *p)
{
    uint32_t b = mc_gen_get_u32(p);
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}
static inline double mc_gen_get_f64(const uint8_t *p)
{
    uint64_t b = mc_gen_get_u64(p);
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}
/* Borrowing views (no copies) of C arguments as values. */
mc_value mc_gen_int(mc_type_kind k, int64_t v);
mc_value mc_gen_uint(mc_type_kind k, uint64_t v);
mc_value mc_gen_float(mc_type_kind k, double v);
mc_value mc_gen_str(mc_type_kind k, const char *s);
mc_value mc_gen_vec(mc_type_kind k, float x, float y, float z, float w);
mc_value mc_gen_mailbox(mc_mailbox_ref mb);
/* Property struct helpers: copy the default of property prop_index into a C field. */
int mc_gen_default_str(const mc_entity_defs *defs, uint16_t type_id, uint16_t prop_index,
                       char **out);
int mc_gen_default_value(const mc_entity_defs *defs, uint16_t type_id, uint16_t prop_index,
                         mc_value *out);
const mc_value *mc_gen_default(const mc_entity_defs *defs, uint16_t type_id,
                               uint16_t prop_index);

#endif
