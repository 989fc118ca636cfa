/* The manager's own watchers: every process with its state and load, counts, the
 * least-loaded processes, and the registry's settings. */
#include "manager_internal.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void get_state(void *ctx, mc_watch_value *out)
{
    out->as.s = strdup(mc_state_name(((mc_reg_entry *)ctx)->state));
}
static void get_load(void *ctx, mc_watch_value *out) { out->as.f = ((mc_reg_entry *)ctx)->load; }
static void get_role(void *ctx, mc_watch_value *out)
{
    out->as.s = strdup(mc_role_name(((mc_reg_entry *)ctx)->role));
}
static void get_pid(void *ctx, mc_watch_value *out) { out->as.u = ((mc_reg_entry *)ctx)->pid; }
static void get_hb_age(void *ctx, mc_watch_value *out)
{
    mc_reg_entry *e = ctx;
    mc_time_us now = mc_clock_now_us();
    out->as.u = now > e->last_heartbeat ? (now - e->last_heartbeat) / MC_US_PER_MS : 0;
}

void mc_manager_publish_entry(mc_manager *m, mc_reg_entry *e)
{
    mc_watchers *w = mc_server_watchers(m->server);
    char p[MC_WATCH_MAX_PATH];
#define P(leaf) (snprintf(p, sizeof p, "processes/%s/%s", e->name, leaf), p)
    mc_watch_add(w, P("state"), MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_state, NULL, e);
    mc_watch_add(w, P("load"), MC_WATCH_FLOAT, MC_WATCH_READ_ONLY, get_load, NULL, e);
    mc_watch_add(w, P("role"), MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_role, NULL, e);
    mc_watch_add(w, P("pid"), MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_pid, NULL, e);
    mc_watch_add(w, P("heartbeatAgeMs"), MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_hb_age, NULL, e);
    mc_watch_add_const_string(w, P("internal"), e->internal_addr);
    mc_watch_add_const_string(w, P("external"), e->external_addr);
    mc_watch_add_const_string(w, P("host"), e->host);
    mc_watch_add_const_string(w, P("reason"), e->reason);
#undef P
}

static void get_count(mc_manager *m, Mc__Control__ProcessState st, mc_watch_value *out)
{
    out->as.u = mc_registry_count_state(m->registry, st);
}
static void get_alive(void *ctx, mc_watch_value *out)
{
    get_count(ctx, MC__CONTROL__PROCESS_STATE__STATE_ALIVE, out);
}
static void get_dead(void *ctx, mc_watch_value *out)
{
    get_count(ctx, MC__CONTROL__PROCESS_STATE__STATE_DEAD, out);
}
static void get_stopped(void *ctx, mc_watch_value *out)
{
    get_count(ctx, MC__CONTROL__PROCESS_STATE__STATE_STOPPED, out);
}
static void get_least(mc_manager *m, mc_role role, mc_watch_value *out)
{
    mc_reg_entry *e = mc_registry_least_loaded(m->registry, role);
    out->as.s = strdup(e ? e->name : "");
}
static void get_least_base(void *ctx, mc_watch_value *out) { get_least(ctx, MC_ROLE_BASEAPP, out); }
static void get_least_cell(void *ctx, mc_watch_value *out) { get_least(ctx, MC_ROLE_CELLAPP, out); }
static void get_digest(void *ctx, mc_watch_value *out)
{
    out->as.s = strdup(mc_registry_digest(((mc_manager *)ctx)->registry));
}
static bool set_dead_after(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    mc_manager *m = ctx;
    if (!mc_manager_check_timing(v->as.u, m->heartbeat_ms, why, whylen))
        return false;
    m->dead_after_ms = v->as.u;
    MC_INFO("deadAfterMs set to %llu", (unsigned long long)m->dead_after_ms);
    return true;
}
static void get_dead_after(void *ctx, mc_watch_value *out)
{
    out->as.u = ((mc_manager *)ctx)->dead_after_ms;
}

/* registry/deadAfterMs<Role>: ctx is the manager's role_timeout_ref for the role. */
static bool set_role_dead_after(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    mc_manager_role_ref *r = ctx;
    if (v->as.u && !mc_manager_check_timing(v->as.u, r->m->heartbeat_ms, why, whylen))
        return false;
    r->m->role_dead_after_ms[r->role] = v->as.u;
    MC_INFO("%s set to %llu (%s)", r->option, (unsigned long long)v->as.u,
            v->as.u ? "its own" : "deadAfterMs");
    return true;
}
static void get_role_dead_after(void *ctx, mc_watch_value *out)
{
    mc_manager_role_ref *r = ctx;
    out->as.u = r->m->role_dead_after_ms[r->role];
}

static void get_ignore_hb(void *ctx, mc_watch_value *out)
{
    out->as.s = strdup(((mc_manager *)ctx)->ignore_heartbeats_from);
}
static bool set_ignore_hb(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    mc_manager *m = ctx;
    const char *name = v->as.s ? v->as.s : "";
    if (strlen(name) >= sizeof m->ignore_heartbeats_from) {
        snprintf(why, whylen, "a process name is shorter than %zu bytes",
                 sizeof m->ignore_heartbeats_from);
        return false;
    }
    snprintf(m->ignore_heartbeats_from, sizeof m->ignore_heartbeats_from, "%s", name);
    MC_WARNING("fault knob: heartbeats from %s are %s", *name ? name : "every process",
               *name ? "ignored" : "taken again");
    return true;
}

static void get_homes(void *ctx, mc_watch_value *out)
{
    mc_manager *m = ctx;
    out->as.u = m->space_homes ? mc_space_homes_count(m->space_homes) : 0;
}

static void get_homes_evicted(void *ctx, mc_watch_value *out)
{
    mc_manager *m = ctx;
    out->as.u = m->space_homes ? mc_space_homes_evicted(m->space_homes) : 0;
}

void mc_manager_publish(mc_manager *m)
{
    mc_watchers *w = mc_server_watchers(m->server);
    mc_watch_add(w, "spaceHomes/count", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_homes, NULL, m);
    mc_watch_add(w, "spaceHomes/evicted", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_homes_evicted,
                 NULL, m);
    mc_watch_add_uint(w, "spaceHomes/asked", &m->space_home_asks, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "spaceHomes/picked", &m->space_home_picks, MC_WATCH_READ_ONLY);
    mc_watch_add(w, "counts/alive", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_alive, NULL, m);
    mc_watch_add(w, "counts/dead", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_dead, NULL, m);
    mc_watch_add(w, "counts/stopped", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_stopped, NULL, m);
    mc_watch_add_uint(w, "counts/registrations", &m->registrations, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "counts/refusals", &m->refusals, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "counts/heartbeats", &m->heartbeats, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "counts/unknownHeartbeats", &m->unknown_heartbeats, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "counts/queries", &m->queries, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "counts/deaths", &m->deaths, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "counts/forgotten", &m->forgotten, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "counts/malformed", &m->malformed, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "counts/fenced", &m->fenced, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "registry/instance", &m->instance, MC_WATCH_READ_ONLY);
    mc_watch_add(w, "leastLoaded/baseapp", MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_least_base,
                 NULL, m);
    mc_watch_add(w, "leastLoaded/cellapp", MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_least_cell,
                 NULL, m);
    mc_watch_add(w, "registry/digest", MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_digest, NULL, m);
    mc_watch_add(w, "registry/deadAfterMs", MC_WATCH_UINT, MC_WATCH_READ_WRITE, get_dead_after,
                 set_dead_after, m);
    for (size_t i = 0; i < MC_MANAGER_ROLE_TIMEOUTS; i++) {
        m->role_refs[i] = (mc_manager_role_ref){m, mc_manager_role_timeouts[i].role,
                                          mc_manager_role_timeouts[i].option};
        char path[MC_WATCH_MAX_PATH];
        snprintf(path, sizeof path, "registry/%s", m->role_refs[i].option);
        mc_watch_add(w, path, MC_WATCH_UINT, MC_WATCH_READ_WRITE, get_role_dead_after,
                     set_role_dead_after, &m->role_refs[i]);
    }
    mc_watch_add_uint(w, "registry/heartbeatMs", &m->heartbeat_ms, MC_WATCH_READ_ONLY);
    mc_watch_add_directory(w, "processes");
    if (mc_config_get_bool(mc_server_config(m->server), "faultKnobs")) {
        mc_watch_add(w, "faults/ignoreHeartbeatsFrom", MC_WATCH_STRING, MC_WATCH_READ_WRITE,
                     get_ignore_hb, set_ignore_hb, m);
        mc_watch_add_uint(w, "faults/ignoredHeartbeats", &m->ignored_heartbeats,
                          MC_WATCH_READ_ONLY);
    }
}
