/* How mc-client and bots find the cluster and its defs (client/tools/tool_env.c): from the
 * cluster file of $MC_RUN_DIR (its loginapp, login public key, manager and the defs the
 * cluster runs, `res`), each overridden by its flag. */
#include "check_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool_env.h"

#define KEY "3d844c0e8e2fe13da7eb7d733f6f83158bd2a0c1e4f5a6b7c8d9e0f1a2b3c4d5"

static char dir[64];

static void write_cluster_file(const char *extra)
{
    snprintf(dir, sizeof dir, "/tmp/mc-tool-env-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/cluster.conf", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "version 1\nmanager 127.0.0.1:21000\nloginapp 127.0.0.1:21011\n"
               "loginPublicKey " KEY "\n%s",
            extra);
    fclose(f);
    setenv("MC_RUN_DIR", dir, 1);
}

static void remove_cluster_file(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/cluster.conf", dir);
    unlink(path);
    rmdir(dir);
    unsetenv("MC_RUN_DIR");
}

START_TEST(the_defs_come_from_the_cluster_file)
{
    write_cluster_file("res /srv/game/defs\n");
    tool_cluster c;
    char err[256];
    ck_assert_int_eq(tool_cluster_find(&c, NULL, NULL, NULL, NULL, err, sizeof err), 0);
    ck_assert_str_eq(c.loginapp, "127.0.0.1:21011");
    ck_assert_str_eq(c.manager, "127.0.0.1:21000");
    ck_assert_str_eq(c.res, "/srv/game/defs");
    /* --res wins */
    ck_assert_int_eq(tool_cluster_find(&c, NULL, NULL, NULL, "/other/defs", err, sizeof err), 0);
    ck_assert_str_eq(c.res, "/other/defs");
    remove_cluster_file();
}
END_TEST

START_TEST(without_res_the_checkouts_defs)
{
    write_cluster_file("");
    tool_cluster c;
    char err[256];
    ck_assert_int_eq(tool_cluster_find(&c, NULL, NULL, NULL, NULL, err, sizeof err), 0);
    size_t n = strlen(c.res);
    ck_assert_uint_ge(n, 5);
    ck_assert_str_eq(c.res + n - 5, "/defs");
    remove_cluster_file();
}
END_TEST

/* a line longer than the reader takes: refused, never a path cut short */
START_TEST(a_res_too_long_is_refused)
{
    char line[1500];
    memset(line, 'd', sizeof line);
    memcpy(line, "res /", 5);
    line[sizeof line - 2] = '\n';
    line[sizeof line - 1] = '\0';
    write_cluster_file(line);
    tool_cluster c;
    char err[256] = "";
    int rc = tool_cluster_find(&c, NULL, NULL, NULL, NULL, err, sizeof err);
    remove_cluster_file();
    ck_assert_int_ne(rc, 0);
    ck_assert_msg(strstr(err, "longer than") != NULL, "%s", err);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tool_env");
    TCase *tc = tcase_create("cluster file");
    tcase_add_test(tc, the_defs_come_from_the_cluster_file);
    tcase_add_test(tc, without_res_the_checkouts_defs);
    tcase_add_test(tc, a_res_too_long_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
