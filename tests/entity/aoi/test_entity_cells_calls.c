/* A call stream to entities that walk back and forth across a cell boundary (issue 22 item 5;
 * docs/WORLD.md "Offloading"), through real processes: a manager, a baseapp and two cellapps
 * running the Probe game, one space split at x = 0. Two Probes walk in steps from one side to
 * the other and back, offloaded at every crossing, while two senders stream numbered pings at
 * them from timers (one every 20 ms each), without a pause around the crossings:
 *   - to the first through its base (a CELL_VIA_BASE mailbox: the base relays each to wherever
 *     the cell is now);
 *   - to the second through the CELL mailbox its sender took before the split, which names
 *     the first cellapp for good: while the real is elsewhere each call reaches it through
 *     the move's forwarding entry or the ghost left behind.
 * Each Probe records what reached it (count, last number, numbers out of order). At the end
 * the streams stop and every call sent reached its entity exactly once, in order; each
 * crossed the boundary ten times; one real and one ghost of each. */
#include "harness.h"
#include "cells_watch.h"
#include "rules_cluster.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 30000
#define CROSSINGS 10

/* Index of the cellapp holding entity id real and its base naming it (the move settled), or
 * -1. */
static int settled_holder(rc_cluster *c, int32_t id)
{
    char p[96], v[256], b[256];
    int holder = -1, reals = 0;
    cw_path(p, sizeof p, id, "real");
    for (int i = 0; i < c->ncell; i++)
        if (rc_get(c, v, sizeof v, c->cell_name[i], p) == 0 && strstr(v, "here")) {
            holder = i;
            reals++;
        }
    if (reals != 1)
        return -1;
    cw_path(p, sizeof p, id, "cell");
    if (rc_get(c, b, sizeof b, "baseapp01", p) != 0 || !strstr(b, c->cell_addr[holder]))
        return -1;
    /* the other side holds its ghost, naming the real's cellapp */
    cw_path(p, sizeof p, id, "real");
    if (rc_get(c, v, sizeof v, c->cell_name[1 - holder], p) != 0 ||
        !strstr(v, c->cell_addr[holder]))
        return -1;
    return holder;
}

static void wait_settled_on(rc_cluster *c, int32_t id, int i)
{
    for (int waited = 0; waited < WAIT_MS; waited += 50) {
        if (settled_holder(c, id) == i)
            return;
        h_sleep_ms(50);
    }
    ck_abort_msg("entity %d never settled as a real on %s", (int)id, c->cell_name[i]);
}

/* Move entity id (a real on cellapp `at`) to (x, 0). */
static void move_to(rc_cluster *c, int at, int32_t id, float x)
{
    char args[64], out[256];
    snprintf(args, sizeof args, "[%g, 0]", (double)x);
    rc_entity_call(c, c->cell_name[at], id, "moveTo", args, out, sizeof out);
    ck_assert_msg(strcmp(out, "[0]") == 0, "moveTo %g on %s: %s", (double)x, c->cell_name[at],
                  out);
}

/* Stop sender s's stream (its peer none: later pings are refused at once) and check that
 * every ping it sent reached entity `to`, a real on cellapp `at`, once and in order. */
static void stream_complete(rc_cluster *c, int32_t s, int32_t to, int at)
{
    char out[256], p[96];
    rc_entity_call(c, "baseapp01", s, "remember", "[null]", out, sizeof out);
    cw_path(p, sizeof p, s, "props/streamSent");
    long long sent = rc_int(c, "baseapp01", p);
    ck_assert_int_gt(sent, 0);
    cw_path(p, sizeof p, to, "props/cellSeen");
    ck_assert_msg(rc_wait_int_at_least(c, c->cell_name[at], p, sent, WAIT_MS),
                  "%d saw %lld of %lld pings", (int)to, rc_int(c, c->cell_name[at], p), sent);
    h_sleep_ms(300); /* nothing more arrives: no call twice */
    ck_assert_int_eq(rc_int(c, c->cell_name[at], p), sent);
    cw_path(p, sizeof p, to, "props/cellLast");
    ck_assert_int_eq(rc_int(c, c->cell_name[at], p), sent);
    cw_path(p, sizeof p, to, "props/cellOrderErrors");
    ck_assert_int_eq(rc_int(c, c->cell_name[at], p), 0);
}

START_TEST(streams_to_entities_walking_back_and_forth_across_a_boundary_lose_nothing)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    char out[4096], p[128], sp[32], args[1024];
    /* boundaries stay where they are split */
    cw_set(&c, "manager", "cells/balanceMs", "0");
    int h;
    int32_t space;
    int32_t w1 = cw_probe_in_new_space(&c, "w1", &h, &space, WAIT_MS);
    char cell1[512], cell2[512];
    cw_cell_json(&c, w1, cell1, sizeof cell1);
    int32_t w2 = cw_probe_with_cell(&c, "w2", cell1, WAIT_MS);
    cw_cell_json(&c, w2, cell2, sizeof cell2); /* names cellapp h for the whole test */
    move_to(&c, h, w1, -8);
    move_to(&c, h, w2, -8);
    /* w1 is a witness too: its view is handed over at every crossing */
    rc_entity_call(&c, c.cell_name[h], w1, "watch", "[1, 40, 2]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");

    snprintf(sp, sizeof sp, "%d", (int)space);
    ck_assert_msg(rc_call(&c, out, sizeof out, "manager", "command/splitSpace", sp,
                          c.cell_name[1 - h], "0") == 0,
                  "%s", out);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    cw_wait_value(&c, c.cell_name[1 - h], p, "x[0,inf)", WAIT_MS);
    wait_settled_on(&c, w1, h);
    wait_settled_on(&c, w2, h);

    /* the senders: s1 streams through w1's base, s2 to w2's CELL mailbox taken before */
    char via[512];
    cw_mailbox_json(via, sizeof via, w1, c.base_addr[0], "CELL_VIA_BASE", cell1);
    int32_t s1 = rc_create_probe(&c, "baseapp01", "s1");
    int32_t s2 = rc_create_probe(&c, "baseapp01", "s2");
    snprintf(args, sizeof args, "[%s]", via);
    rc_entity_call(&c, "baseapp01", s1, "remember", args, out, sizeof out);
    snprintf(args, sizeof args, "[%s]", cell2);
    rc_entity_call(&c, "baseapp01", s2, "remember", args, out, sizeof out);
    rc_entity_call(&c, "baseapp01", s1, "streamPeer", "[0.02]", out, sizeof out);
    rc_entity_call(&c, "baseapp01", s2, "streamPeer", "[0.02]", out, sizeof out);

    /* they walk: 4 m a step from x = -8 to x = 8 (offloaded past x = 5) and back, ten
     * crossings; the streams run on throughout */
    int at = h;
    long long in0 = rc_int(&c, "cellapp01", "moves/in") + rc_int(&c, "cellapp02", "moves/in");
    for (int crossing = 0; crossing < CROSSINGS; crossing++) {
        float dir = at == h ? 1.0f : -1.0f;
        for (int step = 1; step <= 4; step++) {
            float x = dir * (-8.0f + 4.0f * (float)step);
            move_to(&c, at, w1, x);
            move_to(&c, at, w2, x);
            h_sleep_ms(60);
        }
        at = 1 - at;
        wait_settled_on(&c, w1, at);
        wait_settled_on(&c, w2, at);
    }
    long long in = rc_int(&c, "cellapp01", "moves/in") + rc_int(&c, "cellapp02", "moves/in");
    ck_assert_int_ge(in - in0, 2 * CROSSINGS);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "moves/failed") +
                         rc_int(&c, "cellapp02", "moves/failed"),
                     0);

    /* every ping reached its entity once, in order */
    stream_complete(&c, s1, w1, at);
    stream_complete(&c, s2, w2, at);
    cw_path(p, sizeof p, s1, "props/streamSent");
    fprintf(stderr, "streams: %lld and ", rc_int(&c, "baseapp01", p));
    cw_path(p, sizeof p, s2, "props/streamSent");
    fprintf(stderr, "%lld pings over %d crossings\n", rc_int(&c, "baseapp01", p), CROSSINGS);
    /* w2's calls to the first cellapp's address were forwarded while w2 was away */
    ck_assert_int_gt(rc_int(&c, c.cell_name[h], "moves/forwarded") +
                         rc_int(&c, c.cell_name[h], "ghosts/forwarded"),
                     0);
    /* w1's view went with it: it never heard w2 leave */
    cw_check_never_left(&c, c.cell_name[at], w1, w2);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "ghosts/refused") +
                         rc_int(&c, "cellapp02", "ghosts/refused"),
                     0);
    rc_stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("entity_cells_calls");
    TCase *tc = tcase_create("calls");
    tcase_set_timeout(tc, 280);
    tcase_add_test(tc, streams_to_entities_walking_back_and_forth_across_a_boundary_lose_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
