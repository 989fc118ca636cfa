/* Requests: their lists, their command arguments, and finishing them (the callback once,
 * counted; refusals called back from the loop). */
#include <errno.h>
#include <event2/event.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "internal.h"

const char *mc_persist_status_name(mc_persist_status st)
{
    switch (st) {
    case MC_PERSIST_OK: return "ok";
    case MC_PERSIST_NOT_FOUND: return "notFound";
    case MC_PERSIST_OWNED: return "owned";
    case MC_PERSIST_FENCED: return "fenced";
    case MC_PERSIST_IDENT_TAKEN: return "identifierTaken";
    case MC_PERSIST_EXISTS: return "exists";
    case MC_PERSIST_SCHEMA: return "schema";
    case MC_PERSIST_BAD_DATA: return "badData";
    case MC_PERSIST_BAD_REQUEST: return "badRequest";
    case MC_PERSIST_QUEUE_FULL: return "queueFull";
    case MC_PERSIST_UNAVAILABLE: return "unavailable";
    case MC_PERSIST_AUTH: return "auth";
    case MC_PERSIST_REDIS: return "redisError";
    case MC_PERSIST_CLOSED: return "closed";
    }
    return "unknown";
}

/* --- lists ------------------------------------------------------------------------------ */

void mc_list_push_back(mc_req_list *l, mc_persist_req *r)
{
    r->next = NULL;
    r->prev = l->tail;
    if (l->tail)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
    l->count++;
}

void mc_list_push_front(mc_req_list *l, mc_persist_req *r)
{
    r->prev = NULL;
    r->next = l->head;
    if (l->head)
        l->head->prev = r;
    else
        l->tail = r;
    l->head = r;
    l->count++;
}

void mc_list_remove(mc_req_list *l, mc_persist_req *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        l->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        l->tail = r->prev;
    r->prev = r->next = NULL;
    l->count--;
}

/* --- requests --------------------------------------------------------------------------- */

mc_persist_req *mc_req_new(mc_persist_store *s, mc_op op, mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->s = s;
    r->op = op;
    r->cb = cb;
    r->ctx = ctx;
    r->script = -1;
    r->deadline = mc_clock_now_us() + (mc_time_us)s->cfg.request_timeout_ms * MC_US_PER_MS;
    return r;
}

static void clear_args(mc_persist_req *r)
{
    for (int i = 0; i < r->nargs; i++)
        if (!r->borrowed[i])
            free(r->args[i]);
    r->nargs = 0;
    free(r->route);
    r->route = NULL;
}

void mc_req_free(mc_persist_req *r)
{
    if (!r)
        return;
    if ((r->op == OP_SCHEMA || r->op == OP_SLOTS) && r->s->internal_reqs > 0)
        r->s->internal_reqs--;
    clear_args(r);
    free(r->args);
    free(r->lens);
    free(r->borrowed);
    free(r->type_name);
    free(r->ident);
    free(r->ident_json);
    free(r->old_ident);
    for (size_t i = 0; i < r->nfields; i++)
        free(r->fields[i]);
    free(r->fields);
    free(r->field_lens);
    free(r->owner);
    for (size_t i = 0; i < r->nnames; i++)
        free(r->names[i]);
    free(r->names);
    free(r->counts);
    free(r);
}

void mc_req_command(mc_persist_req *r, int script, int numkeys)
{
    clear_args(r);
    r->script = script;
    r->numkeys = numkeys;
    r->use_eval = false;
    r->ask = NULL;
    r->asking_sent = false;
}

/* Room for one more argument; false (and the request marked failed: capargs < 0) when out
 * of memory. */
static bool arg_room(mc_persist_req *r)
{
    if (r->capargs < 0)
        return false;
    if (r->nargs < r->capargs)
        return true;
    int nc = r->capargs ? r->capargs * 2 : 16;
    char **a = realloc(r->args, (size_t)nc * sizeof *a);
    if (a)
        r->args = a;
    size_t *l = a ? realloc(r->lens, (size_t)nc * sizeof *l) : NULL;
    if (l)
        r->lens = l;
    bool *b = l ? realloc(r->borrowed, (size_t)nc * sizeof *b) : NULL;
    if (!b) {
        r->capargs = -1;
        return false;
    }
    r->borrowed = b;
    r->capargs = nc;
    return true;
}

void mc_req_arg(mc_persist_req *r, const void *data, size_t len)
{
    if (!arg_room(r))
        return;
    char *c = malloc(len + 1);
    if (!c) {
        r->capargs = -1;
        return;
    }
    memcpy(c, data, len);
    c[len] = '\0';
    r->args[r->nargs] = c;
    r->borrowed[r->nargs] = false;
    r->lens[r->nargs++] = len;
}

void mc_req_arg_ref(mc_persist_req *r, const char *data, size_t len)
{
    if (!arg_room(r))
        return;
    r->args[r->nargs] = (char *)data;
    r->borrowed[r->nargs] = true;
    r->lens[r->nargs++] = len;
}

void mc_req_argf(mc_persist_req *r, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf) {
        r->capargs = -1;
        return;
    }
    mc_req_arg(r, buf, (size_t)n);
}

void mc_req_route(mc_persist_req *r, const char *key)
{
    free(r->route);
    r->route = key ? strdup(key) : NULL;
    if (key && !r->route)
        r->capargs = -1;
}

bool mc_req_oom(const mc_persist_req *r) { return r->capargs < 0; }

bool mc_op_is_write(mc_op op)
{
    return op == OP_WRITE || op == OP_CREATE || op == OP_DELETE || op == OP_IMPORT;
}

bool mc_op_changes(mc_op op)
{
    switch (op) {
    case OP_CREATE: case OP_WRITE: case OP_DELETE: case OP_IMPORT: case OP_CHECKOUT:
    case OP_MARK_LIVE: case OP_RELEASE: case OP_RELEASE_OWNER: case OP_AUTOLOAD:
    case OP_DROP_IDENT: case OP_TAKE_OVER:
        return true;
    default:
        return false;
    }
}

void mc_req_finish(mc_persist_req *r, mc_persist_result *res)
{
    mc_persist_store *s = r->s;
    if (!res->reason)
        res->reason = "";
    if (mc_op_is_write(r->op)) {
        if (res->status == MC_PERSIST_OK)
            s->writes_ok++;
        else
            s->writes_failed++;
    } else if (r->op == OP_LOAD) {
        if (res->status == MC_PERSIST_OK)
            s->loads_ok++;
        else
            s->loads_failed++;
    } else if (r->op == OP_CHECKOUT) {
        if (res->status == MC_PERSIST_OK)
            s->checkouts_won++;
        else if (res->status == MC_PERSIST_OWNED)
            s->checkouts_owned++;
    }
    if (res->status == MC_PERSIST_FENCED)
        s->fenced++;
    if (r->op == OP_SCHEMA && s->schema_left > 0 && --s->schema_left == 0)
        s->schema_done = true;
    if (r->op == OP_SLOTS)
        s->slots_pending = false;
    if (res->status != MC_PERSIST_OK && res->status != MC_PERSIST_NOT_FOUND &&
        res->status != MC_PERSIST_OWNED)
        MC_DEBUG("persist: %s: %s", mc_persist_status_name(res->status), res->reason);
    if (r->cb)
        r->cb(r->ctx, res);
    mc_req_free(r);
}

/* The token a failed create or check-out was sent with: it may have been applied (its
 * answer timed out or was lost), and the caller gives it back (release) if so. */
static const char *token_of_failed(const mc_persist_req *r)
{
    return (r->op == OP_CREATE || r->op == OP_CHECKOUT) && r->token[0] ? r->token : NULL;
}

void mc_req_fail(mc_persist_req *r, mc_persist_status st, const char *fmt, ...)
{
    char why[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    mc_persist_result res = {.status = st, .reason = why, .dbid = r->dbid,
                             .token = token_of_failed(r)};
    mc_req_finish(r, &res);
}

/* Fail from the loop, never inside the caller's call. */
void mc_store_reject(mc_persist_req *r, mc_persist_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
    r->status = st;
    mc_list_push_back(&r->s->done, r);
    event_active(r->s->done_ev, EV_TIMEOUT, 0);
}

/* The refused requests' callbacks (mc_store_reject), from the store's done event. */
void mc_req_run_done(mc_persist_store *s)
{
    /* Only those queued before this run: callbacks may queue more. */
    size_t n = s->done.count;
    for (size_t i = 0; i < n && s->done.head; i++) {
        mc_persist_req *r = s->done.head;
        mc_list_remove(&s->done, r);
        mc_persist_result res = {.status = r->status, .reason = r->reason, .dbid = r->dbid,
                                 .token = token_of_failed(r)};
        mc_req_finish(r, &res);
        if (s->closing)
            return;
    }
}
