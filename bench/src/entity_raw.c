/* entity-bench's raw mercury baseline: the entity phases' exact messages without the
 * entity layer, between two forked processes.
 *
 * The receiver is a nub accepting internal channels with one variable-length message (id
 * 32, 4-byte length field, like ENTITY_CALL). Each message carries the same 12-byte call
 * header the engine writes (entity id, salt, method, caller) and the same arguments:
 * method 1 "hit" (u32 seq, f32 x) counts and checks the order; method 2 "sync" (u32 upTo) is
 * a request answered with i8 status, u32 seen, u32 order errors; method 3 "rtt" (u32 seq) is
 * a request answered with i8 status, u32 seq. No entity lookup, no def checks, no dispatch
 * table: what is left is mercury (and the same header parsing).
 *
 * The sender paces exactly like the bench game: one-way, `batch` hits then a sync request,
 * at most `window` syncs outstanding, done when the last sync answers; two-way, one rtt
 * request at a time, each timed from the send to its reply.
 */
#include "entity_bench.h"

#include <errno.h>
#include <event2/event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "common/mailbox_ref.h"
#include "mercury/mercury.h"

#define RAW_MSG_ID 32
#define RAW_HIT 1
#define RAW_SYNC 2
#define RAW_RTT 3
#define RAW_ENTITY 1
#define RAW_SALT mc_salt_pack(MC_COMPONENT_CELL, 1) /* what the entity call carries */

typedef struct {
    int32_t ok;
    uint64_t count;
    double elapsed_s, p50_us, p99_us, max_us;
    char error[160];
} raw_report;

typedef struct {
    int mode;
    uint32_t count, batch, window;
    mc_time_us deadline;
    uint16_t port; /* sender: the receiver's */
} raw_cfg;

/* ---- receiver ------------------------------------------------------------------------ */

typedef struct {
    mc_nub *nub;
    uint32_t seen, last, order_errors;
    double sum;
} raw_receiver;

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void on_raw(void *ctx, const mc_message_info *info, mc_istream *data)
{
    raw_receiver *rv = ctx;
    int32_t entity = mc_read_i32(data);
    uint16_t salt = mc_read_u16(data);
    uint16_t method = mc_read_u16(data);
    int32_t caller = mc_read_i32(data);
    if (!mc_istream_ok(data) || entity != RAW_ENTITY || salt != RAW_SALT || caller < 0)
        return;
    uint32_t seq = mc_read_u32(data);
    if (method == RAW_HIT) {
        float x = mc_read_f32(data);
        if (!mc_istream_ok(data))
            return;
        if (seq != rv->last + 1)
            rv->order_errors++;
        rv->last = seq;
        rv->seen++;
        rv->sum += x;
        return;
    }
    if (!mc_istream_ok(data) || !info->is_request)
        return;
    uint8_t reply[9] = {0};
    size_t n = 5;
    if (method == RAW_SYNC) {
        if (seq != rv->last)
            rv->order_errors++;
        put_u32(reply + 1, rv->seen);
        put_u32(reply + 5, rv->order_errors);
        n = 9;
    } else {
        rv->seen++;
        put_u32(reply + 1, seq);
    }
    mc_reply_to(rv->nub, info->channel, info->source, info->reply_id, reply, n);
}

static void on_deadline(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    event_base_loopbreak(ctx);
}

static int raw_receive(void *ctx, int fd)
{
    const raw_cfg *cfg = ctx;
    raw_receiver rv;
    memset(&rv, 0, sizeof rv);
    mc_message_def def = {RAW_MSG_ID, "RAW_CALL", MC_MSG_VARIABLE, 4, on_raw};
    mc_interface iface = {"raw", &def, 1};
    struct event_base *base = event_base_new();
    if (!base)
        return -1;
    mc_nub_config nc;
    mc_nub_config_init(&nc);
    nc.bind = "127.0.0.1:0";
    nc.iface = &iface;
    nc.handler_ctx = &rv;
    nc.accept_channels = true;
    nc.accept_traits = MC_CHANNEL_INTERNAL;
    if (mc_nub_new(base, &nc, &rv.nub) != MC_OK) {
        event_base_free(base);
        return -1;
    }
    uint16_t port = mc_nub_address(rv.nub)->port;
    if (write(fd, &port, sizeof port) != (ssize_t)sizeof port) {
        mc_nub_free(rv.nub);
        event_base_free(base);
        return -1;
    }
    /* Serve until killed by the harness or the deadline (plus a margin for the last acks). */
    struct event *stop = evtimer_new(base, on_deadline, base);
    mc_time_us left = cfg->deadline + 3 * MC_US_PER_S - mc_clock_now_us();
    struct timeval tv = {(time_t)(left / MC_US_PER_S), (suseconds_t)(left % MC_US_PER_S)};
    if (stop && left > 0 && evtimer_add(stop, &tv) == 0)
        event_base_dispatch(base);
    if (stop)
        event_free(stop);
    mc_nub_free(rv.nub);
    event_base_free(base);
    return 0;
}

/* ---- sender -------------------------------------------------------------------------- */

typedef struct {
    const raw_cfg *cfg;
    struct event_base *base;
    mc_channel *ch;
    const mc_message_def *def;
    raw_report *r;
    uint32_t sent, answered, outstanding, seen, order_errors;
    mc_time_us t0, t_sent, t_end;
    double *samples;
    bool done;
} raw_sender;

static void finish(raw_sender *s, const char *error)
{
    if (s->done)
        return;
    s->done = true;
    s->t_end = mc_clock_now_us();
    if (error)
        snprintf(s->r->error, sizeof s->r->error, "%s", error);
    event_base_loopbreak(s->base);
}

static void write_call(uint8_t *buf, uint16_t method, uint32_t seq)
{
    put_u32(buf, RAW_ENTITY);
    buf[4] = (uint8_t)(RAW_SALT >> 8);
    buf[5] = (uint8_t)RAW_SALT;
    buf[6] = (uint8_t)(method >> 8);
    buf[7] = (uint8_t)method;
    put_u32(buf + 8, 0);
    put_u32(buf + 12, seq);
}

static void pump(raw_sender *s);

static void on_sync_reply(void *ctx, mc_reply_status status, const mc_message_info *info,
                          mc_istream *data)
{
    (void)info;
    raw_sender *s = ctx;
    if (s->done)
        return;
    s->outstanding--;
    if (status != MC_REPLY_OK) {
        finish(s, "a sync request failed");
        return;
    }
    int8_t st = mc_read_i8(data);
    uint32_t seen = mc_read_u32(data), errors = mc_read_u32(data);
    if (!mc_istream_ok(data) || st != 0) {
        finish(s, "a sync reply was malformed");
        return;
    }
    s->answered++;
    s->seen = seen;
    s->order_errors = errors;
    if (s->sent == s->cfg->count && s->outstanding == 0) {
        finish(s, seen == s->cfg->count && errors == 0 ? NULL
                                                       : "the receiver missed or reordered hits");
        return;
    }
    pump(s);
}

static void pump(raw_sender *s)
{
    const raw_cfg *c = s->cfg;
    uint8_t buf[20];
    while (!s->done && s->outstanding < c->window && s->sent < c->count) {
        uint32_t n = c->count - s->sent < c->batch ? c->count - s->sent : c->batch;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t seq = s->sent + 1;
            write_call(buf, RAW_HIT, seq);
            float x = (float)(seq & 1023) * 0.5f;
            uint32_t xb;
            memcpy(&xb, &x, sizeof xb);
            put_u32(buf + 16, xb);
            if (mc_channel_send_message(s->ch, s->def, buf, 20) != MC_OK) {
                finish(s, "mc_channel_send_message failed");
                return;
            }
            s->sent = seq;
        }
        write_call(buf, RAW_SYNC, s->sent);
        if (mc_channel_request(s->ch, s->def, buf, 16, on_sync_reply, s,
                               5 * MC_US_PER_S) != MC_OK) {
            finish(s, "mc_channel_request failed");
            return;
        }
        s->outstanding++;
    }
}

static int send_rtt(raw_sender *s);

static void on_rtt_reply(void *ctx, mc_reply_status status, const mc_message_info *info,
                         mc_istream *data)
{
    (void)info;
    raw_sender *s = ctx;
    if (s->done)
        return;
    mc_time_us now = mc_clock_now_us();
    if (status != MC_REPLY_OK) {
        finish(s, "a round-trip request failed");
        return;
    }
    int8_t st = mc_read_i8(data);
    uint32_t seq = mc_read_u32(data);
    if (!mc_istream_ok(data) || st != 0 || seq != s->sent) {
        finish(s, "a round-trip reply was malformed");
        return;
    }
    s->samples[s->answered++] = (double)(now - s->t_sent);
    if (s->sent == s->cfg->count) {
        finish(s, NULL);
        return;
    }
    if (send_rtt(s) != 0)
        finish(s, "mc_channel_request failed");
}

static int send_rtt(raw_sender *s)
{
    uint8_t buf[16];
    uint32_t seq = s->sent + 1;
    write_call(buf, RAW_RTT, seq);
    s->t_sent = mc_clock_now_us();
    if (mc_channel_request(s->ch, s->def, buf, 16, on_rtt_reply, s, 5 * MC_US_PER_S) != MC_OK)
        return -1;
    s->sent = seq;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *v, uint32_t n, double q)
{
    if (n == 0)
        return 0;
    double rank = q * n;
    uint32_t i = (uint32_t)rank;
    if ((double)i < rank)
        i++;
    i = i < 1 ? 0 : i - 1;
    return v[i < n ? i : n - 1];
}

static int raw_send(void *ctx, int fd)
{
    const raw_cfg *cfg = ctx;
    raw_report r;
    memset(&r, 0, sizeof r);
    raw_sender s;
    memset(&s, 0, sizeof s);
    s.cfg = cfg;
    s.r = &r;
    mc_message_def def = {RAW_MSG_ID, "RAW_CALL", MC_MSG_VARIABLE, 4, NULL};
    mc_interface iface = {"raw", &def, 1};
    s.def = &def;
    s.base = event_base_new();
    if (cfg->mode == 2)
        s.samples = malloc((size_t)cfg->count * sizeof *s.samples);
    mc_nub *nub = NULL;
    mc_nub_config nc;
    mc_nub_config_init(&nc);
    nc.bind = "127.0.0.1:0";
    nc.iface = &iface;
    nc.accept_channels = false;
    struct event *stop = NULL;
    if (!s.base || (cfg->mode == 2 && !s.samples) || mc_nub_new(s.base, &nc, &nub) != MC_OK) {
        snprintf(r.error, sizeof r.error, "cannot set up the raw sender");
        goto out;
    }
    mc_address peer;
    char peer_text[32];
    snprintf(peer_text, sizeof peer_text, "127.0.0.1:%u", (unsigned)cfg->port);
    if (mc_address_parse(peer_text, &peer) != MC_OK) {
        snprintf(r.error, sizeof r.error, "cannot parse the receiver address");
        goto out;
    }
    s.ch = mc_nub_channel(nub, &peer, MC_CHANNEL_INTERNAL);
    stop = evtimer_new(s.base, on_deadline, s.base);
    mc_time_us left = cfg->deadline - mc_clock_now_us();
    struct timeval tv = {(time_t)(left / MC_US_PER_S), (suseconds_t)(left % MC_US_PER_S)};
    if (!s.ch || !stop || left <= 0 || evtimer_add(stop, &tv) != 0) {
        snprintf(r.error, sizeof r.error, "cannot open the raw channel");
        goto out;
    }
    s.t0 = mc_clock_now_us();
    if (cfg->mode == 1)
        pump(&s);
    else if (send_rtt(&s) != 0)
        finish(&s, "mc_channel_request failed");
    if (!s.done)
        event_base_dispatch(s.base);
    if (!s.done)
        snprintf(r.error, sizeof r.error, "did not finish before the time limit (%u answered)",
                 s.answered);
    else if (!r.error[0]) {
        r.ok = 1;
        r.count = cfg->count;
        r.elapsed_s = (double)(s.t_end - s.t0) / 1e6;
        if (cfg->mode == 2) {
            qsort(s.samples, s.answered, sizeof *s.samples, cmp_double);
            r.p50_us = quantile(s.samples, s.answered, 0.50);
            r.p99_us = quantile(s.samples, s.answered, 0.99);
            r.max_us = s.samples[s.answered - 1];
        }
    }
out:
    if (stop)
        event_free(stop);
    if (nub)
        mc_nub_free(nub);
    if (s.base)
        event_base_free(s.base);
    free(s.samples);
    return write(fd, &r, sizeof r) == (ssize_t)sizeof r ? 0 : -1;
}

/* ---- harness ------------------------------------------------------------------------- */

/* Read exactly n bytes from fd before the deadline. */
static int read_full(int fd, void *buf, size_t n, mc_time_us deadline)
{
    size_t got = 0;
    while (got < n) {
        mc_time_us now = mc_clock_now_us();
        if (now >= deadline)
            return -1;
        struct pollfd pf = {fd, POLLIN, 0};
        int k = poll(&pf, 1, (int)((deadline - now) / MC_US_PER_MS) + 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

int eb_raw_phase(const eb_options *o, int mode, uint32_t count, eb_result *res)
{
    memset(res, 0, sizeof *res);
    raw_cfg cfg = {.mode = mode, .count = count, .batch = mode == 1 ? o->batch : 1,
                   .window = mode == 1 ? o->window : 1,
                   .deadline = mc_clock_now_us() + (mc_time_us)o->time_limit_s * MC_US_PER_S};
    bench_child rx, tx;
    memset(&tx, 0, sizeof tx);
    tx.fd = -1;
    if (bench_child_spawn(&rx, "raw receiver", raw_receive, &cfg, NULL, 0) != 0) {
        snprintf(res->error, sizeof res->error, "cannot fork the raw receiver: %s",
                 strerror(errno));
        return -1;
    }
    int rc = -1;
    if (read_full(rx.fd, &cfg.port, sizeof cfg.port, mc_clock_now_us() + 10 * MC_US_PER_S) != 0) {
        snprintf(res->error, sizeof res->error, "the raw receiver did not start");
        goto out;
    }
    int keep[1] = {rx.fd};
    if (bench_child_spawn(&tx, "raw sender", raw_send, &cfg, keep, 1) != 0) {
        snprintf(res->error, sizeof res->error, "cannot fork the raw sender: %s",
                 strerror(errno));
        goto out;
    }
    raw_report r;
    if (read_full(tx.fd, &r, sizeof r, cfg.deadline + 2 * MC_US_PER_S) != 0) {
        snprintf(res->error, sizeof res->error, "the raw sender did not report in time");
        goto out;
    }
    if (!r.ok) {
        snprintf(res->error, sizeof res->error, "%s", r.error);
        goto out;
    }
    res->ran = true;
    res->count = r.count;
    res->elapsed_s = r.elapsed_s;
    res->has_rtt = mode == 2;
    res->p50_us = r.p50_us;
    res->p99_us = r.p99_us;
    res->max_us = r.max_us;
    rc = 0;
out:
    /* The sender exits once it has reported; the receiver is killed. CPU from wait4. */
    if (tx.pid > 0)
        bench_child_wait(&tx, 2000);
    bench_child_finish(&rx);
    if (rc == 0) {
        res->cpu_s[0] = bench_child_cpu_s(&tx);
        res->cpu_s[1] = bench_child_cpu_s(&rx);
    }
    return rc;
}
