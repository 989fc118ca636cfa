/* Helpers of the operations (ops.h): reading script answers, building arguments, rendering
 * an entity into hash fields. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/value_json.h"
#include "ops.h"

/* --- reply helpers ------------------------------------------------------------------------ */

const redisReply *op_elem(const redisReply *r, size_t i)
{
    if (!r || r->type != REDIS_REPLY_ARRAY || i >= r->elements)
        return NULL;
    return r->element[i];
}

bool op_is_str(const redisReply *r)
{
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS);
}

/* The status word of a script's answer ("" when not a script answer). */
bool op_word_is(const redisReply *r, const char *w)
{
    const redisReply *e = op_elem(r, 0);
    return op_is_str(e) && e->len == strlen(w) && memcmp(e->str, w, e->len) == 0;
}

bool op_elem_u64(const redisReply *r, size_t i, uint64_t *out)
{
    const redisReply *e = op_elem(r, i);
    return op_is_str(e) && mc_parse_u64(e->str, e->len, out) == 0;
}

void op_unexpected(mc_persist_req *r, const redisReply *reply)
{
    mc_req_fail(r, MC_PERSIST_BAD_DATA, "unexpected reply from redis (type %d) at step %d",
                reply ? reply->type : -1, r->step);
}

void op_finish_ok(mc_persist_req *r)
{
    mc_persist_result res = {.status = MC_PERSIST_OK, .dbid = r->dbid,
                             .token = r->token[0] ? r->token : NULL, .count = r->count};
    mc_req_finish(r, &res);
}

/* Continue with the next step (built by the caller): before requests queued later. */
void op_next(mc_persist_req *r)
{
    mc_store_enqueue(r->s, r, true);
}

/* --- arguments ---------------------------------------------------------------------------- */

void op_key_arg(mc_persist_req *r, char *key, bool route)
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

void op_str_arg(mc_persist_req *r, const char *s) { mc_req_arg(r, s, s ? strlen(s) : 0); }

void op_ref_arg(mc_persist_req *r)
{
    mc_req_argf(r, "%s:%llu", r->type_name, (unsigned long long)r->dbid);
}

void op_entity_keys(mc_persist_req *r)
{
    op_key_arg(r, mc_key_entity(r->s, r->type_name, r->dbid), true);
    op_key_arg(r, mc_key_owner(r->s, r->type_name, r->dbid), false);
}

void op_new_token(mc_persist_req *r)
{
    uint8_t b[16];
    randombytes_buf(b, sizeof b);
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(r->token + 2 * i, 3, "%02x", b[i]);
}

const mc_def_property *op_ident_prop(const mc_entity_type_def *t)
{
    for (size_t i = 0; i < t->nprops; i++)
        if (t->props[i].identifier && t->props[i].persistent)
            return &t->props[i];
    return NULL;
}

/* JSON text of an identifier value given as raw text (NULL on failure). */
char *op_ident_json_of(const mc_def_property *p, const char *raw)
{
    mc_value v = {0};
    if (mc_value_set_bytes(&v, p->type->kind, raw, strlen(raw)) != 0)
        return NULL;
    char *j = mc_value_to_json(p->type, &v);
    mc_value_free(&v);
    return j;
}

/* Raw text of an identifier's stored JSON (NULL when it does not decode as a string). */
char *op_ident_raw_of(const mc_persist_store *s, const mc_def_property *p, const char *json,
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

int op_push_field(mc_persist_req *r, const char *name, char *value)
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
int op_render(mc_persist_req *r, const mc_persist_entity *e)
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
        if (op_push_field(r, p->name, json) != 0) {
            snprintf(r->reason, sizeof r->reason, "out of memory");
            return -1;
        }
    }
    char buf[128];
    if (mc_persist_vec3_text(e->engine.position, buf, sizeof buf) != 0 ||
        op_push_field(r, MC_PERSIST_FIELD_POSITION, strdup(buf)) != 0 ||
        mc_persist_vec3_text(e->engine.direction, buf, sizeof buf) != 0 ||
        op_push_field(r, MC_PERSIST_FIELD_DIRECTION, strdup(buf)) != 0) {
        snprintf(r->reason, sizeof r->reason, "out of memory or position not finite");
        return -1;
    }
    snprintf(buf, sizeof buf, "%lld", (long long)e->engine.space_id);
    if (op_push_field(r, MC_PERSIST_FIELD_SPACE, strdup(buf)) != 0) {
        snprintf(r->reason, sizeof r->reason, "out of memory");
        return -1;
    }
    return 0;
}

void op_fields_args(mc_persist_req *r)
{
    for (size_t i = 0; i < r->nfields; i++)
        mc_req_arg_ref(r, r->fields[i], r->field_lens[i]);
}

/* A new request for an entity type; NULL when out of memory (cb is then not called: the
 * caller reports it through a zero-size request below). */
mc_persist_req *op_start(mc_persist_store *s, mc_op op, const char *type_name,
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
bool op_name_ok(const char *n)
{
    return n && n[0] && strlen(n) <= 255 && !strpbrk(n, "{}: \r\n");
}

void op_claim_cmd(mc_persist_req *r, int script, const char *value)
{
    mc_req_command(r, script, 1);
    op_key_arg(r, mc_key_ident(r->s, r->type_name, value), true);
    mc_req_argf(r, "%llu", (unsigned long long)r->dbid);
}

mc_persist_field *op_fields_of(const redisReply *reply, size_t *n)
{
    *n = 0;
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements % 2)
        return NULL;
    mc_persist_field *f = calloc(reply->elements / 2 + 1, sizeof *f);
    if (!f)
        return NULL;
    for (size_t i = 0; i + 1 < reply->elements; i += 2) {
        const redisReply *k = reply->element[i], *v = reply->element[i + 1];
        if (!op_is_str(k) || !op_is_str(v)) {
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

void op_fenced_or_ok(mc_persist_req *r, const redisReply *reply)
{
    if (op_word_is(reply, "FENCED")) {
        const redisReply *why = op_elem(reply, 1);
        mc_req_fail(r, MC_PERSIST_FENCED, "%s:%llu: %.*s", r->type_name,
                    (unsigned long long)r->dbid, op_is_str(why) ? (int)why->len : 0,
                    op_is_str(why) ? why->str : "");
        return;
    }
    if (!op_word_is(reply, "OK")) {
        op_unexpected(r, reply);
        return;
    }
    op_finish_ok(r);
}
