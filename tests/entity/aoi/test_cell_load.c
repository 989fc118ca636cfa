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
#include "rules_cluster.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 60000

static void set(rc_cluster *c, const char *proc, const char *path, const char *value)
{
    char v[512];
    int rc = h_watcher(v, sizeof v, c->manager, "set", proc, path, value, NULL);
    ck_assert_msg(rc == 0, "set %s %s %s: %s", proc, path, value, v);
}

static void wait_value(rc_cluster *c, const char *proc, const char *path, const char *want)
{
    if (!rc_wait_value(c, proc, path, want, WAIT_MS)) {
        char v[4096] = "";
        rc_get(c, v, sizeof v, proc, path);
        ck_abort_msg("%s %s: no '%s' in %s", proc, path, want, v);
    }
}

static double value_f(rc_cluster *c, const char *proc, const char *path)
{
    char v[256];
    rc_value(c, proc, path, v, sizeof v);
    return strtod(v, NULL);
}

/* Poll until the float at path is at least min. */
static void wait_f_at_least(rc_cluster *c, const char *proc, const char *path, double min)
{
    double v = 0;
    for (int waited = 0; waited < WAIT_MS; waited += 100) {
        if ((v = value_f(c, proc, path)) >= min)
            return;
        h_sleep_ms(100);
    }
    ck_abort_msg("%s %s: %g, want at least %g", proc, path, v, min);
}

/* The cellapp (index) holding id's real; -1 when none or two (a move under way). */
static int real_of(rc_cluster *c, int32_t id)
{
    char p[96], v[512];
    snprintf(p, sizeof p, "entities/%d/real", (int)id);
    int found = -1;
    for (int i = 0; i < c->ncell; i++) {
        if (c->cell[i] <= 0 || rc_get(c, v, sizeof v, c->cell_name[i], p) != 0)
            continue;
        const char *val = strstr(v, p);
        if (!val)
            continue;
        val += strlen(p);
        while (*val == ' ')
            val++;
        if (strncmp(val, "here", 4) == 0 && (val[4] == '\n' || val[4] == '\0')) {
            if (found >= 0)
                return -1;
            found = i;
        }
    }
    return found;
}

static void wait_real_on(rc_cluster *c, int32_t id, int want)
{
    for (int waited = 0; waited < WAIT_MS; waited += 100) {
        if (real_of(c, id) == want)
            return;
        h_sleep_ms(100);
    }
    ck_abort_msg("entity %d is not real on %s only", (int)id, c->cell_name[want]);
}

static void cell_call(rc_cluster *c, int32_t id, const char *method, const char *args)
{
    int at = real_of(c, id);
    ck_assert_msg(at >= 0, "entity %d is real nowhere", (int)id);
    char out[256];
    rc_entity_call(c, c->cell_name[at], id, method, args, out, sizeof out);
    ck_assert_msg(strcmp(out, "[0]") == 0 || strcmp(out, "[]") == 0, "%s %s: %s", method, args,
                  out);
}

/* A Probe with a cell in a new space: its id, the cellapp holding it, its space. */
static int32_t probe_in_new_space(rc_cluster *c, int *holder, int32_t *space)
{
    int32_t id = rc_create_probe(c, "baseapp01", "p");
    char out[512], p[96], v[4096];
    rc_entity_call(c, "baseapp01", id, "makeCell", "[null]", out, sizeof out);
    ck_assert_str_eq(out, "[]");
    snprintf(p, sizeof p, "entities/%d/props/events", (int)id);
    ck_assert_msg(rc_wait_value(c, "baseapp01", p, "getCell;", WAIT_MS), "no cell for %d",
                  (int)id);
    snprintf(p, sizeof p, "entities/%d/space", (int)id);
    for (int i = 0; i < c->ncell; i++)
        if (rc_get(c, v, sizeof v, c->cell_name[i], p) == 0) {
            *holder = i;
            *space = (int32_t)rc_int(c, c->cell_name[i], p);
            wait_real_on(c, id, i);
            return id;
        }
    ck_abort_msg("no cellapp holds entity %d", (int)id);
    return 0;
}

/* A Probe with a cell next to `near` (in its space), at x, z = 0. */
static int32_t probe_near(rc_cluster *c, int32_t near, int holder, float x)
{
    char v[512], args[600], out[256], p[96];
    rc_entity_call(c, "baseapp01", near, "cellMailbox", NULL, v, sizeof v);
    ck_assert_msg(v[0] == '[' && strstr(v, "\"CELL\""), "cellMailbox: %s", v);
    v[strlen(v) - 1] = '\0';
    int32_t id = rc_create_probe(c, "baseapp01", "q");
    snprintf(args, sizeof args, "[%s]", v + 1);
    rc_entity_call(c, "baseapp01", id, "makeCell", args, out, sizeof out);
    snprintf(p, sizeof p, "entities/%d/props/events", (int)id);
    ck_assert_msg(rc_wait_value(c, "baseapp01", p, "getCell;", WAIT_MS), "no cell for %d",
                  (int)id);
    wait_real_on(c, id, holder);
    snprintf(args, sizeof args, "[%g, 0]", x);
    cell_call(c, id, "moveTo", args);
    return id;
}

/* The upper bound on x of `name`'s cell in the manager's layout of space ("cellapp01
 * x[-inf,-4) z[-inf,inf); cellapp02 x[-4,inf) ..."); fails when it has none. */
static float x_max_of(rc_cluster *c, int32_t space, const char *name)
{
    char p[64], v[4096], key[32];
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    rc_value(c, "manager", p, v, sizeof v);
    snprintf(key, sizeof key, "%s x[", name);
    const char *s = strstr(v, key);
    ck_assert_msg(s, "%s has no cell of space %d: %s", name, (int)space, v);
    s = strchr(s + strlen(key), ',');
    ck_assert_ptr_nonnull(s);
    return strtof(s + 1, NULL);
}

START_TEST(a_busy_cell_moves_its_own_boundary_not_the_idle_spaces)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    set(&c, "manager", "cells/balanceMs", "0");
    set(&c, "manager", "cells/auto/checkMs", "0"); /* no automatic split or merge */
    int32_t sp[2], burner = 0;
    int holder[2];
    char ssp[2][16], p[128], out[512];
    for (int s = 0; s < 2; s++) {
        int32_t id = probe_in_new_space(&c, &holder[s], &sp[s]);
        if (s == 0)
            burner = id;
        /* at x = -20: in the lower cell, kept by its holder after the split */
        cell_call(&c, id, "moveTo", "[-20, 0]");
        snprintf(ssp[s], sizeof ssp[s], "%d", (int)sp[s]);
        const char *other = c.cell_name[1 - holder[s]];
        ck_assert_msg(rc_call(&c, out, sizeof out, "manager", "command/splitSpace", ssp[s], other,
                              "0") == 0,
                      "%s", out);
        snprintf(p, sizeof p, "spaces/%d/cell", (int)sp[s]);
        wait_value(&c, other, p, "x[0,inf)");
        wait_value(&c, c.cell_name[holder[s]], p, "x[-inf,0)");
    }
    ck_assert_int_ne(sp[0], sp[1]);
    const char *A = c.cell_name[holder[0]];
    /* the burner's cell on A costs 80% of a core; everything else is idle */
    cell_call(&c, burner, "burn", "[0.8]");
    snprintf(p, sizeof p, "spaces/%d/load", (int)sp[0]);
    wait_f_at_least(&c, A, p, 0.3);
    snprintf(p, sizeof p, "cells/loads/%d", (int)sp[0]);
    wait_value(&c, "manager", p, A);
    set(&c, "manager", "cells/balanceMs", "250");
    /* the busy space's boundary moves into A's side, 2 m a step, until it is at -8 or
     * below; then the idle space's is where it was */
    float at = 0;
    for (int waited = 0; waited < WAIT_MS; waited += 100) {
        if ((at = x_max_of(&c, sp[0], A)) <= -8)
            break;
        h_sleep_ms(100);
    }
    float idle_at = x_max_of(&c, sp[1], c.cell_name[holder[1]]);
    set(&c, "manager", "cells/balanceMs", "0");
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
    ck_assert_msg(value_f(&c, A, p) < 0.1, "%s %s: %g", A, p, value_f(&c, A, p));
    cell_call(&c, burner, "burn", "[0]");
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/loadsRefused"), 0);
    rc_stop(&c);
}
END_TEST

START_TEST(a_busy_cellapp_splits_its_costliest_cell_not_its_most_crowded)
{
    rc_cluster c;
    rc_start(&c, 1, 1);
    set(&c, "manager", "cells/balanceMs", "0");
    set(&c, "manager", "cells/auto/splitMinReals", "4");
    set(&c, "manager", "cells/auto/splitHoldMs", "1000");
    /* one split only: the next (the crowded space, A still busy) would follow a gap later */
    set(&c, "manager", "cells/auto/gapMs", "3600000");
    set(&c, "cellapp01", "ghosts/offloadHysteresis", "0");
    /* the busy space: four reals, the one at -30 burning; the crowded one: five, idle */
    const float busy_xs[4] = {-30, -20, 10, 20}, crowd_xs[5] = {-30, -20, 10, 20, 30};
    int h;
    int32_t busy, crowd, ids[4];
    ids[0] = probe_in_new_space(&c, &h, &busy);
    cell_call(&c, ids[0], "moveTo", "[-30, 0]");
    for (int i = 1; i < 4; i++)
        ids[i] = probe_near(&c, ids[0], 0, busy_xs[i]);
    int32_t first = probe_in_new_space(&c, &h, &crowd);
    ck_assert_int_eq(h, 0);
    ck_assert_int_ne(busy, crowd);
    cell_call(&c, first, "moveTo", "[-30, 0]");
    for (int i = 1; i < 5; i++)
        probe_near(&c, first, 0, crowd_xs[i]);
    cell_call(&c, ids[0], "burn", "[0.5]");
    char p[128], want[256];
    snprintf(p, sizeof p, "spaces/%d/load", (int)busy);
    wait_f_at_least(&c, "cellapp01", p, 0.2);
    /* overloaded, and nowhere to go */
    set(&c, "cellapp01", "cells/tickLoadBoost", "5");
    long long no_target = rc_int(&c, "manager", "cells/auto/noTarget");
    ck_assert(rc_wait_int_at_least(&c, "manager", "cells/auto/noTarget", no_target + 2, WAIT_MS));
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/splits"), 0);

    int b = rc_add_cellapp(&c);
    snprintf(p, sizeof p, "cells/spaces/%d", (int)busy);
    snprintf(want, sizeof want, "%s x[-5,inf) z[-inf,inf)", c.cell_name[b]);
    wait_value(&c, "manager", p, want);
    for (int i = 0; i < 4; i++)
        wait_real_on(&c, ids[i], busy_xs[i] >= 10 ? b : 0);
    /* the crowded idle space stays whole on cellapp01 */
    char v[1024];
    snprintf(p, sizeof p, "cells/spaces/%d", (int)crowd);
    rc_value(&c, "manager", p, v, sizeof v);
    ck_assert_msg(strstr(v, "cellapp01 x[-inf,inf) z[-inf,inf)") && !strchr(v, ';'),
                  "the crowded idle space was split: %s", v);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/auto/splits"), 1);
    set(&c, "cellapp01", "cells/tickLoadBoost", "0");
    cell_call(&c, ids[0], "burn", "[0]");
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
