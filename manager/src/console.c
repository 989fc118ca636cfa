/* The manager's web console: setting it up, the pages and their assets (console.h). */
#include "console_assets.h"
#include "console_internal.h"

#include "common/log.h"

#include <event2/buffer.h>
#include <sodium.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot)
        return "application/octet-stream";
    if (strcmp(dot, ".html") == 0)
        return "text/html; charset=utf-8";
    if (strcmp(dot, ".js") == 0)
        return "text/javascript; charset=utf-8";
    if (strcmp(dot, ".css") == 0)
        return "text/css; charset=utf-8";
    if (strcmp(dot, ".svg") == 0)
        return "image/svg+xml";
    return "application/octet-stream";
}

static void send_asset(mc_console *c, struct evhttp_request *req, const char *name)
{
    const mc_console_asset *a = mc_console_asset_find(name);
    if (!a) {
        mc_http_error(c->http, req, 404, "no such file");
        return;
    }
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Security-Policy", CON_CSP);
    mc_http_reply(req, 200, type_of(name), a->data, a->len);
}

static bool is_read(struct evhttp_request *req)
{
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    return m == EVHTTP_REQ_GET || m == EVHTTP_REQ_HEAD;
}

/* "/": the console for a session, else the login page. */
static void serve_root(struct evhttp_request *req, void *ctx)
{
    mc_console *c = ctx;
    if (!is_read(req)) {
        mc_http_error(c->http, req, 405, "GET only");
        return;
    }
    send_asset(c, req, con_session_of(c, req) ? "index.html" : "login.html");
}

/* "/static/NAME": script, style (no secrets: served without a session). */
static void serve_static(struct evhttp_request *req, void *ctx)
{
    mc_console *c = ctx;
    if (!is_read(req)) {
        mc_http_error(c->http, req, 405, "GET only");
        return;
    }
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    const char *name = path + strlen("/static/");
    if (strchr(name, '/') || strstr(name, "..") || strstr(name, ".html")) {
        mc_http_error(c->http, req, 404, "no such file");
        return;
    }
    send_asset(c, req, name);
}

static void serve_login(struct evhttp_request *req, void *ctx)
{
    con_handle_login(ctx, req);
}

static void serve_logout(struct evhttp_request *req, void *ctx)
{
    con_handle_logout(ctx, req);
}

static int publish(mc_console *c)
{
    mc_watchers *w = mc_server_watchers(c->s);
    static const struct {
        const char *path;
        size_t off;
    } counters[] = {
        {"console/logins", offsetof(mc_console, logins)},
        {"console/loginFailures", offsetof(mc_console, login_failures)},
        {"console/loginsThrottled", offsetof(mc_console, login_throttled)},
        {"console/csrfRefused", offsetof(mc_console, csrf_refused)},
        {"console/unauthorised", offsetof(mc_console, unauthorised)},
        {"console/apiRequests", offsetof(mc_console, api_requests)},
        {"console/remoteFailures", offsetof(mc_console, remote_failures)},
        {"console/busyRefused", offsetof(mc_console, pending_refused)},
        {"console/samples", offsetof(mc_console, samples)},
        {"console/sampleRequestsFailed", offsetof(mc_console, sample_requests_failed)},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        bad |= mc_watch_add_uint(w, counters[i].path,
                                 (uint64_t *)((char *)c + counters[i].off),
                                 MC_WATCH_READ_ONLY) != MC_WATCH_OK;
    bad |= mc_watch_add_uint(w, "console/sampleMs", &c->sample_ms, MC_WATCH_READ_ONLY) !=
           MC_WATCH_OK;
    return bad ? -1 : 0;
}

bool mc_console_check(const mc_config *cfg, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        uint64_t min, max;
    } ranges[] = {
        {"consoleSessions", 1, 1024},
        {"consoleSessionIdleS", 1, 604800},
        {"consoleLoginFailures", 1, 10000},
        {"consoleSampleMs", 500, 60000},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        uint64_t v = mc_config_get_uint(cfg, ranges[i].name);
        if (v < ranges[i].min || v > ranges[i].max) {
            snprintf(err, errlen, "--%s: %llu is outside %llu..%llu", ranges[i].name,
                     (unsigned long long)v, (unsigned long long)ranges[i].min,
                     (unsigned long long)ranges[i].max);
            return false;
        }
    }
    const char *pw = mc_config_get_string(cfg, "consolePasswordFile");
    if (!*pw)
        return true;
    if (!*mc_config_get_string(cfg, "metrics")) {
        snprintf(err, errlen, "--consolePasswordFile: the console needs --metrics IP:PORT");
        return false;
    }
    mc_console probe;
    memset(&probe, 0, sizeof probe);
    int rc = con_auth_init(&probe, pw, err, errlen);
    sodium_memzero(&probe, sizeof probe);
    return rc == 0;
}

mc_console *mc_console_new(struct mc_manager *m, mc_server *s, char *err, size_t errlen)
{
    const mc_config *cfg = mc_server_config(s);
    mc_http *http = mc_server_http(s);
    if (!http) {
        snprintf(err, errlen, "the console needs the HTTP port (--metrics IP:PORT)");
        return NULL;
    }
    mc_console *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->m = m;
    c->s = s;
    c->http = http;
    c->max_sessions = (size_t)mc_config_get_uint(cfg, "consoleSessions");
    c->session_idle_us = mc_config_get_uint(cfg, "consoleSessionIdleS") * MC_US_PER_S;
    c->max_failures = mc_config_get_uint(cfg, "consoleLoginFailures");
    c->sample_ms = mc_config_get_uint(cfg, "consoleSampleMs");
    c->fail_window_start = mc_clock_now_us();
    c->sessions = calloc(c->max_sessions, sizeof *c->sessions);
    if (!c->sessions) {
        snprintf(err, errlen, "out of memory");
        mc_console_free(c);
        return NULL;
    }
    if (con_auth_init(c, mc_config_get_string(cfg, "consolePasswordFile"), err, errlen) != 0) {
        mc_console_free(c);
        return NULL;
    }
    if (mc_http_route(http, "/", serve_root, c) != 0 ||
        mc_http_route(http, "/static/", serve_static, c) != 0 ||
        mc_http_route(http, "/login", serve_login, c) != 0 ||
        mc_http_route(http, "/logout", serve_logout, c) != 0 || con_api_routes(c) != 0 ||
        con_series_start(c) != 0 || publish(c) != 0) {
        snprintf(err, errlen, "cannot set up the console");
        mc_console_free(c);
        return NULL;
    }
    MC_INFO("console on http://%s/", mc_http_addr(http));
    return c;
}

void mc_console_free(mc_console *c)
{
    if (!c)
        return;
    con_api_free(c);
    con_series_free(c);
    free(c->sessions);
    sodium_memzero(c->password_hash, sizeof c->password_hash);
    free(c);
}
