/* Malformed entity messages from a peer: an in-process mercury nub (a stranger on the
 * internal network) opens channels to a real baseapp and cellapp running the Probe game and
 * sends ENTITY_CALL, CREATE_BASE, CREATE_CELL, CELL_GONE, DESTROY_CELL, the moves'
 * (CELL_MIGRATE, CELL_MOVED, CELL_MIGRATE_END), the restores' (CELL_COPY, RESTORE_CELL) and
 * GHOST_REACH payloads that are
 * wrong in every way the receiver checks, each as a request and one-way. Each must be
 * dropped and counted under its calls/refused/<reason> (and nothing else), a request must
 * get an error reply with the right status, nothing may be created or destroyed, and the
 * process must stay alive and still serve a good call afterwards. */
#include "test_secret.h"
#include "harness.h"
#include "rules_cluster.h"

#include "common/defs.h"
#include "common/game_module.h"
#include "entity/ghost_wire.h"
#include "entity/move_wire.h"
#include "entity/restore_wire.h"
#include "entity/wire.h"
#include "mercury/mercury.h"

#include <check.h>
#include <event2/event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MC_PROBE_RES
#error "MC_PROBE_RES must be defined"
#endif

/* The entity messages as a sender declares them (no handlers: this nub only sends). */
#define ENTITY_SEND_INTERFACE(X)                                   \
    X(S_ENTITY_CALL, MC_MSG_ENTITY_CALL, MC_VARIABLE(4), NULL)     \
    X(S_CREATE_BASE, MC_MSG_CREATE_BASE, MC_VARIABLE(4), NULL)     \
    X(S_CREATE_CELL, MC_MSG_CREATE_CELL, MC_VARIABLE(4), NULL)     \
    X(S_DESTROY_CELL, MC_MSG_DESTROY_CELL, MC_VARIABLE(4), NULL)   \
    X(S_CELL_GONE, MC_MSG_CELL_GONE, MC_VARIABLE(4), NULL)         \
    X(S_CELL_MIGRATE, MC_MSG_CELL_MIGRATE, MC_VARIABLE(4), NULL)   \
    X(S_CELL_MOVED, MC_MSG_CELL_MOVED, MC_VARIABLE(4), NULL)       \
    X(S_CELL_MIGRATE_END, MC_MSG_CELL_MIGRATE_END, MC_VARIABLE(4), NULL) \
    X(S_CELL_COPY, MC_MSG_CELL_COPY, MC_VARIABLE(4), NULL)                 \
    X(S_RESTORE_CELL, MC_MSG_RESTORE_CELL, MC_VARIABLE(4), NULL)           \
    X(S_GHOST_REACH, MC_MSG_GHOST_REACH, MC_VARIABLE(4), NULL)
static const mc_message_def send_defs[] = {ENTITY_SEND_INTERFACE(MC_DEF_NO_HANDLER)};
static const mc_interface send_iface = MC_INTERFACE("entitySender", send_defs);

static const mc_message_def *def_of(uint8_t id)
{
    const mc_message_def *d = mc_interface_find(&send_iface, id);
    ck_assert_ptr_nonnull(d);
    return d;
}

/* ---- the stranger: a nub on this test's own event loop --------------------------------- */

typedef struct {
    struct event_base *base;
    mc_nub *nub;
} peer;

typedef struct {
    int calls;
    mc_reply_status status;
    uint8_t data[1024];
    size_t len;
} reply;

static void on_reply(void *ctx, mc_reply_status status, const mc_message_info *info,
                     mc_istream *data)
{
    (void)info;
    reply *r = ctx;
    r->calls++;
    r->status = status;
    if (status == MC_REPLY_OK && data) {
        size_t n = mc_istream_remaining(data);
        if (n > sizeof r->data)
            n = sizeof r->data;
        const uint8_t *b = n ? mc_read_bytes(data, n) : NULL;
        if (b)
            memcpy(r->data, b, n);
        r->len = n;
    }
}

static void peer_open(peer *p)
{
    p->base = event_base_new();
    ck_assert_ptr_nonnull(p->base);
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.bind = "127.0.0.1:0";
    mc_test_secret_apply(&cfg); /* a member of the cluster: the checks under test are past
                                   the trust boundary */
    ck_assert_int_eq(mc_nub_new(p->base, &cfg, &p->nub), MC_OK);
}

static void peer_close(peer *p)
{
    mc_nub_free(p->nub);
    event_base_free(p->base);
}

static void pump(peer *p, int ms)
{
    mc_time_us end = mc_clock_now_us() + (mc_time_us)ms * 1000;
    while (mc_clock_now_us() < end)
        event_base_loop(p->base, EVLOOP_ONCE);
}

static mc_channel *channel_to(peer *p, const char *addr)
{
    mc_address a;
    ck_assert_int_eq(mc_address_parse(addr, &a), MC_OK);
    mc_channel *ch = mc_nub_channel(p->nub, &a, MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(ch);
    return ch;
}

static void send_oneway(peer *p, const char *addr, uint8_t id, const uint8_t *d, size_t n)
{
    static const uint8_t nothing[1];
    mc_channel *ch = channel_to(p, addr);
    ck_assert_int_eq(mc_channel_send_message(ch, def_of(id), n ? d : nothing, n), MC_OK);
    ck_assert_int_eq(mc_channel_send(ch), MC_OK);
}

/* Send a request and wait (10 s at most) for its reply, which must come. */
static void request(peer *p, const char *addr, uint8_t id, const uint8_t *d, size_t n,
                    reply *r)
{
    static const uint8_t nothing[1];
    memset(r, 0, sizeof *r);
    mc_channel *ch = channel_to(p, addr);
    ck_assert_int_eq(mc_channel_request(ch, def_of(id), n ? d : nothing, n, on_reply, r,
                                        10 * MC_US_PER_S),
                     MC_OK);
    mc_time_us end = mc_clock_now_us() + 12 * MC_US_PER_S;
    while (r->calls == 0 && mc_clock_now_us() < end)
        event_base_loop(p->base, EVLOOP_ONCE);
    ck_assert_msg(r->calls == 1 && r->status == MC_REPLY_OK, "message %u to %s: %s",
                  (unsigned)id, addr, r->calls ? mc_reply_status_name(r->status) : "no reply");
}

/* ---- what the receivers count ---------------------------------------------------------- */

static const char *const reasons[] = {
    "malformed", "noEntity", "wrongType", "wrongPart", "noMethod", "badArgs", "handler",
    "destroyed", "noClient", "noCell", "queueFull", "notService", "processDead", "total",
};
#define NREASONS (sizeof reasons / sizeof reasons[0])

typedef struct {
    long long v[NREASONS];
} counts;

/* Every calls/refused/<reason> of proc, from one `watcher get PROC calls/refused`. */
static bool read_counts(rc_cluster *c, const char *proc, counts *out)
{
    char buf[8192];
    if (rc_get(c, buf, sizeof buf, proc, "calls/refused") != 0)
        return false;
    for (size_t i = 0; i < NREASONS; i++) {
        char key[64];
        snprintf(key, sizeof key, "calls/refused/%s ", reasons[i]);
        const char *at = strstr(buf, key);
        if (!at)
            return false;
        out->v[i] = strtoll(at + strlen(key), NULL, 10);
    }
    return true;
}

static size_t reason_index(const char *reason)
{
    for (size_t i = 0; i < NREASONS; i++)
        if (strcmp(reasons[i], reason) == 0)
            return i;
    ck_abort_msg("no reason %s", reason);
    return 0;
}

/* How a reply reads. */
typedef enum { R_CALL, R_CREATE_BASE, R_CREATE_CELL } reply_kind;

static int reply_status(reply_kind kind, const reply *r, char *why, size_t whylen)
{
    mc_istream is;
    mc_istream_init(&is, r->data, r->len);
    int status = 1;
    why[0] = '\0';
    if (kind == R_CALL) {
        ck_assert_msg(mc_call_reply_read(&is, &status, why, whylen), "reply malformed");
        return status;
    }
    status = mc_read_i8(&is);
    if (kind == R_CREATE_BASE) {
        mc_mailbox_ref mb;
        ck_assert(mc_mailbox_ref_read(&is, &mb, 0) && mc_mailbox_ref_is_none(&mb));
    } else {
        (void)mc_read_i32(&is);
    }
    ck_assert_msg(mc_read_string_into(&is, why, whylen) && mc_istream_done(&is),
                  "reply malformed");
    return status;
}

typedef struct {
    rc_cluster *c;
    peer *p;
    const char *proc;
    const char *addr;
} target;

/* Send the message as a request (its reply must carry `status`) and one-way; then exactly
 * calls/refused/<reason> (and total) must have grown by 2 on the target. */
/* Send to t, refused by the process `by` (t itself, or the final receiver of a call t
 * relays: then t counts no refusal). */
static void expect_refused_by(target *t, const char *by, const char *what, uint8_t id,
                              const uint8_t *d, size_t n, reply_kind kind, const char *reason,
                              int status)
{
    counts before, now, relay_before, relay_now;
    ck_assert(read_counts(t->c, by, &before));
    bool relayed = strcmp(by, t->proc) != 0;
    if (relayed)
        ck_assert(read_counts(t->c, t->proc, &relay_before));
    reply r;
    request(t->p, t->addr, id, d, n, &r);
    char why[256];
    int st = reply_status(kind, &r, why, sizeof why);
    ck_assert_msg(st == status, "%s to %s: status %d (%s), not %d", what, t->proc, st, why,
                  status);
    ck_assert_msg(why[0], "%s: the refusal has no reason", what);
    send_oneway(t->p, t->addr, id, d, n);
    size_t ri = reason_index(reason), total = reason_index("total");
    bool ok = false;
    for (int i = 0; i < 100 && !ok; i++) {
        pump(t->p, 50);
        ok = read_counts(t->c, by, &now) && now.v[ri] >= before.v[ri] + 2;
    }
    ck_assert_msg(ok, "%s to %s: refused/%s at %s %lld -> %lld", what, t->proc, reason, by,
                  before.v[ri], now.v[ri]);
    for (size_t i = 0; i < NREASONS; i++) {
        long long want = before.v[i] + (i == ri || i == total ? 2 : 0);
        ck_assert_msg(now.v[i] == want, "%s to %s: refused/%s at %s %lld, expected %lld",
                      what, t->proc, reasons[i], by, now.v[i], want);
    }
    if (relayed) {
        ck_assert(read_counts(t->c, t->proc, &relay_now));
        for (size_t i = 0; i < NREASONS; i++)
            ck_assert_msg(relay_now.v[i] == relay_before.v[i],
                          "%s: %s, which relays it, counted refused/%s", what, t->proc,
                          reasons[i]);
    }
}

static void expect_refused(target *t, const char *what, uint8_t id, const uint8_t *d,
                           size_t n, reply_kind kind, const char *reason, int status)
{
    expect_refused_by(t, t->proc, what, id, d, n, kind, reason, status);
}

/* ---- building messages ----------------------------------------------------------------- */

typedef struct {
    uint8_t b[2048];
    size_t n;
} msg;

static void take(msg *m, mc_ostream *os)
{
    ck_assert(mc_ostream_ok(os) && os->size <= sizeof m->b);
    memcpy(m->b, os->data, os->size);
    m->n = os->size;
    mc_ostream_free(os);
}

static uint16_t salt(mc_component c, uint16_t type) { return mc_salt_pack(c, type); }

/* An ENTITY_CALL: header then raw argument bytes. */
static msg call_msg(int32_t id, uint16_t s, uint16_t method, int32_t caller,
                    const uint8_t *args, size_t len)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_call_header h = {.entity_id = id, .salt = s, .method = method, .caller_id = caller};
    mc_call_header_write(&os, &h);
    if (len)
        mc_write_bytes(&os, args, len);
    msg m;
    take(&m, &os);
    return m;
}

static const mc_entity_defs *defs;
static const mc_entity_type_def *probe;

static uint16_t method_index(mc_part part, const char *name)
{
    const mc_def_method *m = mc_defs_method_by_name(probe, part, name);
    ck_assert_msg(m != NULL, "Probe has no %s method %s", mc_part_name(part), name);
    return m->index;
}

static void load_defs(void)
{
    if (defs)
        return;
    static char err[8192];
    mc_entity_defs *d = mc_defs_load(MC_PROBE_RES, err, sizeof err);
    ck_assert_msg(d != NULL, "%s", err);
    defs = d;
    probe = mc_defs_type_by_name(defs, "Probe");
    ck_assert_ptr_nonnull(probe);
}

/* The cell properties of a Probe at their defaults, as the part stream. */
static void write_cell_props(mc_ostream *os)
{
    for (uint16_t i = 0; i < probe->nparts_props[MC_PART_CELL]; i++) {
        const mc_def_property *p = mc_defs_part_property(probe, MC_PART_CELL, i);
        mc_value_limits lim = mc_defs_property_limits(defs, p);
        char why[160];
        ck_assert_msg(mc_value_encode(p->type, &p->default_value, &lim, os, why, sizeof why) ==
                          0,
                      "%s", why);
    }
}

static mc_mailbox_ref mailbox(int32_t id, const char *addr, mc_component c, uint16_t type)
{
    mc_address a;
    ck_assert_int_eq(mc_address_parse(addr, &a), MC_OK);
    mc_mailbox_ref m;
    ck_assert_int_eq(mc_mailbox_ref_init(&m, id, a.ip, a.port, c, type), 0);
    return m;
}

/* A good two-way echo through the nub: the process still serves calls. */
static void good_echo(target *t, int32_t id, mc_component comp, mc_part part, int32_t x)
{
    uint8_t arg[4] = {(uint8_t)(x >> 24), (uint8_t)(x >> 16), (uint8_t)(x >> 8), (uint8_t)x};
    msg m = call_msg(id, salt(comp, probe->id), method_index(part, "echo"), 0, arg, 4);
    reply r;
    request(t->p, t->addr, MC_MSG_ENTITY_CALL, m.b, m.n, &r);
    mc_istream is;
    mc_istream_init(&is, r.data, r.len);
    int status;
    char why[256];
    ck_assert(mc_call_reply_read(&is, &status, why, sizeof why));
    ck_assert_msg(status == MC_CALL_OK, "echo on %s: %d %s", t->proc, status, why);
    ck_assert_int_eq(mc_read_i32(&is), x);
    ck_assert(mc_istream_done(&is));
}

/* ---- the tests ------------------------------------------------------------------------- */

/* Calls every receiver refuses the same way, on the part `part` of entity id. */
static void common_call_refusals(target *t, int32_t id, mc_component comp, mc_part part)
{
    uint16_t type = probe->id;
    uint16_t echo = method_index(part, "echo");
    uint8_t four[4] = {0, 0, 0, 7}, six[6] = {0, 0, 0, 7, 1, 2}, two[2] = {0, 7};
    msg m;

    /* A header shorter than 12 bytes. */
    m = call_msg(id, salt(comp, type), echo, 0, NULL, 0);
    expect_refused(t, "7-byte header", MC_MSG_ENTITY_CALL, m.b, 7, R_CALL, "malformed",
                   MC_CALL_ERR_ARGS);
    expect_refused(t, "empty call", MC_MSG_ENTITY_CALL, m.b, 0, R_CALL, "malformed",
                   MC_CALL_ERR_ARGS);
    /* Entity ids that cannot be (0, negative) and a negative caller. */
    m = call_msg(0, salt(comp, type), echo, 0, four, 4);
    expect_refused(t, "entity id 0", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL, "malformed",
                   MC_CALL_ERR_ARGS);
    m = call_msg(-5, salt(comp, type), echo, 0, four, 4);
    expect_refused(t, "entity id -5", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL, "malformed",
                   MC_CALL_ERR_ARGS);
    m = call_msg(id, salt(comp, type), echo, -1, four, 4);
    expect_refused(t, "caller id -1", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL, "malformed",
                   MC_CALL_ERR_ARGS);
    /* An entity that is not here. */
    m = call_msg(999999, salt(comp, type), echo, 0, four, 4);
    expect_refused(t, "unknown entity", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL, "noEntity",
                   MC_CALL_ERR_NO_ENTITY);
    /* The mailbox's type is not the entity's. */
    m = call_msg(id, salt(comp, 9), echo, 0, four, 4);
    expect_refused(t, "wrong type", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL, "wrongType",
                   MC_CALL_ERR_MAILBOX);
    /* Method indices past the part's methods. */
    m = call_msg(id, salt(comp, type), 999, 0, four, 4);
    expect_refused(t, "method 999", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL, "noMethod",
                   MC_CALL_ERR_NO_METHOD);
    m = call_msg(id, salt(comp, type), (uint16_t)probe->nmethods[part], 0, four, 4);
    expect_refused(t, "method one past the last", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL,
                   "noMethod", MC_CALL_ERR_NO_METHOD);
    /* Truncated arguments, trailing bytes, none at all. */
    m = call_msg(id, salt(comp, type), echo, 0, two, 2);
    expect_refused(t, "echo with 2 bytes", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL, "badArgs",
                   MC_CALL_ERR_ARGS);
    m = call_msg(id, salt(comp, type), echo, 0, six, 6);
    expect_refused(t, "echo with 6 bytes", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL, "badArgs",
                   MC_CALL_ERR_ARGS);
    m = call_msg(id, salt(comp, type), echo, 0, NULL, 0);
    expect_refused(t, "echo without arguments", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL,
                   "badArgs", MC_CALL_ERR_ARGS);
}

/* Mistyped arguments: a STRING whose length is not what follows. */
static void string_refusals(target *t, int32_t id, mc_component comp, uint16_t method)
{
    uint16_t s = salt(comp, probe->id);
    uint8_t short_str[] = {10, 'a', 'b', 'c'};
    uint8_t huge_str[] = {0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 'a'};
    uint8_t long_form_small[] = {0xFF, 0, 0, 0, 1, 'a', 'b'};
    msg m = call_msg(id, s, method, 0, short_str, sizeof short_str);
    expect_refused(t, "STRING of 10 with 3 bytes", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL,
                   "badArgs", MC_CALL_ERR_ARGS);
    m = call_msg(id, s, method, 0, huge_str, sizeof huge_str);
    expect_refused(t, "STRING of 2 GiB", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL, "badArgs",
                   MC_CALL_ERR_ARGS);
    m = call_msg(id, s, method, 0, long_form_small, sizeof long_form_small);
    expect_refused(t, "STRING with trailing bytes", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL,
                   "badArgs", MC_CALL_ERR_ARGS);
}

START_TEST(a_baseapp_drops_and_counts_malformed_entity_messages)
{
    load_defs();
    rc_cluster c;
    rc_start(&c, 1, 1);
    peer p;
    peer_open(&p);
    target t = {&c, &p, "baseapp01", c.base_addr[0]};
    char out[512];

    int32_t b = rc_create_probe(&c, "baseapp01", "target");
    int32_t with_cell = rc_create_probe(&c, "baseapp01", "withCell");
    rc_entity_call(&c, "baseapp01", with_cell, "makeCell", "[null]", out, sizeof out);
    ck_assert(rc_wait_value(&c, "baseapp01", "entities/count", "count  2", 10000));
    char path[96];
    snprintf(path, sizeof path, "entities/%d/props/events", (int)with_cell);
    ck_assert(rc_wait_value(&c, "baseapp01", path, "getCell;", 15000));
    good_echo(&t, b, MC_COMPONENT_BASE, MC_PART_BASE, 11);

    common_call_refusals(&t, b, MC_COMPONENT_BASE, MC_PART_BASE);
    string_refusals(&t, b, MC_COMPONENT_BASE, method_index(MC_PART_BASE, "event"));
    uint16_t type = probe->id;
    msg m;
    /* A MAILBOX argument of a type that does not exist. */
    uint8_t bad_mb[12] = {0, 0, 0, 5, 127, 0, 0, 1, 0x55, 0x55, 0x20, 0x09};
    m = call_msg(b, salt(MC_COMPONENT_BASE, type), method_index(MC_PART_BASE, "remember"), 0,
                 bad_mb, sizeof bad_mb);
    expect_refused(&t, "MAILBOX of type 9", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL, "badArgs",
                   MC_CALL_ERR_ARGS);
    /* Components a baseapp does not take, or cannot serve for this base. */
    uint8_t four[4] = {0, 0, 0, 1};
    m = call_msg(b, salt(MC_COMPONENT_CELL, type), 0, 0, four, 4);
    expect_refused(&t, "CELL call to a baseapp", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL,
                   "wrongPart", MC_CALL_ERR_MAILBOX);
    m = call_msg(b, salt(MC_COMPONENT_BASE_VIA_CELL, type), 0, 0, four, 4);
    expect_refused(&t, "BASE_VIA_CELL call to a baseapp", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL,
                   "wrongPart", MC_CALL_ERR_MAILBOX);
    m = call_msg(b, salt(MC_COMPONENT_SERVICE, type), 0, 0, four, 4);
    expect_refused(&t, "SERVICE call to an unregistered base", MC_MSG_ENTITY_CALL, m.b, m.n,
                   R_CALL, "notService", MC_CALL_ERR_NO_ENTITY);
    m = call_msg(b, salt(MC_COMPONENT_CLIENT_VIA_BASE, type), 0, 0, four, 4);
    expect_refused(&t, "CLIENT_VIA_BASE call", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL,
                   "noClient", MC_CALL_ERR_NO_CLIENT);
    m = call_msg(b, salt(MC_COMPONENT_CELL_VIA_BASE, type), 0, 0, four, 4);
    expect_refused(&t, "CELL_VIA_BASE to a base without a cell", MC_MSG_ENTITY_CALL, m.b, m.n,
                   R_CALL, "noCell", MC_CALL_ERR_NO_ENTITY);
    /* The method index is checked where the method runs: the cell refuses it. */
    m = call_msg(with_cell, salt(MC_COMPONENT_CELL_VIA_BASE, type), 999, 0, four, 4);
    expect_refused_by(&t, "cellapp01", "CELL_VIA_BASE with method 999", MC_MSG_ENTITY_CALL,
                      m.b, m.n, R_CALL, "noMethod", MC_CALL_ERR_NO_METHOD);
    /* A handler that fails. */
    m = call_msg(b, salt(MC_COMPONENT_BASE, type), method_index(MC_PART_BASE, "fail"), 0, NULL,
                 0);
    expect_refused(&t, "fail", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL, "handler",
                   MC_CALL_ERR_HANDLER);

    /* CREATE_BASE payloads that are not right. */
    mc_ostream os;
    uint8_t three[3] = {0, 0, 0};
    expect_refused(&t, "CREATE_BASE of 3 bytes", MC_MSG_CREATE_BASE, three, 3, R_CREATE_BASE,
                   "malformed", MC_CALL_ERR_ARGS);
    mc_ostream_init(&os);
    mc_write_u16(&os, 9);
    mc_write_u16(&os, 0);
    take(&m, &os);
    expect_refused(&t, "CREATE_BASE of type 9", MC_MSG_CREATE_BASE, m.b, m.n, R_CREATE_BASE,
                   "malformed", MC_CALL_ERR_ARGS);
    mc_ostream_init(&os);
    mc_write_u16(&os, type);
    mc_write_u16(&os, 1);
    mc_write_u16(&os, 999);
    mc_write_u32(&os, 0);
    take(&m, &os);
    expect_refused(&t, "CREATE_BASE with property 999", MC_MSG_CREATE_BASE, m.b, m.n,
                   R_CREATE_BASE, "malformed", MC_CALL_ERR_ARGS);
    const mc_def_property *label = mc_defs_property_by_name(probe, "label");
    ck_assert_ptr_nonnull(label);
    mc_ostream_init(&os);
    mc_write_u16(&os, type);
    mc_write_u16(&os, 1);
    mc_write_u16(&os, label->index);
    mc_write_u8(&os, 40); /* a STRING of 40 bytes, with 2 */
    mc_write_u16(&os, 0x4142);
    take(&m, &os);
    expect_refused(&t, "CREATE_BASE with a short STRING", MC_MSG_CREATE_BASE, m.b, m.n,
                   R_CREATE_BASE, "malformed", MC_CALL_ERR_ARGS);
    mc_ostream_init(&os);
    mc_write_u16(&os, type);
    mc_write_u16(&os, 60000);
    mc_write_u16(&os, label->index);
    take(&m, &os);
    expect_refused(&t, "CREATE_BASE of 60000 properties in 2 bytes", MC_MSG_CREATE_BASE, m.b,
                   m.n, R_CREATE_BASE, "malformed", MC_CALL_ERR_ARGS);
    /* A valid payload with a byte more. */
    mc_ostream_init(&os);
    mc_value v = mc_gen_str(MC_TYPE_STRING, "x");
    char why[160];
    ck_assert_int_eq(mc_create_base_encode(defs, type, &label->index, &v, 1, &os, why,
                                           sizeof why),
                     0);
    mc_write_u8(&os, 0);
    take(&m, &os);
    expect_refused(&t, "CREATE_BASE with a trailing byte", MC_MSG_CREATE_BASE, m.b, m.n,
                   R_CREATE_BASE, "malformed", MC_CALL_ERR_ARGS);

    /* CELL_GONE: short; for an entity not here; for a live cell, from a stranger (not the
     * cellapp that holds it: the base keeps its cell). */
    mc_cell_gone_head gh = {.entity_id = 999999, .why = MC_CELL_GONE_SELF};
    mc_ostream_init(&os);
    mc_cell_gone_encode(&os, &gh);
    take(&m, &os);
    expect_refused(&t, "CELL_GONE of 5 bytes", MC_MSG_CELL_GONE, m.b, 5, R_CALL, "malformed",
                   MC_CALL_ERR_ARGS);
    expect_refused(&t, "CELL_GONE for 999999", MC_MSG_CELL_GONE, m.b, m.n, R_CALL, "noEntity",
                   MC_CALL_ERR_NO_ENTITY);
    gh.entity_id = with_cell;
    gh.position.x = NAN;
    mc_ostream_init(&os);
    mc_cell_gone_encode(&os, &gh);
    take(&m, &os);
    expect_refused(&t, "CELL_GONE at NaN", MC_MSG_CELL_GONE, m.b, m.n, R_CALL, "malformed",
                   MC_CALL_ERR_ARGS);
    gh.position.x = 0;
    mc_ostream_init(&os);
    mc_cell_gone_encode(&os, &gh);
    take(&m, &os);
    expect_refused(&t, "CELL_GONE from a stranger", MC_MSG_CELL_GONE, m.b, m.n, R_CALL,
                   "noEntity", MC_CALL_ERR_NO_ENTITY);
    /* CELL_COPY: short, at NaN, a space 0, properties that do not decode (a copy from a
     * stranger, not the cell's cellapp, is stale: dropped, counted apart). */
    mc_cell_copy_head cph = {.entity_id = with_cell, .space_id = 77};
    mc_ostream_init(&os);
    mc_cell_copy_encode(&os, &cph);
    take(&m, &os);
    expect_refused(&t, "CELL_COPY of 7 bytes", MC_MSG_CELL_COPY, m.b, 7, R_CALL, "malformed",
                   MC_CALL_ERR_ARGS);
    cph.position.z = NAN;
    mc_ostream_init(&os);
    mc_cell_copy_encode(&os, &cph);
    take(&m, &os);
    expect_refused(&t, "CELL_COPY at NaN", MC_MSG_CELL_COPY, m.b, m.n, R_CALL, "malformed",
                   MC_CALL_ERR_ARGS);
    cph.position.z = 0;
    cph.space_id = 0;
    mc_ostream_init(&os);
    mc_cell_copy_encode(&os, &cph);
    take(&m, &os);
    expect_refused(&t, "CELL_COPY of space 0", MC_MSG_CELL_COPY, m.b, m.n, R_CALL, "malformed",
                   MC_CALL_ERR_ARGS);
    {
        char before_copy[256];
        snprintf(path, sizeof path, "entities/%d/cellCopy", (int)with_cell);
        rc_value(&c, "baseapp01", path, before_copy, sizeof before_copy);
        long long stale = rc_int(&c, "baseapp01", "cells/copiesStale");
        cph.space_id = 77;
        mc_ostream_init(&os);
        mc_cell_copy_encode(&os, &cph);
        write_cell_props(&os);
        take(&m, &os);
        send_oneway(&p, t.addr, MC_MSG_CELL_COPY, m.b, m.n);
        for (int i = 0; i < 100 && rc_int(&c, "baseapp01", "cells/copiesStale") == stale; i++)
            pump(&p, 50);
        ck_assert_int_eq(rc_int(&c, "baseapp01", "cells/copiesStale"), stale + 1);
        char after[256];
        rc_value(&c, "baseapp01", path, after, sizeof after);
        ck_assert_str_eq(after, before_copy); /* the stranger's copy was not taken */
    }
    /* CELL_MOVED: short, a BASE mailbox, from a stranger (not the cellapp that holds the
     * cell: the base keeps its cell where it is) */
    mc_mailbox_ref moved = mailbox(with_cell, c.base_addr[0], MC_COMPONENT_CELL, type);
    mc_ostream_init(&os);
    mc_cell_moved_encode(&os, with_cell, &moved);
    take(&m, &os);
    expect_refused(&t, "CELL_MOVED of 10 bytes", MC_MSG_CELL_MOVED, m.b, 10, R_CALL,
                   "malformed", MC_CALL_ERR_ARGS);
    expect_refused(&t, "CELL_MOVED from a stranger", MC_MSG_CELL_MOVED, m.b, m.n, R_CALL,
                   "noEntity", MC_CALL_ERR_NO_ENTITY);
    moved = mailbox(with_cell, c.base_addr[0], MC_COMPONENT_BASE, type);
    mc_ostream_init(&os);
    mc_cell_moved_encode(&os, with_cell, &moved);
    take(&m, &os);
    expect_refused(&t, "CELL_MOVED with a BASE mailbox", MC_MSG_CELL_MOVED, m.b, m.n, R_CALL,
                   "malformed", MC_CALL_ERR_ARGS);
    expect_refused(&t, "CELL_MIGRATE to a baseapp", MC_MSG_CELL_MIGRATE, m.b, m.n, R_CALL,
                   "wrongPart", MC_CALL_ERR_NO_METHOD);
    snprintf(path, sizeof path, "entities/%d/cell", (int)with_cell);
    char cell[256];
    rc_value(&c, "baseapp01", path, cell, sizeof cell);
    ck_assert_msg(strstr(cell, "CELL") && strstr(cell, c.cell_addr[0]), "cell: %s", cell);

    /* Messages for a cellapp. */
    mc_ostream_init(&os);
    mc_destroy_cell_encode(&os, b);
    take(&m, &os);
    expect_refused(&t, "DESTROY_CELL to a baseapp", MC_MSG_DESTROY_CELL, m.b, m.n, R_CALL,
                   "wrongPart", MC_CALL_ERR_NO_METHOD);
    expect_refused(&t, "CREATE_CELL to a baseapp", MC_MSG_CREATE_CELL, m.b, m.n, R_CALL,
                   "wrongPart", MC_CALL_ERR_NO_METHOD);

    /* Nothing was created or destroyed, the process is alive and still serves calls. */
    ck_assert_int_eq(rc_int(&c, "baseapp01", "entities/count"), 2);
    ck_assert(h_alive(c.base[0]));
    good_echo(&t, b, MC_COMPONENT_BASE, MC_PART_BASE, -123456);
    good_echo(&t, with_cell, MC_COMPONENT_CELL_VIA_BASE, MC_PART_CELL, 77);
    peer_close(&p);
    rc_stop(&c);
}
END_TEST

START_TEST(a_cellapp_drops_and_counts_malformed_entity_messages)
{
    load_defs();
    rc_cluster c;
    rc_start(&c, 1, 1);
    peer p;
    peer_open(&p);
    target t = {&c, &p, "cellapp01", c.cell_addr[0]};
    char out[512], path[96];

    int32_t b = rc_create_probe(&c, "baseapp01", "cellTarget");
    rc_entity_call(&c, "baseapp01", b, "makeCell", "[null]", out, sizeof out);
    snprintf(path, sizeof path, "entities/%d/props/events", (int)b);
    ck_assert(rc_wait_value(&c, "baseapp01", path, "getCell;", 15000));
    good_echo(&t, b, MC_COMPONENT_CELL, MC_PART_CELL, 5);

    common_call_refusals(&t, b, MC_COMPONENT_CELL, MC_PART_CELL);
    string_refusals(&t, b, MC_COMPONENT_CELL, method_index(MC_PART_CELL, "note"));
    uint16_t type = probe->id;
    uint8_t four[4] = {0, 0, 0, 1};
    msg m = call_msg(b, salt(MC_COMPONENT_BASE, type), 0, 0, four, 4);
    expect_refused(&t, "BASE call to a cellapp", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL,
                   "wrongPart", MC_CALL_ERR_MAILBOX);
    m = call_msg(b, salt(MC_COMPONENT_SERVICE, type), 0, 0, four, 4);
    expect_refused(&t, "SERVICE call to a cellapp", MC_MSG_ENTITY_CALL, m.b, m.n, R_CALL,
                   "wrongPart", MC_CALL_ERR_MAILBOX);
    /* The method index is checked where the method runs: the base refuses it. */
    m = call_msg(b, salt(MC_COMPONENT_BASE_VIA_CELL, type), 999, 0, four, 4);
    expect_refused_by(&t, "baseapp01", "BASE_VIA_CELL with method 999", MC_MSG_ENTITY_CALL,
                      m.b, m.n, R_CALL, "noMethod", MC_CALL_ERR_NO_METHOD);

    /* CREATE_CELL payloads that are not right (the reply is status, space id, reason). */
    mc_address base_addr;
    ck_assert_int_eq(mc_address_parse(c.base_addr[0], &base_addr), MC_OK);
    int32_t fresh = 900000;
    mc_create_cell_head h = {.entity_id = fresh, .type = type, .near_id = 0,
                             .base = mailbox(fresh, c.base_addr[0], MC_COMPONENT_BASE, type)};
    mc_ostream os;
    mc_ostream_init(&os);
    mc_create_cell_encode(&os, &h);
    take(&m, &os);
    expect_refused(&t, "CREATE_CELL cut in its mailbox", MC_MSG_CREATE_CELL, m.b, 14,
                   R_CREATE_CELL, "malformed", MC_CALL_ERR_ARGS);
    expect_refused(&t, "CREATE_CELL without properties", MC_MSG_CREATE_CELL, m.b, m.n,
                   R_CREATE_CELL, "malformed", MC_CALL_ERR_ARGS);
    mc_ostream_init(&os);
    mc_create_cell_encode(&os, &h);
    write_cell_props(&os);
    mc_write_u8(&os, 0);
    take(&m, &os);
    expect_refused(&t, "CREATE_CELL with a trailing byte", MC_MSG_CREATE_CELL, m.b, m.n,
                   R_CREATE_CELL, "malformed", MC_CALL_ERR_ARGS);
    struct {
        const char *what;
        mc_create_cell_head h;
    } bad[] = {
        {"CREATE_CELL whose base is another entity",
         {.entity_id = fresh, .type = type,
          .base = mailbox(fresh + 1, c.base_addr[0], MC_COMPONENT_BASE, type)}},
        {"CREATE_CELL whose base is a CELL mailbox",
         {.entity_id = fresh, .type = type,
          .base = mailbox(fresh, c.base_addr[0], MC_COMPONENT_CELL, type)}},
        {"CREATE_CELL of type 9",
         {.entity_id = fresh, .type = 9,
          .base = mailbox(fresh, c.base_addr[0], MC_COMPONENT_BASE, 9)}},
        {"CREATE_CELL near -1",
         {.entity_id = fresh, .type = type, .near_id = -1,
          .base = mailbox(fresh, c.base_addr[0], MC_COMPONENT_BASE, type)}},
        {"CREATE_CELL of entity 0", {.entity_id = 0, .type = type}},
        {"CREATE_CELL at infinity",
         {.entity_id = fresh, .type = type,
          .base = mailbox(fresh, c.base_addr[0], MC_COMPONENT_BASE, type),
          .position = {INFINITY, 0, 0}}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mc_ostream_init(&os);
        mc_create_cell_encode(&os, &bad[i].h);
        write_cell_props(&os);
        take(&m, &os);
        expect_refused(&t, bad[i].what, MC_MSG_CREATE_CELL, m.b, m.n, R_CREATE_CELL,
                       "malformed", MC_CALL_ERR_ARGS);
    }

    /* RESTORE_CELL: short, space 0, a near id, an entity here already. */
    mc_ostream_init(&os);
    mc_restore_cell_encode(&os, 0);
    mc_create_cell_encode(&os, &h);
    write_cell_props(&os);
    take(&m, &os);
    expect_refused(&t, "RESTORE_CELL of 3 bytes", MC_MSG_RESTORE_CELL, m.b, 3, R_CREATE_CELL,
                   "malformed", MC_CALL_ERR_ARGS);
    expect_refused(&t, "RESTORE_CELL into space 0", MC_MSG_RESTORE_CELL, m.b, m.n,
                   R_CREATE_CELL, "malformed", MC_CALL_ERR_ARGS);
    h.near_id = b;
    mc_ostream_init(&os);
    mc_restore_cell_encode(&os, 12345);
    mc_create_cell_encode(&os, &h);
    write_cell_props(&os);
    take(&m, &os);
    expect_refused(&t, "RESTORE_CELL near a cell", MC_MSG_RESTORE_CELL, m.b, m.n,
                   R_CREATE_CELL, "malformed", MC_CALL_ERR_ARGS);
    h.near_id = 0;
    ck_assert_int_eq(rc_int(&c, "cellapp01", "restores/in"), 0);
    ck_assert_int_ge(rc_int(&c, "cellapp01", "restores/refused"), 6);

    /* DESTROY_CELL: short, for a cell not here, for a live cell from a stranger (not its
     * base: the cell stays). */
    mc_ostream_init(&os);
    mc_destroy_cell_encode(&os, 999999);
    take(&m, &os);
    expect_refused(&t, "DESTROY_CELL of 3 bytes", MC_MSG_DESTROY_CELL, m.b, 3, R_CALL,
                   "malformed", MC_CALL_ERR_ARGS);
    expect_refused(&t, "DESTROY_CELL for 999999", MC_MSG_DESTROY_CELL, m.b, m.n, R_CALL,
                   "noEntity", MC_CALL_ERR_NO_ENTITY);
    mc_ostream_init(&os);
    mc_destroy_cell_encode(&os, b);
    take(&m, &os);
    expect_refused(&t, "DESTROY_CELL from a stranger", MC_MSG_DESTROY_CELL, m.b, m.n, R_CALL,
                   "wrongPart", MC_CALL_ERR_MAILBOX);
    /* CELL_MIGRATE: cut in its head, near 0, without properties; CELL_MIGRATE_END: short,
     * and for an arrival that is not there; CELL_MOVED is a baseapp's */
    mc_migrate_head mh = {.cell = {.entity_id = fresh, .type = type, .near_id = b,
                                   .base = mailbox(fresh, c.base_addr[0], MC_COMPONENT_BASE,
                                                   type)}};
    mc_ostream_init(&os);
    mc_migrate_encode(&os, &mh);
    take(&m, &os);
    expect_refused(&t, "CELL_MIGRATE cut in its head", MC_MSG_CELL_MIGRATE, m.b, 50,
                   R_CREATE_CELL, "malformed", MC_CALL_ERR_ARGS);
    expect_refused(&t, "CELL_MIGRATE without properties", MC_MSG_CELL_MIGRATE, m.b, m.n,
                   R_CREATE_CELL, "malformed", MC_CALL_ERR_ARGS);
    mh.cell.near_id = 0;
    mc_ostream_init(&os);
    mc_migrate_encode(&os, &mh);
    write_cell_props(&os);
    take(&m, &os);
    expect_refused(&t, "CELL_MIGRATE near 0", MC_MSG_CELL_MIGRATE, m.b, m.n, R_CREATE_CELL,
                   "malformed", MC_CALL_ERR_ARGS);
    mc_ostream_init(&os);
    mc_migrate_end_encode(&os, fresh, MC_MIGRATE_FLUSHED);
    take(&m, &os);
    expect_refused(&t, "CELL_MIGRATE_END of 4 bytes", MC_MSG_CELL_MIGRATE_END, m.b, 4, R_CALL,
                   "malformed", MC_CALL_ERR_ARGS);
    expect_refused(&t, "CELL_MIGRATE_END for no arrival", MC_MSG_CELL_MIGRATE_END, m.b, m.n,
                   R_CALL, "noEntity", MC_CALL_ERR_NO_ENTITY);
    expect_refused(&t, "CELL_MOVED to a cellapp", MC_MSG_CELL_MOVED, m.b, m.n, R_CALL,
                   "wrongPart", MC_CALL_ERR_NO_METHOD);
    /* Messages for a baseapp. */
    expect_refused(&t, "CELL_GONE to a cellapp", MC_MSG_CELL_GONE, m.b, m.n, R_CALL,
                   "wrongPart", MC_CALL_ERR_NO_METHOD);
    expect_refused(&t, "CREATE_BASE to a cellapp", MC_MSG_CREATE_BASE, m.b, m.n, R_CALL,
                   "wrongPart", MC_CALL_ERR_NO_METHOD);

    /* GHOST_REACH from a stranger (not a live cellapp): a NaN, a negative, one beyond
     * --aoiMaxRadius (from a live cellapp it would be clamped) and a good one for the cellapp's space: each refused and counted, none
     * taken (the values themselves: test_entity_move_wire) */
    {
        static const float reaches[4] = {NAN, -1, 600, 155};
        snprintf(path, sizeof path, "entities/%d/space", (int)b);
        int32_t space = (int32_t)rc_int(&c, "cellapp01", path);
        for (int i = 0; i < 4; i++) {
            mc_ostream_init(&os);
            mc_ghost_reach_encode(&os, space, reaches[i]);
            take(&m, &os);
            send_oneway(&p, c.cell_addr[0], MC_MSG_GHOST_REACH, m.b, m.n);
        }
        ck_assert(rc_wait_int_at_least(&c, "cellapp01", "ghosts/reachRefused", 4, 20000));
        ck_assert_int_eq(rc_int(&c, "cellapp01", "ghosts/reachRefused"), 4);
        ck_assert_int_eq(rc_int(&c, "cellapp01", "ghosts/reachTaken"), 0);
    }

    /* Nothing was created or destroyed, the process is alive and still serves calls. */
    ck_assert_int_eq(rc_int(&c, "cellapp01", "entities/count"), 1);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "spaces/count"), 1);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "spaces/created"), 1);
    ck_assert(h_alive(c.cell[0]));
    good_echo(&t, b, MC_COMPONENT_CELL, MC_PART_CELL, 4242);
    snprintf(path, sizeof path, "entities/%d/props/events", (int)b);
    char ev[512];
    rc_value(&c, "baseapp01", path, ev, sizeof ev);
    ck_assert_str_eq(ev, "\"getCell;\"");
    peer_close(&p);
    rc_stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("entity_malformed");
    TCase *tc = tcase_create("malformed");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_baseapp_drops_and_counts_malformed_entity_messages);
    tcase_add_test(tc, a_cellapp_drops_and_counts_malformed_entity_messages);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
