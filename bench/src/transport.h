/* A transport under test: how its receiver and sender roles run inside a bench child.
 *
 * Each role runs in its own process and returns when its work is done or `deadline` (a
 * mc_clock_now_us() value) has passed. The receiver binds `bind_addr` (port 0 picks a free
 * one), reports READY through `ready`, delivers messages into a bench_checker, and sends its
 * RESULT through `done` as soon as it has everything (or on the deadline, or on the first bad
 * message); it then keeps serving its socket until the sender has been silent for linger_us
 * (or the deadline) so the last acknowledgements reach the sender, and returns. The sender connects to `peer`, reports READY (port 0) with
 * t_start set when it starts sending, sends N messages of S bytes, keeps at most a bounded
 * number queued unacknowledged, and returns once every message is acknowledged (or on the
 * deadline); the harness then sends its RESULT.
 */
#ifndef MC_BENCH_TRANSPORT_H
#define MC_BENCH_TRANSPORT_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"
#include "report.h"

typedef struct {
    uint64_t messages;     /* N */
    size_t size;           /* S */
    mc_time_us deadline;   /* absolute, mc_clock_now_us() */
    mc_time_us linger_us;  /* receiver: after it is done, serve until this long without a
                              datagram from the sender (or the deadline) */
} bench_workload;

typedef struct {
    int fd;                /* report pipe */
    bench_report *report;  /* the role's report, written to fd by ready/done */
    int done_sent;
} bench_sink;

/* Send a READY report with `port`. */
void bench_sink_ready(bench_sink *s, uint16_t port);
/* Send the RESULT report (once; later calls do nothing). */
void bench_sink_done(bench_sink *s);

typedef struct {
    const char *name;
    const char *queue_unit; /* unit of the sender's peak_queued ("messages", "packets") */
    /* Both return 0 on success (the report tells what happened) or -1 on a setup error
     * (reason in the report). */
    int (*receive)(const bench_workload *w, const struct sockaddr_in *bind_addr, bench_sink *sink);
    int (*send)(const bench_workload *w, const struct sockaddr_in *peer, bench_sink *sink);
} bench_transport;

extern const bench_transport bench_transport_enet;
extern const bench_transport bench_transport_mercury;
extern const bench_transport bench_transport_mercury_auth;

#endif
