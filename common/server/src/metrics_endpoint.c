/* The process's HTTP port (--metrics): /metrics for Prometheus, and the latency histograms
 * it serves (mc_server_histogram). The manager adds its console to the same server. */
#include "server/http.h"
#include "server/metrics.h"
#include "server_internal.h"

#include "common/log.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void serve_metrics(struct evhttp_request *req, void *ctx)
{
    mc_server *s = ctx;
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
        evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
        mc_http_error(s->http, req, 405, "GET only");
        return;
    }
    struct evbuffer *out = evbuffer_new();
    mc_metrics_labels labels = {mc_role_name(s->desc.role), s->name, s->hostname};
    if (!out || mc_metrics_render(s->watchers, s->hists, s->nhists, &labels, out) != 0) {
        if (out)
            evbuffer_free(out);
        mc_http_error(s->http, req, 500, "out of memory");
        return;
    }
    mc_http_reply_buffer(req, 200, "text/plain; version=0.0.4; charset=utf-8", out);
    evbuffer_free(out);
}

int mc_server_http_open(mc_server *s, char *err, size_t errlen)
{
    const char *addr = mc_config_get_string(s->cfg, "metrics");
    if (!addr || !*addr)
        return 0;
    mc_http_limits lim = {
        .max_connections = (size_t)mc_config_get_uint(s->cfg, "httpMaxConnections"),
        .max_request_bytes = (size_t)mc_config_get_uint(s->cfg, "httpMaxRequestBytes"),
        .timeout_s = (unsigned)mc_config_get_uint(s->cfg, "httpTimeoutS"),
    };
    char why[256];
    s->http = mc_http_new(s->base, addr, &lim, why, sizeof why);
    if (!s->http) {
        snprintf(err, errlen, "--metrics: %s", why);
        return -1;
    }
    if (mc_http_route(s->http, "/metrics", serve_metrics, s) != 0 ||
        mc_http_publish(s->http, s->watchers, "http") != 0) {
        snprintf(err, errlen, "--metrics: cannot set up the HTTP server");
        return -1;
    }
    MC_INFO("metrics on http://%s/metrics", mc_http_addr(s->http));
    return 0;
}

void mc_server_http_free(mc_server *s)
{
    mc_http_free(s->http);
    s->http = NULL;
    for (size_t i = 0; i < s->nhists; i++)
        free(s->hists[i]);
    s->nhists = 0;
}

struct mc_http *mc_server_http(mc_server *s)
{
    return s->http;
}

mc_histogram *mc_server_histogram(mc_server *s, const char *name, const char *help)
{
    for (size_t i = 0; i < s->nhists; i++)
        if (strcmp(s->hists[i]->name, name) == 0)
            return s->hists[i];
    if (s->nhists == MC_SERVER_MAX_HISTOGRAMS)
        return NULL;
    mc_histogram *h = malloc(sizeof *h);
    if (!h)
        return NULL;
    mc_histogram_init(h, name, help);
    char dir[MC_WATCH_MAX_PATH];
    snprintf(dir, sizeof dir, "histograms/%s", name);
    if (mc_histogram_publish(h, s->watchers, dir) != 0) {
        mc_watch_remove(s->watchers, dir);
        free(h);
        return NULL;
    }
    s->hists[s->nhists++] = h;
    return h;
}
