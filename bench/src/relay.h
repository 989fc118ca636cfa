/* The misbehaving UDP relay both transports are measured through (and the mercury tests
 * run their loss and corruption scenarios through, as an independent process).
 *
 * It binds a front socket (the sender talks to it) and forwards every datagram to the
 * target (the receiver) from a second socket; replies from the target go back to the last
 * address the front heard from. Each datagram, in both directions, is independently
 * dropped with probability `loss`, otherwise sent twice with probability `dup`; each copy
 * has 1-4 of its bytes changed with probability `corrupt`, and is held back with
 * probability `reorder` until 1-3 later datagrams of the same direction have passed it (or
 * RELAY_HOLD_MAX_US has passed). Every datagram then waits `delay_us` before it is sent
 * (one-way latency, order kept). Randomness is a PRNG seeded by `seed`, so a run is
 * reproducible in its decisions. It runs until `stop_fd` reports hang-up (the harness
 * closed its end) or `deadline`, then reports its counters.
 */
#ifndef MC_BENCH_RELAY_H
#define MC_BENCH_RELAY_H

#include <netinet/in.h>
#include <stdint.h>

#include "transport.h"

typedef struct {
    double loss, dup, reorder;
    uint64_t seed;
    struct sockaddr_in front;  /* where to listen (port 0: any free port) */
    struct sockaddr_in target; /* where to forward */
    int stop_fd;               /* read end of the harness's stop pipe, or -1 */
    mc_time_us deadline;
    double corrupt;            /* probability a copy is corrupted (0 = never) */
    mc_time_us delay_us;       /* one-way latency added to every datagram */
} bench_relay_config;

/* Runs the relay; READY carries the front port, RESULT the counters. Returns 0, or -1 on a
 * setup error (reason in the report, which is sent). */
int bench_relay_run(const bench_relay_config *cfg, bench_sink *sink);

#endif
