/* The manager: registry bookkeeping, notifications and queries over the control plane. */
#include "cells_auto.h"
#include "manager_internal.h"
#include "console.h"
#include "common/log.h"
#include "mercury/address.h"
#include "mercury/status.h"
#include "server/control.h"
#include "server/pb.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* How often silent processes are looked for. */
#define EXPIRE_CHECK_MS 100

static const mc_option manager_options[] = {
    {"deadAfterMs", MC_OPT_UINT, "3000",
     "a process silent for this long is marked dead (also settable: registry/deadAfterMs)"},
    {"deadAfterMsLoginapp", MC_OPT_UINT, "0",
     "a loginapp silent for this long is marked dead (0: deadAfterMs; also settable: "
     "registry/deadAfterMsLoginapp)"},
    {"deadAfterMsBaseapp", MC_OPT_UINT, "0",
     "a baseapp silent for this long is marked dead (0: deadAfterMs; also settable: "
     "registry/deadAfterMsBaseapp)"},
    {"deadAfterMsCellapp", MC_OPT_UINT, "0",
     "a cellapp silent for this long is marked dead (0: deadAfterMs; also settable: "
     "registry/deadAfterMsCellapp)"},
    {"heartbeatMs", MC_OPT_UINT, "500", "how often processes are asked to send a heartbeat"},
    {"stateFile", MC_OPT_STRING, "",
     "file keeping the entity id reservation across restarts (created if missing; without "
     "it ids start at 1 again after a restart)"},
    {"spaceHomesMax", MC_OPT_UINT, "65536",
     "lost spaces whose restoring cellapp is remembered (QUERY_SPACE_HOME; 16..10000000): "
     "beyond, the oldest is forgotten"},
    MC_MANAGER_CELLS_OPTIONS,
    MC_CELLS_AUTO_OPTIONS,
    {"consolePasswordFile", MC_OPT_STRING, "",
     "the operator password (first line, mode 0600) of the web console served on the --metrics "
     "port; empty: no console (deploy/cluster makes one per run dir)"},
    {"consoleSessions", MC_OPT_UINT, "16",
     "console sessions at once; a login beyond ends the least recently used (1..1024)"},
    {"consoleSessionIdleS", MC_OPT_UINT, "3600",
     "a console session unused this long ends (1..604800)"},
    {"consoleLoginFailures", MC_OPT_UINT, "10",
     "failed console logins checked per minute; beyond, logins are refused (429) until the "
     "minute is over (1..10000)"},
    {"consoleSampleMs", MC_OPT_UINT, "2000",
     "how often the console samples the cluster for its plots (500..60000)"},
    {"faultKnobs", MC_OPT_BOOL, "false",
     "publish the test fault knobs (faults/ignoreHeartbeatsFrom): for tests and rehearsals "
     "only, never in production"},
};

/* The registry follows the manager's settings (they may change at run time). */
static void sync_dead_after(mc_manager *m)
{
    mc_registry_set_dead_after(m->registry, m->dead_after_ms * MC_US_PER_MS);
    for (size_t i = 0; i < MC_MANAGER_ROLE_TIMEOUTS; i++) {
        mc_role role = mc_manager_role_timeouts[i].role;
        mc_registry_set_role_dead_after(m->registry, role,
                                        m->role_dead_after_ms[role] * MC_US_PER_MS);
    }
}

static bool check_config(const mc_config *cfg, char *err, size_t errlen)
{
    char why[200];
    if (!mc_manager_check_timing(mc_config_get_uint(cfg, "deadAfterMs"),
                                 mc_config_get_uint(cfg, "heartbeatMs"), why, sizeof why)) {
        snprintf(err, errlen, "--%s", why);
        return false;
    }
    for (size_t i = 0; i < MC_MANAGER_ROLE_TIMEOUTS; i++) {
        const char *opt = mc_manager_role_timeouts[i].option;
        uint64_t v = mc_config_get_uint(cfg, opt);
        if (v && !mc_manager_check_timing(v, mc_config_get_uint(cfg, "heartbeatMs"), why,
                                          sizeof why)) {
            snprintf(err, errlen, "--%s (%s)", opt, why);
            return false;
        }
    }
    uint64_t homes = mc_config_get_uint(cfg, "spaceHomesMax");
    if (homes < MC_SPACE_HOMES_MIN || homes > MC_SPACE_HOMES_MAX) {
        snprintf(err, errlen, "--spaceHomesMax: %llu is not within %u..%u",
                 (unsigned long long)homes, MC_SPACE_HOMES_MIN, MC_SPACE_HOMES_MAX);
        return false;
    }
    if (!mc_manager_cells_check(cfg, err, errlen) || !mc_cells_auto_check(cfg, err, errlen))
        return false;
    if (!mc_console_check(cfg, err, errlen))
        return false;
    /* A corrupt state file stops the manager before anything else happens. */
    return mc_id_ranges_check(mc_config_get_string(cfg, "stateFile"), err, errlen);
}

/* --- notifications -------------------------------------------------------------------- */

static void on_death(void *ctx, mc_reg_entry *e)
{
    mc_manager *m = ctx;
    m->deaths++;
    mc_server_forget_peer(m->server, e->internal_addr);
    MC_WARNING("%s (pid %u at %s) is dead: %s", e->name, e->pid, e->internal_addr, e->reason);
    mc_manager_drop_globals(m, e);
    mc_manager_ring_changed(m, e);
    mc_manager_broadcast(m, MC__CONTROL__EVENT_KIND__EVENT_DEATH, e, e->reason);
    if (e->role == MC_ROLE_CELLAPP) {
        mc_cells_auto_process_gone(m, e->id);
        mc_manager_cells_process_gone(m, e->id);
    }
}

static void on_forget(void *ctx, mc_reg_entry *e)
{
    mc_manager *m = ctx;
    char path[MC_WATCH_MAX_PATH];
    snprintf(path, sizeof path, "processes/%s", e->name);
    mc_watch_remove(mc_server_watchers(m->server), path);
    m->forgotten++;
    MC_INFO("forgot %s (%s %s): more than %d dead or stopped processes remembered", e->name,
            mc_state_name(e->state), e->reason, MC_REG_MAX_GONE);
}

static void on_expire_tick(evutil_socket_t fd, short what, void *ctx)
{
    mc_manager *m = ctx;
    sync_dead_after(m);
    mc_registry_expire(m->registry, mc_clock_now_us(), on_death, m);
    mc_registry_prune(m->registry, MC_REG_MAX_GONE, on_forget, m);
}

/* The internal address a process registers must be the one its request came from: nobody
 * registers (or retires) a process at someone else's address. */
static bool from_own_address(const Mc__Control__RegisterRequest *req, const char *src,
                             char *why, size_t whylen)
{
    mc_address a;
    char norm[MC_ADDRESS_STRLEN];
    if (mc_address_parse(req->internal_addr, &a) != MC_OK || a.port == 0) {
        snprintf(why, whylen, "internal address '%.64s' is not IP:PORT", req->internal_addr);
        return false;
    }
    mc_address_format(&a, norm, sizeof norm);
    if (strcmp(norm, src) != 0) {
        snprintf(why, whylen, "internal address %s is not the address the request came from (%s)",
                 norm, src);
        return false;
    }
    if (req->external_addr[0] && (mc_address_parse(req->external_addr, &a) != MC_OK || a.port == 0)) {
        snprintf(why, whylen, "external address '%.64s' is not IP:PORT", req->external_addr);
        return false;
    }
    return true;
}

/* --- fencing -------------------------------------------------------------------------- */

/* A process this manager declared dead (or that stopped) reached it again, with the id it
 * had: it was replaced and must never act as live again. Mark it fenced (once), count it,
 * log it, and write the reason it is told into why. e may be NULL (forgotten since). */
static void fence(mc_manager *m, mc_reg_entry *e, uint32_t id, const char *src, char *why,
                  size_t whylen)
{
    if (e) {
        snprintf(why, whylen, "replaced: the manager declared %.31s %s (%.100s); a process "
                 "declared dead never comes back",
                 e->name, e->state == MC__CONTROL__PROCESS_STATE__STATE_STOPPED ? "stopped" : "dead",
                 e->reason);
        if (mc_registry_fence(m->registry, id)) {
            m->fenced++;
            MC_WARNING("%s (pid %u at %s) came back after it was declared dead; told it was "
                       "replaced (fenced)", e->name, e->pid, src);
        }
    } else {
        snprintf(why, whylen, "replaced: the manager declared process id %u dead (and has "
                 "forgotten it since); a process declared dead never comes back", id);
        m->fenced++;
        MC_WARNING("process id %u at %s came back after it was declared dead and forgotten; "
                   "told it was replaced (fenced)", id, src);
    }
}

/* Does this registration come from a process this manager declared dead? It carries the id
 * this manager instance gave it, and that id is not the live process at the same address
 * with the same pid (that is a repeated registration). */
static bool registers_fenced(mc_manager *m, const Mc__Control__RegisterRequest *req,
                             const char *src, mc_reg_entry **out)
{
    *out = NULL;
    if (!req->previous_id || req->previous_manager != m->instance)
        return false;
    mc_reg_entry *e = mc_registry_find_id(m->registry, req->previous_id);
    *out = e;
    return !e || e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE ||
           strcmp(e->internal_addr, src) != 0 || e->pid != req->pid;
}

/* --- control messages ----------------------------------------------------------------- */

static void handle_register(mc_manager *m, const char *src, const uint8_t *data, size_t len,
                            mc_server_request *request)
{
    mc_time_us now = mc_clock_now_us();
    Mc__Control__RegisterReply reply = MC__CONTROL__REGISTER_REPLY__INIT;
    char why[256] = "";
    mc_reg_entry *e = NULL;
    Mc__Control__RegisterRequest *req = mc__control__register_request__unpack(NULL, len, data);
    mc_reg_status st = MC_REG_BAD_REQUEST;
    mc_reg_entry *gone = NULL;
    if (req && req->previous_id && m->ignore_heartbeats_from[0]) {
        /* the fault knob cuts the process off the manager: its registrations too */
        mc_reg_entry *k = mc_registry_find_id(m->registry, req->previous_id);
        if (k && strcmp(k->name, m->ignore_heartbeats_from) == 0) {
            m->ignored_heartbeats++;
            mc_pb_free(req);
            return;
        }
    }
    if (!req) {
        snprintf(why, sizeof why, "malformed registration");
    } else if (!from_own_address(req, src, why, sizeof why)) {
        /* refused below */
    } else if (registers_fenced(m, req, src, &gone)) {
        if (gone && gone->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE) {
            /* The id is alive but not at this address and pid: not that process. */
            snprintf(why, sizeof why, "id %u belongs to %s, not to pid %u at %s", req->previous_id,
                     gone->name, req->pid, src);
        } else {
            fence(m, gone, req->previous_id, src, why, sizeof why);
            reply.status = MC__CONTROL__REGISTER_STATUS__REGISTER_FENCED;
            reply.reason = why;
            mc_server_reply(m->server, request, &reply);
            mc_pb_free(req);
            return;
        }
    } else {
        st = mc_registry_add(m->registry, req, now, on_death, m, &e, why, sizeof why);
    }
    bool repeated = st == MC_REG_REPEATED;
    if (repeated)
        st = MC_REG_OK;
    if (st != MC_REG_OK) {
        m->refusals++;
        reply.status = st == MC_REG_DIGEST_MISMATCH
                           ? MC__CONTROL__REGISTER_STATUS__REGISTER_DIGEST_MISMATCH
                       : st == MC_REG_FULL ? MC__CONTROL__REGISTER_STATUS__REGISTER_REGISTRY_FULL
                                           : MC__CONTROL__REGISTER_STATUS__REGISTER_BAD_REQUEST;
        reply.reason = why;
        if (mc_manager_worth_logging(m->refusals))
            MC_WARNING("refused a %s from %s: %s (%llu refusals so far)",
                       req ? mc_role_name(req->role) : "registration", src, why,
                       (unsigned long long)m->refusals);
        mc_server_reply(m->server, request, &reply);
        mc_pb_free(req);
        return;
    }
    mc_pb_free(req);
    if (!repeated) {
        m->registrations++;
        mc_manager_publish_entry(m, e);
        mc_manager_ring_changed(m, e);
    }
    MC_INFO("%s %s: pid %u, internal %s%s%s, host %s", repeated ? "registered again" : "registered",
            e->name, e->pid, e->internal_addr, e->external_addr[0] ? ", external " : "",
            e->external_addr, e->host);

    reply.status = MC__CONTROL__REGISTER_STATUS__REGISTER_OK;
    reply.manager_instance = m->instance;
    reply.heartbeat_interval_ms = (uint32_t)m->heartbeat_ms;
    reply.dead_after_ms = (uint32_t)mc_manager_dead_after_ms(m, e->role);
    reply.self = mc_manager_info(e, now);
    Mc__Control__BackupRing ring = MC__CONTROL__BACKUP_RING__INIT;
    if (mc_manager_ring_fill(m, &ring))
        reply.ring = &ring;
    size_t n = mc_registry_count(m->registry) + 1;
    reply.peers = calloc(n, sizeof *reply.peers);
    if (reply.peers) {
        reply.peers[reply.n_peers] = mc_manager_self_info(m, now);
        if (reply.peers[reply.n_peers])
            reply.n_peers++;
        for (size_t i = 0; i < mc_registry_count(m->registry); i++) {
            mc_reg_entry *o = mc_registry_at(m->registry, i);
            if (o == e || o->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
                continue;
            Mc__Control__ProcessInfo *p = mc_manager_info(o, now);
            if (p)
                reply.peers[reply.n_peers++] = p;
        }
    }
    int rc = mc_server_reply(m->server, request, &reply);
    if (rc != 0)
        MC_WARNING("cannot answer %s's registration: %s", e->name, mc_status_name(rc));
    mc_pb_free(reply.self);
    for (size_t i = 0; i < reply.n_peers; i++)
        mc_pb_free(reply.peers[i]);
    free(reply.peers);
    mc_manager_ring_clear(&ring);
    if (!repeated)
        mc_manager_broadcast(m, MC__CONTROL__EVENT_KIND__EVENT_BIRTH, e, "registered");
}

/* A heartbeat sent as a request is answered: alive or not (the process's lease). */
static void answer_heartbeat(mc_manager *m, mc_server_request *request, bool alive,
                             mc_role role)
{
    if (!request)
        return;
    Mc__Control__HeartbeatReply r = MC__CONTROL__HEARTBEAT_REPLY__INIT;
    r.alive = alive;
    r.manager_instance = m->instance;
    r.dead_after_ms = (uint32_t)mc_manager_dead_after_ms(m, role);
    mc_server_reply(m->server, request, &r);
}

static void handle_heartbeat(mc_manager *m, const char *src, const uint8_t *data, size_t len,
                             mc_server_request *request)
{
    Mc__Control__Heartbeat *hb = mc__control__heartbeat__unpack(NULL, len, data);
    if (!hb) {
        mc_manager_unusable(m, "malformed heartbeat", src);
        return;
    }
    mc_reg_entry *e = mc_registry_find_id(m->registry, hb->id);
    if (m->ignore_heartbeats_from[0] && e && strcmp(e->name, m->ignore_heartbeats_from) == 0) {
        m->ignored_heartbeats++; /* the fault knob: as if it never arrived */
        mc_pb_free(hb);
        return;
    }
    m->heartbeats++;
    bool ok = e && strcmp(e->internal_addr, src) == 0 &&
              mc_registry_heartbeat(m->registry, hb->id, hb->load, mc_clock_now_us());
    answer_heartbeat(m, request, ok, e ? e->role : MC_ROLE_UNKNOWN);
    if (ok) {
        mc_pb_free(hb);
        return;
    }
    if (e && strcmp(e->internal_addr, src) == 0 && hb->manager_instance == m->instance &&
        e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE) {
        /* The process this manager declared dead speaks again: fenced. */
        char why[256];
        fence(m, e, hb->id, src, why, sizeof why);
        Mc__Control__UnknownProcess u = MC__CONTROL__UNKNOWN_PROCESS__INIT;
        u.id = hb->id;
        u.reason = why;
        u.fenced = true;
        mc_server_send(m->server, src, MC_CTL_UNKNOWN_PROCESS, &u);
        mc_pb_free(hb);
        return;
    }
    m->unknown_heartbeats++;
    Mc__Control__UnknownProcess u = MC__CONTROL__UNKNOWN_PROCESS__INIT;
    u.id = hb->id;
    u.reason = (char *)(e ? "the manager marked it dead" : "no process with that id");
    /* Logged the first ten times and then once in a thousand: a flood stays counted
     * (counts/unknownHeartbeats) without filling the log. */
    if (mc_manager_worth_logging(m->unknown_heartbeats))
        MC_INFO("heartbeat from %s for id %u (%s); asking it to register again (%llu so far)",
                src, hb->id, u.reason, (unsigned long long)m->unknown_heartbeats);
    mc_server_send(m->server, src, MC_CTL_UNKNOWN_PROCESS, &u);
    mc_pb_free(hb);
}

static void handle_deregister(mc_manager *m, const char *src, const uint8_t *data, size_t len,
                              mc_server_request *request)
{
    Mc__Control__Deregister *d = mc__control__deregister__unpack(NULL, len, data);
    Mc__Control__DeregisterReply reply = MC__CONTROL__DEREGISTER_REPLY__INIT;
    mc_reg_entry *e = d ? mc_registry_find_id(m->registry, d->id) : NULL;
    if (e && strcmp(e->internal_addr, src) == 0) {
        char reason[160];
        snprintf(reason, sizeof reason, "shut down (%s)", d->reason && *d->reason ? d->reason : "no reason");
        if (mc_registry_mark(m->registry, e->id, MC__CONTROL__PROCESS_STATE__STATE_STOPPED, reason,
                             mc_clock_now_us())) {
            reply.ok = true;
            mc_server_forget_peer(m->server, e->internal_addr);
            MC_INFO("%s deregistered: %s", e->name, reason);
            mc_manager_drop_globals(m, e);
            mc_manager_ring_changed(m, e);
            mc_manager_broadcast(m, MC__CONTROL__EVENT_KIND__EVENT_DEATH, e, reason);
            if (e->role == MC_ROLE_CELLAPP) {
                mc_cells_auto_process_gone(m, e->id);
                mc_manager_cells_process_gone(m, e->id);
            }
        }
    } else {
        mc_manager_unusable(m, "deregistration for an unknown process", src);
    }
    mc_pb_free(d);
    if (request)
        mc_server_reply(m->server, request, &reply);
}

/* Does entry e match a watcher TARGET? */
static void on_control(mc_server *s, void *ctx, uint8_t msg_id, const char *src,
                       const uint8_t *data, size_t len, mc_server_request *request)
{
    mc_manager *m = ctx;
    switch (msg_id) {
    case MC_CTL_REGISTER:
        if (!request) {
            mc_manager_unusable(m, "REGISTER that is not a request", src);
            return;
        }
        handle_register(m, src, data, len, request);
        return;
    case MC_CTL_HEARTBEAT:
        handle_heartbeat(m, src, data, len, request);
        return;
    case MC_CTL_DEREGISTER:
        handle_deregister(m, src, data, len, request);
        return;
    case MC_CTL_QUERY:
        mc_manager_handle_query(m, data, len, request);
        return;
    case MC_CTL_ID_RANGE:
        mc_manager_handle_id_range(m, src, data, len, request);
        return;
    case MC_CTL_GLOBAL_REGISTER:
    case MC_CTL_GLOBAL_DEREGISTER:
    case MC_CTL_GLOBAL_LOOKUP:
        mc_manager_handle_global(m, msg_id, src, data, len, request);
        return;
    case MC_CTL_SPACE_NOTICE:
        mc_manager_cells_on_notice(m, src, data, len);
        return;
    case MC_CTL_CELL_LOAD:
        mc_cells_auto_on_load(m, src, data, len);
        return;
    default:
        mc_manager_unusable(m, "a message that is not for the manager", src);
    }
}

static void on_channel_dead(mc_server *s, void *ctx, const char *peer)
{
    mc_manager *m = ctx;
    mc_reg_entry *e = mc_registry_find_alive_addr(m->registry, peer);
    if (e && mc_registry_mark(m->registry, e->id, MC__CONTROL__PROCESS_STATE__STATE_DEAD,
                              "its channel died", mc_clock_now_us()))
        on_death(m, e);
}

static void on_ready(mc_server *s, void *ctx)
{
    mc_manager *m = ctx;
    m->server = s;
    const mc_config *cfg = mc_server_config(s);
    m->dead_after_ms = mc_config_get_uint(cfg, "deadAfterMs");
    for (size_t i = 0; i < MC_MANAGER_ROLE_TIMEOUTS; i++)
        m->role_dead_after_ms[mc_manager_role_timeouts[i].role] =
            mc_config_get_uint(cfg, mc_manager_role_timeouts[i].option);
    m->heartbeat_ms = mc_config_get_uint(cfg, "heartbeatMs");
    m->registry = mc_registry_new(mc_server_digest(s), m->dead_after_ms * MC_US_PER_MS);
    m->expire_ev = event_new(mc_server_event_base(s), -1, EV_PERSIST, on_expire_tick, m);
    m->space_homes = mc_space_homes_new(mc_config_get_uint(cfg, "spaceHomesMax"));
    if (!m->registry || !m->expire_ev || !m->space_homes || !mc_manager_cells_init(m) ||
        !mc_cells_auto_init(m)) {
        MC_CRITICAL("out of memory");
        mc_server_shutdown(s, "out of memory");
        return;
    }
    sync_dead_after(m);
    struct timeval tv = {0, EXPIRE_CHECK_MS * 1000};
    event_add(m->expire_ev, &tv);
    mc_manager_publish(m);
    mc_manager_publish_ids(m);
    mc_manager_publish_globals(m);
    if (mc_manager_publish_ring(m) != 0)
        MC_WARNING("cannot publish the backupRing/ watchers");
    if (*mc_config_get_string(cfg, "consolePasswordFile")) {
        char why[300];
        m->console = mc_console_new(m, s, why, sizeof why);
        if (!m->console) {
            MC_CRITICAL("console: %s", why);
            mc_server_shutdown(s, "the console could not start");
            return;
        }
    }
    if (m->ids.path[0])
        MC_INFO("entity ids: state file %s, continuing from id %llu", m->ids.path,
                (unsigned long long)m->ids.next);
    else
        MC_WARNING("no --stateFile: entity ids restart at 1 after a manager restart (ids may "
                   "repeat in a cluster that outlives this manager)");
    MC_INFO("manager ready at %s: dead after %llu ms of silence (loginapps %llu, baseapps "
            "%llu, cellapps %llu), heartbeats every %llu ms",
            mc_server_internal_addr(s), (unsigned long long)m->dead_after_ms,
            (unsigned long long)mc_manager_dead_after_ms(m, MC_ROLE_LOGINAPP),
            (unsigned long long)mc_manager_dead_after_ms(m, MC_ROLE_BASEAPP),
            (unsigned long long)mc_manager_dead_after_ms(m, MC_ROLE_CELLAPP),
            (unsigned long long)m->heartbeat_ms);
}

static void on_free(mc_server *s, void *ctx)
{
    mc_manager *m = ctx;
    mc_console_free(m->console);
    m->console = NULL;
    if (m->expire_ev)
        event_free(m->expire_ev);
    m->expire_ev = NULL;
    mc_cells_auto_stop(m);
    mc_manager_cells_stop(m);
}

static void on_shutdown(mc_server *s, void *ctx)
{
    mc_manager *m = ctx;
    if (m->expire_ev)
        event_del(m->expire_ev);
}

/* A random manager instance (never 0): ids this manager gives are tied to it. */
static uint64_t new_instance(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v)
        v = (uint64_t)mc_clock_now_us() * 6364136223846793005ull ^ (uint64_t)getpid() << 32;
    return v ? v : 1;
}

mc_manager *mc_manager_new(void)
{
    mc_manager *m = calloc(1, sizeof *m);
    if (m) {
        m->instance = new_instance();
        m->globals = mc_globals_new(MC_GLOBALS_MAX);
    }
    if (m && !m->globals) {
        free(m);
        return NULL;
    }
    if (m)
        mc_id_ranges_open(&m->ids, NULL, NULL, 0);
    return m;
}

bool mc_manager_open_state(mc_manager *m, const mc_config *cfg, char *why, size_t whylen)
{
    return mc_id_ranges_open(&m->ids, mc_config_get_string(cfg, "stateFile"), why, whylen);
}

void mc_manager_free(mc_manager *m)
{
    if (!m)
        return;
    mc_globals_free(m->globals);
    mc_space_homes_free(m->space_homes);
    mc_cells_auto_free(m);
    mc_manager_cells_free(m);
    mc_registry_free(m->registry);
    free(m);
}

void mc_manager_describe(mc_manager *m, mc_server_desc *desc)
{
    memset(desc, 0, sizeof *desc);
    desc->role = MC_ROLE_MANAGER;
    desc->summary = "The Mercury Cluster manager: registry of processes, births and deaths, queries.";
    desc->options = manager_options;
    desc->option_count = sizeof manager_options / sizeof manager_options[0];
    desc->ctx = m;
    desc->check_config = check_config;
    desc->on_ready = on_ready;
    desc->on_control = on_control;
    desc->on_channel_dead = on_channel_dead;
    desc->on_shutdown = on_shutdown;
    desc->on_free = on_free;
}
