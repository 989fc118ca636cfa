/* The one clock every process and library reads.
 *
 * Time in Mercury Cluster is monotonic microseconds since an arbitrary origin. Code never
 * calls clock_gettime() itself; it calls mc_clock_now_us(), so a test can substitute a
 * clock it controls (mc_clock_set_source) and reason about resend timers and timeouts.
 */
#ifndef MC_COMMON_CLOCK_H
#define MC_COMMON_CLOCK_H

#include <stdint.h>

/* Microseconds. */
typedef uint64_t mc_time_us;

#define MC_US_PER_MS 1000ull
#define MC_US_PER_S 1000000ull

/* A replacement clock: returns the current time in microseconds. */
typedef mc_time_us (*mc_clock_source)(void *ctx);

/* Current monotonic time in microseconds (CLOCK_MONOTONIC unless substituted). */
mc_time_us mc_clock_now_us(void);

/* Substitute the clock (tests). Pass NULL to restore the system monotonic clock. */
void mc_clock_set_source(mc_clock_source source, void *ctx);

/* Wall-clock time as seconds and microseconds since the Unix epoch: log timestamps and the
 * expiry of resumption tickets (secure/resume.h), which other hosts check; never a timer. */
void mc_clock_wall(int64_t *seconds, int32_t *micros);

#endif
