/* The console's JSON API (/api/...): routing, the session, the processes and the plots;
 * watchers (console_watchers.c) and entities (console_entity.c). Every call needs a
 * session; set, call and logout are POSTs with the CSRF token. */
#include "console_internal.h"

#include "common/log.h"
#include "server/pb.h"
#include "server/watcher_service.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static void api_session(mc_console *c, struct evhttp_request *req)
{
    con_session *s = con_authorised(c, req, false);
    if (!s)
        return;
    struct evbuffer *out = evbuffer_new();
    if (!out)
        {
        mc_http_error(NULL, req, 500, "out of memory");
        return;
    }
    evbuffer_add_printf(out, "{\"csrf\":\"%s\",\"sampleMs\":%llu}", s->csrf,
                        (unsigned long long)c->sample_ms);
    con_reply_json(req, out);
    evbuffer_free(out);
}

static void process_json(struct evbuffer *out, const mc_reg_entry *e, mc_time_us now)
{
    evbuffer_add_printf(out, "{\"name\":");
    con_json_str(out, e->name);
    evbuffer_add_printf(out, ",\"role\":");
    con_json_str(out, mc_role_name(e->role));
    const char *st = e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE    ? "alive"
                     : e->state == MC__CONTROL__PROCESS_STATE__STATE_DEAD   ? "dead"
                     : e->state == MC__CONTROL__PROCESS_STATE__STATE_FENCED ? "fenced"
                                                                             : "stopped";
    evbuffer_add_printf(out, ",\"state\":\"%s\",\"pid\":%u,\"load\":", st, (unsigned)e->pid);
    con_json_num(out, e->load);
    double up = (double)(now - e->registered_at) / 1e6;
    evbuffer_add_printf(out, ",\"uptimeS\":");
    con_json_num(out, e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE ? up : -1);
    evbuffer_add_printf(out, ",\"host\":");
    con_json_str(out, e->host);
    evbuffer_add_printf(out, ",\"internal\":");
    con_json_str(out, e->internal_addr);
    evbuffer_add_printf(out, ",\"external\":");
    con_json_str(out, e->external_addr);
    evbuffer_add_printf(out, ",\"reason\":");
    con_json_str(out, e->reason);
    evbuffer_add_printf(out, "}");
}

static void api_processes(mc_console *c, struct evhttp_request *req)
{
    if (!con_authorised(c, req, false))
        return;
    struct evbuffer *out = evbuffer_new();
    if (!out)
        {
        mc_http_error(NULL, req, 500, "out of memory");
        return;
    }
    mc_time_us now = mc_clock_now_us();
    mc_watch_value up = {0};
    char err[64];
    double uptime = 0;
    if (mc_watch_get(mc_server_watchers(c->s), "uptime", &up, err, sizeof err) == MC_WATCH_OK)
        uptime = up.as.f;
    mc_watch_value_clear(&up);
    mc_watch_value host = {0};
    bool have_host =
        mc_watch_get(mc_server_watchers(c->s), "host", &host, err, sizeof err) == MC_WATCH_OK;
    evbuffer_add_printf(out, "{\"processes\":[{\"name\":\"manager\",\"role\":\"manager\","
                             "\"state\":\"alive\",\"pid\":%d,\"load\":",
                        (int)getpid());
    con_json_num(out, mc_server_load(c->s));
    evbuffer_add_printf(out, ",\"uptimeS\":");
    con_json_num(out, uptime);
    evbuffer_add_printf(out, ",\"host\":");
    con_json_str(out, have_host && host.as.s ? host.as.s : "");
    mc_watch_value_clear(&host);
    evbuffer_add_printf(out, ",\"internal\":");
    con_json_str(out, mc_server_internal_addr(c->s));
    evbuffer_add_printf(out, ",\"external\":\"\",\"reason\":\"\"}");
    size_t n = c->m->registry ? mc_registry_count(c->m->registry) : 0;
    for (size_t i = 0; i < n; i++) {
        evbuffer_add_printf(out, ",");
        process_json(out, mc_registry_at(c->m->registry, i), now);
    }
    evbuffer_add_printf(out, "]}");
    con_reply_json(req, out);
    evbuffer_free(out);
}

static void api_series(mc_console *c, struct evhttp_request *req)
{
    if (!con_authorised(c, req, false))
        return;
    struct evbuffer *out = evbuffer_new();
    if (!out)
        {
        mc_http_error(NULL, req, 500, "out of memory");
        return;
    }
    con_series_json(c, out);
    con_reply_json(req, out);
    evbuffer_free(out);
}


/* --- routing ---------------------------------------------------------------------------- */

static void serve_api(struct evhttp_request *req, void *ctx)
{
    mc_console *c = ctx;
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    if (strcmp(path, "/api/session") == 0)
        api_session(c, req);
    else if (strcmp(path, "/api/processes") == 0)
        api_processes(c, req);
    else if (strcmp(path, "/api/series") == 0)
        api_series(c, req);
    else if (strcmp(path, "/api/ls") == 0)
        con_api_ls_get(c, req, CON_OP_LS);
    else if (strcmp(path, "/api/get") == 0)
        con_api_ls_get(c, req, CON_OP_GET);
    else if (strcmp(path, "/api/set") == 0)
        con_api_set(c, req);
    else if (strcmp(path, "/api/call") == 0)
        con_api_call(c, req);
    else if (strcmp(path, "/api/entity") == 0)
        con_api_entity(c, req);
    else
        mc_http_error(c->http, req, 404, "no such API");
}

int con_api_routes(mc_console *c)
{
    return mc_http_route(c->http, "/api/", serve_api, c);
}
