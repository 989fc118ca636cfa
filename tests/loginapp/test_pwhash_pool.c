/* Password hashing runs on worker threads and answers on the loop thread: a hash verifies
 * with its password and no other, a stored string that is not a hash is a failure (not a
 * mismatch), the queue bound refuses at once, the cost is what was asked (and a hash of
 * another cost needs a rehash), and freeing the pool with jobs in flight calls nobody. */
#include "check_main.h"

#include <event2/event.h>
#include <pthread.h>
#include <sodium.h>
#include <string.h>

#include "pwhash_pool.h"

typedef struct {
    int calls, status;
    bool match;
    char hash[MC_PWHASH_STR_MAX];
    pthread_t thread;
    struct event_base *base;
    int want;           /* break the loop after this many calls */
    int *counter;       /* shared counter for many jobs */
} result;

static void done(void *ud, int status, const char *hash, bool match)
{
    result *r = ud;
    r->calls++;
    r->status = status;
    r->match = match;
    r->thread = pthread_self();
    if (hash)
        snprintf(r->hash, sizeof r->hash, "%s", hash);
    if (r->counter)
        (*r->counter)++;
    if ((r->counter ? *r->counter : r->calls) >= r->want)
        event_base_loopbreak(r->base);
}

static void on_limit(evutil_socket_t fd, short what, void *base)
{
    (void)fd;
    (void)what;
    event_base_loopbreak(base);
}

/* Run the loop until r is answered (bounded: 30 s). */
static void run(struct event_base *base, result *r, int want)
{
    r->base = base;
    r->want = want;
    struct timeval limit = {30, 0};
    struct event *t = evtimer_new(base, on_limit, base);
    evtimer_add(t, &limit);
    event_base_dispatch(base);
    event_free(t);
}

START_TEST(hash_then_verify_on_the_loop_thread)
{
    struct event_base *base = event_base_new();
    mc_pwhash_cost cost;
    ck_assert(mc_pwhash_cost_named("dev", &cost));
    mc_pwhash_pool *p = mc_pwhash_pool_new(base, 2, 8, cost);
    ck_assert_ptr_nonnull(p);
    result h = {0};
    ck_assert_int_eq(mc_pwhash_hash(p, "s3cret", 6, done, &h), MC_PWHASH_OK);
    ck_assert_int_eq(h.calls, 0); /* never from inside the call */
    run(base, &h, 1);
    ck_assert_int_eq(h.calls, 1);
    ck_assert_int_eq(h.status, MC_PWHASH_OK);
    ck_assert(pthread_equal(h.thread, pthread_self()));
    ck_assert_msg(strncmp(h.hash, "$argon2id$", 10) == 0, "%s", h.hash);
    ck_assert(!mc_pwhash_needs_rehash(p, h.hash));
    mc_pwhash_cost strong;
    ck_assert(mc_pwhash_cost_named("interactive", &strong));
    ck_assert(cost.opslimit != strong.opslimit || cost.memlimit != strong.memlimit);

    result ok = {0}, wrong = {0}, junk = {0}, empty = {0};
    ck_assert_int_eq(mc_pwhash_verify(p, h.hash, "s3cret", 6, done, &ok), MC_PWHASH_OK);
    ck_assert_int_eq(mc_pwhash_verify(p, h.hash, "s3creT", 6, done, &wrong), MC_PWHASH_OK);
    ck_assert_int_eq(mc_pwhash_verify(p, "not a hash", "s3cret", 6, done, &junk), MC_PWHASH_OK);
    ck_assert_int_eq(mc_pwhash_verify(p, h.hash, "", 0, done, &empty), MC_PWHASH_OK);
    int all = 0;
    ok.counter = wrong.counter = junk.counter = empty.counter = &all;
    ok.want = wrong.want = junk.want = empty.want = 4;
    ok.base = wrong.base = junk.base = empty.base = base;
    run(base, &ok, 4);
    ck_assert_int_eq(all, 4);
    ck_assert(ok.status == MC_PWHASH_OK && ok.match);
    ck_assert(wrong.status == MC_PWHASH_OK && !wrong.match);
    ck_assert(empty.status == MC_PWHASH_OK && !empty.match);
    ck_assert_int_eq(junk.status, MC_PWHASH_FAILED);
    mc_pwhash_stats st;
    mc_pwhash_get_stats(p, &st);
    ck_assert_uint_eq(st.done, 5);
    ck_assert_uint_eq(st.failed, 1);
    ck_assert_uint_eq(st.queued, 0);

    /* too long a password: refused at once */
    static char big[MC_PWHASH_MAX_PASSWORD + 1];
    memset(big, 'x', sizeof big);
    ck_assert_int_eq(mc_pwhash_hash(p, big, sizeof big, done, &h), MC_PWHASH_TOO_LONG);
    mc_pwhash_pool_free(p);
    event_base_free(base);
}
END_TEST

START_TEST(the_queue_is_bounded_and_free_calls_nobody)
{
    struct event_base *base = event_base_new();
    mc_pwhash_cost cost;
    ck_assert(mc_pwhash_cost_named("dev", &cost));
    ck_assert_ptr_null(mc_pwhash_pool_new(base, 0, 8, cost));
    ck_assert_ptr_null(mc_pwhash_pool_new(base, 1, 0, cost));
    ck_assert_ptr_null(mc_pwhash_pool_new(NULL, 1, 8, cost));
    ck_assert(!mc_pwhash_cost_named("fast", &cost));
    ck_assert(mc_pwhash_cost_named("dev", &cost));
    mc_pwhash_pool *p = mc_pwhash_pool_new(base, 1, 3, cost);
    ck_assert_ptr_nonnull(p);
    result r[5] = {{0}};
    int all = 0;
    for (int i = 0; i < 3; i++) {
        r[i].counter = &all;
        r[i].base = base;
        r[i].want = 3;
        ck_assert_int_eq(mc_pwhash_hash(p, "pw", 2, done, &r[i]), MC_PWHASH_OK);
    }
    /* the fourth waits for nobody: refused now, never called */
    ck_assert_int_eq(mc_pwhash_hash(p, "pw", 2, done, &r[3]), MC_PWHASH_BUSY);
    mc_pwhash_stats st;
    mc_pwhash_get_stats(p, &st);
    ck_assert_uint_eq(st.refused_busy, 1);
    ck_assert_uint_eq(st.queued, 3);
    run(base, &r[0], 3);
    ck_assert_int_eq(all, 3);
    ck_assert_int_eq(r[3].calls, 0);
    /* room again */
    r[4].counter = &all;
    r[4].base = base;
    r[4].want = 100;
    ck_assert_int_eq(mc_pwhash_hash(p, "pw", 2, done, &r[4]), MC_PWHASH_OK);
    /* freed before the loop delivers it: no callback, ever */
    mc_pwhash_pool_free(p);
    struct timeval short_wait = {0, 200000};
    event_base_loopexit(base, &short_wait);
    event_base_dispatch(base);
    ck_assert_int_eq(r[4].calls, 0);
    event_base_free(base);
}
END_TEST

/* Issue 19, medium 5: one source (a client's address) holds at most its share of the
 * queue; other sources still get in; a delivered job gives its place back. The dummy hash
 * is made at the pool's cost and verifies nothing the attacker sends. */
START_TEST(one_source_holds_at_most_its_share)
{
    struct event_base *base = event_base_new();
    mc_pwhash_cost cost;
    ck_assert(mc_pwhash_cost_named("dev", &cost));
    mc_pwhash_pool *p = mc_pwhash_pool_new(base, 1, 16, cost);
    ck_assert_int_eq(mc_pwhash_set_per_source(p, 0), -1);
    ck_assert_int_eq(mc_pwhash_set_per_source(p, 2), 0);
    char dummy[MC_PWHASH_STR_MAX];
    ck_assert_int_eq(mc_pwhash_dummy(p, dummy), 0);
    ck_assert(!mc_pwhash_needs_rehash(p, dummy));
    result r[6];
    memset(r, 0, sizeof r);
    int all = 0;
    for (int i = 0; i < 6; i++) {
        r[i].counter = &all;
        r[i].base = base;
        r[i].want = 4;
    }
    ck_assert_int_eq(mc_pwhash_verify_from(p, 7, dummy, "pw", 2, done, &r[0]), MC_PWHASH_OK);
    ck_assert_int_eq(mc_pwhash_hash_from(p, 7, "pw", 2, done, &r[1]), MC_PWHASH_OK);
    ck_assert_int_eq(mc_pwhash_verify_from(p, 7, dummy, "pw", 2, done, &r[5]),
                     MC_PWHASH_SOURCE_BUSY);
    ck_assert_int_eq(mc_pwhash_verify_from(p, 8, dummy, "pw", 2, done, &r[2]), MC_PWHASH_OK);
    ck_assert_int_eq(mc_pwhash_hash(p, "pw", 2, done, &r[3]), MC_PWHASH_OK); /* no source */
    mc_pwhash_stats st;
    mc_pwhash_get_stats(p, &st);
    ck_assert_uint_eq(st.refused_source, 1);
    ck_assert_uint_eq(st.queued, 4);
    run(base, &r[0], 4);
    ck_assert_int_eq(all, 4);
    ck_assert_int_eq(r[5].calls, 0);
    ck_assert(!r[0].match && !r[2].match); /* the dummy hash matches nothing */
    /* delivered: the source's places are back */
    r[5].want = 5;
    ck_assert_int_eq(mc_pwhash_verify_from(p, 7, dummy, "pw", 2, done, &r[5]), MC_PWHASH_OK);
    run(base, &r[5], 5);
    ck_assert_int_eq(r[5].calls, 1);
    mc_pwhash_pool_free(p);
    event_base_free(base);
}
END_TEST

/* Many jobs on several threads all finish, each once. */
START_TEST(many_jobs_on_several_threads)
{
    struct event_base *base = event_base_new();
    mc_pwhash_cost cost;
    ck_assert(mc_pwhash_cost_named("dev", &cost));
    mc_pwhash_pool *p = mc_pwhash_pool_new(base, 3, 64, cost);
    enum { N = 24 };
    result r[N];
    memset(r, 0, sizeof r);
    int all = 0;
    for (int i = 0; i < N; i++) {
        r[i].counter = &all;
        r[i].want = N;
        r[i].base = base;
        char pw[16];
        snprintf(pw, sizeof pw, "pw%d", i);
        ck_assert_int_eq(mc_pwhash_hash(p, pw, strlen(pw), done, &r[i]), MC_PWHASH_OK);
    }
    run(base, &r[0], N);
    ck_assert_int_eq(all, N);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(r[i].calls, 1);
        char pw[16];
        snprintf(pw, sizeof pw, "pw%d", i);
        ck_assert_int_eq(crypto_pwhash_str_verify(r[i].hash, pw, strlen(pw)), 0);
    }
    mc_pwhash_pool_free(p);
    event_base_free(base);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pwhash_pool");
    TCase *tc = tcase_create("pwhash");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, hash_then_verify_on_the_loop_thread);
    tcase_add_test(tc, the_queue_is_bounded_and_free_calls_nobody);
    tcase_add_test(tc, many_jobs_on_several_threads);
    tcase_add_test(tc, one_source_holds_at_most_its_share);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
