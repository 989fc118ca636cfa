/* Creating bases: here (createBaseLocally, CREATE_BASE from others), on the least-loaded
 * baseapp (createBaseAnywhere) or on a given one (createBaseRemotely). */
#include "bases.h"
#include "common/log.h"
#include "mercury/status.h"
#include "common/value_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mc_entity *base_create(mc_engine *e, uint16_t type, const uint16_t *indices,
                       const mc_value *values, size_t n, int *status, char *why,
                       size_t whylen)
{
    mc_entity *ent = base_create_quiet(e, type, indices, values, n, status, why, whylen);
    if (ent)
        mc_engine_run_hook(e, ent, MC_HOOK_CREATED, NULL);
    return ent;
}

mc_entity *base_create_quiet(mc_engine *e, uint16_t type, const uint16_t *indices,
                             const mc_value *values, size_t n, int *status, char *why,
                             size_t whylen)
{
    const mc_entity_defs *defs = mc_engine_defs(e);
    const mc_entity_type_def *td = mc_defs_type(defs, type);
    if (!td) {
        *status = MC_CALL_ERR_NOT_FOUND;
        snprintf(why, whylen, "no entity type %u", (unsigned)type);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (indices[i] >= td->nprops || td->props[indices[i]].flags == MC_FLAGS_EDITOR_ONLY) {
            *status = MC_CALL_ERR_NOT_FOUND;
            snprintf(why, whylen, "%s has no property %u", td->name, (unsigned)indices[i]);
            return NULL;
        }
    }
    mc_entity *ent = mc_engine_new_entity(e, type, 0, why, whylen);
    if (!ent) {
        *status = MC_CALL_ERR_UNAVAILABLE;
        return NULL;
    }
    if (mc_engine_apply_props(e, type, MC_PART_BASE, ent->props, indices, values, n, why,
                              whylen) != 0 ||
        mc_engine_apply_props(e, type, MC_PART_CELL, ent->cell_data, indices, values, n, why,
                              whylen) != 0) {
        mc_engine_discard_entity(e, ent);
        *status = MC_CALL_ERR_ARGS;
        return NULL;
    }
    *status = MC_CALL_OK;
    MC_DEBUG("created %s %d", td->name, (int)ent->id);
    return ent;
}

int base_encode_create(mc_engine *e, uint16_t type, const uint16_t *indices,
                       const mc_value *values, size_t n, mc_ostream *os, char *why,
                       size_t whylen)
{
    return mc_create_base_encode(mc_engine_defs(e), type, indices, values, n, os, why, whylen);
}

void base_on_create_base(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    char why[MC_REASON_MAX] = "";
    mc_entity *ent = NULL;
    uint16_t type;
    uint16_t *idx = NULL;
    mc_value *vals = NULL;
    size_t got = 0;
    int status = mc_create_base_decode(mc_engine_defs(e), is, &type, &idx, &vals, &got, why,
                                       sizeof why);
    if (status == MC_CALL_OK)
        ent = base_create(e, type, idx, vals, got, &status, why, sizeof why);
    if (!ent && status == MC_CALL_ERR_ARGS)
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
    mc_create_base_free(idx, vals, got);
    mc_ostream os;
    mc_ostream_init(&os);
    mc_write_i8(&os, (int8_t)status);
    mc_mailbox_ref mb = {0};
    if (ent)
        mb = mc_engine_mailbox(e, ent, MC_COMPONENT_BASE);
    mc_mailbox_ref_write(&os, &mb);
    mc_write_string(&os, why);
    mc_engine_reply(e, o, os.data, os.size);
    mc_ostream_free(&os);
    if (!ent)
        MC_INFO("CREATE_BASE refused: %s", why);
}

/* ---- asking another baseapp ---------------------------------------------------------- */

typedef struct {
    base_created_fn done;
    void *ctx;
    uint8_t *payload;
    size_t len;
} create_req;

static void create_finish(mc_engine *e, create_req *r, int status, const mc_mailbox_ref *mb,
                          const char *reason)
{
    r->done(e, r->ctx, status, mb, reason);
    free(r->payload);
    free(r);
}

static void on_create_reply(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    create_req *r = ctx;
    mc_mailbox_ref mb = {0};
    char why[MC_REASON_MAX] = "";
    if (status == MC_CALL_OK) {
        int8_t st = mc_read_i8(payload);
        bool ok = mc_mailbox_ref_read(payload, &mb, mc_defs_type_count(mc_engine_defs(e)));
        ok = ok && mc_read_string_into(payload, why, sizeof why);
        status = ok ? st : MC_CALL_ERR_ARGS;
        if (!ok)
            snprintf(why, sizeof why, "malformed answer to CREATE_BASE");
        else if (st == MC_CALL_OK && mc_mailbox_ref_is_none(&mb)) {
            status = MC_CALL_ERR_ARGS;
            snprintf(why, sizeof why, "CREATE_BASE answered without a mailbox");
        }
    } else {
        snprintf(why, sizeof why, "%s", mc_call_status_name(status));
    }
    create_finish(e, r, status, &mb, why);
}

static void send_create(mc_engine *e, create_req *r, const char *addr)
{
    mc_address a;
    mc_mailbox_ref none = {0};
    if (mc_address_parse(addr, &a) != MC_OK) {
        create_finish(e, r, MC_CALL_ERR_UNAVAILABLE, &none, "bad baseapp address");
        return;
    }
    int rc = mc_engine_request(e, &a, MC_MSG_CREATE_BASE, r->payload, r->len, on_create_reply, r);
    if (rc != MC_CALL_OK)
        create_finish(e, r, rc, &none, mc_call_status_name(rc));
}

static void on_picked(mc_engine *e, void *ctx, const char *addr, const char *reason)
{
    create_req *r = ctx;
    mc_mailbox_ref none = {0};
    if (!addr) {
        char why[MC_REASON_MAX];
        snprintf(why, sizeof why, "no baseapp: %s", reason ? reason : "");
        create_finish(e, r, MC_CALL_ERR_UNAVAILABLE, &none, why);
        return;
    }
    send_create(e, r, addr);
}

int base_create_on(mc_engine *e, const char *addr, const uint8_t *payload, size_t len,
                   base_created_fn done, void *ctx)
{
    create_req *r = calloc(1, sizeof *r);
    if (!r)
        return MC_CALL_ERR_BUSY;
    r->payload = malloc(len ? len : 1);
    if (!r->payload) {
        free(r);
        return MC_CALL_ERR_BUSY;
    }
    memcpy(r->payload, payload, len);
    r->len = len;
    r->done = done;
    r->ctx = ctx;
    if (addr) {
        /* Any failure now is reported through done, later (never from inside this call). */
        mc_address a;
        if (mc_address_parse(addr, &a) != MC_OK) {
            free(r->payload);
            free(r);
            return MC_CALL_ERR_MAILBOX;
        }
        int rc = mc_engine_request(e, &a, MC_MSG_CREATE_BASE, r->payload, r->len,
                                   on_create_reply, r);
        if (rc != MC_CALL_OK) {
            free(r->payload);
            free(r);
        }
        return rc;
    }
    int rc = mc_engine_pick(e, MC_ROLE_BASEAPP, on_picked, r);
    if (rc != MC_CALL_OK) {
        free(r->payload);
        free(r);
    }
    return rc;
}

/* ---- the engine API ------------------------------------------------------------------- */

static int resolve(const mc_call_ctx *call, const char *type, const mc_prop_init *props,
                   size_t nprops, mc_engine **e_out, mc_ostream *os)
{
    mc_engine *e = mc_engine_of(call);
    if (!e)
        return MC_CALL_ERR_STATE;
    *e_out = e;
    const mc_entity_type_def *td = type ? mc_defs_type_by_name(mc_engine_defs(e), type) : NULL;
    if (!td)
        return MC_CALL_ERR_NOT_FOUND;
    uint16_t *idx;
    mc_value *vals;
    char why[MC_REASON_MAX];
    if (mc_engine_props_by_name(e, td, props, nprops, &idx, &vals, why, sizeof why) != 0) {
        MC_WARNING("creating a %s: %s", td->name, why);
        return MC_CALL_ERR_ARGS;
    }
    int rc = base_encode_create(e, td->id, idx, vals, nprops, os, why, sizeof why);
    mc_json_props_free(idx, vals, nprops);
    if (rc != 0) {
        MC_WARNING("creating a %s: %s", td->name, why);
        return MC_CALL_ERR_ARGS;
    }
    return MC_CALL_OK;
}

int base_op_create_locally(const mc_call_ctx *call, const char *type,
                           const mc_prop_init *props, size_t nprops, mc_mailbox_ref *out)
{
    mc_engine *e = mc_engine_of(call);
    if (!e)
        return MC_CALL_ERR_STATE;
    const mc_entity_type_def *td = type ? mc_defs_type_by_name(mc_engine_defs(e), type) : NULL;
    if (!td)
        return MC_CALL_ERR_NOT_FOUND;
    uint16_t *idx;
    mc_value *vals;
    char why[MC_REASON_MAX];
    if (mc_engine_props_by_name(e, td, props, nprops, &idx, &vals, why, sizeof why) != 0) {
        MC_WARNING("creating a %s: %s", td->name, why);
        return MC_CALL_ERR_ARGS;
    }
    int status;
    mc_entity *ent = base_create(e, td->id, idx, vals, nprops, &status, why, sizeof why);
    mc_json_props_free(idx, vals, nprops);
    if (!ent) {
        MC_WARNING("creating a %s: %s", td->name, why);
        return status;
    }
    if (out)
        *out = mc_engine_mailbox(e, ent, MC_COMPONENT_BASE);
    return MC_CALL_OK;
}

/* A creation the game asked for: told through its callback with its own context. */
typedef struct {
    mc_mailbox_ref caller;
    mc_create_fn fn;
    void *ud;
} game_create;

static void game_created(mc_engine *e, void *ctx, int status, const mc_mailbox_ref *mb,
                         const char *reason)
{
    game_create *g = ctx;
    mc_entity *ent = mc_mailbox_ref_is_none(&g->caller) ? NULL : mc_engine_find(e, g->caller.id);
    mc_call_frame f;
    mc_engine_frame(e, &f, ent && !ent->in_reap ? ent : NULL);
    f.ctx.self = g->caller;
    mc_mailbox_ref none = {0};
    g->fn(&f.ctx, g->ud, status, status == MC_CALL_OK && mb ? *mb : none, reason ? reason : "");
    free(g);
}

static int create_async(const mc_call_ctx *call, const char *addr, const char *type,
                        const mc_prop_init *props, size_t nprops, mc_create_fn fn, void *ud)
{
    mc_engine *e;
    mc_ostream os;
    mc_ostream_init(&os);
    int rc = resolve(call, type, props, nprops, &e, &os);
    game_create *g = rc == MC_CALL_OK ? malloc(sizeof *g) : NULL;
    if (rc == MC_CALL_OK && !g)
        rc = MC_CALL_ERR_BUSY;
    if (rc == MC_CALL_OK) {
        g->caller = call->self;
        g->fn = fn;
        g->ud = ud;
        rc = base_create_on(e, addr, os.data, os.size, game_created, g);
        if (rc != MC_CALL_OK)
            free(g);
    }
    mc_ostream_free(&os);
    return rc;
}

int base_op_create_anywhere(const mc_call_ctx *call, const char *type,
                            const mc_prop_init *props, size_t nprops, mc_create_fn fn,
                            void *ud)
{
    if (!fn)
        return MC_CALL_ERR_ARGS;
    return create_async(call, NULL, type, props, nprops, fn, ud);
}

int base_op_create_remotely(const mc_call_ctx *call, const mc_mailbox_ref *where,
                            const char *type, const mc_prop_init *props, size_t nprops,
                            mc_create_fn fn, void *ud)
{
    if (!fn || !where || mc_mailbox_ref_is_none(where))
        return MC_CALL_ERR_MAILBOX;
    mc_component c = mc_mailbox_ref_component(where);
    if (c != MC_COMPONENT_BASE && c != MC_COMPONENT_SERVICE)
        return MC_CALL_ERR_MAILBOX;
    mc_address a;
    mc_mailbox_address(where, &a);
    char addr[MC_ADDRESS_STRLEN];
    mc_address_format(&a, addr, sizeof addr);
    return create_async(call, addr, type, props, nprops, fn, ud);
}
