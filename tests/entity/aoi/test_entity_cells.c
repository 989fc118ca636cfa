/* Cells through real processes (a manager, a baseapp and two cellapps running the Probe
 * game; docs/WORLD.md "Cells"): a space starts as one cell on the cellapp that holds it; the
 * operator's command/splitSpace gives the other cellapp the half x >= 0 (or x >= AT), both
 * cellapps hear the layout (their own cell and their neighbour's), the new one keeps the
 * space while it is empty, and each counts its entities outside its cell; bad splits are
 * refused; the other cellapp's death merges its cell back; the last entity's going ends the
 * space on both cellapps and at the manager. With three cellapps: a real offloaded between
 * two keeps its ghost on the third (never deleted and made again, its witness never seeing
 * it leave). A ghost whose real's cellapp is silent for 10 s goes. */
#include "harness.h"
#include "cells_watch.h"
#include "rules_cluster.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 20000

static int split(rc_cluster *c, char *out, size_t n, const char *space, const char *to,
                 const char *at)
{
    return rc_call(c, out, n, "manager", "command/splitSpace", space, to, at);
}

/* Boundaries stay where they are split (no load balancing): for tests of exact positions. */
static void fixed_boundaries(rc_cluster *c) { cw_set(c, "manager", "cells/balanceMs", "0"); }

START_TEST(a_space_splits_onto_the_other_cellapp_and_merges_back_when_it_dies)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    fixed_boundaries(&c);
    int h;
    int32_t space;
    int32_t a = cw_probe_in_new_space(&c, "p", &h, &space, WAIT_MS);
    const char *A = c.cell_name[h], *B = c.cell_name[1 - h];
    char sp[32], p[128], want[256], out[4096];
    snprintf(sp, sizeof sp, "%d", (int)space);

    /* one cell, the whole plane, on the cellapp holding it */
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    snprintf(want, sizeof want, "%s x[-inf,inf) z[-inf,inf)", A);
    cw_wait_value(&c, "manager", p, want, WAIT_MS);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    cw_wait_value(&c, A, p, "whole", WAIT_MS);
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
    cw_wait_value(&c, A, p, "x[-inf,10) z[-inf,inf)", WAIT_MS);
    cw_wait_value(&c, B, p, "x[10,inf) z[-inf,inf)", WAIT_MS);
    snprintf(p, sizeof p, "spaces/%d/cells", (int)space);
    ck_assert_int_eq(rc_int(&c, A, p), 2);
    ck_assert_int_eq(rc_int(&c, B, p), 2);
    snprintf(p, sizeof p, "spaces/%d/neighbours", (int)space);
    cw_wait_value(&c, A, p, c.cell_addr[1 - h], WAIT_MS);
    cw_wait_value(&c, B, p, c.cell_addr[h], WAIT_MS);
    /* B keeps the space although no real is in it: only a's ghost (a at the origin lies
     * within the ghost distance of B's cell) */
    cw_wait_int_eq(&c, B, "ghosts/held", 1, WAIT_MS);
    snprintf(p, sizeof p, "spaces/%d/entities", (int)space);
    ck_assert_int_eq(rc_int(&c, B, p), 1);
    ck_assert_int_ge(rc_int(&c, "manager", "cells/splits"), 1);
    ck_assert_int_ge(rc_int(&c, "manager", "cells/layoutsSent"), 2);
    ck_assert_int_ge(rc_int(&c, A, "cells/layouts"), 1);
    ck_assert_int_ge(rc_int(&c, B, "cells/layouts"), 1);

    /* the entity walks into B's cell, within a hysteresis made wide: A counts it outside its
     * own and keeps it */
    cw_set(&c, A, "ghosts/offloadHysteresis", "1000");
    char args[64];
    snprintf(args, sizeof args, "[25, 3]");
    rc_entity_call(&c, A, a, "moveTo", args, out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    snprintf(p, sizeof p, "spaces/%d/outsideCell", (int)space);
    ck_assert_int_eq(rc_int(&c, A, p), 1);
    rc_entity_call(&c, A, a, "moveTo", "[-5, 3]", out, sizeof out);
    ck_assert_int_eq(rc_int(&c, A, p), 0);

    /* B dies: its cell merges into A's, which is whole again */
    cw_kill_cellapp(&c, 1 - h);
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    snprintf(want, sizeof want, "%s x[-inf,inf) z[-inf,inf)", A);
    cw_wait_value(&c, "manager", p, want, WAIT_MS);
    snprintf(p, sizeof p, "spaces/%d/cells", (int)space);
    cw_wait_int_eq(&c, A, p, 1, WAIT_MS);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    cw_wait_value(&c, A, p, "x[-inf,inf) z[-inf,inf)", WAIT_MS);
    ck_assert_int_ge(rc_int(&c, "manager", "cells/merges"), 1);
    ck_assert_int_eq(rc_int(&c, A, "cells/malformed"), 0);
    rc_stop(&c);
}
END_TEST

START_TEST(the_last_entity_going_ends_the_space_on_both_cellapps)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    fixed_boundaries(&c);
    int h;
    int32_t space;
    int32_t a = cw_probe_in_new_space(&c, "p", &h, &space, WAIT_MS);
    const char *A = c.cell_name[h], *B = c.cell_name[1 - h];
    char sp[32], p[128], out[4096];
    snprintf(sp, sizeof sp, "%d", (int)space);
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    cw_wait_value(&c, "manager", p, A, WAIT_MS);
    /* default: the least loaded cellapp not serving it (B), at x = 0 */
    ck_assert_msg(split(&c, out, sizeof out, sp, NULL, NULL) == 0, "%s", out);
    ck_assert_msg(strstr(out, B) && strstr(out, "x[0,inf)"), "%s", out);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    cw_wait_value(&c, B, p, "x[0,inf) z[-inf,inf)", WAIT_MS);
    ck_assert_int_eq(rc_int(&c, B, "spaces/count"), 1);
    /* no other cellapp left to split onto */
    ck_assert_int_ne(split(&c, out, sizeof out, sp, NULL, NULL), 0);
    ck_assert_msg(strstr(out, "every live cellapp serves"), "%s", out);

    /* the only entity goes: A's part is empty, so is B's: the manager ends the space and
     * both let it go */
    rc_entity_call(&c, "baseapp01", a, "dropCell", NULL, out, sizeof out);
    cw_wait_int_eq(&c, A, "spaces/count", 0, WAIT_MS);
    cw_wait_int_eq(&c, B, "spaces/count", 0, WAIT_MS);
    cw_wait_int_eq(&c, "manager", "cells/spaceCount", 0, WAIT_MS);
    ck_assert_int_ge(rc_int(&c, A, "cells/notices"), 2); /* entities here, empty */
    ck_assert_int_ge(rc_int(&c, B, "cells/notices"), 1); /* gone */
    ck_assert_int_eq(rc_int(&c, "manager", "cells/ended"), 1);
    ck_assert_int_eq(rc_int(&c, "manager", "cells/noticesRefused"), 0);
    rc_stop(&c);
}
END_TEST

START_TEST(reals_have_ghosts_across_the_boundary_and_calls_to_a_ghost_reach_the_real)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    fixed_boundaries(&c);
    int h;
    int32_t space;
    int32_t a = cw_probe_in_new_space(&c, "p", &h, &space, WAIT_MS);
    const char *A = c.cell_name[h], *B = c.cell_name[1 - h];
    const char *a_addr = c.cell_addr[h], *b_addr = c.cell_addr[1 - h];
    char sp[32], p[128], out[4096], cell_a[512], args[1024], ids[32];
    snprintf(sp, sizeof sp, "%d", (int)space);
    rc_entity_call(&c, A, a, "moveTo", "[-5, 0]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    rc_entity_call(&c, A, a, "note", "[\"private\"]", out, sizeof out);
    rc_entity_call(&c, A, a, "setHp", "[42]", out, sizeof out);
    /* w: a second real in the same space, on A */
    cw_cell_json(&c, a, cell_a, sizeof cell_a);
    int32_t w = cw_probe_with_cell(&c, "w", cell_a, WAIT_MS);
    cw_path(p, sizeof p, w, "space");
    ck_assert_int_eq(rc_int(&c, A, p), space);

    /* no split, no ghosts */
    ck_assert_int_eq(rc_int(&c, A, "ghosts/made"), 0);
    /* split at x = 0: both reals lie within the ghost distance of B's cell */
    ck_assert_msg(split(&c, out, sizeof out, sp, B, "0") == 0, "%s", out);
    cw_wait_int_eq(&c, B, "ghosts/held", 2, WAIT_MS);
    cw_path(p, sizeof p, a, "real");
    cw_wait_value(&c, B, p, a_addr, WAIT_MS);
    cw_path(p, sizeof p, a, "real");
    cw_wait_value(&c, A, p, "here", WAIT_MS);
    cw_path(p, sizeof p, a, "position");
    cw_wait_value(&c, B, p, "-5 0 0", WAIT_MS);
    /* the ghost has what others may see (hp, ALL_CLIENTS), not what they may not (the
     * CELL_PRIVATE note) */
    cw_path(p, sizeof p, a, "props/hp");
    cw_wait_value(&c, B, p, "42", WAIT_MS);
    cw_path(p, sizeof p, a, "props/cellNote");
    char v[256];
    rc_value(&c, B, p, v, sizeof v);
    ck_assert_str_eq(v, "\"\"");
    rc_value(&c, A, p, v, sizeof v);
    ck_assert_str_eq(v, "\"private\"");
    snprintf(p, sizeof p, "spaces/%d/entities", (int)space);
    ck_assert_int_eq(rc_int(&c, B, p), 2);
    /* a change on the real reaches its ghost */
    rc_entity_call(&c, A, a, "setHp", "[43]", out, sizeof out);
    cw_path(p, sizeof p, a, "props/hp");
    cw_wait_value(&c, B, p, "43", WAIT_MS);
    ck_assert_int_ge(rc_int(&c, A, "ghosts/updates"), 1);

    /* w's numbered client calls (allClients) reach its ghost on B, which keeps them (for
     * 60 s: none ages out however slow this is under load) */
    cw_set(&c, B, "ghosts/callRingMs", "60000");
    for (int i = 1; i <= 3; i++) {
        snprintf(args, sizeof args, "[%d, 1]", i);
        rc_entity_call(&c, A, w, "shout", args, out, sizeof out);
        ck_assert_str_eq(out, "[0]");
    }
    cw_path(p, sizeof p, w, "clientCalls");
    ck_assert_int_eq(rc_int(&c, A, p), 3);
    cw_wait_int_eq(&c, B, p, 3, WAIT_MS);
    /* B's ghost keeps them (their bytes counted); B's total cut to 0 at run time: the ghost
     * tick drops the oldest of every ring down to it, counted */
    ck_assert_int_gt(rc_int(&c, B, "ghosts/callRingHeldBytes"), 0);
    long long trimmed = rc_int(&c, B, "ghosts/callRingTrimmed");
    cw_set(&c, B, "ghosts/callRingTotalBytes", "0");
    cw_wait_int_eq(&c, B, "ghosts/callRingHeldBytes", 0, WAIT_MS);
    ck_assert_int_ge(rc_int(&c, B, "ghosts/callRingTrimmed"), trimmed + 3);
    cw_set(&c, B, "ghosts/callRingTotalBytes", "67108864");
    cw_set(&c, B, "ghosts/callRingMs", "5000");

    /* w goes real on B (a teleport next to a's ghost there): A holds w's ghost now */
    char near_a[512];
    cw_mailbox_json(near_a, sizeof near_a, a, b_addr, "CELL", cell_a);
    snprintf(args, sizeof args, "[%s, 5, 0]", near_a);
    rc_entity_call(&c, A, w, "teleportTo", args, out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    cw_path(p, sizeof p, w, "real");
    cw_wait_value(&c, B, p, "here", WAIT_MS);
    cw_wait_value(&c, A, p, b_addr, WAIT_MS);
    cw_path(p, sizeof p, w, "position");
    cw_wait_value(&c, A, p, "5 0 0", WAIT_MS);
    /* the real numbers on from 3 on B (CELL_MIGRATE carried it), and its ghost on A takes
     * its next call as new, not as one heard already */
    cw_path(p, sizeof p, w, "clientCalls");
    ck_assert_int_eq(rc_int(&c, B, p), 3);
    rc_entity_call(&c, B, w, "shout", "[4, 1]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    ck_assert_int_eq(rc_int(&c, B, p), 4);
    cw_wait_int_eq(&c, A, p, 4, WAIT_MS);

    /* witnesses on both sides see across the boundary: a (real on A) sees w's ghost, w
     * (real on B) sees a's ghost */
    ck_assert_int_eq(rc_int(&c, A, "cells/malformed"), 0);
    rc_entity_call(&c, A, a, "watch", "[1, 30, 2]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    rc_entity_call(&c, B, w, "watch", "[1, 30, 2]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    cw_wait_in_view(&c, A, a, w, WAIT_MS);
    cw_wait_in_view(&c, B, w, a, WAIT_MS);

    /* calls to w's ghost on A reach the real on B, all, in order */
    char cell_w[512], ghost_w[512];
    cw_cell_json(&c, w, cell_w, sizeof cell_w);
    cw_mailbox_json(ghost_w, sizeof ghost_w, w, a_addr, "CELL", cell_w);
    snprintf(args, sizeof args, "[%s, 300, 1]", ghost_w);
    rc_entity_call(&c, "baseapp01", w, "blast", args, out, sizeof out);
    ck_assert_str_eq(out, "[]");
    cw_path(p, sizeof p, w, "props/cellSeen");
    ck_assert_msg(rc_wait_int_at_least(&c, B, p, 300, WAIT_MS), "w saw %lld of 300",
                  rc_int(&c, B, p));
    cw_path(p, sizeof p, w, "props/cellOrderErrors");
    ck_assert_int_eq(rc_int(&c, B, p), 0);
    /* (by the forwarding entry w's teleport left on A, or by the ghost itself) */
    ck_assert_int_ge(rc_int(&c, A, "ghosts/forwarded") + rc_int(&c, A, "moves/forwarded"), 300);

    /* the real moves: its ghost follows; out of the ghost distance, the ghost goes and a's
     * view loses it */
    rc_entity_call(&c, B, w, "moveTo", "[12, 1]", out, sizeof out);
    cw_path(p, sizeof p, w, "position");
    cw_wait_value(&c, A, p, "12 0 1", WAIT_MS);
    rc_entity_call(&c, B, w, "moveTo", "[300, 1]", out, sizeof out);
    cw_wait_gone(&c, A, w, WAIT_MS);
    cw_path(p, sizeof p, a, "aoi/viewIds");
    snprintf(ids, sizeof ids, "%d", (int)w);
    cw_wait_without(&c, A, p, ids, WAIT_MS);
    ck_assert_int_ge(rc_int(&c, B, "ghosts/deletes"), 1);
    /* and back within it: a ghost again */
    rc_entity_call(&c, B, w, "moveTo", "[20, 1]", out, sizeof out);
    cw_path(p, sizeof p, w, "real");
    cw_wait_value(&c, A, p, b_addr, WAIT_MS);

    /* a real destroyed: its ghost goes */
    rc_entity_call(&c, "baseapp01", a, "dropCell", NULL, out, sizeof out);
    cw_wait_gone(&c, B, a, WAIT_MS);
    ck_assert_int_eq(rc_int(&c, A, "ghosts/refused"), 0);
    ck_assert_int_eq(rc_int(&c, B, "ghosts/refused"), 0);
    rc_stop(&c);
}
END_TEST

START_TEST(a_real_crossing_the_boundary_offloads_and_no_call_is_lost_or_reordered)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    fixed_boundaries(&c);
    int h;
    int32_t space;
    int32_t a = cw_probe_in_new_space(&c, "p", &h, &space, WAIT_MS);
    const char *A = c.cell_name[h], *B = c.cell_name[1 - h];
    char sp[32], p[128], out[4096], cell_a[512], args[1024], via[512];
    snprintf(sp, sizeof sp, "%d", (int)space);
    rc_entity_call(&c, A, a, "moveTo", "[-20, 0]", out, sizeof out);
    cw_cell_json(&c, a, cell_a, sizeof cell_a);
    int32_t w = cw_probe_with_cell(&c, "w", cell_a, WAIT_MS);
    rc_entity_call(&c, A, w, "moveTo", "[-3, 0]", out, sizeof out);
    rc_entity_call(&c, A, w, "setHp", "[7]", out, sizeof out);
    /* a, on A's side, watches: w stays in its view whichever cellapp holds it */
    rc_entity_call(&c, A, a, "watch", "[1, 40, 2]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    cw_wait_in_view(&c, A, a, w, WAIT_MS);
    /* w watches too: a is in its view */
    rc_entity_call(&c, A, w, "watch", "[1, 40, 2]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    cw_wait_in_view(&c, A, w, a, WAIT_MS);
    ck_assert_msg(split(&c, out, sizeof out, sp, B, "0") == 0, "%s", out);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    cw_wait_value(&c, B, p, "x[0,inf)", WAIT_MS);
    ck_assert(rc_wait_int_at_least(&c, B, "ghosts/held", 2, WAIT_MS));
    /* what the witnesses' clients were sent so far (two ENTERs of themselves, one of each
     * other): an offload with a handed-over view sends no more */
    long long enters = rc_int(&c, A, "world/enters") + rc_int(&c, B, "world/enters");

    /* w crosses the boundary back and forth; calls through its base stream on meanwhile */
    char cell_w[512];
    cw_cell_json(&c, w, cell_w, sizeof cell_w);
    cw_mailbox_json(via, sizeof via, w, c.base_addr[0], "CELL_VIA_BASE", cell_w);
    int sent = 0, at = h;
    for (int round = 0; round < 6; round++) {
        snprintf(args, sizeof args, "[%s, 100, %d]", via, sent + 1);
        rc_entity_call(&c, "baseapp01", w, "blast", args, out, sizeof out);
        sent += 100;
        /* within the hysteresis: it stays */
        const char *near = at == h ? "[2, 0]" : "[-2, 0]";
        rc_entity_call(&c, c.cell_name[at], w, "moveTo", near, out, sizeof out);
        ck_assert_str_eq(out, "[0]");
        snprintf(args, sizeof args, "[%s, 100, %d]", via, sent + 1);
        rc_entity_call(&c, "baseapp01", w, "blast", args, out, sizeof out);
        sent += 100;
        const char *far = at == h ? "[8, 0]" : "[-8, 0]";
        rc_entity_call(&c, c.cell_name[at], w, "moveTo", far, out, sizeof out);
        ck_assert_str_eq(out, "[0]");
        snprintf(args, sizeof args, "[%s, 100, %d]", via, sent + 1);
        rc_entity_call(&c, "baseapp01", w, "blast", args, out, sizeof out);
        sent += 100;
        at = 1 - at;
        cw_wait_real_on(&c, w, at, WAIT_MS);
        /* its base's cell mailbox follows */
        cw_path(p, sizeof p, w, "cell");
        ck_assert(rc_wait_value(&c, "baseapp01", p, c.cell_addr[at], WAIT_MS));
        /* the other side holds its ghost, with what others may see */
        cw_path(p, sizeof p, w, "real");
        cw_wait_value(&c, c.cell_name[1 - at], p, c.cell_addr[at], WAIT_MS);
    }
    cw_path(p, sizeof p, w, "props/cellSeen");
    ck_assert_msg(rc_wait_int_at_least(&c, c.cell_name[at], p, sent, WAIT_MS),
                  "w saw %lld of %d", rc_int(&c, c.cell_name[at], p), sent);
    ck_assert_int_eq(rc_int(&c, c.cell_name[at], p), sent);
    cw_path(p, sizeof p, w, "props/cellOrderErrors");
    ck_assert_int_eq(rc_int(&c, c.cell_name[at], p), 0);
    cw_path(p, sizeof p, w, "props/hp");
    cw_wait_value(&c, c.cell_name[at], p, "7", WAIT_MS);
    cw_wait_value(&c, c.cell_name[1 - at], p, "7", WAIT_MS);
    ck_assert_int_ge(rc_int(&c, A, "ghosts/offloads") + rc_int(&c, B, "ghosts/offloads"), 6);
    ck_assert_int_ge(rc_int(&c, A, "moves/in") + rc_int(&c, B, "moves/in"), 6);
    /* w's view went with it: its game heard a enter once and never leave, its client was
     * sent no ENTER again (nor was a's), and a is in its view where it is now */
    cw_wait_in_view(&c, c.cell_name[at], w, a, WAIT_MS);
    cw_check_entered_once(&c, c.cell_name[at], w, a);
    cw_check_never_left(&c, c.cell_name[at], w, a);
    ck_assert_int_eq(rc_int(&c, A, "world/enters") + rc_int(&c, B, "world/enters"), enters);
    /* a's view never lost it (it is there now, and a never heard it leave) */
    cw_wait_in_view(&c, A, a, w, WAIT_MS);
    cw_check_never_left(&c, A, a, w);
    char v[4096];
    /* one real, one ghost */
    int reals = 0;
    for (int i = 0; i < 2; i++) {
        cw_path(p, sizeof p, w, "real");
        rc_value(&c, c.cell_name[i], p, v, sizeof v);
        reals += strstr(v, "here") != NULL;
    }
    ck_assert_int_eq(reals, 1);
    rc_stop(&c);
}
END_TEST

/* The manager moves a boundary toward the less loaded side, a little at a time; an entity it
 * passes under is offloaded and a witness's view of it stays whole. */
START_TEST(a_boundary_moves_away_from_the_busy_cellapp_and_views_stay_whole)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    fixed_boundaries(&c);
    int h;
    int32_t space;
    int32_t a = cw_probe_in_new_space(&c, "p", &h, &space, WAIT_MS);
    const char *A = c.cell_name[h], *B = c.cell_name[1 - h];
    char sp[32], p[128], out[4096], cell_a[512];
    snprintf(sp, sizeof sp, "%d", (int)space);
    rc_entity_call(&c, A, a, "moveTo", "[-40, 0]", out, sizeof out);
    cw_cell_json(&c, a, cell_a, sizeof cell_a);
    int32_t w = cw_probe_with_cell(&c, "w", cell_a, WAIT_MS);
    rc_entity_call(&c, A, w, "moveTo", "[-3, 0]", out, sizeof out);
    rc_entity_call(&c, A, a, "watch", "[1, 60, 2]", out, sizeof out);
    cw_wait_in_view(&c, A, a, w, WAIT_MS);
    ck_assert_msg(split(&c, out, sizeof out, sp, B, "0") == 0, "%s", out);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    cw_wait_value(&c, B, p, "x[0,inf)", WAIT_MS);
    /* A is kept busy; the boundary moves into A's side, 2 m a time, a step a quarter second */
    cw_set(&c, "manager", "cells/balanceMs", "250");
    rc_entity_call(&c, A, a, "burn", "[0.8]", out, sizeof out);
    /* it passes under w (at x = -3, offloaded once 5 m beyond the boundary) */
    cw_path(p, sizeof p, w, "real");
    for (int waited = 0; waited < 60000; waited += 100) {
        char v[256];
        if (rc_get(&c, v, sizeof v, B, p) == 0 && strstr(v, "here"))
            break;
        h_sleep_ms(100);
    }
    rc_entity_call(&c, A, a, "burn", "[0]", out, sizeof out);
    cw_set(&c, "manager", "cells/balanceMs", "0");
    cw_wait_value(&c, B, p, "here", WAIT_MS);
    ck_assert_int_ge(rc_int(&c, "manager", "cells/balanceMoves"), 3);
    /* the layout both cellapps hold moved: A's cell ends below -8 */
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    char v[256];
    rc_value(&c, A, p, v, sizeof v);
    ck_assert_msg(strncmp(v, "\"x[-inf,-", 9) == 0 || strncmp(v, "x[-inf,-", 8) == 0, "%s", v);
    /* a's view of w never broke */
    cw_wait_in_view(&c, A, a, w, WAIT_MS);
    cw_check_never_left(&c, A, a, w);
    rc_stop(&c);
}
END_TEST

/* The cellapp (index) named at the start of one cell of the manager's layout of the space
 * (cells/spaces/<id>: "cellapp01 x[-inf,0) z[-inf,inf); ...") whose rectangle is `rect`. */
static int cell_of(rc_cluster *c, const char *layout, const char *rect)
{
    for (int i = 0; i < c->ncell; i++) {
        char want[96];
        snprintf(want, sizeof want, "%s %s", c->cell_name[i], rect);
        if (strstr(layout, want))
            return i;
    }
    return -1;
}

/* A real offloaded between two cellapps keeps its ghost on a third (the old cellapp hands
 * its ghosts' holders to the new one in CELL_MIGRATE): the third's ghost is never deleted
 * or made again, only its real's address changes, and a witness there never sees it leave. */
START_TEST(an_offload_keeps_the_ghost_on_a_third_cellapp)
{
    rc_cluster c;
    rc_start(&c, 1, 3);
    fixed_boundaries(&c);
    int h;
    int32_t space;
    int32_t w = cw_probe_in_new_space(&c, "p", &h, &space, WAIT_MS);
    char sp[32], p[128], out[4096], args[1024], lay[4096];
    snprintf(sp, sizeof sp, "%d", (int)space);
    /* three cells: x = 0, then one half cut at z = 0; the three meet at the origin */
    ck_assert_msg(split(&c, out, sizeof out, sp, c.cell_name[(h + 1) % 3], "0") == 0, "%s", out);
    ck_assert_msg(split(&c, out, sizeof out, sp, c.cell_name[(h + 2) % 3], "0") == 0, "%s", out);
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    rc_value(&c, "manager", p, lay, sizeof lay);
    /* the half left whole (H) and the two quarters of the other (Q1: z < 0, Q2: z >= 0) */
    float s = 1; /* the side of the quartered half */
    int H = cell_of(&c, lay, "x[-inf,0) z[-inf,inf)");
    if (H < 0) {
        s = -1;
        H = cell_of(&c, lay, "x[0,inf) z[-inf,inf)");
    }
    const char *q1 = s > 0 ? "x[0,inf) z[-inf,0)" : "x[-inf,0) z[-inf,0)";
    const char *q2 = s > 0 ? "x[0,inf) z[0,inf)" : "x[-inf,0) z[0,inf)";
    int Q1 = cell_of(&c, lay, q1), Q2 = cell_of(&c, lay, q2);
    ck_assert_msg(H >= 0 && Q1 >= 0 && Q2 >= 0, "layout: %s", lay);
    /* w, the witness, in H; m in Q1, near both other cells (ghosts on H and Q2) */
    int at = cw_real_of(&c, w);
    ck_assert_int_ge(at, 0);
    snprintf(args, sizeof args, "[%g, 0]", -s * 10);
    rc_entity_call(&c, c.cell_name[at], w, "moveTo", args, out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    cw_wait_real_on(&c, w, H, WAIT_MS);
    int32_t m = cw_probe_near(&c, w, "m", WAIT_MS);
    snprintf(args, sizeof args, "[%g, -10]", s * 10);
    rc_entity_call(&c, c.cell_name[H], m, "moveTo", args, out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    cw_wait_real_on(&c, m, Q1, WAIT_MS);
    rc_entity_call(&c, c.cell_name[H], w, "watch", "[1, 40, 2]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    cw_wait_in_view(&c, c.cell_name[H], w, m, WAIT_MS);
    cw_path(p, sizeof p, m, "real");
    cw_wait_value(&c, c.cell_name[H], p, c.cell_addr[Q1], WAIT_MS);
    cw_wait_value(&c, c.cell_name[Q2], p, c.cell_addr[Q1], WAIT_MS);
    long long created = rc_int(&c, c.cell_name[H], "ghosts/created");
    long long deleted = rc_int(&c, c.cell_name[H], "ghosts/deleted");
    long long silent = rc_int(&c, c.cell_name[H], "ghosts/silent");

    /* m crosses from Q1 into Q2: offloaded there, H's ghost of it now Q2's */
    snprintf(args, sizeof args, "[%g, 10]", s * 10);
    rc_entity_call(&c, c.cell_name[Q1], m, "moveTo", args, out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    cw_wait_real_on(&c, m, Q2, WAIT_MS);
    cw_wait_value(&c, c.cell_name[H], p, c.cell_addr[Q2], WAIT_MS);
    ck_assert_int_eq(rc_int(&c, c.cell_name[H], "ghosts/created"), created);
    ck_assert_int_eq(rc_int(&c, c.cell_name[H], "ghosts/deleted"), deleted);
    ck_assert_int_eq(rc_int(&c, c.cell_name[H], "ghosts/silent"), silent);
    ck_assert_int_ge(rc_int(&c, c.cell_name[Q1], "ghosts/handedOver"), 1);
    /* it moves on in Q2: H's ghost follows (updates from its new real) */
    snprintf(args, sizeof args, "[%g, 12]", s * 12);
    rc_entity_call(&c, c.cell_name[Q2], m, "moveTo", args, out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    char pos[64];
    snprintf(pos, sizeof pos, "%g 0 12", s * 12);
    cw_path(p, sizeof p, m, "position");
    cw_wait_value(&c, c.cell_name[H], p, pos, WAIT_MS);
    /* w's game heard m enter once and never leave */
    cw_wait_in_view(&c, c.cell_name[H], w, m, WAIT_MS);
    cw_check_entered_once(&c, c.cell_name[H], w, m);
    cw_check_never_left(&c, c.cell_name[H], w, m);
    ck_assert_int_eq(rc_int(&c, c.cell_name[H], "ghosts/created"), created);
    ck_assert_int_eq(rc_int(&c, c.cell_name[H], "ghosts/deleted"), deleted);
    rc_stop(&c);
}
END_TEST

/* A ghost whose real's cellapp says nothing for 10 s (stopped with SIGSTOP, not yet dead to
 * the manager) goes; the real's cellapp running again ghosts it again. */
START_TEST(a_ghost_silent_for_ten_seconds_goes)
{
    rc_cluster c;
    rc_start(&c, 1, 2);
    fixed_boundaries(&c);
    cw_set(&c, "manager", "registry/deadAfterMsCellapp", "120000");
    int h;
    int32_t space;
    int32_t a = cw_probe_in_new_space(&c, "p", &h, &space, WAIT_MS);
    const char *A = c.cell_name[h], *B = c.cell_name[1 - h];
    char sp[32], p[128], out[4096], v[512];
    snprintf(sp, sizeof sp, "%d", (int)space);
    rc_entity_call(&c, A, a, "moveTo", "[-3, 0]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    ck_assert_msg(split(&c, out, sizeof out, sp, B, "0") == 0, "%s", out);
    cw_path(p, sizeof p, a, "real");
    cw_wait_value(&c, B, p, c.cell_addr[h], WAIT_MS);
    long long silent = rc_int(&c, B, "ghosts/silent");
    long long created = rc_int(&c, B, "ghosts/created");
    h_kill(c.cell[h], SIGSTOP);
    bool gone = false;
    for (int waited = 0; waited < 40000 && !gone; waited += 200) {
        gone = rc_int(&c, B, "ghosts/silent") > silent && rc_get(&c, v, sizeof v, B, p) != 0;
        if (!gone)
            h_sleep_ms(200);
    }
    h_kill(c.cell[h], SIGCONT);
    ck_assert_msg(gone, "B still holds a silent ghost of %d (ghosts/silent %lld)", (int)a,
                  rc_int(&c, B, "ghosts/silent"));
    cw_wait_value(&c, B, p, c.cell_addr[h], WAIT_MS);
    ck_assert_int_gt(rc_int(&c, B, "ghosts/created"), created);
    rc_stop(&c);
}
END_TEST

/* A base restored from a backup that names the cellapp its cell has left since: the cell
 * offloads from A to B, its base hears CELL_MOVED but its backup cannot follow (the holder
 * refuses new backups: backups/heldMaxBytes under what it holds), then its baseapp is killed.
 * The restored base names A; A, holding the cell's forwarding entry, passes BASE_RESTORED on
 * to B and tells the restored base where its cell is; calls through the base reach the cell. */
START_TEST(a_base_restored_from_a_backup_naming_a_cellapp_its_cell_left_finds_it)
{
    rc_cluster c;
    rc_start(&c, 2, 2);
    fixed_boundaries(&c);
    int h;
    int32_t space;
    int32_t a = cw_probe_in_new_space(&c, "p", &h, &space, WAIT_MS);
    const char *A = c.cell_name[h], *B = c.cell_name[1 - h];
    char sp[32], p[128], out[4096], cell_a[512], via[512], args[1024];
    snprintf(sp, sizeof sp, "%d", (int)space);
    cw_move_real(&c, a, -20, 0);
    enum { BALLAST = 12 };
    for (int i = 0; i < BALLAST; i++)
        ck_assert_int_gt(rc_create_probe(&c, "baseapp01", "ballast"), 0);
    ck_assert_msg(split(&c, out, sizeof out, sp, B, "0") == 0, "%s", out);
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    cw_wait_value(&c, B, p, "x[0,inf)", WAIT_MS);
    cw_cell_json(&c, a, cell_a, sizeof cell_a);
    ck_assert_msg(strstr(cell_a, c.cell_addr[h]), "a's cell: %s", cell_a);
    /* every base backed up on baseapp02 as it is now (a full round of visits unchanged) */
    cw_wait_int_at_least(&c, "baseapp02", "backups/held", BALLAST + 1, WAIT_MS);
    long long unchanged = rc_int(&c, "baseapp01", "backups/unchanged");
    cw_wait_int_at_least(&c, "baseapp01", "backups/unchanged", unchanged + 2 * (BALLAST + 1),
                         WAIT_MS);
    ck_assert_int_gt(rc_int(&c, "baseapp02", "backups/heldBytes"), 1024);
    cw_set(&c, "baseapp02", "backups/heldMaxBytes", "1024");
    long long full = rc_int(&c, "baseapp02", "backups/heldFull");
    /* a crosses into B's cell: offloaded there, its base told, its backup refused */
    cw_move_real(&c, a, 20, 0);
    cw_wait_real_on(&c, a, 1 - h, WAIT_MS);
    cw_path(p, sizeof p, a, "cell");
    cw_wait_value(&c, "baseapp01", p, c.cell_addr[1 - h], WAIT_MS);
    cw_wait_int_at_least(&c, "baseapp02", "backups/heldFull", full + 1, WAIT_MS);
    /* baseapp01 killed: a comes back on baseapp02 from a backup naming A */
    h_kill(c.base[0], SIGKILL);
    ck_assert_int_ge(h_wait_exit(c.base[0], 10000), -1);
    c.base[0] = -1;
    cw_wait_int_at_least(&c, "baseapp02", "backups/restored", BALLAST + 1, WAIT_MS);
    /* A passed it on and told the base: the base names B */
    cw_wait_value(&c, "baseapp02", p, c.cell_addr[1 - h], WAIT_MS);
    ck_assert_int_eq(rc_int(&c, A, "moves/baseRestoredPassed"), 1);
    /* calls through the restored base reach the cell on B */
    cw_mailbox_json(via, sizeof via, a, c.base_addr[1], "CELL_VIA_BASE", cell_a);
    snprintf(args, sizeof args, "[%s, 5, 1]", via);
    rc_entity_call(&c, "baseapp02", a, "blast", args, out, sizeof out);
    cw_path(p, sizeof p, a, "props/cellSeen");
    cw_wait_value(&c, B, p, "5", WAIT_MS);
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
    tcase_add_test(tc, reals_have_ghosts_across_the_boundary_and_calls_to_a_ghost_reach_the_real);
    tcase_add_test(tc, a_real_crossing_the_boundary_offloads_and_no_call_is_lost_or_reordered);
    tcase_add_test(tc, a_boundary_moves_away_from_the_busy_cellapp_and_views_stay_whole);
    tcase_add_test(tc, an_offload_keeps_the_ghost_on_a_third_cellapp);
    tcase_add_test(tc, a_ghost_silent_for_ten_seconds_goes);
    tcase_add_test(tc, a_base_restored_from_a_backup_naming_a_cellapp_its_cell_left_finds_it);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
