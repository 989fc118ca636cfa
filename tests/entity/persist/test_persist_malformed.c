/* Malformed persistence messages from a peer: an in-process mercury nub (a stranger on the
 * internal network) sends LOAD_BASE to a real baseapp and FETCH_CELL to a real cellapp
 * (Keeper game, private redis-server), wrong in every way the receivers check, each as a
 * request and one-way: a request gets its error status with a reason, each is counted under
 * calls/refused/<reason>, nothing is loaded, the processes stay up and still serve good
 * requests (a LOAD_BASE from anyone loads; FETCH_CELL answers only a cell's own base). */
#include "test_secret.h"
#include "harness.h"
#include "persist_cluster.h"
#include "redis_harness.h"

#include "common/defs.h"
#include "common/game_module.h"
#include "entity/persist_wire.h"
#include "entity/wire.h"
#include "mercury/mercury.h"

#include <check.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEND_INTERFACE(X)                                       \
    X(S_FETCH_CELL, MC_MSG_FETCH_CELL, MC_VARIABLE(4), NULL)    \
    X(S_LOAD_BASE, MC_MSG_LOAD_BASE, MC_VARIABLE(4), NULL)
static const mc_message_def send_defs[] = {SEND_INTERFACE(MC_DEF_NO_HANDLER)};
static const mc_interface send_iface = MC_INTERFACE("persistSender", send_defs);

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

static mc_channel *channel_to(peer *p, const char *addr)
{
    mc_address a;
    ck_assert_int_eq(mc_address_parse(addr, &a), MC_OK);
    mc_channel *ch = mc_nub_channel(p->nub, &a, MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(ch);
    return ch;
}

static void request(peer *p, const char *addr, uint8_t id, const uint8_t *d, size_t n,
                    reply *r)
{
    static const uint8_t nothing[1];
    memset(r, 0, sizeof *r);
    mc_channel *ch = channel_to(p, addr);
    ck_assert_int_eq(mc_channel_request(ch, mc_interface_find(&send_iface, id), n ? d : nothing,
                                        n, on_reply, r, 10 * MC_US_PER_S),
                     MC_OK);
    mc_time_us end = mc_clock_now_us() + 12 * MC_US_PER_S;
    while (r->calls == 0 && mc_clock_now_us() < end)
        event_base_loop(p->base, EVLOOP_ONCE);
    ck_assert_msg(r->calls == 1 && r->status == MC_REPLY_OK, "message %u to %s: %s",
                  (unsigned)id, addr, r->calls ? mc_reply_status_name(r->status) : "no reply");
}

static void send_oneway(peer *p, const char *addr, uint8_t id, const uint8_t *d, size_t n)
{
    static const uint8_t nothing[1];
    mc_channel *ch = channel_to(p, addr);
    ck_assert_int_eq(mc_channel_send_message(ch, mc_interface_find(&send_iface, id),
                                             n ? d : nothing, n),
                     MC_OK);
    ck_assert_int_eq(mc_channel_send(ch), MC_OK);
}

static void pump(peer *p, int ms)
{
    mc_time_us end = mc_clock_now_us() + (mc_time_us)ms * 1000;
    while (mc_clock_now_us() < end)
        event_base_loop(p->base, EVLOOP_ONCE);
}

typedef struct {
    pc_cluster *c;
    peer *p;
    const char *proc;
    const char *addr;
    uint8_t id;
} target;

static long long refused(target *t, const char *reason)
{
    char path[64];
    snprintf(path, sizeof path, "calls/refused/%s", reason);
    return pc_int(t->c, t->proc, path);
}

/* The status and reason of a reply of the target's message. */
static int reply_status(uint8_t id, const reply *r, char *why, size_t whylen)
{
    mc_istream is;
    mc_istream_init(&is, r->data, r->len);
    if (id == MC_MSG_FETCH_CELL) {
        mc_fetch_cell_head h;
        ck_assert_msg(mc_fetch_cell_reply_read(&is, &h, why, whylen), "FETCH_CELL reply malformed");
        return h.status;
    }
    /* A refusal by the engine itself (a process that does not take LOAD_BASE) is a call
     * reply: a status and a reason. */
    int status;
    if (mc_call_reply_read(&is, &status, why, whylen) && mc_istream_done(&is) && why[0])
        return status;
    mc_istream_init(&is, r->data, r->len);
    int8_t st = mc_read_i8(&is);
    mc_mailbox_ref mb;
    ck_assert(mc_mailbox_ref_read(&is, &mb, 0));
    (void)mc_read_u64(&is);
    (void)mc_read_u8(&is);
    ck_assert_msg(mc_read_string_into(&is, why, whylen) && mc_istream_done(&is),
                  "LOAD_BASE reply malformed");
    if (st != MC_CALL_OK)
        ck_assert(mc_mailbox_ref_is_none(&mb));
    return st;
}

/* As a request (its answer carries status and a reason) and one-way: refused/<reason> and
 * refused/total grow by 2. */
static void expect_refused(target *t, const char *what, const uint8_t *d, size_t n,
                           const char *reason, int status)
{
    long long before = refused(t, reason), total = refused(t, "total");
    reply r;
    request(t->p, t->addr, t->id, d, n, &r);
    char why[256];
    int st = reply_status(t->id, &r, why, sizeof why);
    ck_assert_msg(st == status, "%s to %s: status %d (%s), not %d", what, t->proc, st, why,
                  status);
    ck_assert_msg(why[0], "%s: the refusal has no reason", what);
    send_oneway(t->p, t->addr, t->id, d, n);
    long long now = before;
    for (int i = 0; i < 100 && now < before + 2; i++) {
        pump(t->p, 50);
        now = refused(t, reason);
    }
    ck_assert_msg(now == before + 2, "%s to %s: refused/%s %lld -> %lld", what, t->proc, reason,
                  before, now);
    ck_assert_int_eq(refused(t, "total"), total + 2);
}

static size_t load_msg(uint8_t *b, size_t cap, uint16_t type, uint64_t dbid, const char *ident)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_write_u16(&os, type);
    mc_write_u64(&os, dbid);
    mc_write_string(&os, ident);
    ck_assert(mc_ostream_ok(&os) && os.size <= cap);
    memcpy(b, os.data, os.size);
    size_t n = os.size;
    mc_ostream_free(&os);
    return n;
}

START_TEST(test_malformed_persistence_messages)
{
    rh_options opt = {0};
    rh_redis *r = rh_start(&opt);
    ck_assert(r != NULL);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 1, NULL);
    const char *b1 = c.base_name[0];
    int32_t id = pc_create(&c, b1, "{\"name\":\"victim\",\"counter\":3}");
    char why[4096];
    uint64_t dbid = pc_write(&c, b1, id, why, sizeof why);
    ck_assert_msg(dbid > 0, "%s", why);
    pc_invoke(&c, b1, id, "makeCell", NULL);
    char path[96];
    snprintf(path, sizeof path, "entities/%d/cell", (int)id);
    ck_assert(h_wait_watch(c.manager, b1, path, "CELL", 20000));
    char cell_addr[64] = "";
    {
        char v[256];
        ck_assert(pc_value(&c, b1, path, v, sizeof v));
        ck_assert(sscanf(v, "CELL %*d at %63s", cell_addr) == 1);
    }

    peer p;
    p.base = event_base_new();
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.bind = "127.0.0.1:0";
    mc_test_secret_apply(&cfg); /* a member of the cluster: the checks under test are past
                                   the trust boundary */
    ck_assert_int_eq(mc_nub_new(p.base, &cfg, &p.nub), MC_OK);

    /* LOAD_BASE to the baseapp. */
    target tb = {&c, &p, b1, c.base_addr[0], MC_MSG_LOAD_BASE};
    uint8_t m[600];
    size_t n = load_msg(m, sizeof m, 0, dbid, "");
    expect_refused(&tb, "LOAD_BASE short", m, 5, "malformed", MC_CALL_ERR_ARGS);
    expect_refused(&tb, "LOAD_BASE empty", m, 0, "malformed", MC_CALL_ERR_ARGS);
    uint8_t longer[700];
    memcpy(longer, m, n);
    longer[n] = 0;
    expect_refused(&tb, "LOAD_BASE trailing byte", longer, n + 1, "malformed", MC_CALL_ERR_ARGS);
    n = load_msg(m, sizeof m, 99, dbid, "");
    expect_refused(&tb, "LOAD_BASE unknown type", m, n, "malformed", MC_CALL_ERR_ARGS);
    n = load_msg(m, sizeof m, 0, 0, "");
    expect_refused(&tb, "LOAD_BASE neither id nor name", m, n, "malformed", MC_CALL_ERR_ARGS);
    n = load_msg(m, sizeof m, 0, dbid, "victim");
    expect_refused(&tb, "LOAD_BASE both id and name", m, n, "malformed", MC_CALL_ERR_ARGS);
    char big[400];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    n = load_msg(m, sizeof m, 0, 0, big);
    expect_refused(&tb, "LOAD_BASE identifier too long", m, n, "malformed", MC_CALL_ERR_ARGS);

    /* FETCH_CELL to the cellapp. */
    target tc = {&c, &p, c.cell_name, cell_addr, MC_MSG_FETCH_CELL};
    uint8_t f[8] = {0};
    expect_refused(&tc, "FETCH_CELL short", f, 3, "malformed", MC_CALL_ERR_ARGS);
    expect_refused(&tc, "FETCH_CELL trailing", f, 5, "malformed", MC_CALL_ERR_ARGS);
    expect_refused(&tc, "FETCH_CELL id 0", f, 4, "malformed", MC_CALL_ERR_ARGS);
    f[3] = 0x7f; /* no such cell */
    f[2] = 0x7f;
    expect_refused(&tc, "FETCH_CELL unknown cell", f, 4, "noEntity", MC_CALL_ERR_NO_ENTITY);
    f[0] = (uint8_t)(id >> 24), f[1] = (uint8_t)(id >> 16), f[2] = (uint8_t)(id >> 8),
    f[3] = (uint8_t)id;
    expect_refused(&tc, "FETCH_CELL not from its base", f, 4, "wrongPart", MC_CALL_ERR_MAILBOX);
    /* Each process refuses the other's message. */
    target tcb = {&c, &p, c.cell_name, cell_addr, MC_MSG_LOAD_BASE};
    n = load_msg(m, sizeof m, 0, dbid, "");
    expect_refused(&tcb, "LOAD_BASE to a cellapp", m, n, "wrongPart", MC_CALL_ERR_NO_METHOD);
    target tbf = {&c, &p, b1, c.base_addr[0], MC_MSG_FETCH_CELL};
    expect_refused(&tbf, "FETCH_CELL to a baseapp", f, 4, "wrongPart", MC_CALL_ERR_NO_METHOD);

    /* Still serving: the entity was not loaded twice, a good LOAD_BASE answers with it. */
    ck_assert_int_eq(pc_int(&c, b1, "entities/count"), 1);
    reply rep;
    request(&p, c.base_addr[0], MC_MSG_LOAD_BASE, m, n, &rep);
    mc_istream is;
    mc_istream_init(&is, rep.data, rep.len);
    char defs_err[512];
    char res[600];
    snprintf(res, sizeof res, "%s", MC_KEEPER_RES);
    mc_entity_defs *defs = mc_defs_load(res, defs_err, sizeof defs_err);
    ck_assert_msg(defs != NULL, "%s", defs_err);
    mc_load_base_reply lr;
    ck_assert(mc_load_base_reply_decode(defs, &is, &lr));
    ck_assert_int_eq(lr.status, MC_CALL_OK);
    ck_assert(lr.was_live);
    ck_assert_int_eq(lr.base.id, id);
    ck_assert_uint_eq(lr.dbid, dbid);
    mc_defs_free(defs);
    ck_assert(h_alive(c.base[0]) && h_alive(c.cell));

    mc_nub_free(p.nub);
    event_base_free(p.base);
    pc_invoke(&c, b1, id, "dropCell", NULL);
    ck_assert(h_wait_watch(c.manager, b1, path, "none", 20000));
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("persist_malformed");
    TCase *tc = tcase_create("malformed");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_malformed_persistence_messages);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
