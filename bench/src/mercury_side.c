/* The mercury side: the workload as one fixed-length message type on an internal channel.
 *
 * The receiver is a nub that accepts channels; its handler feeds each message to the
 * checker. The sender opens an internal channel (window 4096 packets), adds messages with
 * mc_channel_send_message (full packets leave at once, several messages per packet), and
 * paces itself by the channel's overflow queue: it adds messages only while fewer than
 * MERCURY_MAX_OVERFLOW packets wait beyond the window, so memory stays bounded, and runs
 * the event loop between batches so acknowledgements are processed. The sender is done
 * when every message is written and the channel is idle (nothing unacked or queued).
 */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mercury/auth.h"
#include "mercury/mercury.h"
#include "payload.h"
#include "transport.h"

#define MERCURY_BENCH_MSG_ID 1
#define MERCURY_BATCH 256
#define MERCURY_MAX_OVERFLOW 64u
#define MERCURY_TIMER_US (20 * MC_US_PER_MS)

typedef struct {
    const bench_workload *w;
    bench_sink *sink;
    bench_checker ck;
    struct event_base *base;
    mc_nub *nub;
    mc_time_us linger_until;
    uint64_t last_received;
} mercury_receiver;

static void on_bench_message(void *ctx, const mc_message_info *info, mc_istream *data)
{
    mercury_receiver *rv = ctx;
    if (rv->sink->done_sent)
        return;
    bench_report *r = rv->sink->report;
    size_t len = mc_istream_remaining(data);
    const uint8_t *bytes = mc_read_bytes(data, len);
    if (!bytes) {
        r->corrupt++;
    } else {
        bench_checker_feed(&rv->ck, bytes, len, r);
    }
    if (bench_checker_complete(&rv->ck, r) || r->duplicates + r->misordered + r->corrupt > 0) {
        r->finished = bench_checker_complete(&rv->ck, r);
        bench_sink_done(rv->sink);
        rv->linger_until = mc_clock_now_us() + rv->w->linger_us;
    }
}

static void on_receiver_timer(evutil_socket_t fd, short what, void *ctx)
{
    mercury_receiver *rv = ctx;
    mc_time_us now = mc_clock_now_us();
    if (rv->sink->done_sent) {
        /* Linger while the sender still talks (resends, keepalives), so its last acks get
         * through: stop after linger_us of silence, or at the deadline. */
        mc_nub_stats st;
        mc_nub_get_stats(rv->nub, &st);
        if (st.packets_received != rv->last_received) {
            rv->last_received = st.packets_received;
            rv->linger_until = now + rv->w->linger_us;
        }
    }
    if (rv->sink->done_sent ? (now >= rv->linger_until || now >= rv->w->deadline)
                            : now >= rv->w->deadline) {
        bench_sink_done(rv->sink);
        event_base_loopbreak(rv->base);
    }
}

static void format_bind(const struct sockaddr_in *sa, char *buf, size_t len)
{
    mc_address a;
    mc_address_from_sockaddr(sa, &a);
    mc_address_format(&a, buf, len);
}

static void bench_def(mc_message_def *def, size_t size)
{
    memset(def, 0, sizeof *def);
    def->id = MERCURY_BENCH_MSG_ID;
    def->name = "BENCH_DATA";
    def->style = MC_MSG_FIXED;
    def->length = (uint32_t)size;
}

/* The secret of the authenticated side (a benchmark's: both roles know it). */
static const uint8_t bench_secret[MC_AUTH_SECRET_BYTES] = {
    0x6d, 0x65, 0x72, 0x63, 0x75, 0x72, 0x79, 0x2d, 0x62, 0x65, 0x6e, 0x63, 0x68};

static void bench_auth(mc_nub_config *cfg, bool auth)
{
    cfg->authenticate = auth;
    if (auth)
        memcpy(cfg->auth_secret, bench_secret, sizeof bench_secret);
}

static int receive_side(const bench_workload *w, const struct sockaddr_in *bind_addr,
                        bench_sink *sink, bool auth)
{
    bench_report *r = sink->report;
    mercury_receiver rv;
    memset(&rv, 0, sizeof rv);
    rv.w = w;
    rv.sink = sink;
    bench_checker_init(&rv.ck, w->messages, w->size);

    mc_message_def def;
    bench_def(&def, w->size);
    def.handler = on_bench_message;
    mc_interface iface = {"bench", &def, 1};

    rv.base = event_base_new();
    if (!rv.base) {
        bench_report_fail(r, "event_base_new failed");
        return -1;
    }
    char bind[MC_ADDRESS_STRLEN];
    format_bind(bind_addr, bind, sizeof bind);
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.bind = bind;
    cfg.iface = &iface;
    cfg.handler_ctx = &rv;
    cfg.accept_channels = true;
    cfg.accept_traits = MC_CHANNEL_INTERNAL;
    bench_auth(&cfg, auth);
    mc_nub *nub = NULL;
    int st = mc_nub_new(rv.base, &cfg, &nub);
    if (st != MC_OK) {
        bench_report_fail(r, "cannot create the mercury nub on %s: %s", bind, mc_status_name(st));
        event_base_free(rv.base);
        return -1;
    }
    rv.nub = nub;
    struct event *timer = event_new(rv.base, -1, EV_PERSIST, on_receiver_timer, &rv);
    struct timeval tv = {0, (suseconds_t)MERCURY_TIMER_US};
    if (!timer || event_add(timer, &tv) != 0) {
        bench_report_fail(r, "cannot add the receiver timer");
        if (timer)
            event_free(timer);
        mc_nub_free(nub);
        event_base_free(rv.base);
        return -1;
    }
    r->t_start = mc_clock_now_us();
    bench_sink_ready(sink, mc_nub_address(nub)->port);
    event_base_dispatch(rv.base);
    bench_sink_done(sink);
    event_free(timer);
    mc_nub_free(nub);
    event_base_free(rv.base);
    return 0;
}

typedef struct {
    bench_report *r;
    int dead;
} mercury_sender;

static void on_channel_dead(void *ctx, mc_channel *ch, mc_channel_death reason)
{
    mercury_sender *s = ctx;
    if (reason == MC_CHANNEL_DEATH_NUB_FREED)
        return;
    s->dead = 1;
    bench_report_fail(s->r, "mercury channel died: %s", mc_channel_death_name(reason));
}

static int send_side(const bench_workload *w, const struct sockaddr_in *peer_addr,
                     bench_sink *sink, bool auth)
{
    bench_report *r = sink->report;
    mc_message_def def;
    bench_def(&def, w->size);
    mc_interface iface = {"bench", &def, 1};
    uint8_t *buf = malloc(w->size);
    struct event_base *base = event_base_new();
    if (!buf || !base) {
        bench_report_fail(r, "out of memory");
        free(buf);
        if (base)
            event_base_free(base);
        return -1;
    }
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.bind = "127.0.0.1:0";
    cfg.iface = &iface;
    cfg.accept_channels = false;
    bench_auth(&cfg, auth);
    mc_nub *nub = NULL;
    int st = mc_nub_new(base, &cfg, &nub);
    if (st != MC_OK) {
        bench_report_fail(r, "cannot create the mercury nub: %s", mc_status_name(st));
        free(buf);
        event_base_free(base);
        return -1;
    }
    mercury_sender s = {r, 0};
    mc_nub_set_channel_dead_handler(nub, on_channel_dead, &s);
    mc_address peer;
    mc_address_from_sockaddr(peer_addr, &peer);
    mc_channel *ch = mc_nub_channel(nub, &peer, MC_CHANNEL_INTERNAL);
    if (!ch) {
        bench_report_fail(r, "cannot open a mercury channel");
        mc_nub_free(nub);
        free(buf);
        event_base_free(base);
        return -1;
    }

    uint64_t sent = 0;
    r->t_start = mc_clock_now_us();
    bench_sink_ready(sink, 0);
    while (!s.dead) {
        mc_time_us now = mc_clock_now_us();
        if (sent == w->messages && mc_channel_idle(ch)) {
            r->finished = 1;
            r->t_last = now;
            break;
        }
        if (now >= w->deadline)
            break;
        int room = sent < w->messages && mc_channel_overflow(ch) < MERCURY_MAX_OVERFLOW;
        for (int k = 0; room && k < MERCURY_BATCH; k++) {
            bench_payload_fill(buf, w->size, (uint32_t)sent);
            st = mc_channel_send_message(ch, &def, buf, w->size);
            if (st != MC_OK) {
                bench_report_fail(r, "mc_channel_send_message: %s", mc_status_name(st));
                s.dead = 1;
                break;
            }
            sent++;
            room = sent < w->messages && mc_channel_overflow(ch) < MERCURY_MAX_OVERFLOW;
        }
        if (s.dead)
            break;
        uint64_t queued = (uint64_t)mc_channel_unacked(ch) + mc_channel_overflow(ch);
        if (queued > r->peak_queued)
            r->peak_queued = queued;
        if (!room) {
            /* Nothing more to add for now: push the partly filled packet and wait for
             * acknowledgements (or the nub's timer). */
            st = mc_channel_send(ch);
            if (st != MC_OK && st != MC_ERR_OVERFLOW) {
                bench_report_fail(r, "mc_channel_send: %s", mc_status_name(st));
                break;
            }
            event_base_loop(base, EVLOOP_ONCE);
        } else {
            event_base_loop(base, EVLOOP_NONBLOCK);
        }
    }
    r->count = sent;
    /* Mercury acknowledges packets, not messages: the count is known once all are acked. */
    r->acked = r->finished ? sent : 0;
    r->acked_unknown = !r->finished;
    mc_nub_free(nub);
    free(buf);
    event_base_free(base);
    return 0;
}

static int mercury_receive(const bench_workload *w, const struct sockaddr_in *bind_addr,
                           bench_sink *sink)
{
    return receive_side(w, bind_addr, sink, false);
}

static int mercury_send(const bench_workload *w, const struct sockaddr_in *peer_addr,
                        bench_sink *sink)
{
    return send_side(w, peer_addr, sink, false);
}

static int mercury_auth_receive(const bench_workload *w, const struct sockaddr_in *bind_addr,
                                bench_sink *sink)
{
    return receive_side(w, bind_addr, sink, true);
}

static int mercury_auth_send(const bench_workload *w, const struct sockaddr_in *peer_addr,
                             bench_sink *sink)
{
    return send_side(w, peer_addr, sink, true);
}

const bench_transport bench_transport_mercury = {
    .name = "mercury",
    .queue_unit = "packets",
    .receive = mercury_receive,
    .send = mercury_send,
};

/* The same with every datagram authenticated by the cluster secret, as a cluster's internal
 * nubs are (mercury/auth.h). */
const bench_transport bench_transport_mercury_auth = {
    .name = "mercury+auth",
    .queue_unit = "packets",
    .receive = mercury_auth_receive,
    .send = mercury_auth_send,
};
