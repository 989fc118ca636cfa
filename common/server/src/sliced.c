/* Bulk work in bounded slices (server/sliced.h). */
#include "server/sliced.h"
#include "common/clock.h"
#include "common/log.h"

#include <event2/event.h>
#include <stdlib.h>

struct mc_sliced {
    struct event *next_ev;   /* the next slice: a zero-timeout timer */
    uint64_t slice_us;
    mc_sliced_step_fn step;
    mc_sliced_done_fn done;
    void *ctx;
    bool running;
    mc_time_us started;      /* the running job's start */
    uint64_t job_slices, job_work_us;
    mc_sliced_stats st;
};

static void run_slice(mc_sliced *j)
{
    mc_time_us t0 = mc_clock_now_us(), now = t0;
    bool more;
    do {
        more = j->step(j->ctx);
        now = mc_clock_now_us();
    } while (more && now - t0 < j->slice_us);
    uint64_t took = now - t0;
    j->st.slices++;
    j->job_slices++;
    j->job_work_us += took;
    if (took > j->st.max_slice_us)
        j->st.max_slice_us = took;
    if (more) {
        static const struct timeval zero = {0, 0};
        if (event_add(j->next_ev, &zero) == 0)
            return;
        /* never expected: rather a long turn than a job that never ends */
        MC_ERROR("cannot arm the next slice of a sliced job; finishing it in this turn");
        while (j->step(j->ctx))
            ;
        now = mc_clock_now_us();
    }
    j->running = false;
    j->st.jobs++;
    j->st.last_slices = j->job_slices;
    if (j->job_slices > j->st.most_slices)
        j->st.most_slices = j->job_slices;
    j->st.last_wall_us = now - j->started;
    j->st.last_work_us = j->job_work_us;
    if (j->done)
        j->done(j->ctx);
}

static void on_next(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    run_slice(ctx);
}

mc_sliced *mc_sliced_new(struct event_base *base, uint64_t slice_us, mc_sliced_step_fn step,
                         mc_sliced_done_fn done, void *ctx)
{
    mc_sliced *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->next_ev = event_new(base, -1, 0, on_next, j);
    if (!j->next_ev) {
        free(j);
        return NULL;
    }
    j->slice_us = slice_us ? slice_us : 1;
    j->step = step;
    j->done = done;
    j->ctx = ctx;
    return j;
}

void mc_sliced_free(mc_sliced *j)
{
    if (!j)
        return;
    event_free(j->next_ev);
    free(j);
}

int mc_sliced_start(mc_sliced *j)
{
    if (j->running)
        return -1;
    j->running = true;
    j->started = mc_clock_now_us();
    j->job_slices = 0;
    j->job_work_us = 0;
    run_slice(j);
    return 0;
}

int mc_sliced_start_later(mc_sliced *j)
{
    if (j->running)
        return -1;
    j->running = true;
    j->started = mc_clock_now_us();
    j->job_slices = 0;
    j->job_work_us = 0;
    static const struct timeval zero = {0, 0};
    if (event_add(j->next_ev, &zero) != 0) {
        MC_ERROR("cannot arm the first slice of a sliced job; running it now");
        run_slice(j);
    }
    return 0;
}

bool mc_sliced_running(const mc_sliced *j) { return j->running; }
void mc_sliced_set_slice_us(mc_sliced *j, uint64_t slice_us)
{
    j->slice_us = slice_us ? slice_us : 1;
}
uint64_t mc_sliced_slice_us(const mc_sliced *j) { return j->slice_us; }
mc_sliced_stats *mc_sliced_stats_of(mc_sliced *j) { return &j->st; }
