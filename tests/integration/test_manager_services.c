/* The manager's services through the real path: a manager process, and mc_server
 * instances in this test process (driven in turns, each on its own event loop):
 *   - entity id ranges are disjoint across processes and across a manager restart with
 *     the same state file (SIGKILL, start again: every new id is above every old one);
 *     a corrupt state file stops the manager with one line and exit 1;
 *   - globally named bases: register, taken, lookup, deregister, refused for a sender that
 *     is not registered, dropped when the registering process dies; registered again by
 *     their owners with a restarted manager (a deregistered one not; a name another
 *     process took meanwhile is a clash, counted and left to that process);
 *   - an asynchronous watcher callable answered after a delay through the watcher tool,
 *     a refusal, and a server freed while a call waits. */
#include "test_secret.h"
#include "client.h"
#include "harness.h"
#include "server/control.h"
#include "server/pb.h"
#include "server/server.h"

#include <check.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* --- in-process servers ---------------------------------------------------------------- */

typedef struct {
    char mopt[64], ropt[600];
    char *argv[6];
} server_args;

static mc_server *new_server(server_args *a, const char *manager, mc_role role, bool entity_ids,
                             void (*on_ready)(mc_server *, void *), void *ctx)
{
    snprintf(a->mopt, sizeof a->mopt, "--manager=%s", manager);
    snprintf(a->ropt, sizeof a->ropt, "--res=%s/defs", h_source_dir());
    a->argv[0] = (char *)mc_role_name(role);
    a->argv[1] = a->mopt;
    a->argv[2] = a->ropt;
    a->argv[3] = "--logLevel=warning";
    a->argv[4] = NULL;
    mc_server_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.role = role;
    desc.summary = "in-process server for the manager services test";
    desc.entity_ids = entity_ids;
    desc.on_ready = on_ready;
    desc.ctx = ctx;
    int code = -1;
    mc_server *s = mc_server_new(&desc, 4, a->argv, &code);
    ck_assert_msg(s != NULL, "mc_server_new failed (%d)", code);
    return s;
}

static void on_break(evutil_socket_t fd, short what, void *ctx) { event_base_loopbreak(ctx); }

/* Start a server's loop (registration begins) and return at once. */
static void start(mc_server *s)
{
    struct event_base *b = mc_server_event_base(s);
    struct event *ev = evtimer_new(b, on_break, b);
    struct timeval tv = {0, 0};
    evtimer_add(ev, &tv);
    mc_server_run(s);
    event_free(ev);
}

/* Run the servers' loops in turns until done(ctx) or timeout_ms; true when done. A pid > 0
 * is also waited for: done then means it has exited (its status in *status). */
typedef bool (*done_fn)(void *ctx);
static bool pump(mc_server **ss, int n, done_fn done, void *ctx, int timeout_ms)
{
    long deadline = now_ms() + timeout_ms;
    for (long i = 0; i < 10000000L; i++) {
        if (done && done(ctx))
            return true;
        if (now_ms() >= deadline)
            return false;
        for (int k = 0; k < n; k++)
            if (ss[k])
                event_base_loop(mc_server_event_base(ss[k]), EVLOOP_NONBLOCK);
        h_sleep_ms(2);
    }
    return false;
}

static uint64_t watch_u(mc_server *s, const char *path)
{
    mc_watch_value v;
    char err[128];
    if (mc_watch_get(mc_server_watchers(s), path, &v, err, sizeof err) != MC_WATCH_OK)
        return 0;
    return v.as.u;
}

/* The single value `watcher get TARGET PATH` prints (its last word), as a number. */
static long long watch_number(const char *manager, const char *target, const char *path)
{
    char out[4096];
    if (h_watcher(out, sizeof out, manager, "get", target, path, NULL) != 0)
        return -1;
    const char *v = strrchr(out, ' ');
    return v ? atoll(v + 1) : -1;
}

/* --- entity ids ------------------------------------------------------------------------ */

#define MAX_IDS 40000
typedef struct {
    mc_server *s[2];
    int32_t ids[MAX_IDS];
    size_t n;
    uint64_t want_ranges[2];
    uint64_t want_registrations;
} ids_probe;

static bool have_ranges(void *ctx)
{
    ids_probe *p = ctx;
    for (int k = 0; k < 2; k++)
        if (watch_u(p->s[k], "entityIds/ranges") < p->want_ranges[k] ||
            mc_server_entity_ids_left(p->s[k]) == 0)
            return false;
    return true;
}

static bool registered_again(void *ctx)
{
    ids_probe *p = ctx;
    for (int k = 0; k < 2; k++)
        if (watch_u(p->s[k], "manager/registrations") < p->want_registrations ||
            !watch_u(p->s[k], "manager/registered"))
            return false;
    return true;
}

static void take(ids_probe *p, int k, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        int32_t id;
        ck_assert_int_eq(mc_server_next_entity_id(p->s[k], &id), 0);
        ck_assert_uint_lt(p->n, MAX_IDS);
        ck_assert_int_gt(id, 0);
        p->ids[p->n++] = id;
    }
}

static int cmp_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static void assert_unique(ids_probe *p)
{
    int32_t *copy = malloc(p->n * sizeof *copy);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, p->ids, p->n * sizeof *copy);
    qsort(copy, p->n, sizeof *copy, cmp_id);
    for (size_t i = 1; i < p->n; i++)
        ck_assert_msg(copy[i] != copy[i - 1], "id %d given twice", copy[i]);
    free(copy);
}

/* A member of the cluster (the run's secret) that is not a registered process: one control
 * request on a channel to addr, carrying the n bytes at msg; the reply's bytes into out
 * (at most 512), their count returned. */
typedef struct {
    bool done;
    mc_reply_status status;
    size_t len;
    uint8_t data[512];
} insider_reply;

static void on_insider_reply(void *ctx, mc_reply_status status, const mc_message_info *info,
                             mc_istream *data)
{
    (void)info;
    insider_reply *r = ctx;
    r->done = true;
    r->status = status;
    size_t n = data ? mc_istream_remaining(data) : 0;
    if (n > sizeof r->data)
        n = sizeof r->data;
    const uint8_t *b = n ? mc_read_bytes(data, n) : NULL;
    if (b)
        memcpy(r->data, b, n);
    r->len = b ? n : 0;
}

static size_t insider_request(const char *addr, uint8_t msg_id, size_t n, const uint8_t *msg,
                              uint8_t *out)
{
    struct event_base *eb = event_base_new();
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    mc_test_secret_apply(&cfg);
    mc_nub *nub = NULL;
    ck_assert_int_eq(mc_nub_new(eb, &cfg, &nub), MC_OK);
    mc_address to;
    ck_assert_int_eq(mc_address_parse(addr, &to), MC_OK);
    mc_channel *ch = mc_nub_channel(nub, &to, MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(ch);
    static insider_reply r;
    memset(&r, 0, sizeof r);
    const mc_message_def *def = mc_interface_find(mc_control_interface(), msg_id);
    ck_assert_int_eq(mc_channel_request(ch, def, msg, n, on_insider_reply, &r, 5 * MC_US_PER_S),
                     MC_OK);
    mc_time_us end = mc_clock_now_us() + 8 * MC_US_PER_S;
    while (!r.done && mc_clock_now_us() < end)
        event_base_loop(eb, EVLOOP_ONCE);
    ck_assert_msg(r.done && r.status == MC_REPLY_OK, "no answer to %s on a channel",
                  mc_control_name(msg_id));
    memcpy(out, r.data, r.len);
    mc_nub_free(nub);
    event_base_free(eb);
    return r.len;
}

START_TEST(entity_id_ranges_are_disjoint_and_survive_a_manager_restart)
{
    char manager[32] = "", log[600], state[600], sopt[640];
    snprintf(log, sizeof log, "%s/manager-ids.log", h_tmpdir());
    snprintf(state, sizeof state, "%s/manager-ids.state", h_tmpdir());
    snprintf(sopt, sizeof sopt, "--stateFile=%s", state);
    pid_t mgr = h_start_manager(manager, sizeof manager, log, sopt, NULL);
    ck_assert_msg(mgr > 0, "no manager (%s)", log);
    ck_assert(h_file_contains(log, "entity ids: state file"));

    static ids_probe p;
    memset(&p, 0, sizeof p);
    server_args args[2];
    p.s[0] = new_server(&args[0], manager, MC_ROLE_BASEAPP, true, NULL, NULL);
    p.s[1] = new_server(&args[1], manager, MC_ROLE_CELLAPP, true, NULL, NULL);
    int32_t none;
    ck_assert_int_eq(mc_server_next_entity_id(p.s[0], &none), -1); /* nothing yet */
    start(p.s[0]);
    start(p.s[1]);
    p.want_ranges[0] = p.want_ranges[1] = 1;
    ck_assert_msg(pump(p.s, 2, have_ranges, &p, 20000), "no first id ranges");
    ck_assert_uint_eq(mc_server_entity_ids_left(p.s[0]), MC_SERVER_ID_BATCH);
    /* Using more than half a batch asks for the next range; the rest is kept. */
    take(&p, 0, 3000);
    take(&p, 1, 2500);
    p.want_ranges[0] = p.want_ranges[1] = 2;
    ck_assert_msg(pump(p.s, 2, have_ranges, &p, 20000), "no second id ranges");
    ck_assert_uint_eq(mc_server_entity_ids_left(p.s[0]), 2 * MC_SERVER_ID_BATCH - 3000);
    ck_assert_uint_eq(mc_server_entity_ids_left(p.s[1]), 2 * MC_SERVER_ID_BATCH - 2500);
    assert_unique(&p);
    long long handed = watch_number(manager, "manager", "ids/next");
    ck_assert_int_eq(handed, 4 * MC_SERVER_ID_BATCH + 1);
    ck_assert_int_eq(watch_number(manager, "manager", "ids/ranges"), 4);
    ck_assert_int_gt(watch_number(manager, "manager", "ids/reserved"), handed);

    /* The manager dies hard and starts again on the same state file. */
    h_kill(mgr, SIGKILL);
    ck_assert_int_eq(h_wait_exit(mgr, 5000), 128 + SIGKILL);
    snprintf(log, sizeof log, "%s/manager-ids-again.log", h_tmpdir());
    mgr = h_start_manager(manager, sizeof manager, log, sopt, NULL);
    ck_assert_msg(mgr > 0, "the manager did not start again (%s)", log);
    long long next = watch_number(manager, "manager", "ids/next");
    ck_assert_msg(next >= handed, "restarted at %lld, below %lld", next, handed);
    /* The processes keep what they hold, register again, and use it all up. */
    p.want_registrations = 2;
    ck_assert_msg(pump(p.s, 2, registered_again, &p, 30000),
                  "the processes did not register with the new manager");
    size_t old_count = p.n;
    take(&p, 0, (size_t)mc_server_entity_ids_left(p.s[0]));
    take(&p, 1, (size_t)mc_server_entity_ids_left(p.s[1]));
    int32_t old_max = 0;
    for (size_t i = 0; i < p.n; i++)
        old_max = p.ids[i] > old_max ? p.ids[i] : old_max;
    ck_assert_int_lt(old_max, handed);
    old_count = p.n;
    p.want_ranges[0] = p.want_ranges[1] = 3;
    ck_assert_msg(pump(p.s, 2, have_ranges, &p, 30000), "no id ranges from the new manager");
    take(&p, 0, 10);
    take(&p, 1, 10);
    for (size_t i = old_count; i < p.n; i++)
        ck_assert_msg(p.ids[i] > old_max && p.ids[i] >= handed,
                      "new id %d not above the old ones (%d)", p.ids[i], old_max);
    assert_unique(&p);
    for (int k = 0; k < 2; k++)
        mc_server_free(p.s[k]);
    h_kill_all();
}
END_TEST

START_TEST(a_corrupt_state_file_stops_the_manager)
{
    char state[600], sopt[640], out[4096], bin[512], addr[64];
    snprintf(state, sizeof state, "%s/corrupt.state", h_tmpdir());
    FILE *f = fopen(state, "w");
    ck_assert_ptr_nonnull(f);
    fputs("mercury-cluster manager state 1\nidReserved lots\n", f);
    fclose(f);
    snprintf(sopt, sizeof sopt, "--stateFile=%s", state);
    snprintf(addr, sizeof addr, "--internal=127.0.0.1:%d", h_free_port(false));
    char *argv[] = {(char *)h_bin("manager", bin, sizeof bin), addr, sopt, NULL};
    ck_assert_int_eq(h_run(argv, out, sizeof out, 20000), 1);
    ck_assert_msg(strncmp(out, "manager: ", 9) == 0 && strstr(out, "corrupt") &&
                      strchr(out, '\n') == out + strlen(out) - 1,
                  "%s", out);
    /* Without a state file the manager warns that ids restart at 1. */
    char manager[32] = "", log[600];
    snprintf(log, sizeof log, "%s/manager-nostate.log", h_tmpdir());
    ck_assert(h_start_manager(manager, sizeof manager, log, NULL) > 0);
    ck_assert(h_file_contains(log, "ids restart at 1"));
    h_kill_all();
}
END_TEST

/* --- globals --------------------------------------------------------------------------- */

typedef struct {
    int calls;
    mc_global_status st;
    mc_mailbox_ref mb;
    bool has_mb;
    char reason[200];
} gresult;

static void on_global(mc_server *s, void *ctx, mc_global_status st, const mc_mailbox_ref *mb,
                      const char *reason)
{
    gresult *r = ctx;
    r->calls++;
    r->st = st;
    r->has_mb = mb != NULL;
    if (mb)
        r->mb = *mb;
    snprintf(r->reason, sizeof r->reason, "%s", reason ? reason : "(null)");
}

static bool answered(void *ctx) { return ((gresult *)ctx)->calls > 0; }

/* Polls `watcher get manager PATH` (at most every 300 ms) until it prints `want`. */
typedef struct {
    const char *manager, *path, *want;
    long last;
} manager_wait;

static bool manager_says(void *ctx)
{
    manager_wait *w = ctx;
    if (now_ms() - w->last < 300)
        return false;
    w->last = now_ms();
    char out[4096];
    return h_watcher(out, sizeof out, w->manager, "get", "manager", w->path, NULL) == 0 &&
           strstr(out, w->want) != NULL;
}

static bool both_registered(void *ctx)
{
    mc_server **ss = ctx;
    return watch_u(ss[0], "manager/registered") && watch_u(ss[1], "manager/registered");
}

/* Ask and wait for the answer. */
static gresult ask(mc_server **ss, int which, int op, const char *name, const mc_mailbox_ref *mb)
{
    gresult r;
    memset(&r, 0, sizeof r);
    int rc = op == 0   ? mc_server_global_register(ss[which], name, mb, on_global, &r)
             : op == 1 ? mc_server_global_deregister(ss[which], name, mb, on_global, &r)
                       : mc_server_global_lookup(ss[which], name, on_global, &r);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(pump(ss, 2, answered, &r, 15000), "no answer for '%s'", name);
    ck_assert_int_eq(r.calls, 1);
    return r;
}

START_TEST(global_names_register_lookup_and_drop_with_their_process)
{
    char manager[32] = "", log[600];
    snprintf(log, sizeof log, "%s/manager-globals.log", h_tmpdir());
    ck_assert_msg(h_start_manager(manager, sizeof manager, log, NULL) > 0, "no manager (%s)", log);
    server_args args[2];
    mc_server *ss[2];
    ss[0] = new_server(&args[0], manager, MC_ROLE_BASEAPP, false, NULL, NULL);
    ss[1] = new_server(&args[1], manager, MC_ROLE_BASEAPP, false, NULL, NULL);
    start(ss[0]);
    start(ss[1]);
    ck_assert(pump(ss, 2, both_registered, ss, 20000));

    mc_mailbox_ref a, b, none;
    memset(&none, 0, sizeof none);
    ck_assert_int_eq(mc_mailbox_ref_init(&a, 101, 0x7F000001u, 4000, MC_COMPONENT_BASE, 2), 0);
    ck_assert_int_eq(mc_mailbox_ref_init(&b, 202, 0x7F000001u, 4001, MC_COMPONENT_BASE, 2), 0);
    gresult r = ask(ss, 0, 0, "Lobby", &a);
    ck_assert_int_eq(r.st, MC_GLOBAL_OK);
    ck_assert_str_eq(r.reason, "");
    ck_assert(!r.has_mb);
    r = ask(ss, 1, 0, "Lobby", &b);
    ck_assert_int_eq(r.st, MC_GLOBAL_TAKEN);
    ck_assert_msg(strstr(r.reason, "Lobby"), "%s", r.reason);
    r = ask(ss, 1, 2, "Lobby", NULL);
    ck_assert_int_eq(r.st, MC_GLOBAL_OK);
    ck_assert(r.has_mb);
    ck_assert(memcmp(&r.mb, &a, sizeof a) == 0);
    r = ask(ss, 1, 2, "Nowhere", NULL);
    ck_assert_int_eq(r.st, MC_GLOBAL_NOT_FOUND);
    ck_assert(!r.has_mb);
    r = ask(ss, 1, 1, "Lobby", &b); /* not the registered mailbox */
    ck_assert_int_eq(r.st, MC_GLOBAL_NOT_FOUND);
    r = ask(ss, 1, 0, "Market", &b);
    ck_assert_int_eq(r.st, MC_GLOBAL_OK);
    r = ask(ss, 1, 1, "Market", &b);
    ck_assert_int_eq(r.st, MC_GLOBAL_OK);
    r = ask(ss, 1, 2, "Market", NULL);
    ck_assert_int_eq(r.st, MC_GLOBAL_NOT_FOUND);
    /* Refused before anything is sent. */
    gresult unused = {0};
    ck_assert_int_lt(mc_server_global_register(ss[0], "has space", &a, on_global, &unused), 0);
    ck_assert_int_lt(mc_server_global_register(ss[0], "", &a, on_global, &unused), 0);
    ck_assert_int_lt(mc_server_global_register(ss[0], "None", &none, on_global, &unused), 0);
    ck_assert_int_lt(mc_server_global_lookup(ss[0], "caf\xc3\xa9", on_global, &unused), 0);
    ck_assert_int_eq(unused.calls, 0);
    /* A second name for the first process, then the manager's view. */
    r = ask(ss, 0, 0, "Arena", &b);
    ck_assert_int_eq(r.st, MC_GLOBAL_OK);
    ck_assert_int_eq(watch_number(manager, "manager", "globals/count"), 2);
    char out[4096];
    ck_assert_int_eq(h_watcher(out, sizeof out, manager, "call", "manager", "globals/lookup",
                               "Lobby", NULL),
                     0);
    ck_assert_msg(strstr(out, "id=101") && strstr(out, "127.0.0.1:4000") &&
                      strstr(out, "component=BASE") && strstr(out, "owner=baseapp01"),
                  "%s", out);
    ck_assert_int_eq(h_watcher(out, sizeof out, manager, "call", "manager", "globals/lookup",
                               "Nowhere", NULL),
                     9);

    /* Someone that is not a registered process cannot register a name, nor get entity ids:
     * off-channel (a datagram anyone with the secret could replay) the requests are dropped
     * unanswered; on a channel they are refused. */
    char err[200];
    wt_client *c = wt_client_new(500, NULL, err, sizeof err);
    ck_assert_msg(c != NULL, "%s", err);
    uint8_t wire[MC_MAILBOX_WIRE_SIZE];
    mc_server_mailbox_pack(&a, wire);
    Mc__Control__GlobalEntry ge = MC__CONTROL__GLOBAL_ENTRY__INIT;
    ge.name = "Intruder";
    ge.mailbox.data = wire;
    ge.mailbox.len = sizeof wire;
    Mc__Control__IdRangeRequest ir = MC__CONTROL__ID_RANGE_REQUEST__INIT;
    ir.count = 10;
    wt_request req;
    wt_client_send(c, manager, MC_CTL_GLOBAL_REGISTER, &ge, &req);
    wt_client_wait(c);
    ck_assert_int_eq(req.state, WT_REQ_TIMEOUT);
    wt_request_clear(&req);
    wt_client_send(c, manager, MC_CTL_ID_RANGE, &ir, &req);
    wt_client_wait(c);
    ck_assert_int_eq(req.state, WT_REQ_TIMEOUT);
    wt_request_clear(&req);
    wt_client_free(c);
    ck_assert(h_wait_watch(manager, "manager", "controlRejected", "controlRejected  2", 5000));
    uint8_t msgbuf[512], reply[512];
    size_t mlen = mc__control__global_entry__pack(&ge, msgbuf);
    size_t rlen = insider_request(manager, MC_CTL_GLOBAL_REGISTER, mlen, msgbuf, reply);
    Mc__Control__GlobalReply *gr = mc__control__global_reply__unpack(NULL, rlen, reply);
    ck_assert_ptr_nonnull(gr);
    ck_assert_int_eq(gr->status, MC__CONTROL__GLOBAL_STATUS__GLOBAL_NOT_REGISTERED);
    mc_pb_free(gr);
    mlen = mc__control__id_range_request__pack(&ir, msgbuf);
    rlen = insider_request(manager, MC_CTL_ID_RANGE, mlen, msgbuf, reply);
    Mc__Control__IdRangeReply *rr = mc__control__id_range_reply__unpack(NULL, rlen, reply);
    ck_assert_ptr_nonnull(rr);
    ck_assert_int_eq(rr->status, MC__CONTROL__ID_RANGE_STATUS__ID_RANGE_NOT_REGISTERED);
    mc_pb_free(rr);

    /* The first process dies (freed without deregistering: it falls silent). Its names go
     * when the manager marks it dead; the second's stay. */
    mc_server_free(ss[0]);
    ss[0] = NULL;
    mc_server *left[1] = {ss[1]};
    manager_wait mw = {manager, "processes/baseapp01/state", "dead", 0};
    ck_assert_msg(pump(left, 1, manager_says, &mw, 15000), "baseapp01 not marked dead (%s)", log);
    mw = (manager_wait){manager, "globals/count", "globals/count  0", 0};
    ck_assert(pump(left, 1, manager_says, &mw, 5000));
    ck_assert(h_file_contains(log, "dropped 2 global names registered by baseapp01"));
    mw = (manager_wait){manager, "processes/baseapp02/state", "alive", 0};
    ck_assert(pump(left, 1, manager_says, &mw, 5000));
    gresult lr;
    memset(&lr, 0, sizeof lr);
    ck_assert_int_eq(mc_server_global_lookup(ss[1], "Lobby", on_global, &lr), 0);
    ck_assert(pump(left, 1, answered, &lr, 15000));
    ck_assert_int_eq(lr.st, MC_GLOBAL_NOT_FOUND);
    /* Now taken by the survivor. */
    memset(&lr, 0, sizeof lr);
    ck_assert_int_eq(mc_server_global_register(ss[1], "Lobby", &b, on_global, &lr), 0);
    ck_assert(pump(left, 1, answered, &lr, 15000));
    ck_assert_int_eq(lr.st, MC_GLOBAL_OK);
    /* A global request still waiting when the server is freed is answered NO_ANSWER. */
    memset(&lr, 0, sizeof lr);
    ck_assert_int_eq(mc_server_global_lookup(ss[1], "Lobby", on_global, &lr), 0);
    mc_server_free(ss[1]);
    ck_assert_int_eq(lr.calls, 1);
    ck_assert_int_eq(lr.st, MC_GLOBAL_NO_ANSWER);
    h_kill_all();
}
END_TEST

/* Both servers registered (again) with a manager instance other than `before`. */
typedef struct {
    mc_server **ss;
    int n;
    uint64_t want_registrations;
} again_wait;

static bool all_registered_again(void *ctx)
{
    again_wait *w = ctx;
    for (int k = 0; k < w->n; k++)
        if (watch_u(w->ss[k], "manager/registrations") < w->want_registrations ||
            !watch_u(w->ss[k], "manager/registered"))
            return false;
    return true;
}

typedef struct {
    mc_server *s;
    const char *path;
    uint64_t want;
} counter_wait;

static bool counter_reached(void *ctx)
{
    counter_wait *c = ctx;
    return watch_u(c->s, c->path) >= c->want;
}

START_TEST(global_names_are_registered_again_with_a_restarted_manager)
{
    char manager[32] = "", log[600];
    snprintf(log, sizeof log, "%s/manager-globals-again.log", h_tmpdir());
    pid_t mgr = h_start_manager(manager, sizeof manager, log, NULL);
    ck_assert_msg(mgr > 0, "no manager (%s)", log);
    server_args args[2];
    mc_server *ss[2];
    ss[0] = new_server(&args[0], manager, MC_ROLE_BASEAPP, false, NULL, NULL);
    ss[1] = new_server(&args[1], manager, MC_ROLE_BASEAPP, false, NULL, NULL);
    start(ss[0]);
    start(ss[1]);
    ck_assert(pump(ss, 2, both_registered, ss, 20000));
    mc_mailbox_ref a, b, c;
    ck_assert_int_eq(mc_mailbox_ref_init(&a, 101, 0x7F000001u, 4000, MC_COMPONENT_BASE, 2), 0);
    ck_assert_int_eq(mc_mailbox_ref_init(&b, 202, 0x7F000001u, 4001, MC_COMPONENT_BASE, 2), 0);
    ck_assert_int_eq(mc_mailbox_ref_init(&c, 303, 0x7F000001u, 4002, MC_COMPONENT_BASE, 2), 0);
    /* The first process: Lobby and Garden, and Arena that it deregisters again; the second:
     * Market. */
    ck_assert_int_eq(ask(ss, 0, 0, "Lobby", &a).st, MC_GLOBAL_OK);
    ck_assert_int_eq(ask(ss, 0, 0, "Garden", &c).st, MC_GLOBAL_OK);
    ck_assert_int_eq(ask(ss, 0, 0, "Arena", &a).st, MC_GLOBAL_OK);
    ck_assert_int_eq(ask(ss, 0, 1, "Arena", &a).st, MC_GLOBAL_OK);
    ck_assert_int_eq(ask(ss, 1, 0, "Market", &b).st, MC_GLOBAL_OK);
    /* A refused register is not kept. */
    ck_assert_int_eq(ask(ss, 1, 0, "Lobby", &b).st, MC_GLOBAL_TAKEN);
    ck_assert_uint_eq(watch_u(ss[0], "globals/kept"), 2);
    ck_assert_uint_eq(watch_u(ss[1], "globals/kept"), 1);
    ck_assert_int_eq(watch_number(manager, "manager", "globals/count"), 3);

    /* The manager dies hard and starts again at the same address, with no names. */
    h_kill(mgr, SIGKILL);
    ck_assert_int_eq(h_wait_exit(mgr, 5000), 128 + SIGKILL);
    snprintf(log, sizeof log, "%s/manager-globals-again2.log", h_tmpdir());
    mgr = h_start_manager(manager, sizeof manager, log, NULL);
    ck_assert_msg(mgr > 0, "the manager did not start again (%s)", log);
    /* Only the second process runs at first: it registers again (and Market with it), then
     * takes Lobby, which the first one held before. */
    again_wait w1 = {&ss[1], 1, 2};
    ck_assert_msg(pump(&ss[1], 1, all_registered_again, &w1, 30000),
                  "the second process did not register with the new manager");
    counter_wait market = {ss[1], "globals/registeredAgain", 1};
    ck_assert_msg(pump(&ss[1], 1, counter_reached, &market, 15000), "Market not sent again");
    ck_assert_int_eq(ask(ss, 1, 0, "Lobby", &b).st, MC_GLOBAL_OK);
    /* Now the first: it registers again, Garden comes back, Lobby clashes. */
    again_wait w2 = {ss, 2, 2};
    ck_assert_msg(pump(ss, 2, all_registered_again, &w2, 30000),
                  "the first process did not register with the new manager");
    counter_wait clash = {ss[0], "globals/clashes", 1};
    ck_assert_msg(pump(ss, 2, counter_reached, &clash, 15000), "no clash counted for Lobby");
    counter_wait garden = {ss[0], "globals/registeredAgain", 1};
    ck_assert_msg(pump(ss, 2, counter_reached, &garden, 15000), "Garden not sent again");
    gresult r = ask(ss, 1, 2, "Garden", NULL);
    ck_assert_int_eq(r.st, MC_GLOBAL_OK);
    ck_assert(memcmp(&r.mb, &c, sizeof c) == 0);
    r = ask(ss, 0, 2, "Market", NULL);
    ck_assert_int_eq(r.st, MC_GLOBAL_OK);
    ck_assert(memcmp(&r.mb, &b, sizeof b) == 0);
    r = ask(ss, 0, 2, "Lobby", NULL); /* the second process's, which took it meanwhile */
    ck_assert_int_eq(r.st, MC_GLOBAL_OK);
    ck_assert(memcmp(&r.mb, &b, sizeof b) == 0);
    r = ask(ss, 0, 2, "Arena", NULL); /* deregistered before: not back */
    ck_assert_int_eq(r.st, MC_GLOBAL_NOT_FOUND);
    ck_assert_int_eq(watch_number(manager, "manager", "globals/count"), 3);
    ck_assert_uint_eq(watch_u(ss[0], "globals/kept"), 1);
    ck_assert_uint_eq(watch_u(ss[0], "globals/registeredAgain"), 1);
    ck_assert_uint_eq(watch_u(ss[0], "globals/clashes"), 1);
    ck_assert_uint_eq(watch_u(ss[1], "globals/kept"), 2);
    ck_assert_uint_eq(watch_u(ss[1], "globals/clashes"), 0);
    char out[4096];
    ck_assert_int_eq(h_watcher(out, sizeof out, manager, "call", "manager", "globals/lookup",
                               "Garden", NULL),
                     0);
    ck_assert_msg(strstr(out, "id=303") && strstr(out, "owner=baseapp"), "%s", out);
    /* Deregistered now, it is gone for good: a third manager would not get it either. */
    ck_assert_int_eq(ask(ss, 0, 1, "Garden", &c).st, MC_GLOBAL_OK);
    ck_assert_uint_eq(watch_u(ss[0], "globals/kept"), 0);
    for (int k = 0; k < 2; k++)
        mc_server_free(ss[k]);
    h_kill_all();
}
END_TEST

/* --- asynchronous watcher calls -------------------------------------------------------- */

typedef struct {
    mc_server *s;
    mc_watch_done *held;      /* command/never keeps its dones */
    mc_watch_done *all_held[300];
    int nheld;
    struct event *timer;
    mc_watch_done *slow_done;
    char slow_arg[64];
    bool slow_refuse;
} async_probe;

static void on_slow_timer(evutil_socket_t fd, short what, void *ctx)
{
    async_probe *p = ctx;
    char result[128];
    snprintf(result, sizeof result, "slow done: %s", p->slow_arg);
    mc_watch_complete(p->slow_done, !p->slow_refuse, result, "the slow one says no");
    p->slow_done = NULL;
}

/* command/slow [ARG|no]: answers 1.5 s later (refuses for "no"). */
static void call_slow(void *ctx, int argc, const char *const *argv, mc_watch_done *done)
{
    async_probe *p = ctx;
    if (p->slow_done) {
        mc_watch_complete(done, false, NULL, "one at a time");
        return;
    }
    p->slow_done = done;
    snprintf(p->slow_arg, sizeof p->slow_arg, "%s", argc > 0 ? argv[0] : "");
    p->slow_refuse = argc > 0 && strcmp(argv[0], "no") == 0;
    struct timeval tv = {1, 500000};
    evtimer_add(p->timer, &tv);
}

static void call_never(void *ctx, int argc, const char *const *argv, mc_watch_done *done)
{
    async_probe *p = ctx;
    p->held = done;
    if (p->nheld < 300)
        p->all_held[p->nheld++] = done;
}

static void on_async_ready(mc_server *s, void *ctx)
{
    async_probe *p = ctx;
    mc_watchers *w = mc_server_watchers(s);
    ck_assert_int_eq(mc_watch_add_async_callable(w, "command/slow", call_slow, p, "slow"),
                     MC_WATCH_OK);
    ck_assert_int_eq(mc_watch_add_async_callable(w, "command/never", call_never, p, "never"),
                     MC_WATCH_OK);
}

typedef struct {
    pid_t pid;
    int status;
} tool_run;

static bool tool_exited(void *ctx)
{
    tool_run *t = ctx;
    int st = h_wait_exit(t->pid, 0);
    if (st < 0)
        return false;
    t->status = st;
    return true;
}

/* Start the watcher tool (output to log) and return its pid. */
static pid_t tool(const char *manager, const char *log, const char *a1, const char *a2,
                  const char *a3, const char *a4)
{
    char bin[512], mopt[64];
    snprintf(mopt, sizeof mopt, "--manager=%s", manager);
    char *argv[] = {(char *)h_bin("watcher", bin, sizeof bin), mopt, (char *)a1, (char *)a2,
                    (char *)a3, (char *)a4, NULL};
    unlink(log);
    return h_spawn(argv, log);
}

static bool is_registered(void *ctx) { return watch_u(ctx, "manager/registered"); }
static bool one_waiting(void *ctx) { return watch_u(ctx, "watcherCallsWaiting") == 1; }

START_TEST(async_watcher_calls_are_answered_when_they_complete)
{
    char manager[32] = "", log[600], tlog[600];
    snprintf(log, sizeof log, "%s/manager-async.log", h_tmpdir());
    snprintf(tlog, sizeof tlog, "%s/watcher-async.log", h_tmpdir());
    ck_assert_msg(h_start_manager(manager, sizeof manager, log, NULL) > 0, "no manager (%s)", log);
    static async_probe p;
    memset(&p, 0, sizeof p);
    server_args args;
    p.s = new_server(&args, manager, MC_ROLE_CELLAPP, false, on_async_ready, &p);
    p.timer = evtimer_new(mc_server_event_base(p.s), on_slow_timer, &p);
    start(p.s);
    mc_server *ss[1] = {p.s};
    ck_assert(pump(ss, 1, is_registered, p.s, 20000));

    /* Answered 1.5 s later through the tool (which waits up to 5 s by default). */
    long t0 = now_ms();
    tool_run t = {.pid = tool(manager, tlog, "call", "cellapp01", "command/slow", "hello")};
    ck_assert(pump(ss, 1, tool_exited, &t, 20000));
    ck_assert_msg(t.status == 0, "exit %d", t.status);
    ck_assert_msg(now_ms() - t0 >= 1400, "answered too early");
    ck_assert_msg(h_file_contains(tlog, "slow done: hello"), "see %s", tlog);
    /* A refusal comes back as one (exit 9) with the reason. */
    t.pid = tool(manager, tlog, "call", "cellapp01", "command/slow", "no");
    ck_assert(pump(ss, 1, tool_exited, &t, 20000));
    ck_assert_int_eq(t.status, 9);
    ck_assert_msg(h_file_contains(tlog, "the slow one says no"), "see %s", tlog);
    /* Synchronous callables still answer at once. */
    t.pid = tool(manager, tlog, "get", "cellapp01", "watcherCallsWaiting", NULL);
    ck_assert(pump(ss, 1, tool_exited, &t, 20000));
    ck_assert_int_eq(t.status, 0);
    ck_assert(h_file_contains(tlog, "watcherCallsWaiting  0"));

    /* A call that never completes: the server is freed while it waits. The tool gets no
     * answer (exit 7); the owner's later completion is a no-op. */
    char bin[512], mopt[64];
    snprintf(mopt, sizeof mopt, "--manager=%s", manager);
    char *argv[] = {(char *)h_bin("watcher", bin, sizeof bin), mopt, "--timeout", "3000", "call",
                    "cellapp01", "command/never", NULL};
    unlink(tlog);
    t.pid = h_spawn(argv, tlog);
    ck_assert(pump(ss, 1, one_waiting, p.s, 20000));
    ck_assert_ptr_nonnull(p.held);
    event_free(p.timer);
    mc_server_free(p.s);
    mc_watch_complete(p.held, true, "too late", NULL);
    ck_assert_int_eq(h_wait_exit(t.pid, 15000), 7);
    h_kill_all();
}
END_TEST


static bool all_waiting(void *ctx) { return watch_u(ctx, "watcherCallsWaiting") == 256; }
static bool all_heard(void *ctx) { return watch_u(ctx, "watcherRequests") >= 257; }

START_TEST(a_server_refuses_asynchronous_calls_beyond_256_waiting)
{
    char manager[32] = "", log[600];
    snprintf(log, sizeof log, "%s/manager-busy.log", h_tmpdir());
    ck_assert_msg(h_start_manager(manager, sizeof manager, log, NULL) > 0, "no manager (%s)", log);
    static async_probe p;
    memset(&p, 0, sizeof p);
    server_args args;
    p.s = new_server(&args, manager, MC_ROLE_CELLAPP, false, on_async_ready, &p);
    p.timer = evtimer_new(mc_server_event_base(p.s), on_slow_timer, &p);
    start(p.s);
    mc_server *ss[1] = {p.s};
    ck_assert(pump(ss, 1, is_registered, p.s, 20000));
    char err[200];
    wt_client *c = wt_client_new(3000, NULL, err, sizeof err);
    ck_assert_msg(c != NULL, "%s", err);
    static wt_request reqs[257];
    Mc__Control__WatcherRequest wr = MC__CONTROL__WATCHER_REQUEST__INIT;
    wr.op = MC__CONTROL__WATCHER_OP__WATCHER_CALL;
    wr.path = "command/never";
    for (int i = 0; i < 256; i++)
        wt_client_send(c, mc_server_internal_addr(p.s), MC_CTL_WATCHER, &wr, &reqs[i]);
    ck_assert(pump(ss, 1, all_waiting, p.s, 20000));
    wt_client_send(c, mc_server_internal_addr(p.s), MC_CTL_WATCHER, &wr, &reqs[256]);
    ck_assert(pump(ss, 1, all_heard, p.s, 20000));
    wt_client_wait(c); /* the 257th's answer is here; the others time out */
    ck_assert_int_eq(reqs[256].state, WT_REQ_OK);
    Mc__Control__WatcherReply *r =
        mc__control__watcher_reply__unpack(NULL, reqs[256].reply_len, reqs[256].reply);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->status, MC__CONTROL__WATCHER_STATUS__WS_REFUSED);
    ck_assert_msg(strstr(r->error, "busy"), "%s", r->error);
    mc_pb_free(r);
    for (int i = 0; i < 257; i++) {
        ck_assert(i == 256 || reqs[i].state == WT_REQ_TIMEOUT);
        wt_request_clear(&reqs[i]);
    }
    wt_client_free(c);
    /* Freed with 256 calls waiting: nothing is answered; the owner completes them later
     * (no-ops), and nothing leaks (ASan). */
    event_free(p.timer);
    mc_server_free(p.s);
    ck_assert_int_eq(p.nheld, 256);
    for (int i = 0; i < p.nheld; i++)
        mc_watch_complete(p.all_held[i], false, NULL, "owner gone");
    h_kill_all();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("manager_services");
    TCase *tc = tcase_create("services");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, entity_id_ranges_are_disjoint_and_survive_a_manager_restart);
    tcase_add_test(tc, a_corrupt_state_file_stops_the_manager);
    tcase_add_test(tc, global_names_register_lookup_and_drop_with_their_process);
    tcase_add_test(tc, global_names_are_registered_again_with_a_restarted_manager);
    tcase_add_test(tc, async_watcher_calls_are_answered_when_they_complete);
    tcase_add_test(tc, a_server_refuses_asynchronous_calls_beyond_256_waiting);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
