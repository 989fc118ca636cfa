/* The operators' HTTP server: evhttp on the process's loop, bounded (server/http.h). */
#include "server/http.h"

#include "common/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define MAX_ROUTES 32

typedef struct {
    char path[96];
    bool prefix;
    mc_http_handler fn;
    void *ctx;
} http_route;

struct mc_http {
    struct event_base *base;
    struct evhttp *http;
    struct evconnlistener *listener; /* owned by evhttp's bound socket */
    mc_http_limits limits;
    char addr[64];
    http_route routes[MAX_ROUTES];
    size_t nroutes;
    bool paused; /* the listener is disabled: at the connection limit */
    struct bufferevent **tracked; /* every connection's, with our reference */
    size_t ntracked, tracked_cap;
    struct event *sweep_ev;
    /* counters (watchers) */
    uint64_t open, total, at_limit, requests, refused, untracked;
};

/* Counting connections: evhttp (2.1) has no hook for a connection's end, so each one gets
 * its socket bufferevent from us (evhttp_set_bevcb) and we hold a reference on it. When
 * evhttp frees the connection it clears the callbacks and drops its reference (it shuts the
 * socket down for writing first, so the client sees the end at once); a sweep every
 * SWEEP_MS finds such bufferevents, stops them reading and drops ours, which closes the
 * socket. */
#define SWEEP_MS 100

static void sweep(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    mc_http *h = arg;
    size_t k = 0;
    for (size_t i = 0; i < h->ntracked; i++) {
        struct bufferevent *b = h->tracked[i];
        bufferevent_data_cb r = NULL, w = NULL;
        bufferevent_event_cb e = NULL;
        void *a = NULL;
        bufferevent_getcb(b, &r, &w, &e, &a);
        if (!r && !w && !e) {
            bufferevent_disable(b, EV_READ | EV_WRITE);
            bufferevent_decref(b);
            continue;
        }
        h->tracked[k++] = b;
    }
    h->ntracked = k;
    h->open = k;
    if (h->paused && h->open < h->limits.max_connections) {
        evconnlistener_enable(h->listener);
        h->paused = false;
    }
    if (h->ntracked == 0)
        event_del(h->sweep_ev);
}

static struct bufferevent *new_conn_bev(struct event_base *base, void *arg)
{
    mc_http *h = arg;
    if (h->ntracked == h->tracked_cap) {
        h->untracked++;
        return NULL; /* evhttp makes one itself: served, not counted */
    }
    struct bufferevent *b = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!b) {
        MC_WARNING("http %s: out of memory for a connection's buffers", h->addr);
        return NULL;
    }
    bufferevent_incref(b);
    h->tracked[h->ntracked++] = b;
    h->open = h->ntracked;
    h->total++;
    if (!event_pending(h->sweep_ev, EV_TIMEOUT, NULL)) {
        struct timeval tv = {0, SWEEP_MS * 1000};
        event_add(h->sweep_ev, &tv);
    }
    if (h->open >= h->limits.max_connections && !h->paused) {
        evconnlistener_disable(h->listener);
        h->paused = true;
        h->at_limit++;
    }
    return b;
}

static void add_default_headers(struct evhttp_request *req)
{
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);
    if (!evhttp_find_header(out, "Content-Security-Policy"))
        evhttp_add_header(out, "Content-Security-Policy", "default-src 'none'");
    evhttp_add_header(out, "X-Content-Type-Options", "nosniff");
    evhttp_add_header(out, "X-Frame-Options", "DENY");
    evhttp_add_header(out, "Referrer-Policy", "no-referrer");
    evhttp_add_header(out, "Cache-Control", "no-store");
}

void mc_http_reply(struct evhttp_request *req, int code, const char *content_type,
                   const void *body, size_t len)
{
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);
    evhttp_add_header(out, "Content-Type", content_type);
    add_default_headers(req);
    struct evbuffer *buf = evbuffer_new();
    if (buf && len)
        evbuffer_add(buf, body, len);
    const char *phrase = code == 200 ? "OK" : code == 303 ? "See Other" : NULL;
    evhttp_send_reply(req, code, phrase, buf);
    if (buf)
        evbuffer_free(buf);
}

void mc_http_reply_buffer(struct evhttp_request *req, int code, const char *content_type,
                          struct evbuffer *body)
{
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);
    evhttp_add_header(out, "Content-Type", content_type);
    add_default_headers(req);
    evhttp_send_reply(req, code, code == 200 ? "OK" : NULL, body);
}

void mc_http_error(mc_http *h, struct evhttp_request *req, int code, const char *reason)
{
    if (h && code >= 400 && code < 500)
        h->refused++;
    char body[320];
    int n = snprintf(body, sizeof body, "%d %s\n", code, reason);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof body)
        n = (int)sizeof body - 1;
    mc_http_reply(req, code, "text/plain; charset=utf-8", body, (size_t)n);
}

static void dispatch(struct evhttp_request *req, void *arg)
{
    mc_http *h = arg;
    h->requests++;
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD && m != EVHTTP_REQ_POST) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD, POST");
        mc_http_error(h, req, 405, "method not allowed");
        return;
    }
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
    if (!path || !*path) {
        mc_http_error(h, req, 400, "bad request path");
        return;
    }
    for (size_t i = 0; i < h->nroutes; i++) {
        const http_route *r = &h->routes[i];
        bool match = r->prefix ? strncmp(path, r->path, strlen(r->path)) == 0
                               : strcmp(path, r->path) == 0;
        if (match) {
            r->fn(req, r->ctx);
            return;
        }
    }
    mc_http_error(h, req, 404, "no such page");
}

static bool parse_addr(const char *addr, struct sockaddr_in *sin)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || (size_t)(colon - addr) >= 32)
        return false;
    char ip[32];
    memcpy(ip, addr, (size_t)(colon - addr));
    ip[colon - addr] = '\0';
    char *end;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (errno || *end || end == colon + 1 || port > 65535)
        return false;
    memset(sin, 0, sizeof *sin);
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, ip, &sin->sin_addr) == 1 && sin->sin_addr.s_addr != INADDR_ANY;
}

mc_http *mc_http_new(struct event_base *base, const char *addr, const mc_http_limits *limits,
                     char *err, size_t errlen)
{
    struct sockaddr_in sin;
    if (!parse_addr(addr, &sin)) {
        snprintf(err, errlen, "'%s' is not IP:PORT with a specific IPv4 address", addr);
        return NULL;
    }
    if (limits->max_connections < 1 || limits->max_connections > 4096 ||
        limits->max_request_bytes < 256 || limits->max_request_bytes > 16u << 20 ||
        limits->timeout_s < 1 || limits->timeout_s > 3600) {
        snprintf(err, errlen, "HTTP limits out of range");
        return NULL;
    }
    mc_http *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    h->base = base;
    h->limits = *limits;
    h->tracked_cap = limits->max_connections + 16;
    h->tracked = calloc(h->tracked_cap, sizeof *h->tracked);
    h->sweep_ev = event_new(base, -1, EV_PERSIST, sweep, h);
    h->http = evhttp_new(base);
    if (!h->http || !h->tracked || !h->sweep_ev) {
        snprintf(err, errlen, "out of memory");
        if (h->http)
            evhttp_free(h->http);
        if (h->sweep_ev)
            event_free(h->sweep_ev);
        free(h->tracked);
        free(h);
        return NULL;
    }
    h->listener = evconnlistener_new_bind(
        base, NULL, NULL, LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 64,
        (struct sockaddr *)&sin, sizeof sin);
    if (!h->listener) {
        snprintf(err, errlen, "cannot listen on %s: %s", addr, strerror(errno));
        evhttp_free(h->http);
        event_free(h->sweep_ev);
        free(h->tracked);
        free(h);
        return NULL;
    }
    if (!evhttp_bind_listener(h->http, h->listener)) {
        snprintf(err, errlen, "cannot serve HTTP on %s", addr);
        evconnlistener_free(h->listener);
        evhttp_free(h->http);
        event_free(h->sweep_ev);
        free(h->tracked);
        free(h);
        return NULL;
    }
    struct sockaddr_in bound;
    socklen_t blen = sizeof bound;
    if (getsockname(evconnlistener_get_fd(h->listener), (struct sockaddr *)&bound, &blen) != 0)
        bound = sin;
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &bound.sin_addr, ip, sizeof ip);
    snprintf(h->addr, sizeof h->addr, "%s:%u", ip, (unsigned)ntohs(bound.sin_port));
    evhttp_set_max_headers_size(h->http, (ev_ssize_t)limits->max_request_bytes);
    evhttp_set_max_body_size(h->http, (ev_ssize_t)limits->max_request_bytes);
    evhttp_set_timeout(h->http, (int)limits->timeout_s);
    /* every method reaches dispatch, which answers 405 for what no page takes (evhttp's own
     * refusal would be a 501) */
    evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                            EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
                                            EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |
                                            EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
    evhttp_set_default_content_type(h->http, "text/plain; charset=utf-8");
    evhttp_set_bevcb(h->http, new_conn_bev, h);
    evhttp_set_gencb(h->http, dispatch, h);
    return h;
}

void mc_http_free(mc_http *h)
{
    if (!h)
        return;
    evhttp_free(h->http); /* frees the connections and the listener */
    for (size_t i = 0; i < h->ntracked; i++)
        bufferevent_decref(h->tracked[i]);
    event_free(h->sweep_ev);
    free(h->tracked);
    free(h);
}

const char *mc_http_addr(const mc_http *h)
{
    return h->addr;
}

size_t mc_http_connections(const mc_http *h)
{
    return (size_t)h->open;
}

int mc_http_route(mc_http *h, const char *path, mc_http_handler fn, void *ctx)
{
    size_t n = strlen(path);
    if (h->nroutes == MAX_ROUTES || n == 0 || n >= sizeof h->routes[0].path)
        return -1;
    http_route *r = &h->routes[h->nroutes++];
    memcpy(r->path, path, n + 1);
    r->prefix = path[n - 1] == '/' && n > 1;
    r->fn = fn;
    r->ctx = ctx;
    return 0;
}

int mc_http_publish(mc_http *h, mc_watchers *w, const char *dir)
{
    static const struct {
        const char *name;
        size_t off;
    } counters[] = {
        {"requests", offsetof(mc_http, requests)},
        {"connections", offsetof(mc_http, open)},
        {"connectionsTotal", offsetof(mc_http, total)},
        {"atConnectionLimit", offsetof(mc_http, at_limit)},
        {"refused", offsetof(mc_http, refused)},
        {"untracked", offsetof(mc_http, untracked)},
    };
    int bad = 0;
    char path[MC_WATCH_MAX_PATH];
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, counters[i].name);
        bad |= mc_watch_add_uint(w, path, (uint64_t *)((char *)h + counters[i].off),
                                 MC_WATCH_READ_ONLY) != MC_WATCH_OK;
    }
    snprintf(path, sizeof path, "%s/address", dir);
    bad |= mc_watch_add_const_string(w, path, h->addr) != MC_WATCH_OK;
    return bad ? -1 : 0;
}
