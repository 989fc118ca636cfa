/* The area of interest through real processes running the Probe game: a witness's view
 * follows the radius with hysteresis (onEnteredAoI / onLeftAoI once per crossing, none while
 * an entity walks within the band), destroyed entities and a witness that stops being one
 * leave the view, radii are checked, and entitiesInRange answers nearest first, by type,
 * refusing bad radii and unknown types. The cellapp runs with its defaults: radius 50,
 * hysteresis 5, 10 updates a second. */
#include "harness.h"
#include "cells_watch.h"
#include "rules_cluster.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 15000

/* A cell method answering its status first: the status. */
static int cell_call(rc_cluster *c, int32_t id, const char *method, const char *args,
                     char *out, size_t outlen)
{
    return cw_call_status(c, "cellapp01", id, method, args, out, outlen);
}

static void move_to(rc_cluster *c, int32_t id, double x, double z)
{
    char args[96], out[256];
    snprintf(args, sizeof args, "[%g, %g]", x, z);
    ck_assert_int_eq(cell_call(c, id, "moveTo", args, out, sizeof out), 0);
}

static void aoi_events(rc_cluster *c, int32_t id, char *out, size_t n)
{
    char p[96];
    cw_path(p, sizeof p, id, "props/aoiEvents");
    rc_value(c, "cellapp01", p, out, n);
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Wait until the witness has seen `want` (e.g. "+4098;") `times` times. */
static void wait_aoi(rc_cluster *c, int32_t witness, const char *want, int times)
{
    char v[8192];
    for (int i = 0; i < WAIT_MS / 50; i++) {
        aoi_events(c, witness, v, sizeof v);
        if (count_of(v, want) >= times)
            return;
        h_sleep_ms(50);
    }
    ck_abort_msg("entity %d: '%s' not seen %d times in %s", (int)witness, want, times, v);
}

/* Let at least two whole view updates run after everything done so far. */
static void two_updates(rc_cluster *c)
{
    long long u = rc_int(c, "cellapp01", "aoi/updates");
    ck_assert(rc_wait_int_at_least(c, "cellapp01", "aoi/updates", u + 2, WAIT_MS));
}

static void ev(char *out, size_t n, char sign, int32_t id)
{
    snprintf(out, n, "%c%d;", sign, (int)id);
}

START_TEST(a_witness_sees_entities_come_and_go_with_hysteresis)
{
    rc_cluster c;
    rc_start(&c, 1, 1);
    char v[8192], out[1024], plus_a[32], minus_a[32], plus_b[32], minus_b[32], path[96];

    int32_t w = cw_probe_with_cell(&c, "witness", NULL, WAIT_MS);
    char near[512];
    cw_cell_json(&c, w, near, sizeof near);
    int32_t a = cw_probe_with_cell(&c, "a", near, WAIT_MS);
    int32_t b = cw_probe_with_cell(&c, "b", near, WAIT_MS);
    ev(plus_a, sizeof plus_a, '+', a);
    ev(minus_a, sizeof minus_a, '-', a);
    ev(plus_b, sizeof plus_b, '+', b);
    ev(minus_b, sizeof minus_b, '-', b);
    move_to(&c, a, 100, 0);
    move_to(&c, b, 200, 0);

    /* Becoming a witness with nobody within 50: nothing in view. */
    ck_assert_int_eq(cell_call(&c, w, "watch", "[1, 0, 0]", out, sizeof out), 0);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "aoi/witnesses"), 1);
    two_updates(&c);
    aoi_events(&c, w, v, sizeof v);
    ck_assert_str_eq(v, "\"\"");
    cw_path(path, sizeof path, w, "aoi/inView");
    ck_assert_int_eq(rc_int(&c, "cellapp01", path), 0);

    /* a walks to the radius: it enters, once. */
    move_to(&c, a, 50, 0);
    wait_aoi(&c, w, plus_a, 1);
    ck_assert_int_eq(rc_int(&c, "cellapp01", path), 1);
    /* within the band (50 .. 55): it stays, nothing is told */
    move_to(&c, a, 54, 0);
    two_updates(&c);
    move_to(&c, a, 0, 54.5);
    two_updates(&c);
    aoi_events(&c, w, v, sizeof v);
    ck_assert_int_eq(count_of(v, minus_a), 0);
    ck_assert_int_eq(count_of(v, plus_a), 1);
    /* beyond 55: it leaves, once */
    move_to(&c, a, 0, 56);
    wait_aoi(&c, w, minus_a, 1);
    ck_assert_int_eq(rc_int(&c, "cellapp01", path), 0);
    /* back into the band: it does not come back until it is within the radius */
    move_to(&c, a, 52, 0);
    two_updates(&c);
    aoi_events(&c, w, v, sizeof v);
    ck_assert_int_eq(count_of(v, plus_a), 1);
    move_to(&c, a, 49, 0);
    wait_aoi(&c, w, plus_a, 2);
    /* b never came near: the witness never heard of it */
    aoi_events(&c, w, v, sizeof v);
    ck_assert_int_eq(count_of(v, plus_b), 0);
    ck_assert_int_eq(count_of(v, minus_b), 0);

    /* entitiesInRange: fresh, nearest first, by type, refusing what it must */
    ck_assert_int_eq(cell_call(&c, w, "scan", "[60, \"\"]", out, sizeof out), 0);
    char want[256];
    snprintf(want, sizeof want, "[0,1,\"%d\"]", (int)a);
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(cell_call(&c, w, "scan", "[250, \"Probe\"]", out, sizeof out), 0);
    snprintf(want, sizeof want, "[0,2,\"%d,%d\"]", (int)a, (int)b);
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(cell_call(&c, b, "scan", "[250, \"\"]", out, sizeof out), 0);
    snprintf(want, sizeof want, "[0,2,\"%d,%d\"]", (int)a, (int)w); /* a at 151, w at 200 */
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(cell_call(&c, w, "scan", "[10, \"Nope\"]", out, sizeof out), -15);
    ck_assert_int_eq(cell_call(&c, w, "scan", "[100000, \"\"]", out, sizeof out), -2);
    ck_assert_int_eq(cell_call(&c, w, "scan", "[-1, \"\"]", out, sizeof out), -2);

    /* radii: checked; a wider one takes b in */
    ck_assert_int_eq(cell_call(&c, w, "watch", "[1, -5, 0]", out, sizeof out), -2);
    ck_assert_int_eq(cell_call(&c, w, "watch", "[1, 450, 60]", out, sizeof out), -2);
    ck_assert_int_eq(cell_call(&c, w, "watch", "[1, 210, 10]", out, sizeof out), 0);
    wait_aoi(&c, w, plus_b, 1);
    cw_path(path, sizeof path, w, "aoi/radius");
    ck_assert_int_eq(rc_int(&c, "cellapp01", path), 210);
    cw_path(path, sizeof path, w, "aoi/inView");
    ck_assert_int_eq(rc_int(&c, "cellapp01", path), 2);

    /* a destroyed entity leaves every view it was in */
    rc_entity_call(&c, "cellapp01", a, "die", "[]", out, sizeof out);
    wait_aoi(&c, w, minus_a, 2);
    ck_assert_int_eq(rc_int(&c, "cellapp01", path), 1);

    /* a witness that stops being one: what it saw leaves at once */
    long long left = rc_int(&c, "cellapp01", "aoi/left");
    ck_assert_int_eq(cell_call(&c, w, "watch", "[0, 0, 0]", out, sizeof out), 0);
    aoi_events(&c, w, v, sizeof v);
    ck_assert_int_eq(count_of(v, minus_b), 1);
    ck_assert_int_eq(rc_int(&c, "cellapp01", path), 0);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "aoi/witnesses"), 0);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "aoi/left"), left + 1);
    /* and hears nothing more */
    move_to(&c, b, 1, 1);
    two_updates(&c);
    aoi_events(&c, w, v, sizeof v);
    ck_assert_int_eq(count_of(v, plus_b), 1);
    /* every event reached the game: entered 3 (a twice, b), left 3 (a twice, b) */
    ck_assert_int_eq(rc_int(&c, "cellapp01", "aoi/entered"), 3);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "aoi/left"), 3);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "aoi/hookFailures"), 0);
    rc_stop(&c);
}
END_TEST

START_TEST(teleports_move_cells_between_spaces_and_views_follow)
{
    rc_cluster c;
    rc_start(&c, 1, 1);
    char out[1024], v[8192], args[1024], near_w[512], near_b[512], plus_a[32], minus_a[32];
    int32_t w = cw_probe_with_cell(&c, "witness", NULL, WAIT_MS);
    cw_cell_json(&c, w, near_w, sizeof near_w);
    int32_t a = cw_probe_with_cell(&c, "a", near_w, WAIT_MS);
    int32_t b = cw_probe_with_cell(&c, "b", NULL, WAIT_MS); /* a space of its own */
    cw_cell_json(&c, b, near_b, sizeof near_b);
    ev(plus_a, sizeof plus_a, '+', a);
    ev(minus_a, sizeof minus_a, '-', a);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "spaces/count"), 2);
    ck_assert_int_eq(cell_call(&c, w, "watch", "[1, 0, 0]", out, sizeof out), 0);
    wait_aoi(&c, w, plus_a, 1); /* both at the origin */

    /* within its space: a move (null: its own space) */
    ck_assert_int_eq(cell_call(&c, a, "teleportTo", "[null, 400, 0]", out, sizeof out), 0);
    wait_aoi(&c, w, minus_a, 1);
    ck_assert_int_eq(cell_call(&c, a, "teleportTo", "[null, 3, 3]", out, sizeof out), 0);
    wait_aoi(&c, w, plus_a, 2);
    /* to b's space: it leaves the witness's view, and is in b's space, at its position */
    snprintf(args, sizeof args, "[%s, 5, 0]", near_b);
    ck_assert_int_eq(cell_call(&c, a, "teleportTo", args, out, sizeof out), 0);
    wait_aoi(&c, w, minus_a, 2);
    char path[96], want[64];
    cw_path(path, sizeof path, a, "space");
    long long space_a = rc_int(&c, "cellapp01", path);
    cw_path(path, sizeof path, b, "space");
    ck_assert_int_eq(space_a, rc_int(&c, "cellapp01", path));
    ck_assert_int_eq(cell_call(&c, b, "scan", "[10, \"\"]", out, sizeof out), 0);
    snprintf(want, sizeof want, "[0,1,\"%d\"]", (int)a);
    ck_assert_str_eq(out, want);
    /* and back next to the witness */
    snprintf(args, sizeof args, "[%s, 1, 1]", near_w);
    ck_assert_int_eq(cell_call(&c, a, "teleportTo", args, out, sizeof out), 0);
    wait_aoi(&c, w, plus_a, 3);
    /* refused: a cell that is not here (non-finite positions cannot even be written in
     * JSON: the operator command refuses them first) */
    char gone[512];
    snprintf(gone, sizeof gone, "%s", near_b);
    char *id_at = strstr(gone, "\"id\":");
    ck_assert_ptr_nonnull(id_at);
    char fake[600];
    snprintf(fake, sizeof fake, "{\"id\":999999%s", strchr(id_at, ','));
    snprintf(args, sizeof args, "[%s, 1, 1]", fake);
    ck_assert_int_eq(cell_call(&c, a, "teleportTo", args, out, sizeof out), -7);
    char elsewhere[600];
    char *colon = strstr(near_b, "\"addr\":\"");
    ck_assert_ptr_nonnull(colon);
    colon = strchr(colon + 8, ':');
    snprintf(elsewhere, sizeof elsewhere, "%.*s:1%s", (int)(colon - near_b), near_b,
             strchr(colon, '"'));
    /* a cellapp that is not there: the move starts, fails (it cannot be sent) and the
     * entity stays (moves across cellapps: test_entity_teleport.c) */
    snprintf(args, sizeof args, "[%s, 1, 1]", elsewhere);
    ck_assert_int_eq(cell_call(&c, a, "teleportTo", args, out, sizeof out), 0);
    ck_assert(rc_wait_int_at_least(&c, "cellapp01", "moves/failed", 1, WAIT_MS));
    cw_path(path, sizeof path, a, "space");
    long long space_now = rc_int(&c, "cellapp01", path);
    cw_path(path, sizeof path, w, "space");
    ck_assert_int_eq(space_now, rc_int(&c, "cellapp01", path)); /* next to w, as before */
    /* a witness that teleports stays one: in b's space it sees b (and a leaves its view) */
    char plus_b[32], minus_b[32];
    ev(plus_b, sizeof plus_b, '+', b);
    ev(minus_b, sizeof minus_b, '-', b);
    snprintf(args, sizeof args, "[%s, 2, 2]", near_b);
    ck_assert_int_eq(cell_call(&c, w, "teleportTo", args, out, sizeof out), 0);
    wait_aoi(&c, w, plus_b, 1);
    wait_aoi(&c, w, minus_a, 3);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "aoi/witnesses"), 1);
    /* w's old space kept a: both spaces are still there */
    ck_assert_int_eq(rc_int(&c, "cellapp01", "spaces/count"), 2);
    ck_assert_int_eq(cell_call(&c, w, "teleportTo", "[null, 0, 0]", out, sizeof out), 0);
    /* both spaces are still there (each still holds an entity) */
    ck_assert_int_eq(rc_int(&c, "cellapp01", "spaces/count"), 2);
    aoi_events(&c, w, v, sizeof v);
    ck_assert_int_eq(count_of(v, plus_a), 3);
    ck_assert_int_eq(count_of(v, minus_a), 3);
    ck_assert_int_eq(count_of(v, minus_b), 0);
    rc_stop(&c);
}
END_TEST

/* World updates for a witness's client leave the cellapp for its base, within the budget:
 * entering (deferred when the budget is small, but every one sent in the end), a property
 * change, volatile positions, leaving; the base counts them (it has no client here, so it
 * drops them and counts that too). What a client makes of them is tested with clients. */
START_TEST(world_updates_go_to_the_witness_base_within_the_budget)
{
    rc_cluster c;
    rc_start(&c, 1, 1);
    char out[1024], near[512];
    int32_t w = cw_probe_with_cell(&c, "witness", NULL, WAIT_MS);
    cw_cell_json(&c, w, near, sizeof near);
    int32_t ids[6];
    for (int i = 0; i < 6; i++) {
        ids[i] = cw_probe_with_cell(&c, "near", near, WAIT_MS);
        char args[64];
        snprintf(args, sizeof args, "[%d, 0]", 2 + i);
        ck_assert_int_eq(cell_call(&c, ids[i], "moveTo", args, out, sizeof out), 0);
    }
    /* 100 bytes a tick: an ENTER of a Probe is 39 bytes, so two a tick */
    char cmd_out[512];
    ck_assert_int_eq(h_watcher(cmd_out, sizeof cmd_out, c.manager, "set", "cellapp01",
                               "world/budgetBytes", "100", NULL), 0);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/enters"), 0);
    ck_assert_int_eq(cell_call(&c, w, "watch", "[1, 0, 0]", out, sizeof out), 0);
    /* the witness's own ENTER (the player's cell entity), then the six */
    ck_assert(rc_wait_int_at_least(&c, "cellapp01", "world/enters", 7, WAIT_MS));
    ck_assert_msg(rc_int(&c, "cellapp01", "world/deferred") > 0,
                  "six entries at 100 bytes a tick were never deferred");
    ck_assert(rc_wait_int_at_least(&c, "baseapp01", "world/updatesIn", 3, WAIT_MS));
    ck_assert_int_eq(rc_int(&c, "baseapp01", "world/stale"), 0);
    ck_assert_int_eq(rc_int(&c, "baseapp01", "world/refused"), 0);
    ck_assert(rc_int(&c, "baseapp01", "world/noClient") >= 3);
    long long rel = rc_int(&c, "cellapp01", "world/bytesReliable");
    ck_assert_int_eq(rel, 7 * 39);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/enters"), 7);

    /* a change of hp (ALL_CLIENTS): one PROPS record, 13 bytes (head 7, index 2, INT32) */
    ck_assert_int_eq(h_watcher(cmd_out, sizeof cmd_out, c.manager, "set", "cellapp01",
                               "world/budgetBytes", "2000", NULL), 0);
    long long props = rc_int(&c, "cellapp01", "world/propUpdates");
    rc_entity_call(&c, "cellapp01", ids[0], "setHp", "[77]", out, sizeof out);
    ck_assert(rc_wait_int_at_least(&c, "cellapp01", "world/propUpdates", props + 1, WAIT_MS));
    two_updates(&c);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/propUpdates"), props + 1);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/bytesReliable"), rel + 13);
    /* setting the same value again changes nothing */
    rc_entity_call(&c, "cellapp01", ids[0], "setHp", "[77]", out, sizeof out);
    two_updates(&c);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/propUpdates"), props + 1);

    /* a move within view: a volatile update (29 bytes), none while it stands still but the
     * refreshes of its position (--volatileRefreshTicks: a slow machine may see one here) */
    long long vol = rc_int(&c, "cellapp01", "world/volatileUpdates");
    long long refr0 = rc_int(&c, "cellapp01", "world/volatileRefreshes");
    move_to(&c, ids[1], 10, 10);
    ck_assert(rc_wait_int_at_least(&c, "cellapp01", "world/volatileUpdates", vol + 1, WAIT_MS));
    two_updates(&c);
    long long refr, now_vol, now_bytes, refr_after;
    do { /* one consistent reading: no refresh between them */
        refr = rc_int(&c, "cellapp01", "world/volatileRefreshes");
        now_vol = rc_int(&c, "cellapp01", "world/volatileUpdates");
        now_bytes = rc_int(&c, "cellapp01", "world/bytesVolatile");
        refr_after = rc_int(&c, "cellapp01", "world/volatileRefreshes");
    } while (refr != refr_after);
    ck_assert_int_eq(now_vol, vol + 1 + (refr - refr0));
    ck_assert_int_eq(now_bytes, 29 * now_vol);

    /* out of view: a LEAVE; back in view with a value changed meanwhile: a fresh ENTER */
    long long leaves = rc_int(&c, "cellapp01", "world/leaves");
    move_to(&c, ids[2], 300, 0);
    ck_assert(rc_wait_int_at_least(&c, "cellapp01", "world/leaves", leaves + 1, WAIT_MS));
    rc_entity_call(&c, "cellapp01", ids[2], "setHp", "[5]", out, sizeof out);
    two_updates(&c);
    long long props_now = rc_int(&c, "cellapp01", "world/propUpdates");
    move_to(&c, ids[2], 3, 3);
    ck_assert(rc_wait_int_at_least(&c, "cellapp01", "world/enters", 8, WAIT_MS));
    two_updates(&c);
    /* the change made out of view travels in the ENTER, not as a later PROPS */
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/propUpdates"), props_now);

    /* otherClients / allClients: a CALL (11 bytes: head 7, UINT32) for the witness's client,
     * which sees ids[0]; allClients also goes to ids[0]'s own client (it has none: its base
     * refuses it as such) */
    rel = rc_int(&c, "cellapp01", "world/bytesReliable");
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/calls"), 0);
    rc_entity_call(&c, "cellapp01", ids[0], "shout", "[1, 0]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/calls"), 1);
    ck_assert(rc_wait_int_at_least(&c, "cellapp01", "world/bytesReliable", rel + 11, WAIT_MS));
    long long no_client = rc_int(&c, "baseapp01", "calls/refused/noClient");
    rc_entity_call(&c, "cellapp01", ids[0], "shout", "[2, 1]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/calls"), 2);
    ck_assert(rc_wait_int_at_least(&c, "baseapp01", "calls/refused/noClient", no_client + 1,
                                   WAIT_MS));
    /* the witness itself shouting: nobody else sees it, so no CALL for anyone */
    rc_entity_call(&c, "cellapp01", w, "shout", "[3, 0]", out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/calls"), 2);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/callsDropped"), 0);

    /* the witness stops: its client is told everything left */
    leaves = rc_int(&c, "cellapp01", "world/leaves");
    ck_assert_int_eq(cell_call(&c, w, "watch", "[0, 0, 0]", out, sizeof out), 0);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/leaves"), leaves + 6);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/sendFailures"), 0);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "world/shadowFailures"), 0);
    rc_stop(&c);
}
END_TEST

START_TEST(bad_aoi_options_stop_the_cellapp_with_a_reason)
{
    /* The option checks run before anything starts: each bad value is one line, exit 2. */
    const char *bad[][2] = {
        {"--aoiRadius", "0"},    {"--aoiRadius", "nan"}, {"--aoiHysteresis", "-1"},
        {"--aoiHz", "0"},        {"--aoiHz", "1000"},    {"--aoiMaxRadius", "10"},
        {"--clientBudgetBytes", "10"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[1024], out[4096];
        snprintf(cmd, sizeof cmd,
                 "timeout 20 %s/cellapp --manager 127.0.0.1:1 --res %s --game %s %s %s 2>&1; "
                 "echo \"exit $?\"",
                 getenv("MC_BIN_DIR") ? getenv("MC_BIN_DIR") : "build/bin", MC_PROBE_RES,
                 MC_PROBE_GAME, bad[i][0], bad[i][1]);
        FILE *p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        size_t n = fread(out, 1, sizeof out - 1, p);
        out[n] = '\0';
        pclose(p);
        ck_assert_msg(strstr(out, bad[i][0] + 2) && (strstr(out, "must") || strstr(out, "expects a number")) &&
                          !strstr(out, "exit 0") && !strstr(out, "exit 124"),
                      "%s %s: %s", bad[i][0], bad[i][1], out);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("entity_aoi");
    TCase *tc = tcase_create("aoi");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_witness_sees_entities_come_and_go_with_hysteresis);
    tcase_add_test(tc, teleports_move_cells_between_spaces_and_views_follow);
    tcase_add_test(tc, world_updates_go_to_the_witness_base_within_the_budget);
    tcase_add_test(tc, bad_aoi_options_stop_the_cellapp_with_a_reason);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
