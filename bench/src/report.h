/* What a bench child process (receiver, sender, relay) tells the harness over its pipe.
 *
 * Every child owns the write end of one pipe. It writes a READY report once its socket is
 * bound (carrying the port), and one RESULT report when it is done or its time is up. A
 * report is smaller than PIPE_BUF, so each write is atomic and is read whole.
 */
#ifndef MC_BENCH_REPORT_H
#define MC_BENCH_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/clock.h"

typedef enum {
    BENCH_REPORT_READY = 1,
    BENCH_REPORT_RESULT = 2,
} bench_report_kind;

typedef struct {
    int32_t kind;        /* bench_report_kind */
    int32_t finished;    /* 1: the role completed its whole workload */
    uint16_t port;       /* READY: the bound UDP port */
    /* receiver: messages delivered in order; sender: messages handed to the transport */
    uint64_t count;
    uint64_t acked;      /* sender: messages the transport reports as acknowledged */
    int32_t acked_unknown; /* sender: the transport cannot count acknowledged messages
                              (only "all of them" once it is idle) */
    uint64_t duplicates; /* receiver: sequence numbers seen again */
    uint64_t misordered; /* receiver: sequence numbers ahead of the next expected one */
    uint64_t corrupt;    /* receiver: wrong length or payload checksum */
    uint64_t peak_queued; /* sender: most messages queued but not yet acknowledged */
    /* relay: datagrams in, dropped, duplicated, held back for reordering, failed sends,
     * corrupted */
    uint64_t relay_in, relay_dropped, relay_duplicated, relay_reordered, relay_send_failed;
    uint64_t relay_corrupted;
    /* latency mode: receiver's delivery latency samples and percentiles; sender's resends */
    uint64_t lat_samples;
    mc_time_us lat_p50, lat_p99, lat_p999, lat_max;
    uint64_t resends;
    mc_time_us t_start;  /* sender: first send; receiver: socket ready */
    mc_time_us t_first;  /* receiver: first message */
    mc_time_us t_last;   /* receiver: last in-order message; sender: all acknowledged */
    mc_time_us t_end;    /* when the role stopped */
    char error[160];     /* empty, or a one-line reason the role failed */
} bench_report;

/* Write one report to `fd`. Returns 0, or -1 when the pipe is gone. */
int bench_report_write(int fd, const bench_report *r);

/* Record an error reason (printf-style) in the report, keeping the first one. */
void bench_report_fail(bench_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
