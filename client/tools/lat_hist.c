/* Fixed log-linear latency histogram (lat_hist.h). */
#include "lat_hist.h"

#include <math.h>
#include <string.h>

void lat_hist_init(lat_hist *h) { memset(h, 0, sizeof *h); }

uint32_t lat_hist_bucket(uint64_t us)
{
    uint64_t u = us / LAT_HIST_UNIT_US;
    if (u < LAT_HIST_LINEAR)
        return (uint32_t)u;
    /* u in [1024 << k, 2048 << k): octave k, 512 sub-buckets of width 2 << k */
    uint32_t k = 0;
    while (k < LAT_HIST_OCTAVES && (u >> (k + 1)) >= 2 * LAT_HIST_SUB)
        k++;
    if (k == LAT_HIST_OCTAVES)
        return LAT_HIST_BUCKETS - 1;
    return LAT_HIST_LINEAR + k * LAT_HIST_SUB + (uint32_t)(u >> (k + 1)) - LAT_HIST_SUB;
}

uint64_t lat_hist_upper_us(uint32_t bucket)
{
    if (bucket < LAT_HIST_LINEAR)
        return ((uint64_t)bucket + 1) * LAT_HIST_UNIT_US;
    if (bucket >= LAT_HIST_BUCKETS)
        bucket = LAT_HIST_BUCKETS - 1;
    uint32_t k = (bucket - LAT_HIST_LINEAR) / LAT_HIST_SUB;
    uint64_t sub = (bucket - LAT_HIST_LINEAR) % LAT_HIST_SUB;
    return ((LAT_HIST_SUB + sub + 1) << (k + 1)) * LAT_HIST_UNIT_US;
}

void lat_hist_add(lat_hist *h, uint64_t us)
{
    h->buckets[lat_hist_bucket(us)]++;
    h->n++;
    h->sum_us += us;
    if (us > h->max_us)
        h->max_us = us;
}

double lat_hist_ms(const lat_hist *h, double q)
{
    if (!h->n)
        return 0;
    if (q < 0)
        q = 0;
    uint64_t rank = (uint64_t)ceil(q * (double)h->n); /* nearest rank, 1-based */
    if (rank < 1)
        rank = 1;
    if (rank > h->n)
        rank = h->n;
    uint64_t seen = 0;
    for (uint32_t b = 0; b < LAT_HIST_BUCKETS; b++) {
        seen += h->buckets[b];
        if (seen >= rank) {
            uint64_t up = lat_hist_upper_us(b);
            return (double)(up < h->max_us ? up : h->max_us) / 1000.0;
        }
    }
    return (double)h->max_us / 1000.0;
}

double lat_hist_max_ms(const lat_hist *h) { return (double)h->max_us / 1000.0; }

double lat_hist_mean_ms(const lat_hist *h)
{
    return h->n ? (double)h->sum_us / (double)h->n / 1000.0 : 0;
}
