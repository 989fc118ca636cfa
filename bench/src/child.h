/* Bench child processes: fork a role, collect its reports, and always kill and reap it.
 *
 * A child runs one function (receiver, sender or relay) with the write end of its own
 * report pipe, dies with the harness (PR_SET_PDEATHSIG), and exits when the function
 * returns. The harness reads READY/RESULT reports with bench_children_pump(), and
 * bench_child_finish() kills (SIGKILL) a child that is still running and reaps it with
 * wait4(), keeping its resource usage (CPU time, max RSS) for the report.
 */
#ifndef MC_BENCH_CHILD_H
#define MC_BENCH_CHILD_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "report.h"

typedef int (*bench_child_fn)(void *ctx, int report_fd);

typedef struct {
    const char *role;
    pid_t pid;           /* 0: not started or already reaped */
    int fd;              /* read end of its report pipe, -1 once closed */
    bool ready, has_result, eof, reaped;
    bench_report ready_report;
    bench_report result;
    struct rusage usage;
    int status;          /* wait status once reaped */
} bench_child;

/* Fork `fn(ctx, fd)` as a child. `close_fds` (count `nclose`) are closed in the child first
 * (descriptors the harness keeps that the child must not hold). Returns 0 or -1 (errno). */
int bench_child_spawn(bench_child *c, const char *role, bench_child_fn fn, void *ctx,
                      const int *close_fds, int nclose);

/* Read whatever reports the children have written, waiting at most `timeout_ms`. Marks
 * eof when a child's pipe closes. Returns the number of pipes still open. */
int bench_children_pump(bench_child *const *cs, int n, int timeout_ms);

/* Kill the child if it is still running, reap it and close its pipe. Safe to call twice. */
void bench_child_finish(bench_child *c);

/* Reap a child whose pipe is at EOF, waiting up to `timeout_ms` for it to exit on its own,
 * then kill it. */
void bench_child_wait(bench_child *c, int timeout_ms);

/* CPU seconds (user + system) and max RSS in KiB of a reaped child. */
double bench_child_cpu_s(const bench_child *c);
long bench_child_maxrss_kib(const bench_child *c);

#endif
