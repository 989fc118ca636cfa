/* Graceful shutdown (a signal, command/shutdown, the role): the role drains, the process
 * deregisters, waits for the reply (bounded), flushes its channels (bounded), and leaves the
 * loop. */
#include "server_internal.h"
#include "common/log.h"

#include <signal.h>
#include <stdio.h>

#define SHUTDOWN_POLL_MS 20

/* Graceful shutdown: deregister, wait for the reply (bounded), flush channels (bounded),
 * leave the loop. Runs on a timer so a watcher call can answer before we go. */
void mc_server_on_shutdown_step(evutil_socket_t fd, short what, void *ctx)
{
    mc_server *s = ctx;
    mc_time_us now = mc_clock_now_us();
    if (s->draining) {
        if (s->desc.draining(s, s->desc.ctx))
            return;
        s->draining = false;
        s->shutdown_started = now;
        mc_server_deregister(s);
        return;
    }
    uint64_t limit_us = mc_config_get_uint(s->cfg, "shutdownTimeoutMs") * MC_US_PER_MS;
    bool late = now - s->shutdown_started > limit_us;
    if (!s->deregistered && !late)
        return;
    if (!mc_server_channels_idle(s) && !late)
        return;
    if (late && (!s->deregistered || !mc_server_channels_idle(s)))
        MC_WARNING("shutdown: gave up waiting after %llu ms (%s)",
                   (unsigned long long)(limit_us / MC_US_PER_MS),
                   s->deregistered ? "channels not flushed" : "no deregistration reply");
    MC_INFO("shut down (%s)", s->shutdown_reason);
    event_del(s->shutdown_ev);
    event_base_loopexit(s->base, NULL);
}

void mc_server_shutdown(mc_server *s, const char *reason)
{
    if (s->shutting_down)
        return;
    s->shutting_down = true;
    s->shutdown_started = mc_clock_now_us();
    snprintf(s->shutdown_reason, sizeof s->shutdown_reason, "%s", reason ? reason : "");
    MC_INFO("shutting down: %s", s->shutdown_reason);
    if (s->desc.on_shutdown)
        s->desc.on_shutdown(s, s->desc.ctx);
    s->draining = s->desc.draining != NULL;
    if (!s->draining)
        mc_server_deregister(s);
    struct timeval tv = {0, SHUTDOWN_POLL_MS * 1000};
    event_add(s->shutdown_ev, &tv);
}

void mc_server_on_signal(evutil_socket_t sig, short what, void *ctx)
{
    mc_server_shutdown(ctx, sig == SIGTERM ? "SIGTERM" : "SIGINT");
}
