/* Cells through real processes (a manager, a baseapp and two cellapps running the Probe
 * game; docs/WORLD.md "Cells"): a space starts as one cell on the cellapp that holds it; the
 * operator's command/splitSpace gives the other cellapp the half x >= 0 (or x >= AT), both
 * cellapps hear the layout (their own cell and their neighbour's), the new one keeps the
 * space while it is empty, and each counts its entities outside its cell; bad splits are
 * refused; the other cellapp's death merges its cell back; the last entity's going ends the
 * space on both cellapps and at the manager. */
#include "harness.h"
#include "rules_cluster.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 20000

static void wait_value(rc_cluster *c, const char *proc, const char *path, const char *want)
{
    if (!rc_wait_value(c, proc, path, want, WAIT_MS)) {
        char v[4096] = "";
        rc_get(c, v, sizeof v, proc, path);
        ck_abort_msg("%s %s: no '%s' in %s", proc, path, want, v);
    }
}

/* Poll until proc's integer at path equals want. */
static void wait_int_eq(rc_cluster *c, const char *proc, const char *path, long long want)
{
    for (int waited = 0; waited < WAIT_MS; waited += 50) {
        char v[256];
        if (rc_get(c, v, sizeof v, proc, path) == 0 && rc_int(c, proc, path) == want)
            return;
        h_sleep_ms(50);
    }
    ck_abort_msg("%s %s: %lld, want %lld", proc, path, rc_int(c, proc, path), want);
}

/* A Probe with a cell in a new space: its id, the cellapp holding it (index), its space. */
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
            return id;
        }
    ck_abort_msg("no cellapp holds entity %d", (int)id);
    return 0;
}

static int split(rc_cluster *c, char *out, size_t n, const char *space, const char *to,
                 const char *at)
{
    return rc_call(c, out, n, "manager", "command/splitSpace", space, to, at);
}

START_TEST(a_space_splits_onto_the_other_cellapp_and_merges_back_when_it_dies)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    int h;
    int32_t space;
    int32_t a = probe_in_new_space(&c, &h, &space);
    const char *A = c.cell_name[h], *B = c.cell_name[1 - h];
    char sp[32], p[128], want[256], out[4096];
    snprintf(sp, sizeof sp, "%d", (int)space);

    /* one cell, the whole plane, on the cellapp holding it */
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    snprintf(want, sizeof want, "%s x[-inf,inf) z[-inf,inf)", A);
    wait_value(&c, "manager", p, want);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    wait_value(&c, A, p, "whole");
    snprintf(p, sizeof p, "spaces/%d/outsideCell", (int)space);
    ck_assert_int_eq(rc_int(&c, A, p), 0);

    /* bad splits are refused */
    ck_assert_int_ne(split(&c, out, sizeof out, "abc", NULL, NULL), 0);
    ck_assert_int_ne(split(&c, out, sizeof out, "999999", NULL, NULL), 0);
    ck_assert_msg(strstr(out, "no space"), "%s", out);
    ck_assert_int_ne(split(&c, out, sizeof out, sp, "baseapp01", NULL), 0);
    ck_assert_msg(strstr(out, "not a live cellapp"), "%s", out);
    ck_assert_int_ne(split(&c, out, sizeof out, sp, A, NULL), 0);
    ck_assert_msg(strstr(out, "serves the space already"), "%s", out);
    ck_assert_int_ne(split(&c, out, sizeof out, sp, B, "nan"), 0);

    /* split at x = 10: B serves x >= 10 */
    ck_assert_msg(split(&c, out, sizeof out, sp, B, "10") == 0, "%s", out);
    snprintf(want, sizeof want, "%s serves x[10,inf) z[-inf,inf)", B);
    ck_assert_msg(strstr(out, want), "%s", out);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    wait_value(&c, A, p, "x[-inf,10) z[-inf,inf)");
    wait_value(&c, B, p, "x[10,inf) z[-inf,inf)");
    snprintf(p, sizeof p, "spaces/%d/cells", (int)space);
    ck_assert_int_eq(rc_int(&c, A, p), 2);
    ck_assert_int_eq(rc_int(&c, B, p), 2);
    snprintf(p, sizeof p, "spaces/%d/neighbours", (int)space);
    wait_value(&c, A, p, c.cell_addr[1 - h]);
    wait_value(&c, B, p, c.cell_addr[h]);
    /* B keeps the space although nothing is in it */
    snprintf(p, sizeof p, "spaces/%d/entities", (int)space);
    ck_assert_int_eq(rc_int(&c, B, p), 0);
    ck_assert_int_ge(rc_int(&c, "manager", "cells/splits"), 1);
    ck_assert_int_ge(rc_int(&c, "manager", "cells/layoutsSent"), 2);
    ck_assert_int_ge(rc_int(&c, A, "cells/layouts"), 1);
    ck_assert_int_ge(rc_int(&c, B, "cells/layouts"), 1);

    /* the entity walks into B's cell: A counts it outside its own */
    char args[64];
    snprintf(args, sizeof args, "[25, 3]");
    rc_entity_call(&c, A, a, "moveTo", args, out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    snprintf(p, sizeof p, "spaces/%d/outsideCell", (int)space);
    ck_assert_int_eq(rc_int(&c, A, p), 1);
    rc_entity_call(&c, A, a, "moveTo", "[-5, 3]", out, sizeof out);
    ck_assert_int_eq(rc_int(&c, A, p), 0);

    /* B dies: its cell merges into A's, which is whole again */
    h_kill(c.cell[1 - h], SIGKILL);
    ck_assert_int_ge(h_wait_exit(c.cell[1 - h], 10000), -1);
    c.cell[1 - h] = -1;
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    snprintf(want, sizeof want, "%s x[-inf,inf) z[-inf,inf)", A);
    wait_value(&c, "manager", p, want);
    snprintf(p, sizeof p, "spaces/%d/cells", (int)space);
    wait_int_eq(&c, A, p, 1);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    wait_value(&c, A, p, "x[-inf,inf) z[-inf,inf)");
    ck_assert_int_ge(rc_int(&c, "manager", "cells/merges"), 1);
    ck_assert_int_eq(rc_int(&c, A, "cells/malformed"), 0);
    rc_stop(&c);
}
END_TEST

START_TEST(the_last_entity_going_ends_the_space_on_both_cellapps)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    int h;
    int32_t space;
    int32_t a = probe_in_new_space(&c, &h, &space);
    const char *A = c.cell_name[h], *B = c.cell_name[1 - h];
    char sp[32], p[128], out[4096];
    snprintf(sp, sizeof sp, "%d", (int)space);
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    wait_value(&c, "manager", p, A);
    /* default: the least loaded cellapp not serving it (B), at x = 0 */
    ck_assert_msg(split(&c, out, sizeof out, sp, NULL, NULL) == 0, "%s", out);
    ck_assert_msg(strstr(out, B) && strstr(out, "x[0,inf)"), "%s", out);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    wait_value(&c, B, p, "x[0,inf) z[-inf,inf)");
    ck_assert_int_eq(rc_int(&c, B, "spaces/count"), 1);
    /* no other cellapp left to split onto */
    ck_assert_int_ne(split(&c, out, sizeof out, sp, NULL, NULL), 0);
    ck_assert_msg(strstr(out, "every live cellapp serves"), "%s", out);

    /* the only entity goes: A's part is empty, so is B's: the manager ends the space and
     * both let it go */
    rc_entity_call(&c, "baseapp01", a, "dropCell", NULL, out, sizeof out);
    wait_int_eq(&c, A, "spaces/count", 0);
    wait_int_eq(&c, B, "spaces/count", 0);
    wait_int_eq(&c, "manager", "cells/spaceCount", 0);
    ck_assert_int_ge(rc_int(&c, A, "cells/notices"), 2); /* entities here, empty */
    ck_assert_int_ge(rc_int(&c, B, "cells/notices"), 1); /* gone */
    ck_assert_int_eq(rc_int(&c, "manager", "cells/ended"), 1);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/noticesRefused"), 0);
    rc_stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("entity_cells");
    TCase *tc = tcase_create("cells");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, a_space_splits_onto_the_other_cellapp_and_merges_back_when_it_dies);
    tcase_add_test(tc, the_last_entity_going_ends_the_space_on_both_cellapps);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
