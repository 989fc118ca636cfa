/* The operations: each API call is a request that runs as a sequence of steps, one Redis
 * command each (a script on one hash slot, or a plain command); the reply to a step decides
 * the next one or finishes the request. docs/PERSISTENCE.md gives the order and why. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/value_json.h"
#include "internal.h"

/* --- reply helpers ------------------------------------------------------------------------ */

static const redisReply *elem(const redisReply *r, size_t i)
{
    if (!r || r->type != REDIS_REPLY_ARRAY || i >= r->elements)
        return NULL;
    return r->element[i];
}

static bool is_str(const redisReply *r)
{
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS);
}

/* The status word of a script's answer ("" when not a script answer). */
static bool word_is(const redisReply *r, const char *w)
{
    const redisReply *e = elem(r, 0);
    return is_str(e) && e->len == strlen(w) && memcmp(e->str, w, e->len) == 0;
}

static bool elem_u64(const redisReply *r, size_t i, uint64_t *out)
{
    const redisReply *e = elem(r, i);
    return is_str(e) && mc_parse_u64(e->str, e->len, out) == 0;
}

static void unexpected(mc_persist_req *r, const redisReply *reply)
{
    mc_req_fail(r, MC_PERSIST_BAD_DATA, "unexpected reply from redis (type %d) at step %d",
                reply ? reply->type : -1, r->step);
}

static void finish_ok(mc_persist_req *r)
{
    mc_persist_result res = {.status = MC_PERSIST_OK, .dbid = r->dbid,
                             .token = r->token[0] ? r->token : NULL, .count = r->count};
    mc_req_finish(r, &res);
}

/* Continue with the next step (built by the caller): before requests queued later. */
static void next(mc_persist_req *r)
{
    mc_store_enqueue(r->s, r, true);
}

/* --- arguments ---------------------------------------------------------------------------- */

static void key_arg(mc_persist_req *r, char *key, bool route)
{
    if (!key) {
        r->capargs = -1;
        return;
    }
    mc_req_arg(r, key, strlen(key));
    if (route)
        mc_req_route(r, key);
    free(key);
}

static void str_arg(mc_persist_req *r, const char *s) { mc_req_arg(r, s, s ? strlen(s) : 0); }

static void ref_arg(mc_persist_req *r)
{
    mc_req_argf(r, "%s:%llu", r->type_name, (unsigned long long)r->dbid);
}

static void entity_keys(mc_persist_req *r)
{
    key_arg(r, mc_key_entity(r->s, r->type_name, r->dbid), true);
    key_arg(r, mc_key_owner(r->s, r->type_name, r->dbid), false);
}

static void new_token(mc_persist_req *r)
{
    uint8_t b[16];
    randombytes_buf(b, sizeof b);
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(r->token + 2 * i, 3, "%02x", b[i]);
}

static const mc_def_property *ident_prop(const mc_entity_type_def *t)
{
    for (size_t i = 0; i < t->nprops; i++)
        if (t->props[i].identifier && t->props[i].persistent)
            return &t->props[i];
    return NULL;
}

/* JSON text of an identifier value given as raw text (NULL on failure). */
static char *ident_json_of(const mc_def_property *p, const char *raw)
{
    mc_value v = {0};
    if (mc_value_set_bytes(&v, p->type->kind, raw, strlen(raw)) != 0)
        return NULL;
    char *j = mc_value_to_json(p->type, &v);
    mc_value_free(&v);
    return j;
}

/* Raw text of an identifier's stored JSON (NULL when it does not decode as a string). */
static char *ident_raw_of(const mc_persist_store *s, const mc_def_property *p, const char *json,
                          size_t len)
{
    mc_value v;
    char why[128];
    mc_value_limits lim = mc_defs_property_limits(s->cfg.defs, p);
    if (len == 0 || mc_value_from_json(p->type, json, len, &lim, &v, why, sizeof why) != 0)
        return NULL;
    char *raw = NULL;
    if ((v.kind == MC_TYPE_STRING || v.kind == MC_TYPE_UNICODE_STRING) && v.as.bytes.data)
        raw = strdup(v.as.bytes.data);
    mc_value_free(&v);
    return raw;
}

static int push_field(mc_persist_req *r, const char *name, char *value)
{
    if (!value)
        return -1;
    char **f = realloc(r->fields, (r->nfields + 2) * sizeof *f);
    if (f)
        r->fields = f;
    size_t *l = f ? realloc(r->field_lens, (r->nfields + 2) * sizeof *l) : NULL;
    char *n = strdup(name);
    if (!f || !l || !n) {
        free(value);
        free(n);
        return -1;
    }
    r->field_lens = l;
    r->fields[r->nfields] = n;
    r->field_lens[r->nfields++] = strlen(n);
    r->fields[r->nfields] = value;
    r->field_lens[r->nfields++] = strlen(value);
    return 0;
}

/* Render an entity's persistent properties and engine fields into r->fields; sets r->ident and
 * r->ident_json for the identifier. 0, or -1 with the reason in r->reason. */
static int render(mc_persist_req *r, const mc_persist_entity *e)
{
    const mc_entity_type_def *t = e->type;
    mc_value_limits base_lim = {0};
    (void)base_lim;
    for (size_t i = 0; i < t->nprops; i++) {
        const mc_def_property *p = &t->props[i];
        if (!p->persistent)
            continue;
        mc_value_limits lim = mc_defs_property_limits(r->s->cfg.defs, p);
        char why[200];
        if (!e->values || !mc_value_check(p->type, &e->values[i], &lim, why, sizeof why)) {
            snprintf(r->reason, sizeof r->reason, "%s.%s: %s", t->name, p->name,
                     e->values ? why : "no values");
            return -1;
        }
        char *json = mc_value_to_json(p->type, &e->values[i]);
        if (!json) {
            snprintf(r->reason, sizeof r->reason, "%s.%s: cannot render", t->name, p->name);
            return -1;
        }
        if (p->identifier) {
            r->ident_json = strdup(json);
            const mc_value *v = &e->values[i];
            r->ident = (v->as.bytes.data && v->as.bytes.len) ? strdup(v->as.bytes.data) : NULL;
            if (!r->ident_json) {
                free(json);
                snprintf(r->reason, sizeof r->reason, "out of memory");
                return -1;
            }
        }
        if (push_field(r, p->name, json) != 0) {
            snprintf(r->reason, sizeof r->reason, "out of memory");
            return -1;
        }
    }
    char buf[128];
    if (mc_persist_vec3_text(e->engine.position, buf, sizeof buf) != 0 ||
        push_field(r, MC_PERSIST_FIELD_POSITION, strdup(buf)) != 0 ||
        mc_persist_vec3_text(e->engine.direction, buf, sizeof buf) != 0 ||
        push_field(r, MC_PERSIST_FIELD_DIRECTION, strdup(buf)) != 0) {
        snprintf(r->reason, sizeof r->reason, "out of memory or position not finite");
        return -1;
    }
    snprintf(buf, sizeof buf, "%lld", (long long)e->engine.space_id);
    if (push_field(r, MC_PERSIST_FIELD_SPACE, strdup(buf)) != 0) {
        snprintf(r->reason, sizeof r->reason, "out of memory");
        return -1;
    }
    return 0;
}

static void fields_args(mc_persist_req *r)
{
    for (size_t i = 0; i < r->nfields; i++)
        mc_req_arg_ref(r, r->fields[i], r->field_lens[i]);
}

/* A new request for an entity type; NULL when out of memory (cb is then not called: the
 * caller reports it through a zero-size request below). */
static mc_persist_req *start(mc_persist_store *s, mc_op op, const char *type_name,
                             mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = mc_req_new(s, op, cb, ctx);
    if (!r)
        return NULL;
    if (type_name) {
        r->type_name = strdup(type_name);
        if (!r->type_name)
            r->capargs = -1;
    }
    return r;
}

/* Names that go into keys must not contain the characters that shape a key. */
static bool name_ok(const char *n)
{
    return n && n[0] && strlen(n) <= 255 && !strpbrk(n, "{}: \r\n");
}

/* --- steps: write ------------------------------------------------------------------------ */

enum { W_FIRST, W_CLAIM, W_CLAIMED, W_UNCLAIM_OLD, W_UNCLAIM_NEW };

static void write_cmd(mc_persist_req *r, bool claimed)
{
    mc_req_command(r, MC_SCRIPT_WRITE, 2);
    entity_keys(r);
    str_arg(r, r->token);
    str_arg(r, claimed ? "1" : "0");
    const mc_def_property *ip = r->type ? ident_prop(r->type) : NULL;
    str_arg(r, ip ? ip->name : "");
    str_arg(r, r->ident_json ? r->ident_json : "");
    fields_args(r);
}

static void claim_cmd(mc_persist_req *r, int script, const char *value)
{
    mc_req_command(r, script, 1);
    key_arg(r, mc_key_ident(r->s, r->type_name, value), true);
    mc_req_argf(r, "%llu", (unsigned long long)r->dbid);
}

static void write_reply(mc_persist_req *r, const redisReply *reply)
{
    const mc_def_property *ip = ident_prop(r->type);
    switch (r->step) {
    case W_FIRST:
    case W_CLAIMED:
        if (word_is(reply, "FENCED")) {
            const redisReply *why = elem(reply, 1);
            snprintf(r->reason, sizeof r->reason, "%s:%llu: %.*s", r->type_name,
                     (unsigned long long)r->dbid, is_str(why) ? (int)why->len : 0,
                     is_str(why) ? why->str : "");
            if (r->step == W_CLAIMED && r->claim_created && r->ident) {
                r->status = MC_PERSIST_FENCED;
                r->step = W_UNCLAIM_NEW;
                claim_cmd(r, MC_SCRIPT_UNCLAIM, r->ident);
                next(r);
                return;
            }
            mc_req_fail(r, MC_PERSIST_FENCED, "%s", r->reason);
            return;
        }
        if (word_is(reply, "CLAIM") && r->step == W_FIRST && ip) {
            const redisReply *old = elem(reply, 1);
            free(r->old_ident);
            r->old_ident = is_str(old) ? ident_raw_of(r->s, ip, old->str, old->len) : NULL;
            if (r->ident) {
                r->step = W_CLAIM;
                claim_cmd(r, MC_SCRIPT_CLAIM, r->ident);
            } else {
                r->step = W_CLAIMED;
                write_cmd(r, true);
            }
            next(r);
            return;
        }
        if (!word_is(reply, "OK")) {
            unexpected(r, reply);
            return;
        }
        if (r->step == W_CLAIMED && r->old_ident && r->old_ident[0] &&
            (!r->ident || strcmp(r->old_ident, r->ident) != 0)) {
            r->step = W_UNCLAIM_OLD;
            claim_cmd(r, MC_SCRIPT_UNCLAIM, r->old_ident);
            next(r);
            return;
        }
        finish_ok(r);
        return;
    case W_CLAIM: {
        uint64_t holder = 0;
        if (word_is(reply, "IDENT_TAKEN") && elem_u64(reply, 1, &holder)) {
            mc_persist_result res = {.status = MC_PERSIST_IDENT_TAKEN, .dbid = holder};
            char why[300];
            snprintf(why, sizeof why, "%s '%s' is held by dbid %llu", r->type_name, r->ident,
                     (unsigned long long)holder);
            res.reason = why;
            mc_req_finish(r, &res);
            return;
        }
        const redisReply *created = elem(reply, 1);
        if (!word_is(reply, "OK") || !is_str(created)) {
            unexpected(r, reply);
            return;
        }
        r->claim_created = created->len == 1 && created->str[0] == '1';
        r->step = W_CLAIMED;
        write_cmd(r, true);
        next(r);
        return;
    }
    case W_UNCLAIM_OLD:
        finish_ok(r);
        return;
    case W_UNCLAIM_NEW:
        mc_req_fail(r, r->status, "%s", r->reason);
        return;
    }
}

void mc_persist_write(mc_persist_store *s, const mc_persist_entity *e, const char *token,
                      mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, OP_WRITE, e && e->type ? e->type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!e || !e->type || !e->dbid || !token || strlen(token) >= sizeof r->token) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "write: type, dbid and token required");
        return;
    }
    r->type = e->type;
    r->dbid = e->dbid;
    snprintf(r->token, sizeof r->token, "%s", token);
    if (render(r, e) != 0) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "%s", r->reason);
        return;
    }
    r->step = W_FIRST;
    write_cmd(r, false);
    mc_store_submit(s, r);
}

/* --- steps: create ----------------------------------------------------------------------- */

enum { C_INCR, C_CLAIM, C_TYPES, C_TYPESET, C_OWNED, C_CREATE };

static void create_step(mc_persist_req *r)
{
    mc_persist_store *s = r->s;
    switch (r->step) {
    case C_CLAIM:
        claim_cmd(r, MC_SCRIPT_CLAIM, r->ident);
        break;
    case C_TYPES:
        mc_req_command(r, -1, 0);
        str_arg(r, "SADD");
        key_arg(r, mc_key_plain(s, "types"), true);
        str_arg(r, r->type_name);
        break;
    case C_TYPESET:
        mc_req_command(r, -1, 0);
        str_arg(r, "SADD");
        key_arg(r, mc_key_type_set(s, r->type_name), true);
        mc_req_argf(r, "%llu", (unsigned long long)r->dbid);
        break;
    case C_OWNED:
        mc_req_command(r, -1, 0);
        str_arg(r, "SADD");
        key_arg(r, mc_key_owned(s, s->owner, s->incarnation), true);
        ref_arg(r);
        break;
    case C_CREATE:
        mc_req_command(r, MC_SCRIPT_CREATE, 2);
        entity_keys(r);
        str_arg(r, r->token);
        str_arg(r, s->owner);
        mc_req_argf(r, "%llu", (unsigned long long)s->incarnation);
        fields_args(r);
        break;
    }
    next(r);
}

static void create_reply(mc_persist_req *r, const redisReply *reply)
{
    switch (r->step) {
    case C_INCR:
        if (reply->type != REDIS_REPLY_INTEGER || reply->integer <= 0) {
            unexpected(r, reply);
            return;
        }
        r->dbid = (uint64_t)reply->integer;
        r->step = r->ident ? C_CLAIM : C_TYPES;
        create_step(r);
        return;
    case C_CLAIM: {
        uint64_t holder = 0;
        if (word_is(reply, "IDENT_TAKEN") && elem_u64(reply, 1, &holder)) {
            char why[300];
            snprintf(why, sizeof why, "%s '%s' is held by dbid %llu", r->type_name, r->ident,
                     (unsigned long long)holder);
            mc_persist_result res = {.status = MC_PERSIST_IDENT_TAKEN, .dbid = holder,
                                     .reason = why};
            mc_req_finish(r, &res);
            return;
        }
        if (!word_is(reply, "OK")) {
            unexpected(r, reply);
            return;
        }
        r->step = C_TYPES;
        create_step(r);
        return;
    }
    case C_TYPES:
    case C_TYPESET:
    case C_OWNED:
        if (reply->type != REDIS_REPLY_INTEGER) {
            unexpected(r, reply);
            return;
        }
        r->step++;
        create_step(r);
        return;
    case C_CREATE:
        if (word_is(reply, "EXISTS")) {
            mc_req_fail(r, MC_PERSIST_EXISTS, "%s:%llu exists already", r->type_name,
                        (unsigned long long)r->dbid);
            return;
        }
        if (!word_is(reply, "OK")) {
            unexpected(r, reply);
            return;
        }
        finish_ok(r);
        return;
    }
}

void mc_persist_create(mc_persist_store *s, const mc_persist_entity *e, mc_persist_cb cb,
                       void *ctx)
{
    mc_persist_req *r = start(s, OP_CREATE, e && e->type ? e->type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!e || !e->type || !name_ok(e->type->name)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "create: no entity type");
        return;
    }
    r->type = e->type;
    new_token(r);
    if (render(r, e) != 0) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "%s", r->reason);
        return;
    }
    r->step = C_INCR;
    mc_req_command(r, -1, 0);
    str_arg(r, "INCR");
    key_arg(r, mc_key_plain(s, "dbid"), true);
    mc_store_submit(s, r);
}

/* --- steps: delete ----------------------------------------------------------------------- */

enum { D_SCRIPT, D_UNCLAIM, D_TYPESET, D_AUTOLOAD };

static void delete_reply(mc_persist_req *r, const redisReply *reply)
{
    mc_persist_store *s = r->s;
    switch (r->step) {
    case D_SCRIPT:
        if (word_is(reply, "NOT_FOUND")) {
            mc_req_fail(r, MC_PERSIST_NOT_FOUND, "%s:%llu: no such entity", r->type_name,
                        (unsigned long long)r->dbid);
            return;
        }
        if (word_is(reply, "OWNED")) {
            mc_req_fail(r, MC_PERSIST_OWNED, "%s:%llu is checked out (use force)", r->type_name,
                        (unsigned long long)r->dbid);
            return;
        }
        if (word_is(reply, "FENCED")) {
            mc_req_fail(r, MC_PERSIST_FENCED, "%s:%llu: token is not the owner's", r->type_name,
                        (unsigned long long)r->dbid);
            return;
        }
        if (!word_is(reply, "OK")) {
            unexpected(r, reply);
            return;
        }
        {
            const redisReply *id = elem(reply, 1);
            const mc_def_property *ip = r->type ? ident_prop(r->type) : NULL;
            free(r->old_ident);
            r->old_ident = (ip && is_str(id)) ? ident_raw_of(s, ip, id->str, id->len) : NULL;
        }
        if (r->old_ident && r->old_ident[0]) {
            r->step = D_UNCLAIM;
            claim_cmd(r, MC_SCRIPT_UNCLAIM, r->old_ident);
            next(r);
            return;
        }
        /* fall through */
    case D_UNCLAIM:
        r->step = D_TYPESET;
        mc_req_command(r, -1, 0);
        str_arg(r, "SREM");
        key_arg(r, mc_key_type_set(s, r->type_name), true);
        mc_req_argf(r, "%llu", (unsigned long long)r->dbid);
        next(r);
        return;
    case D_TYPESET:
        r->step = D_AUTOLOAD;
        mc_req_command(r, -1, 0);
        str_arg(r, "SREM");
        key_arg(r, mc_key_plain(s, "autoload"), true);
        ref_arg(r);
        next(r);
        return;
    case D_AUTOLOAD:
        finish_ok(r);
        return;
    }
}

void mc_persist_delete(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                       const char *token, bool force, mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, OP_DELETE, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!type || !dbid || (token && strlen(token) >= sizeof r->token)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "delete: type and dbid required");
        return;
    }
    r->type = type;
    r->dbid = dbid;
    const mc_def_property *ip = ident_prop(type);
    mc_req_command(r, MC_SCRIPT_DELETE, 2);
    entity_keys(r);
    str_arg(r, token ? token : "");
    str_arg(r, force ? "1" : "0");
    str_arg(r, ip ? ip->name : "");
    r->step = D_SCRIPT;
    mc_store_submit(s, r);
}

/* --- steps: import ----------------------------------------------------------------------- */

enum { I_CLAIM, I_TYPES, I_TYPESET, I_SCRIPT, I_RAISE };

static void import_step(mc_persist_req *r)
{
    mc_persist_store *s = r->s;
    switch (r->step) {
    case I_CLAIM:
        claim_cmd(r, MC_SCRIPT_CLAIM, r->ident);
        break;
    case I_TYPES:
        mc_req_command(r, -1, 0);
        str_arg(r, "SADD");
        key_arg(r, mc_key_plain(s, "types"), true);
        str_arg(r, r->type_name);
        break;
    case I_TYPESET:
        mc_req_command(r, -1, 0);
        str_arg(r, "SADD");
        key_arg(r, mc_key_type_set(s, r->type_name), true);
        mc_req_argf(r, "%llu", (unsigned long long)r->dbid);
        break;
    case I_SCRIPT:
        mc_req_command(r, MC_SCRIPT_IMPORT, 2);
        entity_keys(r);
        str_arg(r, r->flag ? "1" : "0");
        fields_args(r);
        break;
    case I_RAISE:
        mc_req_command(r, MC_SCRIPT_RAISE, 1);
        key_arg(r, mc_key_plain(s, "dbid"), true);
        mc_req_argf(r, "%llu", (unsigned long long)r->dbid);
        break;
    }
    next(r);
}

static void import_reply(mc_persist_req *r, const redisReply *reply)
{
    uint64_t holder = 0;
    switch (r->step) {
    case I_CLAIM:
        if (word_is(reply, "IDENT_TAKEN") && elem_u64(reply, 1, &holder)) {
            char why[300];
            snprintf(why, sizeof why, "%s '%s' is held by dbid %llu", r->type_name, r->ident,
                     (unsigned long long)holder);
            mc_persist_result res = {.status = MC_PERSIST_IDENT_TAKEN, .dbid = holder,
                                     .reason = why};
            mc_req_finish(r, &res);
            return;
        }
        break;
    case I_SCRIPT:
        if (word_is(reply, "EXISTS")) {
            mc_req_fail(r, MC_PERSIST_EXISTS, "%s:%llu exists", r->type_name,
                        (unsigned long long)r->dbid);
            return;
        }
        if (word_is(reply, "OWNED")) {
            mc_req_fail(r, MC_PERSIST_OWNED, "%s:%llu is checked out", r->type_name,
                        (unsigned long long)r->dbid);
            return;
        }
        break;
    case I_RAISE:
        finish_ok(r);
        return;
    default:
        break;
    }
    r->step++;
    import_step(r);
}

void mc_persist_import(mc_persist_store *s, const mc_persist_entity *e, bool replace,
                       mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, OP_IMPORT, e && e->type ? e->type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!e || !e->type || !e->dbid || !name_ok(e->type->name)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "import: type and dbid required");
        return;
    }
    r->type = e->type;
    r->dbid = e->dbid;
    r->flag = replace;
    if (render(r, e) != 0) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "%s", r->reason);
        return;
    }
    r->step = r->ident ? I_CLAIM : I_TYPES;
    switch (r->step) {
    case I_CLAIM:
        claim_cmd(r, MC_SCRIPT_CLAIM, r->ident);
        break;
    default:
        mc_req_command(r, -1, 0);
        str_arg(r, "SADD");
        key_arg(r, mc_key_plain(s, "types"), true);
        str_arg(r, r->type_name);
        break;
    }
    mc_store_submit(s, r);
}

/* --- steps: check-out, mark live, release ------------------------------------------------- */

enum { K_LOOKUP, K_OWNED, K_SCRIPT };

static void checkout_step(mc_persist_req *r)
{
    mc_persist_store *s = r->s;
    if (r->step == K_LOOKUP) {
        mc_req_command(r, -1, 0);
        str_arg(r, "GET");
        key_arg(r, mc_key_ident(s, r->type_name, r->ident), true);
    } else if (r->step == K_OWNED) {
        mc_req_command(r, -1, 0);
        str_arg(r, "SADD");
        key_arg(r, mc_key_owned(s, s->owner, s->incarnation), true);
        ref_arg(r);
    } else {
        const mc_def_property *ip = ident_prop(r->type);
        mc_req_command(r, MC_SCRIPT_CHECKOUT, 2);
        entity_keys(r);
        str_arg(r, s->owner);
        mc_req_argf(r, "%llu", (unsigned long long)s->incarnation);
        str_arg(r, r->token);
        str_arg(r, r->ident && ip ? ip->name : "");
        str_arg(r, r->ident && ip && r->ident_json ? r->ident_json : "");
    }
}

static void checkout_reply(mc_persist_req *r, const redisReply *reply)
{
    switch (r->step) {
    case K_LOOKUP:
        if (reply->type == REDIS_REPLY_NIL) {
            mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no %s '%s'", r->type_name, r->ident);
            return;
        }
        if (!is_str(reply) || mc_parse_u64(reply->str, reply->len, &r->dbid) != 0) {
            mc_req_fail(r, MC_PERSIST_BAD_DATA, "identifier index of %s '%s': not a dbid",
                        r->type_name, r->ident);
            return;
        }
        r->step = K_OWNED;
        break;
    case K_OWNED:
        r->step = K_SCRIPT;
        break;
    case K_SCRIPT:
        if (word_is(reply, "NOT_FOUND")) {
            if (r->ident)
                mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no %s '%s'", r->type_name, r->ident);
            else
                mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no %s:%llu", r->type_name,
                            (unsigned long long)r->dbid);
            return;
        }
        if (word_is(reply, "OWNED")) {
            const redisReply *name = elem(reply, 1), *state = elem(reply, 3),
                             *mb = elem(reply, 4);
            uint64_t inc = 0;
            if (!is_str(name) || !is_str(state) || !is_str(mb) || !elem_u64(reply, 2, &inc)) {
                unexpected(r, reply);
                return;
            }
            char owner[256];
            snprintf(owner, sizeof owner, "%.*s", (int)name->len, name->str);
            mc_persist_owner o = {
                .name = owner,
                .incarnation = inc,
                .state = (state->len == 4 && memcmp(state->str, "live", 4) == 0)
                             ? MC_PERSIST_LIVE : MC_PERSIST_LOADING,
                .mailbox = mb->len ? (const uint8_t *)mb->str : NULL,
                .mailbox_len = mb->len,
            };
            char why[300];
            snprintf(why, sizeof why, "%s:%llu is checked out by %s (%s)", r->type_name,
                     (unsigned long long)r->dbid, owner,
                     o.state == MC_PERSIST_LIVE ? "live" : "loading");
            mc_persist_result res = {.status = MC_PERSIST_OWNED, .reason = why,
                                     .dbid = r->dbid, .owner = &o};
            mc_req_finish(r, &res);
            return;
        }
        if (!word_is(reply, "OK")) {
            unexpected(r, reply);
            return;
        }
        finish_ok(r);
        return;
    }
    checkout_step(r);
    next(r);
}

static void checkout_common(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                            const char *ident, mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, OP_CHECKOUT, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    const mc_def_property *ip = type ? ident_prop(type) : NULL;
    if (!type || !name_ok(type->name) || (!ident && !dbid) || (ident && !ip) ||
        (ident && !ident[0])) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST,
                        ident ? "checkout: type with an identifier and a value required"
                              : "checkout: type and dbid required");
        return;
    }
    r->type = type;
    r->dbid = dbid;
    new_token(r);
    if (ident) {
        r->ident = strdup(ident);
        r->ident_json = ident_json_of(ip, ident);
        if (!r->ident || !r->ident_json) {
            mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "checkout: bad identifier value");
            return;
        }
    }
    r->step = ident ? K_LOOKUP : K_OWNED;
    checkout_step(r);
    mc_store_submit(s, r);
}

void mc_persist_checkout(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                         mc_persist_cb cb, void *ctx)
{
    checkout_common(s, type, dbid, NULL, cb, ctx);
}

void mc_persist_checkout_ident(mc_persist_store *s, const mc_entity_type_def *type,
                               const char *ident, mc_persist_cb cb, void *ctx)
{
    checkout_common(s, type, 0, ident ? ident : "", cb, ctx);
}

static void fenced_or_ok(mc_persist_req *r, const redisReply *reply)
{
    if (word_is(reply, "FENCED")) {
        const redisReply *why = elem(reply, 1);
        mc_req_fail(r, MC_PERSIST_FENCED, "%s:%llu: %.*s", r->type_name,
                    (unsigned long long)r->dbid, is_str(why) ? (int)why->len : 0,
                    is_str(why) ? why->str : "");
        return;
    }
    if (!word_is(reply, "OK")) {
        unexpected(r, reply);
        return;
    }
    finish_ok(r);
}

void mc_persist_mark_live(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                          const char *token, const uint8_t *mailbox, size_t len,
                          mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, OP_MARK_LIVE, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!type || !dbid || !token || (len && !mailbox)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "mark_live: type, dbid and token required");
        return;
    }
    r->type = type;
    r->dbid = dbid;
    mc_req_command(r, MC_SCRIPT_MARK_LIVE, 1);
    key_arg(r, mc_key_owner(s, type->name, dbid), true);
    str_arg(r, token);
    mc_req_arg(r, mailbox ? (const char *)mailbox : "", len);
    mc_store_submit(s, r);
}

enum { R_SCRIPT, R_SREM };

static void release_reply(mc_persist_req *r, const redisReply *reply)
{
    if (r->step == R_SREM) {
        finish_ok(r);
        return;
    }
    if (!word_is(reply, "OK")) {
        fenced_or_ok(r, reply);
        return;
    }
    r->step = R_SREM;
    mc_req_command(r, -1, 0);
    str_arg(r, "SREM");
    key_arg(r, mc_key_owned(r->s, r->s->owner, r->s->incarnation), true);
    ref_arg(r);
    next(r);
}

void mc_persist_release(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                        const char *token, mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, OP_RELEASE, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!type || !dbid || !token) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "release: type, dbid and token required");
        return;
    }
    r->type = type;
    r->dbid = dbid;
    mc_req_command(r, MC_SCRIPT_RELEASE, 1);
    key_arg(r, mc_key_owner(s, type->name, dbid), true);
    str_arg(r, token);
    r->step = R_SCRIPT;
    mc_store_submit(s, r);
}

/* --- release of a dead owner's check-outs ------------------------------------------------ */

enum { RO_SCAN, RO_RELEASE, RO_SREM };

static void ro_scan(mc_persist_req *r)
{
    r->step = RO_SCAN;
    mc_req_command(r, -1, 0);
    str_arg(r, "SSCAN");
    key_arg(r, mc_key_owned(r->s, r->owner, 0), true);
    mc_req_argf(r, "%llu", (unsigned long long)r->cursor);
    str_arg(r, "COUNT");
    str_arg(r, "100");
}

/* Split "Type:dbid"; false when the member is malformed. */
static bool split_ref(const char *m, char *type, size_t typelen, uint64_t *dbid)
{
    const char *colon = strrchr(m, ':');
    if (!colon || colon == m || (size_t)(colon - m) >= typelen)
        return false;
    memcpy(type, m, (size_t)(colon - m));
    type[colon - m] = '\0';
    return mc_parse_u64(colon + 1, strlen(colon + 1), dbid) == 0 && *dbid > 0 && name_ok(type);
}

/* The next member to release, or a new scan page, or done. */
static void ro_next_member(mc_persist_req *r)
{
    while (r->idx < r->nnames) {
        char type[256];
        uint64_t dbid;
        if (!split_ref(r->names[r->idx], type, sizeof type, &dbid)) {
            r->idx++; /* not ours to understand: leave it */
            continue;
        }
        r->step = RO_RELEASE;
        mc_req_command(r, MC_SCRIPT_RELEASE_OWNER, 1);
        key_arg(r, mc_key_owner(r->s, type, dbid), true);
        str_arg(r, r->owner);
        mc_req_argf(r, "%llu", (unsigned long long)r->incarnation);
        next(r);
        return;
    }
    if (r->cursor != 0) {
        ro_scan(r);
        next(r);
        return;
    }
    finish_ok(r);
}

static void release_owner_reply(mc_persist_req *r, const redisReply *reply)
{
    switch (r->step) {
    case RO_SCAN: {
        const redisReply *members = elem(reply, 1);
        if (!elem_u64(reply, 0, &r->cursor) || !members || members->type != REDIS_REPLY_ARRAY) {
            unexpected(r, reply);
            return;
        }
        for (size_t i = 0; i < r->nnames; i++)
            free(r->names[i]);
        free(r->names);
        r->names = calloc(members->elements ? members->elements : 1, sizeof *r->names);
        r->nnames = 0;
        r->idx = 0;
        if (!r->names) {
            mc_req_fail(r, MC_PERSIST_BAD_REQUEST, "out of memory");
            return;
        }
        for (size_t i = 0; i < members->elements; i++) {
            const redisReply *m = members->element[i];
            if (is_str(m) && m->len < 512 && !memchr(m->str, '\0', m->len)) {
                r->names[r->nnames] = strndup(m->str, m->len);
                if (r->names[r->nnames])
                    r->nnames++;
            }
        }
        ro_next_member(r);
        return;
    }
    case RO_RELEASE: {
        const redisReply *what = elem(reply, 1);
        if (!word_is(reply, "OK") || !is_str(what)) {
            unexpected(r, reply);
            return;
        }
        if (what->len == 1 && what->str[0] == '1')
            r->count++;
        if (what->len == 4 && memcmp(what->str, "keep", 4) == 0) {
            r->idx++; /* another incarnation of the same name holds it */
            ro_next_member(r);
            return;
        }
        r->step = RO_SREM;
        mc_req_command(r, -1, 0);
        str_arg(r, "SREM");
        key_arg(r, mc_key_owned(r->s, r->owner, 0), true);
        str_arg(r, r->names[r->idx]);
        next(r);
        return;
    }
    case RO_SREM:
        r->idx++;
        ro_next_member(r);
        return;
    }
}

void mc_persist_release_owner(mc_persist_store *s, const char *owner, uint64_t incarnation,
                              mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, OP_RELEASE_OWNER, NULL, cb, ctx);
    if (!r)
        return;
    if (!name_ok(owner)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "release_owner: bad owner name");
        return;
    }
    r->owner = strdup(owner);
    r->incarnation = incarnation;
    if (!r->owner)
        r->capargs = -1;
    r->cursor = 0;
    ro_scan(r);
    mc_store_submit(s, r);
}

/* --- load, lookup, raw ------------------------------------------------------------------ */

static mc_persist_field *fields_of(const redisReply *reply, size_t *n)
{
    *n = 0;
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements % 2)
        return NULL;
    mc_persist_field *f = calloc(reply->elements / 2 + 1, sizeof *f);
    if (!f)
        return NULL;
    for (size_t i = 0; i + 1 < reply->elements; i += 2) {
        const redisReply *k = reply->element[i], *v = reply->element[i + 1];
        if (!is_str(k) || !is_str(v)) {
            free(f);
            return NULL;
        }
        f[*n].name = k->str;
        f[*n].name_len = k->len;
        f[*n].value = v->str;
        f[*n].value_len = v->len;
        (*n)++;
    }
    return f;
}

static void load_reply(mc_persist_req *r, const redisReply *reply)
{
    mc_persist_store *s = r->s;
    if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 0) {
        mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no %s:%llu", r->type_name,
                    (unsigned long long)r->dbid);
        return;
    }
    if (s->schema_refused[r->type->id]) {
        mc_req_fail(r, MC_PERSIST_SCHEMA, "%s: stored schema incompatible: %s", r->type_name,
                    s->schema_state[r->type->id] ? s->schema_state[r->type->id] : "");
        return;
    }
    size_t n;
    mc_persist_field *f = fields_of(reply, &n);
    if (!f) {
        mc_req_fail(r, MC_PERSIST_BAD_DATA, "%s:%llu: not a hash of strings", r->type_name,
                    (unsigned long long)r->dbid);
        return;
    }
    mc_persist_record rec;
    char why[300];
    int rc = mc_persist_record_decode(s->cfg.defs, r->type, r->dbid, f, n, &rec, why,
                                      sizeof why);
    free(f);
    if (rc != 0) {
        mc_req_fail(r, MC_PERSIST_BAD_DATA, "%s", why);
        return;
    }
    mc_persist_result res = {.status = MC_PERSIST_OK, .dbid = r->dbid, .record = &rec};
    mc_req_finish(r, &res);
    mc_persist_record_free(&rec);
}

void mc_persist_load(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                     mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, OP_LOAD, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!type || !dbid || type->id >= mc_defs_type_count(s->cfg.defs) ||
        mc_defs_type(s->cfg.defs, type->id) != type) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "load: a type of the store's defs and a dbid");
        return;
    }
    r->type = type;
    r->dbid = dbid;
    mc_req_command(r, -1, 0);
    str_arg(r, "HGETALL");
    key_arg(r, mc_key_entity(s, type->name, dbid), true);
    mc_store_submit(s, r);
}

enum { L_GET, L_VERIFY };

static void lookup_reply(mc_persist_req *r, const redisReply *reply)
{
    if (r->step == L_GET) {
        if (reply->type == REDIS_REPLY_NIL) {
            mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no %s '%s'", r->type_name, r->ident);
            return;
        }
        if (!is_str(reply) || mc_parse_u64(reply->str, reply->len, &r->dbid) != 0) {
            mc_req_fail(r, MC_PERSIST_BAD_DATA, "identifier index of %s '%s': not a dbid",
                        r->type_name, r->ident);
            return;
        }
        r->step = L_VERIFY;
        mc_req_command(r, -1, 0);
        str_arg(r, "HGET");
        key_arg(r, mc_key_entity(r->s, r->type_name, r->dbid), true);
        str_arg(r, ident_prop(r->type)->name);
        next(r);
        return;
    }
    /* The entity must still hold the value (a stale index entry is not a match). */
    if (!is_str(reply) || strlen(r->ident_json) != reply->len ||
        memcmp(reply->str, r->ident_json, reply->len) != 0) {
        mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no %s '%s'", r->type_name, r->ident);
        return;
    }
    finish_ok(r);
}

void mc_persist_lookup(mc_persist_store *s, const mc_entity_type_def *type, const char *ident,
                       mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, OP_LOOKUP, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    const mc_def_property *ip = type ? ident_prop(type) : NULL;
    if (!ip || !ident || !ident[0]) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "lookup: a type with an identifier and a value");
        return;
    }
    r->type = type;
    r->ident = strdup(ident);
    r->ident_json = ident_json_of(ip, ident);
    if (!r->ident || !r->ident_json) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "lookup: bad identifier value");
        return;
    }
    r->step = L_GET;
    mc_req_command(r, -1, 0);
    str_arg(r, "GET");
    key_arg(r, mc_key_ident(s, type->name, ident), true);
    mc_store_submit(s, r);
}

/* HGETALL answers as name, value pairs in result.refs. */
static void pairs_reply(mc_persist_req *r, const redisReply *reply)
{
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements % 2) {
        unexpected(r, reply);
        return;
    }
    if (r->op == OP_LOAD_RAW && reply->elements == 0) {
        mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no %s:%llu", r->type_name,
                    (unsigned long long)r->dbid);
        return;
    }
    const char **refs = calloc(reply->elements + 1, sizeof *refs);
    if (!refs) {
        mc_req_fail(r, MC_PERSIST_BAD_REQUEST, "out of memory");
        return;
    }
    for (size_t i = 0; i < reply->elements; i++) {
        const redisReply *e = reply->element[i];
        if (!is_str(e)) {
            free(refs);
            unexpected(r, reply);
            return;
        }
        refs[i] = e->str; /* hiredis NUL-terminates every string */
    }
    mc_persist_result res = {.status = MC_PERSIST_OK, .dbid = r->dbid,
                             .refs = (const char *const *)refs, .nrefs = reply->elements};
    mc_req_finish(r, &res);
    free(refs);
}

void mc_persist_load_raw(mc_persist_store *s, const char *type_name, uint64_t dbid,
                         mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, OP_LOAD_RAW, type_name, cb, ctx);
    if (!r)
        return;
    if (!name_ok(type_name) || !dbid) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "load_raw: type name and dbid required");
        return;
    }
    r->dbid = dbid;
    mc_req_command(r, -1, 0);
    str_arg(r, "HGETALL");
    key_arg(r, mc_key_entity(s, type_name, dbid), true);
    mc_store_submit(s, r);
}

void mc_persist_read_schema(mc_persist_store *s, const char *type_name, mc_persist_cb cb,
                            void *ctx)
{
    mc_persist_req *r = start(s, OP_READ_SCHEMA, type_name, cb, ctx);
    if (!r)
        return;
    if (!name_ok(type_name)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "read_schema: bad type name");
        return;
    }
    mc_req_command(r, -1, 0);
    str_arg(r, "HGETALL");
    key_arg(r, mc_key_schema(s, type_name), true);
    mc_store_submit(s, r);
}

/* --- enumeration ------------------------------------------------------------------------- */

static void list_types_reply(mc_persist_req *r, const redisReply *reply)
{
    if (r->step == 0) {
        if (reply->type != REDIS_REPLY_ARRAY) {
            unexpected(r, reply);
            return;
        }
        r->names = calloc(reply->elements + 1, sizeof *r->names);
        r->counts = calloc(reply->elements + 1, sizeof *r->counts);
        if (!r->names || !r->counts) {
            mc_req_fail(r, MC_PERSIST_BAD_REQUEST, "out of memory");
            return;
        }
        for (size_t i = 0; i < reply->elements; i++) {
            const redisReply *e = reply->element[i];
            if (is_str(e) && e->len < 256 && !memchr(e->str, '\0', e->len)) {
                r->names[r->nnames] = strndup(e->str, e->len);
                if (r->names[r->nnames] && name_ok(r->names[r->nnames]))
                    r->nnames++;
                else
                    free(r->names[r->nnames]);
            }
        }
        r->idx = 0;
    } else {
        if (reply->type != REDIS_REPLY_INTEGER || reply->integer < 0) {
            unexpected(r, reply);
            return;
        }
        r->counts[r->idx++] = (uint64_t)reply->integer;
    }
    if (r->idx < r->nnames) {
        r->step = 1;
        mc_req_command(r, -1, 0);
        str_arg(r, "SCARD");
        key_arg(r, mc_key_type_set(r->s, r->names[r->idx]), true);
        next(r);
        return;
    }
    mc_persist_type_count *tc = calloc(r->nnames + 1, sizeof *tc);
    if (!tc) {
        mc_req_fail(r, MC_PERSIST_BAD_REQUEST, "out of memory");
        return;
    }
    for (size_t i = 0; i < r->nnames; i++) {
        tc[i].name = r->names[i];
        tc[i].count = r->counts[i];
    }
    mc_persist_result res = {.status = MC_PERSIST_OK, .types = tc, .ntypes = r->nnames};
    mc_req_finish(r, &res);
    free(tc);
}

void mc_persist_list_types(mc_persist_store *s, mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, OP_LIST_TYPES, NULL, cb, ctx);
    if (!r)
        return;
    mc_req_command(r, -1, 0);
    str_arg(r, "SMEMBERS");
    key_arg(r, mc_key_plain(s, "types"), true);
    mc_store_submit(s, r);
}

static void scan_reply(mc_persist_req *r, const redisReply *reply)
{
    const redisReply *members = elem(reply, 1);
    uint64_t cursor;
    if (!elem_u64(reply, 0, &cursor) || !members || members->type != REDIS_REPLY_ARRAY) {
        unexpected(r, reply);
        return;
    }
    size_t n = members->elements;
    uint64_t *dbids = calloc(n + 1, sizeof *dbids);
    const char **refs = calloc(n + 1, sizeof *refs);
    if (!dbids || !refs) {
        free(dbids);
        free(refs);
        mc_req_fail(r, MC_PERSIST_BAD_REQUEST, "out of memory");
        return;
    }
    size_t nd = 0, nr = 0;
    for (size_t i = 0; i < n; i++) {
        const redisReply *m = members->element[i];
        if (!is_str(m))
            continue;
        if (r->op == OP_SCAN_TYPE) {
            if (mc_parse_u64(m->str, m->len, &dbids[nd]) == 0)
                nd++;
        } else {
            refs[nr++] = m->str;
        }
    }
    mc_persist_result res = {.status = MC_PERSIST_OK, .cursor = cursor, .dbids = dbids,
                             .ndbids = nd, .refs = (const char *const *)refs, .nrefs = nr};
    mc_req_finish(r, &res);
    free(dbids);
    free(refs);
}

static void scan_start(mc_persist_store *s, mc_op op, const char *type_name, uint64_t cursor,
                       mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, op, type_name, cb, ctx);
    if (!r)
        return;
    if (op == OP_SCAN_TYPE && !name_ok(type_name)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "scan_type: bad type name");
        return;
    }
    mc_req_command(r, -1, 0);
    str_arg(r, "SSCAN");
    key_arg(r, op == OP_SCAN_TYPE ? mc_key_type_set(s, type_name) : mc_key_plain(s, "autoload"),
            true);
    mc_req_argf(r, "%llu", (unsigned long long)cursor);
    str_arg(r, "COUNT");
    str_arg(r, "1000");
    mc_store_submit(s, r);
}

void mc_persist_scan_type(mc_persist_store *s, const char *type_name, uint64_t cursor,
                          mc_persist_cb cb, void *ctx)
{
    scan_start(s, OP_SCAN_TYPE, type_name, cursor, cb, ctx);
}

void mc_persist_scan_autoload(mc_persist_store *s, uint64_t cursor, mc_persist_cb cb,
                              void *ctx)
{
    scan_start(s, OP_SCAN_AUTOLOAD, NULL, cursor, cb, ctx);
}

void mc_persist_set_autoload(mc_persist_store *s, const mc_entity_type_def *type,
                             uint64_t dbid, bool on, mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = start(s, OP_AUTOLOAD, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!type || !dbid) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "set_autoload: type and dbid required");
        return;
    }
    r->dbid = dbid;
    mc_req_command(r, -1, 0);
    str_arg(r, on ? "SADD" : "SREM");
    key_arg(r, mc_key_plain(s, "autoload"), true);
    ref_arg(r);
    mc_store_submit(s, r);
}

/* --- schema check at the first connection ------------------------------------------------ */

static void schema_done_one(mc_persist_req *r)
{
    mc_persist_result res = {.status = MC_PERSIST_OK};
    mc_req_finish(r, &res); /* counts the type as checked */
}

static void schema_reply(mc_persist_req *r, const redisReply *reply)
{
    mc_persist_store *s = r->s;
    if (r->step == 1) {
        schema_done_one(r);
        return;
    }
    size_t n;
    mc_persist_field *f = fields_of(reply, &n);
    mc_persist_schema_diff d;
    if (!f || mc_persist_schema_compare(r->type, f, n, &d) != 0) {
        free(f);
        mc_store_error(s, "schema of %s: unreadable record", r->type_name);
        schema_done_one(r);
        return;
    }
    free(f);
    char *text = mc_persist_schema_diff_text(&d);
    size_t id = r->type->id;
    free(s->schema_state[id]);
    bool refused = d.nchanged > 0;
    if (text && refused) {
        size_t len = strlen(text) + 16;
        s->schema_state[id] = malloc(len);
        if (s->schema_state[id])
            snprintf(s->schema_state[id], len, "refused: %s", text);
        free(text);
    } else {
        s->schema_state[id] = text;
    }
    s->schema_refused[id] = refused;
    if (refused)
        MC_ERROR("persist: schema of %s changed incompatibly, its loads are refused: %s",
                 r->type_name, s->schema_state[id] ? s->schema_state[id] : "");
    else if (n == 0)
        MC_INFO("persist: schema of %s recorded (%zu persistent properties)", r->type_name,
                d.nadded);
    else if (d.nadded + d.nremoved > 0)
        MC_WARNING("persist: schema of %s: %s (added take their default, removed are ignored)",
                   r->type_name, s->schema_state[id] ? s->schema_state[id] : "");
    bool rewrite = !refused && (d.nadded + d.nremoved > 0);
    mc_persist_schema_diff_free(&d);
    if (!rewrite) {
        schema_done_one(r);
        return;
    }
    r->step = 1;
    mc_req_command(r, MC_SCRIPT_SCHEMA_PUT, 1);
    key_arg(r, mc_key_schema(s, r->type_name), true);
    fields_args(r);
    next(r);
}

void mc_ops_schema_start(mc_persist_store *s)
{
    size_t n = s->cfg.schema_readonly ? 0 : mc_defs_type_count(s->cfg.defs);
    size_t queued = 0;
    for (size_t i = 0; i < n; i++) {
        const mc_entity_type_def *t = mc_defs_type(s->cfg.defs, (uint16_t)i);
        bool any = false;
        for (size_t p = 0; p < t->nprops; p++)
            any = any || t->props[p].persistent;
        if (!any || !name_ok(t->name))
            continue;
        mc_persist_req *r = start(s, OP_SCHEMA, t->name, NULL, NULL);
        if (!r)
            continue;
        r->type = t;
        r->deadline = UINT64_MAX;
        for (size_t p = 0; p < t->nprops; p++)
            if (t->props[p].persistent)
                push_field(r, t->props[p].name, mc_persist_type_text(&t->props[p]));
        mc_req_command(r, -1, 0);
        str_arg(r, "HGETALL");
        key_arg(r, mc_key_schema(s, t->name), true);
        s->schema_state[i] = strdup("unchecked");
        mc_list_push_back(&s->pending, r);
        queued++;
    }
    s->schema_left = queued;
    s->internal_reqs += queued;
    s->schema_done = queued == 0;
}

/* --- dispatch ---------------------------------------------------------------------------- */

void mc_ops_reply(mc_persist_req *r, const redisReply *reply)
{
    switch (r->op) {
    case OP_SCHEMA: schema_reply(r, reply); return;
    case OP_CREATE: create_reply(r, reply); return;
    case OP_WRITE: write_reply(r, reply); return;
    case OP_DELETE: delete_reply(r, reply); return;
    case OP_IMPORT: import_reply(r, reply); return;
    case OP_CHECKOUT: checkout_reply(r, reply); return;
    case OP_MARK_LIVE: fenced_or_ok(r, reply); return;
    case OP_RELEASE: release_reply(r, reply); return;
    case OP_RELEASE_OWNER: release_owner_reply(r, reply); return;
    case OP_LOAD: load_reply(r, reply); return;
    case OP_LOOKUP: lookup_reply(r, reply); return;
    case OP_LIST_TYPES: list_types_reply(r, reply); return;
    case OP_SCAN_TYPE:
    case OP_SCAN_AUTOLOAD: scan_reply(r, reply); return;
    case OP_AUTOLOAD: finish_ok(r); return;
    case OP_LOAD_RAW:
    case OP_READ_SCHEMA: pairs_reply(r, reply); return;
    case OP_SLOTS:
        mc_cluster_slots_reply(r->s, reply);
        mc_req_free(r);
        return;
    }
}
