/* Latency mode: the message header, the receiver's checker and percentiles, the schedule,
 * and the orchestration (receiver, relay and sender processes per transport) and report. */
#include "latency.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "common/log.h"
#include "relay.h"

#define READY_TIMEOUT_MS 5000
#define GRACE_US (20 * MC_US_PER_S)     /* after the last send: acks, stragglers */
#define LINGER_US (2 * MC_US_PER_S)
#define PUMP_SLICE_MS 50

static void store_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t load_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void bench_latency_fill(uint8_t *buf, size_t size, uint32_t channel, uint32_t seq,
                        mc_time_us sent)
{
    store_le(buf, channel, 4);
    store_le(buf + 4, seq, 4);
    store_le(buf + 8, sent, 8);
    for (size_t i = BENCH_LATENCY_HEADER; i < size; i++)
        buf[i] = (uint8_t)(seq * 31u + i);
}

int bench_latency_checker_init(bench_latency_checker *c, const bench_latency_job *j)
{
    memset(c, 0, sizeof *c);
    c->channels = j->channels;
    uint64_t per = (uint64_t)j->rate * j->duration_us / MC_US_PER_S;
    c->expected = per * j->channels;
    c->next = calloc(j->channels, sizeof *c->next);
    c->cap = c->expected ? c->expected : 1;
    c->samples = malloc(c->cap * sizeof *c->samples);
    return c->next && c->samples ? 0 : -1;
}

void bench_latency_checker_free(bench_latency_checker *c)
{
    free(c->next);
    free(c->samples);
    memset(c, 0, sizeof *c);
}

int bench_latency_feed(bench_latency_checker *c, uint32_t channel, const uint8_t *data,
                       size_t len, bench_report *r)
{
    mc_time_us now = mc_clock_now_us();
    if (len < BENCH_LATENCY_HEADER || channel >= c->channels ||
        load_le(data, 4) != channel) {
        r->corrupt++;
        return 0;
    }
    uint32_t seq = (uint32_t)load_le(data + 4, 4);
    mc_time_us sent = load_le(data + 8, 8);
    for (size_t i = BENCH_LATENCY_HEADER; i < len; i++) {
        if (data[i] != (uint8_t)(seq * 31u + i)) {
            r->corrupt++;
            return 0;
        }
    }
    if (seq != c->next[channel]) {
        if (seq < c->next[channel])
            r->duplicates++;
        else
            r->misordered++;
        return 0;
    }
    c->next[channel]++;
    r->count++;
    if (!r->t_first)
        r->t_first = now;
    r->t_last = now;
    if (c->nsamples < c->cap)
        c->samples[c->nsamples++] = now >= sent ? now - sent : 0;
    return 1;
}

int bench_latency_complete(const bench_latency_checker *c, const bench_report *r)
{
    return r->count == c->expected && r->duplicates + r->misordered + r->corrupt == 0;
}

static int cmp_time(const void *a, const void *b)
{
    mc_time_us x = *(const mc_time_us *)a, y = *(const mc_time_us *)b;
    return x < y ? -1 : x > y;
}

/* The value below which a fraction q of the samples lie (nearest rank). */
static mc_time_us rank(const mc_time_us *s, uint64_t n, double q)
{
    if (!n)
        return 0;
    uint64_t k = (uint64_t)(q * (double)n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return s[k - 1];
}

void bench_latency_summarise(bench_latency_checker *c, bench_report *r)
{
    qsort(c->samples, c->nsamples, sizeof *c->samples, cmp_time);
    r->lat_samples = c->nsamples;
    r->lat_p50 = rank(c->samples, c->nsamples, 0.5);
    r->lat_p99 = rank(c->samples, c->nsamples, 0.99);
    r->lat_p999 = rank(c->samples, c->nsamples, 0.999);
    r->lat_max = c->nsamples ? c->samples[c->nsamples - 1] : 0;
}

mc_time_us bench_latency_due(const bench_latency_job *j, mc_time_us t0, uint32_t i, uint64_t k)
{
    /* channel i starts i/C of a period late, so sends spread evenly */
    uint64_t period = MC_US_PER_S / j->rate;
    return t0 + k * period + period * i / j->channels;
}

/* ---- orchestration ---- */
typedef struct {
    const bench_latency_transport *t;
    bench_latency_job job;
} role_ctx;

static int receiver_main(void *ctx, int fd)
{
    role_ctx *rc = ctx;
    mc_log_set_process_name("bench-receiver");
    bench_report r;
    memset(&r, 0, sizeof r);
    bench_sink s = {fd, &r, 0};
    int rv = rc->t->receive(&rc->job, &s);
    bench_sink_done(&s);
    return rv;
}

static int sender_main(void *ctx, int fd)
{
    role_ctx *rc = ctx;
    mc_log_set_process_name("bench-sender");
    bench_report r;
    memset(&r, 0, sizeof r);
    bench_sink s = {fd, &r, 0};
    int rv = rc->t->send(&rc->job, &s);
    bench_sink_done(&s);
    return rv;
}

static int relay_main(void *ctx, int fd)
{
    mc_log_set_process_name("bench-relay");
    bench_report r;
    memset(&r, 0, sizeof r);
    bench_sink s = {fd, &r, 0};
    return bench_relay_run(ctx, &s);
}

static struct sockaddr_in loopback(uint16_t port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    return a;
}

static bool wait_ready(bench_child *c)
{
    mc_time_us until = mc_clock_now_us() + (mc_time_us)READY_TIMEOUT_MS * MC_US_PER_MS;
    while (!c->ready && !c->eof && mc_clock_now_us() < until) {
        bench_child *one = c;
        bench_children_pump(&one, 1, PUMP_SLICE_MS);
    }
    return c->ready;
}

typedef struct {
    bool ran, ok;
    bench_report recv, send, relay;
} latency_result;

/* One transport: receiver, relay, sender; never leaves a child behind. */
static void run_one(const bench_options *o, const bench_latency_transport *t, latency_result *res)
{
    memset(res, 0, sizeof *res);
    bench_child rc, lc, sc;
    memset(&rc, 0, sizeof rc);
    memset(&lc, 0, sizeof lc);
    memset(&sc, 0, sizeof sc);
    mc_time_us start = mc_clock_now_us();
    mc_time_us duration = (mc_time_us)(o->duration_s * MC_US_PER_S);
    mc_time_us hard_stop = start + duration + GRACE_US + 5 * MC_US_PER_S;
    role_ctx ctx = {t, {o->channels, o->rate, duration, o->size, start + duration + GRACE_US,
                        LINGER_US, loopback(0)}};
    int stop[2] = {-1, -1};
    if (bench_child_spawn(&rc, "receiver", receiver_main, &ctx, NULL, 0) != 0 ||
        !wait_ready(&rc)) {
        fprintf(stdout, "%-8s receiver did not start\n", t->name);
        bench_child_finish(&rc);
        return;
    }
    bench_relay_config rcfg = {.loss = o->loss,
                               .dup = o->dup,
                               .reorder = o->reorder,
                               .seed = o->seed,
                               .front = loopback(0),
                               .target = loopback(rc.ready_report.port),
                               .stop_fd = -1,
                               .deadline = hard_stop + 2 * MC_US_PER_S,
                               .delay_us = (mc_time_us)o->delay_ms * MC_US_PER_MS};
    if (pipe(stop) != 0) {
        bench_child_finish(&rc);
        return;
    }
    rcfg.stop_fd = stop[0];
    if (bench_child_spawn(&lc, "relay", relay_main, &rcfg, &stop[1], 1) != 0 || !wait_ready(&lc)) {
        fprintf(stdout, "%-8s relay did not start\n", t->name);
        close(stop[0]);
        close(stop[1]);
        bench_child_finish(&lc);
        bench_child_finish(&rc);
        return;
    }
    close(stop[0]);
    role_ctx sctx = ctx;
    sctx.job.addr = loopback(lc.ready_report.port);
    if (bench_child_spawn(&sc, "sender", sender_main, &sctx, &stop[1], 1) != 0) {
        close(stop[1]);
        bench_child_finish(&lc);
        bench_child_finish(&rc);
        return;
    }
    bench_child *watch[2] = {&rc, &sc};
    while (mc_clock_now_us() < hard_stop && !(sc.eof && (rc.has_result || rc.eof)))
        bench_children_pump(watch, 2, PUMP_SLICE_MS);
    bench_child_wait(&sc, 500);
    bench_child_wait(&rc, 0);
    close(stop[1]);
    mc_time_us until = mc_clock_now_us() + MC_US_PER_S;
    while (!lc.has_result && !lc.eof && mc_clock_now_us() < until) {
        bench_child *one = &lc;
        bench_children_pump(&one, 1, PUMP_SLICE_MS);
    }
    bench_child_wait(&lc, 500);
    res->ran = true;
    res->recv = rc.result;
    res->send = sc.result;
    res->relay = lc.result;
    res->ok = rc.has_result && rc.result.finished && sc.has_result;
}

static double ms(mc_time_us us) { return (double)us / 1000.0; }

static void print_one(const bench_options *o, const char *name, const latency_result *r)
{
    uint64_t expected = (uint64_t)o->channels * o->rate * (uint64_t)(o->duration_s * MC_US_PER_S) /
                        MC_US_PER_S;
    if (!r->ran) {
        printf("%-8s did not run\n", name);
        return;
    }
    const bench_report *rv = &r->recv;
    printf("%-8s %s: %llu/%llu delivered in order; latency p50 %.1f ms, p99 %.1f ms, "
           "p99.9 %.1f ms, max %.1f ms; resends per message %.3f\n",
           name, r->ok ? "ok" : "FAILED", (unsigned long long)rv->count,
           (unsigned long long)expected, ms(rv->lat_p50), ms(rv->lat_p99), ms(rv->lat_p999),
           ms(rv->lat_max),
           r->send.count ? (double)r->send.resends / (double)r->send.count : 0.0);
    if (rv->duplicates + rv->misordered + rv->corrupt)
        printf("  receiver saw %llu duplicates, %llu out of order, %llu corrupt\n",
               (unsigned long long)rv->duplicates, (unsigned long long)rv->misordered,
               (unsigned long long)rv->corrupt);
    if (rv->error[0] || r->send.error[0])
        printf("  %s%s%s\n", rv->error, rv->error[0] && r->send.error[0] ? "; " : "",
               r->send.error);
    printf("  relay    %llu datagrams in, %llu dropped, %llu duplicated, %llu reordered\n",
           (unsigned long long)r->relay.relay_in, (unsigned long long)r->relay.relay_dropped,
           (unsigned long long)r->relay.relay_duplicated,
           (unsigned long long)r->relay.relay_reordered);
}

int bench_latency_main(const bench_options *o)
{
    const bench_latency_transport *order[2] = {&bench_latency_mercury, &bench_latency_enet};
    bool run[2] = {o->run_mercury, o->run_enet};
    latency_result res[2];
    memset(res, 0, sizeof res);
    bool all_ok = true;
    for (int i = 0; i < 2; i++) {
        if (!run[i])
            continue;
        run_one(o, order[i], &res[i]);
        print_one(o, order[i]->name, &res[i]);
        fflush(stdout);
        all_ok = all_ok && res[i].ok;
    }
    /* The floor: the p99 message needs k resends, the least k with loss^(k+1) <= 1% (one
     * at 5% loss, two at 20%); each resend comes at best one round trip after the send it
     * replaces (the ack that did not come back), so the message arrives after one-way
     * delay + k x (detection: one round trip) = (2k + 1) x delay. */
    int k = 0;
    for (double p = o->loss; p > 0.01 && k < 10; p *= o->loss)
        k++;
    double floor_ms = (2.0 * k + 1.0) * o->delay_ms;
    if (run[0] && res[0].ran)
        printf("floor %.1f ms (the p99 message needs %d resend%s: one-way delay + %d x a "
               "round trip to detect the loss); mercury p99 = %.2f x floor\n",
               floor_ms, k, k == 1 ? "" : "s", k,
               floor_ms > 0 ? ms(res[0].recv.lat_p99) / floor_ms : 0.0);
    if (run[0] && run[1]) {
        double e = ms(res[1].recv.lat_p99);
        if (e > 0)
            printf("latency p99 mercury/enet: %.2f\n", ms(res[0].recv.lat_p99) / e);
        else
            printf("latency p99 mercury/enet: %s\n", "n/a");
    }
    return all_ok ? 0 : 1;
}
