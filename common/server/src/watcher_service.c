/* WatcherRequest -> WatcherReply against an mc_watchers tree. */
#include "server/watcher_service.h"
#include "server/pb.h"

#include <stdlib.h>
#include <string.h>

/* Growing list of entries being added to a reply. */
typedef struct {
    Mc__Control__WatcherReply *reply;
    size_t cap;
    bool failed;
} builder;

static Mc__Control__WatcherEntry *add_entry(builder *b)
{
    if (b->failed)
        return NULL;
    Mc__Control__WatcherReply *r = b->reply;
    if (r->n_entries == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        Mc__Control__WatcherEntry **e = realloc(r->entries, cap * sizeof *e);
        if (!e) {
            b->failed = true;
            return NULL;
        }
        r->entries = e;
        b->cap = cap;
    }
    Mc__Control__WatcherEntry *e = malloc(sizeof *e);
    if (!e) {
        b->failed = true;
        return NULL;
    }
    mc__control__watcher_entry__init(e);
    r->entries[r->n_entries++] = e;
    return e;
}

static Mc__Control__WatcherType type_to_wire(mc_watch_type t)
{
    switch (t) {
    case MC_WATCH_INT: return MC__CONTROL__WATCHER_TYPE__WT_INT;
    case MC_WATCH_UINT: return MC__CONTROL__WATCHER_TYPE__WT_UINT;
    case MC_WATCH_FLOAT: return MC__CONTROL__WATCHER_TYPE__WT_FLOAT;
    case MC_WATCH_BOOL: return MC__CONTROL__WATCHER_TYPE__WT_BOOL;
    case MC_WATCH_STRING: return MC__CONTROL__WATCHER_TYPE__WT_STRING;
    }
    return MC__CONTROL__WATCHER_TYPE__WT_NONE;
}

static Mc__Control__WatcherMode mode_to_wire(mc_watch_mode m)
{
    switch (m) {
    case MC_WATCH_READ_ONLY: return MC__CONTROL__WATCHER_MODE__WM_READ_ONLY;
    case MC_WATCH_READ_WRITE: return MC__CONTROL__WATCHER_MODE__WM_READ_WRITE;
    case MC_WATCH_CALLABLE: return MC__CONTROL__WATCHER_MODE__WM_CALLABLE;
    }
    return MC__CONTROL__WATCHER_MODE__WM_NONE;
}

Mc__Control__WatcherStatus mc_watcher_status_to_wire(mc_watch_status st)
{
    switch (st) {
    case MC_WATCH_OK: return MC__CONTROL__WATCHER_STATUS__WS_OK;
    case MC_WATCH_ERR_NOT_FOUND: return MC__CONTROL__WATCHER_STATUS__WS_NOT_FOUND;
    case MC_WATCH_ERR_NOT_DIRECTORY: return MC__CONTROL__WATCHER_STATUS__WS_NOT_DIRECTORY;
    case MC_WATCH_ERR_IS_DIRECTORY: return MC__CONTROL__WATCHER_STATUS__WS_IS_DIRECTORY;
    case MC_WATCH_ERR_READ_ONLY: return MC__CONTROL__WATCHER_STATUS__WS_READ_ONLY;
    case MC_WATCH_ERR_BAD_VALUE: return MC__CONTROL__WATCHER_STATUS__WS_BAD_VALUE;
    case MC_WATCH_ERR_REFUSED: return MC__CONTROL__WATCHER_STATUS__WS_REFUSED;
    case MC_WATCH_ERR_NOT_CALLABLE: return MC__CONTROL__WATCHER_STATUS__WS_NOT_CALLABLE;
    case MC_WATCH_ERR_BAD_PATH: return MC__CONTROL__WATCHER_STATUS__WS_BAD_PATH;
    default: return MC__CONTROL__WATCHER_STATUS__WS_INTERNAL;
    }
}

const char *mc_wire_type_name(Mc__Control__WatcherType t)
{
    switch (t) {
    case MC__CONTROL__WATCHER_TYPE__WT_INT: return "int";
    case MC__CONTROL__WATCHER_TYPE__WT_UINT: return "uint";
    case MC__CONTROL__WATCHER_TYPE__WT_FLOAT: return "float";
    case MC__CONTROL__WATCHER_TYPE__WT_BOOL: return "bool";
    case MC__CONTROL__WATCHER_TYPE__WT_STRING: return "string";
    default: return "-";
    }
}

const char *mc_wire_mode_name(Mc__Control__WatcherMode m)
{
    switch (m) {
    case MC__CONTROL__WATCHER_MODE__WM_READ_ONLY: return "ro";
    case MC__CONTROL__WATCHER_MODE__WM_READ_WRITE: return "rw";
    case MC__CONTROL__WATCHER_MODE__WM_CALLABLE: return "call";
    default: return "-";
    }
}

const char *mc_wire_status_name(Mc__Control__WatcherStatus s)
{
    switch (s) {
    case MC__CONTROL__WATCHER_STATUS__WS_OK: return "ok";
    case MC__CONTROL__WATCHER_STATUS__WS_NOT_FOUND: return "not found";
    case MC__CONTROL__WATCHER_STATUS__WS_NOT_DIRECTORY: return "not a directory";
    case MC__CONTROL__WATCHER_STATUS__WS_IS_DIRECTORY: return "is a directory";
    case MC__CONTROL__WATCHER_STATUS__WS_READ_ONLY: return "read-only";
    case MC__CONTROL__WATCHER_STATUS__WS_BAD_VALUE: return "bad value";
    case MC__CONTROL__WATCHER_STATUS__WS_REFUSED: return "refused";
    case MC__CONTROL__WATCHER_STATUS__WS_NOT_CALLABLE: return "not callable";
    case MC__CONTROL__WATCHER_STATUS__WS_BAD_PATH: return "bad path";
    case MC__CONTROL__WATCHER_STATUS__WS_BAD_REQUEST: return "bad request";
    default: return "internal error";
    }
}

static void on_list(void *ctx, const mc_watch_entry *entry)
{
    builder *b = ctx;
    Mc__Control__WatcherEntry *e = add_entry(b);
    if (!e)
        return;
    e->path = mc_pb_strdup(entry->name);
    if (!e->path)
        b->failed = true;
    e->is_directory = entry->is_directory;
    if (!entry->is_directory) {
        e->type = type_to_wire(entry->type);
        e->mode = mode_to_wire(entry->mode);
    }
}

static void on_walk(void *ctx, const char *path, mc_watch_mode mode,
                    const mc_watch_value *value)
{
    builder *b = ctx;
    Mc__Control__WatcherEntry *e = add_entry(b);
    if (!e)
        return;
    e->path = mc_pb_strdup(path);
    if (!e->path)
        b->failed = true;
    e->mode = mode_to_wire(mode);
    if (value) {
        e->type = type_to_wire(value->type);
        e->has_value = true;
        e->value = mc_watch_value_to_text(value);
        if (!e->value) {
            e->value = (char *)protobuf_c_empty_string;
            b->failed = true;
        }
    }
}

static void fail(Mc__Control__WatcherReply *r, Mc__Control__WatcherStatus st, const char *why)
{
    r->status = st;
    char *s = mc_pb_strdup(why);
    if (s)
        r->error = s;
}

/* ls on a leaf: describe the leaf itself (walk gives its mode and value type). */
static void list_leaf(mc_watchers *w, const char *path, builder *b)
{
    char err[256] = "";
    mc_watch_walk(w, path, on_walk, b, err, sizeof err);
    for (size_t i = 0; i < b->reply->n_entries; i++) {
        Mc__Control__WatcherEntry *e = b->reply->entries[i];
        if (e->has_value && e->value != protobuf_c_empty_string)
            free(e->value);
        e->value = (char *)protobuf_c_empty_string;
        e->has_value = false;
    }
}

Mc__Control__WatcherReply *mc_watcher_service_handle(mc_watchers *w,
                                                     const Mc__Control__WatcherRequest *req)
{
    Mc__Control__WatcherReply *r = malloc(sizeof *r);
    if (!r)
        return NULL;
    mc__control__watcher_reply__init(r);
    builder b = {.reply = r};
    char err[512] = "";
    const char *path = req->path ? req->path : "";
    mc_watch_status st = MC_WATCH_OK;

    switch (req->op) {
    case MC__CONTROL__WATCHER_OP__WATCHER_LS:
        st = mc_watch_list(w, path, on_list, &b, err, sizeof err);
        if (st == MC_WATCH_ERR_NOT_DIRECTORY) {
            st = MC_WATCH_OK;
            list_leaf(w, path, &b);
        }
        break;
    case MC__CONTROL__WATCHER_OP__WATCHER_GET:
        st = mc_watch_walk(w, path, on_walk, &b, err, sizeof err);
        break;
    case MC__CONTROL__WATCHER_OP__WATCHER_SET:
        if (req->n_args != 1) {
            fail(r, MC__CONTROL__WATCHER_STATUS__WS_BAD_REQUEST, "set needs exactly one value");
            return r;
        }
        st = mc_watch_set(w, path, req->args[0], err, sizeof err);
        if (st == MC_WATCH_OK)
            st = mc_watch_walk(w, path, on_walk, &b, err, sizeof err);
        break;
    case MC__CONTROL__WATCHER_OP__WATCHER_CALL: {
        char *result = NULL;
        st = mc_watch_call(w, path, (int)req->n_args, (const char *const *)req->args, &result,
                           err, sizeof err);
        if (st == MC_WATCH_OK) {
            r->has_result = result != NULL;
            if (result)
                r->result = result;
        }
        break;
    }
    default:
        fail(r, MC__CONTROL__WATCHER_STATUS__WS_BAD_REQUEST, "unknown watcher operation");
        return r;
    }
    if (b.failed) {
        mc_pb_free(r);
        return NULL;
    }
    if (st != MC_WATCH_OK)
        fail(r, mc_watcher_status_to_wire(st), err[0] ? err : mc_watch_status_name(st));
    return r;
}
