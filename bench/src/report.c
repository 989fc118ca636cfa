/* Writing reports to the harness pipe. */
#include "report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

int bench_report_write(int fd, const bench_report *r)
{
    for (;;) {
        ssize_t n = write(fd, r, sizeof *r);
        if (n == (ssize_t)sizeof *r)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return -1;
    }
}

void bench_report_fail(bench_report *r, const char *fmt, ...)
{
    if (r->error[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
}
