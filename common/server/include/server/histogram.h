/* Latency histograms a process keeps (tick time, login time, update latency) and serves
 * as Prometheus histograms on its metrics endpoint (server/metrics.h).
 *
 * Fixed buckets from 0.1 ms to 30 s (mc_histogram_bounds, seconds). Besides the totals since
 * start, a histogram keeps the last two 10-second windows so that a recent quantile (what
 * the console plots as "p99") reflects the last 10 to 20 s. Observing is O(buckets) and
 * never allocates. Time comes from the caller (mc_clock_now_us).
 */
#ifndef MC_SERVER_HISTOGRAM_H
#define MC_SERVER_HISTOGRAM_H

#include "common/clock.h"
#include "common/watcher.h"

#include <stddef.h>
#include <stdint.h>

#define MC_HISTOGRAM_BUCKETS 17
extern const double mc_histogram_bounds[MC_HISTOGRAM_BUCKETS]; /* seconds, ascending */
#define MC_HISTOGRAM_WINDOW_US (10u * 1000000u)

typedef struct mc_histogram {
    char name[64];  /* metric name without the "mc_" prefix, ends in _seconds */
    char help[160];
    uint64_t counts[MC_HISTOGRAM_BUCKETS + 1]; /* per bucket (not cumulative); last: +Inf */
    uint64_t count;
    double sum; /* seconds */
    uint64_t win[2][MC_HISTOGRAM_BUCKETS + 1]; /* [0] current window, [1] the one before */
    mc_time_us win_start;
} mc_histogram;

void mc_histogram_init(mc_histogram *h, const char *name, const char *help);
/* One observation of us microseconds at time now. */
void mc_histogram_observe_us(mc_histogram *h, uint64_t us, mc_time_us now);
/* The q-quantile (0..1) of the last 10-20 s in seconds: the upper bound of the bucket it
 * falls in (the largest finite bound for +Inf); 0 when nothing was observed then. */
double mc_histogram_recent_quantile(mc_histogram *h, double q, mc_time_us now);
/* Watchers under dir: count, sumSeconds, recentP50Ms, recentP99Ms. 0 or -1. */
int mc_histogram_publish(mc_histogram *h, mc_watchers *w, const char *dir);

#endif
