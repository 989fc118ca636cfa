/* An Identifier on a cell property (issue 21 item 7), through real processes: the
 * BigWorld-style game of tests/defs/bigworld (its Avatar's playerName is ALL_CLIENTS,
 * Persistent and the Identifier) on a manager, two baseapps with a private redis-server and
 * a cellapp. An Avatar is written with the name in its cellData, found by it, refused a
 * second holder, and loaded on the other baseapp with the name back in its cellData; then
 * with a live cell whose handler renames it, a write takes the new name from the cell
 * (FETCH_CELL): the entity is found by the new name and no longer by the old one. */
#include "harness.h"
#include "persist_cluster.h"
#include "redis_harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 20000

static int32_t create_avatar(pc_cluster *c, const char *proc, const char *json)
{
    char buf[8192], v[256];
    int rc = pc_call(c, buf, sizeof buf, proc, "command/createBase", "Avatar", json, NULL);
    ck_assert_msg(rc == 0 && pc_result(buf, "command/createBase", v, sizeof v),
                  "createBase Avatar on %s: exit %d: %s", proc, rc, buf);
    int32_t id = (int32_t)atoi(v);
    ck_assert_msg(id > 0 && strstr(v, "(Avatar)"), "createBase: %s", v);
    return id;
}

/* command/<command> Avatar KEY on proc: the loaded (or live) entity id, *live which; or 0
 * with the output in out when the watcher call failed (its exit status in *rc). */
static int32_t load_avatar(pc_cluster *c, const char *proc, const char *command,
                           const char *key, bool *live, int *rc, char *out, size_t outlen)
{
    char path[96], buf[8192];
    snprintf(path, sizeof path, "command/%s", command);
    *rc = pc_call(c, buf, sizeof buf, proc, path, "Avatar", key, NULL);
    if (*rc != 0 || !pc_result(buf, path, out, outlen)) {
        snprintf(out, outlen, "%s", buf);
        return 0;
    }
    ck_assert_msg(strstr(out, "(Avatar) dbid "), "%s %s: '%s'", command, key, out);
    *live = strstr(out, " live") != NULL;
    return (int32_t)atoi(out);
}

static void assert_value(pc_cluster *c, const char *proc, int32_t id, const char *what,
                         const char *want)
{
    char path[160], v[512];
    snprintf(path, sizeof path, "entities/%d/%s", (int)id, what);
    ck_assert_msg(pc_value(c, proc, path, v, sizeof v), "get %s %s failed", proc, path);
    ck_assert_msg(strcmp(v, want) == 0, "%s %s: '%s', want '%s'", proc, path, v, want);
}

/* Poll until entities/<id>/cell on proc starts with prefix ("none", or an id: a live cell). */
static bool wait_cell(pc_cluster *c, const char *proc, int32_t id, bool live)
{
    char path[96], v[256];
    snprintf(path, sizeof path, "entities/%d/cell", (int)id);
    for (int waited = 0; waited <= WAIT_MS; waited += 100) {
        if (pc_value(c, proc, path, v, sizeof v)) {
            bool none = strcmp(v, "none") == 0, creating = strcmp(v, "creating") == 0;
            if (live ? (!none && !creating) : none)
                return true;
        }
        h_sleep_ms(100);
    }
    return false;
}

static void destroy_written(pc_cluster *c, const char *proc, int32_t id)
{
    long long released = pc_int(c, proc, "db/released");
    char ids[32], buf[4096];
    snprintf(ids, sizeof ids, "%d", (int)id);
    int rc = pc_call(c, buf, sizeof buf, proc, "command/destroyBase", ids, "write", NULL);
    ck_assert_msg(rc == 0, "destroyBase %d write: %s", (int)id, buf);
    ck_assert_msg(pc_wait_int(c, proc, "db/released", released + 1, WAIT_MS),
                  "%d's check-out was not released", (int)id);
}

START_TEST(test_identifier_on_a_cell_property)
{
    rh_options opt = {0};
    rh_redis *r = rh_start(&opt);
    ck_assert_msg(r != NULL, "redis-server did not start");
    pc_cluster c;
    pc_start_game(&c, rh_addr(r), 2, NULL, MC_BIGWORLD_RES, MC_BIGWORLD_GAME);
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    char why[8192], out[8192];
    bool live;
    int rc;

    /* Written without a cell: the name comes from the cellData. */
    int32_t id = create_avatar(&c, b1, "{\"playerName\":\"Kestrel\",\"health\":77,"
                                       "\"realm\":\"north\"}");
    assert_value(&c, b1, id, "cellData/playerName", "\"Kestrel\"");
    uint64_t dbid = pc_write(&c, b1, id, why, sizeof why);
    ck_assert_msg(dbid > 0, "writeToDB: %s", why);

    /* Found by it (live), from the other baseapp too. */
    ck_assert_int_eq(load_avatar(&c, b2, "createBaseFromDBByName", "Kestrel", &live, &rc, out,
                                 sizeof out), id);
    ck_assert(live);

    /* A second Avatar of that name is refused when it is written: the name is taken. */
    int32_t other = create_avatar(&c, b2, "{\"playerName\":\"Kestrel\"}");
    ck_assert_int_eq(pc_write(&c, b2, other, why, sizeof why), 0);
    ck_assert_msg(strstr(why, "taken") || strstr(why, "TAKEN") || strstr(why, "identifier"),
                  "the second Kestrel: %s", why);

    /* Destroyed with a last write, loaded by name on the other baseapp: the name (and the
     * rest of the cell part) is back in its cellData. */
    destroy_written(&c, b1, id);
    int32_t id2 = load_avatar(&c, b2, "createBaseFromDBByName", "Kestrel", &live, &rc, out,
                              sizeof out);
    ck_assert_msg(id2 > 0, "load Kestrel: exit %d: %s", rc, out);
    ck_assert(!live);
    assert_value(&c, b2, id2, "cellData/playerName", "\"Kestrel\"");
    assert_value(&c, b2, id2, "cellData/health", "77");
    assert_value(&c, b2, id2, "cellData/realm", "\"north\"");
    char key[32];
    snprintf(key, sizeof key, "%llu", (unsigned long long)dbid);
    assert_value(&c, b2, id2, "databaseID", key);

    /* With a live cell, the cell's handler renames it; the write takes the name from the
     * cell: found by the new name, not by the old. */
    pc_invoke(&c, b2, id2, "enterWorld", "[]");
    ck_assert_msg(wait_cell(&c, b2, id2, true), "%d got no cell", (int)id2);
    pc_invoke(&c, c.cell_name, id2, "setPlayerName", "[\"Osprey\"]");
    ck_assert_int_eq(pc_write(&c, b2, id2, why, sizeof why), dbid);
    ck_assert_int_eq(load_avatar(&c, b1, "createBaseFromDBByName", "Osprey", &live, &rc, out,
                                 sizeof out), id2);
    ck_assert(live);
    ck_assert_int_eq(load_avatar(&c, b1, "createBaseFromDBByName", "Kestrel", &live, &rc, out,
                                 sizeof out), 0);
    ck_assert_msg(rc != 0 && (strstr(out, "not found") || strstr(out, "no Avatar")),
                  "Kestrel after the rename: exit %d: %s", rc, out);

    /* The cell goes (its last properties back in the cellData) and the base with a last
     * write: loaded again by the new name, with it. */
    pc_invoke(&c, b2, id2, "leaveWorld", "[]");
    ck_assert_msg(wait_cell(&c, b2, id2, false), "%d kept its cell", (int)id2);
    assert_value(&c, b2, id2, "cellData/playerName", "\"Osprey\"");
    destroy_written(&c, b2, id2);
    int32_t id3 = load_avatar(&c, b1, "createBaseAnywhereFromDBByName", "Osprey", &live, &rc,
                              out, sizeof out);
    ck_assert_msg(id3 > 0 && !live, "load Osprey: exit %d: %s", rc, out);
    const char *where = b1;
    char path[96], v[64];
    snprintf(path, sizeof path, "entities/%d/cellData/playerName", (int)id3);
    if (!pc_value(&c, b1, path, v, sizeof v))
        where = b2; /* loaded on the least-loaded baseapp */
    assert_value(&c, where, id3, "cellData/playerName", "\"Osprey\"");
    assert_value(&c, where, id3, "cellData/health", "77");

    pc_stop(&c);
    rh_stop(r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("persist_cell_identifier");
    TCase *tc = tcase_create("cell_identifier");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_identifier_on_a_cell_property);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
