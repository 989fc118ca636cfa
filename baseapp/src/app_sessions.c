/* The baseapp's login sessions: the table login/ issues into and clients/ takes from, its
 * options, its watchers sessions/..., and the once-a-second sweep that tells a base whose
 * client never came. */
#include "app.h"
#include "clients/client_sessions.h"
#include "clients/proxy.h"
#include "common/log.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

const mc_option app_session_options[APP_SESSION_OPTION_COUNT] = {
    {"sessionExpiryMs", MC_OPT_UINT, "30000",
     "how long a login session the baseapp issued waits for its client to connect "
     "(1000..600000)"},
    {"maxSessions", MC_OPT_UINT, "100000",
     "login sessions waiting for their clients at most (1..10000000)"},
};

/* A login session expired unused: if its base is here without a client and no other session
 * waits for one, the client never came (the login reply was lost, the client crashed): the
 * base hears onClientDeath as if its client had gone, so the game can end it (else an
 * account would stay online with nobody playing, and --onlineLogin=refuse lock it out). */
static void session_expired(void *ctx, int32_t entity_id)
{
    baseapp *a = ctx;
    mc_entity *ent = mc_engine_find(a->e, entity_id);
    if (!ent || ent->part != MC_PART_BASE || ent->in_reap || proxy_has_client(a->e, ent) ||
        base_sessions_has_entity(a->sessions, entity_id) || proxy_in_grace(a->e, entity_id))
        return;
    MC_INFO("%s %d: its client never came with its login session: onClientDeath",
            ent->td->name, (int)ent->id);
    a->sessions_unclaimed++;
    mc_engine_run_hook(a->e, ent, MC_HOOK_CLIENT_DEATH, NULL);
}

static void on_sweep(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    baseapp *a = ctx;
    base_sessions_expire(a->sessions, session_expired, a);
}

static void get_sessions(void *ctx, mc_watch_value *out)
{
    const struct app_session_watch *sw = ctx;
    base_sessions_stats st;
    base_sessions_get_stats(sw->app->sessions, &st);
    out->as.u = sw->off == (size_t)-1   ? base_sessions_count(sw->app->sessions)
                : sw->off == (size_t)-2 ? sw->app->sessions_unclaimed
                                        : *(const uint64_t *)((const char *)&st + sw->off);
}

static int add_watchers(baseapp *a)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(a->e));
    static const struct {
        const char *path;
        size_t off;
    } sess[] = {{"sessions/live", (size_t)-1},
                {"sessions/issued", offsetof(base_sessions_stats, issued)},
                {"sessions/taken", offsetof(base_sessions_stats, taken)},
                {"sessions/expired", offsetof(base_sessions_stats, expired)},
                {"sessions/refusedFull", offsetof(base_sessions_stats, refused_full)},
                {"sessions/unknownLookups", offsetof(base_sessions_stats, unknown_lookups)},
                {"sessions/unclaimed", (size_t)-2}};
    int bad = 0;
    for (size_t i = 0; i < sizeof sess / sizeof sess[0]; i++) {
        a->session_watch[i].off = sess[i].off;
        a->session_watch[i].app = a;
        bad |= mc_watch_add(w, sess[i].path, MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_sessions,
                            NULL, &a->session_watch[i]) != MC_WATCH_OK;
    }
    return bad ? -1 : 0;
}

int app_sessions_init(baseapp *a, char *err, size_t errlen)
{
    mc_server *s = mc_engine_server(a->e);
    const mc_config *cfg = mc_server_config(s);
    uint64_t expiry = mc_config_get_uint(cfg, "sessionExpiryMs");
    uint64_t max = mc_config_get_uint(cfg, "maxSessions");
    if (expiry < 1000 || expiry > 600000) {
        snprintf(err, errlen, "--sessionExpiryMs: %llu is not within 1000..600000",
                 (unsigned long long)expiry);
        return -1;
    }
    if (max < 1 || max > 10000000) {
        snprintf(err, errlen, "--maxSessions: %llu is not within 1..10000000",
                 (unsigned long long)max);
        return -1;
    }
    a->sessions = base_sessions_new((size_t)max, (uint32_t)expiry);
    if (!a->sessions) {
        snprintf(err, errlen, "cannot create the login session table");
        return -1;
    }
    a->sweep_ev = event_new(mc_server_event_base(s), -1, EV_PERSIST, on_sweep, a);
    struct timeval tv = {1, 0};
    if (!a->sweep_ev || event_add(a->sweep_ev, &tv) != 0) {
        snprintf(err, errlen, "cannot create the login sessions' timer");
        return -1;
    }
    if (add_watchers(a) != 0) {
        snprintf(err, errlen, "cannot publish the sessions/ watchers");
        return -1;
    }
    return 0;
}

void app_sessions_free(baseapp *a)
{
    if (a->sweep_ev)
        event_free(a->sweep_ev);
    a->sweep_ev = NULL;
    base_sessions_free(a->sessions);
    a->sessions = NULL;
}
