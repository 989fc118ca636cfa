/* READY / RESULT reporting for transport roles. */
#include "transport.h"

void bench_sink_ready(bench_sink *s, uint16_t port)
{
    bench_report ready = *s->report;
    ready.kind = BENCH_REPORT_READY;
    ready.port = port;
    (void)bench_report_write(s->fd, &ready);
}

void bench_sink_done(bench_sink *s)
{
    if (s->done_sent)
        return;
    s->done_sent = 1;
    s->report->kind = BENCH_REPORT_RESULT;
    s->report->t_end = mc_clock_now_us();
    (void)bench_report_write(s->fd, s->report);
}
