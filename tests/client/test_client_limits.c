/* Limits on what one hostile client can do (issue 19), through real processes (a manager,
 * a baseapp, a cellapp with the example game) and real clients of the library:
 *  - many small moves at a high rate do not add up to more than the speed limit (the
 *    baseapp's --clientMovesPerS and, on its own, the cellapp's distance bucket);
 *  - a client that stops acknowledging while it sends bad moves is cut off, and the packets
 *    waiting for it never pass --clientMaxOverflowPackets;
 *  - bad moves are not each answered with a correction (--clientCorrectionMs);
 *  - a chat spammer is limited (--clientCallsPerS / --clientCallBurst) so another player's
 *    chat still reaches a third, and one who keeps spamming is disconnected
 *    (--clientCallDropsToKick).
 * Every wait is on a condition with a deadline, never on a guessed delay. */
#include "check_main.h"
#include "client_cluster.h"
#include "harness.h"

#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcclient/client.h"

typedef client_cluster cluster;

static long now_ms(void) { return client_cluster_now_ms(); }

static long long counter(const cluster *c, const char *proc, const char *path)
{
    return client_cluster_counter(c, proc, path);
}

/* ---- players ---------------------------------------------------------------------------- */

typedef struct {
    mc_client *c;
    int32_t id;
    uint16_t type;
    int corrections;          /* CORRECTION records heard */
    mc_vector3 corrected;     /* the last one's position */
    int chats_from;           /* onChat CALL records of entity `chat_of` heard */
    int32_t chat_of;
    int ended, end_reason;
} player;

static void on_player(void *ud, mc_client *c, const mc_cw_player *pl)
{
    (void)c;
    player *p = ud;
    p->id = pl->id;
    p->type = pl->type;
}

static void on_world(void *ud, mc_client *c, const mc_world_record *r)
{
    (void)c;
    player *p = ud;
    if (r->kind == MC_WORLD_CORRECTION) {
        p->corrections++;
        p->corrected = r->position;
    } else if (r->kind == MC_WORLD_CALL && p->chat_of && r->id == p->chat_of &&
               strcmp(r->method->name, "onChat") == 0) {
        p->chats_from++;
    }
}

static void on_end(void *ud, mc_client *c, int how, int reason, const char *text)
{
    (void)c;
    (void)text;
    player *p = ud;
    p->ended = how;
    p->end_reason = reason;
}

static void connect_player(player *p, const cluster *c, int32_t account)
{
    memset(p, 0, sizeof *p);
    mc_client_callbacks cb = {.on_player = on_player, .on_world = on_world, .on_end = on_end};
    p->c = client_cluster_connect(c, account, &cb, p);
}

typedef bool (*cond_fn)(player *ps, size_t n, const void *arg);

/* Run every client for up to ms (poll, tick) until cond holds; true when it did (or, without
 * a condition, when the time is up). */
static bool pump(player *ps, size_t n, int ms, cond_fn cond, const void *arg)
{
    long deadline = now_ms() + ms;
    do {
        struct pollfd pf[8];
        for (size_t i = 0; i < n; i++)
            pf[i] = (struct pollfd){.fd = mc_client_fd(ps[i].c), .events = POLLIN};
        poll(pf, (nfds_t)n, MC_CLIENT_TICK_MS);
        for (size_t i = 0; i < n; i++)
            mc_client_tick(ps[i].c);
        if (cond && cond(ps, n, arg))
            return true;
    } while (now_ms() < deadline);
    return cond == NULL;
}

static bool all_avatars(player *ps, size_t n, const void *arg)
{
    (void)arg;
    for (size_t i = 0; i < n; i++)
        if (ps[i].type != 1 || !mc_client_entity_of(ps[i].c, ps[i].id))
            return false;
    return true;
}

static bool all_see_all(player *ps, size_t n, const void *arg)
{
    (void)arg;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (!mc_client_entity_of(ps[i].c, ps[j].id))
                return false;
    return true;
}

static void call_json(const cluster *c, player *p, mc_part part, const char *method,
                      const char *json)
{
    client_cluster_call_json(c, p->c, p->type, part, method, json);
}

/* Log n players in (accounts "limitsN"), each playing a new avatar in the world space, all
 * seeing each other. */
static void enter_world(cluster *c, player *ps, size_t n)
{
    client_cluster_create(c, "Space", "{\"spaceName\":\"world\"}");
    for (size_t i = 0; i < n; i++) {
        char props[128];
        snprintf(props, sizeof props, "{\"accountName\":\"limits%zu\"}", i);
        connect_player(&ps[i], c, client_cluster_create(c, "Account", props));
    }
    pump(ps, n, 500, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        char json[64];
        snprintf(json, sizeof json, "[\"Hero%zu\",[1,2,3,4]]", i);
        call_json(c, &ps[i], MC_PART_BASE, "createAvatar", json);
    }
    pump(ps, n, 1000, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        char json[64];
        snprintf(json, sizeof json, "[\"Hero%zu\"]", i);
        call_json(c, &ps[i], MC_PART_BASE, "selectAvatar", json);
    }
    ck_assert_msg(pump(ps, n, 15000, all_avatars, NULL), "no avatars (%s)", c->blog);
    ck_assert_msg(pump(ps, n, 15000, all_see_all, NULL), "they do not see each other (%s)",
                  c->clog);
}

static void leave_world(cluster *c, player *ps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mc_client_close(ps[i].c);
        mc_client_free(ps[i].c);
    }
    client_cluster_stop(c);
}

/* The x of entity id as its cellapp has it. */
static double cell_x(const cluster *c, int32_t id)
{
    char path[64], v[256];
    snprintf(path, sizeof path, "entities/%d/position", (int)id);
    ck_assert_msg(client_cluster_watch(c, "cellapp01", "get", path, NULL, NULL, NULL, v, sizeof v),
                  "%s", v);
    double x, y, z;
    ck_assert_msg(sscanf(v, "%lf %lf %lf", &x, &y, &z) == 3, "position %s", v);
    return x;
}

/* ---- speed ----------------------------------------------------------------------------- */

#define SPEED 20.0      /* --maxClientSpeed */
#define STEP 0.49f      /* each move: under the old half metre granted to every move */
#define WINDOW_MS 4000

/* The attack: for WINDOW_MS, a move STEP metres further every 2 ms (as many as the client
 * library sends), restarting from where the server says the player is whenever it is
 * corrected. Returns the metres the cell went along x, and the window in *secs. */
static double many_small_moves(const cluster *c, player *a, double *secs)
{
    double x0 = cell_x(c, a->id);
    const mc_client_entity *me = mc_client_entity_of(a->c, a->id);
    ck_assert_ptr_nonnull(me);
    mc_vector3 pos = me->position;
    pos.x = (float)x0;
    int seen = a->corrections, sent = 0;
    long start = now_ms();
    while (now_ms() - start < WINDOW_MS) {
        if (a->corrections != seen) {
            seen = a->corrections;
            pos.x = a->corrected.x;
        }
        pos.x += STEP;
        if (mc_client_move(a->c, pos, (mc_vector3){0, 0, 1}) == 0)
            sent++;
        struct pollfd pf = {.fd = mc_client_fd(a->c), .events = POLLIN};
        poll(&pf, 1, 2);
        mc_client_tick(a->c);
    }
    *secs = (double)(now_ms() - start) / 1000.0;
    pump(a, 1, 500, NULL, NULL); /* the last moves land */
    double went = cell_x(c, a->id) - x0;
    fprintf(stderr, "speed: %d moves of %.2f m in %.1f s took the cell %.1f m (%.1f m/s)\n",
            sent, (double)STEP, *secs, went, went / *secs);
    ck_assert_int_gt(sent, 200);
    return went;
}

/* The bound: the bucket is 1.1 x speed x 1 s + 0.5 m (--clientMoveSlack) deep and fills at
 * 1.1 x speed; one more second of tolerance for moves the loaded test machine delivers
 * bunched after the window. */
static double speed_bound(double secs) { return 1.1 * SPEED * (secs + 2.0) + 0.5; }

START_TEST(many_small_moves_do_not_beat_the_speed_limit)
{
    cluster c;
    static const char *const cell_opts[] = {"--maxClientSpeed=20", NULL};
    client_cluster_start(&c, NULL, true, cell_opts);
    player a[1];
    enter_world(&c, a, 1);
    double secs, went = many_small_moves(&c, a, &secs);
    ck_assert_msg(went <= speed_bound(secs), "the cell went %.1f m in %.1f s (at most %.1f)",
                  went, secs, speed_bound(secs));
    ck_assert_int_gt(counter(&c, "baseapp01", "clients/movesDropped"), 0);
    leave_world(&c, a, 1);
}
END_TEST

/* The same with the baseapp letting every move through: the cellapp's bucket alone. */
START_TEST(the_cellapp_alone_keeps_many_small_moves_within_the_limit)
{
    cluster c;
    static const char *const base_opts[] = {"--clientMovesPerS=10000",
                                            "--clientPacketsPerS=100000", NULL};
    static const char *const cell_opts[] = {"--maxClientSpeed=20", NULL};
    client_cluster_start(&c, base_opts, true, cell_opts);
    player a[1];
    enter_world(&c, a, 1);
    long long acc0 = counter(&c, "cellapp01", "clientMoves/accepted");
    double secs, went = many_small_moves(&c, a, &secs);
    ck_assert_msg(went <= speed_bound(secs), "the cell went %.1f m in %.1f s (at most %.1f)",
                  went, secs, speed_bound(secs));
    ck_assert_int_eq(counter(&c, "baseapp01", "clients/movesDropped"), 0);
    /* the attack was on: more moves reached the cell than the baseapp's default would allow */
    ck_assert_int_gt(counter(&c, "cellapp01", "clientMoves/accepted") - acc0, 0);
    ck_assert_int_gt(counter(&c, "cellapp01", "clientMoves/refused/tooFast"), 0);
    leave_world(&c, a, 1);
}
END_TEST

/* ---- corrections and the queue of a client that stops acknowledging -------------------- */

/* Bad moves in a burst: far fewer corrections than refusals (at most one per
 * --clientCorrectionMs, default 250). */
START_TEST(bad_moves_are_not_each_answered_with_a_correction)
{
    cluster c;
    client_cluster_start(&c, NULL, true, NULL);
    player a[1];
    enter_world(&c, a, 1);
    long long bad0 = counter(&c, "cellapp01", "clientMoves/refused/malformed");
    long long corr0 = counter(&c, "cellapp01", "clientMoves/corrections");
    uint8_t raw[24];
    memset(raw, 0, sizeof raw);
    raw[0] = 0x7F;
    raw[1] = 0xC0; /* a quiet NaN as x */
    const int N = 20; /* within the baseapp's MOVE burst: every one reaches the cell */
    long start = now_ms();
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(mc_client_send_raw(a->c, MC_CW_MOVE, raw, sizeof raw), 0);
    long long bad = 0;
    long deadline = now_ms() + 15000;
    while (now_ms() < deadline &&
           (bad = counter(&c, "cellapp01", "clientMoves/refused/malformed") - bad0) < N)
        pump(a, 1, 100, NULL, NULL);
    double secs = (double)(now_ms() - start) / 1000.0;
    ck_assert_int_eq(bad, N);
    long long corr = counter(&c, "cellapp01", "clientMoves/corrections") - corr0;
    ck_assert_msg(corr >= 1 && corr <= 1 + (long long)ceil(secs / 0.25),
                  "%lld corrections for %d bad moves in %.2f s", corr, N, secs);
    ck_assert_int_eq(counter(&c, "cellapp01", "clientMoves/correctionsSkipped"), N - corr);
    leave_world(&c, a, 1);
}
END_TEST

#define MAX_OVERFLOW 16 /* --clientMaxOverflowPackets in the test */

/* A client stops reading (so it acknowledges nothing) and keeps sending moves the cell
 * refuses, each answered with a correction (--clientCorrectionMs=0): the packets waiting
 * for it grow to the bound, then it is cut off; the baseapp's queue never passes it. */
START_TEST(a_client_that_stops_acknowledging_is_cut_off)
{
    cluster c;
    static const char *const base_opts[] = {"--clientMaxOverflowPackets=16",
                                            "--clientMovesPerS=10000", NULL};
    static const char *const cell_opts[] = {"--clientCorrectionMs=0", NULL};
    client_cluster_start(&c, base_opts, true, cell_opts);
    player a[1];
    enter_world(&c, a, 1);
    ck_assert_int_eq(counter(&c, "baseapp01", "clients/cutOffQueueFull"), 0);
    const mc_client_entity *me = mc_client_entity_of(a->c, a->id);
    ck_assert_ptr_nonnull(me);
    mc_vector3 far = me->position;
    long long most = 0, cut = 0, sent = 0;
    long deadline = now_ms() + 60000;
    /* no mc_client_tick from here on: nothing it receives is read or acknowledged */
    while (now_ms() < deadline && cut == 0) {
        for (int i = 0; i < 50; i++) {
            far.x = (far.x > 0 ? -1e5f : 1e5f); /* far beyond any speed: refused */
            if (mc_client_move(a->c, far, (mc_vector3){0, 0, 1}) == 0)
                sent++;
            h_sleep_ms(2);
        }
        long long q = counter(&c, "baseapp01", "externalNub/overflowPackets");
        if (q > most)
            most = q;
        cut = counter(&c, "baseapp01", "clients/cutOffQueueFull");
    }
    fprintf(stderr, "queue: %lld moves sent, at most %lld packets waiting, cut off %lld\n",
            sent, most, cut);
    ck_assert_msg(cut == 1, "not cut off after %lld bad moves (at most %lld waiting; %s)", sent,
                  most, c.blog);
    ck_assert_msg(most <= MAX_OVERFLOW, "%lld packets waited for it (bound %d)", most,
                  MAX_OVERFLOW);
    ck_assert_int_eq(counter(&c, "baseapp01", "externalNub/overflowPackets"), 0);
    ck_assert_int_eq(counter(&c, "baseapp01", "clients/connected"), 0);
    mc_client_free(a->c);
    client_cluster_stop(&c);
}
END_TEST

/* ---- calls ------------------------------------------------------------------------------ */

static bool heard_chat(player *ps, size_t n, const void *arg)
{
    (void)n;
    return ps[0].chats_from >= *(const int *)arg;
}

static bool spammer_ended(player *ps, size_t n, const void *arg)
{
    (void)n;
    (void)arg;
    return ps[1].ended != 0;
}

/* a listens, b spams chat (400 calls of 200 characters at once: far over the 32 KiB a
 * listener's witness queues a tick), c says ten things in the middle of it: with b limited to
 * its burst of 100 (about 22 KiB), a hears all ten. Then b spams on and is disconnected. */
START_TEST(a_chat_spammer_is_limited_and_others_still_get_through)
{
    cluster c;
    client_cluster_start(&c, NULL, true, NULL);
    player ps[3];
    enter_world(&c, ps, 3);
    player *a = &ps[0], *b = &ps[1], *talker = &ps[2];
    a->chat_of = talker->id;
    char spam[256], text[210];
    memset(text, 'x', 200);
    text[200] = '\0';
    snprintf(spam, sizeof spam, "[\"%s\"]", text);
    long long dropped0 = counter(&c, "baseapp01", "clients/callsDropped");
    /* c speaks ten times during the flood (its chats reach the cellapp in the same ticks) */
    for (int i = 0; i < 400; i++) {
        call_json(&c, b, MC_PART_CELL, "chat", spam);
        if (i % 40 == 39)
            call_json(&c, talker, MC_PART_CELL, "chat", "[\"hello a\"]");
    }
    int ten = 10;
    bool heard = pump(ps, 3, 10000, heard_chat, &ten);
    fprintf(stderr, "chat: a heard the talker %d times of 10; the cellapp queued %lld calls "
            "for clients, dropped %lld\n", a->chats_from, counter(&c, "cellapp01", "world/calls"),
            counter(&c, "cellapp01", "world/callsDropped"));
    ck_assert_msg(heard,
                  "a heard %d of the other's 10 chats (calls dropped %lld, world/callsDropped "
                  "%lld)", a->chats_from, counter(&c, "baseapp01", "clients/callsDropped"),
                  counter(&c, "cellapp01", "world/callsDropped"));
    long long dropped = counter(&c, "baseapp01", "clients/callsDropped") - dropped0;
    ck_assert_msg(dropped >= 100 && dropped <= 400 - 100,
                  "%lld of b's 400 calls dropped", dropped);
    ck_assert_int_eq(counter(&c, "cellapp01", "world/callsDropped"), 0);
    ck_assert_int_eq(counter(&c, "baseapp01", "clients/kickedForCalls"), 0);
    ck_assert_int_eq(b->ended, 0);

    /* b keeps on, far past the hard limit (500 dropped within a second): disconnected. It
     * spams in rounds until then (at most 30 s): on a loaded machine its channel's window
     * spreads one burst over more than a second, so the limit may take a few rounds. */
    long spam_until = now_ms() + 30000;
    while (!b->ended && now_ms() < spam_until) {
        for (int i = 0; i < 250 && !b->ended; i++)
            call_json(&c, b, MC_PART_CELL, "chat", "[\"spam\"]");
        pump(ps, 3, 100, spammer_ended, NULL);
    }
    ck_assert_msg(pump(ps, 3, 10000, spammer_ended, NULL), "the spammer is still connected");
    ck_assert_int_eq(b->ended, MC_CLIENT_END_DISCONNECTED);
    ck_assert_int_eq(b->end_reason, MC_CW_BYE_KICKED);
    ck_assert_int_eq(counter(&c, "baseapp01", "clients/kickedForCalls"), 1);
    ck_assert_int_eq(mc_client_state(a->c), MC_CLIENT_CONNECTED);
    ck_assert_int_eq(mc_client_state(talker->c), MC_CLIENT_CONNECTED);
    leave_world(&c, ps, 3);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("client_limits");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, many_small_moves_do_not_beat_the_speed_limit);
    tcase_add_test(tc, the_cellapp_alone_keeps_many_small_moves_within_the_limit);
    tcase_add_test(tc, bad_moves_are_not_each_answered_with_a_correction);
    tcase_add_test(tc, a_client_that_stops_acknowledging_is_cut_off);
    tcase_add_test(tc, a_chat_spammer_is_limited_and_others_still_get_through);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
