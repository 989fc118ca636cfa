/* The monotonic clock, substitutable by tests. */
#include "common/clock.h"

#include <time.h>

static mc_clock_source g_source;
static void *g_source_ctx;

mc_time_us mc_clock_now_us(void)
{
    if (g_source)
        return g_source(g_source_ctx);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (mc_time_us)ts.tv_sec * MC_US_PER_S + (mc_time_us)ts.tv_nsec / 1000u;
}

void mc_clock_set_source(mc_clock_source source, void *ctx)
{
    g_source = source;
    g_source_ctx = ctx;
}

void mc_clock_wall(int64_t *seconds, int32_t *micros)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    *seconds = (int64_t)ts.tv_sec;
    *micros = (int32_t)(ts.tv_nsec / 1000);
}
