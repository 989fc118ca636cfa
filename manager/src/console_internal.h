/* The web console's internals shared by its modules (not a public API): sessions
 * (console_auth.c), pages (console.c), the JSON API (console_api.c; requests waiting for
 * other processes in console_pending.c; watchers in console_watchers.c; entities in
 * console_entity.c), the sampler behind the plots (console_series.c), JSON output and form
 * input helpers (console_json.c). */
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

/* What a console request waiting for processes is (console_pending.c). */
enum { CON_OP_LS, CON_OP_GET, CON_OP_SET, CON_OP_CALL, CON_OP_ENTITY };
#define CON_MAX_CALL_ARGS 16
#define CON_MAX_PATH_TEXT 256
#define CON_MAX_VALUE_TEXT 4096
#define CON_MAX_LISTED 128

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

/* One entry of a listing (CON_OP_LS) with its value once read. */
typedef struct {
    char name[MC_WATCH_MAX_NAME + 1];
    bool dir;
    Mc__Control__WatcherType type;
    Mc__Control__WatcherMode mode;
    char *value; /* heap; NULL: none (directory, callable, no answer) */
} con_listed;

struct con_pending {
    con_pending *prev, *next;
    mc_console *c;                /* NULL once the console is gone */
    struct evhttp_request *req;   /* NULL once the client is gone */
    int op;
    int waiting;                  /* replies outstanding */
    char process[MC_REG_NAME_MAX];
    /* CON_OP_LS: the listing, whose leaves' values are asked for one by one */
    char dir[CON_MAX_PATH_TEXT + 1];
    con_listed *listed;
    size_t nlisted;
    /* CON_OP_ENTITY */
    int32_t id;
    char global[80];
    struct evbuffer *parts;
    int nparts;
    char type[64];
};

/* console_pending.c: a request waiting for processes (503 when CON_PENDING_MAX wait; the
 * client's connection closing forgets its request); the request to answer now (NULL when
 * the client or the console is gone); free it. */
con_pending *con_pending_new(mc_console *c, struct evhttp_request *req, int op);
struct evhttp_request *con_pending_take(con_pending *p);
void con_pending_free(con_pending *p);
/* Text of printable characters, shorter than max? */
bool con_text_ok(const char *s, size_t max);
/* The session, or a 401 sent (and NULL); POSTs also need the CSRF token (else 403), GETs
 * and POSTs only (else 405). Counts the API call. */
con_session *con_authorised(mc_console *c, struct evhttp_request *req, bool post);

/* console_watchers.c: /api/ls, /api/get (op), /api/set, /api/call; entries as JSON. */
void con_api_ls_get(mc_console *c, struct evhttp_request *req, int op);
void con_api_set(mc_console *c, struct evhttp_request *req);
void con_api_call(mc_console *c, struct evhttp_request *req);
void con_entries_json(struct evbuffer *out, const Mc__Control__WatcherReply *r);

/* console_entity.c: /api/entity. */
void con_api_entity(mc_console *c, struct evhttp_request *req);

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
