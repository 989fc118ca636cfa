/* Persistence through the engine (issue 9): real baseapps and a cellapp running the Keeper
 * game on a private redis-server. Writing and loading every def type by database id and by
 * identifier, the cell part fetched from the cell, two baseapps loading one entity at the
 * same moment, kill -9 of a baseapp (its check-outs released, its entities loadable
 * elsewhere), a cut-off baseapp's stale write refused by token, redis-server killed and
 * restarted in a stream of writes, graceful shutdown writing everything, auto-load. */
#include "harness.h"
#include "persist_cluster.h"
#include "redis_harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_MS 20000

/* Every Persistent base property of Keeper with a value that is not its default. */
static const char *const all_props =
    "{\"name\":\"alpha\",\"counter\":-9000000000,\"i8\":-128,\"i16\":-32768,"
    "\"i32\":-2147483648,\"u8\":255,\"u16\":65535,\"u32\":4294967295,"
    "\"u64\":18446744073709551615,\"f32\":1.5,\"f64\":-2.25e-300,"
    "\"ustr\":\"h\\u00e9llo \\u2603\",\"blob\":\"AAEC/w==\",\"v2\":[1,2],\"v3\":[1,2,3],"
    "\"v4\":[1,2,3,4],\"list\":[1,-2,3],\"triple\":[0.5,1.5,2.5],"
    "\"slot\":{\"item\":7,\"label\":\"sword\"},"
    "\"slots\":[{\"item\":1,\"label\":\"a\"},{\"item\":2,\"label\":\"b\"}],"
    "\"maybe\":{\"item\":9},\"scratch\":5}";

static const char *const persistent[] = {"name", "counter", "i8",   "i16",    "i32",  "u8",
                                         "u16",  "u32",     "u64",  "f32",    "f64",  "ustr",
                                         "blob", "v2",      "v3",   "v4",     "list", "triple",
                                         "slot", "slots",   "maybe", "friend"};
#define NPERSISTENT (sizeof persistent / sizeof persistent[0])

static rh_redis *start_redis(bool aof)
{
    rh_options opt = {.aof = aof};
    rh_redis *r = rh_start(&opt);
    ck_assert_msg(r != NULL, "redis-server did not start");
    return r;
}

static void dbid_text(uint64_t dbid, char *out, size_t n)
{
    snprintf(out, n, "%llu", (unsigned long long)dbid);
}

/* Write a base through the operator command; its database id. */
static uint64_t write_ok(pc_cluster *c, const char *proc, int32_t id)
{
    char why[8192];
    uint64_t dbid = pc_write(c, proc, id, why, sizeof why);
    ck_assert_msg(dbid > 0, "writeToDB %d on %s: %s", (int)id, proc, why);
    return dbid;
}

/* Destroy a base (write|nowrite|delete) and wait until its check-out is released. */
static void destroy_released(pc_cluster *c, const char *proc, int32_t id, const char *how)
{
    long long released = pc_int(c, proc, "db/released");
    long long deleted = pc_int(c, proc, "db/deleted");
    char ids[32], buf[4096];
    snprintf(ids, sizeof ids, "%d", (int)id);
    int rc = pc_call(c, buf, sizeof buf, proc, "command/destroyBase", ids, how, NULL);
    ck_assert_msg(rc == 0, "destroyBase %d %s: %s", (int)id, how, buf);
    if (strcmp(how, "delete") == 0)
        ck_assert_msg(pc_wait_int(c, proc, "db/deleted", deleted + 1, WAIT_MS),
                      "%d was not deleted", (int)id);
    else
        ck_assert_msg(pc_wait_int(c, proc, "db/released", released + 1, WAIT_MS),
                      "%d's check-out was not released", (int)id);
}

/* Load through an operator command; the new (or live) entity id; *live says which. */
static int32_t load_ok(pc_cluster *c, const char *proc, const char *command, const char *key,
                       bool *live)
{
    char out[8192];
    int rc = pc_load(c, proc, command, key, out, sizeof out);
    ck_assert_msg(rc == 0, "%s %s on %s: exit %d: %s", command, key, proc, rc, out);
    ck_assert_msg(strstr(out, "(Keeper) dbid "), "%s: unexpected answer '%s'", command, out);
    *live = strstr(out, " live") != NULL;
    ck_assert_msg(*live || strstr(out, " loaded"), "%s: '%s'", command, out);
    return (int32_t)atoi(out);
}

START_TEST(test_round_trip_every_type)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, NULL);
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];

    /* friend: a mailbox survives as a value. */
    char props[4096];
    snprintf(props, sizeof props,
             "%.*s,\"friend\":{\"id\":77,\"addr\":\"127.0.0.1:5000\",\"component\":\"BASE\","
             "\"type\":0}}",
             (int)strlen(all_props) - 1, all_props);
    int32_t id = pc_create(&c, b1, props);
    char before[NPERSISTENT][512];
    for (size_t i = 0; i < NPERSISTENT; i++)
        ck_assert(pc_prop(&c, b1, id, persistent[i], before[i], sizeof before[i]));
    uint64_t dbid = write_ok(&c, b1, id);
    char path[96];
    snprintf(path, sizeof path, "entities/%d/databaseID", (int)id);
    ck_assert_int_eq(pc_int(&c, b1, path), (long long)dbid);
    /* A second write keeps the database id. */
    ck_assert_int_eq(write_ok(&c, b1, id), dbid);

    /* Live on baseapp01: loading it anywhere answers with that entity. */
    char key[32];
    dbid_text(dbid, key, sizeof key);
    bool live;
    ck_assert_int_eq(load_ok(&c, b2, "createBaseFromDB", key, &live), id);
    ck_assert(live);
    ck_assert_int_eq(load_ok(&c, b2, "createBaseFromDBByName", "alpha", &live), id);
    ck_assert(live);
    ck_assert_int_eq(pc_int(&c, b2, "entities/count"), 0);

    /* Destroyed (with a last write): loaded on baseapp02 with every value it had. */
    destroy_released(&c, b1, id, "write");
    int32_t id2 = load_ok(&c, b2, "createBaseFromDB", key, &live);
    ck_assert(!live);
    ck_assert_int_ne(id2, id);
    for (size_t i = 0; i < NPERSISTENT; i++) {
        char after[512];
        ck_assert(pc_prop(&c, b2, id2, persistent[i], after, sizeof after));
        ck_assert_msg(strcmp(before[i], after) == 0, "%s: written %s, loaded %s", persistent[i],
                      before[i], after);
    }
    ck_assert_int_eq(pc_prop_int(&c, b2, id2, "scratch"), 0); /* not persistent */
    ck_assert_int_eq(pc_prop_int(&c, b2, id2, "createdDbid"), (long long)dbid);
    snprintf(path, sizeof path, "entities/%d/databaseID", (int)id2);
    ck_assert_int_eq(pc_int(&c, b2, path), (long long)dbid);
    ck_assert_int_eq(load_ok(&c, b1, "createBaseAnywhereFromDBByName", "alpha", &live), id2);
    ck_assert(live);

    /* Through the game API: a Keeper on baseapp01 looks alpha up by name (live on
     * baseapp02), then an unknown name. */
    int32_t g = pc_create(&c, b1, "{\"name\":\"gamma\"}");
    pc_invoke(&c, b1, g, "loadName", "[\"alpha\",0]");
    snprintf(path, sizeof path, "entities/%d/props/answers", (int)g);
    ck_assert(pc_wait_int(&c, b1, path, 1, WAIT_MS));
    ck_assert_int_eq(pc_prop_int(&c, b1, g, "lastStatus"), 0);
    ck_assert_int_eq(pc_prop_int(&c, b1, g, "loadedLive"), 1);
    ck_assert_int_eq(pc_prop_int(&c, b1, g, "lastDbid"), (long long)dbid);
    pc_invoke(&c, b1, g, "loadName", "[\"nobody\",1]");
    ck_assert(pc_wait_int(&c, b1, path, 2, WAIT_MS));
    ck_assert_int_eq(pc_prop_int(&c, b1, g, "lastStatus"), -15); /* MC_CALL_ERR_NOT_FOUND */
    /* save() from the game: its first write gives gamma a database id. */
    pc_invoke(&c, b1, g, "save", NULL);
    ck_assert(pc_wait_int(&c, b1, path, 3, WAIT_MS));
    ck_assert_int_eq(pc_prop_int(&c, b1, g, "lastStatus"), 0);
    ck_assert_int_gt(pc_prop_int(&c, b1, g, "lastDbid"), (long long)dbid);
    /* An identifier held by another entity: refused (taken), nothing written. */
    int32_t dup = pc_create(&c, b1, "{\"name\":\"alpha\"}");
    char why[8192];
    ck_assert_int_eq(pc_write(&c, b1, dup, why, sizeof why), 0);
    ck_assert_msg(strstr(why, "taken"), "duplicate identifier: %s", why);

    /* destroy(deleteFromDB): gone from the database. */
    destroy_released(&c, b2, id2, "delete");
    char out[8192];
    ck_assert_int_ne(pc_load(&c, b1, "createBaseFromDB", key, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "not found") && strstr(out, "no Keeper with database id"),
                  "load after delete: %s", out);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

START_TEST(test_cell_part_written_with_base)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    /* The game makes the loaded base's cell itself (the engine's own restore is tested in
     * test_persist_robust.c). */
    pc_start(&c, rh_addr(r), 2, NULL); /* --restoreCells is off by default */
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    int32_t id = pc_create(&c, b1, "{\"name\":\"celled\"}");
    pc_invoke(&c, b1, id, "makeCell", NULL);
    char path[96], v[256];
    snprintf(path, sizeof path, "entities/%d/cell", (int)id);
    ck_assert(h_wait_watch(c.manager, b1, path, "CELL", WAIT_MS));
    pc_invoke(&c, c.cell_name, id, "setNote", "[\"hello\"]");
    pc_invoke(&c, c.cell_name, id, "moveTo", "[1.5,2.5,3.5]");
    /* writeToDB from the game while the cell lives: the cell part comes from the cell. */
    pc_invoke(&c, b1, id, "save", NULL);
    snprintf(path, sizeof path, "entities/%d/props/answers", (int)id);
    ck_assert(pc_wait_int(&c, b1, path, 1, WAIT_MS));
    ck_assert_int_eq(pc_prop_int(&c, b1, id, "lastStatus"), 0);
    uint64_t dbid = (uint64_t)pc_prop_int(&c, b1, id, "lastDbid");
    pc_invoke(&c, c.cell_name, id, "setNote", "[\"later\"]"); /* after the write: not stored */
    pc_invoke(&c, b1, id, "dropCell", NULL);
    snprintf(path, sizeof path, "entities/%d/cell", (int)id);
    ck_assert(h_wait_watch(c.manager, b1, path, "none", WAIT_MS));
    destroy_released(&c, b1, id, "nowrite");

    char key[32];
    dbid_text(dbid, key, sizeof key);
    bool live;
    int32_t id2 = load_ok(&c, b2, "createBaseFromDB", key, &live);
    ck_assert(!live);
    snprintf(path, sizeof path, "entities/%d/cellData/note", (int)id2);
    ck_assert(pc_value(&c, b2, path, v, sizeof v));
    ck_assert_str_eq(v, "\"hello\"");
    snprintf(path, sizeof path, "entities/%d/cellData/hits", (int)id2);
    ck_assert_int_eq(pc_int(&c, b2, path), 1);
    /* Its next cell starts where the written one was. */
    pc_invoke(&c, b2, id2, "makeCell", NULL);
    snprintf(path, sizeof path, "entities/%d/position", (int)id2);
    ck_assert_msg(h_wait_watch(c.manager, c.cell_name, path, "1.5 2.5 3.5", WAIT_MS),
                  "the loaded entity's cell is not where it was written");
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

START_TEST(test_two_baseapps_load_at_once)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, NULL);
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    enum { ROUNDS = 6 };
    uint64_t dbids[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        char props[64];
        snprintf(props, sizeof props, "{\"name\":\"race%d\",\"counter\":%d}", i, i);
        int32_t id = pc_create(&c, b1, props);
        dbids[i] = write_ok(&c, b1, id);
        destroy_released(&c, b1, id, "nowrite");
    }
    for (int i = 0; i < ROUNDS; i++) {
        /* Two watcher processes at once, one per baseapp (by id, or by name every other
         * round). */
        char bin[512], key[32], logs[2][700], cmd[64];
        dbid_text(dbids[i], key, sizeof key);
        char name[32];
        snprintf(name, sizeof name, "race%d", i);
        snprintf(cmd, sizeof cmd, "command/%s", i % 2 ? "createBaseFromDBByName"
                                                       : "createBaseFromDB");
        pid_t pids[2];
        for (int k = 0; k < 2; k++) {
            snprintf(logs[k], sizeof logs[k], "%s/race%d-%d.out", c.dir, i, k);
            char mopt[64];
            snprintf(mopt, sizeof mopt, "--manager=%s", c.manager);
            char *argv[] = {(char *)h_bin("watcher", bin, sizeof bin), mopt, "call",
                            (char *)(k ? b2 : b1), cmd, "Keeper", i % 2 ? name : key, NULL};
            pids[k] = h_spawn(argv, logs[k]);
            ck_assert_int_gt(pids[k], 0);
        }
        int loaded = 0, livec = 0;
        int32_t ids[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            ck_assert_int_eq(h_wait_exit(pids[k], 30000), 0);
            FILE *f = fopen(logs[k], "r");
            ck_assert(f != NULL);
            char line[1024] = "";
            ck_assert(fgets(line, sizeof line, f) != NULL);
            fclose(f);
            char v[1024];
            ck_assert_msg(pc_result(line, cmd, v, sizeof v), "answer: %s", line);
            ids[k] = atoi(v);
            loaded += strstr(v, " loaded") != NULL;
            livec += strstr(v, " live") != NULL;
        }
        ck_assert_msg(loaded == 1 && livec == 1, "round %d: %d loaded, %d live", i, loaded,
                      livec);
        ck_assert_int_eq(ids[0], ids[1]);
    }
    ck_assert_int_eq(pc_int(&c, b1, "entities/count") + pc_int(&c, b2, "entities/count"),
                     ROUNDS);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

START_TEST(test_kill9_releases_checkouts)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, NULL);
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    enum { N = 3 };
    uint64_t dbids[N];
    for (int i = 0; i < N; i++) {
        char props[64];
        snprintf(props, sizeof props, "{\"name\":\"k%d\"}", i);
        int32_t id = pc_create(&c, b1, props);
        char arg[32];
        snprintf(arg, sizeof arg, "[%d]", 100 + i);
        pc_invoke(&c, b1, id, "bump", arg);
        dbids[i] = write_ok(&c, b1, id);
    }
    h_kill(c.base[0], SIGKILL);
    h_wait_exit(c.base[0], 10000);
    c.base[0] = -1;
    /* The manager's notice makes baseapp02 release baseapp01's check-outs. */
    ck_assert_msg(pc_wait_int(&c, b2, "db/releasedOfDead", N, WAIT_MS),
                  "baseapp01's check-outs were not released (log %s)", c.log_base[1]);
    for (int i = 0; i < N; i++) {
        char key[32];
        dbid_text(dbids[i], key, sizeof key);
        bool live;
        int32_t id = load_ok(&c, b2, "createBaseFromDB", key, &live);
        ck_assert(!live);
        ck_assert_int_eq(pc_prop_int(&c, b2, id, "counter"), 100 + i);
    }
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

START_TEST(test_cut_off_baseapp_is_fenced)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, "--archivePeriodS=1");
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    int32_t id = pc_create(&c, b1, "{\"name\":\"fence\",\"counter\":1}");
    uint64_t dbid = write_ok(&c, b1, id);
    /* Cut baseapp01 off (stopped: no heartbeats); the manager declares it dead. */
    h_kill(c.base[0], SIGSTOP);
    ck_assert_msg(pc_wait_int(&c, b2, "db/releasedOfDead", 1, WAIT_MS),
                  "the stopped baseapp's check-out was not released");
    char key[32];
    dbid_text(dbid, key, sizeof key);
    bool live;
    int32_t id2 = load_ok(&c, b2, "createBaseFromDB", key, &live);
    ck_assert(!live);
    pc_invoke(&c, b2, id2, "bump", "[1000]");
    ck_assert_int_eq(write_ok(&c, b2, id2), dbid);
    /* baseapp01 comes back: the manager fences it (it exits), or, if its archiving writes
     * the old copy first, Redis refuses the write by token. */
    h_kill(c.base[0], SIGCONT);
    bool refused = false;
    for (int waited = 0; waited < WAIT_MS && !refused; waited += 100) {
        refused = h_file_contains(c.log_base[0], "is checked out by another baseapp now") ||
                  !h_alive(c.base[0]);
        h_sleep_ms(100);
    }
    ck_assert_msg(refused, "the cut-off baseapp neither stopped nor was refused (log %s)",
                  c.log_base[0]);
    /* What Redis holds is baseapp02's copy; the entity lives once. */
    char out[256];
    char hkey[96];
    snprintf(hkey, sizeof hkey, "mc:e:{Keeper:%llu}", (unsigned long long)dbid);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HGET", hkey, "counter", NULL), 0);
    ck_assert_msg(strncmp(out, "1001", 4) == 0, "stored counter: %s", out);
    ck_assert_int_eq(load_ok(&c, b2, "createBaseFromDB", key, &live), id2);
    ck_assert(live);
    if (h_alive(c.base[0])) {
        /* Its copy was destroyed, not written again. */
        char path[96];
        snprintf(path, sizeof path, "entities/count");
        ck_assert(pc_wait_int(&c, b1, path, 0, WAIT_MS) || !h_alive(c.base[0]));
    }
    if (!h_alive(c.base[0]))
        c.base[0] = -1;
    else {
        h_kill(c.base[0], SIGKILL);
        h_wait_exit(c.base[0], 10000);
        c.base[0] = -1;
    }
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

START_TEST(test_stale_write_refused_by_token)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, NULL);
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    int32_t id = pc_create(&c, b1, "{\"name\":\"stale\",\"counter\":1}");
    uint64_t dbid = write_ok(&c, b1, id);
    /* baseapp01 is cut off without the manager noticing yet: its check-out is released
     * behind its back (as the survivors do for a dead owner) and baseapp02 loads it. */
    char okey[96], out[512];
    snprintf(okey, sizeof okey, "mc:o:{Keeper:%llu}", (unsigned long long)dbid);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "DEL", okey, NULL), 0);
    char key[32];
    dbid_text(dbid, key, sizeof key);
    bool live;
    int32_t id2 = load_ok(&c, b2, "createBaseFromDB", key, &live);
    ck_assert(!live);
    pc_invoke(&c, b2, id2, "bump", "[1000]");
    ck_assert_int_eq(write_ok(&c, b2, id2), dbid);
    /* baseapp01 writes its old copy: refused by Redis (token), its copy destroyed. */
    pc_invoke(&c, b1, id, "bump", "[5]");
    char why[8192];
    ck_assert_int_eq(pc_write(&c, b1, id, why, sizeof why), 0);
    ck_assert_msg(strstr(why, "state"), "stale write: %s", why);
    ck_assert_int_eq(pc_int(&c, b1, "db/fenced"), 1);
    ck_assert(pc_wait_int(&c, b1, "entities/count", 0, WAIT_MS));
    char hkey[96];
    snprintf(hkey, sizeof hkey, "mc:e:{Keeper:%llu}", (unsigned long long)dbid);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HGET", hkey, "counter", NULL), 0);
    ck_assert_msg(strncmp(out, "1001", 4) == 0, "stored counter: %s", out);
    ck_assert_int_eq(load_ok(&c, b1, "createBaseFromDB", key, &live), id2);
    ck_assert(live);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* A copy with a cell is fenced (its check-out released behind its back and the entity
 * loaded elsewhere): its cell is destroyed, then its base; only the other copy lives. */
START_TEST(test_fenced_copy_with_a_cell)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, NULL);
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    long long cells0 = pc_int(&c, c.cell_name, "entities/count");
    int32_t id = pc_create(&c, b1, "{\"name\":\"celled\",\"counter\":1}");
    uint64_t dbid = write_ok(&c, b1, id);
    pc_invoke(&c, b1, id, "makeCell", NULL);
    char path[96];
    snprintf(path, sizeof path, "entities/%d/cell", (int)id);
    ck_assert(h_wait_watch(c.manager, b1, path, "CELL", WAIT_MS));
    ck_assert(pc_wait_int(&c, c.cell_name, "entities/count", cells0 + 1, WAIT_MS));
    char okey[96], out[512];
    snprintf(okey, sizeof okey, "mc:o:{Keeper:%llu}", (unsigned long long)dbid);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "DEL", okey, NULL), 0);
    char key[32];
    dbid_text(dbid, key, sizeof key);
    bool live;
    int32_t id2 = load_ok(&c, b2, "createBaseFromDB", key, &live);
    ck_assert(!live);
    pc_invoke(&c, b2, id2, "bump", "[1000]");
    ck_assert_int_eq(write_ok(&c, b2, id2), dbid);
    /* Its writes carry serials (1, 2, ...), kept with the check-out. */
    ck_assert_int_eq(write_ok(&c, b2, id2), dbid);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HGET", okey, "serial", NULL), 0);
    ck_assert_msg(strncmp(out, "2", 1) == 0, "stored serial: %s", out);
    /* baseapp01 writes its copy (the cell part fetched from its cell): refused by token. */
    pc_invoke(&c, b1, id, "bump", "[5]");
    char why[8192];
    ck_assert_int_eq(pc_write(&c, b1, id, why, sizeof why), 0);
    ck_assert_msg(strstr(why, "state"), "stale write: %s", why);
    /* Its cell goes, then its base. */
    ck_assert_msg(pc_wait_int(&c, c.cell_name, "entities/count", cells0, WAIT_MS),
                  "the fenced copy's cell still lives (log %s)", c.log_base[0]);
    ck_assert_msg(pc_wait_int(&c, b1, "entities/count", 0, WAIT_MS),
                  "the fenced copy's base still lives (log %s)", c.log_base[0]);
    char hkey[96];
    snprintf(hkey, sizeof hkey, "mc:e:{Keeper:%llu}", (unsigned long long)dbid);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HGET", hkey, "counter", NULL), 0);
    ck_assert_msg(strncmp(out, "1001", 4) == 0, "stored counter: %s", out);
    ck_assert_int_eq(load_ok(&c, b1, "createBaseFromDB", key, &live), id2);
    ck_assert(live);
    ck_assert_int_eq(pc_int(&c, b2, "entities/count"), 1);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* A check-out in state "loading" (another baseapp is loading the entity): a load waits for
 * it; when the other load never ends and its owner is the live process that checked it out,
 * it gives up after --loadWaitMs with the owner's name; when the check-out's owner is not
 * that process (its incarnation differs: a crash between check-out and mark_live), it is
 * released after --loadWaitMs and the entity loads. */
START_TEST(test_load_waits_for_a_loading_entity)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, "--loadWaitMs=2000");
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    char inc2[32];
    ck_assert(pc_value(&c, b2, "db/incarnation", inc2, sizeof inc2));
    int32_t id = pc_create(&c, b1, "{\"name\":\"slow\",\"counter\":7}");
    uint64_t dbid = write_ok(&c, b1, id);
    destroy_released(&c, b1, id, "nowrite");
    char okey[96], out[8192], key[32];
    snprintf(okey, sizeof okey, "mc:o:{Keeper:%llu}", (unsigned long long)dbid);
    dbid_text(dbid, key, sizeof key);
    /* baseapp02 (the live process, its incarnation) "is loading" it and never finishes. */
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HSET", okey, "owner", b2,
                            "incarnation", inc2, "state", "loading", "token",
                            "00000000000000000000000000000000", NULL),
                     0);
    long t0 = 0;
    {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t0 = ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    ck_assert_int_ne(pc_load(&c, b1, "createBaseFromDB", key, out, sizeof out), 0);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long waited = ts.tv_sec * 1000 + ts.tv_nsec / 1000000 - t0;
    char want[64];
    snprintf(want, sizeof want, "being loaded by %s", b2);
    ck_assert_msg(strstr(out, "busy") && strstr(out, want), "load of a loading entity: %s",
                  out);
    ck_assert_msg(waited >= 1000, "gave up after %ld ms, long before --loadWaitMs", waited);
    /* Again, and the other load ends (its check-out goes) while this one waits: it loads. */
    char bin[512], mopt[64], log[700];
    snprintf(mopt, sizeof mopt, "--manager=%s", c.manager);
    snprintf(log, sizeof log, "%s/wait.out", c.dir);
    char *argv[] = {(char *)h_bin("watcher", bin, sizeof bin), mopt, "call", (char *)b1,
                    "command/createBaseFromDB", "Keeper", key, NULL};
    pid_t pid = h_spawn(argv, log);
    ck_assert_int_gt(pid, 0);
    h_sleep_ms(500);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "DEL", okey, NULL), 0);
    ck_assert_int_eq(h_wait_exit(pid, 30000), 0);
    ck_assert_msg(h_file_contains(log, "dbid") && h_file_contains(log, " loaded"),
                  "the waiting load did not load it (%s)", log);
    /* Its check-out "loading" by an earlier incarnation of baseapp02 (crashed before
     * mark_live; the name now belongs to another process): released after --loadWaitMs. */
    {
        /* The copy it loaded goes away first (released, not written). */
        FILE *f = fopen(log, "r");
        ck_assert_ptr_nonnull(f);
        char buf[1024] = "";
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        char loaded[64];
        ck_assert(pc_result(buf, "command/createBaseFromDB", loaded, sizeof loaded));
        ck_assert_int_gt(atoi(loaded), 0);
        destroy_released(&c, b1, (int32_t)atoi(loaded), "nowrite");
    }
    long long released = pc_int(&c, b1, "db/releasedOfDead");
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HSET", okey, "owner", b2, "incarnation", "1",
                            "state", "loading", "token", "00000000000000000000000000000000",
                            NULL),
                     0);
    bool live = true;
    int32_t got = load_ok(&c, b1, "createBaseFromDB", key, &live);
    ck_assert_msg(!live, "a crashed loader's check-out was taken as live");
    ck_assert_int_eq(pc_prop_int(&c, b1, got, "counter"), 7);
    ck_assert_int_eq(pc_int(&c, b1, "db/releasedOfDead"), released + 1);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* mark_live fails (Redis briefly stopped during the load; the first sends dropped through
 * db/faults/failMarkLive, as a failure at that moment cannot be timed from outside): it is
 * retried with back-off, the check-out becomes live and another baseapp's load gets the live
 * mailbox, not BUSY. A copy whose check-out was taken meanwhile hears FENCED on its retry
 * and is destroyed. */
START_TEST(test_mark_live_retried)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, "--loadWaitMs=1000");
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    int32_t id = pc_create(&c, b1, "{\"name\":\"marked\",\"counter\":3}");
    uint64_t dbid = write_ok(&c, b1, id);
    destroy_released(&c, b1, id, "nowrite");
    char out[8192], okey[96], key[32];
    snprintf(okey, sizeof okey, "mc:o:{Keeper:%llu}", (unsigned long long)dbid);
    dbid_text(dbid, key, sizeof key);
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "set", b1, "db/faults/failMarkLive",
                               "2", NULL),
                     0);
    /* Redis stops while the load is asked, and comes back. */
    ck_assert_int_eq(kill(rh_pid(r), SIGSTOP), 0);
    char bin[512], mopt[64], log[700];
    snprintf(mopt, sizeof mopt, "--manager=%s", c.manager);
    snprintf(log, sizeof log, "%s/marklive.out", c.dir);
    char *argv[] = {(char *)h_bin("watcher", bin, sizeof bin), mopt, "call", (char *)b1,
                    "command/createBaseFromDB", "Keeper", key, NULL};
    pid_t pid = h_spawn(argv, log);
    ck_assert_int_gt(pid, 0);
    h_sleep_ms(500);
    ck_assert_int_eq(kill(rh_pid(r), SIGCONT), 0);
    ck_assert_int_eq(h_wait_exit(pid, 30000), 0);
    ck_assert_msg(h_file_contains(log, " loaded"), "the load failed (%s)", log);
    /* Its check-out becomes live after the dropped sends. */
    bool is_live = false;
    for (int waited = 0; waited < WAIT_MS && !is_live; waited += 100) {
        is_live = rh_cli(r, out, sizeof out, "HGET", okey, "state", NULL) == 0 &&
                  strncmp(out, "live", 4) == 0;
        if (!is_live)
            h_sleep_ms(100);
    }
    ck_assert_msg(is_live, "the check-out did not become live (log %s)", c.log_base[0]);
    ck_assert_int_eq(pc_int(&c, b1, "db/faults/failMarkLive"), 0);
    bool live = false;
    int32_t got = load_ok(&c, b2, "createBaseFromDB", key, &live);
    ck_assert_msg(live, "baseapp02 did not get the live mailbox");
    ck_assert_int_eq(pc_int(&c, b1, "entities/count"), 1);
    int32_t mine = got;

    /* Again, and the check-out is taken from it while its mark_live waits to be retried:
     * the retry hears FENCED and the copy goes. */
    destroy_released(&c, b1, mine, "nowrite");
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "set", b1, "db/faults/failMarkLive",
                               "4", NULL),
                     0);
    got = load_ok(&c, b1, "createBaseFromDB", key, &live);
    ck_assert(!live);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "DEL", okey, NULL), 0);
    long long fenced = pc_int(&c, b1, "db/fenced");
    int32_t other = load_ok(&c, b2, "createBaseFromDB", key, &live);
    ck_assert(!live);
    ck_assert_msg(pc_wait_int(&c, b1, "db/fenced", fenced + 1, WAIT_MS),
                  "the retried mark_live was not refused (log %s)", c.log_base[0]);
    ck_assert(pc_wait_int(&c, b1, "entities/count", 0, WAIT_MS));
    ck_assert_int_eq(load_ok(&c, b1, "createBaseFromDB", key, &live), other);
    ck_assert(live);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* Archiving: every entity with a database id is written again within the archive period,
 * without anyone asking (here 2 s; checked within 20 s). */
START_TEST(test_archiving_writes_every_entity)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 1, "--archivePeriodS=2");
    const char *b1 = c.base_name[0];
    enum { N = 30 };
    int32_t ids[N];
    uint64_t dbids[N];
    for (int i = 0; i < N; i++) {
        char props[64];
        snprintf(props, sizeof props, "{\"name\":\"arch%d\"}", i);
        ids[i] = pc_create(&c, b1, props);
        dbids[i] = write_ok(&c, b1, ids[i]);
    }
    long long archived = pc_int(&c, b1, "db/archived");
    for (int i = 0; i < N; i++) {
        char arg[32];
        snprintf(arg, sizeof arg, "[%d]", 1000 + i);
        pc_invoke(&c, b1, ids[i], "bump", arg); /* only archiving writes this */
    }
    for (int i = 0; i < N; i++) {
        char hkey[96], out[256] = "";
        snprintf(hkey, sizeof hkey, "mc:e:{Keeper:%llu}", (unsigned long long)dbids[i]);
        bool stored = false;
        for (int waited = 0; waited < 20000 && !stored; waited += 100) {
            stored = rh_cli(r, out, sizeof out, "HGET", hkey, "counter", NULL) == 0 &&
                     atoi(out) == 1000 + i;
            if (!stored)
                h_sleep_ms(100);
        }
        ck_assert_msg(stored, "entity %d was not archived (counter in Redis: %s)", (int)ids[i],
                      out);
    }
    ck_assert_int_ge(pc_int(&c, b1, "db/archived"), archived + N);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* A graceful shutdown while Redis is down: bounded by --shutdownWriteMs, said in the log,
 * and the process still exits 0. */
START_TEST(test_shutdown_with_redis_down_is_bounded)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 1, "--shutdownWriteMs=1000");
    int32_t id = pc_create(&c, c.base_name[0], "{\"name\":\"lost\"}");
    write_ok(&c, c.base_name[0], id);
    ck_assert_int_eq(rh_kill(r, SIGKILL), 0);
    pc_stop_baseapp(&c, 0);
    ck_assert_msg(h_file_contains(c.log_base[0], "shutdown: gave up after") &&
                      h_file_contains(c.log_base[0], "1 writes unanswered"),
                  "the shutdown did not report its unanswered write (log %s)", c.log_base[0]);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* Check-outs nobody released: the only baseapp dies (no survivor hears of it), then the
 * whole cluster crashes; a new baseapp, then a new cluster, load those entities (the
 * manager says their owner is not the process that checked them out). */
START_TEST(test_orphaned_checkouts)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 1, NULL);
    int32_t id = pc_create(&c, c.base_name[0], "{\"name\":\"orphan\",\"counter\":5}");
    uint64_t dbid = write_ok(&c, c.base_name[0], id);
    int32_t id2 = pc_create(&c, c.base_name[0], "{\"name\":\"crashed\",\"counter\":6}");
    uint64_t dbid2 = write_ok(&c, c.base_name[0], id2);
    pc_invoke(&c, c.base_name[0], id2, "autoLoad", "[1]");
    h_kill(c.base[0], SIGKILL);
    h_wait_exit(c.base[0], 10000);
    c.base[0] = -1;
    char path[96];
    snprintf(path, sizeof path, "processes/%s/state", c.base_name[0]);
    ck_assert(h_wait_watch(c.manager, "manager", path, "dead", WAIT_MS));
    int slot = pc_add_baseapp(&c, NULL);
    char key[32];
    dbid_text(dbid, key, sizeof key);
    bool live;
    int32_t got = load_ok(&c, c.base_name[slot], "createBaseFromDB", key, &live);
    ck_assert(!live);
    ck_assert_int_eq(pc_prop_int(&c, c.base_name[slot], got, "counter"), 5);
    /* The second baseapp's auto-load took the crashed one's flagged entity as well. */
    dbid_text(dbid2, key, sizeof key);
    got = load_ok(&c, c.base_name[slot], "createBaseFromDB", key, &live);
    ck_assert_int_eq(pc_prop_int(&c, c.base_name[slot], got, "counter"), 6);

    /* Now everything crashes: a new cluster (new manager, same addresses would not matter)
     * loads what the crashed baseapp held. */
    h_kill(c.base[slot], SIGKILL);
    h_kill(c.cell, SIGKILL);
    h_kill(c.mgr, SIGKILL);
    h_wait_exit(c.base[slot], 10000);
    h_wait_exit(c.cell, 10000);
    h_wait_exit(c.mgr, 10000);
    /* Its owner is unknown to the new manager: released once the manager is older than
     * --ownerGraceMs (short here: the watcher's call waits 5 s; by default about 8 s). */
    pc_cluster c2;
    pc_start(&c2, rh_addr(r), 1, "--ownerGraceMs=1000");
    dbid_text(dbid, key, sizeof key);
    got = load_ok(&c2, c2.base_name[0], "createBaseFromDB", key, &live);
    ck_assert_msg(!live, "a crashed cluster's check-out was taken as live");
    ck_assert_int_eq(pc_prop_int(&c2, c2.base_name[0], got, "counter"), 5);
    /* The auto-load entity came back by itself (its orphaned check-out released). */
    ck_assert_msg(pc_wait_int(&c2, c2.base_name[0], "db/autoloaded", 1, WAIT_MS),
                  "the auto-load entity did not come back after the crash");
    pc_stop(&c2);
    rh_stop(r);
}
END_TEST

/* The lone baseapp dies (no survivor hears of it) holding two check-outs its death left
 * behind: one whose member its owner set lost (a release of the owner racing with its
 * check-out removed it), one still "loading" (it crashed between check-out and
 * mark_live). A new baseapp loads both in bounded time, releasing each check-out by its
 * key: never a load that spins, never one refused for good. */
START_TEST(test_orphans_unlisted_or_loading)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 1, NULL);
    const char *b1 = c.base_name[0];
    int32_t id = pc_create(&c, b1, "{\"name\":\"unlisted\",\"counter\":11}");
    uint64_t dbid = write_ok(&c, b1, id);
    int32_t id2 = pc_create(&c, b1, "{\"name\":\"halfway\",\"counter\":12}");
    uint64_t dbid2 = write_ok(&c, b1, id2);
    h_kill(c.base[0], SIGKILL);
    h_wait_exit(c.base[0], 10000);
    c.base[0] = -1;
    char path[96];
    snprintf(path, sizeof path, "processes/%s/state", b1);
    ck_assert(h_wait_watch(c.manager, "manager", path, "dead", WAIT_MS));
    char set[96], member[64], okey2[96], out[256];
    snprintf(set, sizeof set, "mc:owned:{%s}", b1);
    snprintf(member, sizeof member, "Keeper:%llu", (unsigned long long)dbid);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "SREM", set, member, NULL), 0);
    ck_assert_msg(strncmp(out, "1", 1) == 0, "SREM %s %s: %s", set, member, out);
    snprintf(okey2, sizeof okey2, "mc:o:{Keeper:%llu}", (unsigned long long)dbid2);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HSET", okey2, "state", "loading", NULL), 0);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HDEL", okey2, "mailbox", NULL), 0);
    int slot = pc_add_baseapp(&c, "--loadWaitMs=1000");
    const char *b2 = c.base_name[slot];
    char key[32];
    dbid_text(dbid, key, sizeof key);
    bool live = true;
    int32_t got = load_ok(&c, b2, "createBaseFromDB", key, &live);
    ck_assert_msg(!live, "the dead owner's check-out was taken as live");
    ck_assert_int_eq(pc_prop_int(&c, b2, got, "counter"), 11);
    dbid_text(dbid2, key, sizeof key);
    live = true;
    got = load_ok(&c, b2, "createBaseFromDB", key, &live);
    ck_assert_msg(!live, "the crashed loader's check-out was taken as live");
    ck_assert_int_eq(pc_prop_int(&c, b2, got, "counter"), 12);
    ck_assert_int_eq(pc_int(&c, b2, "db/releasedOfDead"), 2);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* A live check-out whose mailbox is at this baseapp's own address but was made by another
 * incarnation (an earlier process on the same ports: the demo run again in its run dir after
 * a crash; under another name, as names are handed out again): the load releases it and
 * loads, instead of waiting for an entity of ours that does not exist and failing busy
 * ("being loaded by ..."). */
START_TEST(test_earlier_process_at_our_address)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 1, NULL);
    const char *b1 = c.base_name[0];
    int32_t id = pc_create(&c, b1, "{\"name\":\"earlier\",\"counter\":21}");
    uint64_t dbid = write_ok(&c, b1, id);
    char okey[96], out[256];
    snprintf(okey, sizeof okey, "mc:o:{Keeper:%llu}", (unsigned long long)dbid);
    /* its live check-out (mailbox at b1's address), kept aside while it is released */
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "COPY", okey, "mc:test:saved", NULL), 0);
    destroy_released(&c, b1, id, "write");
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "COPY", "mc:test:saved", okey, NULL), 0);
    ck_assert_msg(strncmp(out, "1", 1) == 0, "COPY: %s", out);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HSET", okey, "owner", "baseapp09",
                            "incarnation", "77", NULL),
                     0);
    long long released = pc_int(&c, b1, "db/releasedOfDead");
    char key[32];
    dbid_text(dbid, key, sizeof key);
    bool live = true;
    int32_t got = load_ok(&c, b1, "createBaseFromDB", key, &live);
    ck_assert_msg(!live, "an earlier process's check-out was taken as live");
    ck_assert_int_ne(got, id);
    ck_assert_int_eq(pc_prop_int(&c, b1, got, "counter"), 21);
    ck_assert_int_eq(pc_int(&c, b1, "db/releasedOfDead"), released + 1);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* The manager restarts while baseapp01 holds a live entity; baseapp02 registers again
 * first, under its name (RegisterRequest.previous_name), the owner after it, under its own.
 * A load on the other baseapp while the owner has not registered again yet must not take the
 * manager's ignorance for the owner's death (the manager is younger than --ownerGraceMs);
 * once it has, the load finds the owner live: the live mailbox, never a second copy. */
START_TEST(test_manager_restart_keeps_checkouts)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    /* The owner stays paused a while after the others registered again: a grace longer
     * than the automatic one (about 7 s here) keeps the test's timing loose. */
    pc_start(&c, rh_addr(r), 2, "--ownerGraceMs=15000");
    const char *b1 = c.base_name[0];
    int32_t id = pc_create(&c, b1, "{\"name\":\"kept\",\"counter\":21}");
    uint64_t dbid = write_ok(&c, b1, id);
    /* The owner pauses, the manager dies and comes back on its address. */
    ck_assert_int_eq(kill(c.base[0], SIGSTOP), 0);
    h_kill(c.mgr, SIGKILL);
    h_wait_exit(c.mgr, 10000);
    char bin[512], internal[64], ropt[600];
    snprintf(internal, sizeof internal, "--internal=%s", c.manager);
    snprintf(ropt, sizeof ropt, "--res=%s", c.res);
    snprintf(c.log_mgr, sizeof c.log_mgr, "%s/manager2.log", c.dir);
    const char *log = c.log_mgr;
    char *argv[] = {(char *)h_bin("manager", bin, sizeof bin), internal, ropt, NULL};
    c.mgr = h_spawn(argv, log);
    ck_assert_int_gt(c.mgr, 0);
    /* The other baseapp and the cellapp register again, each under the name it had. */
    ck_assert_msg(h_wait_watch(c.manager, "manager", "counts/registrations",
                               "counts/registrations  2\n", WAIT_MS),
                  "the processes did not register again (log %s)", log);
    char pidtext[32], path[96], out[8192];
    snprintf(pidtext, sizeof pidtext, "%d\n", (int)c.base[1]);
    ck_assert_msg(h_wait_watch(c.manager, "manager", "processes/baseapp02/pid", pidtext,
                               WAIT_MS),
                  "the other baseapp did not keep its name baseapp02 (log %s)", log);
    /* A load now (the owner unknown to this young manager) waits; it does not release. */
    char key[32], wlog[700], wbin[512], mopt[64];
    dbid_text(dbid, key, sizeof key);
    snprintf(mopt, sizeof mopt, "--manager=%s", c.manager);
    snprintf(wlog, sizeof wlog, "%s/early-load.out", c.dir);
    char *wargv[] = {(char *)h_bin("watcher", wbin, sizeof wbin), mopt, "--timeout", "20000",
                     "call", "baseapp02", "command/createBaseFromDB", "Keeper", key, NULL};
    pid_t early = h_spawn(wargv, wlog);
    ck_assert_int_gt(early, 0);
    h_sleep_ms(1500);
    ck_assert_msg(pc_int(&c, "baseapp02", "entities/count") == 0,
                  "loaded while the owner was only unknown to a restarted manager (log %s)",
                  c.log_base[1]);
    ck_assert_int_eq(kill(c.base[0], SIGCONT), 0);
    snprintf(pidtext, sizeof pidtext, "%d\n", (int)c.base[0]);
    ck_assert_msg(h_wait_watch(c.manager, "manager", "processes/baseapp01/pid", pidtext,
                               WAIT_MS),
                  "the owner did not register again as baseapp01 (log %s)", log);
    snprintf(path, sizeof path, "processes/baseapp01/state");
    ck_assert(h_wait_watch(c.manager, "manager", path, "alive", WAIT_MS));
    /* The early load ends with the live mailbox. */
    ck_assert_int_eq(h_wait_exit(early, 30000), 0);
    ck_assert_msg(h_file_contains(wlog, " live"), "the early load did not find it live (%s)",
                  wlog);
    /* Loaded on the other baseapp: the live mailbox, at the owner's address. */
    bool live = false;
    int32_t got = load_ok(&c, "baseapp02", "createBaseFromDB", key, &live);
    ck_assert_msg(live, "a second copy was loaded while the owner lives (log %s)",
                  c.log_base[1]);
    ck_assert_int_eq(got, id);
    ck_assert_int_eq(pc_int(&c, "baseapp02", "entities/count"), 0);
    /* The owner still writes it (its check-out was not taken). */
    pc_invoke(&c, "baseapp01", id, "bump", "[1]");
    char why[8192];
    ck_assert_msg(pc_write(&c, "baseapp01", id, why, sizeof why) == dbid, "write: %s", why);
    char hkey[96];
    snprintf(hkey, sizeof hkey, "mc:e:{Keeper:%llu}", (unsigned long long)dbid);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "HGET", hkey, "counter", NULL), 0);
    ck_assert_msg(strncmp(out, "22", 2) == 0, "stored counter: %s", out);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* Auto-load entities are spread over the baseapps alive when the cluster starts. */
START_TEST(test_autoload_spread)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 1, NULL);
    enum { N = 12 };
    for (int i = 0; i < N; i++) {
        char props[64];
        snprintf(props, sizeof props, "{\"name\":\"spread%d\"}", i);
        int32_t id = pc_create(&c, c.base_name[0], props);
        write_ok(&c, c.base_name[0], id);
        pc_invoke(&c, c.base_name[0], id, "autoLoad", "[1]");
    }
    pc_stop(&c);
    pc_cluster c2;
    pc_start(&c2, rh_addr(r), 2, NULL);
    long long held[2] = {0, 0};
    for (int waited = 0;; waited += 100) {
        held[0] = pc_int(&c2, c2.base_name[0], "entities/byType/Keeper");
        held[1] = pc_int(&c2, c2.base_name[1], "entities/byType/Keeper");
        if (held[0] + held[1] >= N)
            break;
        ck_assert_msg(waited < WAIT_MS, "auto-load: %lld + %lld of %d came back", held[0],
                      held[1], N);
        h_sleep_ms(100);
    }
    ck_assert_int_eq(held[0] + held[1], N);
    ck_assert_msg(held[0] > 0 && held[1] > 0, "auto-load not spread: %lld and %lld", held[0],
                  held[1]);
    ck_assert_int_eq(pc_int(&c2, c2.base_name[0], "db/autoloaded") +
                         pc_int(&c2, c2.base_name[1], "db/autoloaded"),
                     N);
    pc_stop(&c2);
    rh_stop(r);
}
END_TEST

/* The defs change between two runs of the cluster on one Redis (game -> game_v2): a stored
 * Keeper loads with its values, the added property (bonus) takes its default, the removed
 * one (i8) is ignored and reported; a Relic, whose power changed from INT32 to STRING, is
 * refused with a message naming the property. */
START_TEST(test_def_changes)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 1, NULL);
    const char *b1 = c.base_name[0];
    int32_t k = pc_create(&c, b1, "{\"name\":\"schemer\",\"counter\":9,\"i8\":-5}");
    uint64_t kdb = write_ok(&c, b1, k);
    char buf[4096], v[256];
    ck_assert_int_eq(pc_call(&c, buf, sizeof buf, b1, "command/createBase", "Relic",
                             "{\"label\":\"orb\",\"power\":7}", NULL),
                     0);
    ck_assert(pc_result(buf, "command/createBase", v, sizeof v));
    int32_t relic = atoi(v);
    uint64_t rdb = write_ok(&c, b1, relic);
    pc_stop(&c);

    pc_cluster c2;
    pc_start_game(&c2, rh_addr(r), 1, NULL, MC_KEEPER_V2_RES, MC_KEEPER_V2_GAME);
    const char *n1 = c2.base_name[0];
    char key[32];
    dbid_text(kdb, key, sizeof key);
    bool live;
    int32_t k2 = load_ok(&c2, n1, "createBaseFromDB", key, &live);
    ck_assert(!live);
    ck_assert_int_eq(pc_prop_int(&c2, n1, k2, "counter"), 9);
    ck_assert_int_eq(pc_prop_int(&c2, n1, k2, "bonus"), 42);
    ck_assert(pc_prop(&c2, n1, k2, "name", v, sizeof v));
    ck_assert_str_eq(v, "\"schemer\"");
    ck_assert_msg(h_file_contains(c2.log_base[0], "property bonus is new in the defs") &&
                      h_file_contains(c2.log_base[0], "stored field i8 is no property now"),
                  "the added and removed properties were not reported (log %s)",
                  c2.log_base[0]);
    /* Written again under the new defs, it loads the same. */
    ck_assert_int_eq(write_ok(&c2, n1, k2), kdb);
    char out[8192];
    dbid_text(rdb, key, sizeof key);
    ck_assert_int_ne(pc_call(&c2, out, sizeof out, n1, "command/createBaseFromDB", "Relic", key,
                             NULL),
                     0);
    ck_assert_msg(strstr(out, "power"), "a changed type's refusal does not name it: %s", out);
    ck_assert_int_eq(pc_int(&c2, n1, "entities/byType/Relic"), 0);
    pc_stop(&c2);
    rh_stop(r);
}
END_TEST

START_TEST(test_redis_restart_during_writes)
{
    rh_redis *r = start_redis(true);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 2, NULL);
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    int32_t id = pc_create(&c, b1, "{\"name\":\"stream\"}");
    uint64_t dbid = write_ok(&c, b1, id);
    enum { COUNT = 200 };
    pc_invoke(&c, b1, id, "saveEvery", "[0.01,200]");
    char path[96];
    snprintf(path, sizeof path, "entities/%d/props/acked", (int)id);
    for (int waited = 0; pc_int(&c, b1, path) < 20; waited += 50) {
        ck_assert_msg(waited < WAIT_MS, "no writes acknowledged");
        h_sleep_ms(50);
    }
    ck_assert_int_eq(rh_kill(r, SIGKILL), 0);
    h_sleep_ms(1000);
    ck_assert_int_eq(rh_restart(r), 0);
    /* Every write ends, acknowledged or failed; none is lost once acknowledged. */
    long long acked = 0, failed = 0;
    for (int waited = 0;; waited += 200) {
        acked = pc_prop_int(&c, b1, id, "acked");
        failed = pc_prop_int(&c, b1, id, "failed");
        if (acked + failed == COUNT)
            break;
        ck_assert_msg(waited < 60000, "writes still pending: %lld acked, %lld failed", acked,
                      failed);
        h_sleep_ms(200);
    }
    ck_assert_int_gt(acked, 20);
    long long max_acked = pc_prop_int(&c, b1, id, "maxAcked");
    ck_assert(h_alive(c.base[0]));
    destroy_released(&c, b1, id, "nowrite");
    char key[32];
    dbid_text(dbid, key, sizeof key);
    bool live;
    int32_t id2 = load_ok(&c, b2, "createBaseFromDB", key, &live);
    ck_assert(!live);
    ck_assert_int_ge(pc_prop_int(&c, b2, id2, "counter"), max_acked);
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

/* A graceful shutdown right after entities asked for their first write (create), still in
 * flight (Redis paused): the shutdown waits for them, writes them and releases their
 * check-outs before the process exits. Redis stays paused 3 s, past the manager lease
 * (1.5 s after the last heartbeat, and none goes after the deregistration): the last writes
 * go all the same, the manager having confirmed the stop (before, they were held for good:
 * seen under load with a pause of 1 s). */
START_TEST(test_shutdown_with_first_writes_in_flight)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 1, "--shutdownWriteMs=15000");
    const char *b1 = c.base_name[0];
    enum { N = 3 };
    int32_t ids[N];
    for (int i = 0; i < N; i++) {
        char props[64];
        snprintf(props, sizeof props, "{\"name\":\"new%d\",\"counter\":%d}", i, 70 + i);
        ids[i] = pc_create(&c, b1, props);
    }
    ck_assert_int_eq(kill(rh_pid(r), SIGSTOP), 0);
    for (int i = 0; i < N; i++)
        pc_invoke(&c, b1, ids[i], "save", NULL); /* writeToDB: the create waits on Redis */
    ck_assert_int_eq(kill(c.base[0], SIGTERM), 0);
    h_sleep_ms(3000);
    ck_assert_int_eq(kill(rh_pid(r), SIGCONT), 0);
    ck_assert_int_eq(h_wait_exit(c.base[0], 30000), 0);
    c.base[0] = -1;
    ck_assert_msg(h_file_contains(c.log_base[0], "every entity written and released"),
                  "the shutdown did not write its entities (log %s)", c.log_base[0]);
    char out[256];
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "SCARD", "mc:t:{Keeper}", NULL), 0);
    ck_assert_msg(atoi(out) == N, "entities stored: %s", out);
    for (int dbid = 1; dbid <= N; dbid++) {
        char okey[96], hkey[96];
        snprintf(okey, sizeof okey, "mc:o:{Keeper:%d}", dbid);
        snprintf(hkey, sizeof hkey, "mc:e:{Keeper:%d}", dbid);
        ck_assert_int_eq(rh_cli(r, out, sizeof out, "EXISTS", okey, NULL), 0);
        ck_assert_msg(strncmp(out, "0", 1) == 0, "%s still checked out", okey);
        ck_assert_int_eq(rh_cli(r, out, sizeof out, "HGET", hkey, "counter", NULL), 0);
        ck_assert_msg(atoi(out) >= 70 && atoi(out) < 70 + N, "%s counter: %s", hkey, out);
    }
    pc_stop(&c);
    rh_stop(r);
}
END_TEST

START_TEST(test_shutdown_writes_and_autoload)
{
    rh_redis *r = start_redis(false);
    pc_cluster c;
    pc_start(&c, rh_addr(r), 1, "--archivePeriodS=0");
    const char *b1 = c.base_name[0];
    int32_t id = pc_create(&c, b1, "{\"name\":\"auto\",\"counter\":1}");
    uint64_t dbid = write_ok(&c, b1, id);
    pc_invoke(&c, b1, id, "autoLoad", "[1]");
    pc_invoke(&c, b1, id, "bump", "[41]"); /* not written: only the shutdown writes it */
    int32_t other = pc_create(&c, b1, "{\"name\":\"manual\"}");
    write_ok(&c, b1, other);
    pc_stop(&c);
    ck_assert_msg(h_file_contains(c.log_base[0], "every entity written and released"),
                  "no shutdown write (log %s)", c.log_base[0]);

    /* A new cluster on the same Redis: the auto-load entity comes back by itself. */
    pc_cluster c2;
    pc_start(&c2, rh_addr(r), 2, NULL);
    long long loaded = 0;
    for (int waited = 0;; waited += 100) {
        loaded = pc_int(&c2, c2.base_name[0], "db/autoloaded") +
                 pc_int(&c2, c2.base_name[1], "db/autoloaded");
        if (loaded >= 1)
            break;
        ck_assert_msg(waited < WAIT_MS, "the auto-load entity did not come back");
        h_sleep_ms(100);
    }
    ck_assert_int_eq(loaded, 1);
    char key[32];
    dbid_text(dbid, key, sizeof key);
    bool live;
    int32_t id2 = load_ok(&c2, c2.base_name[0], "createBaseAnywhereFromDB", key, &live);
    ck_assert(live);
    int owner = pc_int(&c2, c2.base_name[0], "entities/count") == 1 ? 0 : 1;
    ck_assert_int_eq(pc_prop_int(&c2, c2.base_name[owner], id2, "counter"), 42);
    /* The other one was not flagged: not loaded. */
    ck_assert_int_eq(pc_int(&c2, c2.base_name[0], "entities/count") +
                         pc_int(&c2, c2.base_name[1], "entities/count"),
                     1);
    pc_stop(&c2);
    rh_stop(r);
}
END_TEST

/* The same engine paths against a local three-master Redis Cluster: every key of an entity
 * in one slot, identifiers elsewhere; write, load by id and by name elsewhere, two baseapps
 * racing, kill -9 and the release of the dead baseapp's check-outs. */
START_TEST(test_on_redis_cluster)
{
    rh_options opt = {0};
    rh_cluster *rc = rh_cluster_start(&opt);
    ck_assert_msg(rc != NULL, "the Redis Cluster did not start");
    char seeds[160];
    snprintf(seeds, sizeof seeds, "%s,%s,%s", rh_addr(rh_cluster_node(rc, 0)),
             rh_addr(rh_cluster_node(rc, 1)), rh_addr(rh_cluster_node(rc, 2)));
    pc_cluster c;
    pc_start(&c, seeds, 2, NULL);
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];
    enum { N = 8 };
    uint64_t dbids[N];
    for (int i = 0; i < N; i++) {
        char props[96];
        snprintf(props, sizeof props, "{\"name\":\"c%d\",\"counter\":%d}", i, 10 * i);
        int32_t id = pc_create(&c, b1, props);
        dbids[i] = write_ok(&c, b1, id);
        if (i % 2 == 0)
            destroy_released(&c, b1, id, "write");
    }
    for (int i = 0; i < N; i++) {
        char key[32], name[16];
        dbid_text(dbids[i], key, sizeof key);
        snprintf(name, sizeof name, "c%d", i);
        bool live;
        int32_t id = i % 4 < 2 ? load_ok(&c, b2, "createBaseFromDB", key, &live)
                               : load_ok(&c, b2, "createBaseFromDBByName", name, &live);
        ck_assert_int_eq(live, i % 2 == 1); /* odd ones are live on baseapp01 */
        ck_assert_int_eq(pc_prop_int(&c, live ? b1 : b2, id, "counter"), 10 * i);
    }
    /* kill -9 baseapp01: its check-outs (the odd ones) are released; baseapp02 loads them. */
    h_kill(c.base[0], SIGKILL);
    h_wait_exit(c.base[0], 10000);
    c.base[0] = -1;
    ck_assert(pc_wait_int(&c, b2, "db/releasedOfDead", N / 2, WAIT_MS));
    for (int i = 1; i < N; i += 2) {
        char key[32];
        dbid_text(dbids[i], key, sizeof key);
        bool live;
        int32_t id = load_ok(&c, b2, "createBaseFromDB", key, &live);
        ck_assert(!live);
        ck_assert_int_eq(pc_prop_int(&c, b2, id, "counter"), 10 * i);
    }
    pc_stop(&c);
    rh_cluster_stop(rc);
}
END_TEST

static void skip_without_redis(void)
{
    char out[256];
    char *argv[] = {"/bin/sh", "-c", "command -v redis-server", NULL};
    ck_assert_msg(h_run(argv, out, sizeof out, 5000) == 0, "redis-server is not installed");
}

START_TEST(test_redis_installed) { skip_without_redis(); }
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("persist_engine");
    TCase *tc = tcase_create("engine");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_redis_installed);
    tcase_add_test(tc, test_round_trip_every_type);
    tcase_add_test(tc, test_cell_part_written_with_base);
    tcase_add_test(tc, test_two_baseapps_load_at_once);
    tcase_add_test(tc, test_kill9_releases_checkouts);
    tcase_add_test(tc, test_cut_off_baseapp_is_fenced);
    tcase_add_test(tc, test_stale_write_refused_by_token);
    tcase_add_test(tc, test_fenced_copy_with_a_cell);
    tcase_add_test(tc, test_load_waits_for_a_loading_entity);
    tcase_add_test(tc, test_mark_live_retried);
    tcase_add_test(tc, test_archiving_writes_every_entity);
    tcase_add_test(tc, test_shutdown_with_redis_down_is_bounded);
    tcase_add_test(tc, test_orphaned_checkouts);
    tcase_add_test(tc, test_orphans_unlisted_or_loading);
    tcase_add_test(tc, test_earlier_process_at_our_address);
    tcase_add_test(tc, test_manager_restart_keeps_checkouts);
    tcase_add_test(tc, test_def_changes);
    tcase_add_test(tc, test_autoload_spread);
    tcase_add_test(tc, test_redis_restart_during_writes);
    tcase_add_test(tc, test_shutdown_writes_and_autoload);
    tcase_add_test(tc, test_shutdown_with_first_writes_in_flight);
    tcase_add_test(tc, test_on_redis_cluster);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
