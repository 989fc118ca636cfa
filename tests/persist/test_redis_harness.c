/* The Redis harness itself: a plain Redis, one with a password and an ACL user (the wrong
 * password refused), kill -9 and restart with the AOF keeping a key, and a three-master
 * cluster whose every node reports state ok and redirects a key it does not own. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "harness.h"
#include "redis_harness.h"

START_TEST(plain_redis_answers_and_stops)
{
    rh_redis *r = rh_start(NULL);
    ck_assert_ptr_nonnull(r);
    char out[512];
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "set", "k", "v", NULL), 0);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "get", "k", NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "v"));
    pid_t pid = rh_pid(r);
    rh_stop(r);
    ck_assert(!h_alive(pid));
}
END_TEST

START_TEST(password_and_user)
{
    rh_options o = {.password = true, .user = "mercury"};
    rh_redis *r = rh_start(&o);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(rh_password_file(r));
    char out[512];
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "acl", "whoami", NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "mercury"));
    /* Without credentials: refused. */
    char port[16];
    snprintf(port, sizeof port, "%d", rh_port(r));
    char *argv[] = {"/usr/bin/redis-cli", "-h", "127.0.0.1", "-p", port, "get", "k", NULL};
    h_run(argv, out, sizeof out, 10000);
    ck_assert_ptr_nonnull(strstr(out, "NOAUTH"));
    rh_stop(r);
}
END_TEST

START_TEST(aof_survives_kill9)
{
    rh_options o = {.aof = true};
    rh_redis *r = rh_start(&o);
    ck_assert_ptr_nonnull(r);
    char out[512];
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "set", "kept", "yes", NULL), 0);
    ck_assert_int_eq(rh_kill(r, SIGKILL), 0);
    ck_assert_int_ne(rh_cli(r, out, sizeof out, "ping", NULL), 0);
    ck_assert_int_eq(rh_restart(r), 0);
    ck_assert_int_eq(rh_cli(r, out, sizeof out, "get", "kept", NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "yes"));
    rh_stop(r);
}
END_TEST

START_TEST(three_master_cluster)
{
    rh_cluster *c = rh_cluster_start(NULL);
    ck_assert_ptr_nonnull(c);
    char out[2048];
    int moved = 0;
    for (int i = 0; i < RH_CLUSTER_NODES; i++) {
        ck_assert_int_eq(rh_cli(rh_cluster_node(c, i), out, sizeof out, "cluster", "info", NULL), 0);
        ck_assert_ptr_nonnull(strstr(out, "cluster_state:ok"));
        rh_cli(rh_cluster_node(c, i), out, sizeof out, "set", "somekey", "1", NULL);
        if (strstr(out, "MOVED"))
            moved++;
    }
    /* The key's slot belongs to exactly one of the three masters. */
    ck_assert_int_eq(moved, 2);
    rh_cluster_stop(c);
}
END_TEST

START_TEST(cluster_with_password_and_user)
{
    rh_options o = {.password = true, .user = "mercury"};
    rh_cluster *c = rh_cluster_start(&o);
    ck_assert_ptr_nonnull(c);
    char out[2048];
    ck_assert_int_eq(rh_cli(rh_cluster_node(c, 1), out, sizeof out, "acl", "whoami", NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "mercury"));
    rh_cluster_stop(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("redis_harness");
    TCase *tc = tcase_create("harness");
    tcase_add_test(tc, plain_redis_answers_and_stops);
    tcase_add_test(tc, password_and_user);
    tcase_add_test(tc, aof_survives_kill9);
    tcase_add_test(tc, three_master_cluster);
    tcase_add_test(tc, cluster_with_password_and_user);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return mc_check_run(suite()); }
