/* loginapp: the door clients log in through (loginapp.h, docs/tools/loginapp.md). A server
 * process on the framework (common/server) whose external endpoint is a plain UDP socket
 * for the login exchange (secure/login.h). */
#include "loginapp.h"
#include "common/clock.h"
#include "common/defs.h"
#include "common/log.h"

#include <event2/event.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_MS 100
#define REPLIES_KEPT 65536u
/* Longer than a cookie lives (10 s, or until the second rotation of the secret). */
#define REPLIES_KEEP_MS (3 * MC_SECURE_COOKIE_MS)

static uint64_t now_ms(void) { return mc_clock_now_us() / 1000u; }

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    loginapp *la = ctx;
    uint64_t now = now_ms();
    if (now - la->secret_rotated_ms >= MC_SECURE_COOKIE_MS) {
        mc_secure_secret_rotate(&la->secret);
        la->secret_rotated_ms = now;
    }
    la_logins_tick(la);
    la_resumes_tick(la);
    la_refresh_gauges(la);
}

/* The first line of a file (the Redis password), or "" when path is empty. */
static int read_first_line(const char *path, char *out, size_t outlen, char *err, size_t errlen)
{
    out[0] = '\0';
    if (!path || !*path)
        return 0;
    FILE *f = fopen(path, "r");
    if (!f || !fgets(out, (int)outlen, f)) {
        if (f)
            fclose(f);
        snprintf(err, errlen, "--redisPasswordFile: cannot read '%s'", path);
        return -1;
    }
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
    return 0;
}

static int setup(loginapp *la, char *err, size_t errlen)
{
    const mc_config *cfg = mc_server_config(la->server);
    la->base = mc_server_event_base(la->server);
    if (la_configure(la, cfg, err, errlen) != 0 || la_open_external(la, err, errlen) != 0)
        return -1;
    if (!mc_defs_type_by_name(mc_server_defs(la->server), la->account_type)) {
        snprintf(err, errlen, "--accountType: the defs have no entity type '%s'", la->account_type);
        return -1;
    }
    mc_pwhash_cost cost;
    mc_pwhash_cost_named(mc_config_get_string(cfg, "pwhashCost"), &cost);
    uint64_t keys = mc_config_get_uint(cfg, "limitKeys");
    mc_limits_config ac = {.kind = MC_LIMITS_BUCKETS, .capacity = keys,
                           .rate = mc_config_get_float(cfg, "addressRate"),
                           .burst = mc_config_get_float(cfg, "addressBurst")};
    mc_limits_config rc = ac;
    rc.burst = mc_config_get_float(cfg, "addressRefusals");
    mc_limits_config nc = {.kind = MC_LIMITS_BUCKETS, .capacity = keys,
                           .rate = mc_config_get_float(cfg, "accountFailRate"),
                           .burst = mc_config_get_float(cfg, "accountFailBurst")};
    mc_limits_config bc = {.kind = MC_LIMITS_BACKOFF, .capacity = keys,
                           .base_us = mc_config_get_uint(cfg, "failedBackoffMs") * MC_US_PER_MS,
                           .max_us = mc_config_get_uint(cfg, "failedBackoffMaxMs") * MC_US_PER_MS};
    la->addr_limits = mc_limits_new(&ac);
    la->addr_refusals = mc_limits_new(&rc);
    la->account_limits = mc_limits_new(&nc);
    la->backoff = mc_limits_new(&bc);
    la->replies = la_replies_new(REPLIES_KEPT, REPLIES_KEEP_MS);
    if (!la->addr_limits || !la->addr_refusals || !la->account_limits || !la->backoff || !la->replies) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    la->pool = mc_pwhash_pool_new(la->base, (unsigned)mc_config_get_uint(cfg, "pwhashThreads"),
                                  mc_config_get_uint(cfg, "pwhashQueue"), cost);
    if (!la->pool ||
        mc_pwhash_set_per_source(la->pool, mc_config_get_uint(cfg, "pwhashPerAddress")) != 0) {
        snprintf(err, errlen, "cannot start the password hashing threads");
        return -1;
    }
    if (mc_pwhash_dummy(la->pool, la->dummy_hash) != 0) {
        snprintf(err, errlen, "cannot make the dummy password hash (out of memory)");
        return -1;
    }
    const char *redis = mc_config_get_string(cfg, "redis");
    if (redis && *redis) {
        char password[512];
        if (read_first_line(mc_config_get_string(cfg, "redisPasswordFile"), password,
                            sizeof password, err, errlen) != 0)
            return -1;
        la->accounts = la_accounts_new(la->base, redis, password, err, errlen);
        sodium_memzero(password, sizeof password);
        if (!la->accounts)
            return -1;
    } else {
        MC_WARNING("loginapp: no --redis: no accounts, every login is answered 'server error'");
    }
    if (!la->has_key)
        MC_WARNING("loginapp: no --loginKey: credentials cannot be opened, every LOGIN is "
                   "dropped (mc-login-keys DIR makes DIR/login.key)");
    la->tick_ev = event_new(la->base, -1, EV_PERSIST, on_tick, la);
    struct timeval tv = {0, TICK_MS * 1000};
    if (!la->tick_ev || event_add(la->tick_ev, &tv) != 0 || la_external_start(la) != 0) {
        snprintf(err, errlen, "cannot set up the loginapp's events");
        return -1;
    }
    la_refresh_gauges(la);
    if (la_add_watchers(la) != 0) {
        snprintf(err, errlen, "cannot publish the login/ watchers");
        return -1;
    }
    MC_INFO("loginapp: logins on %s, accounts in redis %s (%s), new accounts %s, a login of "
            "an online account %s, public key %s",
            mc_server_external_addr(la->server), *redis ? redis : "(none)",
            mc_config_get_string(cfg, "pwhashCost"),
            la->auto_create ? "created on first login" : "refused (no such user)",
            la->online == LA_ONLINE_TAKEOVER ? "takes over when asked" : "is refused",
            la->has_key ? la->pk_hex : "(none)");
    return 0;
}

static void on_shutdown(mc_server *s, void *ctx)
{
    (void)s;
    loginapp *la = ctx;
    la->shutting_down = true;
    MC_INFO("loginapp: no new logins (shutting down; %llu in flight)",
            (unsigned long long)la->in_flight);
}

/* The parts whose callbacks would run during the server's freeing go first; the logins
 * still waiting on the server (manager queries, PREPARE_LOGIN requests) are released by
 * those callbacks while the server frees, and the rest after it (main). */
static void on_free(mc_server *s, void *ctx)
{
    (void)s;
    loginapp *la = ctx;
    la->freeing = true;
    if (la->tick_ev)
        event_free(la->tick_ev);
    la->tick_ev = NULL;
    la_external_close(la);
    mc_pwhash_pool_free(la->pool); /* undelivered callbacks are never called */
    la->pool = NULL;
    la_accounts_free(la->accounts); /* waiting callbacks get an error */
    la->accounts = NULL;
}

int main(int argc, char **argv)
{
    loginapp *la = calloc(1, sizeof *la);
    if (!la) {
        fprintf(stderr, "loginapp: out of memory\n");
        return 1;
    }
    la->fd = -1;
    mc_server_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.role = MC_ROLE_LOGINAPP;
    desc.summary = "The Mercury Cluster loginapp: checks clients' credentials against their "
                   "accounts in Redis and hands each to the least-loaded baseapp with a "
                   "one-time session.";
    desc.has_external = true;
    desc.options = la_options;
    desc.option_count = la_option_count;
    desc.check_config = la_check_config;
    desc.on_shutdown = on_shutdown;
    desc.on_free = on_free;
    desc.ctx = la;
    int code = 1;
    la->server = mc_server_new(&desc, argc, argv, &code);
    if (la->server) {
        char err[512];
        if (setup(la, err, sizeof err) != 0) {
            fprintf(stderr, "loginapp: %s\n", err);
            code = 1;
        } else {
            code = mc_server_run(la->server);
        }
        mc_server_free(la->server);
    }
    la_logins_free(la);
    la_resumes_free(la);
    la_external_close(la);
    mc_limits_free(la->addr_limits);
    mc_limits_free(la->addr_refusals);
    mc_limits_free(la->account_limits);
    mc_limits_free(la->backoff);
    la_replies_free(la->replies);
    sodium_memzero(la, sizeof *la);
    free(la);
    return code;
}
