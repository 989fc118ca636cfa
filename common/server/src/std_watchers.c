/* The standard watchers every process publishes. */
#include "server_internal.h"
#include "common/defs.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct server_cfg_watch {
    mc_server *s;
    const char *name;
};

static void get_uptime(void *ctx, mc_watch_value *out)
{
    mc_server *s = ctx;
    out->as.f = (double)(mc_clock_now_us() - s->started_at) / (double)MC_US_PER_S;
}
static void get_pid(void *ctx, mc_watch_value *out) { out->as.u = (uint64_t)((mc_server *)ctx)->pid; }
static void get_name(void *ctx, mc_watch_value *out) { out->as.s = strdup(((mc_server *)ctx)->name); }
static void get_load(void *ctx, mc_watch_value *out) { out->as.f = ((mc_server *)ctx)->load_value; }
static void get_registered(void *ctx, mc_watch_value *out)
{
    out->as.b = ((mc_server *)ctx)->reg == REG_REGISTERED;
}
static void get_id(void *ctx, mc_watch_value *out) { out->as.u = ((mc_server *)ctx)->id; }
static void get_calls_waiting(void *ctx, mc_watch_value *out)
{
    out->as.u = ((mc_server *)ctx)->nwatch_calls;
}

static void get_config(void *ctx, mc_watch_value *out)
{
    struct server_cfg_watch *c = ctx;
    out->as.s = strdup(mc_config_get_text(c->s->cfg, c->name));
}

static bool set_log_level(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    struct server_cfg_watch *c = ctx;
    mc_log_level level;
    if (mc_log_level_parse(v->as.s, &level) != 0) {
        snprintf(why, whylen, "unknown log level '%s' (trace, debug, info, warning, error, critical)",
                 v->as.s);
        return false;
    }
    if (mc_config_set(c->s->cfg, c->name, v->as.s, why, whylen) != MC_CONFIG_OK)
        return false;
    mc_log_set_level(level);
    MC_INFO("log level set to %s", mc_log_level_name(level));
    return true;
}

static bool call_shutdown(void *ctx, int argc, const char *const *argv, char **result,
                          char *why, size_t whylen)
{
    mc_server *s = ctx;
    char reason[96] = "command/shutdown";
    if (argc > 0)
        snprintf(reason, sizeof reason, "command/shutdown: %s", argv[0]);
    mc_server_shutdown(s, reason);
    *result = strdup("shutting down");
    return true;
}

static void get_ring(void *ctx, mc_watch_value *out)
{
    char text[MC_RING_MAX * (MC_ADDRESS_STRLEN + 1) + 16];
    mc_backup_ring_text(mc_server_backup_ring(ctx), text, sizeof text);
    out->as.s = strdup(text);
}

static void get_ring_version(void *ctx, mc_watch_value *out)
{
    out->as.u = mc_server_backup_ring(ctx)->version;
}

int mc_server_add_std_watchers(mc_server *s)
{
    mc_watchers *w = s->watchers;
    int bad = 0;
    bad |= mc_watch_add(w, "uptime", MC_WATCH_FLOAT, MC_WATCH_READ_ONLY, get_uptime, NULL, s);
    bad |= mc_watch_add(w, "pid", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_pid, NULL, s);
    bad |= mc_watch_add_const_string(w, "role", mc_role_name(s->desc.role));
    bad |= mc_watch_add(w, "name", MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_name, NULL, s);
    bad |= mc_watch_add(w, "load", MC_WATCH_FLOAT, MC_WATCH_READ_ONLY, get_load, NULL, s);
    bad |= mc_watch_add_const_string(w, "version", MC_VERSION);
    bad |= mc_watch_add_const_string(w, "host", s->hostname);
    bad |= mc_defs_add_watchers(s->defs, w, "defs");
    bad |= mc_watch_add_const_string(w, "defs/res", s->res_dir);
    bad |= mc_watch_add_const_string(w, "interfaces/internal", s->internal_addr);
    if (s->desc.has_external)
        bad |= mc_watch_add_const_string(w, "interfaces/external", s->external_addr);
    bad |= mc_watch_add_uint(w, "watcherRequests", &s->watcher_requests, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "controlRejected", &s->control_rejected, MC_WATCH_READ_ONLY);
    bad |= mc_server_ids_publish(s);
    bad |= mc_watch_add(w, "watcherCallsWaiting", MC_WATCH_UINT, MC_WATCH_READ_ONLY,
                        get_calls_waiting, NULL, s);
    bad |= mc_watch_add_callable(w, "command/shutdown", call_shutdown, s,
                                 "graceful shutdown: deregister, flush channels, exit 0");

    s->cfg_watches = calloc(s->option_count ? s->option_count : 1, sizeof *s->cfg_watches);
    if (!s->cfg_watches)
        return -1;
    for (size_t i = 0; i < s->option_count; i++) {
        struct server_cfg_watch *c = &s->cfg_watches[i];
        c->s = s;
        c->name = s->options[i].name;
        char path[MC_WATCH_MAX_PATH];
        snprintf(path, sizeof path, "config/%s", c->name);
        bool rw = strcmp(c->name, "logLevel") == 0;
        bad |= mc_watch_add(w, path, MC_WATCH_STRING, rw ? MC_WATCH_READ_WRITE : MC_WATCH_READ_ONLY,
                            get_config, rw ? set_log_level : NULL, c);
    }

    if (s->desc.role != MC_ROLE_MANAGER) {
        bad |= mc_watch_add_const_string(w, "manager/address", s->manager_addr);
        bad |= mc_watch_add(w, "manager/registered", MC_WATCH_BOOL, MC_WATCH_READ_ONLY,
                            get_registered, NULL, s);
        bad |= mc_watch_add(w, "manager/id", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_id, NULL, s);
        bad |= mc_watch_add_uint(w, "manager/heartbeatsSent", &s->heartbeats_sent,
                                 MC_WATCH_READ_ONLY);
        bad |= mc_watch_add_uint(w, "manager/heartbeatMs", &s->heartbeat_ms, MC_WATCH_READ_ONLY);
        bad |= mc_watch_add_uint(w, "manager/deadAfterMs", &s->dead_after_ms,
                                 MC_WATCH_READ_ONLY);
        bad |= mc_watch_add_uint(w, "manager/registrations", &s->registrations,
                                 MC_WATCH_READ_ONLY);
        bad |= mc_watch_add_uint(w, "manager/registrationProbes", &s->reg_probes,
                                 MC_WATCH_READ_ONLY);
        bad |= mc_watch_add_uint(w, "peers/births", &s->births_seen, MC_WATCH_READ_ONLY);
        bad |= mc_watch_add_uint(w, "peers/deaths", &s->deaths_seen, MC_WATCH_READ_ONLY);
        bad |= mc_watch_add(w, "backupRing/members", MC_WATCH_STRING, MC_WATCH_READ_ONLY,
                            get_ring, NULL, s);
        bad |= mc_watch_add(w, "backupRing/version", MC_WATCH_UINT, MC_WATCH_READ_ONLY,
                            get_ring_version, NULL, s);
        bad |= mc_watch_add_uint(w, "backupRing/updates", &s->ring_updates,
                                 MC_WATCH_READ_ONLY);
        bad |= mc_server_lease_publish(s) != 0;
        bad |= mc_server_globals_publish(s) != 0;
    }
    return bad ? -1 : 0;
}
