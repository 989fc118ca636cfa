/* Persistence through the engine, the robustness cases (issue 9's last items): real
 * baseapps, a cellapp and a manager running the Keeper game on a private redis-server.
 * - A check-out or create that Redis applied but whose answer the baseapp never got (a
 *   timeout; rehearsed with db/faults/loseWonAnswer) is given back: the entity can be
 *   loaded elsewhere at once, it is not left "loading" by a live baseapp (BUSY forever).
 * - A check-out left by a crashed process whose host and pid a live baseapp has now is not
 *   taken for that baseapp's: incarnations are random per start, registered with the
 *   manager.
 * - A base written while it had a cell gets its cell back when it is loaded, and the bases
 *   of one space come back in one space.
 * - Write serials end to end: an older write reaching Redis after a newer one never wins.
 * - A stale identifier entry is removed by the load that finds it (not while its entity is
 *   checked out).
 * - Redis host names are refused with a clear reason (never resolved).
 */
#include "harness.h"
#include "persist_cluster.h"
#include "redis_harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAIT_MS 20000

static rh_redis *start_redis(void)
{
    rh_options opt = {.aof = false};
    rh_redis *r = rh_start(&opt);
    ck_assert_msg(r != NULL, "redis-server did not start");
    return r;
}

static uint64_t write_ok(pc_cluster *c, const char *proc, int32_t id)
{
    char why[8192];
    uint64_t dbid = pc_write(c, proc, id, why, sizeof why);
    ck_assert_msg(dbid > 0, "writeToDB %d on %s: %s", (int)id, proc, why);
    return dbid;
}

/* Load through an operator command; the new entity id (the test fails unless it was
 * loaded here, not found live elsewhere). */
static int32_t load_here(pc_cluster *c, const char *proc, const char *command, const char *key)
{
    char out[8192];
    int rc = pc_load(c, proc, command, key, out, sizeof out);
    ck_assert_msg(rc == 0, "%s %s on %s: exit %d: %s", command, key, proc, rc, out);
    ck_assert_msg(strstr(out, "(Keeper) dbid ") && strstr(out, " loaded"),
                  "%s %s on %s: '%s'", command, key, proc, out);
    return (int32_t)atoi(out);
}

static void set_fault(pc_cluster *c, const char *proc, const char *path, const char *value)
{
    char out[4096];
    ck_assert_msg(h_watcher(out, sizeof out, c->manager, "set", proc, path, value, NULL) == 0,
                  "set %s %s: %s", proc, path, out);
}

/* A field of the entity's check-out in Redis ("" when it has none). */
static void checkout_field(rh_redis *r, uint64_t dbid, const char *field, char *out, size_t n)
{
    char key[96];
    snprintf(key, sizeof key, "mc:o:{Keeper:%llu}", (unsigned long long)dbid);
    if (rh_cli(r, out, n, "HGET", key, field, NULL) != 0)
        out[0] = '\0';
    out[strcspn(out, "\r\n")] = '\0';
}

/* Destroy entity id on proc without writing it (its only entity), and wait until its
 * check-out is released. */
static void destroy_and_wait_released(pc_cluster *c, rh_redis *r, const char *proc, int32_t id,
                                      uint64_t dbid)
{
    char out[8192];
    snprintf(out, sizeof out, "%d", (int)id);
    ck_assert_int_eq(pc_call(c, out, sizeof out, proc, "command/destroyBase", out, "nowrite",
                             NULL),
                     0);
    ck_assert(pc_wait_int(c, proc, "entities/count", 0, WAIT_MS));
    char owner[128] = "x";
    for (int waited = 0; waited < WAIT_MS && owner[0]; waited += 100) {
        checkout_field(r, dbid, "owner", owner, sizeof owner);
        if (owner[0])
            h_sleep_ms(100);
    }
    ck_assert_msg(!owner[0], "still checked out by %s", owner);
}

START_TEST(test_abandoned_checkout_given_back)
{
    rh_redis *r = start_redis();
    pc_cluster c;
    /* loadWaitMs 1000: a "loading" check-out of a live owner makes a load BUSY after 1 s */
    pc_start(&c, rh_addr(r), 2, "--loadWaitMs=1000");
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    int32_t id = pc_create(&c, b1, "{\"name\":\"abandoned\",\"counter\":11}");
    uint64_t dbid = write_ok(&c, b1, id);
    char out[8192], key[32];
    snprintf(key, sizeof key, "%llu", (unsigned long long)dbid);
    snprintf(out, sizeof out, "%d", (int)id);
    ck_assert_int_eq(pc_call(&c, out, sizeof out, b1, "command/destroyBase", out, "nowrite",
                             NULL),
                     0);
    ck_assert(pc_wait_int(&c, b1, "entities/count", 0, WAIT_MS));
    char owner[128];
    for (int waited = 0; waited < WAIT_MS; waited += 100) {
        checkout_field(r, dbid, "owner", owner, sizeof owner);
        if (!owner[0])
            break;
        h_sleep_ms(100);
    }
    ck_assert_msg(!owner[0], "still checked out by %s after the destroy", owner);

    /* The load on baseapp01 wins the check-out in Redis, but the answer is taken for lost
     * (as after a timeout): the load fails, and the token must be given back. */
    set_fault(&c, b1, "db/faults/loseWonAnswer", "1");
    int rc = pc_load(&c, b1, "createBaseFromDB", key, out, sizeof out);
    ck_assert_msg(rc != 0 && strstr(out, "loseWonAnswer"), "the load did not fail: %s", out);
    ck_assert_int_eq(pc_int(&c, b1, "db/faults/loseWonAnswer"), 0);
    /* Loadable elsewhere (without the give-back: BUSY after --loadWaitMs, held "loading"
     * by a live baseapp). */
    int32_t got = load_here(&c, b2, "createBaseFromDB", key);
    ck_assert_msg(pc_wait_int(&c, b1, "db/givenBack", 1, WAIT_MS),
                  "the abandoned check-out was not counted as given back");
    ck_assert_int_gt(got, 0);
    ck_assert_int_eq(pc_prop_int(&c, b2, got, "counter"), 11);
    checkout_field(r, dbid, "owner", owner, sizeof owner);
    ck_assert_str_eq(owner, b2);

    /* The same for a create: the entity's record and check-out were made in Redis, the
     * first write is taken for failed; the new record is loadable by its identifier. */
    int32_t id2 = pc_create(&c, b1, "{\"name\":\"halfborn\",\"counter\":12}");
    set_fault(&c, b1, "db/faults/loseWonAnswer", "1");
    char why[8192];
    ck_assert_int_eq(pc_write(&c, b1, id2, why, sizeof why), 0);
    int32_t got2 = load_here(&c, b2, "createBaseFromDBByName", "halfborn");
    ck_assert_msg(pc_wait_int(&c, b1, "db/givenBack", 2, WAIT_MS),
                  "the abandoned create was not counted as given back");
    ck_assert_int_eq(pc_prop_int(&c, b2, got2, "counter"), 12);

    /* A destroyed base's release fails twice (db/faults/failReleases): it is retried, and
     * the entity is loadable elsewhere (a lost release left it held by a live baseapp). */
    int32_t id3 = pc_create(&c, b1, "{\"name\":\"letgo\",\"counter\":13}");
    uint64_t d3 = write_ok(&c, b1, id3);
    long long released = pc_int(&c, b1, "db/released");
    set_fault(&c, b1, "db/faults/failReleases", "2");
    snprintf(out, sizeof out, "%d", (int)id3);
    ck_assert_int_eq(pc_call(&c, out, sizeof out, b1, "command/destroyBase", out, "nowrite",
                             NULL),
                     0);
    ck_assert_msg(pc_wait_int(&c, b1, "db/released", released + 1, WAIT_MS),
                  "the release was not retried (log %s)", c.log_base[0]);
    ck_assert_int_eq(pc_int(&c, b1, "db/faults/failReleases"), 0);
    snprintf(key, sizeof key, "%llu", (unsigned long long)d3);
    int32_t got3 = load_here(&c, b2, "createBaseFromDB", key);
    ck_assert_int_eq(pc_prop_int(&c, b2, got3, "counter"), 13);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* The incarnation the baseapp used to derive from a host name and a pid (before it was
 * random per start): what a crashed process's check-out carries when that process had the
 * host name and pid a live baseapp has now (a pid reused after a reboot, pid 1 in a
 * container restarted with the same host name). */
static uint64_t host_pid_incarnation(const char *host, uint32_t pid)
{
    uint32_t h = 2166136261u;
    for (const char *c = host; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    return ((uint64_t)h << 32) | (pid ? pid : 1);
}

/* A check-out "loading" since a crash, by a process whose host and pid are those of a live
 * baseapp now: the owner is not that live baseapp (its incarnation is random per start and
 * registered with the manager), so the load releases the check-out and loads the entity.
 * With the incarnation derived from host and pid, the live baseapp was taken for the owner
 * and the load failed BUSY. The real incarnation of a live baseapp still holds it. */
START_TEST(test_reused_pid_is_not_the_owner)
{
    rh_redis *r = start_redis();
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, "--ownerGraceMs=100");
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    int32_t id = pc_create(&c, b1, "{\"name\":\"reborn\",\"counter\":21}");
    uint64_t dbid = write_ok(&c, b1, id);
    char out[8192], key[32], okey[96], inc[32];
    snprintf(key, sizeof key, "%llu", (unsigned long long)dbid);
    snprintf(okey, sizeof okey, "mc:o:{Keeper:%llu}", (unsigned long long)dbid);
    destroy_and_wait_released(&c, r, b1, id, dbid);

    /* The incarnations are not made of host and pid, and differ between processes. */
    char host[256] = "";
    ck_assert_int_eq(gethostname(host, sizeof host), 0);
    host[sizeof host - 1] = '\0';
    uint64_t old2 = host_pid_incarnation(host, (uint32_t)c.base[1]);
    ck_assert(pc_value(&c, b2, "db/incarnation", inc, sizeof inc));
    uint64_t inc2 = strtoull(inc, NULL, 10);
    ck_assert(pc_value(&c, b1, "db/incarnation", inc, sizeof inc));
    ck_assert_msg(inc2 != 0 && inc2 != old2 && inc2 != strtoull(inc, NULL, 10),
                  "incarnations %llu / %s (host and pid give %llu)", (unsigned long long)inc2,
                  inc, (unsigned long long)old2);

    /* An earlier process with baseapp02's host and pid left it "loading". */
    char oldtext[32];
    snprintf(oldtext, sizeof oldtext, "%llu", (unsigned long long)old2);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HSET", okey, "owner", "baseapp07",
                            "incarnation", oldtext, "state", "loading", "token",
                            "0123456789abcdef0123456789abcdef", "since", "1", NULL),
                     0);
    int32_t got = load_here(&c, b1, "createBaseFromDB", key);
    ck_assert_int_eq(pc_prop_int(&c, b1, got, "counter"), 21);
    char owner[128];
    checkout_field(r, dbid, "owner", owner, sizeof owner);
    ck_assert_str_eq(owner, b1);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* Write a Keeper with a cell at a position, with a cell property set; then drop the cell and
 * destroy the base without writing (the record keeps the cell part and its space). */
static uint64_t write_with_cell(pc_cluster *c, const char *proc, const char *props,
                                const char *note, const char *where)
{
    int32_t id = pc_create(c, proc, props);
    pc_invoke(c, proc, id, "makeCell", NULL);
    char path[96], text[64];
    snprintf(path, sizeof path, "entities/%d/cell", (int)id);
    ck_assert(h_wait_watch(c->manager, proc, path, "CELL", WAIT_MS));
    snprintf(text, sizeof text, "[\"%s\"]", note);
    pc_invoke(c, c->cell_name, id, "setNote", text);
    pc_invoke(c, c->cell_name, id, "moveTo", where);
    pc_invoke(c, proc, id, "save", NULL);
    snprintf(path, sizeof path, "entities/%d/props/answers", (int)id);
    ck_assert(pc_wait_int(c, proc, path, 1, WAIT_MS));
    ck_assert_int_eq(pc_prop_int(c, proc, id, "lastStatus"), 0);
    uint64_t dbid = (uint64_t)pc_prop_int(c, proc, id, "lastDbid");
    pc_invoke(c, proc, id, "dropCell", NULL);
    snprintf(path, sizeof path, "entities/%d/cell", (int)id);
    ck_assert(h_wait_watch(c->manager, proc, path, "none", WAIT_MS));
    char ids[32], out[4096];
    snprintf(ids, sizeof ids, "%d", (int)id);
    ck_assert_int_eq(pc_call(c, out, sizeof out, proc, "command/destroyBase", ids, "nowrite",
                             NULL),
                     0);
    return dbid;
}

/* A base written while it had a cell comes back with its cell, without the game asking:
 * its persistent cell properties and its position as written. A second base written in the
 * same space and loaded on the same baseapp joins the first one's space (the entities of a
 * space come back together), not a space of its own. */
START_TEST(test_loaded_cell_restored)
{
    rh_redis *r = start_redis();
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, "--restoreCells=true");
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    uint64_t d1 = write_with_cell(&c, b1, "{\"name\":\"first\"}", "kept", "[4,5,6]");
    uint64_t d2 = write_with_cell(&c, b1, "{\"name\":\"second\"}", "also", "[7,8,9]");
    /* Both were written in a space of their own (Keeper's makeCell makes a new space): the
     * second record is put in the first one's space, as if both had been in one. */
    char k1[96], k2[96], space[64], out[4096];
    snprintf(k1, sizeof k1, "mc:e:{Keeper:%llu}", (unsigned long long)d1);
    snprintf(k2, sizeof k2, "mc:e:{Keeper:%llu}", (unsigned long long)d2);
    ck_assert_int_eq(rh_cli(r, space, sizeof space, "HGET", k1, "@spaceId", NULL), 0);
    space[strcspn(space, "\r\n")] = '\0';
    ck_assert_msg(atoll(space) > 0, "no space stored: '%s'", space);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HSET", k2, "@spaceId", space, NULL), 0);

    char key[32], path[96], v1[64], v2[64];
    snprintf(key, sizeof key, "%llu", (unsigned long long)d1);
    int32_t id1 = load_here(&c, b2, "createBaseFromDB", key);
    snprintf(path, sizeof path, "entities/%d/cell", (int)id1);
    ck_assert_msg(h_wait_watch(c.manager, b2, path, "CELL", WAIT_MS),
                  "the loaded base did not get its cell back (log %s)", c.log_base[1]);
    snprintf(path, sizeof path, "entities/%d/position", (int)id1);
    ck_assert_msg(h_wait_watch(c.manager, c.cell_name, path, "4 5 6", WAIT_MS),
                  "the restored cell is not where it was written");
    char note[64];
    ck_assert(pc_prop(&c, c.cell_name, id1, "note", note, sizeof note));
    ck_assert_str_eq(note, "\"kept\"");

    snprintf(key, sizeof key, "%llu", (unsigned long long)d2);
    int32_t id2 = load_here(&c, b2, "createBaseFromDB", key);
    snprintf(path, sizeof path, "entities/%d/position", (int)id2);
    ck_assert_msg(h_wait_watch(c.manager, c.cell_name, path, "7 8 9", WAIT_MS),
                  "the second restored cell is not where it was written");
    ck_assert(pc_prop(&c, c.cell_name, id2, "note", note, sizeof note));
    ck_assert_str_eq(note, "\"also\"");
    snprintf(path, sizeof path, "entities/%d/space", (int)id1);
    ck_assert(pc_value(&c, c.cell_name, path, v1, sizeof v1));
    snprintf(path, sizeof path, "entities/%d/space", (int)id2);
    ck_assert(pc_value(&c, c.cell_name, path, v2, sizeof v2));
    ck_assert_msg(strcmp(v1, v2) == 0, "the two bases of one space came back in spaces %s and %s",
                  v1, v2);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* The counter field of a Keeper record in Redis. */
static long long stored_counter(rh_redis *r, uint64_t dbid)
{
    char key[96], out[256];
    snprintf(key, sizeof key, "mc:e:{Keeper:%llu}", (unsigned long long)dbid);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HGET", key, "counter", NULL), 0);
    return atoll(out);
}

/* Write serials end to end: a write made before a newer one but reaching Redis after it (as
 * a write resent after a lost connection may; rehearsed by holding it back in the baseapp
 * with db/faults/holdWrites and sending it late) is answered as written but never undoes
 * the newer one; later writes still land. */
START_TEST(test_late_older_write_never_wins)
{
    rh_redis *r = start_redis();
    pc_cluster c;
    pc_start(&c, rh_addr(r), 1, "--archivePeriodS=0");
    const char *b1 = c.base_name[0];
    int32_t id = pc_create(&c, b1, "{\"name\":\"ordered\",\"counter\":1}");
    uint64_t dbid = write_ok(&c, b1, id);
    ck_assert_int_eq(stored_counter(r, dbid), 1);

    /* The older write (counter 2) is made and held back... */
    set_fault(&c, b1, "db/faults/holdWrites", "1");
    pc_invoke(&c, b1, id, "bump", "[1]");
    pc_invoke(&c, b1, id, "save", NULL);
    ck_assert_msg(pc_wait_int(&c, b1, "db/faults/heldWrites", 1, WAIT_MS),
                  "the write was not held back");
    ck_assert_int_eq(pc_prop_int(&c, b1, id, "answers"), 0);
    /* ...a newer one (counter 3) lands... */
    pc_invoke(&c, b1, id, "bump", "[1]");
    write_ok(&c, b1, id);
    ck_assert_int_eq(stored_counter(r, dbid), 3);
    /* ...then the older one reaches Redis: answered, not applied. */
    set_fault(&c, b1, "db/faults/heldWrites", "0");
    char path[96];
    snprintf(path, sizeof path, "entities/%d/props/answers", (int)id);
    ck_assert(pc_wait_int(&c, b1, path, 1, WAIT_MS));
    ck_assert_int_eq(pc_prop_int(&c, b1, id, "lastStatus"), 0);
    ck_assert_msg(stored_counter(r, dbid) == 3, "the older write undid the newer one: counter %lld",
                  stored_counter(r, dbid));
    /* The check-out goes on: a later write lands. */
    pc_invoke(&c, b1, id, "bump", "[1]");
    write_ok(&c, b1, id);
    ck_assert_int_eq(stored_counter(r, dbid), 4);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

static bool key_exists(rh_redis *r, const char *key)
{
    char out[256];
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "EXISTS", key, NULL), 0);
    return atoi(out) == 1;
}

/* A stale identifier entry (it names an entity that holds another value now; left by a
 * crash between a rename's steps) is removed by the load by that value that finds it -
 * unless the entity is checked out (its writer may be claiming the value) - so the value
 * can be taken again without an operator's `mc-db unindex`. */
START_TEST(test_stale_identifier_removed_by_load)
{
    rh_redis *r = start_redis();
    pc_cluster c;
    pc_start(&c, rh_addr(r), 1, NULL);
    const char *b1 = c.base_name[0];
    int32_t id = pc_create(&c, b1, "{\"name\":\"oldname\",\"counter\":5}");
    uint64_t dbid = write_ok(&c, b1, id);
    char ekey[96], out[8192], key[32];
    snprintf(ekey, sizeof ekey, "mc:e:{Keeper:%llu}", (unsigned long long)dbid);
    snprintf(key, sizeof key, "%llu", (unsigned long long)dbid);
    const char *ikey = "mc:id:{Keeper:oldname}";
    ck_assert(key_exists(r, ikey));
    /* Renamed in Redis while checked out (live here): the entry is left alone. */
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HSET", ekey, "name", "\"newname\"", NULL), 0);
    int rc = pc_load(&c, b1, "createBaseFromDBByName", "oldname", out, sizeof out);
    ck_assert_msg(rc != 0, "a load by a value nobody holds succeeded: %s", out);
    ck_assert_msg(key_exists(r, ikey), "the entry of a checked-out entity was removed");
    /* Not checked out any more: the load that finds the entry removes it. */
    destroy_and_wait_released(&c, r, b1, id, dbid);
    rc = pc_load(&c, b1, "createBaseFromDBByName", "oldname", out, sizeof out);
    ck_assert_msg(rc != 0 && strstr(out, "stale identifier entry was removed"), "%s", out);
    ck_assert_msg(!key_exists(r, ikey), "the stale entry is still there");
    char owner[128];
    checkout_field(r, dbid, "owner", owner, sizeof owner);
    ck_assert_msg(!owner[0], "the entity was left checked out by %s", owner);
    ck_assert_int_eq(pc_int(&c, b1, "db/store/staleIdentsRemoved"), 1);
    /* The value can be taken again, and the renamed entity still loads by its dbid. */
    int32_t id2 = pc_create(&c, b1, "{\"name\":\"oldname\",\"counter\":6}");
    write_ok(&c, b1, id2);
    int32_t got = load_here(&c, b1, "createBaseFromDB", key);
    ck_assert_int_eq(pc_prop_int(&c, b1, got, "counter"), 5);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* Redis host names are refused with a clear reason (they are never resolved: a lookup would
 * block the event loop), by the baseapp at start-up and by the data layer (mc-db). */
START_TEST(test_redis_host_name_refused)
{
    char bin[512], out[4096];
    char *base[] = {(char *)h_bin("baseapp", bin, sizeof bin), "--redis=localhost:6379",
                    "--manager=127.0.0.1:9", NULL};
    int rc = h_run(base, out, sizeof out, 30000);
    ck_assert_msg(rc != 0 && strstr(out, "'localhost:6379' names a host") &&
                      strstr(out, "not resolved"),
                  "baseapp (%d): %s", rc, out);
    char *cluster[] = {bin, "--redisCluster=127.0.0.1:7000,redis-b.example:7001",
                       "--manager=127.0.0.1:9", NULL};
    rc = h_run(cluster, out, sizeof out, 30000);
    ck_assert_msg(rc != 0 && strstr(out, "'redis-b.example:7001' names a host"),
                  "baseapp --redisCluster (%d): %s", rc, out);
    char dbbin[512];
    char *mcdb[] = {(char *)h_bin("mc-db", dbbin, sizeof dbbin), "--redis", "localhost:6379",
                    "types", NULL};
    rc = h_run(mcdb, out, sizeof out, 30000);
    ck_assert_msg(rc != 0 && strstr(out, "'localhost' is not a numeric IP address") &&
                      strstr(out, "not resolved"),
                  "mc-db (%d): %s", rc, out);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("persist_robust");
    TCase *tc = tcase_create("robust");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_abandoned_checkout_given_back);
    tcase_add_test(tc, test_reused_pid_is_not_the_owner);
    tcase_add_test(tc, test_loaded_cell_restored);
    tcase_add_test(tc, test_late_older_write_never_wins);
    tcase_add_test(tc, test_stale_identifier_removed_by_load);
    tcase_add_test(tc, test_redis_host_name_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
