/* The console's entity page: an entity by id, or by global name (the manager's table), asked
 * of every live baseapp and cellapp (their entities/<id>/ watchers), with its methods from
 * the definitions. */
#include "console_internal.h"

#include "common/log.h"
#include "server/pb.h"
#include "common/defs.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    struct evhttp_request *req = con_pending_take(p);
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
        con_entries_json(p->parts, r);
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
        con_pending_free(p);
    }
}

void con_api_entity(mc_console *c, struct evhttp_request *req)
{
    if (!con_authorised(c, req, false))
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
    con_pending *p = con_pending_new(c, req, CON_OP_ENTITY);
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
        con_pending_free(p);
    }
}
