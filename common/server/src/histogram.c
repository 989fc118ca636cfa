/* Fixed-bucket latency histograms (server/histogram.h). */
#include "server/histogram.h"

#include <stdio.h>
#include <string.h>

const double mc_histogram_bounds[MC_HISTOGRAM_BUCKETS] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30};

void mc_histogram_init(mc_histogram *h, const char *name, const char *help)
{
    memset(h, 0, sizeof *h);
    snprintf(h->name, sizeof h->name, "%s", name);
    snprintf(h->help, sizeof h->help, "%s", help);
}

static void roll(mc_histogram *h, mc_time_us now)
{
    if (now - h->win_start < MC_HISTOGRAM_WINDOW_US && now >= h->win_start)
        return;
    if (now - h->win_start < 2ull * MC_HISTOGRAM_WINDOW_US && now >= h->win_start)
        memcpy(h->win[1], h->win[0], sizeof h->win[0]);
    else
        memset(h->win[1], 0, sizeof h->win[1]);
    memset(h->win[0], 0, sizeof h->win[0]);
    h->win_start = now;
}

void mc_histogram_observe_us(mc_histogram *h, uint64_t us, mc_time_us now)
{
    double s = (double)us / 1e6;
    size_t b = 0;
    while (b < MC_HISTOGRAM_BUCKETS && s > mc_histogram_bounds[b])
        b++;
    h->counts[b]++;
    h->count++;
    h->sum += s;
    roll(h, now);
    h->win[0][b]++;
}

double mc_histogram_recent_quantile(mc_histogram *h, double q, mc_time_us now)
{
    roll(h, now);
    uint64_t n = 0, per[MC_HISTOGRAM_BUCKETS + 1];
    for (size_t b = 0; b <= MC_HISTOGRAM_BUCKETS; b++) {
        per[b] = h->win[0][b] + h->win[1][b];
        n += per[b];
    }
    if (n == 0)
        return 0;
    double want = q * (double)n;
    uint64_t seen = 0;
    for (size_t b = 0; b < MC_HISTOGRAM_BUCKETS; b++) {
        seen += per[b];
        if ((double)seen >= want)
            return mc_histogram_bounds[b];
    }
    return mc_histogram_bounds[MC_HISTOGRAM_BUCKETS - 1];
}

static void get_count(void *ctx, mc_watch_value *out)
{
    out->as.u = ((mc_histogram *)ctx)->count;
}

static void get_sum(void *ctx, mc_watch_value *out)
{
    out->as.f = ((mc_histogram *)ctx)->sum;
}

static void get_p50(void *ctx, mc_watch_value *out)
{
    out->as.f = mc_histogram_recent_quantile(ctx, 0.5, mc_clock_now_us()) * 1000.0;
}

static void get_p99(void *ctx, mc_watch_value *out)
{
    out->as.f = mc_histogram_recent_quantile(ctx, 0.99, mc_clock_now_us()) * 1000.0;
}

int mc_histogram_publish(mc_histogram *h, mc_watchers *w, const char *dir)
{
    char p[MC_WATCH_MAX_PATH];
    int bad = 0;
    snprintf(p, sizeof p, "%s/count", dir);
    bad |= mc_watch_add(w, p, MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_count, NULL, h);
    snprintf(p, sizeof p, "%s/sumSeconds", dir);
    bad |= mc_watch_add(w, p, MC_WATCH_FLOAT, MC_WATCH_READ_ONLY, get_sum, NULL, h);
    snprintf(p, sizeof p, "%s/recentP50Ms", dir);
    bad |= mc_watch_add(w, p, MC_WATCH_FLOAT, MC_WATCH_READ_ONLY, get_p50, NULL, h);
    snprintf(p, sizeof p, "%s/recentP99Ms", dir);
    bad |= mc_watch_add(w, p, MC_WATCH_FLOAT, MC_WATCH_READ_ONLY, get_p99, NULL, h);
    return bad ? -1 : 0;
}
