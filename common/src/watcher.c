/* The watcher registry: a tree of directories and typed leaves. */
#include "common/watcher.h"
#include "common/error.h"
#include "common/config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct node node;
struct node {
    char *name;
    bool is_dir;
    /* directories */
    node **children; /* sorted by name */
    size_t nchildren;
    /* leaves */
    mc_watch_type type;
    mc_watch_mode mode;
    mc_watch_get_fn get;
    mc_watch_set_fn set;
    mc_watch_call_fn call;
    mc_watch_async_fn async_call;
    void *ctx;
    const char *help;
};

struct mc_watch_done {
    mc_watchers *w; /* NULL once detached (the registry was freed or the caller left) */
    mc_watch_done *prev, *next;
    mc_watch_result_fn fn;
    void *ctx;
    char path[MC_WATCH_MAX_PATH];
};

struct mc_watchers {
    node root;
    mc_watch_done *pending; /* asynchronous calls in flight */
    size_t npending;
};

const char *mc_watch_status_name(mc_watch_status s)
{
    switch (s) {
    case MC_WATCH_OK: return "ok";
    case MC_WATCH_ERR_NOT_FOUND: return "no such path";
    case MC_WATCH_ERR_NOT_DIRECTORY: return "not a directory";
    case MC_WATCH_ERR_IS_DIRECTORY: return "is a directory";
    case MC_WATCH_ERR_READ_ONLY: return "read-only";
    case MC_WATCH_ERR_BAD_VALUE: return "bad value";
    case MC_WATCH_ERR_REFUSED: return "refused";
    case MC_WATCH_ERR_NOT_CALLABLE: return "not callable";
    case MC_WATCH_ERR_EXISTS: return "already exists";
    case MC_WATCH_ERR_BAD_PATH: return "bad path";
    case MC_WATCH_ERR_NO_MEMORY: return "out of memory";
    case MC_WATCH_ERR_PENDING: return "asynchronous call did not complete at once";
    }
    return "unknown status";
}

const char *mc_watch_type_name(mc_watch_type t)
{
    switch (t) {
    case MC_WATCH_INT: return "int";
    case MC_WATCH_UINT: return "uint";
    case MC_WATCH_FLOAT: return "float";
    case MC_WATCH_BOOL: return "bool";
    case MC_WATCH_STRING: return "string";
    }
    return "?";
}

const char *mc_watch_mode_name(mc_watch_mode m)
{
    switch (m) {
    case MC_WATCH_READ_ONLY: return "ro";
    case MC_WATCH_READ_WRITE: return "rw";
    case MC_WATCH_CALLABLE: return "call";
    }
    return "?";
}

/* ---- values ---- */

void mc_watch_value_clear(mc_watch_value *v)
{
    if (v->type == MC_WATCH_STRING) {
        free(v->as.s);
        v->as.s = NULL;
    }
}

void mc_watch_value_set_string(mc_watch_value *v, const char *text)
{
    if (v->type == MC_WATCH_STRING)
        free(v->as.s);
    v->type = MC_WATCH_STRING;
    v->as.s = strdup(text ? text : "");
}

char *mc_watch_value_to_text(const mc_watch_value *v)
{
    char buf[64];
    switch (v->type) {
    case MC_WATCH_INT: snprintf(buf, sizeof buf, "%" PRId64, v->as.i); break;
    case MC_WATCH_UINT: snprintf(buf, sizeof buf, "%" PRIu64, v->as.u); break;
    case MC_WATCH_FLOAT: {
        /* Shortest form that reads back to the same double. */
        for (int prec = 6; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, v->as.f);
            if (strtod(buf, NULL) == v->as.f)
                break;
        }
        break;
    }
    case MC_WATCH_BOOL: snprintf(buf, sizeof buf, "%s", v->as.b ? "true" : "false"); break;
    case MC_WATCH_STRING: return strdup(v->as.s ? v->as.s : "");
    }
    return strdup(buf);
}

bool mc_watch_value_parse(mc_watch_type type, const char *text, mc_watch_value *out)
{
    out->type = type;
    switch (type) {
    case MC_WATCH_INT: return mc_parse_int(text, &out->as.i);
    case MC_WATCH_UINT: return mc_parse_uint(text, &out->as.u);
    case MC_WATCH_FLOAT: return mc_parse_float(text, &out->as.f);
    case MC_WATCH_BOOL: return mc_parse_bool(text, &out->as.b);
    case MC_WATCH_STRING:
        out->as.s = strdup(text ? text : "");
        return out->as.s != NULL;
    }
    return false;
}

/* ---- tree ---- */

mc_watchers *mc_watchers_new(void)
{
    mc_watchers *w = calloc(1, sizeof *w);
    if (w)
        w->root.is_dir = true;
    return w;
}

static void node_free_children(node *n)
{
    for (size_t i = 0; i < n->nchildren; i++) {
        node_free_children(n->children[i]);
        free(n->children[i]->name);
        free(n->children[i]);
    }
    free(n->children);
    n->children = NULL;
    n->nchildren = 0;
}

void mc_watchers_free(mc_watchers *w)
{
    if (!w)
        return;
    for (mc_watch_done *d = w->pending; d; d = d->next)
        d->w = NULL; /* the owner's mc_watch_complete frees it */
    node_free_children(&w->root);
    free(w);
}

/* Split a path into components; returns the count or -1 for a bad path. */
#define MAX_DEPTH 16
static int split_path(const char *path, char comps[MAX_DEPTH][MC_WATCH_MAX_NAME])
{
    if (!path)
        return 0;
    size_t len = strlen(path);
    if (len >= MC_WATCH_MAX_PATH)
        return -1;
    int n = 0;
    const char *p = path;
    while (*p == '/')
        p++;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t clen = e ? (size_t)(e - p) : strlen(p);
        if (clen == 0 || clen >= MC_WATCH_MAX_NAME || n >= MAX_DEPTH)
            return -1;
        for (size_t i = 0; i < clen; i++) {
            unsigned char c = (unsigned char)p[i];
            if (c <= ' ' || c == 127)
                return -1;
        }
        if ((clen == 1 && p[0] == '.') || (clen == 2 && p[0] == '.' && p[1] == '.'))
            return -1;
        memcpy(comps[n], p, clen);
        comps[n][clen] = '\0';
        n++;
        if (!e)
            break;
        p = e + 1;
        if (*p == '\0') /* trailing slash allowed */
            break;
    }
    return n;
}

/* Binary search; returns index of match or insertion point with *found. */
static size_t child_index(const node *dir, const char *name, bool *found)
{
    size_t lo = 0, hi = dir->nchildren;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(dir->children[mid]->name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static node *child(const node *dir, const char *name)
{
    bool found;
    size_t i = child_index(dir, name, &found);
    return found ? dir->children[i] : NULL;
}

static node *insert_child(node *dir, const char *name, size_t at)
{
    node *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->name = strdup(name);
    node **c = realloc(dir->children, (dir->nchildren + 1) * sizeof *c);
    if (!n->name || !c) {
        free(n->name);
        free(n);
        if (c)
            dir->children = c;
        return NULL;
    }
    dir->children = c;
    memmove(&c[at + 1], &c[at], (dir->nchildren - at) * sizeof *c);
    c[at] = n;
    dir->nchildren++;
    return n;
}

/* Resolve a path. On failure returns NULL with a status and detail. */
static node *resolve(const mc_watchers *w, const char *path, mc_watch_status *st, char *err,
                     size_t errlen)
{
    char comps[MAX_DEPTH][MC_WATCH_MAX_NAME];
    int n = split_path(path, comps);
    if (n < 0) {
        *st = MC_WATCH_ERR_BAD_PATH;
        mc_set_error(err, errlen, "bad watcher path '%.*s'", 200, path);
        return NULL;
    }
    const node *cur = &w->root;
    for (int i = 0; i < n; i++) {
        if (!cur->is_dir) {
            *st = MC_WATCH_ERR_NOT_DIRECTORY;
            mc_set_error(err, errlen, "'%s' in '%s' is a value, not a directory", comps[i - 1], path);
            return NULL;
        }
        const node *next = child(cur, comps[i]);
        if (!next) {
            *st = MC_WATCH_ERR_NOT_FOUND;
            mc_set_error(err, errlen, "no watcher '%s'", path);
            return NULL;
        }
        cur = next;
    }
    *st = MC_WATCH_OK;
    return (node *)cur;
}

/* Create the parent directories of path and a new node for its last component. */
static mc_watch_status create_node(mc_watchers *w, const char *path, bool is_dir, node **out)
{
    char comps[MAX_DEPTH][MC_WATCH_MAX_NAME];
    int n = split_path(path, comps);
    if (n <= 0)
        return MC_WATCH_ERR_BAD_PATH;
    node *cur = &w->root;
    for (int i = 0; i < n; i++) {
        if (!cur->is_dir)
            return MC_WATCH_ERR_NOT_DIRECTORY;
        bool found;
        size_t at = child_index(cur, comps[i], &found);
        if (found) {
            node *next = cur->children[at];
            if (i == n - 1) {
                if (is_dir && next->is_dir) {
                    *out = next;
                    return MC_WATCH_OK;
                }
                return MC_WATCH_ERR_EXISTS;
            }
            cur = next;
            continue;
        }
        node *made = insert_child(cur, comps[i], at);
        if (!made)
            return MC_WATCH_ERR_NO_MEMORY;
        made->is_dir = (i < n - 1) || is_dir;
        cur = made;
    }
    *out = cur;
    return MC_WATCH_OK;
}

mc_watch_status mc_watch_add(mc_watchers *w, const char *path, mc_watch_type type,
                             mc_watch_mode mode, mc_watch_get_fn get, mc_watch_set_fn set,
                             void *ctx)
{
    if (mode == MC_WATCH_CALLABLE || !get || (mode == MC_WATCH_READ_WRITE && !set))
        return MC_WATCH_ERR_BAD_VALUE;
    node *n;
    mc_watch_status st = create_node(w, path, false, &n);
    if (st != MC_WATCH_OK)
        return st;
    n->type = type;
    n->mode = mode;
    n->get = get;
    n->set = mode == MC_WATCH_READ_WRITE ? set : NULL;
    n->ctx = ctx;
    return MC_WATCH_OK;
}

mc_watch_status mc_watch_add_callable(mc_watchers *w, const char *path, mc_watch_call_fn call,
                                      void *ctx, const char *help)
{
    if (!call)
        return MC_WATCH_ERR_BAD_VALUE;
    node *n;
    mc_watch_status st = create_node(w, path, false, &n);
    if (st != MC_WATCH_OK)
        return st;
    n->type = MC_WATCH_STRING;
    n->mode = MC_WATCH_CALLABLE;
    n->call = call;
    n->ctx = ctx;
    n->help = help;
    return MC_WATCH_OK;
}

mc_watch_status mc_watch_add_async_callable(mc_watchers *w, const char *path,
                                            mc_watch_async_fn fn, void *ctx, const char *help)
{
    if (!fn)
        return MC_WATCH_ERR_BAD_VALUE;
    node *n;
    mc_watch_status st = create_node(w, path, false, &n);
    if (st != MC_WATCH_OK)
        return st;
    n->type = MC_WATCH_STRING;
    n->mode = MC_WATCH_CALLABLE;
    n->async_call = fn;
    n->ctx = ctx;
    n->help = help;
    return MC_WATCH_OK;
}

mc_watch_status mc_watch_add_directory(mc_watchers *w, const char *path)
{
    node *n;
    return create_node(w, path, true, &n);
}

static void get_int(void *ctx, mc_watch_value *out) { out->as.i = *(int64_t *)ctx; }
static void get_uint(void *ctx, mc_watch_value *out) { out->as.u = *(uint64_t *)ctx; }
static void get_float(void *ctx, mc_watch_value *out) { out->as.f = *(double *)ctx; }
static void get_bool(void *ctx, mc_watch_value *out) { out->as.b = *(bool *)ctx; }
static void get_cstr(void *ctx, mc_watch_value *out) { out->as.s = strdup((const char *)ctx); }

static bool set_int(void *ctx, const mc_watch_value *v, char *why, size_t n)
{
    *(int64_t *)ctx = v->as.i;
    return true;
}
static bool set_uint(void *ctx, const mc_watch_value *v, char *why, size_t n)
{
    *(uint64_t *)ctx = v->as.u;
    return true;
}
static bool set_float(void *ctx, const mc_watch_value *v, char *why, size_t n)
{
    *(double *)ctx = v->as.f;
    return true;
}
static bool set_bool(void *ctx, const mc_watch_value *v, char *why, size_t n)
{
    *(bool *)ctx = v->as.b;
    return true;
}

mc_watch_status mc_watch_add_int(mc_watchers *w, const char *path, int64_t *var,
                                 mc_watch_mode mode)
{
    return mc_watch_add(w, path, MC_WATCH_INT, mode, get_int, set_int, var);
}
mc_watch_status mc_watch_add_uint(mc_watchers *w, const char *path, uint64_t *var,
                                  mc_watch_mode mode)
{
    return mc_watch_add(w, path, MC_WATCH_UINT, mode, get_uint, set_uint, var);
}
mc_watch_status mc_watch_add_float(mc_watchers *w, const char *path, double *var,
                                   mc_watch_mode mode)
{
    return mc_watch_add(w, path, MC_WATCH_FLOAT, mode, get_float, set_float, var);
}
mc_watch_status mc_watch_add_bool(mc_watchers *w, const char *path, bool *var,
                                  mc_watch_mode mode)
{
    return mc_watch_add(w, path, MC_WATCH_BOOL, mode, get_bool, set_bool, var);
}
mc_watch_status mc_watch_add_const_string(mc_watchers *w, const char *path, const char *text)
{
    return mc_watch_add(w, path, MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_cstr, NULL,
                        (void *)text);
}

mc_watch_status mc_watch_remove(mc_watchers *w, const char *path)
{
    char comps[MAX_DEPTH][MC_WATCH_MAX_NAME];
    int n = split_path(path, comps);
    if (n < 0)
        return MC_WATCH_ERR_BAD_PATH;
    if (n == 0) {
        node_free_children(&w->root);
        return MC_WATCH_OK;
    }
    node *dir = &w->root;
    for (int i = 0; i < n - 1; i++) {
        node *next = dir->is_dir ? child(dir, comps[i]) : NULL;
        if (!next)
            return MC_WATCH_ERR_NOT_FOUND;
        dir = next;
    }
    if (!dir->is_dir)
        return MC_WATCH_ERR_NOT_FOUND;
    bool found;
    size_t at = child_index(dir, comps[n - 1], &found);
    if (!found)
        return MC_WATCH_ERR_NOT_FOUND;
    node *victim = dir->children[at];
    node_free_children(victim);
    free(victim->name);
    free(victim);
    memmove(&dir->children[at], &dir->children[at + 1],
            (dir->nchildren - at - 1) * sizeof *dir->children);
    dir->nchildren--;
    return MC_WATCH_OK;
}

bool mc_watch_is_directory(const mc_watchers *w, const char *path)
{
    mc_watch_status st;
    node *n = resolve(w, path, &st, NULL, 0);
    return n && n->is_dir;
}

mc_watch_status mc_watch_list(const mc_watchers *w, const char *path, mc_watch_list_fn fn,
                              void *ctx, char *err, size_t errlen)
{
    mc_watch_status st;
    node *n = resolve(w, path, &st, err, errlen);
    if (!n)
        return st;
    if (!n->is_dir) {
        mc_set_error(err, errlen, "'%s' is a value, not a directory", path);
        return MC_WATCH_ERR_NOT_DIRECTORY;
    }
    for (size_t i = 0; i < n->nchildren; i++) {
        const node *c = n->children[i];
        mc_watch_entry e = {.name = c->name, .is_directory = c->is_dir, .type = c->type,
                            .mode = c->mode};
        fn(ctx, &e);
    }
    return MC_WATCH_OK;
}

static void read_leaf(const node *n, mc_watch_value *out)
{
    memset(out, 0, sizeof *out);
    out->type = n->type;
    n->get(n->ctx, out);
    out->type = n->type;
    if (n->type == MC_WATCH_STRING && !out->as.s)
        out->as.s = strdup("");
}

static void walk(const node *n, char *path, size_t len, mc_watch_walk_fn fn, void *ctx)
{
    if (!n->is_dir) {
        if (n->mode == MC_WATCH_CALLABLE) {
            fn(ctx, path, n->mode, NULL);
            return;
        }
        mc_watch_value v;
        read_leaf(n, &v);
        fn(ctx, path, n->mode, &v);
        mc_watch_value_clear(&v);
        return;
    }
    for (size_t i = 0; i < n->nchildren; i++) {
        const node *c = n->children[i];
        int w = snprintf(path + len, MC_WATCH_MAX_PATH * 2 - len, "%s%s", len ? "/" : "",
                         c->name);
        if (w < 0 || len + (size_t)w >= MC_WATCH_MAX_PATH * 2)
            continue;
        walk(c, path, len + (size_t)w, fn, ctx);
        path[len] = '\0';
    }
}

mc_watch_status mc_watch_walk(const mc_watchers *w, const char *path, mc_watch_walk_fn fn,
                              void *ctx, char *err, size_t errlen)
{
    mc_watch_status st;
    node *n = resolve(w, path, &st, err, errlen);
    if (!n)
        return st;
    char buf[MC_WATCH_MAX_PATH * 2];
    char comps[MAX_DEPTH][MC_WATCH_MAX_NAME];
    int nc = split_path(path, comps);
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < nc; i++) {
        int wr = snprintf(buf + len, sizeof buf - len, "%s%s", i ? "/" : "", comps[i]);
        if (wr > 0)
            len += (size_t)wr;
    }
    walk(n, buf, len, fn, ctx);
    return MC_WATCH_OK;
}

mc_watch_status mc_watch_get(const mc_watchers *w, const char *path, mc_watch_value *out,
                             char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->type = MC_WATCH_INT;
    mc_watch_status st;
    node *n = resolve(w, path, &st, err, errlen);
    if (!n)
        return st;
    if (n->is_dir) {
        mc_set_error(err, errlen, "'%s' is a directory", path);
        return MC_WATCH_ERR_IS_DIRECTORY;
    }
    if (n->mode == MC_WATCH_CALLABLE) {
        mc_set_error(err, errlen, "'%s' is callable; use call", path);
        return MC_WATCH_ERR_NOT_CALLABLE;
    }
    read_leaf(n, out);
    return MC_WATCH_OK;
}

mc_watch_status mc_watch_set(mc_watchers *w, const char *path, const char *text, char *err,
                             size_t errlen)
{
    mc_watch_status st;
    node *n = resolve(w, path, &st, err, errlen);
    if (!n)
        return st;
    if (n->is_dir) {
        mc_set_error(err, errlen, "'%s' is a directory", path);
        return MC_WATCH_ERR_IS_DIRECTORY;
    }
    if (n->mode != MC_WATCH_READ_WRITE) {
        mc_set_error(err, errlen, "'%s' is %s", path,
                n->mode == MC_WATCH_CALLABLE ? "callable, not settable" : "read-only");
        return MC_WATCH_ERR_READ_ONLY;
    }
    mc_watch_value v;
    memset(&v, 0, sizeof v);
    if (!text || !mc_watch_value_parse(n->type, text, &v)) {
        mc_set_error(err, errlen, "'%.*s' is not a valid %s for '%s'", 100, text ? text : "(null)",
                mc_watch_type_name(n->type), path);
        mc_watch_value_clear(&v);
        return MC_WATCH_ERR_BAD_VALUE;
    }
    char why[256] = "";
    bool ok = n->set(n->ctx, &v, why, sizeof why);
    mc_watch_value_clear(&v);
    if (!ok) {
        mc_set_error(err, errlen, "'%s' refused: %s", path, why[0] ? why : "value not accepted");
        return MC_WATCH_ERR_REFUSED;
    }
    return MC_WATCH_OK;
}

/* The callable at path, or NULL with a status and detail. */
static node *callable(mc_watchers *w, const char *path, mc_watch_status *st, char *err,
                      size_t errlen)
{
    node *n = resolve(w, path, st, err, errlen);
    if (n && (n->is_dir || n->mode != MC_WATCH_CALLABLE)) {
        mc_set_error(err, errlen, "'%s' is not callable", path);
        *st = MC_WATCH_ERR_NOT_CALLABLE;
        return NULL;
    }
    return n;
}

bool mc_watch_is_async(const mc_watchers *w, const char *path)
{
    mc_watch_status st;
    node *n = resolve(w, path, &st, NULL, 0);
    return n && !n->is_dir && n->mode == MC_WATCH_CALLABLE && n->async_call;
}

size_t mc_watch_pending(const mc_watchers *w) { return w->npending; }

static void unlink_done(mc_watch_done *d)
{
    if (!d->w)
        return;
    if (d->prev)
        d->prev->next = d->next;
    else
        d->w->pending = d->next;
    if (d->next)
        d->next->prev = d->prev;
    d->w->npending--;
    d->w = NULL;
    d->prev = d->next = NULL;
}

void mc_watch_complete(mc_watch_done *d, bool ok, const char *result, const char *why)
{
    if (!d)
        return;
    bool live = d->w != NULL;
    unlink_done(d);
    if (live && d->fn) {
        if (ok) {
            d->fn(d->ctx, MC_WATCH_OK, result, NULL);
        } else {
            char err[512];
            mc_set_error(err, sizeof err, "'%s' refused: %s", d->path,
                         why && why[0] ? why : "call failed");
            d->fn(d->ctx, MC_WATCH_ERR_REFUSED, NULL, err);
        }
    }
    free(d);
}

/* Start an asynchronous callable: the done is linked into w's pending list before fn runs,
 * so fn may complete it at once. */
static mc_watch_status start_async(mc_watchers *w, node *n, const char *path, int argc,
                                   const char *const *argv, mc_watch_result_fn on_result,
                                   void *ctx, mc_watch_done **out)
{
    mc_watch_done *d = calloc(1, sizeof *d);
    if (!d)
        return MC_WATCH_ERR_NO_MEMORY;
    d->w = w;
    d->fn = on_result;
    d->ctx = ctx;
    snprintf(d->path, sizeof d->path, "%s", path);
    d->next = w->pending;
    if (w->pending)
        w->pending->prev = d;
    w->pending = d;
    w->npending++;
    *out = d;
    n->async_call(n->ctx, argc, argv, d); /* d may be freed from here on */
    return MC_WATCH_OK;
}

static mc_watch_status run_sync(node *n, const char *path, int argc, const char *const *argv,
                                char **result, char *err, size_t errlen)
{
    char why[256] = "";
    if (!n->call(n->ctx, argc, argv, result, why, sizeof why)) {
        free(*result);
        *result = NULL;
        mc_set_error(err, errlen, "'%s' refused: %s", path, why[0] ? why : "call failed");
        return MC_WATCH_ERR_REFUSED;
    }
    return MC_WATCH_OK;
}

/* What a synchronous caller of an asynchronous callable collects. */
typedef struct {
    bool done;
    mc_watch_status st;
    char *result;
    char err[512];
} sync_wait;

static void on_sync_result(void *ctx, mc_watch_status st, const char *result, const char *err)
{
    sync_wait *sw = ctx;
    sw->done = true;
    sw->st = st;
    sw->result = result ? strdup(result) : NULL;
    if (result && !sw->result)
        sw->st = MC_WATCH_ERR_NO_MEMORY;
    snprintf(sw->err, sizeof sw->err, "%s", err ? err : "");
}

mc_watch_status mc_watch_call(mc_watchers *w, const char *path, int argc,
                              const char *const *argv, char **result, char *err, size_t errlen)
{
    *result = NULL;
    mc_watch_status st;
    node *n = callable(w, path, &st, err, errlen);
    if (!n)
        return st;
    if (!n->async_call)
        return run_sync(n, path, argc, argv, result, err, errlen);
    sync_wait sw = {.done = false};
    mc_watch_done *d = NULL;
    st = start_async(w, n, path, argc, argv, on_sync_result, &sw, &d);
    if (st != MC_WATCH_OK)
        return st;
    if (!sw.done) {
        d->fn = NULL; /* still pending (so d is alive): its result goes nowhere */
        mc_set_error(err, errlen, "'%s' is asynchronous and did not complete at once", path);
        return MC_WATCH_ERR_PENDING;
    }
    if (sw.st != MC_WATCH_OK)
        mc_set_error(err, errlen, "%s", sw.err);
    *result = sw.result;
    return sw.st;
}

mc_watch_status mc_watch_call_async(mc_watchers *w, const char *path, int argc,
                                    const char *const *argv, mc_watch_result_fn on_result,
                                    void *ctx, char *err, size_t errlen)
{
    mc_watch_status st;
    node *n = on_result ? callable(w, path, &st, err, errlen) : NULL;
    if (!on_result)
        return MC_WATCH_ERR_BAD_VALUE;
    if (!n)
        return st;
    if (n->async_call) {
        mc_watch_done *d;
        return start_async(w, n, path, argc, argv, on_result, ctx, &d);
    }
    char *result = NULL;
    char why[512] = "";
    st = run_sync(n, path, argc, argv, &result, why, sizeof why);
    on_result(ctx, st, result, st == MC_WATCH_OK ? NULL : why);
    free(result);
    return MC_WATCH_OK;
}
