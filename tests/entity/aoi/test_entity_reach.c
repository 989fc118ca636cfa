/* Witnesses that see farther than the ghost distance, through real processes (a manager, a
 * baseapp and two cellapps running the Probe game; docs/WORLD.md "Witnesses that see far"):
 * a space split at x = 0, a witness on the x < 0 side near the boundary with a radius three
 * times the cellapps' (--aoiRadius 50), reals on the other side at 45, 100, 145 and 205 m
 * from it. Its cellapp tells the other the reach of its cell (GHOST_REACH), the other
 * ghosts its reals that far, and the witness's view holds exactly the entities within its
 * radius: its view equals what entitiesInRange finds there (reals and ghosts in range), and
 * both equal the truth. Its radius set back: the reach shrinks after its hold and the far
 * ghosts go. A radius beyond --aoiMaxRadius is refused and counted. */
#include "harness.h"
#include "cells_watch.h"
#include "rules_cluster.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 20000

static int by_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The ids in text (separated by anything not a digit), sorted, as "1 2 3". */
static void id_set(const char *text, char *out, size_t n)
{
    int32_t ids[64];
    size_t k = 0;
    for (const char *s = text; *s && k < 64;) {
        if (*s >= '0' && *s <= '9') {
            char *end;
            ids[k++] = (int32_t)strtol(s, &end, 10);
            s = end;
        } else {
            s++;
        }
    }
    qsort(ids, k, sizeof ids[0], by_id);
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < k && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s%d", i ? " " : "", (int)ids[i]);
}

/* Poll until the witness's view (on proc) is exactly the ids in want ("1 2 3", sorted). */
static void wait_view(rc_cluster *c, const char *proc, int32_t w, const char *want)
{
    char p[96], v[4096] = "", got[1024] = "";
    cw_path(p, sizeof p, w, "aoi/viewIds");
    for (int waited = 0; waited < WAIT_MS; waited += 50) {
        rc_value(c, proc, p, v, sizeof v);
        id_set(v, got, sizeof got);
        if (strcmp(got, want) == 0)
            return;
        h_sleep_ms(50);
    }
    ck_abort_msg("%s: the view of %d is '%s', want '%s'", proc, (int)w, got, want);
}

START_TEST(a_witness_seeing_three_times_the_radius_sees_everything_in_it_across_the_boundary)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    char v[4096], p[128], out[4096], args[8192], cell_a[4096], sp[32];
    /* boundaries stay where they are split */
    cw_set(&c, "manager", "cells/balanceMs", "0");
    /* a: the witness, in a new space */
    int h;
    int32_t space;
    int32_t a = cw_probe_in_new_space(&c, "a", &h, &space, WAIT_MS);
    const char *A = c.cell_name[h], *B = c.cell_name[1 - h];
    snprintf(sp, sizeof sp, "%d", (int)space);
    rc_entity_call(&c, A, a, "moveTo", "[-5, 0]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");

    /* the split: B serves x >= 0 */
    ck_assert_msg(rc_call(&c, out, sizeof out, "manager", "command/splitSpace", sp, B, "0") == 0,
                  "%s", out);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    cw_wait_value(&c, A, p, "x[-inf,0) z[-inf,inf)", WAIT_MS);
    cw_wait_value(&c, B, p, "x[0,inf) z[-inf,inf)", WAIT_MS);

    /* four reals made next to a and walked into B's cell (offloaded there): 45, 100, 145
     * and 205 m from a; a's cellapp's ghost distance is 50 + 5 + 10 = 65 m */
    static const int xs[4] = {40, 95, 140, 200};
    int32_t e[4];
    cw_cell_json(&c, a, cell_a, sizeof cell_a);
    for (int i = 0; i < 4; i++) {
        e[i] = cw_probe_with_cell(&c, "e", cell_a, WAIT_MS);
        snprintf(args, sizeof args, "[%d, 0]", xs[i]);
        rc_entity_call(&c, A, e[i], "moveTo", args, out, sizeof out);
        ck_assert_str_eq(out, "[0]");
        cw_wait_real_on(&c, e[i], 1 - h, WAIT_MS);
    }
    char want[256];
    /* the cellapps' radius: a sees the nearest only */
    rc_entity_call(&c, A, a, "watch", "[1, 0, 0]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    snprintf(want, sizeof want, "%d", (int)e[0]);
    wait_view(&c, A, a, want);

    /* radius 150 (three times the cellapps'), hysteresis 5: a sees every entity within
     * 150 m, the two beyond the ghost distance included, not the one 205 m away */
    rc_entity_call(&c, A, a, "watch", "[1, 150, 5]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    int32_t in[3] = {e[0], e[1], e[2]};
    qsort(in, 3, sizeof in[0], by_id);
    snprintf(want, sizeof want, "%d %d %d", (int)in[0], (int)in[1], (int)in[2]);
    wait_view(&c, A, a, want);
    /* the view is what A holds within the radius (reals and ghosts: entitiesInRange) */
    rc_entity_call(&c, A, a, "scan", "[150, \"\"]", out, sizeof out);
    ck_assert_msg(strncmp(out, "[0, 3,", 6) == 0 || strncmp(out, "[0,3,", 5) == 0, "scan: %s",
                  out);
    char found[1024];
    id_set(strchr(strchr(out, ',') + 1, ',') + 1, found, sizeof found);
    ck_assert_str_eq(found, want);
    /* the reach told and taken; the far real not ghosted on A */
    snprintf(p, sizeof p, "spaces/%d/reach", (int)space);
    ck_assert_int_eq(rc_int(&c, A, p), 155);
    snprintf(p, sizeof p, "spaces/%d/neighbours", (int)space);
    cw_wait_value(&c, B, p, "reach 155", WAIT_MS);
    cw_path(p, sizeof p, e[3], "type");
    ck_assert_int_ne(rc_get(&c, v, sizeof v, A, p), 0);
    ck_assert_int_ge(rc_int(&c, A, "ghosts/reachSent"), 1);
    ck_assert_int_ge(rc_int(&c, B, "ghosts/reachTaken"), 1);
    ck_assert_int_eq(rc_int(&c, A, "ghosts/reachChanges"), 1);

    /* B's own limit lowered to 120 m (cellapps of different --aoiMaxRadius): A's reach of
     * 155 is clamped there to 120, counted, not refused: B ghosts its reals to A's cell
     * within 120 + 10 m, so e[2] (140 m) goes from a's view, e[0] and e[1] stay; B's limit
     * back, A's next GHOST_REACH gives 155 again and e[2] comes back */
    cw_set(&c, B, "aoi/maxRadius", "120");
    snprintf(p, sizeof p, "spaces/%d/neighbours", (int)space);
    cw_wait_value(&c, B, p, "reach 120", WAIT_MS);
    ck_assert_int_ge(rc_int(&c, B, "ghosts/reachClamped"), 1);
    cw_wait_gone(&c, A, e[2], WAIT_MS);
    {
        int32_t in01[2] = {e[0], e[1]};
        qsort(in01, 2, sizeof in01[0], by_id);
        char want01[64];
        snprintf(want01, sizeof want01, "%d %d", (int)in01[0], (int)in01[1]);
        wait_view(&c, A, a, want01);
    }
    cw_set(&c, B, "aoi/maxRadius", "500");
    cw_wait_value(&c, B, p, "reach 155", WAIT_MS);
    wait_view(&c, A, a, want);

    /* e[2] walks 8 m farther (153 m: within the hysteresis, stays), then to 176 m: leaves
     * the view, and its ghost goes beyond 155 + 10 + 5 from A's cell */
    rc_entity_call(&c, B, e[2], "moveTo", "[148, 0]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    cw_path(p, sizeof p, e[2], "position");
    cw_wait_value(&c, A, p, "148 0 0", WAIT_MS);
    wait_view(&c, A, a, want);
    rc_entity_call(&c, B, e[2], "moveTo", "[171, 0]", out, sizeof out);
    cw_wait_gone(&c, A, e[2], WAIT_MS);
    int32_t in2[2] = {e[0], e[1]};
    qsort(in2, 2, sizeof in2[0], by_id);
    snprintf(want, sizeof want, "%d %d", (int)in2[0], (int)in2[1]);
    wait_view(&c, A, a, want);

    /* beyond --aoiMaxRadius (500): refused, counted, the radius kept */
    rc_entity_call(&c, A, a, "watch", "[1, 600, 5]", out, sizeof out);
    ck_assert_str_ne(out, "[0]");
    ck_assert_int_eq(rc_int(&c, A, "aoi/radiusRefused"), 1);
    snprintf(p, sizeof p, "spaces/%d/reach", (int)space);
    ck_assert_int_eq(rc_int(&c, A, p), 155);

    /* back to the cellapps' 50 m: the reach shrinks after its hold, the far ghost goes, the near one
     * (within the ghost distance) stays */
    rc_entity_call(&c, A, a, "watch", "[1, 50, 5]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    snprintf(p, sizeof p, "spaces/%d/reach", (int)space);
    cw_wait_int_eq(&c, A, p, 0, WAIT_MS);
    cw_wait_gone(&c, A, e[1], WAIT_MS);
    cw_path(p, sizeof p, e[0], "real");
    ck_assert_int_eq(rc_get(&c, v, sizeof v, A, p), 0);
    snprintf(want, sizeof want, "%d", (int)e[0]);
    wait_view(&c, A, a, want);
    snprintf(p, sizeof p, "spaces/%d/neighbours", (int)space);
    rc_value(&c, B, p, v, sizeof v);
    ck_assert_msg(!strstr(v, "reach"), "%s", v);
    ck_assert_int_eq(rc_int(&c, A, "ghosts/reachChanges"), 2);
    ck_assert_int_eq(rc_int(&c, A, "ghosts/reachRefused"), 0);
    ck_assert_int_eq(rc_int(&c, B, "ghosts/reachRefused"), 0);
    ck_assert_int_eq(rc_int(&c, A, "ghosts/refused"), 0);
    rc_stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("entity_reach");
    TCase *tc = tcase_create("reach");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc,
                   a_witness_seeing_three_times_the_radius_sees_everything_in_it_across_the_boundary);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
