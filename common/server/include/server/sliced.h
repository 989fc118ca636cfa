/* Bulk work in bounded slices on the event loop, so that no loop turn runs longer than a
 * bound however much there is to do (docs/ARCHITECTURE.md, "Busy is not dead").
 *
 * A job is a sequence of steps: step() does one small unit of work and says whether more
 * is left. mc_sliced_start runs the first slice at once; a slice runs steps until the job is
 * done or the slice has lasted slice_us (by mc_clock_now_us; at least one step a slice), then
 * yields: the next slice is a zero-timeout timer, so every socket and timer that became ready
 * (heartbeats, the network) runs before it. done() is called once the last step returns
 * false (from inside the last slice). One job at a time per mc_sliced: starting a running one
 * is refused.
 *
 * The counters say what the slicing did: slices and the wall time of the last job (from its
 * start to its end, yields included), its work time (the slices summed), the most slices any
 * job took, and the longest slice since started (or reset). */
#ifndef MC_SERVER_SLICED_H
#define MC_SERVER_SLICED_H

#include <stdbool.h>
#include <stdint.h>

struct event_base;
typedef struct mc_sliced mc_sliced;

/* One unit of work: true when there is more to do. */
typedef bool (*mc_sliced_step_fn)(void *ctx);
/* The job is finished (may start the next one). */
typedef void (*mc_sliced_done_fn)(void *ctx);

typedef struct {
    uint64_t jobs;            /* jobs finished */
    uint64_t slices;          /* slices run, all jobs */
    uint64_t last_slices;     /* slices the last finished job took */
    uint64_t most_slices;     /* the most slices a job took (settable: reset) */
    uint64_t last_wall_us;    /* the last finished job, start to end (yields included) */
    uint64_t last_work_us;    /* its slices summed */
    uint64_t max_slice_us;    /* the longest slice (settable: reset) */
} mc_sliced_stats;

/* NULL when out of memory. slice_us 0 is taken as 1. */
mc_sliced *mc_sliced_new(struct event_base *base, uint64_t slice_us, mc_sliced_step_fn step,
                         mc_sliced_done_fn done, void *ctx);
/* Pending slices are dropped (done is not called). NULL is fine. */
void mc_sliced_free(mc_sliced *j);
/* Start a job: its first slice runs now. 0, or -1 when a job is running already. (Should
 * the yield timer ever fail to arm, the job runs on in the same slice rather than stall:
 * logged.) */
int mc_sliced_start(mc_sliced *j);
/* The same, but the first slice runs in a later turn (after what is ready now): for a job
 * started from the end of another (done), so that one turn never runs two slices. */
int mc_sliced_start_later(mc_sliced *j);
bool mc_sliced_running(const mc_sliced *j);
void mc_sliced_set_slice_us(mc_sliced *j, uint64_t slice_us);
uint64_t mc_sliced_slice_us(const mc_sliced *j);
/* The counters (live: watchers may point at the fields). */
mc_sliced_stats *mc_sliced_stats_of(mc_sliced *j);

#endif
