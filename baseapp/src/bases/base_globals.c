/* Globally named bases (registerGlobally / lookUpBaseByName): the manager keeps the names;
 * a base remembers its own so they go when it is destroyed. SERVICE mailboxes reach a base
 * only while it has a name. */
#include "bases.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int to_call_status(mc_global_status st)
{
    switch (st) {
    case MC_GLOBAL_OK: return MC_CALL_OK;
    case MC_GLOBAL_TAKEN: return MC_CALL_ERR_TAKEN;
    case MC_GLOBAL_NOT_FOUND: return MC_CALL_ERR_NOT_FOUND;
    case MC_GLOBAL_BAD: return MC_CALL_ERR_ARGS;
    case MC_GLOBAL_FULL: return MC_CALL_ERR_BUSY;
    default: return MC_CALL_ERR_UNAVAILABLE;
    }
}

typedef struct {
    mc_mailbox_ref caller;
    char name[72];
    mc_done_fn done;
    mc_lookup_fn found;
    void *ud;
} global_req;

static void caller_frame(mc_engine *e, const global_req *g, mc_call_frame *f)
{
    mc_entity *ent = mc_engine_find(e, g->caller.id);
    mc_engine_frame(e, f, ent && !ent->in_reap && ent->part == MC_PART_BASE ? ent : NULL);
    f->ctx.self = g->caller;
}

static void finish(mc_engine *e, global_req *g, int status, const mc_mailbox_ref *mb,
                   const char *reason)
{
    mc_call_frame f;
    caller_frame(e, g, &f);
    if (g->done)
        g->done(&f.ctx, g->ud, status, reason ? reason : "");
    if (g->found) {
        mc_mailbox_ref m = {0};
        if (status == MC_CALL_OK && mb) {
            m = *mb;
            mc_mailbox_ref_set_component(&m, MC_COMPONENT_SERVICE);
        }
        g->found(&f.ctx, g->ud, status, m);
    }
    free(g);
}

static void cancel(mc_engine *e, void *ctx)
{
    finish(e, ctx, MC_CALL_ERR_UNAVAILABLE, NULL, "the process is shutting down");
}

static bool remember(mc_entity *ent, const char *name)
{
    char **n = realloc(ent->global_names, (ent->nglobal_names + 1) * sizeof *n);
    if (!n)
        return false;
    ent->global_names = n;
    n[ent->nglobal_names] = strdup(name);
    if (!n[ent->nglobal_names])
        return false;
    ent->nglobal_names++;
    return true;
}

static void on_registered(mc_server *s, void *ctx, mc_global_status st,
                          const mc_mailbox_ref *mb, const char *reason)
{
    (void)mb;
    global_req *g = mc_engine_wait_ctx(ctx);
    mc_engine *e = mc_engine_wait_end(ctx);
    if (!e)
        return;
    int status = to_call_status(st);
    mc_entity *ent = mc_engine_find(e, g->caller.id);
    if (status == MC_CALL_OK) {
        if (!ent || ent->in_reap || !remember(ent, g->name)) {
            /* Gone meanwhile (or no memory): the name must not outlive it. */
            mc_server_global_deregister(s, g->name, &g->caller, NULL, NULL);
            status = ent ? MC_CALL_ERR_BUSY : MC_CALL_ERR_DESTROYED;
        } else {
            MC_INFO("%s %d registered globally as '%s'", ent->td->name, (int)ent->id, g->name);
        }
    }
    finish(e, g, status, NULL, reason);
}

int base_op_register_globally(const mc_call_ctx *call, const char *name, mc_done_fn fn,
                              void *ud)
{
    mc_engine *e = mc_engine_of(call);
    mc_entity *ent = mc_engine_entity_of(call, MC_PART_BASE);
    if (!ent || ent->destroying)
        return MC_CALL_ERR_STATE;
    if (!name || !*name || strlen(name) > 64)
        return MC_CALL_ERR_ARGS;
    global_req *g = calloc(1, sizeof *g);
    if (!g)
        return MC_CALL_ERR_BUSY;
    g->caller = mc_engine_mailbox(e, ent, MC_COMPONENT_BASE);
    snprintf(g->name, sizeof g->name, "%s", name);
    g->done = fn;
    g->ud = ud;
    mc_engine_wait *w = mc_engine_wait_new(e, cancel, g);
    if (!w) {
        free(g);
        return MC_CALL_ERR_UNAVAILABLE;
    }
    if (mc_server_global_register(mc_engine_server(e), name, &g->caller, on_registered, w) != 0) {
        mc_engine_wait_drop(w);
        free(g);
        return MC_CALL_ERR_ARGS;
    }
    return MC_CALL_OK;
}

int base_op_deregister_globally(const mc_call_ctx *call, const char *name)
{
    mc_engine *e = mc_engine_of(call);
    mc_entity *ent = mc_engine_entity_of(call, MC_PART_BASE);
    if (!ent || !name)
        return MC_CALL_ERR_STATE;
    for (size_t i = 0; i < ent->nglobal_names; i++)
        if (strcmp(ent->global_names[i], name) == 0) {
            mc_mailbox_ref mb = mc_engine_mailbox(e, ent, MC_COMPONENT_BASE);
            mc_server_global_deregister(mc_engine_server(e), name, &mb, NULL, NULL);
            free(ent->global_names[i]);
            ent->global_names[i] = ent->global_names[--ent->nglobal_names];
            return MC_CALL_OK;
        }
    return MC_CALL_ERR_NOT_FOUND;
}

static void on_looked_up(mc_server *s, void *ctx, mc_global_status st,
                         const mc_mailbox_ref *mb, const char *reason)
{
    (void)s;
    global_req *g = mc_engine_wait_ctx(ctx);
    mc_engine *e = mc_engine_wait_end(ctx);
    if (!e)
        return;
    finish(e, g, to_call_status(st), mb, reason);
}

int base_op_look_up(const mc_call_ctx *call, const char *name, mc_lookup_fn fn, void *ud)
{
    mc_engine *e = mc_engine_of(call);
    if (!e || !fn)
        return MC_CALL_ERR_STATE;
    if (!name || !*name || strlen(name) > 64)
        return MC_CALL_ERR_ARGS;
    global_req *g = calloc(1, sizeof *g);
    if (!g)
        return MC_CALL_ERR_BUSY;
    g->caller = call->self;
    snprintf(g->name, sizeof g->name, "%s", name);
    g->found = fn;
    g->ud = ud;
    mc_engine_wait *w = mc_engine_wait_new(e, cancel, g);
    if (!w) {
        free(g);
        return MC_CALL_ERR_UNAVAILABLE;
    }
    if (mc_server_global_lookup(mc_engine_server(e), name, on_looked_up, w) != 0) {
        mc_engine_wait_drop(w);
        free(g);
        return MC_CALL_ERR_ARGS;
    }
    return MC_CALL_OK;
}

void base_drop_globals(mc_engine *e, mc_entity *ent)
{
    mc_mailbox_ref mb = mc_engine_mailbox(e, ent, MC_COMPONENT_BASE);
    for (size_t i = 0; i < ent->nglobal_names; i++) {
        if (!mc_engine_freeing(e))
            mc_server_global_deregister(mc_engine_server(e), ent->global_names[i], &mb, NULL,
                                        NULL);
        free(ent->global_names[i]);
    }
    free(ent->global_names);
    ent->global_names = NULL;
    ent->nglobal_names = 0;
}

/* ---- restored bases (backup_restore.c) ------------------------------------------------ */

typedef struct {
    int32_t id;
    mc_mailbox_ref mb;
    char name[72];
} restore_req;

static void restore_cancel(mc_engine *e, void *ctx)
{
    (void)e;
    free(ctx);
}

static void on_registered_again(mc_server *s, void *ctx, mc_global_status st,
                                const mc_mailbox_ref *mb, const char *reason)
{
    (void)mb;
    restore_req *g = mc_engine_wait_ctx(ctx);
    mc_engine *e = mc_engine_wait_end(ctx);
    if (!e)
        return;
    mc_entity *ent = mc_engine_find(e, g->id);
    if (st == MC_GLOBAL_OK) {
        if (!ent || ent->in_reap || !remember(ent, g->name))
            mc_server_global_deregister(s, g->name, &g->mb, NULL, NULL);
        else
            MC_INFO("%s %d (restored) registered globally as '%s' again", ent->td->name,
                    (int)ent->id, g->name);
    } else {
        MC_WARNING("restored base %d could not register '%s' again: %s (%s)", (int)g->id,
                   g->name, mc_global_status_name(st), reason ? reason : "");
    }
    free(g);
}

int base_globals_register_restored(mc_engine *e, mc_entity *ent, const char *name)
{
    restore_req *g = calloc(1, sizeof *g);
    if (!g)
        return MC_CALL_ERR_BUSY;
    g->id = ent->id;
    g->mb = mc_engine_mailbox(e, ent, MC_COMPONENT_BASE);
    snprintf(g->name, sizeof g->name, "%.64s", name);
    mc_engine_wait *w = mc_engine_wait_new(e, restore_cancel, g);
    if (!w) {
        free(g);
        return MC_CALL_ERR_UNAVAILABLE;
    }
    if (mc_server_global_register(mc_engine_server(e), g->name, &g->mb, on_registered_again,
                                  w) != 0) {
        mc_engine_wait_drop(w);
        free(g);
        return MC_CALL_ERR_ARGS;
    }
    return MC_CALL_OK;
}
