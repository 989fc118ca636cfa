/* Registration with the manager, heartbeats, and birth/death notifications. */
#include "server_internal.h"
#include "common/log.h"
#include "server/control.h"
#include "server/pb.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RETRY_US (1000 * MC_US_PER_MS)
#define REGISTER_REPLY_TIMEOUT_US (2000 * MC_US_PER_MS)

void mc_server_set_name(mc_server *s, const char *name)
{
    snprintf(s->name, sizeof s->name, "%s", name);
    mc_log_set_process_name(s->name);
}

void mc_server_set_retiring(mc_server *s, bool retiring) { s->retiring = retiring; }

uint64_t mc_server_manager_silent_ms(const mc_server *s)
{
    return s->dead_after_ms * 2 > 5000 ? s->dead_after_ms * 2 : 5000;
}

/* The manager declared this process dead and it was replaced: stop at once, without a
 * graceful shutdown (it must not act as live, not even to say goodbye). */
static void fenced_exit(mc_server *s, const char *why)
{
    MC_ERROR("fenced by the manager at %s: %s; exiting (exit code %d)", s->manager_addr,
             why && *why ? why : "replaced", MC_SERVER_EXIT_FENCED);
    s->reg = REG_NONE;
    s->exit_code = MC_SERVER_EXIT_FENCED;
    /* What it held while out of touch is never sent: it was replaced. */
    if (s->lease) {
        size_t n = mc_lease_drop_all(s->lease);
        if (n)
            MC_ERROR("%zu entity messages held while out of touch with the manager dropped", n);
    }
    event_base_loopexit(s->base, NULL);
}

/* The manager answered a request sent at sent_at: we are alive there. */
static void lease_renew(mc_server *s, mc_time_us sent_at)
{
    if (!s->lease)
        return;
    mc_time_us now = mc_clock_now_us();
    bool was_valid = mc_lease_valid(s->lease, now);
    size_t n = mc_lease_renew(s->lease, sent_at, now);
    if (!was_valid && mc_lease_valid(s->lease, now) && mc_lease_stats_of(s->lease)->renewals > 1)
        MC_INFO("back in touch with the manager: lease renewed, %zu held entity messages sent",
                n);
}

/* A registration sent while registered (the lease ran out: reg_tick) carries this bit and the
 * time it was sent (what its answer renews the lease from) in its argument: it changes
 * nothing unless the manager answers it. */
#define PROBE_BIT ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1))

static void on_register_reply(mc_server *s, int status, const uint8_t *data, size_t len,
                              void *arg)
{
    bool probe = ((uintptr_t)arg & PROBE_BIT) != 0;
    if (status == MC_REPLY_CANCELLED)
        return;
    if (probe) {
        /* unanswered or garbled, a probe leaves everything as it was: the heartbeats go on */
        if (s->reg != REG_REGISTERED || status != MC_REPLY_OK)
            return;
    } else if (s->reg != REG_WAITING || (uint64_t)(uintptr_t)arg != s->reg_attempt) {
        return; /* the answer to an attempt we gave up on */
    }
    mc_time_us now = mc_clock_now_us();
    mc_time_us sent_at = probe ? (mc_time_us)((uintptr_t)arg & ~PROBE_BIT) : s->reg_sent_at;
    if (status != MC_REPLY_OK) {
        MC_WARNING("no answer from the manager at %s (%s); retrying", s->manager_addr,
                   mc_reply_status_name((mc_reply_status)status));
        s->reg = REG_BACKOFF;
        s->next_attempt = now + RETRY_US;
        return;
    }
    Mc__Control__RegisterReply *r = mc__control__register_reply__unpack(NULL, len, data);
    if (probe && (!r || (r->status != MC__CONTROL__REGISTER_STATUS__REGISTER_OK &&
                         r->status != MC__CONTROL__REGISTER_STATUS__REGISTER_FENCED))) {
        mc_pb_free(r); /* only an answer that we are alive, or fenced, counts */
        return;
    }
    if (!r) {
        MC_WARNING("malformed registration reply from the manager; retrying");
        s->reg = REG_BACKOFF;
        s->next_attempt = now + RETRY_US;
        return;
    }
    if (r->status == MC__CONTROL__REGISTER_STATUS__REGISTER_FENCED) {
        fenced_exit(s, r->reason);
        mc_pb_free(r);
        return;
    }
    if (r->status != MC__CONTROL__REGISTER_STATUS__REGISTER_OK) {
        snprintf(s->refusal, sizeof s->refusal, "%s", r->reason ? r->reason : "no reason given");
        MC_ERROR("registration refused by the manager: %s", s->refusal);
        s->reg_refusals++;
        mc_pb_free(r);
        s->reg = REG_NONE;
        s->exit_code = 1;
        event_base_loopexit(s->base, NULL);
        return;
    }
    s->id = r->self ? r->self->id : 0;
    uint64_t old_instance = s->manager_instance;
    if (s->ever_registered && old_instance != r->manager_instance) {
        /* A new manager instance knows nothing of our channel to its address (it drops its
         * packets): start a new one, as to any restarted peer. */
        if (mc_nub_close_channel(s->internal, &s->manager) == MC_OK)
            MC_INFO("the manager at %s restarted: a new channel to it", s->manager_addr);
    }
    s->manager_instance = r->manager_instance;
    if (r->self && r->self->name)
        mc_server_set_name(s, r->self->name);
    s->heartbeat_ms = r->heartbeat_interval_ms ? r->heartbeat_interval_ms : 1000;
    s->dead_after_ms = r->dead_after_ms;
    for (size_t i = 0; i < r->n_peers; i++)
        mc_server_peer_upsert(s, r->peers[i]);
    mc_server_take_ring(s, r->ring);
    s->reg = REG_REGISTERED;
    s->registrations++;
    /* The manager's channel keeps itself alive (keepalives every second): if it goes
     * silent for twice the dead-after time the manager is gone (or restarted), and we
     * register again on a fresh channel. */
    uint64_t silent_ms = mc_server_manager_silent_ms(s);
    mc_server_set_channel_timeout(s, &s->manager, silent_ms * MC_US_PER_MS);
    s->last_heartbeat_sent = 0;
    MC_INFO("registered as %s (id %u) with the manager at %s; %zu other processes; heartbeat "
            "every %llu ms",
            s->name, s->id, s->manager_addr, r->n_peers, (unsigned long long)s->heartbeat_ms);
    mc_pb_free(r);
    s->ids.retry_at = 0;
    mc_server_ids_tick(s, now);
    if (s->lease)
        mc_lease_set_dead_after(s->lease, s->dead_after_ms);
    lease_renew(s, sent_at);
    bool first = !s->ever_registered;
    s->ever_registered = true;
    /* A new manager instance (restarted) starts with no global names: ours go again. */
    if (!first && old_instance != s->manager_instance)
        mc_server_globals_register_again(s);
    if (first && s->desc.on_ready)
        s->desc.on_ready(s, s->desc.ctx);
}

static void send_register(mc_server *s, mc_time_us now, bool probe)
{
    Mc__Control__RegisterRequest req = MC__CONTROL__REGISTER_REQUEST__INIT;
    req.role = s->desc.role;
    req.pid = (uint32_t)s->pid;
    req.incarnation = s->incarnation;
    req.host = s->hostname;
    req.internal_addr = s->internal_addr;
    req.external_addr = s->external_addr;
    req.def_digest = s->digest;
    req.build_version = (char *)MC_VERSION;
    req.retiring = s->retiring;
    if (s->ever_registered) {
        /* Which process we were: the manager that gave the id fences us if it declared us
         * dead; a restarted one registers us anew. */
        req.previous_id = s->id;
        req.previous_manager = s->manager_instance;
        req.previous_name = s->name;
    }
    /* Registration goes off-channel: whatever state a channel to the manager is in (a
     * manager that restarted and does not know it yet), the request gets through. */
    if (probe) {
        s->probe_sent_at = now;
        s->reg_probes++;
        int rc = mc_server_send_request(s, &s->manager, MC_CTL_REGISTER, &req, on_register_reply,
                                        (void *)(PROBE_BIT | (uintptr_t)now),
                                        REGISTER_REPLY_TIMEOUT_US, true);
        if (rc != MC_OK)
            MC_WARNING("cannot send a registration probe to %s: %s", s->manager_addr,
                       mc_status_name(rc));
        return;
    }
    s->reg_attempt++;
    s->reg_sent_at = now;
    int rc = mc_server_send_request(s, &s->manager, MC_CTL_REGISTER, &req, on_register_reply,
                                    (void *)(uintptr_t)s->reg_attempt,
                                    REGISTER_REPLY_TIMEOUT_US, true);
    if (rc != MC_OK) {
        MC_WARNING("cannot send the registration to %s: %s", s->manager_addr, mc_status_name(rc));
        s->reg = REG_BACKOFF;
        s->next_attempt = now + RETRY_US;
        return;
    }
    s->reg = REG_WAITING;
}

/* The manager's answer to a heartbeat: alive there renews the lease from the time the
 * heartbeat was sent (a heartbeat it does not take is also told by UNKNOWN_PROCESS). */
static void on_heartbeat_reply(mc_server *s, int status, const uint8_t *data, size_t len,
                               void *arg)
{
    if (status != MC_REPLY_OK || s->reg != REG_REGISTERED || s->exit_code)
        return;
    Mc__Control__HeartbeatReply *r = mc__control__heartbeat_reply__unpack(NULL, len, data);
    if (!r) {
        MC_WARNING("malformed heartbeat reply from the manager at %s; ignored", s->manager_addr);
        return;
    }
    if (r->alive && r->manager_instance == s->manager_instance) {
        if (r->dead_after_ms && r->dead_after_ms != s->dead_after_ms) {
            /* the manager's patience changed at run time: so does the lease */
            s->dead_after_ms = r->dead_after_ms;
            mc_lease_set_dead_after(s->lease, s->dead_after_ms);
        }
        lease_renew(s, (mc_time_us)(uintptr_t)arg);
    }
    mc_pb_free(r);
}

static void send_heartbeat(mc_server *s, mc_time_us now)
{
    Mc__Control__Heartbeat hb = MC__CONTROL__HEARTBEAT__INIT;
    hb.id = s->id;
    hb.load = s->load_value;
    hb.manager_instance = s->manager_instance;
    /* A request on the channel: its answer renews the lease (sent at `now`). */
    uint64_t timeout_ms = s->dead_after_ms > 1000 ? s->dead_after_ms : 1000;
    int rc = mc_server_send_request(s, &s->manager, MC_CTL_HEARTBEAT, &hb, on_heartbeat_reply,
                                    (void *)(uintptr_t)now, timeout_ms * MC_US_PER_MS, false);
    if (rc != MC_OK)
        MC_WARNING("cannot send a heartbeat to %s: %s", s->manager_addr, mc_status_name(rc));
    else
        s->heartbeats_sent++;
    s->last_heartbeat_sent = now;
}

void mc_server_reg_tick(mc_server *s, mc_time_us now)
{
    if (s->desc.role == MC_ROLE_MANAGER || (s->shutting_down && !s->draining))
        return; /* (a draining process stays registered: its heartbeats go on) */
    switch (s->reg) {
    case REG_NONE:
        if (s->exit_code)
            return;
        s->reg_started = now;
        send_register(s, now, false);
        return;
    case REG_BACKOFF:
        if (!s->ever_registered) {
            uint64_t limit = mc_config_get_uint(s->cfg, "registerTimeoutMs");
            if (now - s->reg_started > limit * MC_US_PER_MS) {
                MC_ERROR("could not register with the manager at %s within %llu ms; giving up",
                         s->manager_addr, (unsigned long long)limit);
                s->exit_code = 1;
                event_base_loopexit(s->base, NULL);
                return;
            }
        }
        if (now >= s->next_attempt)
            send_register(s, now, false);
        return;
    case REG_WAITING:
        return;
    case REG_REGISTERED: {
        /* Out of touch for half the dead-after time (the lease ran out): the manager may
         * have restarted, and a new instance drops our channel's packets unanswered. A
         * registration probe goes off-channel, once a second at most, beside the heartbeats:
         * the same manager answers it as a repeated registration (the lease is renewed), a
         * new instance registers us anew at once, instead of after the channel's silence
         * timeout; unanswered, it changes nothing. */
        if (s->lease && !mc_lease_valid(s->lease, now) && now - s->probe_sent_at >= RETRY_US)
            send_register(s, now, true);
        /* At least four heartbeats per dead-after time, so that the lease (half of it) is
         * renewed before it runs out even when the manager asks for fewer. */
        uint64_t every_ms = s->heartbeat_ms;
        if (s->dead_after_ms >= 4 && s->dead_after_ms / 4 < every_ms)
            every_ms = s->dead_after_ms / 4;
        if (now - s->last_heartbeat_sent >= every_ms * MC_US_PER_MS)
            send_heartbeat(s, now);
        mc_server_ids_tick(s, now);
        return;
    }
    }
}

void mc_server_take_ring(mc_server *s, const Mc__Control__BackupRing *ring)
{
    if (!ring)
        return; /* a manager that publishes none */
    /* Messages from the manager may be taken out of order (a birth notice before the
     * registration's reply): of one manager instance, only a newer ring replaces ours. */
    if (s->ring.version && ring->manager_instance == s->ring.instance &&
        ring->version <= s->ring.version)
        return;
    if (!mc_backup_ring_from_pb(&s->ring, ring)) {
        MC_WARNING("malformed backup ring from the manager; keeping version %u",
                   (unsigned)s->ring.version);
        return;
    }
    s->ring_updates++;
}

const mc_backup_ring *mc_server_backup_ring(const mc_server *s) { return &s->ring; }

void mc_server_reg_on_event(mc_server *s, const uint8_t *data, size_t len)
{
    Mc__Control__ProcessEvent *ev = mc__control__process_event__unpack(NULL, len, data);
    if (!ev || !ev->process) {
        MC_WARNING("malformed process event from the manager; ignored");
        mc_pb_free(ev);
        return;
    }
    if (ev->process->id == s->id) {
        mc_pb_free(ev);
        return;
    }
    mc_server_peer_upsert(s, ev->process);
    mc_server_take_ring(s, ev->ring);
    if (ev->kind == MC__CONTROL__EVENT_KIND__EVENT_BIRTH) {
        s->births_seen++;
        MC_INFO("manager: %s (%s) was born at %s", ev->process->name,
                mc_role_name(ev->process->role), ev->process->internal_addr);
    } else if (ev->kind == MC__CONTROL__EVENT_KIND__EVENT_DEATH) {
        s->deaths_seen++;
        MC_INFO("manager: %s is %s (%s)", ev->process->name, mc_state_name(ev->process->state),
                ev->reason && ev->reason[0] ? ev->reason : "no reason");
    }
    if (s->desc.on_peer_event)
        s->desc.on_peer_event(s, s->desc.ctx, ev);
    mc_pb_free(ev);
}

void mc_server_reg_on_unknown(mc_server *s, const uint8_t *data, size_t len)
{
    Mc__Control__UnknownProcess *u = mc__control__unknown_process__unpack(NULL, len, data);
    if (u && u->fenced && u->id == s->id && s->ever_registered && !s->exit_code) {
        fenced_exit(s, u->reason);
        mc_pb_free(u);
        return;
    }
    if (s->reg == REG_REGISTERED && (!u || u->id == s->id)) {
        MC_WARNING("the manager no longer knows %s (%s); registering again", s->name,
                   u && u->reason ? u->reason : "no reason");
        s->reg = REG_BACKOFF;
        s->next_attempt = 0;
    }
    mc_pb_free(u);
}

void mc_server_reg_on_manager_dead(mc_server *s, bool restarted)
{
    if (s->reg == REG_REGISTERED) {
        MC_WARNING("lost the manager at %s (%s); registering again when it answers",
                   s->manager_addr, restarted ? "it restarted" : "silent");
        s->reg = REG_BACKOFF;
        s->next_attempt = restarted ? 0 : mc_clock_now_us() + RETRY_US;
    }
}

static void on_deregister_reply(mc_server *s, int status, const uint8_t *data, size_t len,
                                void *arg)
{
    if (status == MC_REPLY_CANCELLED)
        return;
    if (status == MC_REPLY_OK) {
        MC_INFO("deregistered from the manager");
        s->deregister_confirmed = true;
    }
    else
        MC_WARNING("the manager did not confirm the deregistration (%s)",
                   mc_reply_status_name((mc_reply_status)status));
    s->deregistered = true;
}

void mc_server_deregister(mc_server *s)
{
    if (s->reg != REG_REGISTERED) {
        s->deregistered = true;
        return;
    }
    Mc__Control__Deregister d = MC__CONTROL__DEREGISTER__INIT;
    d.id = s->id;
    d.reason = s->shutdown_reason;
    uint64_t timeout_ms = mc_config_get_uint(s->cfg, "shutdownTimeoutMs");
    int rc = mc_server_send_request(s, &s->manager, MC_CTL_DEREGISTER, &d, on_deregister_reply,
                                    NULL, (timeout_ms ? timeout_ms : 1) * MC_US_PER_MS / 2 + 1,
                                    false);
    if (rc != MC_OK) {
        MC_WARNING("cannot send the deregistration: %s", mc_status_name(rc));
        s->deregistered = true;
    }
    s->reg = REG_NONE;
}

/* --- queries -------------------------------------------------------------------------- */

typedef struct {
    mc_server_query_fn fn;
    void *ctx;
} query_wait;

static void on_query_reply(mc_server *s, int status, const uint8_t *data, size_t len, void *arg)
{
    query_wait *q = arg;
    Mc__Control__QueryReply *r =
        status == MC_REPLY_OK ? mc__control__query_reply__unpack(NULL, len, data) : NULL;
    if (status == MC_REPLY_OK && !r)
        MC_WARNING("malformed query reply from the manager");
    q->fn(s, q->ctx, r);
    mc_pb_free(r);
    free(q);
}

int mc_server_query(mc_server *s, Mc__Control__QueryKind kind, mc_role role, const char *name,
                    mc_server_query_fn fn, void *ctx)
{
    if (s->desc.role == MC_ROLE_MANAGER || !fn)
        return MC_ERR_INVALID;
    query_wait *q = malloc(sizeof *q);
    if (!q)
        return MC_ERR_NO_MEMORY;
    q->fn = fn;
    q->ctx = ctx;
    Mc__Control__QueryRequest req = MC__CONTROL__QUERY_REQUEST__INIT;
    req.kind = kind;
    req.role = role;
    req.name = (char *)(name ? name : "");
    int rc = mc_server_send_request(s, &s->manager, MC_CTL_QUERY, &req, on_query_reply, q,
                                    REGISTER_REPLY_TIMEOUT_US, false);
    if (rc != MC_OK)
        free(q);
    return rc;
}
