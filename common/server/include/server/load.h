/* Load measurement: the fraction of one CPU the process used since the last sample
 * (user + system CPU time over elapsed monotonic time), smoothed. 0 = idle, 1 = one core
 * fully busy. This is what a process reports in its heartbeat. */
#ifndef MC_SERVER_LOAD_H
#define MC_SERVER_LOAD_H

#include "common/clock.h"

typedef struct {
    mc_time_us last_wall;
    mc_time_us last_cpu;
    double load;
    double smoothing; /* weight of the new sample, 0..1 */
} mc_load_meter;

void mc_load_init(mc_load_meter *m, double smoothing);
/* Take a sample now; returns the smoothed load. */
double mc_load_sample(mc_load_meter *m);
/* CPU time (user + system) of this process in microseconds. */
mc_time_us mc_load_cpu_us(void);

#endif
