/* Runtime side of game modules: opening, checking, dispatching; helpers for generated code. */
#include "common/game_module.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mc_game {
    void *handle;
    const mc_game_module *table;
};

const char *mc_call_status_name(int status)
{
    switch (status) {
    case MC_CALL_OK: return "ok";
    case MC_CALL_ERR_MAILBOX: return "bad mailbox";
    case MC_CALL_ERR_ARGS: return "bad arguments";
    case MC_CALL_ERR_DEFS: return "definitions mismatch";
    case MC_CALL_ERR_SEND: return "send failed";
    case MC_CALL_ERR_HANDLER: return "handler failed";
    case MC_CALL_ERR_NO_METHOD: return "no such method";
    case MC_CALL_ERR_NO_ENTITY: return "no such entity";
    case MC_CALL_ERR_DESTROYED: return "entity destroyed";
    case MC_CALL_ERR_PROCESS_DEAD: return "process dead";
    case MC_CALL_ERR_TIMEOUT: return "timed out";
    case MC_CALL_ERR_NO_CLIENT: return "no client";
    case MC_CALL_ERR_STATE: return "not in this state";
    case MC_CALL_ERR_UNAVAILABLE: return "unavailable";
    case MC_CALL_ERR_BUSY: return "busy";
    case MC_CALL_ERR_NOT_FOUND: return "not found";
    case MC_CALL_ERR_TAKEN: return "taken";
    default: return "unknown status";
    }
}

int mc_game_check(const mc_game_module *m, const mc_entity_defs *defs, char *err, size_t errlen)
{
    if (!m) {
        snprintf(err, errlen, "no game module table");
        return -1;
    }
    if (m->abi != MC_GAME_ABI) {
        snprintf(err, errlen,
                 "game module %s was generated for game module ABI %u, this engine expects "
                 "ABI %u: generate it again with this engine's defc and rebuild it",
                 m->name ? m->name : "?", (unsigned)m->abi, (unsigned)MC_GAME_ABI);
        return -1;
    }
    if (!m->digest_hex || strcmp(m->digest_hex, mc_defs_digest_hex(defs))) {
        snprintf(err, errlen,
                 "game module %s was generated from other definitions (digest %.16s..., "
                 "loaded %.16s...): rebuild it",
                 m->name ? m->name : "?", m->digest_hex ? m->digest_hex : "none",
                 mc_defs_digest_hex(defs));
        return -1;
    }
    if (m->ntypes != mc_defs_type_count(defs)) {
        snprintf(err, errlen, "game module has %zu entity types, definitions %zu", m->ntypes,
                 mc_defs_type_count(defs));
        return -1;
    }
    for (size_t i = 0; i < m->ntypes; i++) {
        const mc_game_type *gt = &m->types[i];
        const mc_entity_type_def *t = mc_defs_type(defs, (uint16_t)i);
        if (gt->id != i || strcmp(gt->name, t->name)) {
            snprintf(err, errlen, "game module type %zu is %s, definitions say %s", i, gt->name,
                     t->name);
            return -1;
        }
        for (int p = 0; p < MC_PART_COUNT; p++) {
            size_t want = (p == MC_PART_CLIENT) == m->client_side ? t->nmethods[p] : 0;
            if (gt->nmethods[p] != want) {
                snprintf(err, errlen, "game module type %s has %zu %s methods, definitions %zu",
                         t->name, gt->nmethods[p], mc_part_name((mc_part)p), want);
                return -1;
            }
        }
    }
    return 0;
}

mc_game *mc_game_open(const char *path, const mc_entity_defs *defs, char *err, size_t errlen)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, errlen, "cannot load game module %s: %s", path, e ? e : "unknown error");
        return NULL;
    }
    mc_game_module_get_fn get;
    void *sym = dlsym(h, MC_GAME_MODULE_SYMBOL);
    memcpy(&get, &sym, sizeof(get));
    if (!sym) {
        snprintf(err, errlen, "%s is not a game module (no %s)", path, MC_GAME_MODULE_SYMBOL);
        dlclose(h);
        return NULL;
    }
    const mc_game_module *m = get();
    if (mc_game_check(m, defs, err, errlen) != 0) {
        dlclose(h);
        return NULL;
    }
    mc_game *g = calloc(1, sizeof(*g));
    if (!g) {
        snprintf(err, errlen, "out of memory");
        dlclose(h);
        return NULL;
    }
    g->handle = h;
    g->table = m;
    return g;
}

void mc_game_close(mc_game *g)
{
    if (!g)
        return;
    dlclose(g->handle);
    free(g);
}

const mc_game_module *mc_game_table(const mc_game *g)
{
    return g->table;
}

int mc_game_dispatch(const mc_game_module *m, const mc_call_ctx *call, uint16_t type_id,
                     mc_part part, uint16_t method_index, void *props, const uint8_t *args,
                     size_t len, mc_ostream *reply, char *why, size_t whylen)
{
    if (type_id >= m->ntypes || (unsigned)part >= MC_PART_COUNT ||
        method_index >= m->types[type_id].nmethods[part]) {
        snprintf(why, whylen, "no %s method %u on entity type %u", mc_part_name(part),
                 (unsigned)method_index, (unsigned)type_id);
        return MC_CALL_ERR_NO_METHOD;
    }
    mc_istream is;
    mc_istream_init(&is, args, len);
    return m->types[type_id].methods[part][method_index].dispatch(call, props, &is, reply, why,
                                                                  whylen);
}

int mc_game_dispatch_exposed(const mc_game_module *m, const mc_call_ctx *call, uint16_t type_id,
                             mc_part part, uint16_t exposed_index, void *props,
                             const uint8_t *args, size_t len, char *why, size_t whylen)
{
    const mc_entity_type_def *t = mc_defs_type(call->defs, type_id);
    const mc_def_method *md = t ? mc_defs_exposed_method(t, part, exposed_index) : NULL;
    if (!md || part == MC_PART_CLIENT) {
        snprintf(why, whylen, "client called %s exposed method %u of type %u: not exposed",
                 mc_part_name(part), (unsigned)exposed_index, (unsigned)type_id);
        return MC_CALL_ERR_NO_METHOD;
    }
    if (md->exposed == MC_EXPOSED_OWN_CLIENT && call->caller_id != call->self.id) {
        snprintf(why, whylen, "%s.%s is exposed to its own client only (caller %d, entity %d)",
                 t->name, md->name, (int)call->caller_id, (int)call->self.id);
        return MC_CALL_ERR_NO_METHOD;
    }
    if (md->nreturns) {
        snprintf(why, whylen, "%s.%s returns values and cannot be called by a client", t->name,
                 md->name);
        return MC_CALL_ERR_NO_METHOD;
    }
    return mc_game_dispatch(m, call, type_id, part, md->index, props, args, len, NULL, why,
                            whylen);
}

const mc_def_method *mc_gen_method(const mc_entity_defs *defs, uint16_t type_id, mc_part part,
                                   uint16_t index, const char *name)
{
    const mc_entity_type_def *t = defs ? mc_defs_type(defs, type_id) : NULL;
    const mc_def_method *m = t ? mc_defs_method(t, part, index) : NULL;
    return m && !strcmp(m->name, name) ? m : NULL;
}

/* Check the method and mailbox and encode the arguments of a generated sender into os.
 * Returns the method, or NULL with *rc set. */
static const mc_def_method *gen_encode_call(const mc_call_sink *sink, const mc_mailbox_ref *to,
                                            uint16_t type_id, mc_part part, uint16_t index,
                                            const char *name, const mc_value *args,
                                            size_t nargs, bool two_way, mc_ostream *os, int *rc)
{
    const mc_def_method *m = mc_gen_method(sink->defs, type_id, part, index, name);
    if (!m || m->nargs != nargs || (m->nreturns != 0) != two_way) {
        *rc = MC_CALL_ERR_DEFS;
        return NULL;
    }
    static const mc_component finals[MC_PART_COUNT] = {MC_COMPONENT_BASE, MC_COMPONENT_CELL,
                                                       MC_COMPONENT_CLIENT};
    mc_component c = mc_mailbox_ref_component(to);
    if (mc_mailbox_ref_is_none(to) || mc_mailbox_ref_type(to) != type_id ||
        mc_component_final(c) != finals[part]) {
        *rc = MC_CALL_ERR_MAILBOX;
        return NULL;
    }
    char why[256];
    if (mc_defs_encode_args(sink->defs, m, args, os, why, sizeof(why)) != 0) {
        *rc = MC_CALL_ERR_ARGS;
        return NULL;
    }
    return m;
}

/* The engine's own statuses (entity layer) pass through; anything else is a send failure. */
static int sink_status(int rc)
{
    return rc == 0 ? MC_CALL_OK : rc <= MC_CALL_ERR_NO_ENTITY ? rc : MC_CALL_ERR_SEND;
}

int mc_gen_send(const mc_call_sink *sink, const mc_mailbox_ref *to, uint16_t type_id,
                mc_part part, uint16_t index, const char *name, const mc_value *args,
                size_t nargs)
{
    mc_ostream os;
    mc_ostream_init(&os);
    int rc = MC_CALL_ERR_SEND;
    if (gen_encode_call(sink, to, type_id, part, index, name, args, nargs, false, &os, &rc) &&
        sink->send)
        rc = sink_status(sink->send(sink->ctx, to, part, index, os.data, os.size));
    mc_ostream_free(&os);
    return rc;
}

/* Who a fan-out reaches: a cell entity of type_id, the method one of its one-way client
 * methods. MC_CALL_OK, or the status. */
static int gen_check_fan_out(const mc_call_sink *sink, const mc_clients *to, uint16_t type_id,
                             mc_part part, const mc_def_method *m)
{
    if (!m || m->nreturns || part != MC_PART_CLIENT)
        return MC_CALL_ERR_DEFS;
    if (to->entity_id <= 0 || to->entity_type != type_id || !sink->fan_out)
        return MC_CALL_ERR_MAILBOX;
    return MC_CALL_OK;
}

int mc_gen_fan_out(const mc_call_sink *sink, const mc_clients *to, uint16_t type_id,
                   mc_part part, uint16_t index, const char *name, const mc_value *args,
                   size_t nargs)
{
    const mc_def_method *m = mc_gen_method(sink->defs, type_id, part, index, name);
    int rc = gen_check_fan_out(sink, to, type_id, part, m && m->nargs == nargs ? m : NULL);
    if (rc != MC_CALL_OK)
        return rc;
    mc_ostream os;
    mc_ostream_init(&os);
    char why[256];
    if (mc_defs_encode_args(sink->defs, m, args, &os, why, sizeof(why)) != 0)
        rc = MC_CALL_ERR_ARGS;
    else
        rc = sink_status(sink->fan_out(sink->ctx, to, index, os.data, os.size));
    mc_ostream_free(&os);
    return rc;
}

int mc_gen_fan_out_flat(const mc_call_sink *sink, const mc_clients *to, uint16_t type_id,
                        mc_part part, uint16_t index, uint32_t sig, const uint8_t *args,
                        size_t len)
{
    const mc_def_method *m = mc_gen_method_sig(sink->defs, type_id, part, index, sig);
    int rc = gen_check_fan_out(sink, to, type_id, part, m);
    if (rc != MC_CALL_OK)
        return rc;
    return sink_status(sink->fan_out(sink->ctx, to, index, args, len));
}

int mc_gen_request(const mc_call_sink *sink, const mc_mailbox_ref *to, uint16_t type_id,
                   mc_part part, uint16_t index, const char *name, const mc_value *args,
                   size_t nargs, mc_reply_fn on_reply, void *cb, void *ud)
{
    mc_ostream os;
    mc_ostream_init(&os);
    int rc = MC_CALL_ERR_SEND;
    if (gen_encode_call(sink, to, type_id, part, index, name, args, nargs, true, &os, &rc) &&
        sink->request)
        rc = sink_status(sink->request(sink->ctx, to, part, index, os.data, os.size, on_reply,
                                       cb, ud));
    mc_ostream_free(&os);
    return rc;
}

const mc_def_method *mc_gen_method_sig(const mc_entity_defs *defs, uint16_t type_id,
                                       mc_part part, uint16_t index, uint32_t sig)
{
    const mc_entity_type_def *t = defs ? mc_defs_type(defs, type_id) : NULL;
    const mc_def_method *m = t ? mc_defs_method(t, part, index) : NULL;
    return m && m->signature == sig ? m : NULL;
}

/* Check a flat call's method and mailbox (as gen_encode_call does for the generic path). */
static int gen_check_flat(const mc_call_sink *sink, const mc_mailbox_ref *to, uint16_t type_id,
                          mc_part part, uint16_t index, uint32_t sig, bool two_way)
{
    const mc_def_method *m = mc_gen_method_sig(sink->defs, type_id, part, index, sig);
    if (!m || (m->nreturns != 0) != two_way)
        return MC_CALL_ERR_DEFS;
    /* The part each component finally reaches (mc_component_final), by component, inline:
     * this runs for every call. */
    static const int8_t reaches[8] = {
        [MC_COMPONENT_CELL] = MC_PART_CELL,          [MC_COMPONENT_BASE] = MC_PART_BASE,
        [MC_COMPONENT_CLIENT] = MC_PART_CLIENT,      [MC_COMPONENT_BASE_VIA_CELL] = MC_PART_BASE,
        [MC_COMPONENT_CLIENT_VIA_CELL] = MC_PART_CLIENT,
        [MC_COMPONENT_CELL_VIA_BASE] = MC_PART_CELL, [MC_COMPONENT_CLIENT_VIA_BASE] = MC_PART_CLIENT,
        [MC_COMPONENT_SERVICE] = MC_PART_BASE,
    };
    _Static_assert(MC_COMPONENT_COUNT == 8, "a component is 3 bits");
    if (to->id == 0 || mc_salt_type(to->salt) != type_id ||
        reaches[mc_salt_component(to->salt)] != (int8_t)part)
        return MC_CALL_ERR_MAILBOX;
    return MC_CALL_OK;
}

int mc_gen_send_flat(const mc_call_sink *sink, const mc_mailbox_ref *to, uint16_t type_id,
                     mc_part part, uint16_t index, uint32_t sig, const uint8_t *args,
                     size_t len)
{
    int rc = gen_check_flat(sink, to, type_id, part, index, sig, false);
    if (rc != MC_CALL_OK)
        return rc;
    if (!sink->send)
        return MC_CALL_ERR_SEND;
    return sink_status(sink->send(sink->ctx, to, part, index, args, len));
}

int mc_gen_request_flat(const mc_call_sink *sink, const mc_mailbox_ref *to, uint16_t type_id,
                        mc_part part, uint16_t index, uint32_t sig, const uint8_t *args,
                        size_t len, mc_reply_fn on_reply, void *cb, void *ud)
{
    int rc = gen_check_flat(sink, to, type_id, part, index, sig, true);
    if (rc != MC_CALL_OK)
        return rc;
    if (!sink->request)
        return MC_CALL_ERR_SEND;
    return sink_status(sink->request(sink->ctx, to, part, index, args, len, on_reply, cb, ud));
}

const uint8_t *mc_gen_flat_take(mc_istream *is, size_t n, const char *method, char *why,
                                size_t whylen)
{
    size_t have = mc_istream_ok(is) ? mc_istream_remaining(is) : 0;
    if (!mc_istream_ok(is) || have != n) {
        if (why)
            snprintf(why, whylen, "%s: %zu bytes of arguments, the def says %zu", method, have,
                     n);
        mc_istream_fail(is);
        return NULL;
    }
    return n ? mc_read_bytes(is, n) : (const uint8_t *)"";
}

const mc_def_property *mc_gen_property(const mc_entity_defs *defs, uint16_t type_id,
                                       uint16_t prop_index, const char *name)
{
    const mc_entity_type_def *t = defs ? mc_defs_type(defs, type_id) : NULL;
    if (!t || prop_index >= t->nprops || strcmp(t->props[prop_index].name, name))
        return NULL;
    return &t->props[prop_index];
}

int mc_gen_encode_prop(const mc_entity_defs *defs, const mc_def_property *p, const mc_value *v,
                       mc_ostream *os, char *why, size_t whylen)
{
    mc_value_limits lim = mc_defs_property_limits(defs, p);
    char r[200];
    if (mc_value_encode(p->type, v, &lim, os, r, sizeof(r)) != 0) {
        snprintf(why, whylen, "property %s: %s", p->name, r);
        return MC_CALL_ERR_ARGS;
    }
    return MC_CALL_OK;
}

int mc_gen_decode_prop(const mc_entity_defs *defs, const mc_def_property *p, mc_istream *is,
                       mc_value *v, char *why, size_t whylen)
{
    mc_value_limits lim = mc_defs_property_limits(defs, p);
    char r[200];
    if (mc_value_decode(p->type, is, &lim, v, r, sizeof(r)) != 0) {
        snprintf(why, whylen, "property %s: %s", p->name, r);
        return MC_CALL_ERR_ARGS;
    }
    return MC_CALL_OK;
}

mc_value mc_gen_int(mc_type_kind k, int64_t v)
{
    mc_value x;
    memset(&x, 0, sizeof(x));
    x.kind = k;
    x.as.i = v;
    return x;
}

mc_value mc_gen_uint(mc_type_kind k, uint64_t v)
{
    mc_value x;
    memset(&x, 0, sizeof(x));
    x.kind = k;
    x.as.u = v;
    return x;
}

mc_value mc_gen_float(mc_type_kind k, double v)
{
    mc_value x;
    memset(&x, 0, sizeof(x));
    x.kind = k;
    x.as.f = v;
    return x;
}

mc_value mc_gen_str(mc_type_kind k, const char *s)
{
    mc_value x;
    memset(&x, 0, sizeof(x));
    x.kind = k;
    x.as.bytes.data = (char *)(s ? s : "");
    size_t n = s ? strlen(s) : 0;
    x.as.bytes.len = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    return x;
}

mc_value mc_gen_vec(mc_type_kind k, float a, float b, float c, float d)
{
    mc_value x;
    memset(&x, 0, sizeof(x));
    x.kind = k;
    x.as.vec[0] = a;
    x.as.vec[1] = b;
    x.as.vec[2] = c;
    x.as.vec[3] = d;
    return x;
}

mc_value mc_gen_mailbox(mc_mailbox_ref mb)
{
    mc_value x;
    memset(&x, 0, sizeof(x));
    x.kind = MC_TYPE_MAILBOX;
    x.as.mailbox = mb;
    return x;
}

const mc_value *mc_gen_default(const mc_entity_defs *defs, uint16_t type_id,
                               uint16_t prop_index)
{
    const mc_entity_type_def *t = mc_defs_type(defs, type_id);
    if (!t || prop_index >= t->nprops)
        return NULL;
    return &t->props[prop_index].default_value;
}

int mc_gen_default_str(const mc_entity_defs *defs, uint16_t type_id, uint16_t prop_index,
                       char **out)
{
    const mc_value *v = mc_gen_default(defs, type_id, prop_index);
    *out = NULL;
    if (!v)
        return -1;
    *out = strdup(v->as.bytes.data ? v->as.bytes.data : "");
    return *out ? 0 : -1;
}

int mc_gen_default_value(const mc_entity_defs *defs, uint16_t type_id, uint16_t prop_index,
                         mc_value *out)
{
    const mc_value *v = mc_gen_default(defs, type_id, prop_index);
    memset(out, 0, sizeof(*out));
    if (!v)
        return -1;
    return mc_value_copy(out, v);
}
