/* entity-bench's cluster: a manager, a baseapp and a cellapp on loopback with the bench
 * game, driven through the watcher tool (command/createBase, command/call).
 *
 * Every process is started with PR_SET_PDEATHSIG(SIGKILL) and remembered; eb_cluster_stop,
 * an atexit handler and SIGINT/SIGTERM/SIGHUP handlers kill (SIGKILL) and reap them, so
 * nothing is left behind on any exit path. Every wait is bounded.
 */
#include "entity_bench.h"
#include "mercury/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"

#define EB_MAX_PIDS 8
#define EB_POLL_MS 100
#define EB_WATCHER_TIMEOUT_MS 5000

static volatile sig_atomic_t g_npids;
static volatile pid_t g_pids[EB_MAX_PIDS];
static bool g_handlers;

static void kill_all(void)
{
    for (int i = 0; i < g_npids; i++)
        if (g_pids[i] > 0) {
            kill(g_pids[i], SIGKILL);
            waitpid(g_pids[i], NULL, 0);
            g_pids[i] = 0;
        }
}

static void on_signal(int sig)
{
    for (int i = 0; i < g_npids; i++)
        if (g_pids[i] > 0)
            kill(g_pids[i], SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void)
{
    if (g_handlers)
        return;
    g_handlers = true;
    atexit(kill_all);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

static void track(pid_t pid)
{
    for (int i = 0; i < g_npids; i++)
        if (g_pids[i] == 0) {
            g_pids[i] = pid;
            return;
        }
    if (g_npids < EB_MAX_PIDS) {
        g_pids[g_npids] = pid;
        g_npids = g_npids + 1;
    }
}

static void untrack(pid_t pid)
{
    for (int i = 0; i < g_npids; i++)
        if (g_pids[i] == pid)
            g_pids[i] = 0;
}

int eb_self_dir(char *out, size_t outlen)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    snprintf(out, outlen, "%s", dirname(exe));
    return 0;
}

int eb_free_port(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

double eb_proc_cpu_s(pid_t pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* Fields after the command name (which may hold spaces): state is field 3, utime 14,
     * stime 15. */
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    unsigned long long ut = 0, st = 0;
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* fork + exec argv with stdout/stderr to `log` (or a pipe when out_fd is given). */
static pid_t spawn(char *const argv[], const char *log, int *out_fd)
{
    int p[2] = {-1, -1};
    if (out_fd && pipe2(p, O_CLOEXEC) != 0)
        return -1;
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        if (out_fd) {
            close(p[0]);
            close(p[1]);
        }
        return -1;
    }
    if (pid == 0) {
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        int fd = out_fd ? p[1] : open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        int nul = open("/dev/null", O_RDONLY);
        if (fd < 0 || nul < 0)
            _exit(127);
        dup2(nul, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    track(pid);
    if (out_fd) {
        close(p[1]);
        *out_fd = p[0];
    }
    return pid;
}

/* Wait for pid with a bound; SIGKILL it after. Returns its exit status or -1. */
static int reap(pid_t pid, int timeout_ms)
{
    mc_time_us until = mc_clock_now_us() + (mc_time_us)timeout_ms * MC_US_PER_MS;
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            untrack(pid);
            return -1;
        }
        if (mc_clock_now_us() >= until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            untrack(pid);
            return -1;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    untrack(pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Run the watcher tool against the cluster's manager; its output (stdout and stderr) in
 * out. Returns its exit status, or -1 (could not run, or it overran). */
static int watcher(eb_cluster *c, char *out, size_t outlen, ...)
{
    char bin[600], timeout[16];
    snprintf(bin, sizeof bin, "%s/watcher", c->bindir);
    snprintf(timeout, sizeof timeout, "%d", EB_WATCHER_TIMEOUT_MS);
    char *argv[16] = {bin, "--manager", c->manager, "--timeout", timeout};
    int n = 5;
    va_list ap;
    va_start(ap, outlen);
    const char *a;
    while (n < 15 && (a = va_arg(ap, const char *)) != NULL)
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    int fd = -1;
    pid_t pid = spawn(argv, NULL, &fd);
    if (pid < 0)
        return -1;
    size_t used = 0;
    out[0] = '\0';
    mc_time_us until = mc_clock_now_us() + (EB_WATCHER_TIMEOUT_MS + 2000) * MC_US_PER_MS;
    for (;;) {
        mc_time_us now = mc_clock_now_us();
        if (now >= until)
            break;
        struct pollfd pf = {fd, POLLIN, 0};
        int k = poll(&pf, 1, (int)((until - now) / MC_US_PER_MS) + 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        char tmp[1024];
        ssize_t r = read(fd, tmp, sizeof tmp);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        size_t take = (size_t)r < outlen - 1 - used ? (size_t)r : outlen - 1 - used;
        memcpy(out + used, tmp, take);
        used += take;
        out[used] = '\0';
    }
    close(fd);
    return reap(pid, 1000);
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
        s[--n] = '\0';
}

static bool alive(pid_t pid) { return pid > 0 && waitpid(pid, NULL, WNOHANG) == 0; }

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static pid_t start_role(eb_cluster *c, const char *role, bool with_manager, bool external,
                        const char *game)
{
    char bin[600], internal[96], ext[64], mopt[96], ropt[600], gopt[700], log[400];
    snprintf(bin, sizeof bin, "%s/%s", c->bindir, role);
    snprintf(log, sizeof log, "%s/%s.log", c->dir, role);
    snprintf(ropt, sizeof ropt, "--res=%s", MC_BENCH_RES);
    snprintf(mopt, sizeof mopt, "--manager=%s", c->manager);
    snprintf(gopt, sizeof gopt, "--game=%s", game);
    snprintf(ext, sizeof ext, "--external=127.0.0.1:%d", eb_free_port());
    if (with_manager)
        snprintf(internal, sizeof internal, "--internal=127.0.0.1:%d", eb_free_port());
    else
        snprintf(internal, sizeof internal, "--internal=%s", c->manager);
    char *argv[10] = {bin, internal, ropt, "--logLevel=warning"};
    int n = 4;
    if (with_manager) {
        argv[n++] = mopt;
        argv[n++] = gopt;
    }
    if (external)
        argv[n++] = ext;
    argv[n] = NULL;
    return spawn(argv, log, NULL);
}

static int fail(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The JSON array a `watcher call` printed, parsed as up to n numbers. */
static int parse_array(const char *out, double *v, int n)
{
    const char *p = strchr(out, '[');
    if (!p)
        return -1;
    p++;
    int k = 0;
    while (k < n && *p && *p != ']') {
        char *end;
        v[k] = strtod(p, &end);
        if (end == p)
            return -1;
        k++;
        p = end;
        if (*p == ',')
            p++;
    }
    return k;
}

enum { R_STATE, R_HASCELL, R_DONE, R_CELLSEEN, R_ORDER, R_FAILURES, R_LASTERR, R_ELAPSED,
       R_P50, R_P99, R_MAX, R_N };

static int report(eb_cluster *c, double v[R_N], char *why, size_t whylen)
{
    char out[2048], id[16];
    snprintf(id, sizeof id, "%d", (int)c->entity);
    int rc = watcher(c, out, sizeof out, "call", "baseapps", "command/call", id, "report",
                     (const char *)NULL);
    trim(out);
    if (rc != 0)
        return fail(why, whylen, "report failed (watcher exit %d): %s", rc, out);
    if (parse_array(out, v, R_N) != R_N)
        return fail(why, whylen, "report: unexpected answer '%s'", out);
    return 0;
}

int eb_cluster_start(eb_cluster *c, char *why, size_t whylen)
{
    install_handlers();
    memset(c, 0, sizeof *c);
    if (eb_self_dir(c->bindir, sizeof c->bindir) != 0)
        return fail(why, whylen, "cannot find this executable's directory");
    char game[700];
    snprintf(game, sizeof game, "%s/../lib/mc_game_bench.so", c->bindir);
    const char *need[] = {"manager", "baseapp", "cellapp", "watcher"};
    for (size_t i = 0; i < 4; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/%s", c->bindir, need[i]);
        if (access(p, X_OK) != 0)
            return fail(why, whylen, "%s not found (build the %s target)", p, need[i]);
    }
    if (access(game, R_OK) != 0)
        return fail(why, whylen, "%s not found (build the mc_game_bench target)", game);
    char res[600];
    snprintf(res, sizeof res, "%s/entities.xml", MC_BENCH_RES);
    if (access(res, R_OK) != 0)
        return fail(why, whylen, "%s not found (the bench game's defs)", res);
    snprintf(c->dir, sizeof c->dir, "/tmp/entity-bench-XXXXXX");
    if (!mkdtemp(c->dir))
        return fail(why, whylen, "mkdtemp: %s", strerror(errno));
    /* a private cluster: its own secret, which every process and tool started from here
     * finds through MC_SECRET_FILE */
    char secret[700], serr[256];
    snprintf(secret, sizeof secret, "%s/secret", c->dir);
    if (mc_auth_make_secret_file(secret, serr, sizeof serr) != 0 ||
        setenv("MC_SECRET_FILE", secret, 1) != 0)
        return fail(why, whylen, "cluster secret: %s", serr);
    int port = eb_free_port();
    if (!port)
        return fail(why, whylen, "no free port on 127.0.0.1");
    snprintf(c->manager, sizeof c->manager, "127.0.0.1:%d", port);

    c->mgr = start_role(c, "manager", false, false, game);
    if (c->mgr < 0)
        return fail(why, whylen, "cannot start the manager");
    char out[4096];
    mc_time_us until = mc_clock_now_us() + 15 * MC_US_PER_S;
    while (watcher(c, out, sizeof out, "get", "manager", "role", (const char *)NULL) != 0) {
        if (!alive(c->mgr) || mc_clock_now_us() >= until)
            return fail(why, whylen, "the manager did not start (log %s/manager.log)", c->dir);
        sleep_ms(50);
    }
    c->base = start_role(c, "baseapp", true, true, game);
    c->cell = start_role(c, "cellapp", true, false, game);
    if (c->base < 0 || c->cell < 0)
        return fail(why, whylen, "cannot start the baseapp or the cellapp");
    until = mc_clock_now_us() + 15 * MC_US_PER_S;
    for (;;) {
        if (watcher(c, out, sizeof out, "get", "manager", "counts/alive", (const char *)NULL) ==
                0 &&
            strstr(out, "counts/alive  2"))
            break;
        if (!alive(c->base) || !alive(c->cell))
            return fail(why, whylen, "the %s exited at start-up (log in %s)",
                        alive(c->base) ? "cellapp" : "baseapp", c->dir);
        if (mc_clock_now_us() >= until)
            return fail(why, whylen, "baseapp and cellapp did not register in 15 s (logs in %s)",
                        c->dir);
        sleep_ms(50);
    }
    int rc = watcher(c, out, sizeof out, "call", "baseapps", "command/createBase", "Bench",
                     (const char *)NULL);
    trim(out);
    const char *v = strstr(out, "command/createBase");
    if (rc != 0 || !v || sscanf(v + strlen("command/createBase"), "%d", &c->entity) != 1 ||
        c->entity <= 0)
        return fail(why, whylen, "cannot create the Bench base: %s", out);
    char id[16];
    snprintf(id, sizeof id, "%d", (int)c->entity);
    rc = watcher(c, out, sizeof out, "call", "baseapps", "command/call", id, "makeCell",
                 (const char *)NULL);
    trim(out);
    if (rc != 0)
        return fail(why, whylen, "makeCell failed: %s", out);
    until = mc_clock_now_us() + 10 * MC_US_PER_S;
    for (;;) {
        double r[R_N];
        if (report(c, r, why, whylen) != 0)
            return -1;
        if (r[R_HASCELL] == 1)
            break;
        if (r[R_LASTERR] != 0 || mc_clock_now_us() >= until)
            return fail(why, whylen, "the Bench base got no cell (error %d; logs in %s)",
                        (int)r[R_LASTERR], c->dir);
        sleep_ms(20);
    }
    return 0;
}

int eb_cluster_stop(eb_cluster *c)
{
    /* Graceful first (SIGTERM: each deregisters and exits, so sanitizer builds check for
     * leaks), bounded: reap() SIGKILLs after 3 s. The manager last. */
    int bad = 0;
    if (c->base > 0)
        kill(c->base, SIGTERM);
    if (c->cell > 0)
        kill(c->cell, SIGTERM);
    if (c->base > 0 && reap(c->base, 3000) != 0)
        bad = -1;
    if (c->cell > 0 && reap(c->cell, 3000) != 0)
        bad = -1;
    if (c->mgr > 0) {
        kill(c->mgr, SIGTERM);
        if (reap(c->mgr, 3000) != 0)
            bad = -1;
    }
    c->base = c->cell = c->mgr = 0;
    return bad;
}

int eb_cluster_phase(eb_cluster *c, const eb_options *o, int mode, uint32_t count,
                     eb_result *r)
{
    memset(r, 0, sizeof *r);
    char out[2048], id[16], args[96];
    snprintf(id, sizeof id, "%d", (int)c->entity);
    snprintf(args, sizeof args, "[%d,%u,%u,%u]", mode, count, mode == 1 ? o->batch : 1u,
             mode == 1 ? o->window : 1u);
    double cpu0[2] = {eb_proc_cpu_s(c->base), eb_proc_cpu_s(c->cell)};
    int rc = watcher(c, out, sizeof out, "call", "baseapps", "command/call", id, "run", args,
                     (const char *)NULL);
    trim(out);
    double v[R_N];
    if (rc != 0 || parse_array(out, v, 1) != 1 || v[0] != 0) {
        snprintf(r->error, sizeof r->error, "run %s failed: %.80s", args, out);
        return -1;
    }
    mc_time_us until = mc_clock_now_us() + (mc_time_us)o->time_limit_s * MC_US_PER_S;
    for (;;) {
        sleep_ms(EB_POLL_MS);
        if (report(c, v, r->error, sizeof r->error) != 0)
            return -1;
        if (v[R_STATE] != 1)
            break;
        if (mc_clock_now_us() >= until) {
            snprintf(r->error, sizeof r->error,
                     "did not finish in %u s (%.0f of %u answered)", o->time_limit_s,
                     v[R_DONE], count);
            return -1;
        }
    }
    double cpu1[2] = {eb_proc_cpu_s(c->base), eb_proc_cpu_s(c->cell)};
    if (v[R_STATE] != 2) {
        snprintf(r->error, sizeof r->error, "failed: status %d after %.0f answers (logs in %.100s)",
                 (int)v[R_LASTERR], v[R_DONE], c->dir);
        return -1;
    }
    if (mode == 1 && (v[R_CELLSEEN] != count || v[R_ORDER] != 0)) {
        snprintf(r->error, sizeof r->error, "the cell saw %.0f of %u calls, %.0f out of order",
                 v[R_CELLSEEN], count, v[R_ORDER]);
        return -1;
    }
    if (mode == 2 && v[R_DONE] != count) {
        snprintf(r->error, sizeof r->error, "%.0f of %u round trips answered", v[R_DONE], count);
        return -1;
    }
    r->ran = true;
    r->count = count;
    r->elapsed_s = v[R_ELAPSED] / 1e6;
    for (int i = 0; i < 2; i++)
        r->cpu_s[i] = cpu0[i] >= 0 && cpu1[i] >= 0 ? cpu1[i] - cpu0[i] : -1;
    if (mode == 2) {
        r->has_rtt = true;
        r->p50_us = v[R_P50];
        r->p99_us = v[R_P99];
        r->max_us = v[R_MAX];
    }
    return 0;
}
