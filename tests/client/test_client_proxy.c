/* Proxies end to end: a real manager, baseapp and cellapp running the example game, and the
 * client library (mcclient/client.h) over real sockets on loopback. A client connects with a
 * session the baseapp issued (command/issueSession), gets its Account, calls its exposed
 * methods and hears the answers; refusals are counted by reason; giveClientTo moves it to
 * an Avatar whose cell calls reach it through the base (CLIENT_VIA_CELL); sessions are one
 * time and expire; a second connection takes over; forged packets are authentication
 * failures; a client that logs off or goes silent is its base's onClientDeath. Every
 * process is stopped at the end (SIGTERM, exit 0) and killed if the test fails. */
#include "check_main.h"
#include "client_cluster.h"
#include "harness.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include "common/defs.h"
#include "common/game_module.h"
#include "mercury/address.h"
#include "common/value_json.h"
#include "example_client.h"
#include "mcclient/client.h"
#include "secure/session.h"

#define BASEAPP "baseapp01"
#define WATCH_MS "15000"

typedef client_cluster cluster;

static long now_ms(void) { return client_cluster_now_ms(); }

/* ---- the processes ---------------------------------------------------------------------- */

/* A manager, a baseapp (clients silent for 3 s are gone; base_opt: one more option or NULL)
 * and, with_cell, a cellapp, with the example game. */
static void start(cluster *c, bool with_cell, const char *base_opt)
{
    const char *const base_opts[] = {"--clientIdleMs=3000", base_opt, NULL};
    client_cluster_start(c, base_opts, with_cell, NULL);
}

static void stop(cluster *c) { client_cluster_stop(c); }

/* `watcher get|call ...` on the baseapp; the value after the path into val. */
static bool watch(const cluster *c, const char *verb, const char *path, const char *arg1,
                  const char *arg2, char *val, size_t n)
{
    return client_cluster_watch(c, BASEAPP, verb, path, arg1, arg2, NULL, val, n);
}

static long long counter(const cluster *c, const char *path)
{
    return client_cluster_counter(c, BASEAPP, path);
}

static bool wait_counter(const cluster *c, const char *path, long long want, int ms)
{
    long deadline = now_ms() + ms;
    for (int i = 0; i < 1000; i++) {
        if (counter(c, path) == want)
            return true;
        if (now_ms() > deadline)
            return false;
        h_sleep_ms(100);
    }
    return false;
}

/* command/createBase TYPE PROPS (retried while the baseapp has no ids yet): the new id. */
static int32_t create(const cluster *c, const char *type, const char *props)
{
    char v[512];
    long deadline = now_ms() + 15000;
    while (now_ms() < deadline) {
        if (watch(c, "call", "command/createBase", type, props, v, sizeof v))
            return (int32_t)atol(v);
        h_sleep_ms(200);
    }
    ck_abort_msg("createBase %s: %s", type, v);
    return 0;
}

typedef struct {
    uint64_t sid;
    uint8_t key[MC_SECURE_KEY_BYTES];
    char addr[64];
} session;

static session issue(const cluster *c, int32_t id)
{
    char ids[16], v[512];
    snprintf(ids, sizeof ids, "%d", (int)id);
    ck_assert_msg(watch(c, "call", "command/issueSession", ids, NULL, v, sizeof v), "%s", v);
    session s;
    memset(&s, 0, sizeof s);
    char hex[80];
    unsigned long long sid;
    ck_assert_msg(sscanf(v, "%llx %79s %63s", &sid, hex, s.addr) == 3, "issueSession: %s", v);
    s.sid = sid;
    for (int i = 0; i < 32; i++) {
        unsigned b;
        ck_assert(sscanf(hex + 2 * i, "%2x", &b) == 1);
        s.key[i] = (uint8_t)b;
    }
    return s;
}

/* ---- a test client ------------------------------------------------------------------------ */

typedef struct {
    mc_client *c;
    int players;
    uint16_t type;
    int32_t id;
    char player_props[1024];
    int ncalls;
    char calls[32][512];      /* "method JSON-ARGS" */
    int nprops;
    char props[32][256];      /* "name JSON" */
    int end_how, end_reason;
    char end_text[256];
} tclient;

static void on_player(void *ud, mc_client *c, const mc_cw_player *p)
{
    (void)c;
    tclient *t = ud;
    t->players++;
    t->type = p->type;
    t->id = p->id;
    t->player_props[0] = '\0';
    for (size_t i = 0; i < p->n; i++) {
        char *txt = mc_value_to_text(&p->values[i]);
        size_t len = strlen(t->player_props);
        snprintf(t->player_props + len, sizeof t->player_props - len, "%u=%s;",
                 (unsigned)p->indices[i], txt ? txt : "?");
        free(txt);
    }
}

static void on_call(void *ud, mc_client *c, int32_t id, const mc_def_method *m,
                    const mc_value *args)
{
    (void)c;
    (void)id;
    tclient *t = ud;
    if (t->ncalls >= 32)
        return;
    char *json = mc_json_from_values(m->args, m->nargs, args);
    snprintf(t->calls[t->ncalls++], sizeof t->calls[0], "%s %s", m->name, json ? json : "?");
    free(json);
}

static void on_property(void *ud, mc_client *c, int32_t id, const mc_def_property *p,
                        const mc_value *v)
{
    (void)c;
    (void)id;
    tclient *t = ud;
    if (t->nprops >= 32)
        return;
    char *txt = mc_value_to_text(v);
    snprintf(t->props[t->nprops++], sizeof t->props[0], "%s %s", p->name, txt ? txt : "?");
    free(txt);
}

static void on_end(void *ud, mc_client *c, int how, int reason, const char *text)
{
    (void)c;
    tclient *t = ud;
    t->end_how = how;
    t->end_reason = reason;
    snprintf(t->end_text, sizeof t->end_text, "%s", text);
}

static void connect_client(tclient *t, const cluster *c, const session *s)
{
    memset(t, 0, sizeof *t);
    mc_client_config cfg = {.baseapp = s->addr, .session_id = s->sid, .defs = c->defs,
                            .ud = t, .timeout_ms = 5000};
    memcpy(cfg.session_key, s->key, sizeof cfg.session_key);
    cfg.cb = (mc_client_callbacks){on_player, on_call, on_property, on_end, NULL, NULL};
    char err[256];
    t->c = mc_client_connect(&cfg, err, sizeof err);
    ck_assert_msg(t->c != NULL, "%s", err);
}

/* Run the clients (up to 3) until cond(t0) holds or ms pass. */
typedef bool (*cond_fn)(const tclient *t, const void *arg);
static bool pump(tclient **ts, int n, int ms, cond_fn cond, const void *arg)
{
    long deadline = now_ms() + ms;
    for (int i = 0; i < 100000; i++) {
        struct pollfd p[3];
        for (int k = 0; k < n; k++)
            p[k] = (struct pollfd){.fd = mc_client_fd(ts[k]->c), .events = POLLIN};
        poll(p, (nfds_t)n, MC_CLIENT_TICK_MS);
        for (int k = 0; k < n; k++)
            mc_client_tick(ts[k]->c);
        if (cond && cond(ts[0], arg))
            return true;
        if (now_ms() > deadline)
            return cond == NULL;
    }
    return false;
}

static bool has_player(const tclient *t, const void *arg) { return t->players >= *(const int *)arg; }
static bool has_calls(const tclient *t, const void *arg) { return t->ncalls >= *(const int *)arg; }
static bool has_props(const tclient *t, const void *arg) { return t->nprops >= *(const int *)arg; }
static bool ended(const tclient *t, const void *arg)
{
    (void)arg;
    return t->end_how != MC_CLIENT_END_NONE;
}

static void call_json(tclient *t, const cluster *c, mc_part part, const char *method,
                      const char *json)
{
    client_cluster_call_json(c, t->c, t->type, part, method, json);
}

/* ---- the tests ------------------------------------------------------------------------------ */

START_TEST(a_client_plays_its_account_then_its_avatar)
{
    cluster c;
    start(&c, true, NULL);
    /* the world the avatar's cell enters */
    create(&c, "Space", "{\"spaceName\":\"world\"}");
    int32_t acc = create(&c, "Account", "{\"accountName\":\"alice\"}");
    session s = issue(&c, acc);
    tclient t;
    connect_client(&t, &c, &s);
    int one = 1;
    ck_assert_msg(pump((tclient *[]){&t}, 1, 10000, has_player, &one), "no player (%s)", c.blog);
    ck_assert_int_eq(t.id, acc);
    ck_assert_int_eq(t.type, 0); /* Account */
    ck_assert_msg(strstr(t.player_props, "alice"), "%s", t.player_props);
    /* onEntitiesEnabled: the Account tells its client its avatars */
    ck_assert(pump((tclient *[]){&t}, 1, 5000, has_calls, &one));
    ck_assert_str_eq(t.calls[0], "onAvatarList [[]]");
    ck_assert_int_eq(counter(&c, "clients/connected"), 1);

    /* an exposed base method answering on the client */
    call_json(&t, &c, MC_PART_BASE, "createAvatar", "[\"Hero\",[1,2,3,4]]");
    int two = 2, three = 3;
    ck_assert(pump((tclient *[]){&t}, 1, 5000, has_calls, &two));
    ck_assert_msg(strstr(t.calls[1], "onAvatarList") && strstr(t.calls[1], "Hero"), "%s",
                  t.calls[1]);
    call_json(&t, &c, MC_PART_BASE, "selectAvatar", "[\"Nobody\"]");
    ck_assert(pump((tclient *[]){&t}, 1, 5000, has_calls, &three));
    ck_assert_str_eq(t.calls[2], "onSelectFailed [\"no such avatar\"]");

    /* refused and counted: not exposed (play is not; the library refuses it itself), a
     * two-way method, an index past the exposed ones, another entity, malformed args */
    ck_assert_int_eq(mc_client_call(t.c, MC_PART_BASE, "play", NULL, 0), MC_CALL_ERR_NO_METHOD);
    ck_assert_int_eq(mc_client_call_raw(t.c, MC_PART_BASE, acc, 7, NULL, 0), 0);
    ck_assert_int_eq(mc_client_call_raw(t.c, MC_PART_BASE, acc + 1000, 0, NULL, 0), 0);
    const uint8_t junk[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    ck_assert_int_eq(mc_client_call_raw(t.c, MC_PART_BASE, acc, 0, junk, sizeof junk), 0);
    ck_assert_int_eq(mc_client_call_raw(t.c, MC_PART_CELL, acc, 0, NULL, 0), 0);
    pump((tclient *[]){&t}, 1, 300, NULL, NULL);
    ck_assert(wait_counter(&c, "clients/refused/notExposed", 2, 5000));
    ck_assert_int_eq(counter(&c, "clients/refused/notOwn"), 1);
    ck_assert_int_eq(counter(&c, "clients/refused/badArgs"), 1);
    ck_assert_int_eq(counter(&c, "clients/refused/total"), 4);
    ck_assert_int_eq(t.end_how, MC_CLIENT_END_NONE); /* refusals do not end the channel */

    /* giveClientTo: the Account creates the Avatar here and hands it its client */
    call_json(&t, &c, MC_PART_BASE, "selectAvatar", "[\"Hero\"]");
    ck_assert(pump((tclient *[]){&t}, 1, 5000, has_player, &two));
    ck_assert_int_eq(t.type, 1); /* Avatar */
    ck_assert_int_ne(t.id, acc);
    ck_assert_msg(strstr(t.player_props, "Hero"), "%s", t.player_props);
    ck_assert_int_eq(counter(&c, "clients/givenTo"), 1);
    int32_t avatar = t.id;
    /* a change of a BASE_AND_CLIENT value reaches the client: an operator runs thank (10
     * xp) on the avatar */
    char ids[16], out[256];
    snprintf(ids, sizeof ids, "%d", (int)avatar);
    static char wout[4096];
    ck_assert_int_eq(h_watcher(wout, sizeof wout, c.mgr, "--timeout", WATCH_MS, "call",
                               BASEAPP, "command/call", ids, "thank", "[]", NULL),
                     0);
    (void)out;
    ck_assert(pump((tclient *[]){&t}, 1, 5000, has_props, &one));
    ck_assert_str_eq(t.props[0], "xp 10");
    /* its cell (in the world) answers through the base: CLIENT_VIA_CELL */
    char path[64];
    snprintf(path, sizeof path, "entities/%d/cell", (int)avatar);
    char v[256];
    long deadline = now_ms() + 15000;
    while (now_ms() < deadline && !(watch(&c, "get", path, NULL, NULL, v, sizeof v) &&
                                    strstr(v, "CELL ")))
        h_sleep_ms(100);
    ck_assert_msg(strstr(v, "CELL "), "the avatar has no cell: %s", v);
    int ncalls = t.ncalls + 1;
    call_json(&t, &c, MC_PART_CELL, "chat", "[\"hello\"]");
    ck_assert_msg(pump((tclient *[]){&t}, 1, 5000, has_calls, &ncalls), "no onChat (%s)",
                  c.clog);
    char want[64];
    snprintf(want, sizeof want, "onChat [%d,\"hello\"]", (int)avatar);
    ck_assert_str_eq(t.calls[ncalls - 1], want);

    /* logout: the Avatar (it has a client) gives it back to its Account, which tells the
     * client its avatars again */
    ncalls = t.ncalls + 1;
    call_json(&t, &c, MC_PART_BASE, "logout", "[]");
    ck_assert(pump((tclient *[]){&t}, 1, 5000, has_player, &three));
    ck_assert_int_eq(t.id, acc);
    ck_assert(pump((tclient *[]){&t}, 1, 5000, has_calls, &ncalls));
    ck_assert_msg(strstr(t.calls[ncalls - 1], "onAvatarList") &&
                      strstr(t.calls[ncalls - 1], "Hero"),
                  "%s", t.calls[ncalls - 1]);
    ck_assert_int_eq(counter(&c, "clients/givenTo"), 2);

    /* logging off: the Account's onClientDeath (counted), which destroys it in the example
     * game; the client ends CLOSED */
    mc_client_close(t.c);
    ck_assert_int_eq(t.end_how, MC_CLIENT_END_CLOSED);
    pump((tclient *[]){&t}, 1, 200, NULL, NULL);
    ck_assert(wait_counter(&c, "clients/deaths", 1, 5000));
    ck_assert(wait_counter(&c, "clients/connected", 0, 5000));
    snprintf(path, sizeof path, "entities/%d/type", (int)acc);
    deadline = now_ms() + 5000;
    while (now_ms() < deadline && watch(&c, "get", path, NULL, NULL, v, sizeof v))
        h_sleep_ms(100);
    ck_assert_msg(!watch(&c, "get", path, NULL, NULL, v, sizeof v), "the Account stays: %s", v);
    snprintf(path, sizeof path, "entities/%d/type", (int)avatar);
    ck_assert_msg(watch(&c, "get", path, NULL, NULL, v, sizeof v), "the Avatar went: %s", v);
    mc_client_free(t.c);
    stop(&c);
}
END_TEST

START_TEST(sessions_are_one_time_and_expire_and_takeover_tells_the_first)
{
    cluster c;
    start(&c, false, "--sessionExpiryMs=1000");
    int32_t acc = create(&c, "Account", "{\"accountName\":\"bob\"}");
    session s1 = issue(&c, acc);
    tclient a, b, x;
    connect_client(&a, &c, &s1);
    int one = 1;
    ck_assert(pump((tclient *[]){&a}, 1, 10000, has_player, &one));
    /* the same session again (from another socket): refused in the handshake */
    connect_client(&x, &c, &s1);
    ck_assert(pump((tclient *[]){&x, &a}, 2, 10000, ended, NULL));
    ck_assert_int_eq(x.end_how, MC_CLIENT_END_REJECTED);
    mc_client_free(x.c);
    /* an expired session: refused too */
    session s2 = issue(&c, acc);
    h_sleep_ms(1500);
    connect_client(&x, &c, &s2);
    ck_assert(pump((tclient *[]){&x, &a}, 2, 10000, ended, NULL));
    ck_assert_int_eq(x.end_how, MC_CLIENT_END_REJECTED);
    mc_client_free(x.c);
    ck_assert_int_ge(counter(&c, "clients/handshakesRejected"), 2);

    /* flipped bits after the handshake: authentication failures, dropped unread, and the
     * channel goes on (a DATA packet from the client's own socket) */
    long long before = counter(&c, "clients/authFailures");
    mc_address to;
    ck_assert_int_eq(mc_address_parse(s1.addr, &to), 0);
    struct sockaddr_in sa;
    mc_address_to_sockaddr(&to, &sa);
    for (int i = 0; i < 3; i++) {
        uint8_t pkt[64];
        memset(pkt, 0x5A + i, sizeof pkt);
        pkt[0] = 0xA5; /* DATA */
        memset(pkt + 1, 0, 7);
        pkt[8] = (uint8_t)(200 + i); /* a number not used yet: only the tag is wrong */
        ck_assert(sendto(mc_client_fd(a.c), pkt, sizeof pkt, 0, (struct sockaddr *)&sa,
                         sizeof sa) == (ssize_t)sizeof pkt);
    }
    pump((tclient *[]){&a}, 1, 300, NULL, NULL);
    ck_assert(wait_counter(&c, "clients/authFailures", before + 3, 5000));
    int calls = a.ncalls + 1;
    call_json(&a, &c, MC_PART_BASE, "selectAvatar", "[\"Nobody\"]");
    ck_assert(pump((tclient *[]){&a}, 1, 5000, has_calls, &calls));

    /* a second connection for the same entity takes over; the first is told why */
    session s3 = issue(&c, acc);
    connect_client(&b, &c, &s3);
    ck_assert(pump((tclient *[]){&b, &a}, 2, 10000, has_player, &one));
    ck_assert(pump((tclient *[]){&a, &b}, 2, 10000, ended, NULL));
    ck_assert_int_eq(a.end_how, MC_CLIENT_END_DISCONNECTED);
    ck_assert_int_eq(a.end_reason, MC_CW_BYE_TAKEN_OVER);
    ck_assert_int_eq(counter(&c, "clients/takenOver"), 1);
    ck_assert_int_eq(counter(&c, "clients/deaths"), 0);
    mc_client_free(a.c);

    /* the new client goes silent: after --clientIdleMs the Account hears onClientDeath (and,
     * in the example game, destroys itself) */
    mc_client_free(b.c);
    ck_assert(wait_counter(&c, "clients/deaths", 1, 15000));
    char path[64], v[256];
    snprintf(path, sizeof path, "entities/%d/type", (int)acc);
    long deadline = now_ms() + 5000;
    while (now_ms() < deadline && watch(&c, "get", path, NULL, NULL, v, sizeof v))
        h_sleep_ms(100);
    ck_assert_msg(!watch(&c, "get", path, NULL, NULL, v, sizeof v),
                  "the Account is still there: %s", v);
    ck_assert_int_eq(counter(&c, "sessions/unclaimed"), 0); /* bob's expired one: it had a client */

    /* a login whose client never comes (its reply lost): when the session expires unused and
     * the base has no client, it hears onClientDeath (the example Account destroys itself),
     * so the account is not left online with nobody playing */
    int32_t carol = create(&c, "Account", "{\"accountName\":\"carol\"}");
    (void)issue(&c, carol);
    ck_assert(wait_counter(&c, "sessions/unclaimed", 1, 10000));
    snprintf(path, sizeof path, "entities/%d/type", (int)carol);
    deadline = now_ms() + 5000;
    while (now_ms() < deadline && watch(&c, "get", path, NULL, NULL, v, sizeof v))
        h_sleep_ms(100);
    ck_assert_msg(!watch(&c, "get", path, NULL, NULL, v, sizeof v),
                  "carol's Account is still there: %s", v);
    stop(&c);
}
END_TEST

/* The example game's generated client side: typed senders through the client's sink, the
 * game's client handlers run with the player's client-part struct, kept current. */
static bool heard_lists(const tclient *t, const void *arg)
{
    (void)t;
    return example_client_heard()->avatar_lists >= *(const int *)arg;
}

static bool heard_select_failed(const tclient *t, const void *arg)
{
    (void)t;
    (void)arg;
    return example_client_heard()->select_failed[0] != '\0';
}

static bool heard_select_failed_n(const tclient *t, const void *arg)
{
    (void)t;
    return example_client_heard()->select_failed_count >= *(const int *)arg;
}

START_TEST(a_typed_client_uses_the_generated_senders_and_handlers)
{
    cluster c;
    start(&c, false, "--clientPacketsPerS=20"); /* low, to see the limit at work */
    int32_t acc = create(&c, "Account", "{\"accountName\":\"carol\"}");
    session s = issue(&c, acc);
    tclient t;
    memset(&t, 0, sizeof t);
    mc_client_config cfg = {.baseapp = s.addr, .session_id = s.sid, .defs = c.defs, .ud = &t,
                            .module = mc_game_client_get()};
    memcpy(cfg.session_key, s.key, sizeof cfg.session_key);
    cfg.cb = (mc_client_callbacks){on_player, on_call, on_property, on_end, NULL, NULL};
    char err[256];
    t.c = mc_client_connect(&cfg, err, sizeof err);
    ck_assert_msg(t.c != NULL, "%s", err);
    int one = 1, two = 2;
    ck_assert(pump((tclient *[]){&t}, 1, 10000, heard_lists, &one));
    const example_client_log *heard = example_client_heard();
    ck_assert_str_eq(heard->account_name, "carol"); /* the struct the handler got */
    const Account_client *props = mc_client_props(t.c);
    ck_assert_ptr_nonnull(props);
    ck_assert_str_eq(props->accountName, "carol");

    /* typed senders on the player's base mailbox */
    mc_mailbox_ref me = mc_client_player_mailbox(t.c, MC_COMPONENT_BASE);
    ck_assert_int_eq(me.id, acc);
    const mc_def_method *m =
        mc_defs_method_by_name(mc_defs_type(c.defs, 0), MC_PART_BASE, "createAvatar");
    mc_value args[2];
    char why[256];
    const char *json = "[\"Hero\",[9,8,7,6]]";
    ck_assert(mc_json_to_args(c.defs, m, json, strlen(json), args, why, sizeof why) == 0);
    ck_assert_int_eq(send_Account_base_createAvatar(mc_client_sink(t.c), &me, "Hero", &args[1]),
                     MC_CALL_OK);
    mc_value_free(&args[0]);
    mc_value_free(&args[1]);
    ck_assert(pump((tclient *[]){&t}, 1, 5000, heard_lists, &two));
    ck_assert_int_eq(heard->last_avatar_count, 1);
    ck_assert_int_eq(send_Account_base_selectAvatar(mc_client_sink(t.c), &me, "Nobody"),
                     MC_CALL_OK);
    ck_assert(pump((tclient *[]){&t}, 1, 5000, heard_select_failed, NULL));
    ck_assert_str_eq(heard->select_failed, "no such avatar");
    /* the sink sends exposed methods only, and only to the player */
    ck_assert_int_eq(send_Account_base_play(mc_client_sink(t.c), &me, "x"), MC_CALL_ERR_SEND);
    mc_mailbox_ref other = me;
    other.id = acc + 1;
    ck_assert_int_eq(send_Account_base_selectAvatar(mc_client_sink(t.c), &other, "Hero"),
                     MC_CALL_ERR_NO_ENTITY);
    /* given to the Avatar: the struct is the Avatar's client part, kept current */
    ck_assert_int_eq(send_Account_base_selectAvatar(mc_client_sink(t.c), &me, "Hero"),
                     MC_CALL_OK);
    ck_assert(pump((tclient *[]){&t}, 1, 5000, has_player, &two));
    const Avatar_client *av = mc_client_props(t.c);
    ck_assert_ptr_nonnull(av);
    ck_assert_str_eq(av->name, "Hero");
    ck_assert_int_eq(av->xp, 0);
    char ids[16];
    snprintf(ids, sizeof ids, "%d", (int)t.id);
    static char wout[4096];
    ck_assert_int_eq(h_watcher(wout, sizeof wout, c.mgr, "--timeout", WATCH_MS, "call",
                               BASEAPP, "command/call", ids, "thank", "[]", NULL),
                     0);
    ck_assert(pump((tclient *[]){&t}, 1, 5000, has_props, &one));
    ck_assert_int_eq(((const Avatar_client *)mc_client_props(t.c))->xp, 10);

    /* a burst past --clientPacketsPerS: packets over the allowance are dropped unread and
     * counted; Mercury resends them, so every call is still answered, in order */
    ck_assert_int_eq(send_Avatar_base_logout(mc_client_sink(t.c), &(mc_mailbox_ref){0}),
                     MC_CALL_ERR_MAILBOX);
    mc_mailbox_ref av_base = mc_client_player_mailbox(t.c, MC_COMPONENT_BASE);
    ck_assert_int_eq(send_Avatar_base_logout(mc_client_sink(t.c), &av_base), MC_CALL_OK);
    int three = 3;
    ck_assert(pump((tclient *[]){&t}, 1, 5000, has_player, &three)); /* back to the Account */
    me = mc_client_player_mailbox(t.c, MC_COMPONENT_BASE);
    int before = heard->select_failed_count;
    for (int i = 0; i < 60; i++)
        ck_assert_int_eq(send_Account_base_selectAvatar(mc_client_sink(t.c), &me, "Nobody"),
                         MC_CALL_OK);
    int want = before + 60;
    ck_assert_msg(pump((tclient *[]){&t}, 1, 30000, heard_select_failed_n, &want),
                  "%d of 60 answered", heard->select_failed_count - before);
    ck_assert_int_gt(counter(&c, "clients/rateLimited"), 0);
    mc_client_close(t.c);
    mc_client_free(t.c);
    stop(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("client_proxy");
    TCase *tc = tcase_create("proxy");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, a_client_plays_its_account_then_its_avatar);
    tcase_add_test(tc, sessions_are_one_time_and_expire_and_takeover_tells_the_first);
    tcase_add_test(tc, a_typed_client_uses_the_generated_senders_and_handlers);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
