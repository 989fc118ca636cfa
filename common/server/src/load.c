/* CPU-time based load measurement. */
#include "server/load.h"

#include <sys/resource.h>

mc_time_us mc_load_cpu_us(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (mc_time_us)ru.ru_utime.tv_sec * MC_US_PER_S + (mc_time_us)ru.ru_utime.tv_usec +
           (mc_time_us)ru.ru_stime.tv_sec * MC_US_PER_S + (mc_time_us)ru.ru_stime.tv_usec;
}

void mc_load_init(mc_load_meter *m, double smoothing)
{
    m->last_wall = mc_clock_now_us();
    m->last_cpu = mc_load_cpu_us();
    m->load = 0.0;
    m->smoothing = smoothing > 0.0 && smoothing <= 1.0 ? smoothing : 0.5;
}

double mc_load_sample(mc_load_meter *m)
{
    mc_time_us wall = mc_clock_now_us();
    mc_time_us cpu = mc_load_cpu_us();
    if (wall > m->last_wall && cpu >= m->last_cpu) {
        double sample = (double)(cpu - m->last_cpu) / (double)(wall - m->last_wall);
        m->load = m->smoothing * sample + (1.0 - m->smoothing) * m->load;
    }
    m->last_wall = wall;
    m->last_cpu = cpu;
    return m->load;
}
