/* One side of the benchmark: run a transport's receiver, sender and (when impaired) the
 * relay as child processes, collect their reports and resource usage, and never leave a
 * child behind. Which roles run depends on the mode: all of them locally, only the
 * receiver with --listen, only the sender (and relay) with --connect. */
#ifndef MC_BENCH_SIDE_H
#define MC_BENCH_SIDE_H

#include <stdbool.h>

#include "child.h"
#include "options.h"
#include "transport.h"

typedef struct {
    const bench_transport *transport;
    bench_child receiver, sender, relay;
    bool has_receiver, has_sender, has_relay;
    char error[200]; /* harness-level failure (could not fork, a role never became ready) */
} bench_side;

/* Runs the side to completion or its time limit. Returns 0 when it ran (see the reports for
 * how it went), -1 when it could not be set up (reason in side->error). */
int bench_side_run(const bench_options *o, const bench_transport *t, bench_side *side);

#endif
