/* Latency mode over mercury: the sender opens C indexed channels (ids 1..C) on one nub to
 * the relay; each due message is written into its channel and sent at once
 * (mc_channel_send), as a game sends a tick's messages. A 1 ms timer drives the schedule;
 * otherwise the sender sleeps in its event loop until its socket or the nub's timer wakes
 * it. The receiver accepts the channels and checks order per channel id. */
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "latency.h"
#include "mercury/mercury.h"

#define LAT_MSG_ID 1

typedef struct {
    const bench_latency_job *j;
    bench_sink *sink;
    bench_latency_checker ck;
    struct event_base *base;
    mc_nub *nub;
    mc_time_us linger_until;
    uint64_t last_received;
} lat_receiver;

static void lat_def(mc_message_def *def, size_t size)
{
    memset(def, 0, sizeof *def);
    def->id = LAT_MSG_ID;
    def->name = "LATENCY";
    def->style = MC_MSG_FIXED;
    def->length = (uint32_t)size;
}

static void on_message(void *ctx, const mc_message_info *info, mc_istream *data)
{
    lat_receiver *rv = ctx;
    if (rv->sink->done_sent || !info->channel)
        return;
    bench_report *r = rv->sink->report;
    size_t len = mc_istream_remaining(data);
    const uint8_t *bytes = mc_read_bytes(data, len);
    uint32_t id = mc_channel_id(info->channel);
    bench_latency_feed(&rv->ck, id ? id - 1 : rv->ck.channels, bytes, len, r);
    if (bench_latency_complete(&rv->ck, r) || r->duplicates + r->misordered + r->corrupt) {
        r->finished = bench_latency_complete(&rv->ck, r);
        bench_latency_summarise(&rv->ck, r);
        bench_sink_done(rv->sink);
        rv->linger_until = mc_clock_now_us() + rv->j->linger_us;
    }
}

static void on_receiver_timer(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    lat_receiver *rv = ctx;
    mc_time_us now = mc_clock_now_us();
    if (rv->sink->done_sent) {
        mc_nub_stats st;
        mc_nub_get_stats(rv->nub, &st);
        if (st.packets_received != rv->last_received) {
            rv->last_received = st.packets_received;
            rv->linger_until = now + rv->j->linger_us;
        }
        if (now >= rv->linger_until || now >= rv->j->deadline)
            event_base_loopbreak(rv->base);
    } else if (now >= rv->j->deadline) {
        bench_latency_summarise(&rv->ck, rv->sink->report);
        bench_sink_done(rv->sink);
        event_base_loopbreak(rv->base);
    }
}

static int lat_receive(const bench_latency_job *j, bench_sink *sink)
{
    bench_report *r = sink->report;
    lat_receiver rv;
    memset(&rv, 0, sizeof rv);
    rv.j = j;
    rv.sink = sink;
    mc_message_def def;
    lat_def(&def, j->size);
    def.handler = on_message;
    mc_interface iface = {"latency", &def, 1};
    char bind[MC_ADDRESS_STRLEN];
    mc_address a;
    mc_address_from_sockaddr(&j->addr, &a);
    mc_address_format(&a, bind, sizeof bind);
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.bind = bind;
    cfg.iface = &iface;
    cfg.handler_ctx = &rv;
    rv.base = event_base_new();
    if (!rv.base || bench_latency_checker_init(&rv.ck, j) != 0 ||
        mc_nub_new(rv.base, &cfg, &rv.nub) != MC_OK) {
        bench_report_fail(r, "cannot set up the mercury receiver");
        bench_latency_checker_free(&rv.ck);
        if (rv.base)
            event_base_free(rv.base);
        return -1;
    }
    struct event *timer = event_new(rv.base, -1, EV_PERSIST, on_receiver_timer, &rv);
    struct timeval tv = {0, 20000};
    event_add(timer, &tv);
    r->t_start = mc_clock_now_us();
    bench_sink_ready(sink, mc_nub_address(rv.nub)->port);
    event_base_dispatch(rv.base);
    bench_sink_done(sink);
    event_free(timer);
    mc_nub_free(rv.nub);
    event_base_free(rv.base);
    bench_latency_checker_free(&rv.ck);
    return 0;
}

typedef struct {
    const bench_latency_job *j;
    bench_report *r;
    struct event_base *base;
    mc_nub *nub;
    mc_channel **ch;
    uint64_t *sent; /* per channel */
    uint64_t per_channel, total_sent;
    mc_time_us t0;
    mc_message_def def;
    uint8_t *buf;
    int dead;
} lat_sender;

static void on_dead(void *ctx, mc_channel *ch, mc_channel_death reason)
{
    (void)ch;
    lat_sender *s = ctx;
    if (reason == MC_CHANNEL_DEATH_NUB_FREED)
        return;
    s->dead = 1;
    bench_report_fail(s->r, "mercury channel died: %s", mc_channel_death_name(reason));
}

static bool all_idle(const lat_sender *s)
{
    for (uint32_t i = 0; i < s->j->channels; i++)
        if (!mc_channel_idle(s->ch[i]))
            return false;
    return true;
}

static void on_sender_timer(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    lat_sender *s = ctx;
    mc_time_us now = mc_clock_now_us();
    for (uint32_t i = 0; i < s->j->channels && !s->dead; i++) {
        while (s->sent[i] < s->per_channel &&
               bench_latency_due(s->j, s->t0, i, s->sent[i]) <= now) {
            bench_latency_fill(s->buf, s->j->size, i, (uint32_t)s->sent[i], mc_clock_now_us());
            if (mc_channel_send_message(s->ch[i], &s->def, s->buf, s->j->size) != MC_OK ||
                mc_channel_send(s->ch[i]) != MC_OK) {
                bench_report_fail(s->r, "mercury: cannot send on channel %u", i + 1);
                s->dead = 1;
                break;
            }
            s->sent[i]++;
            s->total_sent++;
        }
    }
    bool done = s->total_sent == s->per_channel * s->j->channels;
    if (s->dead || now >= s->j->deadline || (done && all_idle(s))) {
        s->r->finished = done && !s->dead && all_idle(s);
        event_base_loopbreak(s->base);
    }
}

static int lat_send(const bench_latency_job *j, bench_sink *sink)
{
    bench_report *r = sink->report;
    lat_sender s;
    memset(&s, 0, sizeof s);
    s.j = j;
    s.r = r;
    lat_def(&s.def, j->size);
    mc_interface iface = {"latency", &s.def, 1};
    s.per_channel = (uint64_t)j->rate * j->duration_us / MC_US_PER_S;
    s.base = event_base_new();
    s.ch = calloc(j->channels, sizeof *s.ch);
    s.sent = calloc(j->channels, sizeof *s.sent);
    s.buf = malloc(j->size);
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.iface = &iface;
    cfg.accept_channels = false;
    if (!s.base || !s.ch || !s.sent || !s.buf || mc_nub_new(s.base, &cfg, &s.nub) != MC_OK) {
        bench_report_fail(r, "cannot set up the mercury sender");
        free(s.ch);
        free(s.sent);
        free(s.buf);
        if (s.base)
            event_base_free(s.base);
        return -1;
    }
    mc_nub_set_channel_dead_handler(s.nub, on_dead, &s);
    mc_address peer;
    mc_address_from_sockaddr(&j->addr, &peer);
    for (uint32_t i = 0; i < j->channels; i++)
        s.ch[i] = mc_nub_indexed_channel(s.nub, &peer, i + 1, MC_CHANNEL_INTERNAL);
    struct event *timer = event_new(s.base, -1, EV_PERSIST, on_sender_timer, &s);
    struct timeval tv = {0, 1000};
    event_add(timer, &tv);
    s.t0 = mc_clock_now_us();
    r->t_start = s.t0;
    bench_sink_ready(sink, 0);
    event_base_dispatch(s.base);
    mc_nub_stats st;
    mc_nub_get_stats(s.nub, &st);
    r->count = s.total_sent;
    r->resends = st.resends;
    r->t_last = mc_clock_now_us();
    event_free(timer);
    mc_nub_free(s.nub);
    event_base_free(s.base);
    free(s.ch);
    free(s.sent);
    free(s.buf);
    return 0;
}

const bench_latency_transport bench_latency_mercury = {"mercury", lat_receive, lat_send};
