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
#include "rules_cluster.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 30000
#define CROSSINGS 10

static void ent_path(char *out, size_t n, int32_t id, const char *rest)
{
    snprintf(out, n, "entities/%d/%s", (int)id, rest);
}

static void wait_value(rc_cluster *c, const char *proc, const char *path, const char *want)
{
    if (!rc_wait_value(c, proc, path, want, WAIT_MS)) {
        char v[4096] = "";
        rc_get(c, v, sizeof v, proc, path);
        ck_abort_msg("%s %s: no '%s' in %s", proc, path, want, v);
    }
}

/* The CELL mailbox of a Probe's cell as JSON ("{...}"). */
static void cell_json(rc_cluster *c, int32_t id, char *out, size_t n)
{
    char v[512];
    rc_entity_call(c, "baseapp01", id, "cellMailbox", NULL, v, sizeof v);
    ck_assert_msg(v[0] == '[' && strstr(v, "\"CELL\""), "cellMailbox: %s", v);
    v[strlen(v) - 1] = '\0';
    snprintf(out, n, "%s", v + 1);
}

/* A Probe whose cell is made next to near's (JSON CELL mailbox; "null": in a new space). */
static int32_t probe_with_cell(rc_cluster *c, const char *label, const char *near)
{
    int32_t id = rc_create_probe(c, "baseapp01", label);
    char args[600], out[512], p[96];
    snprintf(args, sizeof args, "[%s]", near);
    rc_entity_call(c, "baseapp01", id, "makeCell", args, out, sizeof out);
    ck_assert_str_eq(out, "[]");
    ent_path(p, sizeof p, id, "props/events");
    ck_assert_msg(rc_wait_value(c, "baseapp01", p, "getCell;", WAIT_MS), "no cell for %d",
                  (int)id);
    return id;
}

/* Index of the cellapp holding entity id real and its base naming it (the move settled), or
 * -1. */
static int settled_holder(rc_cluster *c, int32_t id)
{
    char p[96], v[256], b[256];
    int holder = -1, reals = 0;
    ent_path(p, sizeof p, id, "real");
    for (int i = 0; i < c->ncell; i++)
        if (rc_get(c, v, sizeof v, c->cell_name[i], p) == 0 && strstr(v, "here")) {
            holder = i;
            reals++;
        }
    if (reals != 1)
        return -1;
    ent_path(p, sizeof p, id, "cell");
    if (rc_get(c, b, sizeof b, "baseapp01", p) != 0 || !strstr(b, c->cell_addr[holder]))
        return -1;
    /* the other side holds its ghost, naming the real's cellapp */
    ent_path(p, sizeof p, id, "real");
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
    ent_path(p, sizeof p, s, "props/streamSent");
    long long sent = rc_int(c, "baseapp01", p);
    ck_assert_int_gt(sent, 0);
    ent_path(p, sizeof p, to, "props/cellSeen");
    ck_assert_msg(rc_wait_int_at_least(c, c->cell_name[at], p, sent, WAIT_MS),
                  "%d saw %lld of %lld pings", (int)to, rc_int(c, c->cell_name[at], p), sent);
    h_sleep_ms(300); /* nothing more arrives: no call twice */
    ck_assert_int_eq(rc_int(c, c->cell_name[at], p), sent);
    ent_path(p, sizeof p, to, "props/cellLast");
    ck_assert_int_eq(rc_int(c, c->cell_name[at], p), sent);
    ent_path(p, sizeof p, to, "props/cellOrderErrors");
    ck_assert_int_eq(rc_int(c, c->cell_name[at], p), 0);
}

START_TEST(streams_to_entities_walking_back_and_forth_across_a_boundary_lose_nothing)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    char out[4096], p[128], sp[32], args[1024];
    /* boundaries stay where they are split */
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "set", "manager", "cells/balanceMs",
                               "0", NULL),
                     0);
    int32_t w1 = probe_with_cell(&c, "w1", "null");
    int h = -1;
    ent_path(p, sizeof p, w1, "space");
    for (int i = 0; i < 2 && h < 0; i++)
        if (rc_get(&c, out, sizeof out, c.cell_name[i], p) == 0)
            h = i;
    ck_assert_int_ge(h, 0);
    int32_t space = (int32_t)rc_int(&c, c.cell_name[h], p);
    char cell1[512], cell2[512];
    cell_json(&c, w1, cell1, sizeof cell1);
    int32_t w2 = probe_with_cell(&c, "w2", cell1);
    cell_json(&c, w2, cell2, sizeof cell2); /* names cellapp h for the whole test */
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
    wait_value(&c, c.cell_name[1 - h], p, "x[0,inf)");
    wait_settled_on(&c, w1, h);
    wait_settled_on(&c, w2, h);

    /* the senders: s1 streams through w1's base, s2 to w2's CELL mailbox taken before */
    const char *t = strstr(cell1, "\"type\":");
    ck_assert_ptr_nonnull(t);
    char via[512];
    snprintf(via, sizeof via,
             "[{\"id\":%d,\"addr\":\"%s\",\"component\":\"CELL_VIA_BASE\",\"type\":%d}]",
             (int)w1, c.base_addr[0], atoi(t + 7));
    int32_t s1 = rc_create_probe(&c, "baseapp01", "s1");
    int32_t s2 = rc_create_probe(&c, "baseapp01", "s2");
    rc_entity_call(&c, "baseapp01", s1, "remember", via, out, sizeof out);
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
    ent_path(p, sizeof p, s1, "props/streamSent");
    fprintf(stderr, "streams: %lld and ", rc_int(&c, "baseapp01", p));
    ent_path(p, sizeof p, s2, "props/streamSent");
    fprintf(stderr, "%lld pings over %d crossings\n", rc_int(&c, "baseapp01", p), CROSSINGS);
    /* w2's calls to the first cellapp's address were forwarded while w2 was away */
    ck_assert_int_gt(rc_int(&c, c.cell_name[h], "moves/forwarded") +
                         rc_int(&c, c.cell_name[h], "ghosts/forwarded"),
                     0);
    /* w1's view went with it: it never heard w2 leave */
    ent_path(p, sizeof p, w1, "props/aoiEvents");
    char ev[4096], left[48];
    rc_value(&c, c.cell_name[at], p, ev, sizeof ev);
    snprintf(left, sizeof left, "-%d;", (int)w2);
    ck_assert_msg(!strstr(ev, left), "w1's view events: %s", ev);
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
