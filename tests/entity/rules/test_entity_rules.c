/* The rules of entity life through real processes running the Probe game: destroying a base
 * with a cell is refused, a cell's death leaves its properties in the base's cellData, a
 * space's destruction takes every cell in it, timers fire, global names are unique and go
 * with their base, watchers and operator commands answer and refuse as documented, and
 * every process exits 0 on SIGTERM (ASan's leak check included when built with it). */
#include "harness.h"
#include "rules_cluster.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 15000

static void path_of(char *out, size_t n, int32_t id, const char *rest)
{
    snprintf(out, n, "entities/%d/%s", (int)id, rest);
}

static void wait_event(rc_cluster *c, const char *proc, int32_t id, const char *want)
{
    char p[96];
    path_of(p, sizeof p, id, "props/events");
    if (!rc_wait_value(c, proc, p, want, WAIT_MS)) {
        char v[4096];
        rc_value(c, proc, p, v, sizeof v);
        ck_abort_msg("%s %s: no '%s' in %s", proc, p, want, v);
    }
}

static void value(rc_cluster *c, const char *proc, int32_t id, const char *rest, char *out,
                  size_t n)
{
    char p[96];
    path_of(p, sizeof p, id, rest);
    rc_value(c, proc, p, out, n);
}

/* Wait until entities/<id> is gone from proc. */
static bool wait_gone(rc_cluster *c, const char *proc, int32_t id)
{
    char p[96], buf[4096];
    path_of(p, sizeof p, id, "type");
    for (int i = 0; i < WAIT_MS / 100; i++) {
        int rc = rc_get(c, buf, sizeof buf, proc, p);
        if (rc == 4)
            return true; /* unknown path */
        h_sleep_ms(100);
    }
    return false;
}

static void make_cell(rc_cluster *c, int32_t id, const char *near_json)
{
    char out[512], args[512];
    snprintf(args, sizeof args, "[%s]", near_json ? near_json : "null");
    rc_entity_call(c, "baseapp01", id, "makeCell", args, out, sizeof out);
    ck_assert_str_eq(out, "[]");
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

START_TEST(a_base_with_a_cell_is_not_destroyed_and_a_dead_cell_leaves_its_properties)
{
    rc_cluster c;
    rc_start(&c, 1, 1);
    char v[4096], out[4096], ids[32];

    int32_t a = rc_create_probe(&c, "baseapp01", "a");
    make_cell(&c, a, NULL);
    wait_event(&c, "baseapp01", a, "getCell;");
    value(&c, "baseapp01", a, "cell", v, sizeof v);
    ck_assert_msg(strstr(v, "CELL") && strstr(v, c.cell_addr[0]), "cell: %s", v);

    /* destroy is refused while the base has a cell: from game code and from the operator. */
    rc_entity_call(&c, "baseapp01", a, "die", NULL, out, sizeof out);
    ck_assert_str_eq(out, "[-12]");
    snprintf(ids, sizeof ids, "%d", (int)a);
    int rc = rc_call(&c, out, sizeof out, "baseapp01", "command/destroy", ids, NULL, NULL);
    ck_assert_msg(rc == 9 && strstr(out, "cell"), "destroy with a cell: exit %d: %s", rc, out);
    value(&c, "baseapp01", a, "type", v, sizeof v);
    ck_assert_str_eq(v, "Probe");

    /* dropCell: the cell goes (and its space, the last entity in it), the base hears. */
    rc_entity_call(&c, "baseapp01", a, "dropCell", "[]", out, sizeof out);
    wait_event(&c, "baseapp01", a, "loseCell;");
    value(&c, "baseapp01", a, "cell", v, sizeof v);
    ck_assert_str_eq(v, "none");
    ck_assert(rc_wait_value(&c, "cellapp01", "entities/count", "count  0", WAIT_MS));
    ck_assert_int_eq(rc_int(&c, "cellapp01", "spaces/count"), 0);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "spaces/destroyed"), 1);

    /* Now destroy works and the entity is gone. */
    rc_entity_call(&c, "baseapp01", a, "die", NULL, out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    ck_assert_msg(wait_gone(&c, "baseapp01", a), "entity %d still listed", (int)a);
    ck_assert_int_eq(rc_int(&c, "baseapp01", "entities/count"), 0);

    /* A cell that destroys itself: its base loses it, and what it had survives in cellData
     * (the Probe base logs cellData's note in onLoseCell). */
    int32_t b = rc_create_probe(&c, "baseapp01", "b");
    make_cell(&c, b, NULL);
    wait_event(&c, "baseapp01", b, "getCell;");
    rc_entity_call(&c, "cellapp01", b, "note", "[\"kept across cells\"]", out, sizeof out);
    value(&c, "cellapp01", b, "props/cellNote", v, sizeof v);
    ck_assert_str_eq(v, "\"kept across cells\"");
    rc_entity_call(&c, "cellapp01", b, "die", "[]", out, sizeof out);
    wait_event(&c, "baseapp01", b, "loseCell;note=kept across cells;");
    value(&c, "baseapp01", b, "cellData/cellNote", v, sizeof v);
    ck_assert_str_eq(v, "\"kept across cells\"");
    value(&c, "baseapp01", b, "cell", v, sizeof v);
    ck_assert_str_eq(v, "none");

    /* The base can make a new cell, which starts from cellData. */
    make_cell(&c, b, NULL);
    for (int i = 0; i < WAIT_MS / 100; i++) {
        value(&c, "baseapp01", b, "props/events", v, sizeof v);
        if (count_of(v, "getCell;") == 2)
            break;
        h_sleep_ms(100);
    }
    ck_assert_msg(count_of(v, "getCell;") == 2, "events: %s", v);
    value(&c, "cellapp01", b, "props/cellNote", v, sizeof v);
    ck_assert_str_eq(v, "\"kept across cells\"");
    value(&c, "cellapp01", b, "part", v, sizeof v);
    ck_assert_str_eq(v, "cell");

    /* The operator destroys the cell (command/destroy on the cellapp): the base loses it. */
    snprintf(ids, sizeof ids, "%d", (int)b);
    rc = rc_call(&c, out, sizeof out, "cellapp01", "command/destroy", ids, NULL, NULL);
    ck_assert_msg(rc == 0 && strstr(out, "destroying"), "destroy cell: exit %d: %s", rc, out);
    for (int i = 0; i < WAIT_MS / 100; i++) {
        value(&c, "baseapp01", b, "props/events", v, sizeof v);
        if (count_of(v, "loseCell;") == 2)
            break;
        h_sleep_ms(100);
    }
    ck_assert_msg(count_of(v, "loseCell;") == 2, "events: %s", v);

    /* A cell near one that is not there: the base hears onCreateCellFailure. */
    char near[256];
    snprintf(near, sizeof near,
             "{\"id\":999999,\"addr\":\"%s\",\"component\":\"CELL\",\"type\":0}",
             c.cell_addr[0]);
    make_cell(&c, b, near);
    wait_event(&c, "baseapp01", b, "createCellFailure:");
    value(&c, "baseapp01", b, "cell", v, sizeof v);
    ck_assert_str_eq(v, "none");

    /* Shut down with a live cell and base: both exit cleanly. */
    make_cell(&c, b, NULL);
    for (int i = 0; i < WAIT_MS / 100; i++) {
        value(&c, "baseapp01", b, "props/events", v, sizeof v);
        if (count_of(v, "getCell;") == 3)
            break;
        h_sleep_ms(100);
    }
    ck_assert_msg(count_of(v, "getCell;") == 3, "events: %s", v);
    rc_stop(&c);
}
END_TEST

/* The space id of the only space on cellapp01 (from `ls spaces`). */
static int only_space(rc_cluster *c)
{
    char out[4096];
    int rc = h_watcher(out, sizeof out, c->manager, "ls", "cellapp01", "spaces", NULL);
    ck_assert_msg(rc == 0, "ls spaces: %s", out);
    int id = 0, n = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[64];
        if (sscanf(line, "%*s %63s", name) == 1 && name[0] >= '0' && name[0] <= '9') {
            id = atoi(name);
            n++;
        }
    }
    ck_assert_msg(n == 1, "%d spaces listed", n);
    return id;
}

START_TEST(destroying_a_space_takes_every_cell_in_it)
{
    rc_cluster c;
    rc_start(&c, 1, 1);
    char v[4096], out[4096], path[96];

    int32_t first = rc_create_probe(&c, "baseapp01", "first");
    make_cell(&c, first, NULL);
    wait_event(&c, "baseapp01", first, "getCell;");
    char near[512];
    rc_entity_call(&c, "baseapp01", first, "cellMailbox", NULL, near, sizeof near);
    ck_assert_msg(near[0] == '[' && strstr(near, "\"CELL\""), "cellMailbox: %s", near);
    near[strlen(near) - 1] = '\0'; /* "[{...}]" -> "{...}" */
    int32_t others[3];
    for (int i = 0; i < 3; i++) {
        others[i] = rc_create_probe(&c, "baseapp01", "other");
        make_cell(&c, others[i], near + 1);
    }
    for (int i = 0; i < 3; i++)
        wait_event(&c, "baseapp01", others[i], "getCell;");
    int space = only_space(&c);
    snprintf(path, sizeof path, "spaces/%d/entities", space);
    ck_assert_int_eq(rc_int(&c, "cellapp01", path), 4);

    /* A bystander in a space of its own. */
    int32_t alone = rc_create_probe(&c, "baseapp01", "alone");
    make_cell(&c, alone, NULL);
    wait_event(&c, "baseapp01", alone, "getCell;");
    ck_assert_int_eq(rc_int(&c, "cellapp01", "spaces/count"), 2);
    long long destroyed = rc_int(&c, "cellapp01", "spaces/destroyed");

    rc_entity_call(&c, "cellapp01", others[1], "killSpace", "[]", out, sizeof out);
    int32_t in_space[4] = {first, others[0], others[1], others[2]};
    for (int i = 0; i < 4; i++) {
        wait_event(&c, "baseapp01", in_space[i], "loseCell;");
        wait_event(&c, "baseapp01", in_space[i], "spaceGone;");
        value(&c, "baseapp01", in_space[i], "cell", v, sizeof v);
        ck_assert_str_eq(v, "none");
    }
    ck_assert(rc_wait_value(&c, "cellapp01", "spaces/count", "count  1", WAIT_MS));
    ck_assert_int_eq(rc_int(&c, "cellapp01", "spaces/destroyed"), destroyed + 1);
    ck_assert_int_eq(rc_int(&c, "cellapp01", "entities/count"), 1);
    char gone[4096];
    ck_assert_int_eq(rc_get(&c, gone, sizeof gone, "cellapp01", path), 4);
    /* The bystander kept its cell and heard nothing. */
    value(&c, "baseapp01", alone, "props/events", v, sizeof v);
    ck_assert_str_eq(v, "\"getCell;\"");
    value(&c, "baseapp01", alone, "cell", v, sizeof v);
    ck_assert_msg(strstr(v, "CELL"), "alone's cell: %s", v);

    /* A base whose space went can make a new cell. */
    make_cell(&c, first, NULL);
    for (int i = 0; i < WAIT_MS / 100; i++) {
        value(&c, "baseapp01", first, "props/events", v, sizeof v);
        if (count_of(v, "getCell;") == 2)
            break;
        h_sleep_ms(100);
    }
    ck_assert_msg(count_of(v, "getCell;") == 2, "events: %s", v);
    rc_stop(&c);
}
END_TEST

START_TEST(timers_fire_and_underscore_properties_load)
{
    rc_cluster c;
    rc_start(&c, 1, 1);
    char v[4096], out[8192], p[96];

    int32_t t = rc_create_probe(&c, "baseapp01", "t");
    /* _timer1 (a name beginning with '_', as in BigWorld's ClientAvatar.def) is a property
     * like any other: listed, shown, and set by the game (the timer's id). */
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "ls", "baseapp01",
                               "entities", NULL), 0);
    path_of(p, sizeof p, t, "props");
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "ls", "baseapp01", p, NULL), 0);
    ck_assert_msg(strstr(out, "_timer1 "), "no _timer1 in %s", out);
    value(&c, "baseapp01", t, "props/_timer1", v, sizeof v);
    ck_assert_str_eq(v, "0");
    value(&c, "baseapp01", t, "props/timerFires", v, sizeof v);
    ck_assert_str_eq(v, "0");

    rc_entity_call(&c, "baseapp01", t, "startTimer", "[0.05, 0.05]", out, sizeof out);
    ck_assert_str_eq(out, "[]");
    path_of(p, sizeof p, t, "props/timerFires");
    ck_assert_msg(rc_wait_int_at_least(&c, "baseapp01", p, 5, WAIT_MS), "timer did not fire");
    path_of(p, sizeof p, t, "props/_timer1");
    ck_assert_int_gt(rc_int(&c, "baseapp01", p), 0);
    /* It keeps firing (repeat). */
    path_of(p, sizeof p, t, "props/timerFires");
    long long fires = rc_int(&c, "baseapp01", p);
    ck_assert_msg(rc_wait_int_at_least(&c, "baseapp01", p, fires + 3, WAIT_MS),
                  "the timer stopped repeating");
    /* The timer goes with its entity: destroying it while the timer runs is clean. */
    rc_entity_call(&c, "baseapp01", t, "die", NULL, out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    ck_assert(wait_gone(&c, "baseapp01", t));
    rc_stop(&c);
}
END_TEST

/* One line of output, containing want, and exit code 9 (refused). */
static void refused(rc_cluster *c, const char *proc, const char *path, const char *a1,
                    const char *a2, const char *a3, const char *want)
{
    char out[4096];
    int rc = rc_call(c, out, sizeof out, proc, path, a1, a2, a3);
    ck_assert_msg(rc == 9, "%s %s %s %s: exit %d, not 9: %s", path, a1 ? a1 : "",
                  a2 ? a2 : "", a3 ? a3 : "", rc, out);
    size_t len = strlen(out);
    ck_assert_msg(len > 0 && strchr(out, '\n') == out + len - 1, "not one line: %s", out);
    ck_assert_msg(strstr(out, "refused") && strstr(out, want), "'%s' not in: %s", want, out);
}

START_TEST(entity_watchers_show_values_and_commands_refuse_bad_input)
{
    rc_cluster c;
    rc_start(&c, 1, 1);
    char v[4096], out[4096], ids[32];

    int32_t w = rc_create_probe(&c, "baseapp01", "watched");
    snprintf(ids, sizeof ids, "%d", (int)w);
    value(&c, "baseapp01", w, "type", v, sizeof v);
    ck_assert_str_eq(v, "Probe");
    value(&c, "baseapp01", w, "part", v, sizeof v);
    ck_assert_str_eq(v, "base");
    value(&c, "baseapp01", w, "props/label", v, sizeof v);
    ck_assert_str_eq(v, "\"watched\"");
    value(&c, "baseapp01", w, "props/peer", v, sizeof v);
    ck_assert_str_eq(v, "null");
    value(&c, "baseapp01", w, "props/created", v, sizeof v);
    ck_assert_str_eq(v, "[]");
    value(&c, "baseapp01", w, "cellData/hp", v, sizeof v);
    ck_assert_str_eq(v, "0");
    ck_assert_int_eq(rc_int(&c, "baseapp01", "entities/count"), 1);

    /* Property values follow the entity. */
    rc_entity_call(&c, "baseapp01", w, "ping", "[1]", out, sizeof out);
    rc_entity_call(&c, "baseapp01", w, "ping", "[2]", out, sizeof out);
    value(&c, "baseapp01", w, "props/baseSeen", v, sizeof v);
    ck_assert_str_eq(v, "2");
    value(&c, "baseapp01", w, "props/baseLast", v, sizeof v);
    ck_assert_str_eq(v, "2");
    rc_entity_call(&c, "baseapp01", w, "echo", "[-42]", out, sizeof out);
    ck_assert_str_eq(out, "[-42]");
    rc_entity_call(&c, "baseapp01", w, "remember",
                   "[{\"id\":7,\"addr\":\"127.0.0.1:9\",\"component\":\"BASE\",\"type\":0}]",
                   out, sizeof out);
    value(&c, "baseapp01", w, "props/peer", v, sizeof v);
    ck_assert_msg(strstr(v, "\"id\":7") && strstr(v, "\"BASE\""), "peer: %s", v);

    /* command/call: arguments checked against the def like a call from the network. */
    refused(&c, "baseapp01", "command/call", ids, "ping", "[1,", "");
    refused(&c, "baseapp01", "command/call", ids, "ping", "[\"one\"]", "seq");
    refused(&c, "baseapp01", "command/call", ids, "ping", "[1, 2]", "too many");
    refused(&c, "baseapp01", "command/call", ids, "ping", "[-1]", "seq");
    refused(&c, "baseapp01", "command/call", ids, "ping", "{}", "");
    refused(&c, "baseapp01", "command/call", ids, "noSuchMethod", "[]", "noSuchMethod");
    refused(&c, "baseapp01", "command/call", ids, "note", "[\"x\"]", "note"); /* a cell method */
    refused(&c, "baseapp01", "command/call", "999999", "ping", "[1]", "no such entity");
    refused(&c, "baseapp01", "command/call", "x", "ping", "[1]", "usage");
    /* A handler that fails is refused with its status. */
    refused(&c, "baseapp01", "command/call", ids, "fail", NULL, "");
    ck_assert_int_ge(rc_int(&c, "baseapp01", "calls/refused/handler"), 1);
    /* command/destroy of an unknown id (or not an id). */
    refused(&c, "baseapp01", "command/destroy", "999999", NULL, NULL, "no such entity");
    refused(&c, "baseapp01", "command/destroy", "0", NULL, NULL, "usage");
    refused(&c, "cellapp01", "command/destroy", ids, NULL, NULL, "no such entity");

    /* A good call still works afterwards; command/destroy of a base without a cell works. */
    rc_entity_call(&c, "baseapp01", w, "echo", "[5]", out, sizeof out);
    ck_assert_str_eq(out, "[5]");
    int rc = rc_call(&c, out, sizeof out, "baseapp01", "command/destroy", ids, NULL, NULL);
    ck_assert_msg(rc == 0 && strstr(out, "destroying"), "destroy: exit %d: %s", rc, out);
    ck_assert(wait_gone(&c, "baseapp01", w));
    ck_assert_int_eq(rc_int(&c, "baseapp01", "entities/count"), 0);
    rc_stop(&c);
}
END_TEST

static void wait_answers(rc_cluster *c, const char *proc, int32_t id, long long n)
{
    char p[96];
    path_of(p, sizeof p, id, "props/answers");
    ck_assert_msg(rc_wait_int_at_least(c, proc, p, n, WAIT_MS), "%s entity %d: no answer %lld",
                  proc, (int)id, n);
}

static long long last_status(rc_cluster *c, const char *proc, int32_t id)
{
    char p[96];
    path_of(p, sizeof p, id, "props/lastStatus");
    return rc_int(c, proc, p);
}

START_TEST(global_names_are_unique_found_from_anywhere_and_freed_with_their_base)
{
    rc_cluster c;
    rc_start(&c, 2, 0);
    char v[4096], out[4096];

    int32_t a = rc_create_probe(&c, "baseapp01", "a");
    int32_t b = rc_create_probe(&c, "baseapp01", "b");
    int32_t s = rc_create_probe(&c, "baseapp02", "seeker");

    rc_entity_call(&c, "baseapp01", a, "registerAs", "[\"rules.svc\"]", out, sizeof out);
    wait_answers(&c, "baseapp01", a, 1);
    ck_assert_int_eq(last_status(&c, "baseapp01", a), 0);
    value(&c, "baseapp01", a, "globalNames", v, sizeof v);
    ck_assert_msg(strstr(v, "rules.svc"), "globalNames: %s", v);

    /* Taken: another base (on the same baseapp) cannot have it. */
    rc_entity_call(&c, "baseapp01", b, "registerAs", "[\"rules.svc\"]", out, sizeof out);
    wait_answers(&c, "baseapp01", b, 1);
    ck_assert_int_eq(last_status(&c, "baseapp01", b), -16);

    /* Found from the other baseapp: a SERVICE mailbox to a, which reaches it. */
    rc_entity_call(&c, "baseapp02", s, "lookup", "[\"rules.svc\"]", out, sizeof out);
    wait_answers(&c, "baseapp02", s, 1);
    ck_assert_int_eq(last_status(&c, "baseapp02", s), 0);
    value(&c, "baseapp02", s, "props/peer", v, sizeof v);
    char want[64];
    snprintf(want, sizeof want, "\"id\":%d,", (int)a);
    ck_assert_msg(strstr(v, "\"SERVICE\"") && strstr(v, want) && strstr(v, c.base_addr[0]),
                  "peer: %s", v);
    rc_entity_call(&c, "baseapp02", s, "blastPeer", "[3, 1]", out, sizeof out);
    char p[96];
    path_of(p, sizeof p, a, "props/baseSeen");
    ck_assert_msg(rc_wait_int_at_least(&c, "baseapp01", p, 3, WAIT_MS), "calls on SERVICE lost");
    path_of(p, sizeof p, a, "props/baseOrderErrors");
    ck_assert_int_eq(rc_int(&c, "baseapp01", p), 0);

    /* Destroying the registered base frees the name. */
    rc_entity_call(&c, "baseapp01", a, "die", NULL, out, sizeof out);
    ck_assert_str_eq(out, "[0]");
    ck_assert(wait_gone(&c, "baseapp01", a));
    long long answers = 1, st = 0;
    for (int i = 0; i < 50 && st != -15; i++) {
        rc_entity_call(&c, "baseapp02", s, "lookup", "[\"rules.svc\"]", out, sizeof out);
        wait_answers(&c, "baseapp02", s, ++answers);
        st = last_status(&c, "baseapp02", s);
        if (st != -15)
            h_sleep_ms(200);
    }
    ck_assert_int_eq(st, -15);
    /* ... and another base can take it now. */
    rc_entity_call(&c, "baseapp01", b, "registerAs", "[\"rules.svc\"]", out, sizeof out);
    wait_answers(&c, "baseapp01", b, 2);
    ck_assert_int_eq(last_status(&c, "baseapp01", b), 0);
    rc_stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("entity_rules");
    TCase *tc = tcase_create("rules");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_base_with_a_cell_is_not_destroyed_and_a_dead_cell_leaves_its_properties);
    tcase_add_test(tc, destroying_a_space_takes_every_cell_in_it);
    tcase_add_test(tc, timers_fire_and_underscore_properties_load);
    tcase_add_test(tc, entity_watchers_show_values_and_commands_refuse_bad_input);
    tcase_add_test(tc, global_names_are_unique_found_from_anywhere_and_freed_with_their_base);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
