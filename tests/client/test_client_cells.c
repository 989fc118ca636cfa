/* One space over two cellapps through real clients (issue 22 item 5; docs/WORLD.md "One
 * space over many cellapps"): a manager, a baseapp and two cellapps with the example game,
 * players connected with the client library over real sockets (cells_cluster.h).
 *   - The property-flag matrix across a boundary: with two players on one cellapp, and then
 *     with the "world" split between them (each real on its own cellapp, seen by the other
 *     through a ghost), both ways, each flag reaches exactly the clients it reaches on one
 *     cellapp (BASE_AND_CLIENT, OWN_CLIENT and CELL_PUBLIC_AND_OWN the owner; ALL_CLIENTS
 *     both; OTHER_CLIENTS the other; BASE, CELL_PUBLIC, CELL_PRIVATE nobody), with the values
 *     set; a ghost holds the values others may see, never a CELL_PRIVATE or OWN_CLIENT one
 *     (also one an offload left behind: it holds what a ghost made afresh holds); and their
 *     chat lines (allClients calls) reach the other player's client, each once and in order,
 *     on one cellapp and across the boundary.
 *   - Volatile updates from ghosts: each player's moves and turns reach the other across the
 *     boundary, one by one, and go on while it walks across (offloaded) and back.
 *   - A boundary moving under clients (a split, then load-balancing steps that follow every
 *     load difference) changes no client's view: the same entities, no LEAVE or ENTER.
 *   - A player chatting from its client while it walks back and forth across the boundary
 *     (offloaded six times): every line reaches both clients once, in order.
 *   - A player offloaded both ways while another chats, its base stopped mid-move: lines
 *     queued for its client and lines sent while it moves reach it once, in order. */
#include "cells_cluster.h"
#include "check_main.h"
#include "harness.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 30000

static void set_prop(cells_cluster *c, const char *proc, int32_t id, const char *name,
                     const char *json)
{
    char ids[16], v[512];
    snprintf(ids, sizeof ids, "%d", (int)id);
    ck_assert_msg(client_cluster_watch(&c->cc, proc, "call", "command/setProperty", ids, name,
                                       json, v, sizeof v),
                  "setProperty %s %s on %s: %s", name, json, proc, v);
}

static bool get(cells_cluster *c, const char *proc, const char *path, char *v, size_t n)
{
    return client_cluster_watch(&c->cc, proc, "get", path, NULL, NULL, NULL, v, n);
}

static long long counter(cells_cluster *c, const char *proc, const char *path)
{
    return client_cluster_counter(&c->cc, proc, path);
}

/* Whether ps[who] sees entity id at (x, z) facing yaw. */
typedef struct {
    int who;
    int32_t id;
    float x, z, yaw;
} sees_at_arg;

static bool sees_at(cells_player *ps, int n, const void *arg)
{
    (void)n;
    const sees_at_arg *s = arg;
    const mc_client_entity *e = mc_client_entity_of(ps[s->who].c, s->id);
    return e && fabsf(e->position.x - s->x) < 0.01f && fabsf(e->position.z - s->z) < 0.01f &&
           fabsf(e->direction.z - s->yaw) < 0.001f;
}

static void wait_sees_at(cells_player *ps, int who, int32_t id, float x, float z, float yaw)
{
    sees_at_arg s = {who, id, x, z, yaw};
    const mc_client_entity *e = NULL;
    if (cells_pump(ps, 2, WAIT_MS, sees_at, &s))
        return;
    e = mc_client_entity_of(ps[who].c, id);
    ck_abort_msg("player %d does not see %d at (%g, %g) yaw %g: %s (%g, %g) yaw %g; log %s", who,
                 (int)id, (double)x, (double)z, (double)yaw, e ? "at" : "not in view",
                 e ? (double)e->position.x : 0.0, e ? (double)e->position.z : 0.0,
                 e ? (double)e->direction.z : 0.0, ps[who].log);
}

/* Two players in the world, a at x = -15 and b at x = 15 (30 m apart: in each other's view);
 * the space's id and the cellapp holding it. */
static int32_t two_players_apart(cells_cluster *c, cells_player *ps, int *holder)
{
    cells_cluster_start(c);
    cells_enter_world(c, ps, 2);
    int32_t space = cells_space_of(c, ps[0].id, holder);
    cells_walk(ps, 2, &ps[0], -15, 0, 0);
    cells_walk(ps, 2, &ps[1], 15, 0, 0);
    wait_sees_at(ps, 1, ps[0].id, -15, 0, 0);
    wait_sees_at(ps, 0, ps[1].id, 15, 0, 0);
    return space;
}

/* Split the space at x = 0 onto the other cellapp: b (x = 15) is offloaded there; each real
 * settled on its side, its ghost on the other. */
static void split_between(cells_cluster *c, cells_player *ps, int32_t space, int h)
{
    cells_split(c, space, 1 - h, "0");
    cells_wait_settled_on(c, ps, 2, ps[1].id, 1 - h);
    cells_wait_settled_on(c, ps, 2, ps[0].id, h);
}

/* ---- the property-flag matrix ------------------------------------------------------------- */

typedef struct {
    const char *name, *fmt; /* the value for round r: fmt with r */
    bool base;              /* set on the baseapp (else on the real's cellapp) */
    bool owner, other;      /* its client hears it; the other player's client hears it */
    bool ghosted;           /* the ghost holds it */
    bool number;            /* the value text is the JSON (checked in what the clients heard) */
} flag_row;

static const flag_row ROWS[] = {
    {"xp", "%d", true, true, false, false, true},                  /* BASE_AND_CLIENT */
    {"gold", "%d", true, false, false, false, true},               /* BASE */
    {"health", "%d", false, true, false, false, true},             /* OWN_CLIENT */
    {"mapMarker", "[3,%d]", false, true, false, false, false},     /* OWN_CLIENT */
    {"maxHealth", "%d", false, true, false, true, true},           /* CELL_PUBLIC_AND_OWN */
    {"level", "%d", false, true, true, true, true},                /* ALL_CLIENTS */
    {"title", "\"Sage%d\"", false, true, true, true, false},       /* ALL_CLIENTS */
    {"look", "[9,8,7,%d]", false, false, true, true, false},       /* OTHER_CLIENTS */
    {"faction", "%d", false, false, false, true, true},            /* CELL_PUBLIC */
    {"aggro", "%d.5", false, false, false, false, false},          /* CELL_PRIVATE */
};
#define NROWS (sizeof ROWS / sizeof ROWS[0])

static void row_value(const flag_row *r, int round, char *out, size_t n)
{
    snprintf(out, n, r->fmt, 40 + round);
}

typedef struct {
    int owner, other;
    const char *name, *value;
} heard_arg;

static bool both_heard(cells_player *ps, int n, const void *arg)
{
    (void)n;
    const heard_arg *h = arg;
    int32_t id = ps[h->owner].id;
    return client_player_heard(&ps[h->other], id, "look", NULL) &&
           client_player_heard(&ps[h->owner], id, h->name, h->value);
}

/* Round `round` of the matrix: every flagged property of ps[owner] set (its real on cellapp
 * real_on; ghost_on the cellapp holding its ghost, or -1), then what each client heard, and
 * what the ghost holds: the ghosted values as on the real, and of the others what a ghost made
 * afresh holds (kept in fresh when `made` is true; compared with it when false). */
static void matrix(cells_cluster *c, cells_player *ps, int owner, int round, int real_on,
                   int ghost_on, char fresh[][256], bool made)
{
    int other = 1 - owner;
    int32_t id = ps[owner].id;
    cells_pump(ps, 2, 300, NULL, NULL);
    ps[0].log[0] = ps[1].log[0] = '\0';
    char v[64];
    for (size_t i = 0; i < NROWS; i++) {
        row_value(&ROWS[i], round, v, sizeof v);
        set_prop(c, ROWS[i].base ? "baseapp01" : cells_cellapp(real_on), id, ROWS[i].name, v);
    }
    /* the last values each client hears from the cellapp (set last: title for the owner,
     * look for the other), then more time for anything that should not come */
    char title[32];
    snprintf(title, sizeof title, "\"Sage%d\"", 40 + round);
    heard_arg h = {owner, other, "title", title};
    ck_assert_msg(cells_pump(ps, 2, WAIT_MS, both_heard, &h), "round %d: owner %s | other %s",
                  round, ps[owner].log, ps[other].log);
    cells_pump(ps, 2, 1500, NULL, NULL);
    for (size_t i = 0; i < NROWS; i++) {
        const flag_row *r = &ROWS[i];
        row_value(r, round, v, sizeof v);
        const char *val = r->number ? v : NULL;
        ck_assert_msg(client_player_heard(&ps[owner], id, r->name, NULL) == r->owner,
                      "round %d: the owner %s %s: %s", round, r->owner ? "missed" : "heard",
                      r->name, ps[owner].log);
        ck_assert_msg(client_player_heard(&ps[other], id, r->name, NULL) == r->other,
                      "round %d: the other %s %s: %s", round, r->other ? "missed" : "heard",
                      r->name, ps[other].log);
        if (r->owner)
            ck_assert_msg(client_player_heard(&ps[owner], id, r->name, val), "round %d: owner %s=%s: %s",
                          round, r->name, v, ps[owner].log);
        if (r->other)
            ck_assert_msg(client_player_heard(&ps[other], id, r->name, val), "round %d: other %s=%s: %s",
                          round, r->name, v, ps[other].log);
    }
    if (ghost_on < 0)
        return;
    /* the ghost: what others may see, as set; never a private or own-client value */
    for (size_t i = 0; i < NROWS; i++) {
        const flag_row *r = &ROWS[i];
        if (r->base)
            continue;
        char path[96], real[256], ghost[256];
        snprintf(path, sizeof path, "entities/%d/props/%s", (int)id, r->name);
        ck_assert(get(c, cells_cellapp(real_on), path, real, sizeof real));
        long deadline = client_cluster_now_ms() + WAIT_MS;
        bool same = false;
        while (client_cluster_now_ms() < deadline) {
            ck_assert_msg(get(c, cells_cellapp(ghost_on), path, ghost, sizeof ghost), "%s: %s",
                          path, ghost);
            same = strcmp(real, ghost) == 0;
            if (same == r->ghosted)
                break;
            cells_pump(ps, 2, 100, NULL, NULL);
        }
        ck_assert_msg(same == r->ghosted, "round %d: %s on the real %s, on the ghost %s", round,
                      r->name, real, ghost);
        if (r->ghosted)
            continue;
        if (made)
            snprintf(fresh[i], 256, "%s", ghost);
        else
            ck_assert_msg(strcmp(fresh[i], ghost) == 0,
                          "round %d: %s on the ghost %s, on a ghost made afresh %s", round,
                          r->name, ghost, fresh[i]);
    }
}

/* ---- client calls to everyone who sees an entity ----------------------------------------- */

/* Whether log holds `n` chat lines "<tag>1" .. "<tag>n" in order (as CALL records of entity
 * id when `own` is false, as its own client's calls when true), none twice. */
static bool chat_heard(const char *log, int32_t id, bool own, const char *tag, int n)
{
    char rec[64];
    if (own)
        snprintf(rec, sizeof rec, "own-call onChat %d ", (int)id);
    else
        snprintf(rec, sizeof rec, "5:%d onChat ", (int)id);
    int next = 1;
    for (const char *r = strstr(log, rec); r; r = strstr(r + 1, rec)) {
        const char *end = strchr(r, ';');
        char want[64];
        snprintf(want, sizeof want, "%s%d\"", tag, next);
        const char *w = strstr(r, want);
        if (!w || (end && w > end)) {
            snprintf(want, sizeof want, "%s", tag);
            const char *any = strstr(r, want);
            if (any && (!end || any < end))
                return false; /* one of ours, out of order or twice */
            continue;         /* another speaker's line */
        }
        next++;
    }
    return next == n + 1;
}

typedef struct {
    int speaker;
    const char *tag;
    int n;
} chat_arg;

static bool chats_heard(cells_player *ps, int np, const void *arg)
{
    (void)np;
    const chat_arg *a = arg;
    int32_t id = ps[a->speaker].id;
    return chat_heard(ps[1 - a->speaker].log, id, false, a->tag, a->n) &&
           chat_heard(ps[a->speaker].log, id, true, a->tag, a->n);
}

/* ps[speaker] chats `n` numbered lines (its cell's allClients): the other player's client
 * hears each once, in order, as a CALL record of the speaker, and the speaker's own client
 * each through its base. */
static void chats(cells_cluster *c, cells_player *ps, int speaker, const char *tag, int n)
{
    ps[0].log[0] = ps[1].log[0] = '\0';
    for (int i = 1; i <= n; i++) {
        char json[64];
        snprintf(json, sizeof json, "[\"%s%d\"]", tag, i);
        client_cluster_call_json(&c->cc, ps[speaker].c, ps[speaker].type, MC_PART_CELL, "chat",
                                 json);
        cells_pump(ps, 2, 150, NULL, NULL);
    }
    chat_arg a = {speaker, tag, n};
    ck_assert_msg(cells_pump(ps, 2, WAIT_MS, chats_heard, &a),
                  "%s: not every line heard once in order: speaker %s | other %s", tag,
                  ps[speaker].log, ps[1 - speaker].log);
    cells_pump(ps, 2, 500, NULL, NULL);
    ck_assert_msg(chats_heard(ps, 2, &a), "%s: a line heard twice: speaker %s | other %s", tag,
                  ps[speaker].log, ps[1 - speaker].log);
}

START_TEST(every_property_flag_reaches_across_a_boundary_whom_it_reaches_on_one_cellapp)
{
    cells_cluster c;
    cells_player ps[2];
    int h;
    int32_t space = two_players_apart(&c, ps, &h);
    /* one cellapp: both reals there */
    static char fresh[NROWS][256];
    matrix(&c, ps, 0, 1, h, -1, fresh, false);
    matrix(&c, ps, 1, 2, h, -1, fresh, false);
    chats(&c, ps, 0, "one-a-", 5);
    chats(&c, ps, 1, "one-b-", 5);
    /* split between them: each sees the other through a ghost (a's made afresh at the split;
     * b's is what its offload left behind, which held its private values as a real) */
    split_between(&c, ps, space, h);
    matrix(&c, ps, 0, 3, h, 1 - h, fresh, true);
    matrix(&c, ps, 1, 4, 1 - h, h, fresh, false);
    /* and their client calls to everyone who sees them (allClients) reach across too */
    chats(&c, ps, 0, "two-a-", 5);
    chats(&c, ps, 1, "two-b-", 5);
    ck_assert_int_eq(ps[0].players, 2); /* its Account, then its Avatar: never again */
    ck_assert_int_eq(ps[1].players, 2);
    ck_assert_int_eq(counter(&c, "cellapp01", "ghosts/refused"), 0);
    ck_assert_int_eq(counter(&c, "cellapp02", "ghosts/refused"), 0);
    cells_leave_world(ps, 2);
    cells_cluster_stop(&c);
}
END_TEST

/* ---- volatile updates from ghosts --------------------------------------------------------- */

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

START_TEST(volatile_updates_from_ghosts_reach_observers_across_the_boundary)
{
    cells_cluster c;
    cells_player ps[2];
    int h;
    int32_t space = two_players_apart(&c, ps, &h);
    split_between(&c, ps, space, h);
    int32_t a = ps[0].id, b = ps[1].id;
    /* b's cellapp holds a's ghost (and a's cellapp b's) */
    char path[96], v[256];
    snprintf(path, sizeof path, "entities/%d/real", (int)a);
    ck_assert(get(&c, cells_cellapp(1 - h), path, v, sizeof v));
    ck_assert_msg(strstr(v, c.cell_addr[h]), "%s", v);
    ps[0].log[0] = ps[1].log[0] = '\0';
    int enters0 = ps[0].enters + ps[1].enters, leaves0 = ps[0].leaves + ps[1].leaves;

    /* each moves and turns on its side, one step at a time: the other sees every step */
    const int STEPS = 8;
    for (int i = 1; i <= STEPS; i++) {
        float z = 3.0f * (float)i, yaw = 0.2f * (float)i;
        ck_assert_int_eq(mc_client_move(ps[0].c, (mc_vector3){-15, 0, z}, (mc_vector3){0, 0, yaw}),
                         0);
        wait_sees_at(ps, 1, a, -15, z, yaw);
        ck_assert_int_eq(mc_client_move(ps[1].c, (mc_vector3){15, 0, z}, (mc_vector3){0, 0, -yaw}),
                         0);
        wait_sees_at(ps, 0, b, 15, z, -yaw);
    }
    char vol[32];
    snprintf(vol, sizeof vol, "4:%d", (int)a);
    ck_assert_int_ge(count_of(ps[1].log, vol), STEPS);
    snprintf(vol, sizeof vol, "4:%d", (int)b);
    ck_assert_int_ge(count_of(ps[0].log, vol), STEPS);
    ck_assert_int_gt(counter(&c, cells_cellapp(h), "ghosts/updates"), 0);
    ck_assert_int_gt(counter(&c, cells_cellapp(1 - h), "ghosts/updates"), 0);

    /* a walks across (offloaded to b's cellapp) and on: b sees where it ends, and every later
     * step; then back (a ghost for b again) */
    float z = 3.0f * (float)STEPS;
    cells_walk(ps, 2, &ps[0], 15, z - 6, 0.5f);
    wait_sees_at(ps, 1, a, 15, z - 6, 0.5f);
    cells_wait_settled_on(&c, ps, 2, a, 1 - h);
    ck_assert_int_eq(mc_client_move(ps[0].c, (mc_vector3){15, 0, z - 9}, (mc_vector3){0, 0, 0.7f}),
                     0);
    wait_sees_at(ps, 1, a, 15, z - 9, 0.7f);
    cells_walk(ps, 2, &ps[0], -15, z - 9, -0.5f);
    wait_sees_at(ps, 1, a, -15, z - 9, -0.5f);
    cells_wait_settled_on(&c, ps, 2, a, h);
    for (int i = 1; i <= 3; i++) {
        float zz = z - 9 - 2.0f * (float)i, yaw = -0.1f * (float)i;
        ck_assert_int_eq(mc_client_move(ps[0].c, (mc_vector3){-15, 0, zz},
                                        (mc_vector3){0, 0, yaw}),
                         0);
        wait_sees_at(ps, 1, a, -15, zz, yaw);
    }
    /* neither ever saw the other leave or enter again, nor its own entity */
    ck_assert_int_eq(ps[0].enters + ps[1].enters, enters0);
    ck_assert_int_eq(ps[0].leaves + ps[1].leaves, leaves0);
    ck_assert_int_eq(ps[0].players, 2); /* its Account, then its Avatar: never again */
    ck_assert_int_ge(counter(&c, "cellapp01", "ghosts/offloads") +
                         counter(&c, "cellapp02", "ghosts/offloads"),
                     3);
    cells_leave_world(ps, 2);
    cells_cluster_stop(&c);
}
END_TEST

/* ---- calls to a player walking back and forth across the boundary ------------------------ */

/* a chats numbered lines from its client (an exposed cell method, through its base) while it
 * walks from one side of the boundary to the other and back, offloaded at every crossing: b,
 * standing on one side, and a's own client hear every line once, in order. */
START_TEST(a_players_calls_while_it_walks_back_and_forth_across_the_boundary_all_arrive_in_order)
{
    cells_cluster c;
    cells_player ps[2];
    int h;
    int32_t space = two_players_apart(&c, ps, &h);
    split_between(&c, ps, space, h);
    cells_walk(ps, 2, &ps[1], 15, 15, 0);
    ps[0].log[0] = ps[1].log[0] = '\0';
    int enters0 = ps[0].enters + ps[1].enters, leaves0 = ps[0].leaves + ps[1].leaves;
    long long in0 = counter(&c, "cellapp01", "moves/in") + counter(&c, "cellapp02", "moves/in");
    const int CROSSINGS = 6;
    int lines = 0, at = h;
    float x = -15;
    for (int crossing = 0; crossing < CROSSINGS; crossing++) {
        float dir = at == h ? 1.0f : -1.0f;
        for (int step = 0; step < 5; step++) {
            x += dir * 6.0f;
            ck_assert_int_eq(mc_client_move(ps[0].c, (mc_vector3){x, 0, 0}, (mc_vector3){0, 0, 0}),
                             0);
            for (int k = 0; k < 2; k++) {
                char json[64];
                snprintf(json, sizeof json, "[\"walk-%d\"]", ++lines);
                client_cluster_call_json(&c.cc, ps[0].c, ps[0].type, MC_PART_CELL, "chat", json);
                cells_pump(ps, 2, 150, NULL, NULL);
            }
        }
        at = 1 - at;
        cells_wait_settled_on(&c, ps, 2, ps[0].id, at);
    }
    chat_arg a = {0, "walk-", lines};
    ck_assert_msg(cells_pump(ps, 2, WAIT_MS, chats_heard, &a),
                  "not every line heard once in order: a %s | b %s", ps[0].log, ps[1].log);
    cells_pump(ps, 2, 500, NULL, NULL);
    ck_assert_msg(chats_heard(ps, 2, &a), "a line heard twice: a %s | b %s", ps[0].log,
                  ps[1].log);
    long long in = counter(&c, "cellapp01", "moves/in") + counter(&c, "cellapp02", "moves/in");
    ck_assert_int_ge(in - in0, CROSSINGS);
    ck_assert_int_eq(ps[0].enters + ps[1].enters, enters0);
    ck_assert_int_eq(ps[0].leaves + ps[1].leaves, leaves0);
    fprintf(stderr, "walk: %d lines over %d crossings\n", lines, CROSSINGS);
    cells_leave_world(ps, 2);
    cells_cluster_stop(&c);
}
END_TEST

/* a is offloaded to the other cellapp while its base is stopped (SIGSTOP), so that the move
 * waits half-done (the new cellapp holds it, the base has not answered CELL_MOVED) while b
 * chats: lines queued for a's client when its view is handed over, lines reaching the old
 * cellapp after, and lines of b's real reaching a while it arrives are carried and queued for
 * a's client when its view goes on (docs/WORLD.md "Offloading"). Both ways: toward b's
 * cellapp and back. */
static void offload_while_chatting(cells_cluster *c, cells_player *ps, int from, float to_x,
                                   int *lines)
{
    char v[256];
    ck_assert(client_cluster_watch(&c->cc, cells_cellapp(from), "set",
                                   "ghosts/offloadHysteresis", "1000", NULL, NULL, v, sizeof v));
    cells_walk(ps, 2, &ps[0], to_x, 0, 0);
    wait_sees_at(ps, 1, ps[0].id, to_x, 0, 0); /* its real has it there, not offloaded */
    char bid[16];
    snprintf(bid, sizeof bid, "%d", (int)ps[1].id);
    const char *b_on = cells_cellapp(cells_settled_holder(c, ps[1].id));
    long long off0 = counter(c, cells_cellapp(from), "ghosts/offloads");
    ck_assert_int_eq(kill(c->cc.bpid, SIGSTOP), 0);
    for (int k = 0; k < 3; k++) { /* queued for its client's next update, or carried */
        char json[64];
        snprintf(json, sizeof json, "[\"hear-%d\"]", ++*lines);
        ck_assert_msg(client_cluster_watch(&c->cc, b_on, "call", "command/call", bid, "chat",
                                           json, v, sizeof v), "chat: %s", v);
    }
    ck_assert(client_cluster_watch(&c->cc, cells_cellapp(from), "set",
                                   "ghosts/offloadHysteresis", "5", NULL, NULL, v, sizeof v));
    for (int k = 0; k < 100 && counter(c, cells_cellapp(from), "ghosts/offloads") == off0; k++)
        h_sleep_ms(20);
    ck_assert_int_gt(counter(c, cells_cellapp(from), "ghosts/offloads"), off0);
    for (int k = 0; k < 6; k++) { /* while it is half-moved: no witness of it runs */
        char json[64];
        snprintf(json, sizeof json, "[\"hear-%d\"]", ++*lines);
        ck_assert_msg(client_cluster_watch(&c->cc, b_on, "call", "command/call", bid, "chat",
                                           json, v, sizeof v), "chat: %s", v);
    }
    ck_assert_int_eq(kill(c->cc.bpid, SIGCONT), 0);
    cells_wait_settled_on(c, ps, 2, ps[0].id, 1 - from);
    for (int k = 0; k < 3; k++) { /* and after */
        char json[64];
        snprintf(json, sizeof json, "[\"hear-%d\"]", ++*lines);
        ck_assert_msg(client_cluster_watch(&c->cc, b_on, "call", "command/call", bid, "chat",
                                           json, v, sizeof v), "chat: %s", v);
    }
}

START_TEST(calls_to_a_player_while_it_is_offloaded_reach_its_client_once_in_order)
{
    cells_cluster c;
    cells_player ps[2];
    int h;
    int32_t space = two_players_apart(&c, ps, &h);
    char v[256];
    /* the base is stopped for a second or two: not to be taken for dead meanwhile */
    ck_assert(client_cluster_watch(&c.cc, "manager", "set", "registry/deadAfterMsBaseapp",
                                   "60000", NULL, NULL, v, sizeof v));
    split_between(&c, ps, space, h);
    cells_walk(ps, 2, &ps[1], 15, 15, 0);
    ps[0].log[0] = ps[1].log[0] = '\0';
    int lines = 0;
    long long carried0 = counter(&c, "cellapp01", "world/callsCarried") +
                         counter(&c, "cellapp02", "world/callsCarried");
    offload_while_chatting(&c, ps, h, 20, &lines);      /* to b's cellapp */
    offload_while_chatting(&c, ps, 1 - h, -20, &lines); /* and back */
    chat_arg a = {1, "hear-", lines};
    ck_assert_msg(cells_pump(ps, 2, WAIT_MS, chats_heard, &a),
                  "not every line heard once in order: a %s | b %s", ps[0].log, ps[1].log);
    cells_pump(ps, 2, 500, NULL, NULL);
    ck_assert_msg(chats_heard(ps, 2, &a), "a line heard twice: a %s | b %s", ps[0].log,
                  ps[1].log);
    long long carried = counter(&c, "cellapp01", "world/callsCarried") +
                        counter(&c, "cellapp02", "world/callsCarried") - carried0;
    ck_assert_int_ge(carried, 12); /* the six of each move's stop at least */
    fprintf(stderr, "hear: %d lines over 2 offloads, %lld carried\n", lines, carried);
    cells_leave_world(ps, 2);
    cells_cluster_stop(&c);
}
END_TEST

/* ---- a third cellapp's calls to a player offloaded back and forth ------------------------- */

/* Index of the cellapp holding entity id real (the only one saying "here", its base naming
 * it), among n cellapps, or -1. */
static int real_on(cells_cluster *c, int n, int32_t id)
{
    char p[96], v[512];
    int holder = -1, reals = 0;
    snprintf(p, sizeof p, "entities/%d/real", (int)id);
    for (int i = 0; i < n; i++)
        if (get(c, cells_cellapp(i), p, v, sizeof v) && strstr(v, "here")) {
            holder = i;
            reals++;
        }
    if (reals != 1)
        return -1;
    snprintf(p, sizeof p, "entities/%d/cell", (int)id);
    if (!get(c, "baseapp01", p, v, sizeof v) || !strstr(v, c->cell_addr[holder]))
        return -1;
    return holder;
}

/* The cellapp (index) given the cell `rect` in the manager's layout text, or -1. */
static int cell_of(const char *layout, const char *rect)
{
    for (int i = 0; i < 3; i++) {
        char want[96];
        snprintf(want, sizeof want, "%s %s", cells_cellapp(i), rect);
        if (strstr(layout, want))
            return i;
    }
    return -1;
}

/* The numbers of b's "third-N" lines in a client's log, in the order heard. */
static void numbers_heard(const char *log, int32_t id, char *out, size_t n)
{
    char rec[64];
    snprintf(rec, sizeof rec, "5:%d onChat ", (int)id);
    size_t at = 0;
    out[0] = '\0';
    for (const char *r = strstr(log, rec); r && at + 16 < n; r = strstr(r + 1, rec)) {
        const char *w = strstr(r, "third-");
        const char *end = strchr(r, ';');
        if (w && (!end || w < end))
            at += (size_t)snprintf(out + at, n - at, "%d ", atoi(w + 6));
    }
}

/* b (its real on a third cellapp) chats one numbered line from its client. */
static void chat_line(cells_cluster *c, cells_player *ps, int *lines)
{
    char json[64];
    snprintf(json, sizeof json, "[\"third-%d\"]", ++*lines);
    client_cluster_call_json(&c->cc, ps[1].c, ps[1].type, MC_PART_CELL, "chat", json);
    cells_pump(ps, 2, 40, NULL, NULL);
}

/* A space over three cellapps: a half (H) and two quarters (Q1, Q2) of the other half. b
 * stands in H, its ghosts on Q1 and Q2; a walks back and forth across the boundary between
 * Q1 and Q2, offloaded at every crossing, while b chats numbered lines from its client
 * without a pause: b's calls reach a's client through b's ghosts on Q1 and Q2, one of which
 * holds them for 300 ms (ghosts/testCallDelayMs, the test knob) so that every offload has
 * calls that reach the old cellapp before its view left and the new one after it went on
 * (heard twice before issue 22's fix) and calls that reach the new one before and the old one
 * after (lost). a's client hears every line once, in order. */
START_TEST(a_third_cellapps_calls_to_a_player_offloaded_back_and_forth_are_heard_once_in_order)
{
    cells_cluster c;
    cells_player ps[2];
    cells_cluster_start_n(&c, 3);
    cells_enter_world(&c, ps, 2);
    int h;
    int32_t space = cells_space_of(&c, ps[0].id, &h);
    char sp[32], v[1024], lay[1024], p[64];
    snprintf(sp, sizeof sp, "%d", (int)space);
    ck_assert_msg(client_cluster_watch(&c.cc, "manager", "call", "command/splitSpace", sp,
                                       cells_cellapp((h + 1) % 3), "0", v, sizeof v),
                  "split: %s", v);
    ck_assert_msg(client_cluster_watch(&c.cc, "manager", "call", "command/splitSpace", sp,
                                       cells_cellapp((h + 2) % 3), "0", v, sizeof v),
                  "split: %s", v);
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    ck_assert(get(&c, "manager", p, lay, sizeof lay));
    float s = 1; /* the side of the quartered half */
    int H = cell_of(lay, "x[-inf,0) z[-inf,inf)");
    if (H < 0) {
        s = -1;
        H = cell_of(lay, "x[0,inf) z[-inf,inf)");
    }
    int Q1 = cell_of(lay, s > 0 ? "x[0,inf) z[-inf,0)" : "x[-inf,0) z[-inf,0)");
    int Q2 = cell_of(lay, s > 0 ? "x[0,inf) z[0,inf)" : "x[-inf,0) z[0,inf)");
    ck_assert_msg(H >= 0 && Q1 >= 0 && Q2 >= 0, "layout: %s", lay);
    /* every cellapp has heard the layout: each serves its cell */
    snprintf(p, sizeof p, "spaces/%d/cells", (int)space);
    for (int i = 0; i < 3; i++) {
        long until = client_cluster_now_ms() + WAIT_MS;
        while (!(get(&c, cells_cellapp(i), p, v, sizeof v) && atoi(v) == 3) &&
               client_cluster_now_ms() < until)
            cells_pump(ps, 2, 100, NULL, NULL);
        ck_assert_msg(atoi(v) == 3, "%s: %s cells", cells_cellapp(i), v);
    }
    /* b in H, a in Q1: a sees b through b's ghost there */
    cells_walk(ps, 2, &ps[1], -s * 15, 0, 0);
    cells_walk(ps, 2, &ps[0], s * 10, -8, 0);
    long until = client_cluster_now_ms() + WAIT_MS;
    while ((real_on(&c, 3, ps[1].id) != H || real_on(&c, 3, ps[0].id) != Q1) &&
           client_cluster_now_ms() < until)
        cells_pump(ps, 2, 100, NULL, NULL);
    ck_assert_int_eq(real_on(&c, 3, ps[1].id), H);
    ck_assert_int_eq(real_on(&c, 3, ps[0].id), Q1);
    wait_sees_at(ps, 0, ps[1].id, -s * 15, 0, 0);
    /* b's ghost on Q2 takes its calls 300 ms late */
    ck_assert(client_cluster_watch(&c.cc, cells_cellapp(Q2), "set", "ghosts/testCallDelayMs",
                                   "300", NULL, NULL, v, sizeof v));
    /* the ghosts keep b's calls for 60 s (not 5: no gap however slow a hand-over is under
     * load) */
    for (int i = 0; i < 3; i++)
        ck_assert(client_cluster_watch(&c.cc, cells_cellapp(i), "set", "ghosts/callRingMs",
                                       "60000", NULL, NULL, v, sizeof v));
    ps[0].log[0] = ps[1].log[0] = '\0';
    long long replayed0 = 0, skipped0 = 0, gaps0 = 0;
    for (int i = 0; i < 3; i++) {
        replayed0 += counter(&c, cells_cellapp(i), "world/callsReplayed");
        skipped0 += counter(&c, cells_cellapp(i), "world/callsSkipped");
        gaps0 += counter(&c, cells_cellapp(i), "world/callGaps");
    }
    const int CROSSINGS = 6;
    int lines = 0, at = Q1;
    for (int crossing = 0; crossing < CROSSINGS; crossing++) {
        int to = at == Q1 ? Q2 : Q1;
        float z = to == Q2 ? 8.0f : -8.0f;
        for (int k = 0; k < 3; k++)
            chat_line(&c, ps, &lines);
        ck_assert_int_eq(
            mc_client_move(ps[0].c, (mc_vector3){s * 10, 0, z / 2}, (mc_vector3){0, 0, 0}), 0);
        for (int k = 0; k < 8; k++)
            chat_line(&c, ps, &lines);
        ck_assert_int_eq(mc_client_move(ps[0].c, (mc_vector3){s * 10, 0, z}, (mc_vector3){0, 0, 0}),
                         0);
        /* b chats on while a is offloaded, and a while after */
        until = client_cluster_now_ms() + WAIT_MS;
        while (real_on(&c, 3, ps[0].id) != to && client_cluster_now_ms() < until)
            chat_line(&c, ps, &lines);
        ck_assert_msg(real_on(&c, 3, ps[0].id) == to, "a never moved to %s",
                      cells_cellapp(to));
        for (int k = 0; k < 10; k++)
            chat_line(&c, ps, &lines);
        at = to;
    }
    chat_arg a = {1, "third-", lines};
    bool all = cells_pump(ps, 2, WAIT_MS, chats_heard, &a);
    cells_pump(ps, 2, 1000, NULL, NULL);
    char heard[4096];
    numbers_heard(ps[0].log, ps[1].id, heard, sizeof heard);
    fprintf(stderr, "third: a heard %s\n", heard);
    ck_assert_msg(all, "not every line of %d heard once in order (a heard %.600s)", lines, heard);
    ck_assert_msg(chats_heard(ps, 2, &a), "a line heard twice (a heard %.600s)", heard);
    long long replayed = -replayed0, skipped = -skipped0, gaps = -gaps0;
    for (int i = 0; i < 3; i++) {
        replayed += counter(&c, cells_cellapp(i), "world/callsReplayed");
        skipped += counter(&c, cells_cellapp(i), "world/callsSkipped");
        gaps += counter(&c, cells_cellapp(i), "world/callGaps");
    }
    fprintf(stderr, "third: %d lines over %d offloads, %lld replayed, %lld skipped\n", lines,
            CROSSINGS, replayed, skipped);
    ck_assert_int_eq(gaps, 0);
    ck_assert_int_gt(replayed, 0); /* lines the old cellapp missed, given by the new one */
    ck_assert_int_gt(skipped, 0);  /* lines the old cellapp gave, not again by the new one */
    ck_assert_int_eq(ps[0].players, 2); /* its view handed over each time: never told afresh */
    /* b's ghosts hold its recent calls; once b is quiet and their age passes, the ghost tick
     * gives every byte back (no later call or witness needed to expire them) */
    ck_assert_int_gt(counter(&c, cells_cellapp(Q1), "ghosts/callRingHeldBytes") +
                         counter(&c, cells_cellapp(Q2), "ghosts/callRingHeldBytes"),
                     0);
    for (int i = 0; i < 3; i++)
        ck_assert(client_cluster_watch(&c.cc, cells_cellapp(i), "set", "ghosts/callRingMs",
                                       "500", NULL, NULL, v, sizeof v));
    long long held = 0;
    until = client_cluster_now_ms() + WAIT_MS;
    do {
        cells_pump(ps, 2, 100, NULL, NULL);
        held = 0;
        for (int i = 0; i < 3; i++)
            held += counter(&c, cells_cellapp(i), "ghosts/callRingHeldBytes");
    } while (held != 0 && client_cluster_now_ms() < until);
    ck_assert_int_eq(held, 0);
    ck_assert_int_gt(counter(&c, cells_cellapp(Q1), "ghosts/callRingExpired") +
                         counter(&c, cells_cellapp(Q2), "ghosts/callRingExpired"),
                     0);
    cells_leave_world(ps, 2);
    cells_cluster_stop(&c);
}
END_TEST

/* ---- a boundary moving under clients ------------------------------------------------------ */

static int cmp_id(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* The ids player p's client has in view, sorted, as "id id ..." in out. */
static size_t client_view(const cells_player *p, char *out, size_t n)
{
    const mc_client_entity *es;
    size_t k = mc_client_entities(p->c, &es);
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < k && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s%d", at ? " " : "", (int)es[i].id);
    return k;
}

/* The ids the cellapp holding player p's real has in its view, sorted, as "id id ...". */
static void server_view(cells_cluster *c, const cells_player *p, char *out, size_t n)
{
    out[0] = '\0';
    char path[96], v[8192];
    int h = -1, reals = 0;
    snprintf(path, sizeof path, "entities/%d/real", (int)p->id);
    for (int i = 0; i < 2; i++)
        if (get(c, cells_cellapp(i), path, v, sizeof v) && strstr(v, "here")) {
            h = i;
            reals++;
        }
    if (reals != 1)
        return;
    snprintf(path, sizeof path, "entities/%d/aoi/viewIds", (int)p->id);
    if (!get(c, cells_cellapp(h), path, v, sizeof v))
        return;
    int32_t ids[1024];
    size_t k = 0;
    for (char *s = v; *s && k < 1024;) {
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s) {
            s++;
            continue;
        }
        ids[k++] = (int32_t)x;
        s = end;
    }
    qsort(ids, k, sizeof ids[0], cmp_id);
    size_t at = 0;
    for (size_t i = 0; i < k && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s%d", at ? " " : "", (int)ids[i]);
}

static bool sees_count(cells_player *ps, int n, const void *arg)
{
    const mc_client_entity *es;
    for (int i = 0; i < n; i++)
        if (mc_client_entities(ps[i].c, &es) < *(const size_t *)arg)
            return false;
    return true;
}

static long long sum(cells_cluster *c, const char *path)
{
    return counter(c, "cellapp01", path) + counter(c, "cellapp02", path);
}

START_TEST(a_boundary_moving_under_clients_changes_no_view)
{
    cells_cluster c;
    cells_player ps[2];
    cells_cluster_start(&c);
    int32_t world = cells_enter_world(&c, ps, 2);
    int h;
    int32_t space = cells_space_of(&c, ps[0].id, &h);
    /* a crowd of 30 standing non-player Avatars within 20 m of the origin, where the players
     * are: each client sees all of them and the other player */
    char ids[16], v[256];
    snprintf(ids, sizeof ids, "%d", (int)world);
    ck_assert_msg(client_cluster_watch(&c.cc, "baseapp01", "call", "command/call", ids,
                                       "populate", "[30, 20, 0]", v, sizeof v),
                  "populate: %s", v);
    size_t want = 31;
    ck_assert_msg(cells_pump(ps, 2, WAIT_MS, sees_count, &want), "the crowd never came in view");
    cells_pump(ps, 2, 1000, NULL, NULL);
    char before[2][4096], now[4096], srv[4096];
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(client_view(&ps[i], before[i], sizeof before[i]), want);
        server_view(&c, &ps[i], srv, sizeof srv);
        ck_assert_str_eq(srv, before[i]);
    }
    int enters0 = ps[0].enters + ps[1].enters, leaves0 = ps[0].leaves + ps[1].leaves;

    /* the space splits at x = -8 under them: both players and the crowd's east part are
     * offloaded to the other cellapp */
    cells_split(&c, space, 1 - h, "-8");
    cells_wait_settled_on(&c, ps, 2, ps[0].id, 1 - h);
    cells_wait_settled_on(&c, ps, 2, ps[1].id, 1 - h);
    long long offloads0 = sum(&c, "ghosts/offloads");
    ck_assert_int_ge(offloads0, 2);

    /* the boundary follows every load difference, 3 m a quarter second, until it has passed
     * under several more entities, either way */
    long long moves0 = counter(&c, "manager", "cells/balanceMoves");
    ck_assert(client_cluster_watch(&c.cc, "manager", "set", "cells/balanceMs", "250", NULL, NULL,
                                   v, sizeof v));
    long long offloads = offloads0, moves = moves0;
    long deadline = client_cluster_now_ms() + 90000;
    while (client_cluster_now_ms() < deadline && (offloads < offloads0 + 4 || moves < moves0 + 8)) {
        cells_pump(ps, 2, 400, NULL, NULL);
        offloads = sum(&c, "ghosts/offloads");
        moves = counter(&c, "manager", "cells/balanceMoves");
    }
    ck_assert(client_cluster_watch(&c.cc, "manager", "set", "cells/balanceMs", "0", NULL, NULL, v,
                                   sizeof v));
    char layout[512], lpath[64];
    snprintf(lpath, sizeof lpath, "cells/spaces/%d", (int)space);
    get(&c, "manager", lpath, layout, sizeof layout);
    fprintf(stderr, "boundary: %lld balance moves, %lld offloads after the split; %s\n",
            moves - moves0, offloads - offloads0, layout);
    ck_assert_msg(offloads >= offloads0 + 4 && moves >= moves0 + 8,
                  "the boundary moved %lld times and passed under %lld entities (%s)",
                  moves - moves0, offloads - offloads0, layout);

    /* every client's view is what it was, and what its cellapp has; nothing left or entered */
    for (int i = 0; i < 2; i++) {
        long until = client_cluster_now_ms() + WAIT_MS;
        bool same = false;
        while (!same && client_cluster_now_ms() < until) {
            cells_pump(ps, 2, 200, NULL, NULL);
            client_view(&ps[i], now, sizeof now);
            server_view(&c, &ps[i], srv, sizeof srv);
            same = strcmp(now, before[i]) == 0 && strcmp(srv, before[i]) == 0;
        }
        ck_assert_msg(same, "player %d: before %s | client now %s | its cellapp %s", i,
                      before[i], now, srv);
    }
    ck_assert_int_eq(ps[0].enters + ps[1].enters, enters0);
    ck_assert_int_eq(ps[0].leaves + ps[1].leaves, leaves0);
    ck_assert_int_eq(ps[0].players, 2); /* its Account, then its Avatar: never again */
    ck_assert_int_eq(ps[1].players, 2);
    ck_assert_int_eq(sum(&c, "moves/failed"), 0);
    cells_leave_world(ps, 2);
    cells_cluster_stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("client_cells");
    TCase *tc = tcase_create("cells");
    tcase_set_timeout(tc, 280);
    tcase_add_test(tc, every_property_flag_reaches_across_a_boundary_whom_it_reaches_on_one_cellapp);
    tcase_add_test(tc, volatile_updates_from_ghosts_reach_observers_across_the_boundary);
    tcase_add_test(tc, a_boundary_moving_under_clients_changes_no_view);
    tcase_add_test(tc,
                   a_players_calls_while_it_walks_back_and_forth_across_the_boundary_all_arrive_in_order);
    tcase_add_test(tc, calls_to_a_player_while_it_is_offloaded_reach_its_client_once_in_order);
    suite_add_tcase(s, tc);
    TCase *third = tcase_create("third");
    tcase_set_timeout(third, 280);
    tcase_add_test(third,
                   a_third_cellapps_calls_to_a_player_offloaded_back_and_forth_are_heard_once_in_order);
    suite_add_tcase(s, third);
    return s;
}

MC_CHECK_MAIN(suite)
