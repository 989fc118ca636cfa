/* The world through real clients: a manager, a baseapp and a cellapp with the example game,
 * two players (Avatars whose cells are in the "world" space) connected with the client
 * library over real sockets. Each player's client is introduced to its own cell entity and
 * to the other player (with its OTHER_CLIENTS / ALL_CLIENTS values), hears a chat of the
 * other through allClients (a CALL record), a level change of the other (PROPS) and only its
 * own health change, sees the other move (VOLATILE), has a too fast move of its own refused
 * and corrected, and sees the other leave when it walks away and come back with current
 * values. Every process is stopped at the end (SIGTERM, exit 0). */
#include "check_main.h"
#include "client_cluster.h"
#include "client_player.h"
#include "harness.h"

#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/defs.h"
#include "common/value_json.h"
#include "mcclient/client.h"

typedef client_cluster cluster;

static long now_ms(void) { return client_cluster_now_ms(); }

/* A manager, a baseapp and a cellapp (moves up to 50 m/s) with the example game. */
static void start(cluster *c)
{
    static const char *const cell_opts[] = {"--maxClientSpeed=50", NULL};
    client_cluster_start(c, NULL, true, cell_opts);
}

static void stop(cluster *c) { client_cluster_stop(c); }

static bool watch(const cluster *c, const char *proc, const char *verb, const char *path,
                  const char *a1, const char *a2, const char *a3, char *val, size_t n)
{
    return client_cluster_watch(c, proc, verb, path, a1, a2, a3, val, n);
}

static long long counter(const cluster *c, const char *proc, const char *path)
{
    return client_cluster_counter(c, proc, path);
}

/* ---- a player ----------------------------------------------------------------------------- */

/* The logging player (client_player.h). */
typedef client_player player;

typedef bool (*cond_fn)(player *a, player *b, const void *arg);

static bool pump(player *a, player *b, int ms, cond_fn cond, const void *arg)
{
    long deadline = now_ms() + ms;
    while (now_ms() < deadline) {
        struct pollfd pf[2] = {{.fd = mc_client_fd(a->c), .events = POLLIN},
                               {.fd = mc_client_fd(b->c), .events = POLLIN}};
        poll(pf, 2, MC_CLIENT_TICK_MS);
        mc_client_tick(a->c);
        mc_client_tick(b->c);
        if (cond && cond(a, b, arg))
            return true;
    }
    return cond == NULL;
}

static void call_json(player *p, const cluster *c, mc_part part, const char *method,
                      const char *json)
{
    client_cluster_call_json(c, p->c, p->type, part, method, json);
}

static bool is_avatar(player *a, player *b, const void *arg)
{
    (void)arg;
    return a->type == 1 && b->type == 1;
}

/* Both see each other, and their own cells. */
static bool see_each_other(player *a, player *b, const void *arg)
{
    (void)arg;
    return mc_client_entity_of(a->c, b->id) && mc_client_entity_of(b->c, a->id) &&
           mc_client_entity_of(a->c, a->id) && mc_client_entity_of(b->c, b->id);
}

static bool log_has(player *a, player *b, const void *arg)
{
    const char *const *w = arg; /* {which: "a"/"b", text} */
    return strstr(w[0][0] == 'a' ? a->log : b->log, w[1]) != NULL;
}

static bool wait_log(player *a, player *b, const char *who, const char *text, int ms)
{
    const char *w[2] = {who, text};
    return pump(a, b, ms, log_has, w);
}

static bool a_at_x(player *a, player *b, const void *arg)
{
    (void)a;
    const mc_client_entity *e = mc_client_entity_of(b->c, a->id);
    return e && fabsf(e->position.x - *(const float *)arg) < 0.01f;
}

static bool b_lost_a(player *a, player *b, const void *arg)
{
    (void)arg;
    return mc_client_entity_of(b->c, a->id) == NULL;
}

static void login_avatar(player *p, const cluster *c, const char *account, const char *hero)
{
    char props[128];
    snprintf(props, sizeof props, "{\"accountName\":\"%s\"}", account);
    client_player_connect(p, c, client_cluster_create(c, "Account", props));
}

/* Both players log off (their clients close) and the cluster stops. */
static void leave_world(cluster *c, player *a, player *b)
{
    mc_client_close(a->c);
    mc_client_close(b->c);
    mc_client_free(a->c);
    mc_client_free(b->c);
    stop(c);
}

/* Create the world (a Space with these properties, JSON) and log Alice and Bob in, each
 * playing a new avatar (Ann, Bo) that has entered the world: the Space's id. */
static int32_t enter_world(cluster *c, player *a, player *b, const char *world)
{
    int32_t space = client_cluster_create(c, "Space", world);
    login_avatar(a, c, "alice", "Ann");
    login_avatar(b, c, "bob", "Bo");
    pump(a, b, 500, NULL, NULL);
    call_json(a, c, MC_PART_BASE, "createAvatar", "[\"Ann\",[1,2,3,4]]");
    call_json(b, c, MC_PART_BASE, "createAvatar", "[\"Bo\",[1,2,3,4]]");
    pump(a, b, 1000, NULL, NULL);
    call_json(a, c, MC_PART_BASE, "selectAvatar", "[\"Ann\"]");
    call_json(b, c, MC_PART_BASE, "selectAvatar", "[\"Bo\"]");
    ck_assert_msg(pump(a, b, 10000, is_avatar, NULL), "no avatars (%s)", c->blog);
    return space;
}

START_TEST(players_see_each_other_chat_change_move_and_leave)
{
    cluster c;
    start(&c);
    player a, b;
    enter_world(&c, &a, &b, "{\"spaceName\":\"world\"}");
    /* each is introduced to its own cell (own-client values: health, maxHealth) and to the
     * other (level, rank, title, look: OTHER_CLIENTS / ALL_CLIENTS) */
    ck_assert_msg(pump(&a, &b, 15000, see_each_other, NULL), "a: %s | b: %s (%s)", a.log, b.log,
                  c.clog);
    char want[128];
    snprintf(want, sizeof want, "1:%d health=100", (int)a.id);
    ck_assert_msg(strstr(a.log, want), "%s", a.log);
    snprintf(want, sizeof want, "1:%d level=1 rank=0 title=\"Novice\" look=", (int)b.id);
    ck_assert_msg(strstr(a.log, want), "want %s in %s", want, a.log);
    /* a never hears b's own-client values */
    snprintf(want, sizeof want, "1:%d health", (int)b.id);
    ck_assert_msg(!strstr(a.log, want), "%s", a.log);
    /* the cellapp's totals: two witnesses, each with the other and the Space's own cell in
     * view (server only: in view, never sent); its updates timed */
    ck_assert_int_eq(counter(&c, "cellapp01", "aoi/witnesses"), 2);
    ck_assert_int_eq(counter(&c, "cellapp01", "aoi/inView"), 4);
    ck_assert_int_gt(counter(&c, "cellapp01", "aoi/maxUpdateUs"), 0);

    /* b chats (allClients): b's own client hears it through its base, a through a CALL */
    call_json(&b, &c, MC_PART_CELL, "chat", "[\"hi all\"]");
    snprintf(want, sizeof want, "5:%d onChat arg=%d arg=\"hi all\";", (int)b.id, (int)b.id);
    ck_assert_msg(wait_log(&a, &b, "a", want, 5000), "a: %s", a.log);
    ck_assert_msg(wait_log(&a, &b, "b", "own-call onChat", 5000), "b: %s", b.log);

    /* b trains: a learns b's level (PROPS), b its level and health, a never b's health */
    call_json(&b, &c, MC_PART_CELL, "train", "[2]");
    snprintf(want, sizeof want, "3:%d level=3;", (int)b.id);
    ck_assert_msg(wait_log(&a, &b, "a", want, 5000), "a: %s", a.log);
    snprintf(want, sizeof want, "3:%d health=98 level=3;", (int)b.id);
    ck_assert_msg(wait_log(&a, &b, "b", want, 5000), "b: %s", b.log);

    /* a moves: b sees it (VOLATILE); a too fast move is refused and a corrected */
    float x = 10;
    ck_assert_int_eq(mc_client_move(a.c, (mc_vector3){10, 0, 5}, (mc_vector3){0, 0, 1}), 0);
    ck_assert_msg(pump(&a, &b, 5000, a_at_x, &x), "b: %s", b.log);
    long long refused = counter(&c, "cellapp01", "clientMoves/refused/tooFast");
    ck_assert_int_eq(mc_client_move(a.c, (mc_vector3){5000, 0, 5}, (mc_vector3){0, 0, 1}), 0);
    snprintf(want, sizeof want, "6:%d;", (int)a.id);
    ck_assert_msg(wait_log(&a, &b, "a", want, 5000), "a: %s", a.log);
    const mc_client_entity *me = mc_client_entity_of(a.c, a.id);
    ck_assert(me && fabsf(me->position.x - 10) < 0.01f);
    ck_assert_int_eq(counter(&c, "cellapp01", "clientMoves/refused/tooFast"), refused + 1);
    ck_assert_msg(mc_client_move(a.c, (mc_vector3){NAN, 0, 0}, (mc_vector3){0, 0, 0}) ==
                      MC_CALL_ERR_ARGS, "a non-finite move left the client");

    /* a walks away (within the speed limit): b sees it leave; b trains meanwhile; a comes
     * back: b is introduced to a afresh with a's values as they are then */
    for (int step = 1; step <= 8 && mc_client_entity_of(b.c, a.id); step++) {
        pump(&a, &b, 500, NULL, NULL); /* 20 m each half second: 40 m/s */
        ck_assert_int_eq(mc_client_move(a.c, (mc_vector3){10.0f + 20.0f * (float)step, 0, 5},
                                        (mc_vector3){0, 0, 1}), 0);
    }
    ck_assert_msg(pump(&a, &b, 5000, b_lost_a, NULL),
                  "b still sees a (moves: %lld accepted, %lld too fast, %lld not its cell; "
                  "%lld relayed): %s",
                  counter(&c, "cellapp01", "clientMoves/accepted"),
                  counter(&c, "cellapp01", "clientMoves/refused/tooFast"),
                  counter(&c, "cellapp01", "clientMoves/refused/notItsCell"),
                  counter(&c, "baseapp01", "clients/moves"), b.log);
    snprintf(want, sizeof want, "2:%d;", (int)a.id);
    ck_assert_msg(strstr(b.log, want), "%s", b.log);
    call_json(&a, &c, MC_PART_CELL, "train", "[5]");
    pump(&a, &b, 500, NULL, NULL);
    const mc_client_entity *far = mc_client_entity_of(a.c, a.id);
    ck_assert_ptr_nonnull(far);
    for (float x0 = far->position.x - 20; x0 > -10; x0 -= 20) {
        pump(&a, &b, 500, NULL, NULL);
        ck_assert_int_eq(mc_client_move(a.c, (mc_vector3){x0, 0, 5}, (mc_vector3){0, 0, 1}), 0);
    }
    ck_assert_msg(pump(&a, &b, 5000, see_each_other, NULL), "b: %s", b.log);
    snprintf(want, sizeof want, "1:%d level=6", (int)a.id);
    ck_assert_msg(wait_log(&a, &b, "b", want, 5000), "b: %s", b.log);
    ck_assert_int_eq(counter(&c, "cellapp01", "world/sendFailures"), 0);
    ck_assert_int_eq(counter(&c, "baseapp01", "world/stale"), 0);

    /* a logs off: its Avatar leaves the world (cell, then base) and its Account goes, so the
     * account could log in again; b sees it leave */
    int32_t avatar_a = a.id;
    mc_client_close(a.c);
    char path[64], v[256];
    snprintf(path, sizeof path, "entities/%d/type", (int)avatar_a);
    long deadline = now_ms() + 10000;
    while (now_ms() < deadline && watch(&c, "baseapp01", "get", path, NULL, NULL, NULL, v, sizeof v))
        pump(&b, &b, 100, NULL, NULL);
    ck_assert_msg(!watch(&c, "baseapp01", "get", path, NULL, NULL, NULL, v, sizeof v),
                  "a's Avatar is still there after it logged off");
    ck_assert_msg(pump(&a, &b, 5000, b_lost_a, NULL), "b still sees a after it logged off");
    mc_client_close(b.c);
    mc_client_free(a.c);
    mc_client_free(b.c);
    stop(&c);
}
END_TEST

/* Log both players in as avatars that see each other. */
static void two_players(cluster *c, player *a, player *b)
{
    start(c);
    enter_world(c, a, b, "{\"spaceName\":\"world\"}");
    ck_assert_msg(pump(a, b, 15000, see_each_other, NULL), "a: %s | b: %s", a->log, b->log);
}

static void set_prop(const cluster *c, const char *proc, int32_t id, const char *name,
                     const char *json)
{
    char ids[16], v[512];
    snprintf(ids, sizeof ids, "%d", (int)id);
    ck_assert_msg(watch(c, proc, "call", "command/setProperty", ids, name, json, v, sizeof v),
                  "setProperty %s %s: %s", name, json, v);
}

/* Every property flag reaches exactly its receivers: the owner's client hears its
 * BASE_AND_CLIENT (from the base), OWN_CLIENT, CELL_PUBLIC_AND_OWN and ALL_CLIENTS values; the
 * other player's client its OTHER_CLIENTS and ALL_CLIENTS values; nobody BASE, CELL_PUBLIC or
 * CELL_PRIVATE ones. */
START_TEST(every_property_flag_reaches_exactly_its_receivers)
{
    cluster c;
    player a, b;
    two_players(&c, &a, &b);
    pump(&a, &b, 300, NULL, NULL);
    a.log[0] = b.log[0] = '\0';
    static const struct {
        const char *name, *json, *proc;
        bool owner, other;
    } props[] = {
        {"xp", "77", "baseapp01", true, false},                 /* BASE_AND_CLIENT */
        {"gold", "5", "baseapp01", false, false},               /* BASE */
        {"health", "42", "cellapp01", true, false},             /* OWN_CLIENT */
        {"mapMarker", "[3,4]", "cellapp01", true, false},       /* OWN_CLIENT */
        {"maxHealth", "120", "cellapp01", true, false},         /* CELL_PUBLIC_AND_OWN */
        {"level", "9", "cellapp01", true, true},                /* ALL_CLIENTS */
        {"title", "\"Sage\"", "cellapp01", true, true},         /* ALL_CLIENTS */
        {"look", "[9,8,7,6]", "cellapp01", false, true},        /* OTHER_CLIENTS */
        {"faction", "3", "cellapp01", false, false},            /* CELL_PUBLIC */
        {"aggro", "1.5", "cellapp01", false, false},            /* CELL_PRIVATE */
    };
    size_t n = sizeof props / sizeof props[0];
    for (size_t i = 0; i < n; i++)
        set_prop(&c, props[i].proc, a.id, props[i].name, props[i].json);
    /* the last one any client may hear, then a little more for the others to arrive */
    const char *w[2] = {"b", "look="};
    ck_assert_msg(pump(&a, &b, 5000, log_has, w), "b: %s", b.log);
    pump(&a, &b, 1500, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(client_player_heard(&a, a.id, props[i].name, NULL) == props[i].owner,
                      "the owner %s %s: %s", props[i].owner ? "missed" : "heard", props[i].name,
                      a.log);
        ck_assert_msg(client_player_heard(&b, a.id, props[i].name, NULL) == props[i].other,
                      "the other %s %s: %s", props[i].other ? "missed" : "heard", props[i].name,
                      b.log);
    }
    leave_world(&c, &a, &b);
}
END_TEST

/* Both have their own cells. */
static bool own_cells(player *a, player *b, const void *arg)
{
    (void)arg;
    return mc_client_entity_of(a->c, a->id) && mc_client_entity_of(b->c, b->id);
}

static float ground_dist(mc_vector3 p, mc_vector3 q)
{
    return sqrtf((p.x - q.x) * (p.x - q.x) + (p.z - q.z) * (p.z - q.z));
}

/* A world with a spawn radius spreads its newcomers: each player's Avatar enters at its own
 * point of the disc (the Space hands them out in turn), not at the origin. */
START_TEST(newcomers_enter_spread_over_the_spawn_disc)
{
    cluster c;
    start(&c);
    player a, b;
    int32_t space = enter_world(&c, &a, &b, "{\"spaceName\":\"world\",\"spawnRadius\":40}");
    ck_assert_msg(pump(&a, &b, 15000, own_cells, NULL), "a: %s | b: %s (%s)", a.log, b.log,
                  c.clog);
    mc_vector3 origin = {0, 0, 0};
    mc_vector3 pa = mc_client_entity_of(a.c, a.id)->position;
    mc_vector3 pb = mc_client_entity_of(b.c, b.id)->position;
    ck_assert_msg(ground_dist(pa, origin) > 1 && ground_dist(pa, origin) <= 40.01f,
                  "a entered at (%g, %g)", pa.x, pa.z);
    ck_assert_msg(ground_dist(pb, origin) > 1 && ground_dist(pb, origin) <= 40.01f,
                  "b entered at (%g, %g)", pb.x, pb.z);
    ck_assert_msg(ground_dist(pa, pb) > 1, "both entered at (%g, %g)", pa.x, pa.z);
    /* the Space handed out two spawn points */
    char path[64], v[64];
    snprintf(path, sizeof path, "entities/%d/props/arrivals", (int)space);
    ck_assert_msg(watch(&c, "baseapp01", "get", path, NULL, NULL, NULL, v, sizeof v), "%s", v);
    ck_assert_str_eq(v, "2");
    leave_world(&c, &a, &b);
}
END_TEST

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Volatile updates are never resent: with half of what the baseapp sends to clients lost, a
 * sees fewer of b's moves than b made, never one twice, and the next one after the loss
 * supersedes the lost ones. Bad moves are refused: not finite (raw bytes past the library's
 * own check), malformed, and moves while the player has no cell. */
START_TEST(volatile_updates_are_not_resent_and_bad_moves_are_refused)
{
    cluster c;
    player a, b;
    two_players(&c, &a, &b);
    pump(&a, &b, 300, NULL, NULL);
    char v[256];
    ck_assert(watch(&c, "baseapp01", "set", "externalNub/rehearsal/loss", "0.5", NULL, NULL, v,
                    sizeof v));
    a.log[0] = '\0';
    long long sent0 = counter(&c, "cellapp01", "world/volatileUpdates");
    long long moves0 = counter(&c, "cellapp01", "clientMoves/accepted");
    const int MOVES = 20;
    for (int i = 1; i <= MOVES; i++) {
        pump(&a, &b, 150, NULL, NULL); /* 2 m each 150 ms */
        ck_assert_int_eq(mc_client_move(b.c, (mc_vector3){2.0f * (float)i, 0, 0},
                                        (mc_vector3){0, 0, 0}), 0);
    }
    pump(&a, &b, 1000, NULL, NULL);
    long long accepted = counter(&c, "cellapp01", "clientMoves/accepted") - moves0;
    long long sent = counter(&c, "cellapp01", "world/volatileUpdates") - sent0;
    char vol[32];
    snprintf(vol, sizeof vol, "4:%d;", (int)b.id);
    int got = count_of(a.log, vol);
    /* Each move makes an update at the next tick; a loaded cellapp may take two moves in
     * one tick (one update for both): most, not all, have their own. */
    ck_assert_msg(accepted >= MOVES - 2 && sent >= accepted / 2,
                  "moves accepted %lld, volatile updates sent %lld", accepted, sent);
    /* half of them lost on the way, and none sent again */
    ck_assert_msg(got > 0 && got < sent, "a heard %d of %lld volatile updates: %s", got, sent,
                  a.log);
    /* the loss ends: the next move supersedes whatever was lost */
    ck_assert(watch(&c, "baseapp01", "set", "externalNub/rehearsal/loss", "0", NULL, NULL, v,
                    sizeof v));
    pump(&a, &b, 300, NULL, NULL);
    ck_assert_int_eq(mc_client_move(b.c, (mc_vector3){2.0f * MOVES + 1, 0, 0},
                                    (mc_vector3){0, 0, 0}), 0);
    float want_x = 2.0f * MOVES + 1;
    /* a_at_x looks at how b sees a: swap the roles */
    ck_assert_msg(pump(&b, &a, 5000, a_at_x, &want_x), "a: %s", a.log);

    /* bad moves: NaN in raw bytes, a short message (refused by the message's fixed size:
     * the library cannot even send it), a move while the player has no cell */
    long long bad0 = counter(&c, "cellapp01", "clientMoves/refused/malformed");
    uint8_t raw[24];
    memset(raw, 0, sizeof raw);
    raw[0] = 0x7F;
    raw[1] = 0xC0; /* a quiet NaN as x */
    ck_assert_int_eq(mc_client_send_raw(a.c, MC_CW_MOVE, raw, sizeof raw), 0);
    pump(&a, &b, 500, NULL, NULL);
    ck_assert_int_eq(counter(&c, "cellapp01", "clientMoves/refused/malformed"), bad0 + 1);
    char corr[32];
    snprintf(corr, sizeof corr, "6:%d;", (int)a.id);
    ck_assert_msg(wait_log(&a, &b, "a", corr, 5000), "a was not corrected: %s", a.log);
    ck_assert_int_ne(mc_client_send_raw(a.c, MC_CW_MOVE, raw, 10), 0);

    leave_world(&c, &a, &b);
}
END_TEST

/* Count of VOLATILE records per entity id (ids below 4096), for the crowd test. */
typedef struct {
    player *p;
    int counts[4096];
} vol_counter;

static int by_dist_ctx_cmp(const void *x, const void *y)
{
    const float *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* A crowd of 500 in one spot under the budget: the player's client is introduced to all of
 * them over several ticks (deferred by the budget, never too much at once: the channel
 * keeps up), and while they all walk, the nearest are updated more often than the farthest
 * (distance priority). Server-only entities (the Space's cell) are never sent. */
START_TEST(a_crowd_of_500_degrades_by_distance_under_the_budget)
{
    cluster c;
    player a, b;
    two_players(&c, &a, &b);
    char out[256];
    int32_t space = 0;
    /* the Space base is the first entity created */
    for (int32_t id = 1; id < 64 && !space; id++) {
        char path[64];
        snprintf(path, sizeof path, "entities/%d/type", (int)id);
        if (watch(&c, "baseapp01", "get", path, NULL, NULL, NULL, out, sizeof out) &&
            strstr(out, "Space"))
            space = id;
    }
    ck_assert_int_gt(space, 0);
    ck_assert(!mc_client_entity_of(a.c, space)); /* server-only: never introduced */
    char ids[16];
    snprintf(ids, sizeof ids, "%d", (int)space);
    long long deferred0 = counter(&c, "cellapp01", "world/deferred");
    ck_assert_msg(watch(&c, "baseapp01", "call", "command/call", ids, "populate", "[500, 30, 3]",
                        out, sizeof out),
                  "populate: %s", out);
    long deadline = now_ms() + 60000;
    const mc_client_entity *es;
    while (now_ms() < deadline && mc_client_entities(a.c, &es) < 501)
        pump(&a, &b, 200, NULL, NULL);
    ck_assert_msg(mc_client_entities(a.c, &es) >= 501, "a sees %zu (%s)",
                  mc_client_entities(a.c, &es), c.clog);
    ck_assert_msg(counter(&c, "cellapp01", "world/deferred") > deferred0,
                  "the budget never deferred anything");
    ck_assert_int_eq(mc_client_state(a.c), MC_CLIENT_CONNECTED);
    ck_assert_int_eq(counter(&c, "baseapp01", "clients/connected"), 2);

    /* 5 s of walking: VOLATILE records per entity */
    static vol_counter vc;
    memset(&vc, 0, sizeof vc);
    a.log[0] = '\0';
    long until = now_ms() + 5000;
    while (now_ms() < until) {
        pump(&a, &b, 100, NULL, NULL);
        for (const char *p = strstr(a.log, "4:"); p; p = strstr(p + 1, ";4:")) {
            int id = atoi(p[0] == ';' ? p + 3 : p + 2);
            if (id > 0 && id < 4096)
                vc.counts[id]++;
        }
        a.log[0] = '\0';
    }
    /* nearest 50 and farthest 50 (from a, which stands at the spawn point) */
    size_t n = mc_client_entities(a.c, &es);
    static float d[600][2];
    size_t k = 0;
    const mc_client_entity *me = mc_client_entity_of(a.c, a.id);
    ck_assert_ptr_nonnull(me);
    for (size_t i = 0; i < n && k < 600; i++) {
        if (es[i].id == b.id || es[i].id >= 4096)
            continue;
        float dx = es[i].position.x - me->position.x, dz = es[i].position.z - me->position.z;
        d[k][0] = sqrtf(dx * dx + dz * dz);
        d[k][1] = (float)vc.counts[es[i].id];
        k++;
    }
    ck_assert_uint_ge(k, 500);
    qsort(d, k, sizeof d[0], by_dist_ctx_cmp);
    double near = 0, far = 0;
    for (int i = 0; i < 50; i++) {
        near += d[i][1];
        far += d[k - 1 - (size_t)i][1];
    }
    fprintf(stderr, "crowd: nearest 50 got %.0f volatile updates in 5 s, farthest 50 %.0f\n",
            near, far);
    ck_assert_msg(near > 1.5 * far && near > 0,
                  "nearest 50 got %.0f updates, farthest 50 %.0f: no distance priority", near,
                  far);
    ck_assert_int_eq(mc_client_state(a.c), MC_CLIENT_CONNECTED);
    leave_world(&c, &a, &b);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("client_world");
    TCase *tc = tcase_create("world");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, players_see_each_other_chat_change_move_and_leave);
    tcase_add_test(tc, every_property_flag_reaches_exactly_its_receivers);
    tcase_add_test(tc, volatile_updates_are_not_resent_and_bad_moves_are_refused);
    tcase_add_test(tc, newcomers_enter_spread_over_the_spawn_disc);
    tcase_add_test(tc, a_crowd_of_500_degrades_by_distance_under_the_budget);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
