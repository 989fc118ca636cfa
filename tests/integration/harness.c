/* Integration-test harness: spawning and reaping real processes, running the tools. */
#include "check_main.h"
#include "harness.h"

#include <check.h>

#include <errno.h>
#include <fcntl.h>
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

/* The pids this test process must kill before it exits (test-process-wide by nature). */
#define MAX_TRACKED 256
static pid_t tracked[MAX_TRACKED];
static size_t ntracked;
static bool atexit_done;
static char tmpdir[256];

void h_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Can a socket of this type bind 127.0.0.1:port right now? */
static bool port_free(int type, int port)
{
    int fd = socket(AF_INET, type, 0);
    if (fd < 0)
        return false;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bool ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

/* Ports come from 22000..31999: below the kernel's ephemeral range (32768 and up), so a
 * port handed out here is not given to some other socket bound to port 0 (the watcher
 * tool, every process's client sockets) before the test's process binds it, and above the
 * default layout's 21000..21379. Each port is handed out once per test process. */
#define PORT_LOW 22000
#define PORT_SPAN 10000
static unsigned char ports_given[PORT_SPAN];
static unsigned port_seed;

int h_free_port(bool tcp)
{
    if (!port_seed)
        port_seed = (unsigned)getpid() * 2654435761u ^ (unsigned)now_ms();
    for (int i = 0; i < 1000; i++) {
        int off = (int)(rand_r(&port_seed) % PORT_SPAN);
        int port = PORT_LOW + off;
        if (ports_given[off])
            continue;
        if (port_free(SOCK_DGRAM, port) && port_free(SOCK_STREAM, port)) {
            ports_given[off] = 1;
            return port;
        }
    }
    (void)tcp;
    return -1;
}

const char *h_bin(const char *name, char *buf, size_t buflen)
{
    const char *dir = getenv("MC_BIN_DIR");
    snprintf(buf, buflen, "%s/%s", dir ? dir : "build/bin", name);
    return buf;
}

const char *h_source_dir(void)
{
    const char *d = getenv("MC_SOURCE_DIR");
    return d ? d : ".";
}

const char *h_tmpdir(void)
{
    if (!tmpdir[0]) {
        /* Under the build dir (MC_BIN_DIR/../test-runs) so logs stay with the build. */
        const char *bin = getenv("MC_BIN_DIR");
        char parent[200];
        snprintf(parent, sizeof parent, "%s/../test-runs", bin ? bin : "/tmp");
        mkdir(parent, 0755);
        snprintf(tmpdir, sizeof tmpdir, "%s/it-XXXXXX", parent);
        if (!mkdtemp(tmpdir))
            snprintf(tmpdir, sizeof tmpdir, "/tmp");
    }
    return tmpdir;
}

void h_track(pid_t pid)
{
    if (!atexit_done) {
        atexit(h_kill_all);
        atexit_done = true;
    }
    if (pid > 0 && ntracked < MAX_TRACKED)
        tracked[ntracked++] = pid;
}

pid_t h_spawn(char *const argv[], const char *log_path)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        int fd = open(log_path ? log_path : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) {
            dup2(nul, 0);
            close(nul);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    h_track(pid);
    return pid;
}

static int decode(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return -1;
}

int h_wait_exit(pid_t pid, int timeout_ms)
{
    long deadline = now_ms() + timeout_ms;
    for (int i = 0; i < 100000; i++) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return decode(status);
        if (r < 0)
            return -1;
        if (now_ms() >= deadline)
            return -1;
        h_sleep_ms(20);
    }
    return -1;
}

bool h_alive(pid_t pid)
{
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid)
        return false; /* reaped now */
    return kill(pid, 0) == 0;
}

void h_kill(pid_t pid, int sig)
{
    if (pid > 0)
        kill(pid, sig);
}

void h_kill_all(void)
{
    for (size_t i = 0; i < ntracked; i++) {
        if (tracked[i] > 0 && kill(tracked[i], 0) == 0) {
            kill(tracked[i], SIGKILL);
            waitpid(tracked[i], NULL, 0);
        }
    }
    ntracked = 0;
}

int h_run(char *const argv[], char *out, size_t outlen, int timeout_ms)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    size_t used = 0;
    if (out && outlen)
        out[0] = '\0';
    long deadline = now_ms() + timeout_ms;
    int status = -1;
    bool eof = false;
    for (int i = 0; i < 100000 && !eof; i++) {
        long left = deadline - now_ms();
        if (left <= 0)
            break;
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int r = poll(&p, 1, (int)(left < 200 ? left : 200));
        if (r > 0) {
            char buf[4096];
            ssize_t n = read(fds[0], buf, sizeof buf);
            if (n <= 0) {
                eof = true;
            } else if (out && used + 1 < outlen) {
                size_t k = (size_t)n < outlen - 1 - used ? (size_t)n : outlen - 1 - used;
                memcpy(out + used, buf, k);
                used += k;
                out[used] = '\0';
            }
        }
    }
    close(fds[0]);
    int left = (int)(deadline - now_ms());
    status = h_wait_exit(pid, left > 0 ? left : 1);
    if (status < 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    return status;
}

int h_watcher(char *out, size_t outlen, const char *manager, ...)
{
    char bin[512];
    char mopt[64];
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)h_bin("watcher", bin, sizeof bin);
    snprintf(mopt, sizeof mopt, "--manager=%s", manager);
    argv[n++] = mopt;
    va_list ap;
    va_start(ap, manager);
    const char *a;
    while (n < 31 && (a = va_arg(ap, const char *)) != NULL)
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    char local[8192];
    return h_run(argv, out ? out : local, out ? outlen : sizeof local, 20000);
}

bool h_wait_watch(const char *manager, const char *target, const char *path, const char *want,
                  int timeout_ms)
{
    long deadline = now_ms() + timeout_ms;
    for (int i = 0; i < 1000 && now_ms() < deadline; i++) {
        char out[8192];
        if (h_watcher(out, sizeof out, manager, "get", target, path, NULL) == 0 &&
            strstr(out, want))
            return true;
        h_sleep_ms(100);
    }
    return false;
}

pid_t h_start_manager(char *addr, size_t addrlen, const char *log, ...)
{
    if (!addr[0])
        snprintf(addr, addrlen, "127.0.0.1:%d", h_free_port(false));
    char bin[512], internal[64], ropt[600];
    snprintf(internal, sizeof internal, "--internal=%s", addr);
    snprintf(ropt, sizeof ropt, "--res=%s/defs", h_source_dir());
    char *argv[16] = {(char *)h_bin("manager", bin, sizeof bin), internal, ropt};
    int n = 3;
    va_list ap;
    va_start(ap, log);
    const char *a;
    while (n < 15 && (a = va_arg(ap, const char *)) != NULL)
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    pid_t pid = h_spawn(argv, log);
    if (pid <= 0 || !h_wait_watch(addr, "manager", "role", "manager", 15000))
        return -1;
    return pid;
}

int h_run_suite(struct Suite *suite) { return mc_check_run(suite); }

bool h_file_contains(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, text) != NULL;
    fclose(f);
    return found;
}
