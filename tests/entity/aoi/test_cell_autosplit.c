/* Automatic splits, new and dead cellapps (docs/WORLD.md "Automatic splits", "Cells
 * restored") through real processes: a manager, a baseapp and two or three cellapps running
 * the Probe game, driven through the watcher tool; every process is killed by the harness at
 * exit, also on failure. Load is driven with the cellapp knob cells/tickLoadBoost (added to
 * the tick load it reports; 0 by default). Conditions are polled, never waited for blindly.
 *
 *   a_busy_space_splits_by_itself_and_merges_back_when_idle
 *       five reals at x = -30, -20, 10, 20, 30 on one cellapp; its reported load over the
 *       threshold: the manager splits its cell at the reals' median (x = -5, between -20 and 10) onto the other
 *       cellapp, once; the three reals beyond are offloaded there; load back to idle: the cell
 *       merges back and every real is on the first cellapp again, calls reaching each
 *   a_cellapp_born_into_a_live_cluster_takes_a_share
 *       one cellapp, overloaded, with nowhere to split to (cells/auto/noTarget); a cellapp
 *       started into the cluster is given the upper half of the space at its first report,
 *       and the reals there move to it
 *   a_dead_cellapps_cell_merges_and_its_reals_come_back_in_their_cells
 *       a space split over three cellapps, a real in each quarter, a witness seeing all of
 *       them across the boundaries; the cellapp of one quarter is killed with SIGKILL: the
 *       partition (two cells) still covers the plane, its reals are restored each on the
 *       cellapp whose cell holds its position (once), and the witness's view is whole again
 *   a_retiring_cellapp_hands_its_cell_and_reals_to_its_neighbour
 *       a space split over two cellapps, one stopped with SIGTERM: its cell merges into the
 *       other's and its reals move there before it exits 0, none lost (no onLoseCell, calls
 *       reach each, the base knows the new address), a witness never seeing them leave
 *   a_retiring_cellapp_hands_a_space_it_serves_whole_to_another
 *       five reals in a space served whole by one cellapp, a witness among them; the cellapp
 *       stopped with SIGTERM: the manager gives the whole space to the other cellapp and the
 *       reals move there before it exits 0 (no onLoseCell, the base knows the new address, the
 *       witness never sees them leave); that one stopped too: nobody to take the space, the
 *       manager says so and the cells go with it (onLoseCell) at once, as before
 *   bad_options_are_refused
 *       --cellSplitLoad, --cellMergeLoad (not below half the split load), --cellAutoMs,
 *       --cellMergeHoldMs, --cellSplitMinReals out of range stop the manager, --retireMs,
 *       --ghostCallRing, --ghostCallRingBytes, --ghostCallRingMs, --testGhostCallDelayMs the
 *       cellapp, at start with one line naming them */
#include "harness.h"
#include "cells_watch.h"
#include "rules_cluster.h"

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 30000
#define NP 5

/* Quick automatic splits for a test: 4 reals make a space worth splitting, a second over
 * the threshold is long enough, no gap; merges after 2 s idle; boundaries do not move. */
static void quick_auto(rc_cluster *c)
{
    cw_set(c, "manager", "cells/balanceMs", "0");
    cw_set(c, "manager", "cells/auto/splitMinReals", "4");
    cw_set(c, "manager", "cells/auto/splitHoldMs", "1000");
    cw_set(c, "manager", "cells/auto/gapMs", "0");
    cw_set(c, "manager", "cells/auto/mergeHoldMs", "2000");
}

/* Cells that stay as they are split: no load balancing, no automatic split or merge. */
static void fixed_cells(rc_cluster *c)
{
    cw_set(c, "manager", "cells/balanceMs", "0");
    cw_set(c, "manager", "cells/auto/checkMs", "0");
}

/* Where five_probes puts its probes (x; z = 0): a split at x = -5 (their median between -20
 * and 10) or at x = 0 leaves the last three beyond it. */
static const float xs[NP] = {-30, -20, 10, 20, 30};

/* NP probes in one space on one cellapp (*holder), at x = xs[i], z = 0. */
static void five_probes(rc_cluster *c, int32_t ids[NP], int *holder, int32_t *space)
{
    ids[0] = cw_probe_in_new_space(c, "p", holder, space, WAIT_MS);
    for (int i = 1; i < NP; i++)
        ids[i] = cw_probe_near(c, ids[0], "q", WAIT_MS);
    for (int i = 0; i < NP; i++) {
        cw_wait_real_on(c, ids[i], *holder, WAIT_MS);
        cw_move_real(c, ids[i], xs[i], 0);
    }
}

/* Stop cellapp i with SIGTERM: it exits 0. */
static void retire(rc_cluster *c, int i)
{
    h_kill(c->cell[i], SIGTERM);
    int rc = h_wait_exit(c->cell[i], 30000);
    ck_assert_msg(rc == 0, "%s exited %d (log %s)", c->cell_name[i], rc, c->log_cell[i]);
    c->cell[i] = -1;
}

/* After a retirement: the manager gives the whole of space to cellapp `to`, every probe is
 * real there and only there (a call reaches it, it never lost its cell, its base knows the
 * address), and the witness ids[1] never saw ids[2..] leave. */
static void all_handed_to(rc_cluster *c, int32_t space, const int32_t ids[NP], int to)
{
    char p[128], want[256], out[4096];
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    snprintf(want, sizeof want, "%s x[-inf,inf) z[-inf,inf)", c->cell_name[to]);
    cw_wait_value(c, "manager", p, want, WAIT_MS);
    for (int i = 0; i < NP; i++) {
        ck_assert_int_eq(cw_real_of(c, ids[i]), to);
        rc_entity_call(c, c->cell_name[to], ids[i], "moveTo", "[2, 2]", out, sizeof out);
        ck_assert_str_eq(out, "[0]");
        char ev[4096];
        cw_path(p, sizeof p, ids[i], "props/events");
        rc_value(c, "baseapp01", p, ev, sizeof ev);
        ck_assert_msg(!strstr(ev, "loseCell"), "entity %d lost its cell: %s", (int)ids[i], ev);
        cw_path(p, sizeof p, ids[i], "cell");
        cw_wait_value(c, "baseapp01", p, c->cell_addr[to], WAIT_MS);
    }
    /* the witness never saw them leave */
    for (int i = 2; i < NP; i++)
        cw_check_never_left(c, c->cell_name[to], ids[1], ids[i]);
}

START_TEST(a_busy_space_splits_by_itself_and_merges_back_when_idle)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    quick_auto(&c);
    int h;
    int32_t space, ids[NP];
    five_probes(&c, ids, &h, &space);
    const char *A = c.cell_name[h], *B = c.cell_name[1 - h];
    cw_set(&c, A, "ghosts/offloadHysteresis", "0");
    char p[128], want[256];
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    snprintf(want, sizeof want, "%s x[-inf,inf) z[-inf,inf)", A);
    cw_wait_value(&c, "manager", p, want, WAIT_MS);

    /* idle: the manager looks, and splits nothing */
    long long looks = rc_int(&c, "manager", "cells/auto/looks");
    ck_assert(rc_wait_int_at_least(&c, "manager", "cells/auto/looks", looks + 3, WAIT_MS));
    ck_assert(rc_wait_int_at_least(&c, "manager", "cells/auto/loads", 4, WAIT_MS));
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/splits"), 0);
    ck_assert_int_ge(rc_int(&c, A, "cells/loadReports"), 1);

    /* A overloaded: its cell is split at the median of its reals onto B */
    cw_set(&c, A, "cells/tickLoadBoost", "5");
    snprintf(want, sizeof want, "%s x[-5,inf) z[-inf,inf)", B);
    cw_wait_value(&c, "manager", p, want, WAIT_MS);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/splits"), 1);
    for (int i = 0; i < NP; i++)
        cw_wait_real_on(&c, ids[i], xs[i] >= 10 ? 1 - h : h, WAIT_MS);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    cw_wait_value(&c, B, p, "x[-5,inf) z[-inf,inf)", WAIT_MS);
    /* still over the threshold, but too few reals left to split again */
    looks = rc_int(&c, "manager", "cells/auto/looks");
    ck_assert(rc_wait_int_at_least(&c, "manager", "cells/auto/looks", looks + 3, WAIT_MS));
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/splits"), 1);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/merges"), 0);

    /* idle again: the cell merges back, its reals come home */
    cw_set(&c, A, "cells/tickLoadBoost", "0");
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    snprintf(want, sizeof want, "%s x[-inf,inf) z[-inf,inf)", A);
    cw_wait_value(&c, "manager", p, want, WAIT_MS);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/merges"), 1);
    for (int i = 0; i < NP; i++)
        cw_wait_real_on(&c, ids[i], h, WAIT_MS);
    cw_wait_int_eq(&c, B, "spaces/count", 0, WAIT_MS);
    for (int i = 0; i < NP; i++) {
        char out[256];
        rc_entity_call(&c, A, ids[i], "moveTo", "[1, 1]", out, sizeof out);
        ck_assert_str_eq(out, "[0]");
    }
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/loadsRefused"), 0);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/conflicts"), 0);
    rc_stop(&c);
}
END_TEST

START_TEST(a_cellapp_born_into_a_live_cluster_takes_a_share)
{
    rc_cluster c;
    rc_start(&c, 1, 1);
    quick_auto(&c);
    int h;
    int32_t space, ids[NP];
    five_probes(&c, ids, &h, &space);
    ck_assert_int_eq(h, 0);
    cw_set(&c, "cellapp01", "ghosts/offloadHysteresis", "0");
    cw_set(&c, "cellapp01", "cells/tickLoadBoost", "5");
    /* overloaded, and nowhere to go */
    ck_assert(rc_wait_int_at_least(&c, "manager", "cells/auto/noTarget", 2, WAIT_MS));
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/splits"), 0);

    int b = rc_add_cellapp(&c);
    char p[128], want[256];
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    snprintf(want, sizeof want, "%s x[-5,inf) z[-inf,inf)", c.cell_name[b]);
    cw_wait_value(&c, "manager", p, want, WAIT_MS);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/splits"), 1);
    for (int i = 0; i < NP; i++)
        cw_wait_real_on(&c, ids[i], xs[i] >= 10 ? b : 0, WAIT_MS);
    cw_set(&c, "cellapp01", "cells/tickLoadBoost", "0");
    rc_stop(&c);
}
END_TEST

START_TEST(a_dead_cellapps_cell_merges_and_its_reals_come_back_in_their_cells)
{
    rc_cluster c;
    rc_start(&c, 1, 3);
    fixed_cells(&c);
    int h;
    int32_t space;
    int32_t w = cw_probe_in_new_space(&c, "p", &h, &space, WAIT_MS);
    enum { NQ = 4 };
    int32_t q[NQ];
    const float qx[NQ] = {-20, -20, 20, 20}, qz[NQ] = {-20, 20, -20, 20};
    for (int i = 0; i < NQ; i++)
        q[i] = cw_probe_near(&c, w, "q", WAIT_MS);
    cw_move_real(&c, w, -10, -10);
    for (int i = 0; i < NQ; i++)
        cw_move_real(&c, q[i], qx[i], qz[i]);
    /* three cells: x = 0, then one half cut at z = 0 */
    char sp[32], out[4096], p[128];
    snprintf(sp, sizeof sp, "%d", (int)space);
    int others[2], k = 0;
    for (int i = 0; i < 3; i++)
        if (i != h)
            others[k++] = i;
    ck_assert_msg(rc_call(&c, out, sizeof out, "manager", "command/splitSpace", sp,
                          c.cell_name[others[0]], "0") == 0,
                  "%s", out);
    ck_assert_msg(rc_call(&c, out, sizeof out, "manager", "command/splitSpace", sp,
                          c.cell_name[others[1]], "0") == 0,
                  "%s", out);
    cw_rect r[8];
    ck_assert_int_eq(cw_layout(&c, space, r, 8), 3);
    /* every real settles in the cell holding it */
    for (int i = 0; i < NQ; i++)
        for (int j = 0; j < 3; j++)
            if (cw_holds(&r[j], qx[i], qz[i]))
                cw_wait_real_on(&c, q[i], cw_cellapp_index(&c, r[j].name), WAIT_MS);
    int wc = -1;
    for (int j = 0; j < 3; j++)
        if (cw_holds(&r[j], -10, -10))
            wc = cw_cellapp_index(&c, r[j].name);
    cw_wait_real_on(&c, w, wc, WAIT_MS);
    /* w watches: it sees every quarter's real, across the boundaries */
    rc_entity_call(&c, c.cell_name[wc], w, "watch", "[1, 0, 0]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    for (int i = 0; i < NQ; i++)
        cw_wait_in_view(&c, c.cell_name[wc], w, q[i], WAIT_MS);

    /* the victim: a cellapp serving a quarter whose real is not w's neighbour cellapp */
    int victim = -1;
    for (int j = 0; j < 3 && victim < 0; j++) {
        int i = cw_cellapp_index(&c, r[j].name);
        if (i != wc && r[j].z0 == 0)
            victim = i;
    }
    if (victim < 0)
        for (int j = 0; j < 3 && victim < 0; j++)
            if (cw_cellapp_index(&c, r[j].name) != wc)
                victim = cw_cellapp_index(&c, r[j].name);
    ck_assert_int_ge(victim, 0);
    long long merges = rc_int(&c, "manager", "cells/merges");
    cw_kill_cellapp(&c, victim);
    ck_assert(rc_wait_int_at_least(&c, "manager", "cells/merges", merges + 1, WAIT_MS));

    /* two cells cover the plane: every point of a grid in exactly one */
    int n = cw_layout(&c, space, r, 8);
    ck_assert_int_eq(n, 2);
    for (float x = -1000; x <= 1000; x += 50)
        for (float z = -1000; z <= 1000; z += 50) {
            int in = 0;
            for (int j = 0; j < n; j++)
                in += cw_holds(&r[j], x, z);
            ck_assert_msg(in == 1, "(%g, %g) lies in %d cells", x, z, in);
        }
    for (int j = 0; j < n; j++)
        ck_assert_int_ne(cw_cellapp_index(&c, r[j].name), victim);
    /* every real back once, on the cellapp whose cell holds it, where it was */
    for (int i = 0; i < NQ; i++) {
        int at = -1;
        for (int j = 0; j < n; j++)
            if (cw_holds(&r[j], qx[i], qz[i]))
                at = cw_cellapp_index(&c, r[j].name);
        ck_assert_int_ge(at, 0);
        cw_wait_real_on(&c, q[i], at, WAIT_MS);
        char pos[64];
        snprintf(p, sizeof p, "entities/%d/position", (int)q[i]);
        snprintf(pos, sizeof pos, "%g 0 %g", qx[i], qz[i]);
        cw_wait_value(&c, c.cell_name[at], p, pos, WAIT_MS);
    }
    /* the witness's view is whole again */
    cw_wait_real_on(&c, w, wc, WAIT_MS);
    for (int i = 0; i < NQ; i++)
        cw_wait_in_view(&c, c.cell_name[wc], w, q[i], WAIT_MS);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/conflicts"), 0);
    ck_assert_int_eq(rc_int(&c, "baseapp01", "cells/lost/refused"), 0);
    ck_assert_int_ge(rc_int(&c, "baseapp01", "cells/restored"), 1);
    rc_stop(&c);
}
END_TEST

START_TEST(a_retiring_cellapp_hands_its_cell_and_reals_to_its_neighbour)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    fixed_cells(&c);
    int h;
    int32_t space, ids[NP];
    five_probes(&c, ids, &h, &space);
    int b = 1 - h;
    char sp[32], out[4096];
    snprintf(sp, sizeof sp, "%d", (int)space);
    ck_assert_msg(rc_call(&c, out, sizeof out, "manager", "command/splitSpace", sp,
                          c.cell_name[b], "0") == 0,
                  "%s", out);
    for (int i = 0; i < NP; i++)
        cw_wait_real_on(&c, ids[i], xs[i] >= 0 ? b : h, WAIT_MS);
    /* a witness on A sees B's reals through their ghosts */
    rc_entity_call(&c, c.cell_name[h], ids[1], "watch", "[1, 0, 0]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    cw_wait_in_view(&c, c.cell_name[h], ids[1], ids[2], WAIT_MS);

    /* B stops gracefully: its cell goes to A, and its reals first */
    retire(&c, b);
    ck_assert_msg(h_file_contains(c.log_cell[b], "every real handed over"), "log %s",
                  c.log_cell[b]);
    all_handed_to(&c, space, ids, h);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/conflicts"), 0);
    rc_stop(&c);
}
END_TEST

START_TEST(a_retiring_cellapp_hands_a_space_it_serves_whole_to_another)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    fixed_cells(&c);
    int h;
    int32_t space, ids[NP];
    five_probes(&c, ids, &h, &space); /* all on h, the space whole there */
    int b = 1 - h;
    char out[4096], p[128], want[256];
    /* a witness sees the others */
    rc_entity_call(&c, c.cell_name[h], ids[1], "watch", "[1, 0, 0]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    for (int i = 2; i < NP; i++)
        cw_wait_in_view(&c, c.cell_name[h], ids[1], ids[i], WAIT_MS);
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    snprintf(want, sizeof want, "%s x[-inf,inf) z[-inf,inf)", c.cell_name[h]);
    cw_wait_value(&c, "manager", p, want, WAIT_MS);

    /* h stops gracefully: the whole space goes to b, and every real moves there first */
    retire(&c, h);
    ck_assert_msg(h_file_contains(c.log_cell[h], "every real handed over"), "log %s",
                  c.log_cell[h]);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/handoffs"), 1);
    all_handed_to(&c, space, ids, b);

    /* b, the last cellapp, stops gracefully: nobody to take the space; it says so and its
     * cells go with it (their bases hear onLoseCell), as before */
    retire(&c, b);
    ck_assert_msg(h_file_contains(c.log_mgr, "no other live cellapp can take"), "log %s",
                  c.log_mgr);
    ck_assert_msg(!h_file_contains(c.log_cell[b], "not handed over within"), "log %s",
                  c.log_cell[b]);
    for (int i = 0; i < NP; i++) {
        snprintf(p, sizeof p, "entities/%d/props/events", (int)ids[i]);
        cw_wait_value(&c, "baseapp01", p, "loseCell", WAIT_MS);
    }
    ck_assert_int_eq(rc_int(&c, "manager", "cells/handoffs"), 1);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/conflicts"), 0);
    rc_stop(&c);
}
END_TEST

/* A process with one bad option: it exits non-zero with a line naming it. */
static void refused(const char *bin, const char *opt, const char *name)
{
    char b[512], log[600];
    snprintf(log, sizeof log, "%s/bad-%s.log", h_tmpdir(), bin);
    char *argv[] = {(char *)h_bin(bin, b, sizeof b), (char *)opt, NULL};
    pid_t pid = h_spawn(argv, log);
    ck_assert_int_gt(pid, 0);
    int rc = h_wait_exit(pid, 20000);
    ck_assert_msg(rc == 1, "%s %s: exit %d (log %s)", bin, opt, rc, log);
    ck_assert_msg(h_file_contains(log, name), "%s %s: no '%s' in %s", bin, opt, name, log);
}

START_TEST(bad_options_are_refused)
{
    refused("manager", "--cellSplitLoad=0", "--cellSplitLoad");
    refused("manager", "--cellMergeLoad=0.5", "--cellMergeLoad");
    refused("manager", "--cellAutoMs=5", "--cellAutoMs");
    refused("manager", "--cellMergeHoldMs=10", "--cellMergeHoldMs");
    refused("manager", "--cellSplitMinReals=1", "--cellSplitMinReals");
    refused("cellapp", "--retireMs=600001", "--retireMs");
    refused("cellapp", "--ghostCallRing=65537", "--ghostCallRing:");
    refused("cellapp", "--ghostCallRingBytes=16777217", "--ghostCallRingBytes");
    refused("cellapp", "--ghostCallRingMs=0", "--ghostCallRingMs");
    refused("cellapp", "--ghostCallRingTotalBytes=4294967296", "--ghostCallRingTotalBytes");
    refused("cellapp", "--aoiMaxRadius=2000001", "--aoiMaxRadius");
    refused("cellapp", "--testGhostCallDelayMs=60001", "--testGhostCallDelayMs");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cell_autosplit");
    TCase *t = tcase_create("cells");
    tcase_set_timeout(t, 280);
    tcase_add_test(t, a_busy_space_splits_by_itself_and_merges_back_when_idle);
    tcase_add_test(t, a_cellapp_born_into_a_live_cluster_takes_a_share);
    tcase_add_test(t, a_dead_cellapps_cell_merges_and_its_reals_come_back_in_their_cells);
    tcase_add_test(t, a_retiring_cellapp_hands_its_cell_and_reals_to_its_neighbour);
    tcase_add_test(t, a_retiring_cellapp_hands_a_space_it_serves_whole_to_another);
    tcase_add_test(t, bad_options_are_refused);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return h_run_suite(suite()); }
