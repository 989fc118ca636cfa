/* Orchestration of one transport's run. */
#include "side.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "relay.h"

#define READY_TIMEOUT_MS 5000
#define HARD_GRACE_US (3 * MC_US_PER_S)
#define LISTEN_WAIT_US (30 * MC_US_PER_S)
#define RECEIVER_LINGER_US (2 * MC_US_PER_S) /* silence that ends a receiver's linger */
#define PUMP_SLICE_MS 50

typedef struct {
    const bench_transport *t;
    bench_workload w;
    struct sockaddr_in addr;
} role_ctx;

static int receiver_main(void *ctx, int fd)
{
    role_ctx *rc = ctx;
    mc_log_set_process_name("bench-receiver");
    bench_report r;
    memset(&r, 0, sizeof r);
    bench_sink s = {fd, &r, 0};
    int rv = rc->t->receive(&rc->w, &rc->addr, &s);
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
    int rv = rc->t->send(&rc->w, &rc->addr, &s);
    bench_sink_done(&s);
    return rv;
}

static int relay_main(void *ctx, int fd)
{
    const bench_relay_config *cfg = ctx;
    mc_log_set_process_name("bench-relay");
    bench_report r;
    memset(&r, 0, sizeof r);
    bench_sink s = {fd, &r, 0};
    return bench_relay_run(cfg, &s);
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

/* Pump until `c` is ready or gone, bounded. */
static bool wait_ready(bench_child *c, int timeout_ms)
{
    mc_time_us until = mc_clock_now_us() + (mc_time_us)timeout_ms * MC_US_PER_MS;
    while (!c->ready && !c->eof && mc_clock_now_us() < until) {
        bench_child *one = c;
        bench_children_pump(&one, 1, PUMP_SLICE_MS);
    }
    return c->ready;
}

static void finish_all(bench_side *side)
{
    if (side->has_sender)
        bench_child_finish(&side->sender);
    if (side->has_receiver)
        bench_child_finish(&side->receiver);
    if (side->has_relay)
        bench_child_finish(&side->relay);
}

static int fail(bench_side *side, const char *fmt, const char *what)
{
    snprintf(side->error, sizeof side->error, fmt, what, strerror(errno));
    finish_all(side);
    return -1;
}

/* Close the relay's stop pipe, collect its counters (bounded), then reap it. */
static void stop_relay(bench_side *side, int *stop_w)
{
    if (*stop_w >= 0) {
        close(*stop_w);
        *stop_w = -1;
    }
    if (!side->has_relay)
        return;
    mc_time_us until = mc_clock_now_us() + MC_US_PER_S;
    while (!side->relay.has_result && !side->relay.eof && mc_clock_now_us() < until) {
        bench_child *one = &side->relay;
        bench_children_pump(&one, 1, PUMP_SLICE_MS);
    }
    bench_child_wait(&side->relay, 500);
}

int bench_side_run(const bench_options *o, const bench_transport *t, bench_side *side)
{
    memset(side, 0, sizeof *side);
    side->transport = t;
    mc_time_us start = mc_clock_now_us();
    mc_time_us limit = (mc_time_us)(o->time_limit_s * MC_US_PER_S);
    role_ctx rctx = {t, {o->messages, o->size, start + limit, RECEIVER_LINGER_US}, loopback(0)};
    role_ctx sctx = rctx;
    mc_time_us hard_stop = start + limit + HARD_GRACE_US;
    int stop_pipe[2] = {-1, -1};

    /* Receiver. */
    if (o->mode != BENCH_MODE_CONNECT) {
        if (o->mode == BENCH_MODE_LISTEN) {
            rctx.addr = o->addr;
            rctx.w.deadline += LISTEN_WAIT_US;
            hard_stop += LISTEN_WAIT_US;
        }
        if (bench_child_spawn(&side->receiver, "receiver", receiver_main, &rctx, NULL, 0) != 0)
            return fail(side, "cannot start the %s receiver: %s", t->name);
        side->has_receiver = true;
        if (!wait_ready(&side->receiver, READY_TIMEOUT_MS)) {
            snprintf(side->error, sizeof side->error, "%s receiver did not start: %s", t->name,
                     side->receiver.has_result ? side->receiver.result.error : "no report");
            finish_all(side);
            return -1;
        }
        sctx.addr = loopback(side->receiver.ready_report.port);
        if (o->mode == BENCH_MODE_LISTEN) {
            printf("%s: listening on %s:%u\n", t->name, inet_ntoa(o->addr.sin_addr),
                   (unsigned)ntohs(o->addr.sin_port));
            fflush(stdout);
        }
    } else {
        sctx.addr = o->addr;
    }

    /* Relay, between sender and receiver. */
    bench_relay_config rcfg = {.loss = o->loss,
                               .dup = o->dup,
                               .reorder = o->reorder,
                               .seed = o->seed,
                               .front = loopback(0),
                               .target = sctx.addr,
                               .stop_fd = -1,
                               .deadline = hard_stop + 2 * MC_US_PER_S};
    if (o->mode != BENCH_MODE_LISTEN && bench_options_impaired(o)) {
        if (pipe(stop_pipe) != 0)
            return fail(side, "cannot start the %s relay: %s", t->name);
        rcfg.stop_fd = stop_pipe[0];
        if (bench_child_spawn(&side->relay, "relay", relay_main, &rcfg, &stop_pipe[1], 1) != 0) {
            close(stop_pipe[0]);
            close(stop_pipe[1]);
            return fail(side, "cannot start the %s relay: %s", t->name);
        }
        close(stop_pipe[0]);
        side->has_relay = true;
        if (!wait_ready(&side->relay, READY_TIMEOUT_MS)) {
            snprintf(side->error, sizeof side->error, "relay did not start: %s",
                     side->relay.has_result ? side->relay.result.error : "no report");
            close(stop_pipe[1]);
            finish_all(side);
            return -1;
        }
        sctx.addr = loopback(side->relay.ready_report.port);
    }

    /* Sender. */
    if (o->mode != BENCH_MODE_LISTEN) {
        if (bench_child_spawn(&side->sender, "sender", sender_main, &sctx, &stop_pipe[1], 1) != 0) {
            int e = errno;
            if (stop_pipe[1] >= 0)
                close(stop_pipe[1]);
            errno = e;
            return fail(side, "cannot start the %s sender: %s", t->name);
        }
        side->has_sender = true;
    }

    /* Run until the roles are done, a role fails, or the hard stop. */
    bench_child *watch[2] = {side->has_receiver ? &side->receiver : NULL,
                             side->has_sender ? &side->sender : NULL};
    while (mc_clock_now_us() < hard_stop) {
        bool recv_done = !side->has_receiver || side->receiver.has_result || side->receiver.eof;
        bool send_done = !side->has_sender || side->sender.eof;
        if (recv_done && send_done)
            break;
        /* A receiver that stopped unfinished (errors, deadline) ends the side. */
        if (side->has_receiver && side->receiver.has_result && !side->receiver.result.finished)
            break;
        /* A sender that gave up ends it too, once the receiver has had its say. */
        if (side->has_sender && side->sender.eof && side->sender.has_result &&
            !side->sender.result.finished && side->has_receiver)
            break;
        bench_children_pump(watch, 2, PUMP_SLICE_MS);
    }
    /* Roles stopped by the same deadline report a moment apart: give the other one a
     * second to report before anything is killed. */
    mc_time_us until = mc_clock_now_us() + MC_US_PER_S;
    if (until > hard_stop)
        until = hard_stop;
    while (mc_clock_now_us() < until &&
           ((side->has_sender && !side->sender.eof) ||
            (side->has_receiver && !side->receiver.has_result && !side->receiver.eof)))
        bench_children_pump(watch, 2, PUMP_SLICE_MS);
    if (side->has_sender)
        bench_child_wait(&side->sender, side->sender.eof ? 500 : 0);
    if (side->has_receiver) {
        /* In listen mode the receiver lingers until its sender has gone quiet (it stops by
         * itself, bounded by its deadline); locally the sender has exited already. */
        int linger_ms = 0;
        if (o->mode == BENCH_MODE_LISTEN) {
            mc_time_us now = mc_clock_now_us();
            linger_ms = hard_stop > now ? (int)((hard_stop - now) / 1000) : 0;
        }
        bench_child_wait(&side->receiver, linger_ms);
    }
    stop_relay(side, &stop_pipe[1]);
    finish_all(side);
    return 0;
}
