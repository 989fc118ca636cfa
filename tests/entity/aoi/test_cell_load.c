/* Load balancing per cell, not per cellapp (docs/WORLD.md "Load balancing", "Automatic
 * splits"), through real processes: a manager, a baseapp and one or two cellapps running the
 * Probe game, driven through the watcher tool; every process is killed by the harness at
 * exit, also on failure. The work is real: a Probe's `burn` timer spends a fraction of every
 * 0.1 s on the CPU in its cell's onTimer, work its cellapp counts for that Probe's space.
 * Conditions are polled, never waited for blindly.
 *
 *   a_busy_cell_moves_its_own_boundary_not_the_idle_spaces
 *       two spaces, each split at x = 0 over the same two cellapps; a Probe in one space
 *       burns 80% of a core on cellapp A: that space's boundary moves into A's side, step
 *       after step, while the other space's boundary, whose cells are both idle, stays at 0
 *       (with per-cellapp loads it moved as well: A is busy); the loads show at the manager
 *       (cells/loads/<space>) and at the cellapp (spaces/<id>/load)
 *   a_busy_cellapp_splits_its_costliest_cell_not_its_most_crowded
 *       one cellapp serving two spaces whole: a busy one (four reals, one burning) and an
 *       idle, more crowded one (five reals); the cellapp overloaded (cells/tickLoadBoost)
 *       with nowhere to go; a second cellapp started: the manager gives it half of the busy
 *       space's cell (at its reals' median), and the crowded idle space stays whole (with
 *       per-cellapp reports the most crowded space was split) */
#include "harness.h"
#include "cells_watch.h"
#include "rules_cluster.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 60000

/* A Probe with a cell next to `near` (in its space), real on `holder`, moved to x, z = 0. */
static int32_t probe_near(rc_cluster *c, int32_t near, int holder, float x)
{
    int32_t id = cw_probe_near(c, near, "q", WAIT_MS);
    cw_wait_real_on(c, id, holder, WAIT_MS);
    cw_move_real(c, id, x, 0);
    return id;
}

START_TEST(a_busy_cell_moves_its_own_boundary_not_the_idle_spaces)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    cw_set(&c, "manager", "cells/balanceMs", "0");
    cw_set(&c, "manager", "cells/auto/checkMs", "0"); /* no automatic split or merge */
    int32_t sp[2], burner = 0;
    int holder[2];
    char ssp[2][16], p[128], out[512];
    for (int s = 0; s < 2; s++) {
        int32_t id = cw_probe_in_new_space(&c, "p", &holder[s], &sp[s], WAIT_MS);
        if (s == 0)
            burner = id;
        /* at x = -20: in the lower cell, kept by its holder after the split */
        cw_move_real(&c, id, -20, 0);
        snprintf(ssp[s], sizeof ssp[s], "%d", (int)sp[s]);
        const char *other = c.cell_name[1 - holder[s]];
        ck_assert_msg(rc_call(&c, out, sizeof out, "manager", "command/splitSpace", ssp[s], other,
                              "0") == 0,
                      "%s", out);
        snprintf(p, sizeof p, "spaces/%d/cell", (int)sp[s]);
        cw_wait_value(&c, other, p, "x[0,inf)", WAIT_MS);
        cw_wait_value(&c, c.cell_name[holder[s]], p, "x[-inf,0)", WAIT_MS);
    }
    ck_assert_int_ne(sp[0], sp[1]);
    const char *A = c.cell_name[holder[0]];
    /* the burner's cell on A costs 80% of a core; everything else is idle */
    cw_real_call(&c, burner, "burn", "[0.8]");
    snprintf(p, sizeof p, "spaces/%d/load", (int)sp[0]);
    cw_wait_f_at_least(&c, A, p, 0.3, WAIT_MS);
    snprintf(p, sizeof p, "cells/loads/%d", (int)sp[0]);
    cw_wait_value(&c, "manager", p, A, WAIT_MS);
    cw_set(&c, "manager", "cells/balanceMs", "250");
    /* the busy space's boundary moves into A's side, 2 m a step, until it is at -8 or
     * below; then the idle space's is where it was */
    float at = 0;
    for (int waited = 0; waited < WAIT_MS; waited += 100) {
        if ((at = cw_x_max_of(&c, sp[0], A)) <= -8)
            break;
        h_sleep_ms(100);
    }
    float idle_at = cw_x_max_of(&c, sp[1], c.cell_name[holder[1]]);
    cw_set(&c, "manager", "cells/balanceMs", "0");
    char loads[2][512];
    for (int s = 0; s < 2; s++) {
        snprintf(p, sizeof p, "cells/loads/%d", (int)sp[s]);
        rc_value(&c, "manager", p, loads[s], sizeof loads[s]);
    }
    ck_assert_msg(at <= -8, "the busy space's boundary is at %g (loads %s)", at, loads[0]);
    ck_assert_msg(idle_at == 0, "the idle space's boundary moved to %g (loads %s; busy: %s)",
                  idle_at, loads[1], loads[0]);
    ck_assert_int_ge(rc_int(&c, "manager", "cells/balanceMoves"), 4);
    /* A's cell of the idle space is idle at A too */
    snprintf(p, sizeof p, "spaces/%d/load", (int)sp[1]);
    ck_assert_msg(cw_value_f(&c, A, p) < 0.1, "%s %s: %g", A, p, cw_value_f(&c, A, p));
    cw_real_call(&c, burner, "burn", "[0]");
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/loadsRefused"), 0);
    rc_stop(&c);
}
END_TEST

START_TEST(a_busy_cellapp_splits_its_costliest_cell_not_its_most_crowded)
{
    rc_cluster c;
    rc_start(&c, 1, 1);
    cw_set(&c, "manager", "cells/balanceMs", "0");
    cw_set(&c, "manager", "cells/auto/splitMinReals", "4");
    cw_set(&c, "manager", "cells/auto/splitHoldMs", "1000");
    /* one split only: the next (the crowded space, A still busy) would follow a gap later */
    cw_set(&c, "manager", "cells/auto/gapMs", "3600000");
    cw_set(&c, "cellapp01", "ghosts/offloadHysteresis", "0");
    /* the busy space: four reals, the one at -30 burning; the crowded one: five, idle */
    const float busy_xs[4] = {-30, -20, 10, 20}, crowd_xs[5] = {-30, -20, 10, 20, 30};
    int h;
    int32_t busy, crowd, ids[4];
    ids[0] = cw_probe_in_new_space(&c, "p", &h, &busy, WAIT_MS);
    cw_move_real(&c, ids[0], -30, 0);
    for (int i = 1; i < 4; i++)
        ids[i] = probe_near(&c, ids[0], 0, busy_xs[i]);
    int32_t first = cw_probe_in_new_space(&c, "p", &h, &crowd, WAIT_MS);
    ck_assert_int_eq(h, 0);
    ck_assert_int_ne(busy, crowd);
    cw_move_real(&c, first, -30, 0);
    for (int i = 1; i < 5; i++)
        probe_near(&c, first, 0, crowd_xs[i]);
    cw_real_call(&c, ids[0], "burn", "[0.5]");
    char p[128], want[256];
    snprintf(p, sizeof p, "spaces/%d/load", (int)busy);
    cw_wait_f_at_least(&c, "cellapp01", p, 0.2, WAIT_MS);
    /* overloaded, and nowhere to go */
    cw_set(&c, "cellapp01", "cells/tickLoadBoost", "5");
    long long no_target = rc_int(&c, "manager", "cells/auto/noTarget");
    ck_assert(rc_wait_int_at_least(&c, "manager", "cells/auto/noTarget", no_target + 2, WAIT_MS));
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/splits"), 0);

    int b = rc_add_cellapp(&c);
    snprintf(p, sizeof p, "cells/spaces/%d", (int)busy);
    snprintf(want, sizeof want, "%s x[-5,inf) z[-inf,inf)", c.cell_name[b]);
    cw_wait_value(&c, "manager", p, want, WAIT_MS);
    for (int i = 0; i < 4; i++)
        cw_wait_real_on(&c, ids[i], busy_xs[i] >= 10 ? b : 0, WAIT_MS);
    /* the crowded idle space stays whole on cellapp01 */
    char v[1024];
    snprintf(p, sizeof p, "cells/spaces/%d", (int)crowd);
    rc_value(&c, "manager", p, v, sizeof v);
    ck_assert_msg(strstr(v, "cellapp01 x[-inf,inf) z[-inf,inf)") && !strchr(v, ';'),
                  "the crowded idle space was split: %s", v);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/splits"), 1);
    cw_set(&c, "cellapp01", "cells/tickLoadBoost", "0");
    cw_real_call(&c, ids[0], "burn", "[0]");
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/loadsRefused"), 0);
    rc_stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cell_load");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, a_busy_cell_moves_its_own_boundary_not_the_idle_spaces);
    tcase_add_test(tc, a_busy_cellapp_splits_its_costliest_cell_not_its_most_crowded);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
