/* Integration tests: a real cluster (manager, loginapp, two baseapps, two cellapps) on
 * 127.0.0.1 with random free ports, driven through the watcher tool. */
#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    char manager[32];
    char res[512];
    char logdir[512];
    pid_t mgr, login, base[2], cell[2];
    char log_mgr[600], log_login[600], log_base[2][600], log_cell[2][600];
} cluster;

static pid_t start_process_at(cluster *c, const char *role, const char *log, const char *res,
                              bool external, const char *addr)
{
    char bin[512], internal[64], external_opt[64], mopt[64], ropt[600];
    if (addr)
        snprintf(internal, sizeof internal, "--internal=%s", addr);
    else
        snprintf(internal, sizeof internal, "--internal=127.0.0.1:%d", h_free_port(false));
    snprintf(external_opt, sizeof external_opt, "--external=127.0.0.1:%d", h_free_port(false));
    snprintf(mopt, sizeof mopt, "--manager=%s", c->manager);
    snprintf(ropt, sizeof ropt, "--res=%s", res ? res : c->res);
    char *argv[] = {(char *)h_bin(role, bin, sizeof bin), internal, mopt, ropt,
                    external ? external_opt : NULL, NULL};
    return h_spawn(argv, log);
}

static pid_t start_process(cluster *c, const char *role, const char *log, const char *res,
                           bool external)
{
    return start_process_at(c, role, log, res, external, NULL);
}

/* The value of a single watcher (last word of `watcher get`), into out. */
static bool get_value(cluster *c, const char *target, const char *path, char *out, size_t n)
{
    char buf[4096];
    if (h_watcher(buf, sizeof buf, c->manager, "get", target, path, NULL) != 0)
        return false;
    buf[strcspn(buf, "\n")] = '\0';
    const char *v = strrchr(buf, ' ');
    snprintf(out, n, "%s", v ? v + 1 : "");
    return v != NULL;
}

/* Start a process and wait until the manager has seen `registrations` registrations. */
static pid_t start_and_wait(cluster *c, const char *role, const char *log, bool external,
                            int registrations)
{
    pid_t pid = start_process(c, role, log, NULL, external);
    ck_assert_int_gt(pid, 0);
    char want[64];
    snprintf(want, sizeof want, "counts/registrations  %d\n", registrations);
    ck_assert_msg(h_wait_watch(c->manager, "manager", "counts/registrations", want, 15000),
                  "%s did not register (log %s)", role, log);
    return pid;
}

static void cluster_start(cluster *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->res, sizeof c->res, "%s/defs", h_source_dir());
    snprintf(c->logdir, sizeof c->logdir, "%s", h_tmpdir());
    snprintf(c->log_mgr, sizeof c->log_mgr, "%s/manager.log", c->logdir);
    snprintf(c->log_login, sizeof c->log_login, "%s/loginapp.log", c->logdir);
    for (int i = 0; i < 2; i++) {
        snprintf(c->log_base[i], sizeof c->log_base[i], "%s/baseapp%d.log", c->logdir, i + 1);
        snprintf(c->log_cell[i], sizeof c->log_cell[i], "%s/cellapp%d.log", c->logdir, i + 1);
    }
    c->mgr = h_start_manager(c->manager, sizeof c->manager, c->log_mgr, "--deadAfterMs=3000",
                             "--heartbeatMs=500", NULL);
    ck_assert_msg(c->mgr > 0, "the manager did not answer (log %s)", c->log_mgr);
    c->login = start_and_wait(c, "loginapp", c->log_login, true, 1);
    c->base[0] = start_and_wait(c, "baseapp", c->log_base[0], true, 2);
    c->base[1] = start_and_wait(c, "baseapp", c->log_base[1], true, 3);
    c->cell[0] = start_and_wait(c, "cellapp", c->log_cell[0], false, 4);
    c->cell[1] = start_and_wait(c, "cellapp", c->log_cell[1], false, 5);
}

static void cluster_stop(cluster *c) { h_kill_all(); }

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The time (ms since the epoch) on the first log line of path containing text, or -1.
 * Log lines start with "YYYY-MM-DDTHH:MM:SS.mmmZ". */
static long long log_time_of(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    long long t = -1;
    while (f && t < 0 && fgets(line, sizeof line, f)) {
        struct tm tm;
        memset(&tm, 0, sizeof tm);
        const char *rest = strstr(line, text) ? strptime(line, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
        if (rest && *rest == '.')
            t = (long long)timegm(&tm) * 1000 + atoi(rest + 1);
    }
    if (f)
        fclose(f);
    return t;
}

START_TEST(every_process_is_listed)
{
    cluster c;
    cluster_start(&c);
    char out[32768];
    int rc = h_watcher(out, sizeof out, c.manager, "ls", "all", NULL);
    ck_assert_msg(rc == 0, "ls all: exit %d: %s", rc, out);
    const char *names[] = {"manager ", "loginapp01 ", "baseapp01 ", "baseapp02 ", "cellapp01 ",
                           "cellapp02 "};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ck_assert_msg(strstr(out, names[i]), "'%s' missing from ls all:\n%s", names[i], out);
    /* The standard watchers are there. */
    ck_assert_ptr_nonnull(strstr(out, "uptime"));
    ck_assert_ptr_nonnull(strstr(out, "command/"));
    ck_assert_ptr_nonnull(strstr(out, "nub/"));

    /* Each process reports its own pid and role. */
    char want[64];
    snprintf(want, sizeof want, "baseapp02  pid  %d\n", (int)c.base[1]);
    rc = h_watcher(out, sizeof out, c.manager, "get", "baseapp02", "pid", NULL);
    ck_assert_msg(rc == 0 && strstr(out, want), "get baseapp02 pid: %d %s", rc, out);
    rc = h_watcher(out, sizeof out, c.manager, "get", "cellapps", "role", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "cellapp01  role  cellapp") &&
                      strstr(out, "cellapp02  role  cellapp"),
                  "get cellapps role: %s", out);

    /* status: every process alive, with its load. */
    rc = h_watcher(out, sizeof out, c.manager, "status", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "baseapp01") && strstr(out, "alive"), "status: %s", out);
    /* Heartbeats arrive (every 500 ms from each of 5 processes). */
    unsigned long long beats = 0;
    for (int i = 0; i < 50 && beats < 10; i++) {
        rc = h_watcher(out, sizeof out, c.manager, "get", "manager", "counts/heartbeats", NULL);
        const char *v = strrchr(out, ' ');
        beats = rc == 0 && v ? strtoull(v + 1, NULL, 10) : 0;
        if (beats < 10)
            h_sleep_ms(200);
    }
    ck_assert_msg(beats >= 10, "only %llu heartbeats", beats);
    /* JSON output parses as one object with every process. */
    rc = h_watcher(out, sizeof out, c.manager, "--json", "get", "all", "role", NULL);
    ck_assert_msg(rc == 0 && out[0] == '{' && strstr(out, "\"name\":\"cellapp02\""), "%s", out);
    cluster_stop(&c);
}
END_TEST

START_TEST(get_and_set_on_process_and_role)
{
    cluster c;
    cluster_start(&c);
    char out[32768];
    int rc = h_watcher(out, sizeof out, c.manager, "set", "baseapp01", "config/logLevel", "debug",
                       NULL);
    ck_assert_msg(rc == 0 && strstr(out, "baseapp01  config/logLevel  debug"), "%d %s", rc, out);
    rc = h_watcher(out, sizeof out, c.manager, "get", "baseapp01", "config/logLevel", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "debug"), "%s", out);
    rc = h_watcher(out, sizeof out, c.manager, "get", "baseapp02", "config/logLevel", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "info"), "baseapp02 changed too: %s", out);

    rc = h_watcher(out, sizeof out, c.manager, "set", "cellapps", "config/logLevel", "warning",
                   NULL);
    ck_assert_msg(rc == 0, "%d %s", rc, out);
    rc = h_watcher(out, sizeof out, c.manager, "get", "cellapps", "config/logLevel", NULL);
    ck_assert_msg(strstr(out, "cellapp01  config/logLevel  warning") &&
                      strstr(out, "cellapp02  config/logLevel  warning"),
                  "%s", out);

    /* A directory reads recursively. */
    rc = h_watcher(out, sizeof out, c.manager, "get", "manager", "processes/baseapp01", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "processes/baseapp01/state") && strstr(out, "alive"),
                  "%s", out);
    /* The manager's own read-write value. */
    rc = h_watcher(out, sizeof out, c.manager, "set", "manager", "registry/deadAfterMs", "4000",
                   NULL);
    ck_assert_msg(rc == 0 && strstr(out, "4000"), "%d %s", rc, out);
    cluster_stop(&c);
}
END_TEST

START_TEST(errors_have_their_exit_codes)
{
    cluster c;
    cluster_start(&c);
    char out[8192];
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "get", "baseapp09", "pid", NULL), 3);
    ck_assert_msg(strstr(out, "unknown process"), "%s", out);
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "get", "zoneapps", "pid", NULL), 3);
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "get", "baseapp01", "no/such", NULL), 4);
    ck_assert_msg(strstr(out, "baseapp01"), "%s", out);
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "get", "all", "bad//path", NULL), 4);
    ck_assert_msg(strchr(out, '\n') && strchr(out, '\n')[1] == '\0', "not one line: %s", out);
    ck_assert_msg(strstr(out, "the other 5 processes"), "%s", out);
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "set", "baseapp01", "pid", "7", NULL), 5);
    ck_assert_int_eq(
        h_watcher(out, sizeof out, c.manager, "set", "manager", "registry/deadAfterMs", "soon", NULL),
        6);
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "call", "baseapp01", "pid", NULL), 8);
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "set", "baseapp01", "config/logLevel",
                               "loud", NULL),
                     9);
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "frobnicate", NULL), 2);
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "get", NULL), 2);
    /* Nobody listens on this port: no answer in time. */
    char silent[32];
    snprintf(silent, sizeof silent, "127.0.0.1:%d", h_free_port(false));
    ck_assert_int_eq(h_watcher(out, sizeof out, silent, "--timeout", "500", "get", "all", "pid",
                               NULL),
                     7);
    ck_assert_msg(strstr(out, "no answer in time"), "%s", out);
    /* Exactly one line of error. */
    char *nl = strchr(out, '\n');
    ck_assert_msg(nl && nl[1] == '\0', "more than one line: %s", out);
    cluster_stop(&c);
}
END_TEST

START_TEST(shutdown_command_and_sigterm)
{
    cluster c;
    cluster_start(&c);
    char out[8192];
    int rc = h_watcher(out, sizeof out, c.manager, "call", "cellapp02", "command/shutdown", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "shutting down"), "%d %s", rc, out);
    ck_assert_int_eq(h_wait_exit(c.cell[1], 10000), 0);
    ck_assert(h_wait_watch(c.manager, "manager", "processes/cellapp02/state", "stopped", 5000));
    ck_assert(h_file_contains(c.log_cell[1], "deregistered from the manager"));
    /* The others were told. */
    ck_assert(h_wait_watch(c.manager, "cellapp01", "peers/cellapp02", "stopped", 5000));

    h_kill(c.login, SIGTERM);
    ck_assert_int_eq(h_wait_exit(c.login, 10000), 0);
    ck_assert(h_wait_watch(c.manager, "manager", "processes/loginapp01/state", "stopped", 5000));
    ck_assert(h_file_contains(c.log_login, "SIGTERM"));

    /* A stopped process is not a target any more. */
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "get", "loginapp01", "pid", NULL), 3);
    ck_assert_msg(strstr(out, "stopped"), "%s", out);

    h_kill(c.mgr, SIGINT);
    ck_assert_int_eq(h_wait_exit(c.mgr, 10000), 0);
    cluster_stop(&c);
}
END_TEST

START_TEST(killed_baseapp_is_reported_dead_and_a_restart_gets_a_new_name)
{
    cluster c;
    cluster_start(&c);
    long long killed_at = wall_ms();
    h_kill(c.base[0], SIGKILL);
    ck_assert_int_eq(h_wait_exit(c.base[0], 5000), 128 + SIGKILL);
    /* Dead after 3 s of silence; the others are told within 5 s of the kill (measured by
     * the time on the line each one logs when told: polling adds nothing). */
    ck_assert(h_wait_watch(c.manager, "manager", "processes/baseapp01/state", "dead", 10000));
    ck_assert(h_wait_watch(c.manager, "baseapp02", "peers/baseapp01", "dead", 5000));
    ck_assert(h_wait_watch(c.manager, "cellapp01", "peers/baseapp01", "dead", 5000));
    ck_assert(h_wait_watch(c.manager, "loginapp01", "peers/baseapp01", "dead", 5000));
    const char *told[] = {c.log_base[1], c.log_cell[0], c.log_cell[1], c.log_login};
    for (size_t i = 0; i < sizeof told / sizeof told[0]; i++) {
        long long at = log_time_of(told[i], "manager: baseapp01 is dead");
        ck_assert_msg(at > 0, "%s does not log the death", told[i]);
        ck_assert_msg(at - killed_at <= 5000, "%s was told %lld ms after the kill", told[i],
                      at - killed_at);
    }
    ck_assert(h_file_contains(c.log_mgr, "baseapp01"));
    char out[8192];
    /* A role no longer includes it. */
    int rc = h_watcher(out, sizeof out, c.manager, "get", "baseapps", "name", NULL);
    ck_assert_msg(rc == 0 && !strstr(out, "baseapp01") && strstr(out, "baseapp02"), "%s", out);

    /* Restarted, it registers again under a new name. */
    char log[600];
    snprintf(log, sizeof log, "%s/baseapp-restarted.log", c.logdir);
    pid_t again = start_process(&c, "baseapp", log, NULL, true);
    ck_assert(h_wait_watch(c.manager, "manager", "processes/baseapp03/state", "alive", 10000));
    char want[64];
    snprintf(want, sizeof want, "baseapp03  pid  %d", (int)again);
    rc = h_watcher(out, sizeof out, c.manager, "get", "baseapp03", "pid", NULL);
    ck_assert_msg(rc == 0 && strstr(out, want), "%s", out);
    ck_assert(h_wait_watch(c.manager, "cellapp02", "peers/baseapp03", "alive", 5000));
    cluster_stop(&c);
}
END_TEST

START_TEST(different_def_digest_is_refused)
{
    cluster c;
    cluster_start(&c);
    /* A copy of the defs with two entity types swapped: a different digest. */
    char other[600], cmd[4096];
    snprintf(other, sizeof other, "%s/otherdefs", c.logdir);
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s' && cp -r '%s' '%s' && sed -i -e 's|<Account/>|<TMP/>|' -e "
             "'s|<Avatar/>|<Account/>|' -e 's|<TMP/>|<Avatar/>|' '%s/entities.xml'",
             other, c.res, other, other);
    ck_assert_int_eq(system(cmd), 0);
    /* A loginapp (it loads no game module) reaches the manager, which refuses it. */
    char log[600];
    snprintf(log, sizeof log, "%s/loginapp-otherdefs.log", c.logdir);
    pid_t pid = start_process(&c, "loginapp", log, other, true);
    ck_assert_int_eq(h_wait_exit(pid, 15000), 1);
    ck_assert_msg(h_file_contains(log, "registration refused by the manager: def digest"),
                  "no refusal reason in %s", log);
    /* A baseapp refuses itself before that: its game module was built from other defs. */
    char blog[600];
    snprintf(blog, sizeof blog, "%s/baseapp-otherdefs.log", c.logdir);
    pid_t bpid = start_process(&c, "baseapp", blog, other, true);
    ck_assert_int_eq(h_wait_exit(bpid, 15000), 1);
    ck_assert_msg(h_file_contains(blog, "was generated from other definitions"),
                  "no game module refusal in %s", blog);
    char out[8192];
    int rc = h_watcher(out, sizeof out, c.manager, "get", "manager", "counts/refusals", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "counts/refusals  1"), "%s", out);
    rc = h_watcher(out, sizeof out, c.manager, "get", "manager", "counts/alive", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "counts/alive  5"), "%s", out);
    cluster_stop(&c);
}
END_TEST

START_TEST(restart_on_the_same_address)
{
    cluster c;
    cluster_start(&c);
    char addr[64];
    ck_assert(get_value(&c, "baseapp01", "interfaces/internal", addr, sizeof addr));
    h_kill(c.base[0], SIGKILL);
    ck_assert_int_eq(h_wait_exit(c.base[0], 5000), 128 + SIGKILL);
    ck_assert(h_wait_watch(c.manager, "manager", "processes/baseapp01/state", "dead", 6000));
    char log[600];
    snprintf(log, sizeof log, "%s/baseapp-same-address.log", c.logdir);
    pid_t again = start_process_at(&c, "baseapp", log, NULL, true, addr);
    ck_assert(again > 0);
    ck_assert_msg(h_wait_watch(c.manager, "manager", "processes/baseapp03/state", "alive", 10000),
                  "the restarted baseapp did not register at %s (log %s)", addr, log);
    /* Its heartbeats get through on the renewed channel: still alive well past 3 s. */
    h_sleep_ms(4000);
    char state[32];
    ck_assert(get_value(&c, "manager", "processes/baseapp03/state", state, sizeof state));
    ck_assert_str_eq(state, "alive");
    ck_assert(h_wait_watch(c.manager, "cellapp01", "peers/baseapp03", "alive", 5000));
    cluster_stop(&c);
}
END_TEST

START_TEST(processes_register_again_with_a_restarted_manager)
{
    cluster c;
    cluster_start(&c);
    h_kill(c.mgr, SIGKILL);
    ck_assert_int_eq(h_wait_exit(c.mgr, 5000), 128 + SIGKILL);
    char log[600];
    snprintf(log, sizeof log, "%s/manager-restarted.log", c.logdir);
    c.mgr = h_start_manager(c.manager, sizeof c.manager, log, NULL);
    ck_assert_msg(c.mgr > 0, "the manager did not start again (log %s)", log);
    /* Each process's lease runs out (half the dead-after time) and it registers off-channel
     * (a probe): the new instance takes it at once, and the process opens a new channel to
     * the manager's address, on which its heartbeats get through. */
    ck_assert_msg(h_wait_watch(c.manager, "manager", "counts/alive", "counts/alive  5", 20000),
                  "not every process registered with the new manager (log %s)", log);
    ck_assert(h_file_contains(c.log_base[0], "restarted: a new channel to it"));
    char probes[32];
    ck_assert(get_value(&c, "baseapp01", "manager/registrationProbes", probes, sizeof probes));
    ck_assert_uint_ge(strtoull(probes, NULL, 10), 1);
    /* still alive well past the dead-after time: the heartbeats go on the new channel */
    h_sleep_ms(4000);
    char state[32];
    ck_assert(get_value(&c, "manager", "processes/baseapp01/state", state, sizeof state));
    ck_assert_str_eq(state, "alive");
    cluster_stop(&c);
}
END_TEST

START_TEST(a_silent_channel_is_a_death)
{
    /* Heartbeat detection off (60 s); the manager's channels die after 2 s of silence. */
    char manager[32] = "", ropt[600], log[600];
    snprintf(ropt, sizeof ropt, "--res=%s/defs", h_source_dir());
    snprintf(log, sizeof log, "%s/manager-channel.log", h_tmpdir());
    ck_assert_msg(h_start_manager(manager, sizeof manager, log, "--deadAfterMs=60000",
                                  "--channelTimeoutMs=2000", NULL) > 0,
                  "no manager (%s)", log);
    char mopt[64];
    snprintf(mopt, sizeof mopt, "--manager=%s", manager);
    const char *roles[] = {"baseapp", "cellapp"};
    for (int i = 0; i < 2; i++) {
        char b[512], l[600];
        snprintf(l, sizeof l, "%s/%s-channel.log", h_tmpdir(), roles[i]);
        char *argv[] = {(char *)h_bin(roles[i], b, sizeof b), mopt, ropt, NULL};
        ck_assert_int_gt(h_spawn(argv, l), 0);
        char want[32];
        snprintf(want, sizeof want, "counts/alive  %d", i + 1);
        ck_assert(h_wait_watch(manager, "manager", "counts/alive", want, 15000));
    }
    /* The baseapp loses every datagram it sends (mercury's rehearsal watcher); its reply
     * to this very set is lost too, so the tool's exit code says nothing. */
    char out[4096];
    h_watcher(out, sizeof out, manager, "--timeout", "1000", "set", "baseapp01",
              "nub/rehearsal/loss", "1", NULL);
    ck_assert_msg(h_wait_watch(manager, "manager", "processes/baseapp01/reason",
                               "its channel died", 10000),
                  "the manager did not notice the silent channel (log %s)", log);
    ck_assert(h_wait_watch(manager, "manager", "processes/baseapp01/state", "dead", 1000));
    ck_assert(h_wait_watch(manager, "cellapp01", "peers/baseapp01", "dead", 5000));
    h_kill_all();
}
END_TEST

/* The dead-after time is per role: a cellapp given 20 s outlives a stopped baseapp's 3 s; each
 * process is told its own role's time when it registers, and again in heartbeat replies when
 * it changes at run time; set back to deadAfterMs (0), the stopped cellapp dies too. */
START_TEST(each_role_has_its_own_dead_after_time)
{
    cluster c;
    memset(&c, 0, sizeof c);
    snprintf(c.res, sizeof c.res, "%s/defs", h_source_dir());
    snprintf(c.logdir, sizeof c.logdir, "%s", h_tmpdir());
    snprintf(c.log_mgr, sizeof c.log_mgr, "%s/manager-roles.log", c.logdir);
    snprintf(c.log_base[0], sizeof c.log_base[0], "%s/baseapp-roles.log", c.logdir);
    snprintf(c.log_cell[0], sizeof c.log_cell[0], "%s/cellapp-roles.log", c.logdir);
    c.mgr = h_start_manager(c.manager, sizeof c.manager, c.log_mgr, "--deadAfterMs=3000",
                            "--heartbeatMs=500", "--deadAfterMsCellapp=20000", NULL);
    ck_assert_msg(c.mgr > 0, "the manager did not answer (log %s)", c.log_mgr);
    c.base[0] = start_and_wait(&c, "baseapp", c.log_base[0], true, 1);
    c.cell[0] = start_and_wait(&c, "cellapp", c.log_cell[0], false, 2);
    char out[4096];
    ck_assert(h_wait_watch(c.manager, "baseapp01", "manager/deadAfterMs", "  3000\n", 5000));
    ck_assert(h_wait_watch(c.manager, "cellapp01", "manager/deadAfterMs", "  20000\n", 5000));
    ck_assert(h_wait_watch(c.manager, "manager", "registry/deadAfterMsCellapp", "  20000\n", 5000));
    ck_assert(h_wait_watch(c.manager, "manager", "registry/deadAfterMsBaseapp", "  0\n", 5000));
    /* changed at run time: the cellapp hears it in a heartbeat reply, the baseapp keeps its */
    int rc = h_watcher(out, sizeof out, c.manager, "set", "manager",
                       "registry/deadAfterMsCellapp", "8000", NULL);
    ck_assert_msg(rc == 0, "%d %s", rc, out);
    ck_assert(h_wait_watch(c.manager, "cellapp01", "manager/deadAfterMs", "  8000\n", 10000));
    ck_assert(h_wait_watch(c.manager, "baseapp01", "manager/deadAfterMs", "  3000\n", 5000));
    /* checked like deadAfterMs: room for two heartbeats */
    ck_assert_int_ne(h_watcher(out, sizeof out, c.manager, "set", "manager",
                               "registry/deadAfterMsCellapp", "600", NULL),
                     0);
    rc = h_watcher(out, sizeof out, c.manager, "set", "manager", "registry/deadAfterMsCellapp",
                   "20000", NULL);
    ck_assert_msg(rc == 0, "%d %s", rc, out);
    ck_assert(h_wait_watch(c.manager, "cellapp01", "manager/deadAfterMs", "  20000\n", 10000));

    /* both stop answering: the baseapp is dead after 3 s, the cellapp is not */
    h_kill(c.base[0], SIGSTOP);
    h_kill(c.cell[0], SIGSTOP);
    ck_assert(h_wait_watch(c.manager, "manager", "processes/baseapp01/state", "dead", 15000));
    char v[64];
    ck_assert(get_value(&c, "manager", "processes/cellapp01/state", v, sizeof v));
    ck_assert_str_eq(v, "alive");
    /* back to deadAfterMs: the silent cellapp goes too */
    rc = h_watcher(out, sizeof out, c.manager, "set", "manager", "registry/deadAfterMsCellapp",
                   "0", NULL);
    ck_assert_msg(rc == 0, "%d %s", rc, out);
    ck_assert(h_wait_watch(c.manager, "manager", "processes/cellapp01/state", "dead", 10000));
    ck_assert(h_file_contains(c.log_mgr, "cellapp01"));
    h_kill(c.base[0], SIGCONT);
    h_kill(c.cell[0], SIGCONT);
    cluster_stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cluster");
    TCase *tc = tcase_create("cluster");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_process_is_listed);
    tcase_add_test(tc, get_and_set_on_process_and_role);
    tcase_add_test(tc, errors_have_their_exit_codes);
    tcase_add_test(tc, shutdown_command_and_sigterm);
    tcase_add_test(tc, killed_baseapp_is_reported_dead_and_a_restart_gets_a_new_name);
    tcase_add_test(tc, different_def_digest_is_refused);
    tcase_add_test(tc, restart_on_the_same_address);
    tcase_add_test(tc, processes_register_again_with_a_restarted_manager);
    tcase_add_test(tc, a_silent_channel_is_a_death);
    tcase_add_test(tc, each_role_has_its_own_dead_after_time);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
