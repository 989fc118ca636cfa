/* Helpers for the persistence tests (see persist_test_util.h). */
#include "persist_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static bool use_cluster;

void pt_use_cluster(bool on) { use_cluster = on; }
bool pt_cluster_mode(void) { return use_cluster; }

bool pt_redis_start(pt_redis *r, const rh_options *opt)
{
    memset(r, 0, sizeof *r);
    if (opt)
        r->opt = *opt;
    if (use_cluster) {
        r->cluster = rh_cluster_start(opt);
        return r->cluster != NULL;
    }
    r->single = rh_start(opt);
    return r->single != NULL;
}

void pt_redis_stop(pt_redis *r)
{
    rh_stop(r->single);
    rh_cluster_stop(r->cluster);
    r->single = NULL;
    r->cluster = NULL;
}

rh_redis *pt_redis_node(pt_redis *r)
{
    return r->single ? r->single : rh_cluster_node(r->cluster, 0);
}

void pt_config(pt_redis *r, mc_persist_config *cfg, bool use_password)
{
    if (r->cluster) {
        cfg->nseeds = RH_CLUSTER_NODES;
        for (int i = 0; i < RH_CLUSTER_NODES; i++)
            cfg->seeds[i] = rh_addr(rh_cluster_node(r->cluster, i));
    } else {
        cfg->address = rh_addr(r->single);
    }
    if (use_password) {
        cfg->password_file = rh_password_file(pt_redis_node(r));
        cfg->user = r->opt.user;
    }
}

mc_entity_defs *pt_defs(const char *dir)
{
    char path[1024], err[4096];
    snprintf(path, sizeof path, "%s/tests/persist/%s", h_source_dir(), dir);
    mc_entity_defs *d = mc_defs_load(path, err, sizeof err);
    if (!d)
        fprintf(stderr, "defs %s: %s\n", path, err);
    return d;
}

mc_persist_store *pt_store(struct event_base *base, pt_redis *r, const mc_entity_defs *defs,
                           const char *name)
{
    mc_persist_config cfg = {.process_name = name, .defs = defs};
    pt_config(r, &cfg, r->opt.password);
    char err[512];
    mc_persist_store *s = mc_persist_store_new(base, &cfg, err, sizeof err);
    if (!s) {
        fprintf(stderr, "store: %s\n", err);
        return NULL;
    }
    mc_persist_set_owner(s, name, 1);
    return s;
}

static void join(char *dst, size_t n, const char *const *items, size_t count, const char *sep)
{
    dst[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(dst);
        snprintf(dst + len, n - len, "%s%s", i ? sep : "", items[i]);
    }
}

void pt_res_clear(pt_res *r)
{
    if (r->values) {
        for (size_t i = 0; i < r->nvalues; i++)
            mc_value_free(&r->values[i]);
        free(r->values);
    }
    memset(r, 0, sizeof *r);
}

void pt_cb(void *ctx, const mc_persist_result *res)
{
    pt_res *r = ctx;
    r->calls++;
    r->done = true;
    r->st = res->status;
    snprintf(r->reason, sizeof r->reason, "%s", res->reason ? res->reason : "(null)");
    r->dbid = res->dbid;
    r->count = res->count;
    r->cursor = res->cursor;
    if (res->token)
        snprintf(r->token, sizeof r->token, "%s", res->token);
    if (res->owner) {
        snprintf(r->owner, sizeof r->owner, "%s", res->owner->name);
        r->owner_inc = res->owner->incarnation;
        r->owner_state = (int)res->owner->state;
        r->mailbox_len = res->owner->mailbox_len;
        if (res->owner->mailbox_len && res->owner->mailbox_len < sizeof r->mailbox)
            memcpy(r->mailbox, res->owner->mailbox, res->owner->mailbox_len);
    }
    if (res->record) {
        const mc_persist_record *rec = res->record;
        r->nvalues = rec->type->nprops;
        r->values = calloc(r->nvalues, sizeof *r->values);
        for (size_t i = 0; i < r->nvalues; i++)
            mc_value_copy(&r->values[i], &rec->values[i]);
        r->engine = rec->engine;
        join(r->added, sizeof r->added, rec->added, rec->nadded, ",");
        join(r->removed, sizeof r->removed, rec->removed, rec->nremoved, ",");
    }
    if (res->refs)
        join(r->refs, sizeof r->refs, res->refs, res->nrefs, "\n");
    r->dbids[0] = '\0';
    for (size_t i = 0; i < res->ndbids; i++) {
        size_t len = strlen(r->dbids);
        snprintf(r->dbids + len, sizeof r->dbids - len, "%llu,",
                 (unsigned long long)res->dbids[i]);
    }
    r->types[0] = '\0';
    for (size_t i = 0; i < res->ntypes; i++) {
        size_t len = strlen(r->types);
        snprintf(r->types + len, sizeof r->types - len, "%s=%llu,", res->types[i].name,
                 (unsigned long long)res->types[i].count);
    }
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void wake(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

bool pt_wait(struct event_base *base, const bool *flag, int ms)
{
    long deadline = now_ms() + ms;
    struct event *ev = evtimer_new(base, wake, NULL);
    while (!*flag && now_ms() < deadline) {
        struct timeval tv = {0, 20000};
        evtimer_add(ev, &tv);
        event_base_loop(base, EVLOOP_ONCE);
    }
    event_free(ev);
    return *flag;
}

void pt_run(struct event_base *base, int ms)
{
    bool never = false;
    pt_wait(base, &never, ms);
}

bool pt_wait_res(struct event_base *base, pt_res *r) { return pt_wait(base, &r->done, 15000); }

void pt_entity_init(pt_entity *pe, const mc_entity_type_def *t)
{
    memset(pe, 0, sizeof *pe);
    pe->values = calloc(t->nprops ? t->nprops : 1, sizeof *pe->values);
    for (size_t i = 0; i < t->nprops; i++)
        mc_value_copy(&pe->values[i], &t->props[i].default_value);
    pe->e.type = t;
    pe->e.values = pe->values;
}

void pt_entity_free(pt_entity *pe)
{
    for (size_t i = 0; pe->values && i < pe->e.type->nprops; i++)
        mc_value_free(&pe->values[i]);
    free(pe->values);
    pe->values = NULL;
}

static mc_value *prop(pt_entity *pe, const char *name)
{
    const mc_def_property *p = mc_defs_property_by_name(pe->e.type, name);
    if (!p) {
        fprintf(stderr, "test: no property %s\n", name);
        exit(1); /* a broken test, not a result: the suite fails */
    }
    return &pe->values[p->index];
}

void pt_set_str(pt_entity *pe, const char *name, const char *text)
{
    mc_value *v = prop(pe, name);
    mc_type_kind k = v->kind;
    mc_value_free(v);
    if (mc_value_set_bytes(v, k, text, strlen(text)) != 0) {
        fprintf(stderr, "test: out of memory\n");
        exit(1);
    }
}

void pt_set_int(pt_entity *pe, const char *name, int64_t val)
{
    mc_value *v = prop(pe, name);
    if (v->kind >= MC_TYPE_UINT8 && v->kind <= MC_TYPE_UINT64)
        v->as.u = (uint64_t)val;
    else
        v->as.i = val;
}
