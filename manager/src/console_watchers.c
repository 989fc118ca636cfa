/* The console's watcher browsing: ls (with each leaf's value), get, set and call on any
 * process, as WATCHER requests on the manager's channel to it (the manager's own tree is
 * read in place); replies as JSON, watcher statuses as 4xx. */
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

void con_entries_json(struct evbuffer *out, const Mc__Control__WatcherReply *r)
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
    con_entries_json(out, r);
    if (r->has_result) {
        evbuffer_add_printf(out, ",\"result\":");
        con_json_str(out, r->result ? r->result : "");
    }
    evbuffer_add_printf(out, "}");
    con_reply_json(req, out);
    evbuffer_free(out);
}

/* --- listings with values (CON_OP_LS) -------------------------------------------------------- */

static void listing_answer(con_pending *p)
{
    struct evhttp_request *req = con_pending_take(p);
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
        con_pending_free(p);
    }
}

/* Keep the listing r of p->dir; its leaves' values are read next. false: out of memory. */
static bool keep_listing(con_pending *p, const Mc__Control__WatcherReply *r)
{
    size_t n = r->n_entries < CON_MAX_LISTED ? r->n_entries : CON_MAX_LISTED;
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
        struct evhttp_request *req = con_pending_take(p);
        if (req)
            mc_http_error(NULL, req, 500, "out of memory");
        con_pending_free(p);
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
        char path[2 * CON_MAX_PATH_TEXT];
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
        con_pending_free(p);
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
        char path[2 * CON_MAX_PATH_TEXT], err[64];
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
    if (p->op == CON_OP_LS && r && r->status == MC__CONTROL__WATCHER_STATUS__WS_OK && p->c &&
        p->req) {
        mc_reg_entry *e = mc_registry_find_name(p->c->m->registry, p->process);
        if (e && e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE) {
            char addr[MC_REG_ADDR_MAX];
            snprintf(addr, sizeof addr, "%s", e->internal_addr);
            on_listing_reply(p, r, addr);
            return;
        }
    }
    struct evhttp_request *req = con_pending_take(p);
    if (req)
        answer_watcher(p->c, req, p->process, r);
    con_pending_free(p);
}

/* The live process named name: its internal address, or "" for the manager itself. false
 * with a 4xx sent when there is none. */
static bool target_of(mc_console *c, struct evhttp_request *req, const char *name, char *addr,
                      size_t addrlen)
{
    if (!name || !*name || !con_text_ok(name, MC_REG_NAME_MAX - 1)) {
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
    if (!path || !con_text_ok(path, CON_MAX_PATH_TEXT)) {
        mc_http_error(c->http, req, 400, "bad watcher path");
        return;
    }
    Mc__Control__WatcherRequest wr = MC__CONTROL__WATCHER_REQUEST__INIT;
    wr.op = op == CON_OP_LS    ? MC__CONTROL__WATCHER_OP__WATCHER_LS
            : op == CON_OP_GET ? MC__CONTROL__WATCHER_OP__WATCHER_GET
            : op == CON_OP_SET ? MC__CONTROL__WATCHER_OP__WATCHER_SET
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
        if (op == CON_OP_LS && r->status == MC__CONTROL__WATCHER_STATUS__WS_OK)
            local_listing(c, req, path, r);
        else
            answer_watcher(c, req, "manager", r);
        mc_pb_free(r);
        return;
    }
    con_pending *p = con_pending_new(c, req, op);
    if (!p)
        return;
    snprintf(p->process, sizeof p->process, "%s", process);
    snprintf(p->dir, sizeof p->dir, "%s", path);
    if (mc_server_ask_watcher(c->s, addr, &wr, CON_REMOTE_TIMEOUT_MS, on_watcher_reply, p) !=
        0) {
        c->remote_failures++;
        struct evhttp_request *r = con_pending_take(p);
        con_pending_free(p);
        if (r)
            mc_http_error(NULL, r, 502, "cannot reach the process");
    }
}

void con_api_ls_get(mc_console *c, struct evhttp_request *req, int op)
{
    if (!con_authorised(c, req, false))
        return;
    char *process = con_query_value(req, "process");
    char *path = con_query_value(req, "path");
    watcher_op(c, req, op, process, path ? path : "", NULL, 0);
    free(process);
    free(path);
}

void con_api_set(mc_console *c, struct evhttp_request *req)
{
    if (!con_authorised(c, req, true))
        return;
    char *process = con_form_value(req, "process");
    char *path = con_form_value(req, "path");
    char *value = con_form_value(req, "value");
    if (!path || !*path || !value || !con_text_ok(value, CON_MAX_VALUE_TEXT))
        mc_http_error(c->http, req, 400, "set needs process, path and value");
    else
        watcher_op(c, req, CON_OP_SET, process, path, &value, 1);
    free(process);
    free(path);
    free(value);
}

void con_api_call(mc_console *c, struct evhttp_request *req)
{
    if (!con_authorised(c, req, true))
        return;
    char *process = con_form_value(req, "process");
    char *path = con_form_value(req, "path");
    char *argtext = con_form_value(req, "args");
    char *args[CON_MAX_CALL_ARGS];
    size_t nargs = 0;
    bool ok = path && *path && (!argtext || con_text_ok(argtext, CON_MAX_VALUE_TEXT));
    if (ok && argtext) {
        char *save = NULL;
        for (char *t = strtok_r(argtext, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
            if (nargs == CON_MAX_CALL_ARGS) {
                ok = false;
                break;
            }
            args[nargs++] = t;
        }
    }
    if (!ok)
        mc_http_error(c->http, req, 400, "call needs process and path (args: at most 16 words)");
    else
        watcher_op(c, req, CON_OP_CALL, process, path, args, nargs);
    free(process);
    free(path);
    free(argtext);
}
