/* A small HTTP server on the process's libevent loop (evhttp) for operators: the
 * Prometheus metrics every process serves and the manager's web console.
 *
 * Bounded on every side: at most max_connections connections at once (beyond, the
 * listening socket is not read, so further ones wait in the kernel's backlog), request
 * headers and body at most max_request_bytes each (evhttp answers 400/413), an idle or slow
 * connection closed after timeout_s. Handlers run on the loop and must not block.
 * Routes are matched by exact path, or by prefix when the route ends with '/'; anything
 * else is 404. Every reply carries the security headers (nosniff, no framing, no referrer).
 * Watchers (mc_http_publish): requests, connections (open now), connectionsTotal,
 * atConnectionLimit (times the limit was reached), refused (4xx answered).
 */
#ifndef MC_SERVER_HTTP_H
#define MC_SERVER_HTTP_H

#include "common/watcher.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct evhttp_request;
struct evbuffer;

typedef struct mc_http mc_http;

typedef struct {
    size_t max_connections;   /* 1..4096 */
    size_t max_request_bytes; /* headers and body, each; 256..16 MiB */
    unsigned timeout_s;       /* 1..3600 */
} mc_http_limits;

#define MC_HTTP_DEFAULT_MAX_CONNECTIONS 32
#define MC_HTTP_DEFAULT_MAX_REQUEST_BYTES 16384
#define MC_HTTP_DEFAULT_TIMEOUT_S 10

typedef void (*mc_http_handler)(struct evhttp_request *req, void *ctx);

/* Listen on addr ("IP:PORT", a specific IPv4 address; port 0 picks a free one). NULL with a
 * one-line reason in err (bad address, in use). */
mc_http *mc_http_new(struct event_base *base, const char *addr, const mc_http_limits *limits,
                     char *err, size_t errlen);
void mc_http_free(mc_http *h);
/* "IP:PORT" actually bound. */
const char *mc_http_addr(const mc_http *h);
/* Route path (exact) or path ending in '/' (prefix) to fn. At most 32 routes. 0 or -1. */
int mc_http_route(mc_http *h, const char *path, mc_http_handler fn, void *ctx);
/* The watchers above under dir ("http"). 0 or -1. */
int mc_http_publish(mc_http *h, mc_watchers *w, const char *dir);
/* Connections open now. */
size_t mc_http_connections(const mc_http *h);

/* Reply with code, a content type and body (len bytes), plus the security headers and
 * Cache-Control: no-store (a handler may add headers to the request's output headers
 * first). */
void mc_http_reply(struct evhttp_request *req, int code, const char *content_type,
                   const void *body, size_t len);
/* The same with a body in an evbuffer (drained). */
void mc_http_reply_buffer(struct evhttp_request *req, int code, const char *content_type,
                          struct evbuffer *body);
/* A 4xx/5xx with a one-line plain-text reason (counted in refused for 4xx). */
void mc_http_error(mc_http *h, struct evhttp_request *req, int code, const char *reason);

#endif
