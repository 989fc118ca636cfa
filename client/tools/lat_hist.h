/* A latency histogram of fixed size: samples in microseconds go to log-linear buckets (10 us
 * wide below 10.24 ms, then 512 buckets per doubling: at most 0.2% wide, 0.1 ms at about
 * 50 ms), so a quantile costs one pass over the buckets and a sample costs no allocation
 * (bots' update latency, docs/tools/bots.md). About 61 KB, embedded in its owner; samples
 * above LAT_HIST_MAX_US land in the last bucket (the maximum is kept exactly).
 */
#ifndef MC_CLIENT_LAT_HIST_H
#define MC_CLIENT_LAT_HIST_H

#include <stdint.h>

#define LAT_HIST_UNIT_US 10u     /* the linear buckets' width */
#define LAT_HIST_LINEAR 1024u    /* linear buckets: 0 .. 10.24 ms */
#define LAT_HIST_SUB 512u        /* buckets per doubling above them */
#define LAT_HIST_OCTAVES 13u     /* doublings: up to 10.24 ms x 2^13 = 83.9 s */
#define LAT_HIST_BUCKETS (LAT_HIST_LINEAR + LAT_HIST_OCTAVES * LAT_HIST_SUB)
#define LAT_HIST_MAX_US ((uint64_t)LAT_HIST_LINEAR * LAT_HIST_UNIT_US << LAT_HIST_OCTAVES)

typedef struct {
    uint64_t n, max_us, sum_us;
    uint64_t buckets[LAT_HIST_BUCKETS];
} lat_hist;

void lat_hist_init(lat_hist *h);
void lat_hist_add(lat_hist *h, uint64_t us);
/* The sample at quantile q (0..1, nearest rank) in ms: the upper edge of its bucket, never
 * above the largest sample; 0 without samples. */
double lat_hist_ms(const lat_hist *h, double q);
double lat_hist_max_ms(const lat_hist *h);
double lat_hist_mean_ms(const lat_hist *h);

/* The bucket of a sample, and a bucket's upper edge (exclusive) in us: for the tests. */
uint32_t lat_hist_bucket(uint64_t us);
uint64_t lat_hist_upper_us(uint32_t bucket);

#endif
