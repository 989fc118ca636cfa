/* Fencing on loopback: a process the manager declared dead never acts as a live one again.
 * A cellapp stopped (SIGSTOP) past the manager's death timeout and then continued reaches
 * the manager again, is told it was replaced, logs why and exits with status 4, and status
 * shows it fenced; it does not register again under a new name. A manager restarted at the
 * same address, which declared nobody dead, takes the same processes' re-registrations. */
#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pid_t start_cellapp(const char *manager, const char *log)
{
    char bin[512], internal[64], mopt[64], ropt[600];
    snprintf(internal, sizeof internal, "--internal=127.0.0.1:%d", h_free_port(false));
    snprintf(mopt, sizeof mopt, "--manager=%s", manager);
    snprintf(ropt, sizeof ropt, "--res=%s/defs", h_source_dir());
    char *argv[] = {(char *)h_bin("cellapp", bin, sizeof bin), internal, mopt, ropt, NULL};
    return h_spawn(argv, log);
}

START_TEST(stopped_past_its_death_is_fenced)
{
    char mgr[64] = "", mlog[600], log1[600], log2[600], out[8192];
    snprintf(mlog, sizeof mlog, "%s/manager.log", h_tmpdir());
    snprintf(log1, sizeof log1, "%s/cellapp1.log", h_tmpdir());
    snprintf(log2, sizeof log2, "%s/cellapp2.log", h_tmpdir());
    pid_t m = h_start_manager(mgr, sizeof mgr, mlog, "--deadAfterMs=2000", "--heartbeatMs=250",
                              NULL);
    ck_assert_int_gt(m, 0);
    pid_t a = start_cellapp(mgr, log1);
    ck_assert(h_wait_watch(mgr, "manager", "processes/cellapp01/state", "alive", 20000));
    pid_t b = start_cellapp(mgr, log2);
    ck_assert(h_wait_watch(mgr, "manager", "processes/cellapp02/state", "alive", 20000));

    /* Silent past the death timeout: declared dead, the other process told. */
    h_kill(a, SIGSTOP);
    ck_assert(h_wait_watch(mgr, "manager", "processes/cellapp01/state", "dead", 15000));
    ck_assert(h_wait_watch(mgr, "cellapp02", "peers/cellapp01", "dead", 10000));
    h_kill(a, SIGCONT);

    /* Back: told it was replaced, it exits with its own status and says why. */
    int status = h_wait_exit(a, 20000);
    ck_assert_msg(status == 4, "the fenced cellapp exited with %d (want 4); see %s", status, log1);
    ck_assert_msg(h_file_contains(log1, "fenced by the manager"), "no reason in %s", log1);
    ck_assert_msg(h_file_contains(log1, "exit code 4"), "no exit code in %s", log1);
    ck_assert(h_wait_watch(mgr, "manager", "processes/cellapp01/state", "fenced", 10000));
    int rc = h_watcher(out, sizeof out, mgr, "status", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "fenced") && strstr(out, "came back after"), "%s", out);
    rc = h_watcher(out, sizeof out, mgr, "get", "manager", "counts/fenced", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "counts/fenced  1\n"), "%s", out);
    rc = h_watcher(out, sizeof out, mgr, "get", "manager", "counts/registrations", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "counts/registrations  2\n"), "it registered again: %s",
                  out);
    rc = h_watcher(out, sizeof out, mgr, "get", "manager", "processes/cellapp03/state", NULL);
    ck_assert_msg(rc != 0, "a fenced process registered again: %s", out);
    ck_assert(h_alive(b));
    h_kill(b, SIGTERM);
    ck_assert_int_eq(h_wait_exit(b, 10000), 0);
    h_kill(m, SIGTERM);
    ck_assert_int_eq(h_wait_exit(m, 10000), 0);
}
END_TEST

START_TEST(restarted_manager_takes_reregistrations)
{
    char mgr[64] = "", mlog[600], mlog2[600], log1[600], out[8192];
    snprintf(mlog, sizeof mlog, "%s/manager-a.log", h_tmpdir());
    snprintf(mlog2, sizeof mlog2, "%s/manager-b.log", h_tmpdir());
    snprintf(log1, sizeof log1, "%s/cellapp-r.log", h_tmpdir());
    pid_t m = h_start_manager(mgr, sizeof mgr, mlog, "--deadAfterMs=2000", "--heartbeatMs=250",
                              NULL);
    ck_assert_int_gt(m, 0);
    pid_t a = start_cellapp(mgr, log1);
    ck_assert(h_wait_watch(mgr, "manager", "processes/cellapp01/state", "alive", 20000));

    h_kill(m, SIGKILL);
    ck_assert_int_eq(h_wait_exit(m, 10000), 128 + SIGKILL);
    pid_t m2 = h_start_manager(mgr, sizeof mgr, mlog2, "--deadAfterMs=2000", "--heartbeatMs=250",
                               NULL);
    ck_assert_int_gt(m2, 0);
    /* The new manager declared nobody dead: the cellapp registers with it (named anew). */
    ck_assert_msg(h_wait_watch(mgr, "manager", "processes/cellapp01/state", "alive", 30000),
                  "the cellapp did not register with the restarted manager; see %s", log1);
    char want[64];
    snprintf(want, sizeof want, "pid  %d", (int)a);
    int rc = h_watcher(out, sizeof out, mgr, "get", "manager", "processes/cellapp01/pid", NULL);
    ck_assert_msg(rc == 0 && strstr(out, want), "not the same process: %s", out);
    rc = h_watcher(out, sizeof out, mgr, "get", "manager", "counts/fenced", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "counts/fenced  0"), "%s", out);
    ck_assert(h_alive(a));
    h_kill(a, SIGTERM);
    ck_assert_int_eq(h_wait_exit(a, 10000), 0);
    h_kill(m2, SIGTERM);
    ck_assert_int_eq(h_wait_exit(m2, 10000), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("multihost_fencing");
    TCase *tc = tcase_create("fencing");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, stopped_past_its_death_is_fenced);
    tcase_add_test(tc, restarted_manager_takes_reregistrations);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
