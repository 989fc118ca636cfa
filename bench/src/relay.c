/* Relay implementation: poll two sockets, batch reads with recvmmsg, apply loss /
 * duplication / corruption / reordering per datagram and direction, then the added
 * latency (a FIFO per direction). ppoll comes with _GNU_SOURCE (set by the build). */
#include "relay.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RELAY_BATCH 64
#define RELAY_MAX_DGRAM 65536
#define RELAY_HOLD_SLOTS 256
#define RELAY_HOLD_MAX_US 3000
#define RELAY_SOCKBUF (4 << 20)
#define RELAY_DELAY_SLOTS 65536 /* datagrams waiting out the added latency, per direction */

typedef struct {
    uint8_t *data;
    size_t len;
    int countdown;         /* later datagrams still to pass it */
    mc_time_us held_at;
} held_dgram;

typedef struct {
    uint8_t *data;
    size_t len;
    mc_time_us due;
} delayed_dgram;

typedef struct {
    int out_fd;                   /* socket to send from */
    struct sockaddr_in *out_addr; /* destination (NULL: connected socket) */
    uint64_t rng;
    held_dgram held[RELAY_HOLD_SLOTS];
    int nheld;
    delayed_dgram *delayed; /* ring of RELAY_DELAY_SLOTS (allocated when delay_us > 0) */
    size_t dhead, dcount;
} direction;

typedef struct {
    const bench_relay_config *cfg;
    bench_report *r;
    direction dir[2]; /* 0: front -> target, 1: target -> front */
    struct sockaddr_in client;
    int have_client;
} relay;

/* splitmix64: small, fast, good enough to decide per datagram. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0); }

static void send_wire(relay *rl, direction *d, const uint8_t *data, size_t len)
{
    if (!d->out_addr && !rl->have_client)
        return;
    for (int tries = 0; tries < 3; tries++) {
        ssize_t n = d->out_addr ? sendto(d->out_fd, data, len, 0, (struct sockaddr *)d->out_addr,
                                         sizeof *d->out_addr)
                                : send(d->out_fd, data, len, 0);
        if (n >= 0)
            return;
        if (errno != EINTR && errno != EAGAIN && errno != ENOBUFS)
            break;
    }
    rl->r->relay_send_failed++;
}

/* Hand a datagram to the wire, after the added latency when there is one. */
static void send_now(relay *rl, direction *d, const uint8_t *data, size_t len)
{
    if (!rl->cfg->delay_us || !d->delayed) {
        send_wire(rl, d, data, len);
        return;
    }
    uint8_t *copy = d->dcount < RELAY_DELAY_SLOTS ? malloc(len ? len : 1) : NULL;
    if (!copy) {
        rl->r->relay_send_failed++;
        return;
    }
    memcpy(copy, data, len);
    size_t at = (d->dhead + d->dcount) % RELAY_DELAY_SLOTS;
    d->delayed[at] = (delayed_dgram){copy, len, mc_clock_now_us() + rl->cfg->delay_us};
    d->dcount++;
}

/* Send what has waited out the latency; returns the next due time (0: none waiting). */
static mc_time_us release_delayed(relay *rl, direction *d, mc_time_us now)
{
    while (d->dcount) {
        delayed_dgram *g = &d->delayed[d->dhead];
        if (g->due > now)
            return g->due;
        send_wire(rl, d, g->data, g->len);
        free(g->data);
        d->dhead = (d->dhead + 1) % RELAY_DELAY_SLOTS;
        d->dcount--;
    }
    return 0;
}

static void release_held(relay *rl, direction *d, int idx)
{
    held_dgram h = d->held[idx];
    memmove(&d->held[idx], &d->held[idx + 1], (size_t)(d->nheld - idx - 1) * sizeof h);
    d->nheld--;
    send_now(rl, d, h.data, h.len);
    free(h.data);
}

/* A datagram passed: count down the held ones and release those that are due. */
static void passed_one(relay *rl, direction *d)
{
    for (int i = 0; i < d->nheld;) {
        if (--d->held[i].countdown <= 0)
            release_held(rl, d, i);
        else
            i++;
    }
}

static void release_old(relay *rl, direction *d, mc_time_us now)
{
    for (int i = 0; i < d->nheld;) {
        if (now - d->held[i].held_at >= RELAY_HOLD_MAX_US)
            release_held(rl, d, i);
        else
            i++;
    }
}

static void forward(relay *rl, direction *d, const uint8_t *data, size_t len, mc_time_us now)
{
    const bench_relay_config *cfg = rl->cfg;
    rl->r->relay_in++;
    if (cfg->loss > 0 && rng_unit(&d->rng) < cfg->loss) {
        rl->r->relay_dropped++;
        return;
    }
    int copies = 1;
    if (cfg->dup > 0 && rng_unit(&d->rng) < cfg->dup) {
        copies = 2;
        rl->r->relay_duplicated++;
    }
    uint8_t scratch[RELAY_MAX_DGRAM];
    if (cfg->corrupt > 0 && len > 0 && rng_unit(&d->rng) < cfg->corrupt) {
        memcpy(scratch, data, len);
        int flips = 1 + (int)(rng_next(&d->rng) % 4);
        for (int i = 0; i < flips; i++)
            scratch[rng_next(&d->rng) % len] ^= (uint8_t)(1 + rng_next(&d->rng) % 255);
        data = scratch;
        rl->r->relay_corrupted++;
    }
    for (int c = 0; c < copies; c++) {
        if (cfg->reorder > 0 && rng_unit(&d->rng) < cfg->reorder) {
            if (d->nheld == RELAY_HOLD_SLOTS)
                release_held(rl, d, 0);
            uint8_t *copy = malloc(len ? len : 1);
            if (!copy) {
                send_now(rl, d, data, len);
                continue;
            }
            memcpy(copy, data, len);
            d->held[d->nheld++] = (held_dgram){copy, len, 1 + (int)(rng_next(&d->rng) % 3), now};
            rl->r->relay_reordered++;
        } else {
            send_now(rl, d, data, len);
            passed_one(rl, d);
        }
    }
}

static int bind_udp(const struct sockaddr_in *addr)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int sz = RELAY_SOCKBUF;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    if (bind(fd, (const struct sockaddr *)addr, sizeof *addr) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read everything ready on `fd` and forward it through `d`. */
static void drain(relay *rl, int fd, direction *d, int from_front, uint8_t (*bufs)[RELAY_MAX_DGRAM])
{
    struct mmsghdr msgs[RELAY_BATCH];
    struct iovec iov[RELAY_BATCH];
    struct sockaddr_in from[RELAY_BATCH];
    for (int round = 0; round < 16; round++) {
        for (int i = 0; i < RELAY_BATCH; i++) {
            iov[i] = (struct iovec){bufs[i], RELAY_MAX_DGRAM};
            msgs[i].msg_hdr = (struct msghdr){.msg_name = &from[i], .msg_namelen = sizeof from[i],
                                              .msg_iov = &iov[i], .msg_iovlen = 1};
            msgs[i].msg_len = 0;
        }
        int n = recvmmsg(fd, msgs, RELAY_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0)
            return;
        mc_time_us now = mc_clock_now_us();
        for (int i = 0; i < n; i++) {
            if (from_front) {
                rl->client = from[i];
                rl->have_client = 1;
            }
            forward(rl, d, bufs[i], msgs[i].msg_len, now);
        }
        if (n < RELAY_BATCH)
            return;
    }
}

int bench_relay_run(const bench_relay_config *cfg, bench_sink *sink)
{
    relay rl;
    memset(&rl, 0, sizeof rl);
    rl.cfg = cfg;
    rl.r = sink->report;
    int front = bind_udp(&cfg->front);
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr = cfg->front.sin_addr};
    int back = bind_udp(&any);
    uint8_t(*bufs)[RELAY_MAX_DGRAM] = malloc((size_t)RELAY_BATCH * RELAY_MAX_DGRAM);
    if (front < 0 || back < 0 || !bufs ||
        connect(back, (const struct sockaddr *)&cfg->target, sizeof cfg->target) != 0) {
        bench_report_fail(rl.r, "relay: cannot set up sockets: %s", strerror(errno));
        bench_sink_done(sink);
        if (front >= 0)
            close(front);
        if (back >= 0)
            close(back);
        free(bufs);
        return -1;
    }
    struct sockaddr_in bound;
    socklen_t blen = sizeof bound;
    getsockname(front, (struct sockaddr *)&bound, &blen);
    rl.dir[0] = (direction){.out_fd = back, .out_addr = NULL, .rng = cfg->seed};
    rl.dir[1] = (direction){.out_fd = front, .out_addr = &rl.client,
                            .rng = cfg->seed ^ 0x5bd1e9955bd1e995ull};
    if (cfg->delay_us) {
        for (int d = 0; d < 2; d++) {
            rl.dir[d].delayed = calloc(RELAY_DELAY_SLOTS, sizeof(delayed_dgram));
            if (!rl.dir[d].delayed) {
                bench_report_fail(rl.r, "relay: out of memory");
                bench_sink_done(sink);
                free(rl.dir[0].delayed);
                close(front);
                close(back);
                free(bufs);
                return -1;
            }
        }
    }
    rl.r->t_start = mc_clock_now_us();
    bench_sink_ready(sink, ntohs(bound.sin_port));

    for (;;) {
        mc_time_us now = mc_clock_now_us();
        if (now >= cfg->deadline)
            break;
        struct pollfd p[3] = {{front, POLLIN, 0}, {back, POLLIN, 0}, {cfg->stop_fd, POLLIN, 0}};
        mc_time_us wait = (rl.dir[0].nheld || rl.dir[1].nheld) ? 1000 : 50000;
        for (int d = 0; d < 2; d++) {
            mc_time_us due = release_delayed(&rl, &rl.dir[d], now);
            if (due && due - now < wait)
                wait = due > now ? due - now : 0;
        }
        struct timespec ts = {(time_t)(wait / 1000000), (long)(wait % 1000000) * 1000};
        int n = ppoll(p, cfg->stop_fd >= 0 ? 3 : 2, &ts, NULL);
        if (n < 0 && errno != EINTR)
            break;
        if (cfg->stop_fd >= 0 && p[2].revents)
            break;
        if (p[0].revents & (POLLIN | POLLERR))
            drain(&rl, front, &rl.dir[0], 1, bufs);
        if (p[1].revents & (POLLIN | POLLERR))
            drain(&rl, back, &rl.dir[1], 0, bufs);
        now = mc_clock_now_us();
        release_old(&rl, &rl.dir[0], now);
        release_old(&rl, &rl.dir[1], now);
        release_delayed(&rl, &rl.dir[0], now);
        release_delayed(&rl, &rl.dir[1], now);
    }
    for (int d = 0; d < 2; d++) {
        while (rl.dir[d].nheld)
            release_held(&rl, &rl.dir[d], 0);
        while (rl.dir[d].dcount) {
            delayed_dgram *g = &rl.dir[d].delayed[rl.dir[d].dhead];
            send_wire(&rl, &rl.dir[d], g->data, g->len);
            free(g->data);
            rl.dir[d].dhead = (rl.dir[d].dhead + 1) % RELAY_DELAY_SLOTS;
            rl.dir[d].dcount--;
        }
        free(rl.dir[d].delayed);
    }
    rl.r->finished = 1;
    bench_sink_done(sink);
    close(front);
    close(back);
    free(bufs);
    return 0;
}
