/* mercury-bench --latency: how late messages arrive, not how many per second.
 *
 * C channels each send R messages per second for D seconds through the relay (which adds
 * --delay ms of one-way latency on top of its loss, duplication and reordering), over
 * mercury (C indexed channels on one nub) and over ENet (one peer with C channels), one
 * transport after the other. Each message carries its channel, its sequence number and its
 * send time (mc_clock_now_us: CLOCK_MONOTONIC, the same in every process of the machine);
 * the receiver checks order per channel and records now - send time. Printed per transport:
 * delivery latency p50 / p99 / p99.9 / max, resends per message; then the floor (the p99
 * message at 5% loss needs one resend: one-way delay + detecting the loss, at best one
 * round trip after sending minus the first one-way trip, + one-way delay = 3 x delay) and
 * finally `latency p99 mercury/enet: X.XX`. */
#ifndef MC_BENCH_LATENCY_H
#define MC_BENCH_LATENCY_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"
#include "options.h"
#include "transport.h"

/* What a latency role needs. */
typedef struct {
    uint32_t channels;      /* C */
    uint32_t rate;          /* R: messages per second per channel */
    mc_time_us duration_us; /* D */
    size_t size;            /* bytes per message (>= BENCH_LATENCY_HEADER) */
    mc_time_us deadline;    /* absolute: stop whatever happens */
    mc_time_us linger_us;   /* receiver: serve this long after the sender went quiet */
    struct sockaddr_in addr; /* receiver: bind here; sender: send here */
} bench_latency_job;

#define BENCH_LATENCY_HEADER 16u /* u32 channel, u32 sequence, u64 send time (LE) */

/* Message i of a channel: fill the header and pad. */
void bench_latency_fill(uint8_t *buf, size_t size, uint32_t channel, uint32_t seq,
                        mc_time_us sent);

/* The receiver's bookkeeping: per-channel order, latency samples, percentiles. */
typedef struct {
    uint32_t channels;
    uint64_t expected;  /* C x R x D */
    uint32_t *next;     /* next sequence per channel */
    mc_time_us *samples;
    uint64_t nsamples, cap;
} bench_latency_checker;

int bench_latency_checker_init(bench_latency_checker *c, const bench_latency_job *j);
void bench_latency_checker_free(bench_latency_checker *c);
/* One delivered message (channel given by the transport). Updates r's count, duplicates,
 * misordered, corrupt. Returns 1 when it was the channel's next message. */
int bench_latency_feed(bench_latency_checker *c, uint32_t channel, const uint8_t *data,
                       size_t len, bench_report *r);
int bench_latency_complete(const bench_latency_checker *c, const bench_report *r);
/* Sort the samples and fill r's lat_* fields. */
void bench_latency_summarise(bench_latency_checker *c, bench_report *r);

/* When the k-th message of channel i is due (staggered over the channels). */
mc_time_us bench_latency_due(const bench_latency_job *j, mc_time_us t0, uint32_t i, uint64_t k);

typedef struct {
    const char *name;
    int (*receive)(const bench_latency_job *j, bench_sink *sink);
    int (*send)(const bench_latency_job *j, bench_sink *sink);
} bench_latency_transport;

extern const bench_latency_transport bench_latency_mercury;
extern const bench_latency_transport bench_latency_enet;

/* Run the whole latency mode and print it; returns the exit status. */
int bench_latency_main(const bench_options *o);

#endif
