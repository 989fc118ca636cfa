/* The console's JSON API (/api/...): the session, the processes, the plots, the watcher
 * tree of any process (ls, get, set, call: sent to the process as WATCHER requests on the
 * manager's channel to it, answered when it replies), and entities by id or global name.
 * Every call needs a session; set, call and logout are POSTs with the CSRF token. */
#include "console_internal.h"

#include "common/defs.h"
#include "common/log.h"
#include "server/pb.h"
#include "server/watcher_service.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OP_LS, OP_GET, OP_SET, OP_CALL, OP_ENTITY };

#define MAX_CALL_ARGS 16
#define MAX_PATH_TEXT 256
#define MAX_VALUE_TEXT 4096

/* One entry of a listing (OP_LS) with its value once read. */
typedef struct {
    char name[MC_WATCH_MAX_NAME + 1];
    bool dir;
    Mc__Control__WatcherType type;
    Mc__Control__WatcherMode mode;
    char *value; /* heap; NULL: none (directory, callable, no answer) */
} con_listed;

#define MAX_LISTED 128

struct con_pending {
    con_pending *prev, *next;
    mc_console *c;                /* NULL once the console is gone */
    struct evhttp_request *req;   /* NULL once the client is gone */
    int op;
    int waiting;                  /* replies outstanding */
    char process[MC_REG_NAME_MAX];
    /* OP_LS: the listing, whose leaves' values are asked for one by one */
    char dir[MAX_PATH_TEXT + 1];
    con_listed *listed;
    size_t nlisted;
    /* OP_ENTITY */
    int32_t id;
    char global[80];
    struct evbuffer *parts;
    int nparts;
    char type[64];
};

/* --- requests waiting for processes ---------------------------------------------------- */

static void on_conn_close(struct evhttp_connection *conn, void *arg)
{
    (void)conn;
    con_pending *p = arg;
    p->req = NULL;
}

static con_pending *pending_new(mc_console *c, struct evhttp_request *req, int op)
{
    if (c->npending >= CON_PENDING_MAX) {
        c->pending_refused++;
        mc_http_error(c->http, req, 503, "too many console requests waiting: try again");
        return NULL;
    }
    con_pending *p = calloc(1, sizeof *p);
    if (!p) {
        mc_http_error(c->http, req, 500, "out of memory");
        return NULL;
    }
    p->c = c;
    p->req = req;
    p->op = op;
    p->next = c->pending;
    if (c->pending)
        c->pending->prev = p;
    c->pending = p;
    c->npending++;
    evhttp_connection_set_closecb(evhttp_request_get_connection(req), on_conn_close, p);
    return p;
}

/* The request to answer now (NULL when the client or the console is gone). */
static struct evhttp_request *pending_take(con_pending *p)
{
    struct evhttp_request *req = p->req;
    if (req && p->c)
        evhttp_connection_set_closecb(evhttp_request_get_connection(req), NULL, NULL);
    p->req = NULL;
    return p->c ? req : NULL;
}

static void pending_free(con_pending *p)
{
    mc_console *c = p->c;
    if (c) {
        if (p->prev)
            p->prev->next = p->next;
        else
            c->pending = p->next;
        if (p->next)
            p->next->prev = p->prev;
        c->npending--;
    }
    if (p->parts)
        evbuffer_free(p->parts);
    for (size_t i = 0; i < p->nlisted; i++)
        free(p->listed[i].value);
    free(p->listed);
    free(p);
}

void con_api_free(mc_console *c)
{
    for (con_pending *p = c->pending, *n; p; p = n) {
        n = p->next;
        if (p->req)
            evhttp_connection_set_closecb(evhttp_request_get_connection(p->req), NULL, NULL);
        p->req = NULL;
        p->c = NULL; /* freed when its replies come (the server cancels them) */
        p->prev = p->next = NULL;
    }
    c->pending = NULL;
    c->npending = 0;
}

/* --- watcher replies as JSON ------------------------------------------------------------- */

static int http_code_of(Mc__Control__WatcherStatus st)
{
    switch (st) {
    case MC__CONTROL__WATCHER_STATUS__WS_OK: return 200;
    case MC__CONTROL__WATCHER_STATUS__WS_NOT_FOUND: return 404;
    case MC__CONTROL__WATCHER_STATUS__WS_INTERNAL: return 502;
    default: return 400;
    }
}

static void entries_json(struct evbuffer *out, const Mc__Control__WatcherReply *r)
{
    evbuffer_add_printf(out, "[");
    for (size_t i = 0; i < r->n_entries; i++) {
        const Mc__Control__WatcherEntry *e = r->entries[i];
        evbuffer_add_printf(out, "%s{\"path\":", i ? "," : "");
        con_json_str(out, e->path ? e->path : "");
        evbuffer_add_printf(out, ",\"dir\":%s", e->is_directory ? "true" : "false");
        if (!e->is_directory) {
            evbuffer_add_printf(out, ",\"type\":");
            con_json_str(out, mc_wire_type_name(e->type));
            evbuffer_add_printf(out, ",\"mode\":");
            con_json_str(out, mc_wire_mode_name(e->mode));
        }
        if (e->has_value) {
            evbuffer_add_printf(out, ",\"value\":");
            con_json_str(out, e->value ? e->value : "");
        }
        evbuffer_add_printf(out, "}");
    }
    evbuffer_add_printf(out, "]");
}

static void answer_watcher(mc_console *c, struct evhttp_request *req, const char *process,
                           const Mc__Control__WatcherReply *r)
{
    if (!r) {
        c->remote_failures++;
        mc_http_error(c->http, req, 504, "the process did not answer in time");
        return;
    }
    if (r->status != MC__CONTROL__WATCHER_STATUS__WS_OK) {
        char why[400];
        snprintf(why, sizeof why, "%s: %s", mc_wire_status_name(r->status),
                 r->error ? r->error : "");
        int code = http_code_of(r->status);
        mc_http_error(code < 500 ? c->http : NULL, req, code, why);
        return;
    }
    struct evbuffer *out = evbuffer_new();
    if (!out) {
        mc_http_error(NULL, req, 500, "out of memory");
        return;
    }
    evbuffer_add_printf(out, "{\"process\":");
    con_json_str(out, process);
    evbuffer_add_printf(out, ",\"entries\":");
    entries_json(out, r);
    if (r->has_result) {
        evbuffer_add_printf(out, ",\"result\":");
        con_json_str(out, r->result ? r->result : "");
    }
    evbuffer_add_printf(out, "}");
    con_reply_json(req, out);
    evbuffer_free(out);
}

/* --- listings with values (OP_LS) -------------------------------------------------------- */

static void listing_answer(con_pending *p)
{
    struct evhttp_request *req = pending_take(p);
    if (!req)
        return;
    struct evbuffer *out = evbuffer_new();
    if (!out) {
        mc_http_error(NULL, req, 500, "out of memory");
        return;
    }
    evbuffer_add_printf(out, "{\"process\":");
    con_json_str(out, p->process);
    evbuffer_add_printf(out, ",\"path\":");
    con_json_str(out, p->dir);
    evbuffer_add_printf(out, ",\"entries\":[");
    for (size_t i = 0; i < p->nlisted; i++) {
        const con_listed *e = &p->listed[i];
        evbuffer_add_printf(out, "%s{\"path\":", i ? "," : "");
        con_json_str(out, e->name);
        evbuffer_add_printf(out, ",\"dir\":%s", e->dir ? "true" : "false");
        if (!e->dir) {
            evbuffer_add_printf(out, ",\"type\":");
            con_json_str(out, mc_wire_type_name(e->type));
            evbuffer_add_printf(out, ",\"mode\":");
            con_json_str(out, mc_wire_mode_name(e->mode));
        }
        if (e->value) {
            evbuffer_add_printf(out, ",\"value\":");
            con_json_str(out, e->value);
        }
        evbuffer_add_printf(out, "}");
    }
    evbuffer_add_printf(out, "]}");
    con_reply_json(req, out);
    evbuffer_free(out);
}

typedef struct {
    con_pending *p;
    size_t index;
} listed_ask;

static void on_value_reply(mc_server *s, void *ctx, const Mc__Control__WatcherReply *r)
{
    (void)s;
    listed_ask *a = ctx;
    con_pending *p = a->p;
    if (r && r->status == MC__CONTROL__WATCHER_STATUS__WS_OK && r->n_entries == 1 &&
        r->entries[0]->has_value && r->entries[0]->value && !p->listed[a->index].value)
        p->listed[a->index].value = strdup(r->entries[0]->value);
    free(a);
    if (--p->waiting == 0) {
        listing_answer(p);
        pending_free(p);
    }
}

/* Keep the listing r of p->dir; its leaves' values are read next. false: out of memory. */
static bool keep_listing(con_pending *p, const Mc__Control__WatcherReply *r)
{
    size_t n = r->n_entries < MAX_LISTED ? r->n_entries : MAX_LISTED;
    p->listed = calloc(n ? n : 1, sizeof *p->listed);
    if (!p->listed)
        return false;
    for (size_t i = 0; i < n; i++) {
        const Mc__Control__WatcherEntry *e = r->entries[i];
        con_listed *l = &p->listed[i];
        snprintf(l->name, sizeof l->name, "%s", e->path ? e->path : "");
        l->dir = e->is_directory;
        l->type = e->type;
        l->mode = e->mode;
        if (e->has_value && e->value)
            l->value = strdup(e->value);
    }
    p->nlisted = n;
    return true;
}

static void leaf_path(const con_pending *p, size_t i, char *out, size_t outlen)
{
    if (p->dir[0])
        snprintf(out, outlen, "%s/%s", p->dir, p->listed[i].name);
    else
        snprintf(out, outlen, "%s", p->listed[i].name);
}

/* The listing of a remote process arrived: ask for each leaf's value. */
static void on_listing_reply(con_pending *p, const Mc__Control__WatcherReply *r, char *addr)
{
    if (!keep_listing(p, r)) {
        struct evhttp_request *req = pending_take(p);
        if (req)
            mc_http_error(NULL, req, 500, "out of memory");
        pending_free(p);
        return;
    }
    p->waiting = 1;
    for (size_t i = 0; i < p->nlisted && p->c; i++) {
        const con_listed *l = &p->listed[i];
        if (l->dir || l->mode == MC__CONTROL__WATCHER_MODE__WM_CALLABLE || l->value)
            continue;
        listed_ask *a = calloc(1, sizeof *a);
        if (!a)
            break;
        a->p = p;
        a->index = i;
        char path[2 * MAX_PATH_TEXT];
        leaf_path(p, i, path, sizeof path);
        Mc__Control__WatcherRequest wr = MC__CONTROL__WATCHER_REQUEST__INIT;
        wr.op = MC__CONTROL__WATCHER_OP__WATCHER_GET;
        wr.path = path;
        p->waiting++;
        if (mc_server_ask_watcher(p->c->s, addr, &wr, CON_REMOTE_TIMEOUT_MS, on_value_reply, a) !=
            0) {
            p->waiting--;
            free(a);
        }
    }
    if (--p->waiting == 0) {
        listing_answer(p);
        pending_free(p);
    }
}

/* The manager's own listing with values. */
static void local_listing(mc_console *c, struct evhttp_request *req, const char *dir,
                          const Mc__Control__WatcherReply *r)
{
    con_pending tmp;
    memset(&tmp, 0, sizeof tmp);
    snprintf(tmp.process, sizeof tmp.process, "manager");
    snprintf(tmp.dir, sizeof tmp.dir, "%s", dir);
    tmp.req = req;
    if (!keep_listing(&tmp, r)) {
        mc_http_error(NULL, req, 500, "out of memory");
        return;
    }
    for (size_t i = 0; i < tmp.nlisted; i++) {
        con_listed *l = &tmp.listed[i];
        if (l->dir || l->mode == MC__CONTROL__WATCHER_MODE__WM_CALLABLE || l->value)
            continue;
        char path[2 * MAX_PATH_TEXT], err[64];
        leaf_path(&tmp, i, path, sizeof path);
        mc_watch_value v = {0};
        if (mc_watch_get(mc_server_watchers(c->s), path, &v, err, sizeof err) == MC_WATCH_OK)
            l->value = mc_watch_value_to_text(&v);
        mc_watch_value_clear(&v);
    }
    tmp.c = c; /* listing_answer answers through pending_take, which needs it */
    listing_answer(&tmp);
    for (size_t i = 0; i < tmp.nlisted; i++)
        free(tmp.listed[i].value);
    free(tmp.listed);
}

static void on_watcher_reply(mc_server *s, void *ctx, const Mc__Control__WatcherReply *r)
{
    (void)s;
    con_pending *p = ctx;
    if (p->op == OP_LS && r && r->status == MC__CONTROL__WATCHER_STATUS__WS_OK && p->c &&
        p->req) {
        mc_reg_entry *e = mc_registry_find_name(p->c->m->registry, p->process);
        if (e && e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE) {
            char addr[MC_REG_ADDR_MAX];
            snprintf(addr, sizeof addr, "%s", e->internal_addr);
            on_listing_reply(p, r, addr);
            return;
        }
    }
    struct evhttp_request *req = pending_take(p);
    if (req)
        answer_watcher(p->c, req, p->process, r);
    pending_free(p);
}

/* --- checks --------------------------------------------------------------------------- */

static bool text_ok(const char *s, size_t max)
{
    size_t n = 0;
    for (; s[n]; n++)
        if ((unsigned char)s[n] < 0x20 || n >= max)
            return false;
    return true;
}

/* The session, or a 401 (and NULL). POSTs also need the CSRF token (else 403). */
static con_session *authorised(mc_console *c, struct evhttp_request *req, bool post)
{
    c->api_requests++;
    con_session *s = con_session_of(c, req);
    if (!s) {
        c->unauthorised++;
        mc_http_error(c->http, req, 401, "log in first");
        return NULL;
    }
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    if (post) {
        if (m != EVHTTP_REQ_POST) {
            mc_http_error(c->http, req, 405, "POST only");
            return NULL;
        }
        if (!con_csrf_ok(c, s, req)) {
            mc_http_error(c->http, req, 403, "missing or wrong CSRF token");
            return NULL;
        }
    } else if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD) {
        mc_http_error(c->http, req, 405, "GET only");
        return NULL;
    }
    return s;
}

/* The live process named name: its internal address, or "" for the manager itself. false
 * with a 4xx sent when there is none. */
static bool target_of(mc_console *c, struct evhttp_request *req, const char *name, char *addr,
                      size_t addrlen)
{
    if (!name || !*name || !text_ok(name, MC_REG_NAME_MAX - 1)) {
        mc_http_error(c->http, req, 400, "name a process (process=NAME)");
        return false;
    }
    if (strcmp(name, "manager") == 0) {
        addr[0] = '\0';
        return true;
    }
    mc_reg_entry *e = c->m->registry ? mc_registry_find_name(c->m->registry, name) : NULL;
    if (!e || e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE) {
        mc_http_error(c->http, req, 404, "no live process of that name");
        return false;
    }
    snprintf(addr, addrlen, "%s", e->internal_addr);
    return true;
}

/* One watcher operation on a process, answered now (the manager) or when it replies. */
static void watcher_op(mc_console *c, struct evhttp_request *req, int op, const char *process,
                       const char *path, char **args, size_t nargs)
{
    char addr[MC_REG_ADDR_MAX];
    if (!target_of(c, req, process, addr, sizeof addr))
        return;
    if (!path || !text_ok(path, MAX_PATH_TEXT)) {
        mc_http_error(c->http, req, 400, "bad watcher path");
        return;
    }
    Mc__Control__WatcherRequest wr = MC__CONTROL__WATCHER_REQUEST__INIT;
    wr.op = op == OP_LS    ? MC__CONTROL__WATCHER_OP__WATCHER_LS
            : op == OP_GET ? MC__CONTROL__WATCHER_OP__WATCHER_GET
            : op == OP_SET ? MC__CONTROL__WATCHER_OP__WATCHER_SET
                           : MC__CONTROL__WATCHER_OP__WATCHER_CALL;
    wr.path = (char *)path;
    wr.args = args;
    wr.n_args = nargs;
    if (!addr[0]) {
        Mc__Control__WatcherReply *r = mc_watcher_service_handle(mc_server_watchers(c->s), &wr);
        if (!r) {
            mc_http_error(NULL, req, 500, "out of memory");
            return;
        }
        if (op == OP_LS && r->status == MC__CONTROL__WATCHER_STATUS__WS_OK)
            local_listing(c, req, path, r);
        else
            answer_watcher(c, req, "manager", r);
        mc_pb_free(r);
        return;
    }
    con_pending *p = pending_new(c, req, op);
    if (!p)
        return;
    snprintf(p->process, sizeof p->process, "%s", process);
    snprintf(p->dir, sizeof p->dir, "%s", path);
    if (mc_server_ask_watcher(c->s, addr, &wr, CON_REMOTE_TIMEOUT_MS, on_watcher_reply, p) !=
        0) {
        c->remote_failures++;
        struct evhttp_request *r = pending_take(p);
        pending_free(p);
        if (r)
            mc_http_error(NULL, r, 502, "cannot reach the process");
    }
}

/* --- handlers ------------------------------------------------------------------------- */

static void api_session(mc_console *c, struct evhttp_request *req)
{
    con_session *s = authorised(c, req, false);
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
    if (!authorised(c, req, false))
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
    evbuffer_add_printf(out, "{\"processes\":[{\"name\":\"manager\",\"role\":\"manager\","
                             "\"state\":\"alive\",\"pid\":%d,\"load\":",
                        (int)getpid());
    con_json_num(out, mc_server_load(c->s));
    evbuffer_add_printf(out, ",\"uptimeS\":");
    con_json_num(out, uptime);
    evbuffer_add_printf(out, ",\"host\":\"\",\"internal\":");
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
    if (!authorised(c, req, false))
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

static void api_ls_get(mc_console *c, struct evhttp_request *req, int op)
{
    if (!authorised(c, req, false))
        return;
    char *process = con_query_value(req, "process");
    char *path = con_query_value(req, "path");
    watcher_op(c, req, op, process, path ? path : "", NULL, 0);
    free(process);
    free(path);
}

static void api_set(mc_console *c, struct evhttp_request *req)
{
    if (!authorised(c, req, true))
        return;
    char *process = con_form_value(req, "process");
    char *path = con_form_value(req, "path");
    char *value = con_form_value(req, "value");
    if (!path || !*path || !value || !text_ok(value, MAX_VALUE_TEXT))
        mc_http_error(c->http, req, 400, "set needs process, path and value");
    else
        watcher_op(c, req, OP_SET, process, path, &value, 1);
    free(process);
    free(path);
    free(value);
}

static void api_call(mc_console *c, struct evhttp_request *req)
{
    if (!authorised(c, req, true))
        return;
    char *process = con_form_value(req, "process");
    char *path = con_form_value(req, "path");
    char *argtext = con_form_value(req, "args");
    char *args[MAX_CALL_ARGS];
    size_t nargs = 0;
    bool ok = path && *path && (!argtext || text_ok(argtext, MAX_VALUE_TEXT));
    if (ok && argtext) {
        char *save = NULL;
        for (char *t = strtok_r(argtext, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
            if (nargs == MAX_CALL_ARGS) {
                ok = false;
                break;
            }
            args[nargs++] = t;
        }
    }
    if (!ok)
        mc_http_error(c->http, req, 400, "call needs process and path (args: at most 16 words)");
    else
        watcher_op(c, req, OP_CALL, process, path, args, nargs);
    free(process);
    free(path);
    free(argtext);
}

/* --- entities --------------------------------------------------------------------------- */

static void entity_methods_json(mc_console *c, struct evbuffer *out, const char *type)
{
    const mc_entity_type_def *t = mc_defs_type_by_name(mc_server_defs(c->s), type);
    evbuffer_add_printf(out, ",\"methods\":[");
    bool first = true;
    for (int part = 0; t && part < MC_PART_COUNT; part++) {
        for (size_t i = 0; i < t->nmethods[part]; i++) {
            const mc_def_method *m = &t->methods[part][i];
            evbuffer_add_printf(out, "%s{\"part\":", first ? "" : ",");
            con_json_str(out, mc_part_name((mc_part)part));
            evbuffer_add_printf(out, ",\"name\":");
            con_json_str(out, m->name);
            evbuffer_add_printf(out, ",\"args\":%zu,\"returns\":%zu}", m->nargs, m->nreturns);
            first = false;
        }
    }
    evbuffer_add_printf(out, "]");
}

static void entity_finish(con_pending *p)
{
    struct evhttp_request *req = pending_take(p);
    if (!req)
        return;
    mc_console *c = p->c;
    if (p->nparts == 0) {
        mc_http_error(c->http, req, 404, "no live entity with that id");
        return;
    }
    struct evbuffer *out = evbuffer_new();
    if (!out)
        {
        mc_http_error(NULL, req, 500, "out of memory");
        return;
    }
    evbuffer_add_printf(out, "{\"id\":%d,\"globalName\":", (int)p->id);
    con_json_str(out, p->global);
    evbuffer_add_printf(out, ",\"type\":");
    con_json_str(out, p->type);
    evbuffer_add_printf(out, ",\"parts\":[");
    evbuffer_add_buffer(out, p->parts);
    evbuffer_add_printf(out, "]");
    entity_methods_json(c, out, p->type);
    evbuffer_add_printf(out, "}");
    con_reply_json(req, out);
    evbuffer_free(out);
}

typedef struct {
    con_pending *p;
    char process[MC_REG_NAME_MAX];
    char role[16];
} entity_ask;

static void on_entity_reply(mc_server *s, void *ctx, const Mc__Control__WatcherReply *r)
{
    (void)s;
    entity_ask *a = ctx;
    con_pending *p = a->p;
    if (r && r->status == MC__CONTROL__WATCHER_STATUS__WS_OK && p->c && p->parts) {
        if (p->nparts++)
            evbuffer_add_printf(p->parts, ",");
        evbuffer_add_printf(p->parts, "{\"process\":");
        con_json_str(p->parts, a->process);
        evbuffer_add_printf(p->parts, ",\"role\":");
        con_json_str(p->parts, a->role);
        evbuffer_add_printf(p->parts, ",\"entries\":");
        entries_json(p->parts, r);
        evbuffer_add_printf(p->parts, "}");
        char typepath[64];
        snprintf(typepath, sizeof typepath, "entities/%d/type", (int)p->id);
        for (size_t i = 0; i < r->n_entries; i++)
            if (r->entries[i]->path && strcmp(r->entries[i]->path, typepath) == 0 &&
                r->entries[i]->value)
                snprintf(p->type, sizeof p->type, "%s", r->entries[i]->value);
    } else if (!r && p->c) {
        p->c->remote_failures++;
    }
    free(a);
    if (--p->waiting == 0) {
        entity_finish(p);
        pending_free(p);
    }
}

static void api_entity(mc_console *c, struct evhttp_request *req)
{
    if (!authorised(c, req, false))
        return;
    char *idtext = con_query_value(req, "id");
    char *name = con_query_value(req, "name");
    int32_t id = 0;
    char global[80] = "";
    bool ok = true;
    if (idtext && *idtext) {
        char *end;
        errno = 0;
        long v = strtol(idtext, &end, 10);
        ok = !errno && !*end && v >= 1 && v <= 0x7FFFFFFF;
        id = (int32_t)v;
    } else if (name && *name) {
        mc_mailbox_ref mb;
        ok = mc_globals_name_ok(name, strlen(name)) && strlen(name) < sizeof global;
        if (ok && mc_globals_lookup(c->m->globals, name, &mb, NULL) == MC_GLOBALS_OK) {
            id = mb.id;
            snprintf(global, sizeof global, "%s", name);
        } else if (ok) {
            free(idtext);
            free(name);
            {
        mc_http_error(c->http, req, 404, "no global name like that");
        return;
    }
        }
    } else {
        ok = false;
    }
    free(idtext);
    free(name);
    if (!ok)
        {
        mc_http_error(c->http, req, 400, "look up id=N (1..2^31-1) or name=GLOBALNAME");
        return;
    }
    con_pending *p = pending_new(c, req, OP_ENTITY);
    if (!p)
        return;
    p->id = id;
    snprintf(p->global, sizeof p->global, "%s", global);
    p->parts = evbuffer_new();
    p->waiting = 1; /* held until every request is out */
    char path[64];
    snprintf(path, sizeof path, "entities/%d", (int)id);
    Mc__Control__WatcherRequest wr = MC__CONTROL__WATCHER_REQUEST__INIT;
    wr.op = MC__CONTROL__WATCHER_OP__WATCHER_GET;
    wr.path = path;
    size_t n = mc_registry_count(c->m->registry);
    for (size_t i = 0; i < n && p->parts; i++) {
        mc_reg_entry *e = mc_registry_at(c->m->registry, i);
        if (e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE ||
            (e->role != MC_ROLE_BASEAPP && e->role != MC_ROLE_CELLAPP))
            continue;
        entity_ask *a = calloc(1, sizeof *a);
        if (!a)
            break;
        a->p = p;
        snprintf(a->process, sizeof a->process, "%s", e->name);
        snprintf(a->role, sizeof a->role, "%s", mc_role_name(e->role));
        p->waiting++;
        if (mc_server_ask_watcher(c->s, e->internal_addr, &wr, CON_REMOTE_TIMEOUT_MS,
                                      on_entity_reply, a) != 0) {
            p->waiting--;
            c->remote_failures++;
            free(a);
        }
    }
    if (--p->waiting == 0) {
        entity_finish(p);
        pending_free(p);
    }
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
        api_ls_get(c, req, OP_LS);
    else if (strcmp(path, "/api/get") == 0)
        api_ls_get(c, req, OP_GET);
    else if (strcmp(path, "/api/set") == 0)
        api_set(c, req);
    else if (strcmp(path, "/api/call") == 0)
        api_call(c, req);
    else if (strcmp(path, "/api/entity") == 0)
        api_entity(c, req);
    else
        mc_http_error(c->http, req, 404, "no such API");
}

int con_api_routes(mc_console *c)
{
    return mc_http_route(c->http, "/api/", serve_api, c);
}
