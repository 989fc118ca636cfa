/* mc-db end to end: a private Redis (with a password) filled through the data layer, then
 * every command of the real binary: types, list, show (by dbid and identifier), delete (refused
 * while checked out, forced), check against the same and changed defs (exit codes), export,
 * wipe, import and export again (identical), the cluster file found through MC_RUN_DIR, a
 * wrong password. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "harness.h"
#include "persist_test_util.h"

static pt_redis redis;
static char res_dir[600];

/* Run mc-db with the Redis options and args (NULL-ended); output in out. */
static int mcdb(char *out, size_t outlen, const char *res, ...)
{
    char bin[600], resopt[700], pwopt[700];
    char *argv[40];
    int n = 0;
    argv[n++] = (char *)h_bin("mc-db", bin, sizeof bin);
    snprintf(resopt, sizeof resopt, "--res=%s/tests/persist/%s", h_source_dir(), res);
    argv[n++] = resopt;
    char seeds[512] = "";
    if (redis.cluster) {
        for (int i = 0; i < RH_CLUSTER_NODES; i++)
            snprintf(seeds + strlen(seeds), sizeof seeds - strlen(seeds), "%s%s", i ? "," : "",
                     rh_addr(rh_cluster_node(redis.cluster, i)));
        argv[n++] = "--cluster";
        argv[n++] = seeds;
    } else {
        argv[n++] = "--redis";
        argv[n++] = (char *)rh_addr(redis.single);
    }
    snprintf(pwopt, sizeof pwopt, "--password-file=%s", rh_password_file(pt_redis_node(&redis)));
    argv[n++] = pwopt;
    va_list ap;
    va_start(ap, res);
    const char *a;
    while (n < 38 && (a = va_arg(ap, const char *)) != NULL)
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    return h_run(argv, out, outlen, 30000);
}

static void fill(struct event_base *base, mc_entity_defs *defs, uint64_t *alice,
                 uint64_t *hero)
{
    mc_persist_store *s = pt_store(base, &redis, defs, "baseapp01");
    ck_assert_ptr_nonnull(s);
    const mc_entity_type_def *thing = mc_defs_type_by_name(defs, "Thing");
    const char *names[] = {"alice", "bob", "carol"};
    for (int i = 0; i < 3; i++) {
        pt_entity pe;
        pt_entity_init(&pe, thing);
        pt_set_str(&pe, "name", names[i]);
        pt_set_int(&pe, "u32", 4000000000 - i);
        pt_set_str(&pe, "us", "h\xc3\xa9llo");
        pe.e.engine.position[0] = 1.5f;
        pe.e.engine.space_id = 7;
        pt_res r = {0};
        mc_persist_create(s, &pe.e, pt_cb, &r);
        ck_assert(pt_wait_res(base, &r));
        ck_assert_msg(r.st == MC_PERSIST_OK, "%s", r.reason);
        if (i == 0)
            *alice = r.dbid;
        if (i == 1) { /* bob is released: deletable without --force */
            pt_res rr = {0};
            mc_persist_release(s, thing, r.dbid, r.token, pt_cb, &rr);
            ck_assert(pt_wait_res(base, &rr));
            ck_assert_int_eq(rr.st, MC_PERSIST_OK);
        }
        pt_entity_free(&pe);
    }
    const mc_entity_type_def *ht = mc_defs_type_by_name(defs, "Hero");
    pt_entity pe;
    pt_entity_init(&pe, ht);
    pt_set_str(&pe, "name", "conan");
    pt_set_int(&pe, "level", 12);
    pt_res r = {0};
    mc_persist_create(s, &pe.e, pt_cb, &r);
    ck_assert(pt_wait_res(base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    *hero = r.dbid;
    pt_res_clear(&r);
    mc_persist_set_autoload(s, ht, *hero, true, pt_cb, &r);
    ck_assert(pt_wait_res(base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_entity_free(&pe);
    mc_persist_store_free(s);
}

START_TEST(every_command)
{
    rh_options opt = {.password = true};
    ck_assert(pt_redis_start(&redis, &opt));
    snprintf(res_dir, sizeof res_dir, "%s/tests/persist/res", h_source_dir());
    struct event_base *base = event_base_new();
    mc_entity_defs *defs = pt_defs("res");
    uint64_t alice = 0, hero = 0;
    fill(base, defs, &alice, &hero);
    static char out[1 << 16];
    char id[32];
    snprintf(id, sizeof id, "%llu", (unsigned long long)alice);

    ck_assert_int_eq(mcdb(out, sizeof out, "res", "types", NULL), 0);
    ck_assert_msg(strstr(out, "Thing") && strstr(out, " 3\n") && strstr(out, "Hero"), "%s", out);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "list", "Thing", NULL), 0);
    ck_assert_msg(strstr(out, id) != NULL, "%s", out);

    ck_assert_int_eq(mcdb(out, sizeof out, "res", "show", "Thing", id, NULL), 0);
    ck_assert_msg(strstr(out, "u32") && strstr(out, "UINT32") && strstr(out, "4000000000"), "%s",
                  out);
    ck_assert_msg(strstr(out, "\"h\xc3\xa9llo\"") && strstr(out, "@spaceId") &&
                  strstr(out, "[1.5,0,0]"), "%s", out);
    ck_assert_msg(strstr(out, "checked out by baseapp01 (incarnation 1, loading)") != NULL, "%s",
                  out);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "show", "Thing", "--id", "alice", NULL), 0);
    ck_assert_msg(strstr(out, id) != NULL, "%s", out);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "show", "Thing", "--id", "nobody", NULL), 1);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "show", "Nope", "1", NULL), 3);

    /* check: same defs 0, added 1, changed type 2 (naming the property). */
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "check", NULL), 0);
    ck_assert_msg(strstr(out, "Thing: ok") && strstr(out, "Hero: ok"), "%s", out);
    ck_assert_int_eq(mcdb(out, sizeof out, "res_added", "check", NULL), 1);
    ck_assert_msg(strstr(out, "Hero: added: title") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "Thing: not in the defs") != NULL, "%s", out);
    ck_assert_int_eq(mcdb(out, sizeof out, "res_changed", "check", NULL), 2);
    ck_assert_msg(strstr(out, "Hero.level: stored INT8, now INT32") != NULL, "%s", out);
    /* check never rewrites the record. */
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "check", NULL), 0);
    ck_assert_msg(strstr(out, "identifier index: ok") != NULL, "%s", out);
    /* A stale identifier entry (as a crash between claim and write leaves): found by check,
     * removed by unindex, which refuses an entry its entity holds. */
    ck_assert_int_eq(rh_cli(pt_redis_node(&redis), out, sizeof out, "-c", "set",
                            "mc:id:{Thing:ghost}", id, NULL), 0);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "check", NULL), 1);
    ck_assert_msg(strstr(out, "stale identifier index entry 'ghost'") != NULL, "%s", out);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "unindex", "Thing", "alice", NULL), 1);
    ck_assert_msg(strstr(out, "not stale") != NULL, "%s", out);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "unindex", "Thing", "ghost", NULL), 0);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "unindex", "Thing", "ghost", NULL), 1);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "check", NULL), 0);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "show", "Thing", "--id", "alice", NULL), 0);

    /* export, wipe, import, export again: the same lines. */
    static char first[1 << 16], second[1 << 16];
    char bin[600], cmd[4096];
    snprintf(cmd, sizeof cmd, "%s --res=%s %s %s --password-file=%s export > %s/export.jsonl",
             h_bin("mc-db", bin, sizeof bin), res_dir, redis.cluster ? "--cluster" : "--redis",
             redis.cluster ? rh_addr(rh_cluster_node(redis.cluster, 0)) : rh_addr(redis.single),
             rh_password_file(pt_redis_node(&redis)), h_tmpdir());
    char *sh[] = {"/bin/sh", "-c", cmd, NULL};
    ck_assert_int_eq(h_run(sh, out, sizeof out, 30000), 0);
    ck_assert_msg(strstr(out, "exported 4 entities") != NULL, "%s", out);
    char path[700];
    snprintf(path, sizeof path, "%s/export.jsonl", h_tmpdir());
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n1 = fread(first, 1, sizeof first - 1, f);
    first[n1] = '\0';
    fclose(f);
    ck_assert_msg(strstr(first, "\"name\":\"conan\"") && strstr(first, "\"autoload\":true"), "%s",
                  first);
    for (int i = 0; i < (redis.cluster ? RH_CLUSTER_NODES : 1); i++)
        ck_assert_int_eq(rh_cli(redis.cluster ? rh_cluster_node(redis.cluster, i) : redis.single,
                                out, sizeof out, "flushall", NULL), 0);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "show", "Thing", id, NULL), 1);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "import", path, NULL), 0);
    ck_assert_msg(strstr(out, "imported 4 entities, 0 failed") != NULL, "%s", out);
    /* Importing again without --replace: each refused (exists), exit 1. */
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "import", path, NULL), 1);
    ck_assert_msg(strstr(out, "imported 0 entities, 4 failed") != NULL, "%s", out);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "import", "--replace", path, NULL), 0);
    ck_assert_int_eq(h_run(sh, out, sizeof out, 30000), 0);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n2 = fread(second, 1, sizeof second - 1, f);
    second[n2] = '\0';
    fclose(f);
    /* Same entities (the order of a set scan may differ): compare sorted lines. */
    ck_assert_uint_eq(n1, n2);
    for (char *line = strtok(first, "\n"); line; line = strtok(NULL, "\n"))
        ck_assert_msg(strstr(second, line) != NULL, "missing after import: %s", line);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "show", "Thing", "--id", "alice", NULL), 0);
    ck_assert_msg(strstr(out, "not checked out") != NULL, "%s", out); /* imported */
    /* A malformed line is refused with its number. */
    snprintf(path, sizeof path, "%s/bad.jsonl", h_tmpdir());
    f = fopen(path, "w");
    fputs("{\"type\":\"Thing\",\"dbid\":99,\"props\":{\"u8\":300}}\nnot json\n", f);
    fclose(f);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "import", path, NULL), 1);
    ck_assert_msg(strstr(out, "line 1") && strstr(out, "line 2") && strstr(out, "300"), "%s", out);

    /* delete: a checked-out entity only with --force; an imported one (not checked out) at
     * once. */
    mc_persist_store *s = pt_store(base, &redis, defs, "baseapp02");
    pt_entity pe;
    pt_entity_init(&pe, mc_defs_type_by_name(defs, "Thing"));
    pt_set_str(&pe, "name", "dave");
    pt_res r = {0};
    mc_persist_create(s, &pe.e, pt_cb, &r);
    ck_assert(pt_wait_res(base, &r));
    ck_assert_int_eq(r.st, MC_PERSIST_OK);
    pt_entity_free(&pe);
    mc_persist_store_free(s);
    char dave[32];
    snprintf(dave, sizeof dave, "%llu", (unsigned long long)r.dbid);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "delete", "Thing", dave, NULL), 1);
    ck_assert_msg(strstr(out, "checked out") != NULL, "%s", out);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "delete", "Thing", dave, "--force", NULL), 0);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "show", "Thing", dave, NULL), 1);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "delete", "Thing", id, NULL), 0);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "show", "Thing", "--id", "alice", NULL), 1);
    ck_assert_int_eq(mcdb(out, sizeof out, "res", "delete", "Thing", id, NULL), 1);

    mc_defs_free(defs);
    event_base_free(base);
    pt_redis_stop(&redis);
}
END_TEST

/* The cluster file of a running cluster: Redis, its password file and the defs (res). */
static void write_cluster_file(const char *path, const char *res)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    if (redis.cluster)
        fprintf(f, "version 1\nmanager 127.0.0.1:1\nredisCluster %s,%s\nredisPasswordFile %s\n",
                rh_addr(rh_cluster_node(redis.cluster, 0)), rh_addr(rh_cluster_node(redis.cluster, 1)),
                rh_password_file(pt_redis_node(&redis)));
    else
        fprintf(f, "version 1\nmanager 127.0.0.1:1\nredis %s\nredisPasswordFile %s\n",
                rh_addr(redis.single), rh_password_file(pt_redis_node(&redis)));
    fprintf(f, "res %s\n", res);
    fclose(f);
}

START_TEST(cluster_file_and_wrong_password)
{
    rh_options opt = {.password = true};
    ck_assert(pt_redis_start(&redis, &opt));
    static char out[8192];
    /* The cluster file of a running cluster names Redis and the password file. */
    char dir[700], path[800];
    snprintf(dir, sizeof dir, "%s/run", h_tmpdir());
    ck_assert_int_eq(system((snprintf(path, sizeof path, "mkdir -p %s", dir), path)), 0);
    snprintf(path, sizeof path, "%s/cluster.conf", dir);
    /* and the defs it runs: mc-db takes them from there when --res is not given */
    char res[700];
    snprintf(res, sizeof res, "%s/tests/persist/res", h_source_dir());
    write_cluster_file(path, res);
    setenv("MC_RUN_DIR", dir, 1);
    unsetenv("MC_RES");
    char bin[600], resopt[720];
    snprintf(resopt, sizeof resopt, "--res=%s", res);
    char *argv[] = {(char *)h_bin("mc-db", bin, sizeof bin), "check", NULL};
    ck_assert_int_eq(h_run(argv, out, sizeof out, 30000), 0);
    ck_assert_msg(strstr(out, "nothing stored yet") != NULL, "%s", out);
    /* the file's res is the one taken: one naming no defs folder is refused with its name */
    write_cluster_file(path, "/nonexistent/mc-db-defs");
    ck_assert_int_ne(h_run(argv, out, sizeof out, 30000), 0);
    ck_assert_msg(strstr(out, "/nonexistent/mc-db-defs") != NULL, "%s", out);
    write_cluster_file(path, res);
    /* A wrong password: exit 4 with the reason. */
    snprintf(path, sizeof path, "%s/wrong", dir);
    FILE *f = fopen(path, "w");
    fputs("wrong\n", f);
    fclose(f);
    char pwopt[900];
    snprintf(pwopt, sizeof pwopt, "--password-file=%s", path);
    char *argv2[] = {(char *)h_bin("mc-db", bin, sizeof bin), resopt, pwopt, "types", NULL};
    ck_assert_int_eq(h_run(argv2, out, sizeof out, 30000), 4);
    ck_assert_msg(strstr(out, "credentials") != NULL, "%s", out);
    unsetenv("MC_RUN_DIR");
    /* No Redis at all: exit 4 after the timeout. */
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", h_free_port(true));
    char *argv3[] = {(char *)h_bin("mc-db", bin, sizeof bin), resopt, "--redis", addr,
                     "--timeout", "1", "types", NULL};
    ck_assert_int_eq(h_run(argv3, out, sizeof out, 30000), 4);
    pt_redis_stop(&redis);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mc_db");
    TCase *tc = tcase_create("mc-db");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, every_command);
    tcase_add_test(tc, cluster_file_and_wrong_password);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
#ifdef MC_TEST_CLUSTER
    pt_use_cluster(true);
#endif
    return mc_check_run(suite());
}
