/* The web console's internals shared by its modules (not a public API): sessions
 * (console_auth.c), pages and the JSON API (console.c, console_api.c), the sampler behind
 * the plots (console_series.c), JSON output helpers (console_json.c). */
#ifndef MC_MANAGER_CONSOLE_INTERNAL_H
#define MC_MANAGER_CONSOLE_INTERNAL_H

#include "console.h"
#include "manager_internal.h"
#include "server/http.h"

#include "common/clock.h"

#include <stdbool.h>
#include <stdint.h>

struct evhttp_request;
struct evbuffer;
struct event;

#define CON_TOKEN_HEX 64         /* session and CSRF tokens: 32 random bytes in hex */
#define CON_PASSWORD_MAX 256
#define CON_SAMPLES 300          /* plot points kept (10 minutes at 2 s) */
#define CON_SAMPLE_PROCS 64      /* processes per sample */
#define CON_FAIL_WINDOW_US (60ull * MC_US_PER_S)
#define CON_REMOTE_TIMEOUT_MS 3000
#define CON_PENDING_MAX 64       /* console requests waiting for processes at once */

typedef struct {
    bool used;
    char token[CON_TOKEN_HEX + 1];
    char csrf[CON_TOKEN_HEX + 1];
    mc_time_us last_used;
} con_session;

/* One plot point: per process load and tick p99, and the cluster's totals. */
typedef struct {
    char name[MC_REG_NAME_MAX];
    double load;
    double tick_p99_ms; /* < 0: none (not a cellapp, or no answer) */
} con_proc_point;

typedef struct {
    mc_time_us at;
    size_t nprocs;
    con_proc_point procs[CON_SAMPLE_PROCS];
    double players;         /* < 0: unknown */
    double logins_per_s;
    double bytes_out_per_s;
} con_sample;

/* Counters of a process between two samples (for rates). */
typedef struct {
    char name[MC_REG_NAME_MAX];
    bool have_logins, have_bytes;
    uint64_t logins, bytes;
} con_counters;

typedef struct con_pending con_pending;

struct mc_console {
    struct mc_manager *m;
    mc_server *s;
    mc_http *http;
    uint8_t password_hash[32]; /* BLAKE2b of the password (compared in constant time) */
    /* sessions */
    con_session *sessions;
    size_t max_sessions;
    uint64_t session_idle_us;
    /* failed logins in the current window (at most max_failures per minute) */
    mc_time_us fail_window_start;
    uint64_t fail_in_window, max_failures;
    /* watchers console/... */
    uint64_t logins, login_failures, login_throttled, csrf_refused, unauthorised, api_requests,
        remote_failures, pending_refused;
    /* requests waiting for another process (console_api.c) */
    con_pending *pending;
    size_t npending;
    /* the sampler (console_series.c) */
    struct event *sample_ev;
    void *sampler;              /* shared with the requests in flight */
    uint64_t sample_ms;
    con_sample *ring;
    size_t ring_next, ring_count;
    con_sample round;           /* being filled by this round's replies */
    bool round_open;
    con_counters *prev, *cur;   /* CON_SAMPLE_PROCS each */
    size_t nprev, ncur;
    mc_time_us prev_at;
    uint64_t samples, sample_requests_failed;
};

/* console_auth.c */
int con_auth_init(mc_console *c, const char *password_file, char *err, size_t errlen);
/* The session token in a Cookie header's value (mc_console=, 64 characters), or false. */
bool con_cookie_parse(const char *header, char out[CON_TOKEN_HEX + 1]);
/* The session of the request's cookie, or NULL (touches it). */
con_session *con_session_of(mc_console *c, struct evhttp_request *req);
/* POST with the session's CSRF token in X-CSRF-Token? (counts a refusal) */
bool con_csrf_ok(mc_console *c, const con_session *s, struct evhttp_request *req);
void con_handle_login(mc_console *c, struct evhttp_request *req);
void con_handle_logout(mc_console *c, struct evhttp_request *req);

/* console_api.c */
int con_api_routes(mc_console *c);
void con_api_free(mc_console *c); /* detach requests still waiting */

/* console_series.c */
int con_series_start(mc_console *c);
void con_series_free(mc_console *c);
void con_series_json(mc_console *c, struct evbuffer *out);

/* console_json.c: JSON strings and numbers */
void con_json_str(struct evbuffer *out, const char *s);
void con_json_num(struct evbuffer *out, double v); /* null for NaN/Inf/negative sentinel */
/* The body of a POST as a form (application/x-www-form-urlencoded): the value of key, heap,
 * or NULL. */
char *con_form_value(struct evhttp_request *req, const char *key);
/* The value of key in a form or query string (percent-decoded), heap, or NULL. */
char *con_query_lookup(const char *query, const char *key);
/* The query parameter key, heap, or NULL. */
char *con_query_value(struct evhttp_request *req, const char *key);
/* A JSON reply (200) from out (drained). */
void con_reply_json(struct evhttp_request *req, struct evbuffer *out);

/* The page's Content-Security-Policy. */
#define CON_CSP                                                                             \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "            \
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

#endif
