/* The loginapp's watchers (docs/tools/loginapp.md): every answer by status, packets dropped
 * by reason, logins in flight, and the state of its parts. */
#include "loginapp.h"
#include "common/watcher.h"

#include <stdio.h>

/* Watcher names of the statuses, in mc_login_status order. */
static const char *const status_paths[MC_LOGIN_STATUS_COUNT] = {
    "ok", "noSuchUser", "badPassword", "alreadyLoggedIn", "badDigest", "noBaseapp",
    "overloaded", "rateLimited", "malformed", "serverError", "timedOut", "ticketExpired",
    "ticketUsed", "entityGone",
};

static const char *const drop_paths[LA_DROP_COUNT] = {
    "malformed", "badCookie", "expired", "pending", "shutdown", "noKey", "rateLimited",
};

void la_refresh_gauges(loginapp *la)
{
    la_gauges *g = &la->g;
    g->replies_kept = la->replies ? la_replies_count(la->replies) : 0;
    g->limit_addresses = la->addr_limits ? mc_limits_count(la->addr_limits) : 0;
    g->limit_accounts = la->account_limits ? mc_limits_count(la->account_limits) : 0;
    g->backoff_accounts = la->backoff ? mc_limits_count(la->backoff) : 0;
    if (la->pool) {
        mc_pwhash_stats ps;
        mc_pwhash_get_stats(la->pool, &ps);
        g->pw_queued = ps.queued;
        g->pw_done = ps.done;
        g->pw_busy = ps.refused_busy;
        g->pw_failed = ps.failed;
        g->pw_source_busy = ps.refused_source;
    }
    if (la->accounts) {
        la_accounts_stats as;
        la_accounts_get_stats(la->accounts, &as);
        g->redis_commands = as.commands;
        g->redis_errors = as.errors;
        g->redis_reconnects = as.reconnects;
        g->redis_stalls = as.stalls;
        g->redis_waiting = as.waiting;
        g->redis_connected = la_accounts_ready(la->accounts);
    }
}

int la_add_watchers(loginapp *la)
{
    mc_watchers *w = mc_server_watchers(la->server);
    char path[MC_WATCH_MAX_PATH];
    int bad = mc_server_histogram(la->server, LA_LOGIN_HISTOGRAM, LA_LOGIN_HISTOGRAM_HELP) ? 0 : -1;
    for (int i = 0; i < MC_LOGIN_STATUS_COUNT; i++) {
        if (i == MC_LOGIN_TIMED_OUT)
            continue; /* the client's own verdict: never answered */
        snprintf(path, sizeof path, "login/status/%s", status_paths[i]);
        bad |= mc_watch_add_uint(w, path, &la->st.status[i], MC_WATCH_READ_ONLY);
    }
    static const int resume_statuses[] = {MC_LOGIN_OK, MC_LOGIN_OVERLOADED,
                                          MC_LOGIN_RATE_LIMITED, MC_LOGIN_SERVER_ERROR,
                                          MC_LOGIN_TICKET_EXPIRED, MC_LOGIN_TICKET_USED,
                                          MC_LOGIN_ENTITY_GONE};
    for (size_t i = 0; i < sizeof resume_statuses / sizeof resume_statuses[0]; i++) {
        snprintf(path, sizeof path, "resume/status/%s", status_paths[resume_statuses[i]]);
        bad |= mc_watch_add_uint(w, path, &la->st.resume_status[resume_statuses[i]],
                                 MC_WATCH_READ_ONLY);
    }
    for (int i = 0; i < LA_DROP_COUNT; i++) {
        snprintf(path, sizeof path, "login/dropped/%s", drop_paths[i]);
        bad |= mc_watch_add_uint(w, path, &la->st.dropped[i], MC_WATCH_READ_ONLY);
    }
    struct {
        const char *path;
        uint64_t *var;
    } u[] = {
        {"login/inFlight", &la->in_flight},
        {"login/datagrams", &la->st.datagrams},
        {"login/hellos", &la->st.hellos},
        {"login/logins", &la->st.logins},
        {"login/repeated", &la->st.repeated},
        {"login/accountsCreated", &la->st.created},
        {"login/takeovers", &la->st.takeovers},
        {"login/redirects", &la->st.redirects},
        {"login/sendErrors", &la->st.send_errors},
        {"login/redisErrors", &la->st.redis_errors},
        {"login/repliesKept", &la->g.replies_kept},
        {"login/limits/addresses", &la->g.limit_addresses},
        {"login/limits/accounts", &la->g.limit_accounts},
        {"login/limits/backoff", &la->g.backoff_accounts},
        {"login/pwhash/queued", &la->g.pw_queued},
        {"login/pwhash/done", &la->g.pw_done},
        {"login/pwhash/refusedBusy", &la->g.pw_busy},
        {"login/pwhash/failed", &la->g.pw_failed},
        {"login/pwhash/refusedAddress", &la->g.pw_source_busy},
        {"login/rehashed", &la->st.rehashed},
        {"login/redis/commands", &la->g.redis_commands},
        {"login/redis/errors", &la->g.redis_errors},
        {"login/redis/reconnects", &la->g.redis_reconnects},
        {"login/redis/stalls", &la->g.redis_stalls},
        {"login/redis/waiting", &la->g.redis_waiting},
        {"login/maxInFlight", &la->max_in_flight},
        {"resume/resumes", &la->st.resumes},
        {"resume/forged", &la->st.resume_forged},
        {"resume/badProof", &la->st.resume_bad_proof},
        {"resume/resumed", &la->st.resumed},
        {"resume/waves", &la->st.resume_waves},
        {"resume/baseappsAsked", &la->st.resume_asked},
        {"resume/fanOut", &la->resume_fan_out},
    };
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        bad |= mc_watch_add_uint(w, u[i].path, u[i].var, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_bool(w, "login/redis/connected", &la->g.redis_connected,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_bool(w, "login/autoCreateAccounts", &la->auto_create, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_const_string(w, "login/onlineLogin",
                                     la->online == LA_ONLINE_TAKEOVER ? "takeover" : "refuse");
    bad |= mc_watch_add_const_string(w, "login/accountType", la->account_type);
    bad |= mc_watch_add_const_string(w, "login/publicKey", la->pk_hex);
    return bad ? -1 : 0;
}
