/* Integration test of deploy/cluster: up, a refused second up, status, logs, down; nothing
 * may be left running. Uses a layout with random free ports and a private run dir. */
#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char script[600];
    char layout[600];
    char run[600];
    char build[600];
} deploy;

static int cluster_cmd(deploy *d, const char *verb, const char *arg, char *out, size_t outlen)
{
    char *argv[] = {"/usr/bin/env", NULL, NULL, NULL, "bash", d->script, (char *)verb,
                    (char *)arg, NULL};
    char run_env[700], build_env[700];
    snprintf(run_env, sizeof run_env, "MC_RUN_DIR=%s", d->run);
    snprintf(build_env, sizeof build_env, "MC_BUILD_DIR=%s", d->build);
    argv[1] = run_env;
    argv[2] = build_env;
    argv[3] = "MC_DOWN_TIMEOUT=4";
    return h_run(argv, out, outlen, 90000);
}

/* Track every pid in the run dir's state file so a failing test still kills them. */
static int track_state(deploy *d, pid_t *pids, int max)
{
    char path[700];
    snprintf(path, sizeof path, "%s/cluster.state", d->run);
    FILE *f = fopen(path, "r");
    int n = 0;
    if (!f)
        return 0;
    char slot[64], host[64];
    int pid;
    while (n < max && fscanf(f, "%63s %63s %d", slot, host, &pid) == 3) {
        h_track(pid);
        pids[n++] = pid;
    }
    fclose(f);
    return n;
}

/* The slot recorded for pid in the state file ("" if none). */
static const char *slot_of(deploy *d, pid_t pid)
{
    static char slot[64];
    char path[700], host[64];
    int p;
    snprintf(path, sizeof path, "%s/cluster.state", d->run);
    slot[0] = '\0';
    FILE *f = fopen(path, "r");
    while (f && fscanf(f, "%63s %63s %d", slot, host, &p) == 3)
        if (p == pid)
            break;
        else
            slot[0] = '\0';
    if (f)
        fclose(f);
    return slot;
}

START_TEST(layout_errors_name_file_and_line)
{
    deploy d;
    snprintf(d.script, sizeof d.script, "%s/deploy/cluster", h_source_dir());
    snprintf(d.run, sizeof d.run, "%s/run-bad", h_tmpdir());
    const char *bin = getenv("MC_BIN_DIR");
    snprintf(d.build, sizeof d.build, "%s/..", bin ? bin : "build/bin");
    const struct {
        const char *text, *want;
    } cases[] = {
        {"manager localhost 21000\n", ":1: HOST 'localhost' is not an IPv4 address"},
        {"# c\nmanager 127.0.0.1 21000\nbaseapp 127.0.0.1 70000\n", ":3: baseapp needs a PORT"},
        {"manager 127.0.0.1 21000\ncellapp 127.0.0.1 21001 21002\n", ":2: cellapp has no external"},
        {"manager 127.0.0.1 21000\nbaseapp 127.0.0.1 21000\n", ":2: 127.0.0.1:21000 is used twice"},
        {"set deadAfterMs soon\nmanager 127.0.0.1 21000\n", ":1: deadAfterMs needs a number"},
        {"zoneapp 127.0.0.1 21000\n", ":1: unknown role 'zoneapp'"},
        {"baseapp 127.0.0.1 21000\n", "exactly one manager"},
    };
    char help[4096];
    ck_assert_int_eq(cluster_cmd(&d, "--help", NULL, help, sizeof help), 0);
    ck_assert_ptr_nonnull(strstr(help, "up [LAYOUT]"));
    ck_assert_int_eq(cluster_cmd(&d, "frobnicate", NULL, help, sizeof help), 2);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(d.layout, sizeof d.layout, "%s/bad%zu.layout", h_tmpdir(), i);
        FILE *f = fopen(d.layout, "w");
        ck_assert_ptr_nonnull(f);
        fputs(cases[i].text, f);
        fclose(f);
        char out[4096], want[800];
        int rc = cluster_cmd(&d, "up", d.layout, out, sizeof out);
        snprintf(want, sizeof want, "%s%s", strchr(cases[i].want, ':') == cases[i].want ? d.layout : "",
                 cases[i].want);
        ck_assert_msg(rc == 1 && strstr(out, want), "case %zu: exit %d, want '%s':\n%s", i, rc,
                      want, out);
        ck_assert_msg(strchr(out, '\n') == out + strlen(out) - 1, "not one line: %s", out);
    }
}
END_TEST

START_TEST(up_status_down_leaves_nothing)
{
    deploy d;
    snprintf(d.script, sizeof d.script, "%s/deploy/cluster", h_source_dir());
    snprintf(d.run, sizeof d.run, "%s/run", h_tmpdir());
    snprintf(d.layout, sizeof d.layout, "%s/test.layout", h_tmpdir());
    const char *bin = getenv("MC_BIN_DIR");
    snprintf(d.build, sizeof d.build, "%s/..", bin ? bin : "build/bin");
    FILE *f = fopen(d.layout, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "# test layout\nredis 127.0.0.1 %d\nmanager 127.0.0.1 %d\n", h_free_port(true),
            h_free_port(false));
    fprintf(f, "set res %s/defs\n", h_source_dir());
    fprintf(f, "loginapp 127.0.0.1 %d %d\n", h_free_port(false), h_free_port(false));
    fprintf(f, "baseapp 127.0.0.1 %d %d\n", h_free_port(false), h_free_port(false));
    fprintf(f, "baseapp 127.0.0.1 %d %d\n", h_free_port(false), h_free_port(false));
    fprintf(f, "cellapp 127.0.0.1 %d\ncellapp 127.0.0.1 %d\n", h_free_port(false),
            h_free_port(false));
    fclose(f);

    char out[32768];
    int rc = cluster_cmd(&d, "up", d.layout, out, sizeof out);
    pid_t pids[16];
    int n = track_state(&d, pids, 16);
    ck_assert_msg(rc == 0, "up failed (%d):\n%s", rc, out);
    ck_assert_int_eq(n, 7);
    ck_assert_msg(strstr(out, "5 processes registered") && strstr(out, "logs in"), "%s", out);
    for (int i = 0; i < n; i++)
        ck_assert_msg(kill(pids[i], 0) == 0, "pid %d is not running", pids[i]);

    /* A second cluster over the running one is refused. */
    char out2[8192];
    rc = cluster_cmd(&d, "up", d.layout, out2, sizeof out2);
    ck_assert_msg(rc != 0 && strstr(out2, "already running"), "%d %s", rc, out2);

    rc = cluster_cmd(&d, "status", NULL, out, sizeof out);
    ck_assert_msg(rc == 0, "status (%d): %s", rc, out);
    const char *names[] = {"manager", "loginapp01", "baseapp01", "baseapp02", "cellapp01",
                           "cellapp02"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ck_assert_msg(strstr(out, names[i]), "%s missing from status:\n%s", names[i], out);
    ck_assert_ptr_null(strstr(out, "dead"));

    rc = cluster_cmd(&d, "logs", "baseapp02", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "registered as baseapp02"), "%d %s", rc, out);

    /* The manager keeps its entity id reservation in the run dir. */
    char mstate[700];
    snprintf(mstate, sizeof mstate, "%s/manager.state", d.run);
    ck_assert_msg(h_file_contains(mstate, "mercury-cluster manager state 1"), "no %s", mstate);

    /* A process that hangs (stopped) is killed after the timeout; a recorded pid that is
     * not one of ours any more (reused) is left alone. */
    pid_t hung = -1, stranger = -1;
    for (int i = 0; i < n; i++)
        if (kill(pids[i], 0) == 0 && strstr(slot_of(&d, pids[i]), "cellapp-2"))
            hung = pids[i];
    ck_assert_int_gt(hung, 0);
    kill(hung, SIGSTOP);
    char *sleeper[] = {"/bin/sleep", "60", NULL};
    stranger = h_spawn(sleeper, NULL);
    ck_assert_int_gt(stranger, 0);
    char state[700];
    snprintf(state, sizeof state, "%s/cluster.state", d.run);
    FILE *sf = fopen(state, "a");
    ck_assert_ptr_nonnull(sf);
    fprintf(sf, "baseapp-3 127.0.0.1 %d\n", (int)stranger);
    fclose(sf);

    rc = cluster_cmd(&d, "down", NULL, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "cluster: down"), "down (%d): %s", rc, out);
    ck_assert_msg(strstr(out, "cellapp-2") && strstr(out, "killing it"), "%s", out);
    ck_assert_msg(h_alive(stranger), "down killed a process that was not the cluster's");
    for (int i = 0; i < n; i++) {
        /* Children of the script are not ours to reap: kill(0) tells if they exist. */
        bool gone = false;
        for (int k = 0; k < 50 && !gone; k++) {
            gone = kill(pids[i], 0) != 0;
            if (!gone)
                h_sleep_ms(100);
        }
        ck_assert_msg(gone, "pid %d still running after down", pids[i]);
    }
    /* Graceful: the servers deregistered before the manager went. */
    char log[700];
    snprintf(log, sizeof log, "%s/logs/baseapp-1.log", d.run);
    ck_assert_msg(h_file_contains(log, "shut down (SIGTERM)"), "no graceful shutdown in %s", log);
    rc = cluster_cmd(&d, "status", NULL, out, sizeof out);
    ck_assert_msg(rc != 0, "status after down: %s", out);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("deploy_cluster");
    TCase *tc = tcase_create("deploy");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, up_status_down_leaves_nothing);
    tcase_add_test(tc, layout_errors_name_file_and_line);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
