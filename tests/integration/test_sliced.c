/* Sliced jobs (server/sliced.h) on a real libevent loop with a clock the test drives: a job
 * runs in slices of at most the slice time (each step costs 1 ms of the test's clock), the
 * loop serves ready sockets between slices, done comes once with the counters right, a
 * running job cannot be started again, and start_later runs nothing in the calling turn. */
#include "server/sliced.h"

#include "check_main.h"
#include "common/clock.h"

#include <event2/event.h>
#include <sys/socket.h>
#include <unistd.h>

static mc_time_us fake_now;
static mc_time_us fake_clock(void *ctx)
{
    (void)ctx;
    return fake_now;
}

typedef struct {
    int steps, total;   /* done so far, of total */
    int done_calls;
    int io_at;          /* the step count when the socket was served (-1: not yet) */
    int fd;
} job;

static bool step(void *ctx)
{
    job *j = ctx;
    fake_now += 1000; /* a step "takes" 1 ms */
    j->steps++;
    return j->steps < j->total;
}

static void done(void *ctx) { ((job *)ctx)->done_calls++; }

static void on_readable(evutil_socket_t fd, short what, void *ctx)
{
    (void)what;
    job *j = ctx;
    char b[16];
    if (read(fd, b, sizeof b) > 0 && j->io_at < 0)
        j->io_at = j->steps;
}

START_TEST(a_job_runs_in_bounded_slices_and_the_loop_runs_between_them)
{
    fake_now = 1000000;
    mc_clock_set_source(fake_clock, NULL);
    struct event_base *base = event_base_new();
    ck_assert_ptr_nonnull(base);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    job j = {.total = 100, .io_at = -1, .fd = sv[0]};
    struct event *rd = event_new(base, sv[0], EV_READ | EV_PERSIST, on_readable, &j);
    event_add(rd, NULL);
    mc_sliced *s = mc_sliced_new(base, 10000 /* 10 ms */, step, done, &j);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(write(sv[1], "x", 1), 1); /* ready before the job starts */

    ck_assert_int_eq(mc_sliced_start(s), 0);
    /* the first slice ran now, and only it */
    ck_assert_int_eq(j.steps, 10);
    ck_assert(mc_sliced_running(s));
    ck_assert_int_eq(mc_sliced_start(s), -1); /* one job at a time */
    ck_assert_int_eq(mc_sliced_start_later(s), -1);
    while (mc_sliced_running(s))
        ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);

    ck_assert_int_eq(j.steps, 100);
    ck_assert_int_eq(j.done_calls, 1);
    /* the socket was served between slices, while the job had work left */
    ck_assert_int_ge(j.io_at, 10);
    ck_assert_int_lt(j.io_at, 100);
    mc_sliced_stats *st = mc_sliced_stats_of(s);
    ck_assert_uint_eq(st->jobs, 1);
    ck_assert_uint_eq(st->slices, 10);
    ck_assert_uint_eq(st->last_slices, 10);
    ck_assert_uint_eq(st->most_slices, 10);
    ck_assert_uint_eq(st->max_slice_us, 10000);
    ck_assert_uint_eq(st->last_work_us, 100000);
    ck_assert_uint_eq(st->last_wall_us, 100000);

    /* a smaller job fits one slice; a larger slice time takes effect at once */
    j.steps = 0;
    j.total = 3;
    mc_sliced_set_slice_us(s, 50000);
    ck_assert_uint_eq(mc_sliced_slice_us(s), 50000);
    ck_assert_int_eq(mc_sliced_start(s), 0);
    ck_assert(!mc_sliced_running(s));
    ck_assert_int_eq(j.done_calls, 2);
    ck_assert_uint_eq(st->last_slices, 1);
    ck_assert_uint_eq(st->most_slices, 10);

    /* start_later: nothing runs in this turn; the loop runs it */
    j.steps = 0;
    j.total = 120;
    ck_assert_int_eq(mc_sliced_start_later(s), 0);
    ck_assert_int_eq(j.steps, 0);
    ck_assert(mc_sliced_running(s));
    while (mc_sliced_running(s))
        ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
    ck_assert_int_eq(j.steps, 120);
    ck_assert_uint_eq(st->last_slices, 3);
    ck_assert_uint_eq(st->max_slice_us, 50000);

    mc_sliced_free(s);
    event_free(rd);
    close(sv[0]);
    close(sv[1]);
    event_base_free(base);
    mc_clock_set_source(NULL, NULL);
}
END_TEST

START_TEST(freeing_a_running_job_drops_its_slices)
{
    fake_now = 1000000;
    mc_clock_set_source(fake_clock, NULL);
    struct event_base *base = event_base_new();
    job j = {.total = 1000, .io_at = -1};
    mc_sliced *s = mc_sliced_new(base, 5000, step, done, &j);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(mc_sliced_start(s), 0);
    ck_assert_int_eq(j.steps, 5);
    mc_sliced_free(s);
    ck_assert_int_eq(event_base_loop(base, EVLOOP_NONBLOCK), 1); /* nothing left */
    ck_assert_int_eq(j.steps, 5);
    ck_assert_int_eq(j.done_calls, 0);
    event_base_free(base);
    mc_clock_set_source(NULL, NULL);
}
END_TEST

static Suite *sliced_suite(void)
{
    Suite *s = suite_create("sliced");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a_job_runs_in_bounded_slices_and_the_loop_runs_between_them);
    tcase_add_test(tc, freeing_a_running_job_drops_its_slices);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(sliced_suite)
