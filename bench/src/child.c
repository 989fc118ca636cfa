/* Fork, pipe, poll, kill and wait4 for bench roles. */
#include "child.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"

int bench_child_spawn(bench_child *c, const char *role, bench_child_fn fn, void *ctx,
                      const int *close_fds, int nclose)
{
    memset(c, 0, sizeof *c);
    c->role = role;
    c->fd = -1;
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        for (int i = 0; i < nclose; i++)
            if (close_fds[i] >= 0)
                close(close_fds[i]);
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(3);
        int rc = fn(ctx, p[1]);
        close(p[1]);
        _exit(rc == 0 ? 0 : 1);
    }
    close(p[1]);
    c->pid = pid;
    c->fd = p[0];
    return 0;
}

static void read_one(bench_child *c)
{
    bench_report r;
    ssize_t n;
    do {
        n = read(c->fd, &r, sizeof r);
    } while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof r) {
        if (r.kind == BENCH_REPORT_READY) {
            c->ready = true;
            c->ready_report = r;
        } else if (r.kind == BENCH_REPORT_RESULT) {
            c->has_result = true;
            c->result = r;
        }
        return;
    }
    if (n < 0 && errno == EAGAIN)
        return;
    /* EOF, an error or a torn report (cannot happen below PIPE_BUF): the child is gone. */
    c->eof = true;
    close(c->fd);
    c->fd = -1;
}

int bench_children_pump(bench_child *const *cs, int n, int timeout_ms)
{
    struct pollfd p[8];
    bench_child *who[8];
    int m = 0;
    for (int i = 0; i < n && m < 8; i++) {
        if (cs[i] && cs[i]->fd >= 0) {
            p[m] = (struct pollfd){cs[i]->fd, POLLIN, 0};
            who[m++] = cs[i];
        }
    }
    if (m == 0)
        return 0;
    int k = poll(p, (nfds_t)m, timeout_ms);
    if (k > 0)
        for (int i = 0; i < m; i++)
            if (p[i].revents)
                read_one(who[i]);
    int open = 0;
    for (int i = 0; i < m; i++)
        open += who[i]->fd >= 0;
    return open;
}

void bench_child_finish(bench_child *c)
{
    if (c->pid > 0 && !c->reaped) {
        (void)kill(c->pid, SIGKILL);
        pid_t w;
        do {
            w = wait4(c->pid, &c->status, 0, &c->usage);
        } while (w < 0 && errno == EINTR);
        c->reaped = true;
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
}

void bench_child_wait(bench_child *c, int timeout_ms)
{
    mc_time_us until = mc_clock_now_us() + (mc_time_us)timeout_ms * MC_US_PER_MS;
    while (c->pid > 0 && !c->reaped) {
        pid_t w = wait4(c->pid, &c->status, WNOHANG, &c->usage);
        if (w == c->pid) {
            c->reaped = true;
            break;
        }
        if (w < 0 && errno != EINTR)
            break;
        if (mc_clock_now_us() >= until)
            break;
        /* Wait on the pipe (if still open) for a bounded slice rather than spinning. */
        if (c->fd >= 0) {
            bench_child *one = c;
            bench_children_pump(&one, 1, 5);
        } else {
            struct pollfd none;
            (void)poll(&none, 0, 2);
        }
    }
    bench_child_finish(c);
}

double bench_child_cpu_s(const bench_child *c)
{
    return (double)c->usage.ru_utime.tv_sec + c->usage.ru_utime.tv_usec / 1e6 +
           (double)c->usage.ru_stime.tv_sec + c->usage.ru_stime.tv_usec / 1e6;
}

long bench_child_maxrss_kib(const bench_child *c) { return c->usage.ru_maxrss; }
