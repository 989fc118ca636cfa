/* Waiting on the server (manager queries, global names) without outliving the engine, and
 * asking the manager for the least-loaded process of a role. */
#include "engine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mc_engine_wait {
    struct mc_engine_wait *prev, *next;
    mc_engine *e; /* NULL once the engine was freed (the waiter was cancelled then) */
    void (*cancel)(mc_engine *e, void *ctx);
    void *ctx;
};

void engine_waits_init(mc_engine *e)
{
    e->waits = calloc(1, sizeof *e->waits);
    if (e->waits)
        e->waits->next = e->waits->prev = e->waits;
}

mc_engine_wait *mc_engine_wait_new(mc_engine *e, void (*cancel)(mc_engine *e, void *ctx),
                                   void *ctx)
{
    if (e->freeing || !e->waits)
        return NULL;
    mc_engine_wait *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->e = e;
    w->cancel = cancel;
    w->ctx = ctx;
    w->next = e->waits->next;
    w->prev = e->waits;
    e->waits->next->prev = w;
    e->waits->next = w;
    return w;
}

void *mc_engine_wait_ctx(const mc_engine_wait *w) { return w->ctx; }

mc_engine *mc_engine_wait_end(mc_engine_wait *w)
{
    mc_engine *e = w->e;
    if (e) {
        w->prev->next = w->next;
        w->next->prev = w->prev;
    }
    free(w);
    return e;
}

void mc_engine_wait_drop(mc_engine_wait *w)
{
    if (w->e) {
        w->prev->next = w->next;
        w->next->prev = w->prev;
    }
    free(w);
}

void engine_waits_free(mc_engine *e)
{
    if (!e->waits)
        return;
    while (e->waits->next != e->waits) {
        mc_engine_wait *w = e->waits->next;
        w->prev->next = w->next;
        w->next->prev = w->prev;
        w->e = NULL;
        if (w->cancel)
            w->cancel(e, w->ctx);
    }
    free(e->waits);
    e->waits = NULL;
}

/* ---- least loaded ---------------------------------------------------------------------- */

typedef struct {
    mc_engine_pick_fn fn;
    void *ctx;
} pick_req;

static void pick_cancel(mc_engine *e, void *ctx)
{
    pick_req *p = ctx;
    p->fn(e, p->ctx, NULL, "the process is shutting down");
    free(p);
}

static void on_query(mc_server *s, void *ctx, const Mc__Control__QueryReply *reply)
{
    (void)s;
    pick_req *p = mc_engine_wait_ctx(ctx);
    mc_engine *e = mc_engine_wait_end(ctx);
    if (!e)
        return; /* cancelled (and freed) when the engine went */
    if (!reply)
        p->fn(e, p->ctx, NULL, "the manager did not answer in time");
    else if (reply->status != MC__CONTROL__QUERY_STATUS__QUERY_OK || reply->n_processes == 0 ||
             !reply->processes[0]->internal_addr || !*reply->processes[0]->internal_addr)
        p->fn(e, p->ctx, NULL, reply->reason && *reply->reason ? reply->reason : "none alive");
    else
        p->fn(e, p->ctx, reply->processes[0]->internal_addr, NULL);
    free(p);
}

static int pick(mc_engine *e, Mc__Control__QueryKind kind, mc_role role, const char *name,
                mc_engine_pick_fn fn, void *ctx)
{
    pick_req *p = malloc(sizeof *p);
    mc_engine_wait *w = p ? mc_engine_wait_new(e, pick_cancel, p) : NULL;
    if (!w) {
        free(p);
        return e->freeing ? MC_CALL_ERR_UNAVAILABLE : MC_CALL_ERR_BUSY;
    }
    p->fn = fn;
    p->ctx = ctx;
    if (mc_server_query(e->server, kind, role, name, on_query, w) != 0) {
        mc_engine_wait_drop(w);
        free(p);
        return MC_CALL_ERR_UNAVAILABLE;
    }
    return MC_CALL_OK;
}

int mc_engine_pick(mc_engine *e, mc_role role, mc_engine_pick_fn fn, void *ctx)
{
    return pick(e, MC__CONTROL__QUERY_KIND__QUERY_LEAST_LOADED, role, NULL, fn, ctx);
}

int mc_engine_pick_space_home(mc_engine *e, int32_t space, mc_engine_pick_fn fn, void *ctx)
{
    char name[16];
    snprintf(name, sizeof name, "%d", (int)space);
    return pick(e, MC__CONTROL__QUERY_KIND__QUERY_SPACE_HOME, MC_ROLE_CELLAPP, name, fn, ctx);
}
