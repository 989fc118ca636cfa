/* Integration test of deploy/cluster: up, a refused second up, status, logs, down; nothing
 * may be left running. Uses a layout with random free ports and a private run dir. Also:
 * the cluster's Redis (password in a 0600 file, never on a command line, append-only file),
 * the cluster file the watcher finds the cluster through, and a `down` that cannot check a
 * host (it must not say "down"). And the reviver: a manager and a loginapp killed with
 * SIGKILL are started again, every process registers again, a global name comes back and a
 * login works; `down` with the reviver itself killed leaves nothing. */
#include "harness.h"

#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char script[600];
    char layout[600];
    char run[600];
    char build[600];
} deploy;

/* The deploy script, a private run dir and layout path under the test's tmpdir, and the
 * build the binaries come from. */
static void deploy_init(deploy *d, const char *run, const char *layout)
{
    snprintf(d->script, sizeof d->script, "%s/deploy/cluster", h_source_dir());
    snprintf(d->run, sizeof d->run, "%s/%s", h_tmpdir(), run);
    snprintf(d->layout, sizeof d->layout, "%s/%s", h_tmpdir(), layout);
    const char *bin = getenv("MC_BIN_DIR");
    snprintf(d->build, sizeof d->build, "%s/..", bin ? bin : "build/bin");
}

/* deploy/cluster VERB [ARG] with the test's run and build dirs and, if not NULL, one more
 * environment setting (NAME=VALUE). */
static int cluster_cmd_env(deploy *d, const char *extra, const char *verb, const char *arg,
                           char *out, size_t outlen)
{
    char *argv[] = {"/usr/bin/env", NULL, NULL, NULL, (char *)(extra ? extra : "MC_TEST=1"),
                    "bash", d->script, (char *)verb, (char *)arg, NULL};
    char run_env[700], build_env[700];
    snprintf(run_env, sizeof run_env, "MC_RUN_DIR=%s", d->run);
    snprintf(build_env, sizeof build_env, "MC_BUILD_DIR=%s", d->build);
    argv[1] = run_env;
    argv[2] = build_env;
    argv[3] = "MC_DOWN_TIMEOUT=4";
    return h_run(argv, out, outlen, 90000);
}

static int cluster_cmd(deploy *d, const char *verb, const char *arg, char *out, size_t outlen)
{
    return cluster_cmd_env(d, NULL, verb, arg, out, outlen);
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

/* Run a command with MC_RUN_DIR set to the test's run dir and MC_MANAGER and MC_SECRET_FILE
 * unset (a tool finds the cluster and its secret through the cluster file). */
static int run_in_env(deploy *d, char *const cmd[], char *out, size_t outlen)
{
    char run_env[700];
    snprintf(run_env, sizeof run_env, "MC_RUN_DIR=%s", d->run);
    char *argv[18] = {"/usr/bin/env", "-u", "MC_MANAGER", "-u", "MC_SECRET_FILE", run_env};
    int n = 6;
    for (int i = 0; cmd[i] && n < 17; i++)
        argv[n++] = cmd[i];
    argv[n] = NULL;
    return h_run(argv, out, outlen, 30000);
}

static int file_mode(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int)(st.st_mode & 0777) : -1;
}

static void read_file(const char *path, char *out, size_t outlen)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(out, 1, outlen - 1, f);
    out[n] = '\0';
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
}

/* Does any process's command line contain text? */
static bool on_a_command_line(const char *text)
{
    DIR *proc = opendir("/proc");
    struct dirent *de;
    bool found = false;
    while (proc && !found && (de = readdir(proc)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        char path[300], buf[8192];
        snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        for (size_t i = 0; i < n; i++)
            if (buf[i] == '\0')
                buf[i] = ' ';
        buf[n] = '\0';
        found = strstr(buf, text) != NULL;
    }
    if (proc)
        closedir(proc);
    return found;
}

/* The harness's watcher calls (h_watcher, h_wait_watch) use MC_SECRET_FILE: from now on the
 * secret deploy/cluster made for this cluster, not the test run's. */
static void use_cluster_secret(deploy *d)
{
    char path[700];
    snprintf(path, sizeof path, "%s/cluster.secret", d->run);
    ck_assert_int_eq(setenv("MC_SECRET_FILE", path, 1), 0);
}

/* Does a UDP datagram sent to ip:port get any answer within wait_ms? */
static bool udp_answers(const char *ip, int port, const uint8_t *pkt, size_t n, int wait_ms)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, ip, &to.sin_addr);
    ck_assert_int_eq(sendto(fd, pkt, n, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)n);
    struct timeval tv = {wait_ms / 1000, (wait_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    uint8_t buf[2048];
    ssize_t got = recv(fd, buf, sizeof buf, 0);
    close(fd);
    return got >= 0;
}

/* `watcher get TARGET PATH` against mgr: the value (the line's last word). */
static bool watch_get(const char *mgr, const char *target, const char *path, char *v,
                      size_t vlen)
{
    char out[2048];
    if (h_watcher(out, sizeof out, mgr, "get", target, path, NULL) != 0)
        return false;
    out[strcspn(out, "\n")] = '\0';
    const char *sp = strrchr(out, ' '), *src = sp ? sp + 1 : out;
    size_t k = strlen(src);
    if (k >= vlen)
        k = vlen - 1;
    memcpy(v, src, k);
    v[k] = '\0';
    return true;
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
        {"manager 127.0.0.1 21000\nbaseapp 10.0.0.1 21001 127.0.0.1:21000\n",
         ":2: 127.0.0.1:21000 is used twice"},
        {"manager 127.0.0.1 21000\nbaseapp 127.0.0.1 21001 clients:21002\n",
         ":2: EXTERNAL IP 'clients' is not an IPv4 address"},
        {"manager 127.0.0.1 21000\nbaseapp 127.0.0.1 21001 127.0.0.2:0\n",
         ":2: EXTERNAL_PORT must be between 1 and 65535"},
        {"set deadAfterMs soon\nmanager 127.0.0.1 21000\n", ":1: deadAfterMs needs a number"},
        {"zoneapp 127.0.0.1 21000\n", ":1: unknown role 'zoneapp'"},
        {"baseapp 127.0.0.1 21000\n", "exactly one manager"},
        {"manager 127.0.0.1 21000\nrediscluster 127.0.0.1 21001\nrediscluster 127.0.0.1 21002\n",
         "at least 3 rediscluster lines"},
        {"manager 127.0.0.1 21000\nredis 127.0.0.1 21001\nset redis 127.0.0.1:6379\n",
         "name one Redis"},
        {"manager 127.0.0.1 21000\nset redisCluster 127.0.0.1:1,x:2\n", ":2: redisCluster needs"},
        {"manager 127.0.0.1 21000\nredis 127.0.0.1 21001\nset redisUser app\n",
         "are for an external Redis"},
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
    deploy_init(&d, "run", "test.layout");
    FILE *f = fopen(d.layout, "w");
    ck_assert_ptr_nonnull(f);
    int redis_port = h_free_port(true), manager_port = h_free_port(false);
    fprintf(f, "# test layout\nredis 127.0.0.1 %d\nmanager 127.0.0.1 %d\n", redis_port,
            manager_port);
    fprintf(f, "set res %s/defs\n", h_source_dir());
    /* internal ports (and the external ones) of every process, to knock on them later;
     * the second baseapp's clients' address is another IP than its internal one */
    int iport[5], eport[3];
    for (int i = 0; i < 5; i++)
        iport[i] = h_free_port(false);
    for (int i = 0; i < 3; i++)
        eport[i] = h_free_port(false);
    fprintf(f, "loginapp 127.0.0.1 %d %d\n", iport[0], eport[0]);
    fprintf(f, "baseapp 127.0.0.1 %d %d\n", iport[1], eport[1]);
    fprintf(f, "baseapp 127.0.0.1 %d 127.0.0.2:%d\n", iport[2], eport[2]);
    fprintf(f, "cellapp 127.0.0.1 %d\ncellapp 127.0.0.1 %d\n", iport[3], iport[4]);
    fclose(f);

    char out[32768];
    int rc = cluster_cmd(&d, "up", d.layout, out, sizeof out);
    pid_t pids[16];
    int n = track_state(&d, pids, 16);
    ck_assert_msg(rc == 0, "up failed (%d):\n%s", rc, out);
    use_cluster_secret(&d);
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

    /* The cluster file: the watcher finds this cluster (its manager is not on the default
     * port) without being told; --manager and $MC_MANAGER still override it. */
    char cfile[700], want[200];
    snprintf(cfile, sizeof cfile, "%s/cluster.conf", d.run);
    snprintf(want, sizeof want, "manager 127.0.0.1:%d", manager_port);
    ck_assert_msg(h_file_contains(cfile, want), "%s does not say '%s'", cfile, want);
    /* the defs the cluster runs, which mc-client and bots load (test_tool_env) */
    ck_assert_msg(h_file_contains(cfile, "res /"), "%s names no defs (res)", cfile);
    /* The login key pair: made in the run dir, the public key in the cluster file (what
     * clients are given) and in the loginapp's watcher (derived from the secret it got). */
    char pubf[700], pub[80] = "", line[120];
    snprintf(pubf, sizeof pubf, "%s/keys/login.pub", d.run);
    FILE *pf = fopen(pubf, "r");
    ck_assert_msg(pf && fgets(pub, sizeof pub, pf), "no %s", pubf);
    fclose(pf);
    pub[strcspn(pub, "\n")] = '\0';
    ck_assert_uint_eq(strlen(pub), 64);
    snprintf(line, sizeof line, "loginPublicKey %s", pub);
    ck_assert_msg(h_file_contains(cfile, line), "%s does not say '%s'", cfile, line);
    char mgr[64];
    snprintf(mgr, sizeof mgr, "127.0.0.1:%d", manager_port);
    ck_assert_msg(h_wait_watch(mgr, "loginapp01", "login/publicKey", pub, 10000),
                  "the loginapp does not use the run dir's key");
    char wbin[512];
    h_bin("watcher", wbin, sizeof wbin);
    char *get_pid[] = {wbin, "get", "all", "pid", NULL};
    rc = run_in_env(&d, get_pid, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "baseapp02") && strstr(out, "cellapp01"),
                  "watcher without --manager (%d): %s", rc, out);
    char *get_wrong[] = {wbin, "--timeout", "300", "--manager", "127.0.0.1:9", "get", "all",
                         "pid", NULL};
    rc = run_in_env(&d, get_wrong, out, sizeof out);
    ck_assert_msg(rc == 7 && strstr(out, "from --manager"), "--manager ignored (%d): %s", rc,
                  out);

    /* The internal trust boundary: the cluster secret in a 0600 file that the cluster file
     * names, never on a command line; nothing answers a sender without it, on any internal
     * port, nor a sender without a session on a baseapp's external port. */
    char secretf[700], secret[200], sline[800];
    snprintf(secretf, sizeof secretf, "%s/cluster.secret", d.run);
    ck_assert_int_eq(file_mode(secretf), 0600);
    read_file(secretf, secret, sizeof secret);
    secret[strcspn(secret, "\n")] = '\0';
    ck_assert_uint_eq(strlen(secret), 64);
    ck_assert_msg(!on_a_command_line(secret), "the cluster secret is on a command line");
    snprintf(sline, sizeof sline, "secretFile %s", secretf);
    ck_assert_msg(h_file_contains(cfile, sline), "%s does not say '%s'", cfile, sline);
    char wrongf[700];
    snprintf(wrongf, sizeof wrongf, "%s/wrong.secret", h_tmpdir());
    FILE *wf = fopen(wrongf, "w");
    ck_assert_ptr_nonnull(wf);
    fprintf(wf, "%s\n", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
    fclose(wf);
    chmod(wrongf, 0600);
    char *get_wrong_secret[] = {wbin, "--timeout", "1000", "--secretFile", wrongf, "get",
                                "manager", "pid", NULL};
    rc = run_in_env(&d, get_wrong_secret, out, sizeof out);
    ck_assert_msg(rc == 7, "the manager answered a tool with another secret (%d): %s", rc, out);
    /* raw datagrams (the watcher above sent well-formed, wrongly tagged ones to the
     * manager; here junk to every internal port) */
    for (int i = -1; i < 5; i++) {
        int port = i < 0 ? manager_port : iport[i];
        ck_assert_msg(!udp_answers("127.0.0.1", port, (const uint8_t *)"hello? hello? hello?",
                                   20, 300),
                      "internal port %d answered junk", port);
    }
    const char *who[] = {"manager", "loginapp01", "baseapp01", "baseapp02", "cellapp01",
                         "cellapp02"};
    for (size_t i = 0; i < sizeof who / sizeof who[0]; i++) {
        char v[64] = "";
        ck_assert_msg(watch_get(mgr, who[i], "nub/drops/badAuth", v, sizeof v) &&
                          strtoull(v, NULL, 10) >= 1,
                      "%s did not count the forged packets (%s)", who[i], v);
    }
    /* a baseapp's external port: a HELLO naming a session it never issued gets nothing */
    uint8_t hello[256] = {0xA1, 1};
    for (int i = 2; i < 50; i++)
        hello[i] = (uint8_t)(i * 37);
    ck_assert(!udp_answers("127.0.0.1", eport[1], hello, sizeof hello, 500));
    ck_assert(!udp_answers("127.0.0.2", eport[2], hello, sizeof hello, 500));
    char v[64], want_ext[64];
    unsigned long long unknown = 0;
    bool ext_seen = false;
    snprintf(want_ext, sizeof want_ext, "127.0.0.2:%d", eport[2]);
    for (int i = 0; i < 2; i++) {
        const char *b = i ? "baseapp02" : "baseapp01";
        ck_assert(watch_get(mgr, b, "clients/unknownSession", v, sizeof v));
        unknown += strtoull(v, NULL, 10);
        ck_assert(watch_get(mgr, b, "interfaces/external", v, sizeof v));
        ext_seen |= strcmp(v, want_ext) == 0;
    }
    ck_assert_uint_eq(unknown, 2);
    ck_assert_msg(ext_seen, "no baseapp serves clients on %s", want_ext);
    /* the loginapp's door answers a HELLO (a cookie, fewer bytes than asked), never junk */
    ck_assert(!udp_answers("127.0.0.1", eport[0], (const uint8_t *)"hello?", 6, 300));

    /* The cluster's Redis: a password in a 0600 file (and a 0600 config file), never on a
     * command line; refused without it; an append-only file in the run dir. */
    char pwfile[700], conf[700], pw[200];
    snprintf(pwfile, sizeof pwfile, "%s/redis.password", d.run);
    snprintf(conf, sizeof conf, "%s/redis/redis-1.conf", d.run);
    ck_assert_int_eq(file_mode(pwfile), 0600);
    ck_assert_int_eq(file_mode(conf), 0600);
    read_file(pwfile, pw, sizeof pw);
    ck_assert_msg(strlen(pw) >= 32, "weak password '%s'", pw);
    ck_assert_msg(!on_a_command_line(pw), "the Redis password is on a command line");
    char rport[16];
    snprintf(rport, sizeof rport, "%d", redis_port);
    char *ping[] = {"/usr/bin/env", "-u", "REDISCLI_AUTH", "redis-cli", "-h", "127.0.0.1", "-p",
                    rport, "ping", NULL};
    rc = h_run(ping, out, sizeof out, 10000);
    ck_assert_msg(strstr(out, "NOAUTH"), "redis answered without a password: %s", out);
    char auth_env[300];
    snprintf(auth_env, sizeof auth_env, "REDISCLI_AUTH=%s", pw);
    char *aof[] = {"/usr/bin/env", auth_env, "redis-cli", "--no-auth-warning", "-h",
                   "127.0.0.1", "-p", rport, "config", "get", "appendonly", NULL};
    rc = h_run(aof, out, sizeof out, 10000);
    ck_assert_msg(rc == 0 && strstr(out, "yes"), "appendonly: %s", out);
    char aofdir[700];
    snprintf(aofdir, sizeof aofdir, "%s/redis-1/appendonlydir", d.run);
    ck_assert_msg(file_mode(aofdir) >= 0, "no append-only dir %s", aofdir);

    rc = cluster_cmd(&d, "logs", "baseapp02", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "registered as baseapp02"), "%d %s", rc, out);

    /* reload: every baseapp and cellapp loads its --game module again (issue 21 item 6: the
     * file a rebuild replaces), answered per process; one process; a role without a game
     * module is refused. */
    rc = cluster_cmd(&d, "reload", NULL, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "cluster: reloaded"), "reload (%d): %s", rc, out);
    for (size_t i = 2; i < sizeof names / sizeof names[0]; i++)
        ck_assert_msg(strstr(out, names[i]), "%s missing from reload:\n%s", names[i], out);
    ck_assert_msg(strstr(out, "reloaded /"), "%s", out);
    rc = cluster_cmd(&d, "reload", "cellapp02", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "cellapp02") && !strstr(out, "cellapp01"), "%d %s",
                  rc, out);
    rc = cluster_cmd(&d, "reload", "loginapp01", out, sizeof out);
    ck_assert_msg(rc != 0 && strstr(out, "neither"), "%d %s", rc, out);

    /* retire (issue 20 item 6): baseapp02 offloads its bases and stops gracefully; the last
     * baseapp cannot retire (its bases would have nowhere to go); a cellapp is no baseapp */
    rc = cluster_cmd(&d, "retire", "baseapp02", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "cluster: baseapp02 retired"), "retire (%d): %s", rc,
                  out);
    char blog[700];
    snprintf(blog, sizeof blog, "%s/logs/baseapp-2.log", d.run);
    /* the script is done when the manager no longer lists it; its last log line may come
     * a moment later */
    bool retired_logged = false;
    for (int waited = 0; waited < 20000 && !retired_logged; waited += 100) {
        retired_logged = h_file_contains(blog, "shut down (retired: every base offloaded)");
        if (!retired_logged)
            h_sleep_ms(100);
    }
    ck_assert_msg(retired_logged, "no retirement in %s", blog);
    rc = cluster_cmd(&d, "retire", "baseapp01", out, sizeof out);
    ck_assert_msg(rc != 0 && strstr(out, "only live baseapp"), "retire (%d): %s", rc, out);
    rc = cluster_cmd(&d, "retire", "cellapp01", out, sizeof out);
    ck_assert_msg(rc != 0 && strstr(out, "not a baseapp"), "retire (%d): %s", rc, out);

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
    ck_assert_msg(file_mode(cfile) < 0, "down left the cluster file %s", cfile);
}
END_TEST

/* A process recorded on a host that does not answer (ssh fails: here an `ssh` of the test's
 * own, first on PATH, that exits 255 as ssh does when it cannot connect, so nothing leaves
 * the machine): `down` must not say the cluster is down, must keep the pid list, and `up`
 * must refuse to start over it. */
START_TEST(down_never_claims_an_unreachable_host)
{
    deploy d;
    snprintf(d.script, sizeof d.script, "%s/deploy/cluster", h_source_dir());
    snprintf(d.run, sizeof d.run, "%s/run-unreachable", h_tmpdir());
    char fakebin[700], fakessh[800], state[700], layout[700];
    snprintf(fakebin, sizeof fakebin, "%s/fakebin", h_tmpdir());
    ck_assert_int_eq(mkdir(fakebin, 0700), 0);
    snprintf(fakessh, sizeof fakessh, "%s/ssh", fakebin);
    FILE *f = fopen(fakessh, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\necho \"ssh: connect to host: unreachable (test)\" >&2\nexit 255\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(fakessh, 0700), 0);
    char mk[800];
    snprintf(mk, sizeof mk, "%s", d.run);
    ck_assert_int_eq(mkdir(mk, 0700), 0);
    snprintf(state, sizeof state, "%s/cluster.state", d.run);
    f = fopen(state, "w");
    ck_assert_ptr_nonnull(f);
    /* 192.0.2.1 (TEST-NET-1) is not this machine, so it is reached through ssh, which fails
     * at its ProxyCommand before sending anything. */
    fputs("baseapp-1 192.0.2.1 4242\n", f);
    fclose(f);
    snprintf(layout, sizeof layout, "%s/u.layout", h_tmpdir());
    f = fopen(layout, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "manager 127.0.0.1 %d\n", h_free_port(false));
    fclose(f);

    char ssh_env[1200], run_env[800], out[8192];
    const char *path = getenv("PATH");
    snprintf(ssh_env, sizeof ssh_env, "PATH=%s:%s", fakebin, path ? path : "/usr/bin:/bin");
    snprintf(run_env, sizeof run_env, "MC_RUN_DIR=%s", d.run);
    char *down[] = {"/usr/bin/env", ssh_env, run_env, "MC_DOWN_TIMEOUT=1", "bash", d.script,
                    "down", NULL};
    int rc = h_run(down, out, sizeof out, 60000);
    ck_assert_msg(rc == 1 && !strstr(out, "cluster: down") && strstr(out, "not down") &&
                      strstr(out, "192.0.2.1: the host does not answer"),
                  "down (%d): %s", rc, out);
    ck_assert_msg(h_file_contains(state, "baseapp-1 192.0.2.1 4242"), "the pid list was lost");
    char *up[] = {"/usr/bin/env", ssh_env, run_env, "bash", d.script, "up", layout, NULL};
    rc = h_run(up, out, sizeof out, 60000);
    ck_assert_msg(rc == 1 && strstr(out, "cannot tell whether the last cluster still runs"),
                  "up (%d): %s", rc, out);
}
END_TEST

/* Is some process's command line naming 127.0.0.1:port still there (bounded wait)? */
static bool port_user_gone(int port)
{
    char text[64];
    snprintf(text, sizeof text, "127.0.0.1:%d", port);
    for (int k = 0; k < 50; k++) {
        if (!on_a_command_line(text))
            return true;
        h_sleep_ms(100);
    }
    return false;
}

/* `up` killed right after it launched a process and before it recorded its pid (the test
 * hook MC_UP_DIE_AFTER_LAUNCH makes it SIGKILL itself at that moment): the process runs,
 * the pid list does not know it, and `down` must still stop it (it wrote its own pidfile on
 * its host before it exec'd) - and every other process - and only then say "down". */
START_TEST(down_stops_what_a_killed_up_started)
{
    deploy d;
    deploy_init(&d, "run-killed", "killed.layout");
    int manager_port = h_free_port(false), base_port = h_free_port(false);
    FILE *f = fopen(d.layout, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "set res %s/defs\nredis 127.0.0.1 %d\nmanager 127.0.0.1 %d\n", h_source_dir(),
            h_free_port(true), manager_port);
    fprintf(f, "baseapp 127.0.0.1 %d %d\ncellapp 127.0.0.1 %d\n", base_port,
            h_free_port(false), h_free_port(false));
    fclose(f);

    char out[16384];
    int rc = cluster_cmd_env(&d, "MC_UP_DIE_AFTER_LAUNCH=baseapp-1", "up", d.layout, out,
                             sizeof out);
    pid_t pids[8];
    int n = track_state(&d, pids, 8);
    /* For clean-up only if the test fails: the baseapp's own pidfile. */
    char pidfile[700];
    snprintf(pidfile, sizeof pidfile, "%s/pids/baseapp-1.pid", d.run);
    FILE *pf = fopen(pidfile, "r");
    int base_pid = 0;
    if (pf) {
        if (fscanf(pf, "%d", &base_pid) == 1 && base_pid > 0)
            h_track(base_pid);
        fclose(pf);
    }
    ck_assert_msg(rc == 128 + SIGKILL, "up was not killed (%d): %s", rc, out);
    ck_assert_msg(n == 2, "the pid list should hold redis and the manager only (%d)", n);
    char base_addr[64];
    snprintf(base_addr, sizeof base_addr, "127.0.0.1:%d", base_port);
    ck_assert_msg(on_a_command_line(base_addr), "the baseapp was not started: %s", out);

    rc = cluster_cmd(&d, "down", NULL, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "cluster: down"), "down (%d): %s", rc, out);
    ck_assert_msg(port_user_gone(base_port), "down left the unrecorded baseapp running: %s",
                  out);
    ck_assert_msg(port_user_gone(manager_port), "down left the manager running");
    for (int i = 0; i < n; i++) {
        bool gone = false;
        for (int k = 0; k < 50 && !gone; k++) {
            gone = kill(pids[i], 0) != 0;
            if (!gone)
                h_sleep_ms(100);
        }
        ck_assert_msg(gone, "pid %d still running after down", pids[i]);
    }
    ck_assert_msg(file_mode(pidfile) < 0, "down kept the pidfile %s", pidfile);
    /* A new up over the same run dir works, and its down stops it. */
    rc = cluster_cmd(&d, "up", d.layout, out, sizeof out);
    n = track_state(&d, pids, 8);
    ck_assert_msg(rc == 0 && n == 4, "up after the killed one (%d, %d): %s", rc, n, out);
    rc = cluster_cmd(&d, "down", NULL, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "cluster: down"), "second down (%d): %s", rc, out);
    ck_assert_msg(port_user_gone(base_port), "the second down left the baseapp running");
}
END_TEST

/* Is TCP port free on 127.0.0.1 (a Redis Cluster node's bus is its port + 10000)? */
static bool tcp_port_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return false;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

/* A port for a Redis Cluster node: free, and its bus port too. */
static int node_port(void)
{
    for (int i = 0; i < 100; i++) {
        int p = h_free_port(true);
        if (p > 0 && tcp_port_free(p + 10000))
            return p;
    }
    return -1;
}

/* A local three-master Redis Cluster (rediscluster lines): formed on the first up, with the
 * password (refused without it), its data kept across down and up (append-only files,
 * nodes.conf), named in the cluster file; down leaves nothing running. */
START_TEST(local_redis_cluster_survives_down_and_up)
{
    deploy d;
    deploy_init(&d, "run-rc", "rc.layout");
    int ports[3];
    FILE *f = fopen(d.layout, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "set res %s/defs\n", h_source_dir());
    for (int i = 0; i < 3; i++) {
        ports[i] = node_port();
        ck_assert_int_gt(ports[i], 0);
        fprintf(f, "rediscluster 127.0.0.1 %d\n", ports[i]);
    }
    fprintf(f, "manager 127.0.0.1 %d\ncellapp 127.0.0.1 %d\n", h_free_port(false),
            h_free_port(false));
    fclose(f);

    char out[16384], pw[200], pwfile[700], auth_env[300], p0[16], p2[16], cfile[700];
    for (int round = 0; round < 2; round++) {
        int rc = cluster_cmd(&d, "up", d.layout, out, sizeof out);
        pid_t pids[8];
        int n = track_state(&d, pids, 8);
        ck_assert_msg(rc == 0 && n == 5, "up %d (%d, %d processes):\n%s", round, rc, n, out);
        snprintf(pwfile, sizeof pwfile, "%s/redis.password", d.run);
        read_file(pwfile, pw, sizeof pw);
        snprintf(auth_env, sizeof auth_env, "REDISCLI_AUTH=%s", pw);
        snprintf(p0, sizeof p0, "%d", ports[0]);
        snprintf(p2, sizeof p2, "%d", ports[2]);
        char *info[] = {"/usr/bin/env", auth_env, "redis-cli", "--no-auth-warning", "-p", p0,
                        "cluster", "info", NULL};
        rc = h_run(info, out, sizeof out, 10000);
        ck_assert_msg(rc == 0 && strstr(out, "cluster_state:ok") && strstr(out, "cluster_size:3"),
                      "%s", out);
        char *noauth[] = {"/usr/bin/env", "-u", "REDISCLI_AUTH", "redis-cli", "-p", p2, "ping",
                          NULL};
        h_run(noauth, out, sizeof out, 10000);
        ck_assert_msg(strstr(out, "NOAUTH"), "a node answered without a password: %s", out);
        snprintf(cfile, sizeof cfile, "%s/cluster.conf", d.run);
        char want[100];
        snprintf(want, sizeof want, "redisCluster 127.0.0.1:%d,127.0.0.1:%d", ports[0], ports[1]);
        ck_assert_msg(h_file_contains(cfile, want), "no '%s' in %s", want, cfile);
        if (round == 0) {
            char *set[] = {"/usr/bin/env", auth_env, "redis-cli", "--no-auth-warning", "-c", "-p",
                           p0, "set", "{probe}key", "kept", NULL};
            rc = h_run(set, out, sizeof out, 10000);
            ck_assert_msg(rc == 0 && strstr(out, "OK"), "%s", out);
        } else {
            char *get[] = {"/usr/bin/env", auth_env, "redis-cli", "--no-auth-warning", "-c", "-p",
                           p2, "get", "{probe}key", NULL};
            rc = h_run(get, out, sizeof out, 10000);
            ck_assert_msg(rc == 0 && strstr(out, "kept"), "lost across down/up: %s", out);
        }
        rc = cluster_cmd(&d, "down", NULL, out, sizeof out);
        ck_assert_msg(rc == 0 && strstr(out, "cluster: down"), "down (%d): %s", rc, out);
        for (int i = 0; i < n; i++) {
            bool gone = false;
            for (int k = 0; k < 50 && !gone; k++) {
                gone = kill(pids[i], 0) != 0;
                if (!gone)
                    h_sleep_ms(100);
            }
            ck_assert_msg(gone, "pid %d still running after down", pids[i]);
        }
    }
}
END_TEST

/* An external Redis named in the layout (set redis, redisUser, redisPasswordFile) is not
 * started: the cluster file names it, and its password file is copied (0600) into the run
 * dir for the processes. */
START_TEST(external_redis_is_named_not_started)
{
    deploy d;
    deploy_init(&d, "run-ext", "ext.layout");
    char secret[700];
    snprintf(secret, sizeof secret, "%s/external.secret", h_tmpdir());
    FILE *f = fopen(secret, "w");
    ck_assert_ptr_nonnull(f);
    fputs("s3cret-of-the-studio\n", f);
    fclose(f);
    int rport = h_free_port(true);
    f = fopen(d.layout, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "set res %s/defs\nset redis 127.0.0.1:%d\nset redisUser game\n", h_source_dir(),
            rport);
    fprintf(f, "set redisPasswordFile %s\nmanager 127.0.0.1 %d\ncellapp 127.0.0.1 %d\n", secret,
            h_free_port(false), h_free_port(false));
    fclose(f);
    char out[16384];
    int rc = cluster_cmd(&d, "up", d.layout, out, sizeof out);
    pid_t pids[8];
    int n = track_state(&d, pids, 8);
    ck_assert_msg(rc == 0 && n == 2, "up (%d, %d processes): %s", rc, n, out);
    ck_assert_msg(!strstr(out, "started redis"), "started a Redis: %s", out);
    char cfile[700], want[100], pwcopy[700], pw[100];
    snprintf(cfile, sizeof cfile, "%s/cluster.conf", d.run);
    snprintf(want, sizeof want, "redis 127.0.0.1:%d", rport);
    ck_assert_msg(h_file_contains(cfile, want), "no '%s' in %s", want, cfile);
    ck_assert(h_file_contains(cfile, "redisUser game"));
    snprintf(pwcopy, sizeof pwcopy, "%s/redis.password", d.run);
    ck_assert_int_eq(file_mode(pwcopy), 0600);
    read_file(pwcopy, pw, sizeof pw);
    ck_assert_str_eq(pw, "s3cret-of-the-studio");
    rc = cluster_cmd(&d, "down", NULL, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "cluster: down"), "down (%d): %s", rc, out);
}
END_TEST

/* --- the reviver ------------------------------------------------------------------------ */

/* The pid a slot's pidfile names (0 when there is none). */
static pid_t pidfile_pid(deploy *d, const char *slot)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/pids/%s.pid", d->run, slot);
    FILE *f = fopen(path, "r");
    int pid = 0;
    if (f) {
        if (fscanf(f, "%d", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    return pid > 0 ? pid : 0;
}

/* Track every pid the run dir's pidfiles name (a revived process is in no pid list). */
static void track_pidfiles(deploy *d)
{
    char dir[700];
    snprintf(dir, sizeof dir, "%s/pids", d->run);
    DIR *dp = opendir(dir);
    struct dirent *de;
    while (dp && (de = readdir(dp)) != NULL) {
        char *dot = strstr(de->d_name, ".pid");
        if (!dot || dot[4] != '\0')
            continue;
        char slot[256];
        snprintf(slot, sizeof slot, "%.*s", (int)(dot - de->d_name), de->d_name);
        pid_t p = pidfile_pid(d, slot);
        if (p > 0)
            h_track(p);
    }
    if (dp)
        closedir(dp);
}

/* A failing test still brings its cluster down (gracefully, through the script: the
 * reviver first), before the harness kills what it tracked. */
static deploy *reviver_cluster;
static void down_at_exit(void)
{
    if (!reviver_cluster)
        return;
    char out[8192];
    track_pidfiles(reviver_cluster);
    cluster_cmd(reviver_cluster, "down", NULL, out, sizeof out);
    reviver_cluster = NULL;
}

/* Wait (bounded) until the slot's pidfile names a live process other than `old`. */
static pid_t wait_revived(deploy *d, const char *slot, pid_t old, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 100) {
        pid_t p = pidfile_pid(d, slot);
        if (p > 0 && p != old && kill(p, 0) == 0) {
            h_track(p);
            return p;
        }
        h_sleep_ms(100);
    }
    return 0;
}

/* Wait (bounded) until the manager counts `want` live processes. */
static bool wait_alive_count(const char *mgr, int want, int timeout_ms)
{
    char v[64], want_s[16];
    snprintf(want_s, sizeof want_s, "%d", want);
    for (int waited = 0; waited < timeout_ms; waited += 300) {
        if (watch_get(mgr, "manager", "counts/alive", v, sizeof v) && strcmp(v, want_s) == 0)
            return true;
        h_sleep_ms(300);
    }
    return false;
}

/* Wait (bounded) until `watcher call manager globals/lookup NAME` finds it; its answer in
 * out. */
static bool wait_global(const char *mgr, const char *name, char *out, size_t outlen,
                        int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 300) {
        if (h_watcher(out, outlen, mgr, "call", "manager", "globals/lookup", name, NULL) == 0)
            return true;
        h_sleep_ms(300);
    }
    return false;
}

/* One login through the cluster's loginapp with mc-client (found through the cluster file),
 * retried (bounded) while it fails; the last output in out. */
static bool login_works(deploy *d, const char *user, const char *pwfile, const char *script,
                        char *out, size_t outlen, int timeout_ms)
{
    char cbin[512];
    h_bin("mc-client", cbin, sizeof cbin);
    char *cmd[] = {cbin, "--user", (char *)user, "--password-file", (char *)pwfile, "--script",
                   (char *)script, "--no-moves", "--timeout", "10", NULL};
    for (int waited = 0; waited < timeout_ms; waited += 1000) {
        if (run_in_env(d, cmd, out, outlen) == 0 && strstr(out, "logged in"))
            return true;
        h_sleep_ms(1000);
    }
    return false;
}

START_TEST(reviver_restarts_the_manager_and_a_loginapp)
{
    static deploy d;
    deploy_init(&d, "run-revive", "revive.layout");
    int redis_port = h_free_port(true), manager_port = h_free_port(false);
    FILE *f = fopen(d.layout, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "set res %s/defs\nredis 127.0.0.1 %d\nmanager 127.0.0.1 %d\n", h_source_dir(),
            redis_port, manager_port);
    fprintf(f, "loginapp 127.0.0.1 %d %d\n", h_free_port(false), h_free_port(false));
    fprintf(f, "baseapp 127.0.0.1 %d %d\ncellapp 127.0.0.1 %d\n", h_free_port(false),
            h_free_port(false), h_free_port(false));
    fclose(f);

    char out[32768];
    int rc = cluster_cmd(&d, "up", d.layout, out, sizeof out);
    pid_t pids[8];
    int n = track_state(&d, pids, 8);
    track_pidfiles(&d);
    reviver_cluster = &d;
    atexit(down_at_exit); /* after the harness's: runs before it */
    ck_assert_msg(rc == 0 && n == 5, "up (%d, %d processes):\n%s", rc, n, out);
    ck_assert_msg(strstr(out, "started a reviver on 127.0.0.1 for manager-1 loginapp-1"), "%s",
                  out);
    use_cluster_secret(&d);
    char mgr[64], rlog[700];
    snprintf(mgr, sizeof mgr, "127.0.0.1:%d", manager_port);
    snprintf(rlog, sizeof rlog, "%s/logs/reviver-127.0.0.1.log", d.run);
    pid_t reviver = pidfile_pid(&d, "reviver-127.0.0.1");
    ck_assert_msg(reviver > 0 && kill(reviver, 0) == 0, "no reviver running");
    rc = cluster_cmd(&d, "status", NULL, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "reviver on 127.0.0.1: running"), "status: %s", out);

    /* A global name (a Space registers its name) and an account to log in with. */
    rc = h_watcher(out, sizeof out, mgr, "call", "baseapp01", "command/createBase", "Space",
                   "{\"spaceName\":\"lobby\"}", NULL);
    ck_assert_msg(rc == 0, "createBase (%d): %s", rc, out);
    ck_assert_msg(wait_global(mgr, "lobby", out, sizeof out, 15000), "lobby not registered");
    ck_assert_msg(strstr(out, "owner=baseapp01"), "%s", out);
    char abin[512], acmd[2400], pwfile[700], script[700];
    snprintf(pwfile, sizeof pwfile, "%s/dana.password", h_tmpdir());
    f = fopen(pwfile, "w");
    ck_assert_ptr_nonnull(f);
    fputs("dana-secret\n", f);
    fclose(f);
    snprintf(acmd, sizeof acmd,
             "'%s' --redis=127.0.0.1:%d --redisPasswordFile='%s/redis.password' "
             "--pwhashCost=dev create dana <'%s'",
             h_bin("mc-account", abin, sizeof abin), redis_port, d.run, pwfile);
    char *account[] = {"/bin/sh", "-c", acmd, NULL};
    rc = h_run(account, out, sizeof out, 30000);
    ck_assert_msg(rc == 0, "mc-account (%d): %s", rc, out);
    snprintf(script, sizeof script, "%s/dana.script", h_tmpdir());
    f = fopen(script, "w");
    ck_assert_ptr_nonnull(f);
    fputs("expect onAvatarList\nquit\n", f);
    fclose(f);
    ck_assert_msg(login_works(&d, "dana", pwfile, script, out, sizeof out, 30000),
                  "no login before the kills: %s", out);

    /* kill -9 the manager: the reviver starts it again (same options, the state file), every
     * process registers with it, and the Space registers its name again. */
    pid_t old_mgr = pidfile_pid(&d, "manager-1");
    ck_assert_int_gt(old_mgr, 0);
    ck_assert_int_eq(kill(old_mgr, SIGKILL), 0);
    pid_t new_mgr = wait_revived(&d, "manager-1", old_mgr, 30000);
    ck_assert_msg(new_mgr > 0, "the manager was not restarted (see %s)", rlog);
    ck_assert_msg(wait_alive_count(mgr, 3, 60000), "not every process registered again");
    ck_assert_msg(h_file_contains(rlog, "manager-1 restarted"), "no restart in %s", rlog);
    char mlog[700];
    snprintf(mlog, sizeof mlog, "%s/logs/manager-1.log", d.run);
    ck_assert_msg(h_file_contains(mlog, "continuing from id"), "restarted without its state file");
    ck_assert_msg(wait_global(mgr, "lobby", out, sizeof out, 30000),
                  "the global name did not come back after the manager's restart");
    ck_assert_msg(strstr(out, "owner=baseapp"), "%s", out);

    /* kill -9 the loginapp: restarted, registered (a new name), and a login works. */
    pid_t old_login = pidfile_pid(&d, "loginapp-1");
    ck_assert_int_gt(old_login, 0);
    ck_assert_int_eq(kill(old_login, SIGKILL), 0);
    pid_t new_login = wait_revived(&d, "loginapp-1", old_login, 30000);
    ck_assert_msg(new_login > 0, "the loginapp was not restarted (see %s)", rlog);
    char lpid[32];
    snprintf(lpid, sizeof lpid, "%d", (int)new_login);
    ck_assert_msg(h_wait_watch(mgr, "loginapps", "pid", lpid, 30000),
                  "the restarted loginapp did not register");
    ck_assert_msg(login_works(&d, "dana", pwfile, script, out, sizeof out, 30000),
                  "no login after the loginapp's restart: %s", out);
    ck_assert_msg(h_file_contains(rlog, "loginapp-1 restarted"), "no restart in %s", rlog);
    rc = cluster_cmd(&d, "status", NULL, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "loginapp02") && strstr(out, "alive"), "%s", out);

    /* The reviver killed too, then the loginapp: nothing restarts it, status says so, and
     * down still stops everything. */
    ck_assert_int_eq(kill(reviver, SIGKILL), 0);
    for (int k = 0; k < 50 && kill(reviver, 0) == 0; k++)
        h_sleep_ms(100);
    rc = cluster_cmd(&d, "status", NULL, out, sizeof out);
    ck_assert_msg(strstr(out, "reviver on 127.0.0.1: not running"), "status: %s", out);
    track_pidfiles(&d);
    rc = cluster_cmd(&d, "down", NULL, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "cluster: down"), "down (%d): %s", rc, out);
    reviver_cluster = NULL;
    pid_t all[] = {pids[0], pids[1], pids[2], pids[3], pids[4], new_mgr, new_login, reviver};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        bool gone = false;
        for (int k = 0; k < 50 && !gone; k++) {
            gone = kill(all[i], 0) != 0;
            if (!gone)
                h_sleep_ms(100);
        }
        ck_assert_msg(gone, "pid %d still running after down", all[i]);
    }
    char mport[32];
    snprintf(mport, sizeof mport, "127.0.0.1:%d", manager_port);
    ck_assert_msg(port_user_gone(manager_port), "something still runs with %s", mport);
}
END_TEST

/* With the reviver running, down stops it first: a loginapp it stops is not restarted. */
START_TEST(down_stops_the_reviver_first)
{
    static deploy d;
    deploy_init(&d, "run-revive-down", "revive-down.layout");
    int manager_port = h_free_port(false), login_port = h_free_port(false);
    FILE *f = fopen(d.layout, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "set res %s/defs\nmanager 127.0.0.1 %d\nloginapp 127.0.0.1 %d %d\n",
            h_source_dir(), manager_port, login_port, h_free_port(false));
    fclose(f);
    char out[16384];
    int rc = cluster_cmd(&d, "up", d.layout, out, sizeof out);
    pid_t pids[4];
    int n = track_state(&d, pids, 4);
    track_pidfiles(&d);
    reviver_cluster = &d;
    atexit(down_at_exit);
    ck_assert_msg(rc == 0 && n == 2, "up (%d, %d): %s", rc, n, out);
    pid_t reviver = pidfile_pid(&d, "reviver-127.0.0.1");
    ck_assert_int_gt(reviver, 0);
    rc = cluster_cmd(&d, "down", NULL, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "cluster: down"), "down (%d): %s", rc, out);
    reviver_cluster = NULL;
    ck_assert_msg(port_user_gone(login_port), "a loginapp still runs after down");
    ck_assert_msg(port_user_gone(manager_port), "a manager still runs after down");
    /* (not our child: reaped by whoever adopted it, soon) */
    for (int k = 0; k < 50 && kill(reviver, 0) == 0; k++)
        h_sleep_ms(100);
    ck_assert_msg(kill(reviver, 0) != 0, "the reviver still runs after down");
    char rlog[700];
    snprintf(rlog, sizeof rlog, "%s/logs/reviver-127.0.0.1.log", d.run);
    ck_assert_msg(h_file_contains(rlog, "stopping"), "the reviver did not stop by itself");
    ck_assert_msg(!h_file_contains(rlog, "restarted"), "the reviver restarted what down stopped");
}
END_TEST

/* The reviver on its own: --help, one-line errors, and a slot that dies at once each time:
 * restarted after a growing back-off, at most --maxPerMinute times, then it waits. */
START_TEST(reviver_backs_off_and_bounds_its_restarts)
{
    char script[700], run[700], path[800], out[8192];
    snprintf(script, sizeof script, "%s/deploy/reviver", h_source_dir());
    snprintf(run, sizeof run, "%s/run-crashloop", h_tmpdir());
    char *help[] = {"/bin/bash", script, "--help", NULL};
    ck_assert_int_eq(h_run(help, out, sizeof out, 10000), 0);
    ck_assert_msg(strstr(out, "--maxPerMinute") && strstr(out, "--backoffMaxS"), "%s", out);
    char *bad[] = {"/bin/bash", script, "--pollMs", "5", run, "127.0.0.1", "loginapp-1", NULL};
    ck_assert_int_eq(h_run(bad, out, sizeof out, 10000), 1);
    ck_assert_msg(strstr(out, "reviver: --pollMs needs a number") &&
                      strchr(out, '\n') == out + strlen(out) - 1,
                  "%s", out);
    char *nodir[] = {"/bin/bash", script, run, "127.0.0.1", "loginapp-1", NULL};
    ck_assert_int_eq(h_run(nodir, out, sizeof out, 10000), 1);
    ck_assert_msg(strstr(out, "reviver: no run dir"), "%s", out);
    /* A loginapp slot whose process writes its pidfile and exits after a moment. */
    ck_assert_int_eq(mkdir(run, 0700), 0);
    snprintf(path, sizeof path, "%s/launch", run);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/pids", run);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/logs", run);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/launch/loginapp-1.sh", run);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "read -r st </proc/self/stat && st=${st##*) } && set -- $st && "
               "echo \"$$ ${20}\" >'%s/pids/loginapp-1.pid' && exec bash -c 'sleep 0.3; true' "
               "loginapp\n",
            run);
    fclose(f);
    char rlog[800];
    snprintf(rlog, sizeof rlog, "%s/logs/reviver-127.0.0.1.log", run);
    char *reviver[] = {"/bin/bash", script, "--pollMs", "100", "--maxPerMinute", "3",
                       "--backoffMaxS", "2", run, "127.0.0.1", "loginapp-1", NULL};
    pid_t p = h_spawn(reviver, rlog);
    ck_assert_int_gt(p, 0);
    bool waiting = false;
    for (int k = 0; k < 300 && !waiting; k++) { /* 1 + 2 + 2 s of back-off at least */
        waiting = h_file_contains(rlog, "restarted 3 times in the last minute");
        if (!waiting)
            h_sleep_ms(100);
    }
    /* Stopped (SIGTERM) whatever the outcome; it says so and exits 0. */
    h_kill(p, SIGTERM);
    ck_assert_int_eq(h_wait_exit(p, 10000), 0);
    ck_assert_msg(waiting, "no bound on the restarts (see %s)", rlog);
    ck_assert(h_file_contains(rlog, "loginapp-1 restarted: pid"));
    ck_assert(h_file_contains(rlog, "restarting it in 1 s"));
    ck_assert(h_file_contains(rlog, "restarting it in 2 s"));
    ck_assert(!h_file_contains(rlog, "restarting it in 4 s")); /* --backoffMaxS */
    ck_assert(!h_file_contains(rlog, "restart 4 in the last minute"));
    ck_assert(h_file_contains(rlog, "stopping"));
    /* (the last restarted process exits by itself within 0.3 s) */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("deploy_cluster");
    TCase *tc = tcase_create("deploy");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, up_status_down_leaves_nothing);
    tcase_add_test(tc, layout_errors_name_file_and_line);
    tcase_add_test(tc, down_never_claims_an_unreachable_host);
    tcase_add_test(tc, down_stops_what_a_killed_up_started);
    tcase_add_test(tc, local_redis_cluster_survives_down_and_up);
    tcase_add_test(tc, external_redis_is_named_not_started);
    tcase_add_test(tc, reviver_restarts_the_manager_and_a_loginapp);
    tcase_add_test(tc, down_stops_the_reviver_first);
    tcase_add_test(tc, reviver_backs_off_and_bounds_its_restarts);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return h_run_suite(suite()); }
