/* Cells restored after their cellapp died (issue 20, item 3) through real processes: a
 * manager, two baseapps and two cellapps loading the Probe game (tests/entity/game), driven
 * through the watcher tool; the harness kills every process when the test process exits,
 * also on failure.
 *
 *   a_dead_cellapps_cells_come_back   bases on both baseapps with cells in one space of a
 *                                     cellapp, each with its own note and position; the
 *                                     cellapp is killed with SIGKILL: every cell comes back
 *                                     on the other cellapp, in a space of the same id, with
 *                                     its note and position, once (no cell twice, one home
 *                                     for the space across both baseapps), each base hears
 *                                     onRestoreCell (never onLoseCell), and calls through
 *                                     the base sent while it is restored all arrive in order
 *   copies_are_bounded_in_bytes        copies/bytesPerS 1000: the bytes of cell copies sent
 *                                     stay within the rate (copies/behind counts the
 *                                     rounds cut short); raised, every copy lands
 *   bad_options_are_refused           --cellCopyBytesPerS and --spaceHomesMax out of range
 *                                     stop the process at start with one line naming them
 */
#include "cluster.h"
#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define WAIT_MS 30000
/* Deaths must be noticed in a few seconds, yet a loaded machine must not take a busy
 * process for a dead one: 6 s. */
#define DEAD_AFTER "--deadAfterMs=6000"

static const char *S(const rc_cluster *c, int slot) { return c->name[slot]; }

static void invoke(const rc_cluster *c, const char *target, int32_t id, const char *method,
                   const char *json)
{
    char out[4096];
    int rc = rc_invoke(c, target, id, method, json, out, sizeof out);
    ck_assert_msg(rc == 0, "%s: call %d %s %s: exit %d: %s", target, (int)id, method, json,
                  rc, out);
}

static int64_t num(const rc_cluster *c, const char *target, const char *path)
{
    int64_t v = rc_num(c, target, path);
    ck_assert_msg(v != RC_NO_NUMBER, "%s %s: no number", target, path);
    return v;
}

static void expect_num(const rc_cluster *c, const char *target, const char *path, int64_t want)
{
    int64_t got;
    ck_assert_msg(rc_wait_num(c, target, path, want, WAIT_MS, &got),
                  "%s %s: %lld, expected %lld", target, path, (long long)got, (long long)want);
}

static int32_t create(const rc_cluster *c, int slot)
{
    int32_t id = rc_create(c, slot, "{\"label\":\"r\"}");
    ck_assert_msg(id > 0, "createBase on %s failed", S(c, slot));
    return id;
}

static void get(const rc_cluster *c, const char *target, const char *path, char *v, size_t n)
{
    ck_assert_msg(rc_get(c, target, path, v, n), "%s %s: no value", target, path);
}

#define NB 6 /* bases with cells in the space: three on each baseapp */

START_TEST(a_dead_cellapps_cells_come_back)
{
    rc_cluster c;
    ck_assert(rc_start(&c, "restore", DEAD_AFTER, NULL));
    /* The first base's cell makes the space; the others join it, from both baseapps. */
    int32_t id[NB];
    int bslot[NB];
    id[0] = create(&c, 0);
    bslot[0] = 0;
    invoke(&c, S(&c, 0), id[0], "makeCell", "[null]");
    int dead = rc_wait_cell(&c, 0, id[0], WAIT_MS);
    ck_assert_int_ge(dead, 2);
    int live = dead == 2 ? 3 : 2;
    char near[160], path[128], v[256];
    rc_mailbox(near, sizeof near, id[0], c.addr[dead], "CELL");
    char json[256];
    snprintf(json, sizeof json, "[%s]", near);
    for (int i = 1; i < NB; i++) {
        bslot[i] = i % 2;
        id[i] = create(&c, bslot[i]);
        invoke(&c, S(&c, bslot[i]), id[i], "makeCell", json);
        ck_assert_int_eq(rc_wait_cell(&c, bslot[i], id[i], WAIT_MS), dead);
    }
    snprintf(path, sizeof path, "entities/%d/space", (int)id[0]);
    int64_t space = num(&c, S(&c, dead), path);
    ck_assert_int_gt(space, 0);
    int64_t live_before = num(&c, S(&c, live), "entities/count");
    /* Each cell gets its own note and position; the bases' copies follow. */
    for (int i = 0; i < NB; i++) {
        snprintf(json, sizeof json, "[\"note of %d\"]", (int)id[i]);
        invoke(&c, S(&c, dead), id[i], "note", json);
        snprintf(json, sizeof json, "[%d.5, %d.25]", 10 + i, -20 - i);
        invoke(&c, S(&c, dead), id[i], "moveTo", json);
    }
    for (int i = 0; i < NB; i++) {
        char want[96];
        snprintf(path, sizeof path, "entities/%d/cellCopy", (int)id[i]);
        snprintf(want, sizeof want, "space %lld at %d.5 0 %d.25", (long long)space, 10 + i,
                 -20 - i);
        ck_assert_msg(rc_wait_text(&c, S(&c, bslot[i]), path, want, WAIT_MS),
                      "base %d never held its cell's copy (%s)", (int)id[i], want);
    }
    ck_assert_int_gt(num(&c, S(&c, dead), "copies/sent"), 0);
    ck_assert_int_gt(num(&c, S(&c, 0), "cells/copiesIn"), 0);
    ck_assert_int_gt(num(&c, S(&c, 1), "cells/copiesIn"), 0);

    rc_kill9(&c, dead);
    /* Once baseapp 0 knows, 200 pings through base 0 to its cell (CELL_VIA_BASE): they
     * wait while the cell is restored, or reach it restored; never the dead cellapp. */
    snprintf(path, sizeof path, "peers/%s", S(&c, dead));
    ck_assert_msg(rc_wait_text(&c, S(&c, 0), path, "dead", WAIT_MS),
                  "baseapp 0 never heard the cellapp died");
    char via[160];
    rc_mailbox(via, sizeof via, id[0], c.addr[0], "CELL_VIA_BASE");
    snprintf(json, sizeof json, "[%s, 200, 1]", via);
    invoke(&c, S(&c, 0), id[0], "blast", json);

    for (int i = 0; i < NB; i++) {
        snprintf(path, sizeof path, "entities/%d/props/events", (int)id[i]);
        ck_assert_msg(rc_wait_text(&c, S(&c, bslot[i]), path, "restoreCell", WAIT_MS),
                      "base %d never heard its cell was restored", (int)id[i]);
        get(&c, S(&c, bslot[i]), path, v, sizeof v);
        ck_assert_msg(!strstr(v, "loseCell"), "base %d: %s", (int)id[i], v);
        ck_assert_int_eq(rc_wait_cell(&c, bslot[i], id[i], WAIT_MS), live);
        /* the same space id, its note and position */
        snprintf(path, sizeof path, "entities/%d/space", (int)id[i]);
        ck_assert_int_eq(num(&c, S(&c, live), path), space);
        snprintf(path, sizeof path, "entities/%d/props/cellNote", (int)id[i]);
        get(&c, S(&c, live), path, v, sizeof v);
        char want[96];
        snprintf(want, sizeof want, "note of %d", (int)id[i]);
        ck_assert_msg(strstr(v, want), "entity %d's note: %s", (int)id[i], v);
        snprintf(path, sizeof path, "entities/%d/position", (int)id[i]);
        get(&c, S(&c, live), path, v, sizeof v);
        snprintf(want, sizeof want, "%d.5 0 %d.25", 10 + i, -20 - i);
        ck_assert_msg(strcmp(v, want) == 0, "entity %d at %s, expected %s", (int)id[i], v, want);
    }
    /* The calls all arrived, in order. */
    snprintf(path, sizeof path, "entities/%d/props/cellSeen", (int)id[0]);
    expect_num(&c, S(&c, live), path, 200);
    snprintf(path, sizeof path, "entities/%d/props/cellOrderErrors", (int)id[0]);
    ck_assert_int_eq(num(&c, S(&c, live), path), 0);
    /* Each cell once: the live cellapp holds them all, in one space, picked once. */
    ck_assert_int_eq(num(&c, S(&c, live), "entities/count"), live_before + NB);
    ck_assert_int_eq(num(&c, S(&c, live), "restores/in"), NB);
    snprintf(path, sizeof path, "spaces/%lld/entities", (long long)space);
    ck_assert_int_eq(num(&c, S(&c, live), path), NB);
    ck_assert_int_eq(num(&c, "manager", "spaceHomes/picked"), 1);
    ck_assert_int_eq(num(&c, "manager", "spaceHomes/asked"), 2); /* one per baseapp */
    ck_assert_int_eq(num(&c, S(&c, 0), "cells/restored"), 3);
    ck_assert_int_eq(num(&c, S(&c, 1), "cells/restored"), 3);
    ck_assert_int_eq(num(&c, S(&c, 0), "cells/lost/refused") +
                         num(&c, S(&c, 0), "cells/lost/noCellapp"),
                     0);
    /* The restored cells copy to their bases again from their new cellapp. */
    invoke(&c, S(&c, live), id[1], "moveTo", "[1.5, 2.5]");
    snprintf(path, sizeof path, "entities/%d/cellCopy", (int)id[1]);
    snprintf(v, sizeof v, "space %lld at 1.5 0 2.5", (long long)space);
    ck_assert(rc_wait_text(&c, S(&c, bslot[1]), path, v, WAIT_MS));
    rc_stop(&c);
}
END_TEST

START_TEST(copies_are_bounded_in_bytes)
{
    rc_cluster c;
    ck_assert(rc_start(&c, "copies", "--deadAfterMs=20000", NULL));
    /* 30 bases with a cell each (new spaces, on either cellapp). */
    int32_t maker = create(&c, 0);
    invoke(&c, S(&c, 0), maker, "spawnHere", "[30, 30]");
    int32_t ids[40];
    char path[128], v[8192];
    snprintf(path, sizeof path, "entities/%d/props/created", (int)maker);
    get(&c, S(&c, 0), path, v, sizeof v);
    ck_assert_int_eq(rc_parse_ints(v, ids, 40), 30);
    int cs[30];
    for (int i = 0; i < 30; i++) {
        cs[i] = rc_wait_cell(&c, 0, ids[i], WAIT_MS);
        ck_assert_int_ge(cs[i], 2);
    }
    /* Let the first copies go, then bound the rate to 1000 bytes a second. */
    expect_num(&c, S(&c, 0), "cells/copiesIn", 30);
    for (int k = 2; k < 4; k++)
        ck_assert_int_eq(rc_set(&c, S(&c, k), "copies/bytesPerS", "1000"), 0);
    ck_assert_int_eq(num(&c, S(&c, 2), "copies/bytesPerS"), 1000);
    long t0 = rc_now_ms();
    int64_t bytes0 = num(&c, S(&c, 2), "copies/bytes") + num(&c, S(&c, 3), "copies/bytes");
    int64_t behind0 = num(&c, S(&c, 2), "copies/behind") + num(&c, S(&c, 3), "copies/behind");
    /* Each cell's note becomes 3000 bytes: about 90 KB of copies to send, each larger than
     * the bucket (a copy goes whole once the bucket is full, then the bucket owes it). */
    static char json[3100];
    char note[3001];
    for (int i = 0; i < 30; i++) {
        memset(note, 'a' + i % 26, 3000);
        note[3000] = '\0';
        snprintf(json, sizeof json, "[\"%s\"]", note);
        invoke(&c, S(&c, cs[i]), ids[i], "note", json);
    }
    h_sleep_ms(2000);
    int64_t bytes = num(&c, S(&c, 2), "copies/bytes") + num(&c, S(&c, 3), "copies/bytes");
    long elapsed = rc_now_ms() - t0;
    int64_t behind = num(&c, S(&c, 2), "copies/behind") + num(&c, S(&c, 3), "copies/behind");
    /* Each cellapp: at most 1000 bytes a second, plus the second's worth it may have had
     * saved, plus one copy (3.1 KB) beyond it. */
    int64_t bound = 2 * (1000 * (elapsed + 999) / 1000 + 1000 + 3200);
    fprintf(stderr, "copies at 1000 bytes/s: %lld bytes in %ld ms (bound %lld), %lld rounds "
                    "cut short\n",
            (long long)(bytes - bytes0), elapsed, (long long)bound,
            (long long)(behind - behind0));
    ck_assert_msg(bytes - bytes0 <= bound, "%lld bytes of copies in %ld ms (bound %lld)",
                  (long long)(bytes - bytes0), elapsed, (long long)bound);
    ck_assert_msg(bytes - bytes0 < 30 * 3000, "every copy went: %lld bytes in %ld ms",
                  (long long)(bytes - bytes0), elapsed);
    ck_assert_msg(behind > behind0, "no round was cut short (copies/behind %lld)",
                  (long long)behind);
    /* Raised: every base gets its note. */
    for (int k = 2; k < 4; k++)
        ck_assert_int_eq(rc_set(&c, S(&c, k), "copies/bytesPerS", "1000000"), 0);
    expect_num(&c, S(&c, 0), "cells/copiesIn", 60);
    /* A rate out of range is refused. */
    ck_assert_int_ne(rc_set(&c, S(&c, 2), "copies/bytesPerS", "10"), 0);
    rc_stop(&c);
}
END_TEST

/* Start a binary with these arguments; it must exit 1 at once with `needle` in its output. */
START_TEST(bad_options_are_refused)
{
    rc_expect_refused("cellapp", "cellCopyBytesPerS", "--cellCopyBytesPerS=999", NULL);
    rc_expect_refused("manager", "spaceHomesMax", "--spaceHomesMax=15", NULL);
}
END_TEST

static Suite *restore_suite(void)
{
    Suite *s = suite_create("integration_cell_restore");
    const struct {
        const char *name;
        const TTest *test;
    } tests[] = {
        {"a_dead_cellapps_cells_come_back", a_dead_cellapps_cells_come_back},
        {"copies_are_bounded_in_bytes", copies_are_bounded_in_bytes},
        {"bad_options_are_refused", bad_options_are_refused},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_timeout(tc, 240);
        tcase_add_test(tc, tests[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void) { return h_run_suite(restore_suite()); }
