/* The server process: construction, the event loop, signals and graceful shutdown. */
#include "server_internal.h"
#include "common/defs.h"
#include "common/log.h"

#include <math.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TICK_MS 100

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
    mc_server *s = ctx;
    mc_time_us now = mc_clock_now_us();
    /* Three decimals are all the precision a load has (and watchers read nicer). */
    s->load_value = floor(mc_load_sample(&s->load) * 1000.0 + 0.5) / 1000.0;
    mc_server_reg_tick(s, now);
    if (s->lease) {
        bool valid = mc_lease_valid(s->lease, now);
        if (s->lease_logged_valid && !valid && s->reg != REG_NONE)
            MC_WARNING("out of touch with the manager at %s for half its dead-after time "
                       "(%llu ms): holding entity messages and writes until it answers",
                       s->manager_addr, (unsigned long long)(s->dead_after_ms / 2));
        s->lease_logged_valid = valid;
        mc_lease_tick(s->lease, now);
    }
}

static void fail(int *exit_code, const char *program, const char *msg)
{
    fprintf(stderr, "%s: %s\n", program, msg);
    *exit_code = 1;
}

mc_server *mc_server_new(const mc_server_desc *desc, int argc, char **argv, int *exit_code)
{
    const char *program = mc_role_name(desc->role);
    *exit_code = 1;
    mc_server *s = calloc(1, sizeof *s);
    if (!s) {
        fail(exit_code, program, "out of memory");
        return NULL;
    }
    s->desc = *desc;
    s->pid = getpid();
    /* Which run of the process this is: random, so that a pid and host name that come back
     * (a reboot, a new container) are never taken for this run. */
    if (sodium_init() < 0) {
        fail(exit_code, program, "libsodium cannot start");
        free(s);
        return NULL;
    }
    while (!s->incarnation)
        randombytes_buf(&s->incarnation, sizeof s->incarnation);
    s->started_at = mc_clock_now_us();
    snprintf(s->name, sizeof s->name, "%s", program);
    mc_log_set_process_name(s->name);
    if (gethostname(s->hostname, sizeof s->hostname) != 0)
        snprintf(s->hostname, sizeof s->hostname, "unknown");
    s->hostname[sizeof s->hostname - 1] = '\0';
    mc_load_init(&s->load, 0.5);

    char err[512] = "";
    if (mc_server_build_options(s) != 0) {
        fail(exit_code, program, "out of memory");
        goto bad;
    }
    s->cfg = mc_config_new(program, desc->summary, s->options, s->option_count);
    if (!s->cfg) {
        fail(exit_code, program, "invalid option table");
        goto bad;
    }
    mc_config_status cs = mc_config_parse_args(s->cfg, argc, argv, err, sizeof err);
    if (cs == MC_CONFIG_HELP) {
        *exit_code = 0;
        goto bad;
    }
    if (cs != MC_CONFIG_OK) {
        fail(exit_code, program, err);
        goto bad;
    }
    if (mc_config_positional_count(s->cfg) > 0) {
        snprintf(err, sizeof err, "unexpected argument '%s' (try --help)",
                 mc_config_positional(s->cfg, 0));
        fail(exit_code, program, err);
        goto bad;
    }
    if (!mc_server_check_options(s->cfg, err, sizeof err) ||
        (desc->check_config && !desc->check_config(s->cfg, err, sizeof err))) {
        fail(exit_code, program, err);
        goto bad;
    }
    mc_log_level level;
    if (mc_log_level_parse(mc_config_get_string(s->cfg, "logLevel"), &level) != 0) {
        snprintf(err, sizeof err, "--logLevel: unknown level '%s'",
                 mc_config_get_string(s->cfg, "logLevel"));
        fail(exit_code, program, err);
        goto bad;
    }
    mc_log_set_level(level);
    const char *binds[] = {"internal", desc->has_external ? "external" : NULL};
    for (size_t i = 0; i < 2; i++) {
        mc_address a;
        const char *v = binds[i] ? mc_config_get_string(s->cfg, binds[i]) : NULL;
        if (v && mc_address_parse(v, &a) != MC_OK) {
            snprintf(err, sizeof err, "--%s: '%s' is not IP:PORT", binds[i], v);
            fail(exit_code, program, err);
            goto bad;
        }
    }
    if (desc->role != MC_ROLE_MANAGER) {
        const char *m = mc_config_get_string(s->cfg, "manager");
        if (mc_address_parse(m, &s->manager) != MC_OK || s->manager.port == 0) {
            snprintf(err, sizeof err, "--manager: '%s' is not IP:PORT", m);
            fail(exit_code, program, err);
            goto bad;
        }
        mc_address_format(&s->manager, s->manager_addr, sizeof s->manager_addr);
    }

    if (!mc_server_resolve_res(mc_config_get_string(s->cfg, "res"), s->res_dir,
                               sizeof s->res_dir, err, sizeof err)) {
        fail(exit_code, program, err);
        goto bad;
    }
    mc_entity_defs *defs = mc_defs_load(s->res_dir, err, sizeof err);
    if (!defs) {
        char msg[sizeof s->res_dir + sizeof err + 64];
        snprintf(msg, sizeof msg, "cannot load the defs in %s: %s", s->res_dir, err);
        fail(exit_code, program, msg);
        goto bad;
    }
    s->defs = defs;
    snprintf(s->digest, sizeof s->digest, "%s", mc_defs_digest_hex(defs));

    s->base = event_base_new();
    s->watchers = mc_watchers_new();
    if (!s->base || !s->watchers) {
        fail(exit_code, program, "out of memory");
        goto bad;
    }
    s->up.watcher_request = mc_server_watcher_request;
    s->up.process_event = mc_server_reg_on_event;
    s->up.unknown_process = mc_server_reg_on_unknown;
    s->up.manager_dead = mc_server_reg_on_manager_dead;
    if (mc_server_open_interfaces(s, err, sizeof err) != 0) {
        fail(exit_code, program, err);
        goto bad;
    }
    if (s->desc.role != MC_ROLE_MANAGER) {
        s->lease = mc_lease_new((size_t)mc_config_get_uint(s->cfg, "leaseHeldMax"),
                                (size_t)mc_config_get_uint(s->cfg, "leaseHeldBytes"));
        if (!s->lease) {
            fail(exit_code, program, "out of memory");
            goto bad;
        }
    }
    if (mc_server_add_std_watchers(s) != 0) {
        fail(exit_code, program, "cannot publish the standard watchers");
        goto bad;
    }
    if (mc_server_http_open(s, err, sizeof err) != 0) {
        fail(exit_code, program, err);
        goto bad;
    }
    s->sigterm_ev = evsignal_new(s->base, SIGTERM, mc_server_on_signal, s);
    s->sigint_ev = evsignal_new(s->base, SIGINT, mc_server_on_signal, s);
    s->tick_ev = event_new(s->base, -1, EV_PERSIST, on_tick, s);
    s->shutdown_ev = event_new(s->base, -1, EV_PERSIST, mc_server_on_shutdown_step, s);
    if (!s->sigterm_ev || !s->sigint_ev || !s->tick_ev || !s->shutdown_ev) {
        fail(exit_code, program, "cannot create events");
        goto bad;
    }
    if (mc_server_lag_init(s) != 0) {
        fail(exit_code, program, "cannot start the loop lag probe");
        goto bad;
    }
    *exit_code = 0;
    return s;
bad:
    mc_server_free(s);
    return NULL;
}

int mc_server_run(mc_server *s)
{
    /* Ignore SIGPIPE (ssh/pipes in deploy scripts); signals come as libevent events. */
    signal(SIGPIPE, SIG_IGN);
    event_add(s->sigterm_ev, NULL);
    event_add(s->sigint_ev, NULL);
    struct timeval tv = {0, TICK_MS * 1000};
    event_add(s->tick_ev, &tv);
    mc_server_lag_start(s);
    MC_INFO("%s %s pid %d: internal %s%s%s, defs %s (digest %.12s...)",
            mc_role_name(s->desc.role), MC_VERSION, (int)s->pid, s->internal_addr,
            s->desc.has_external ? ", external " : "", s->desc.has_external ? s->external_addr : "",
            s->res_dir, s->digest);
    if (s->desc.role == MC_ROLE_MANAGER) {
        if (s->desc.on_ready)
            s->desc.on_ready(s, s->desc.ctx);
    } else {
        mc_server_reg_tick(s, mc_clock_now_us());
    }
    event_base_dispatch(s->base);
    return s->exit_code;
}

void mc_server_free(mc_server *s)
{
    if (!s)
        return;
    s->freeing = true; /* watcher calls completed from here on are not answered */
    /* Held entity messages are never sent now: their owners hear so while they exist. */
    if (s->lease)
        mc_lease_drop_all(s->lease);
    if (s->desc.on_free && s->base)
        s->desc.on_free(s, s->desc.ctx);
    if (s->sigterm_ev)
        event_free(s->sigterm_ev);
    if (s->sigint_ev)
        event_free(s->sigint_ev);
    if (s->tick_ev)
        event_free(s->tick_ev);
    mc_server_lag_free(s);
    if (s->shutdown_ev)
        event_free(s->shutdown_ev);
    mc_server_close_interfaces(s);
    mc_server_http_free(s);
    for (size_t i = 0; i < s->npeers; i++)
        free(s->peers[i]);
    free(s->peers);
    free(s->channels);
    mc_watchers_free(s->watchers); /* detaches the dones of calls still waiting */
    mc_server_watch_calls_free(s);
    if (s->base)
        event_base_free(s->base);
    if (s->defs)
        mc_defs_free(s->defs);
    mc_config_free(s->cfg);
    free(s->cfg_watches);
    free(s->options);
    mc_lease_free(s->lease);
    free(s->lease_watch_refs);
    mc_server_globals_free(s);
    free(s);
}

int mc_server_main(const mc_server_desc *desc, int argc, char **argv)
{
    int code = 1;
    mc_server *s = mc_server_new(desc, argc, argv, &code);
    if (!s)
        return code;
    code = mc_server_run(s);
    mc_server_free(s);
    return code;
}

struct event_base *mc_server_event_base(mc_server *s) { return s->base; }
mc_watchers *mc_server_watchers(mc_server *s) { return s->watchers; }
const mc_config *mc_server_config(const mc_server *s) { return s->cfg; }
mc_role mc_server_role(const mc_server *s) { return s->desc.role; }
const char *mc_server_name(const mc_server *s) { return s->name; }
uint64_t mc_server_incarnation(const mc_server *s) { return s->incarnation; }
const char *mc_server_digest(const mc_server *s) { return s->digest; }
const struct mc_entity_defs *mc_server_defs(const mc_server *s) { return s->defs; }
const char *mc_server_internal_addr(const mc_server *s) { return s->internal_addr; }
const char *mc_server_external_addr(const mc_server *s) { return s->external_addr; }
double mc_server_load(const mc_server *s) { return s->load_value; }
mc_lease *mc_server_lease(mc_server *s) { return s->lease; }
void mc_server_lease_writes_source(mc_server *s, size_t (*fn)(void *ctx), void *ctx)
{
    s->writes_held_fn = fn;
    s->writes_held_ctx = ctx;
}
bool mc_server_left_cleanly(const mc_server *s) { return s->deregister_confirmed; }

bool mc_server_lease_valid(mc_server *s)
{
    return !s->lease || mc_lease_valid(s->lease, mc_clock_now_us());
}
