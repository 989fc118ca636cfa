/* Reads: load, lookup by identifier, raw hashes and schema records, enumeration and the
 * autoload set (ops.h). */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/value_json.h"
#include "ops.h"

/* --- load, lookup, raw ------------------------------------------------------------------ */


void op_load_reply(mc_persist_req *r, const redisReply *reply)
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
    mc_persist_field *f = op_fields_of(reply, &n);
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
    mc_persist_req *r = op_start(s, OP_LOAD, type ? type->name : NULL, cb, ctx);
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
    op_str_arg(r, "HGETALL");
    op_key_arg(r, mc_key_entity(s, type->name, dbid), true);
    mc_store_submit(s, r);
}

enum { L_GET, L_VERIFY };

void op_lookup_reply(mc_persist_req *r, const redisReply *reply)
{
    if (r->step == L_GET) {
        if (reply->type == REDIS_REPLY_NIL) {
            mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no %s '%s'", r->type_name, r->ident);
            return;
        }
        if (!op_is_str(reply) || mc_parse_u64(reply->str, reply->len, &r->dbid) != 0) {
            mc_req_fail(r, MC_PERSIST_BAD_DATA, "identifier index of %s '%s': not a dbid",
                        r->type_name, r->ident);
            return;
        }
        r->step = L_VERIFY;
        mc_req_command(r, -1, 0);
        op_str_arg(r, "HGET");
        op_key_arg(r, mc_key_entity(r->s, r->type_name, r->dbid), true);
        op_str_arg(r, op_ident_prop(r->type)->name);
        op_next(r);
        return;
    }
    /* The entity must still hold the value (a stale index entry is not a match). */
    if (!op_is_str(reply) || strlen(r->ident_json) != reply->len ||
        memcmp(reply->str, r->ident_json, reply->len) != 0) {
        mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no %s '%s'", r->type_name, r->ident);
        return;
    }
    op_finish_ok(r);
}

void mc_persist_lookup(mc_persist_store *s, const mc_entity_type_def *type, const char *ident,
                       mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = op_start(s, OP_LOOKUP, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    const mc_def_property *ip = type ? op_ident_prop(type) : NULL;
    if (!ip || !ident || !ident[0]) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "lookup: a type with an identifier and a value");
        return;
    }
    r->type = type;
    r->ident = strdup(ident);
    r->ident_json = op_ident_json_of(ip, ident);
    if (!r->ident || !r->ident_json) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "lookup: bad identifier value");
        return;
    }
    r->step = L_GET;
    mc_req_command(r, -1, 0);
    op_str_arg(r, "GET");
    op_key_arg(r, mc_key_ident(s, type->name, ident), true);
    mc_store_submit(s, r);
}

/* HGETALL answers as name, value pairs in result.refs. */
void op_pairs_reply(mc_persist_req *r, const redisReply *reply)
{
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements % 2) {
        op_unexpected(r, reply);
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
        if (!op_is_str(e)) {
            free(refs);
            op_unexpected(r, reply);
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
    mc_persist_req *r = op_start(s, OP_LOAD_RAW, type_name, cb, ctx);
    if (!r)
        return;
    if (!op_name_ok(type_name) || !dbid) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "load_raw: type name and dbid required");
        return;
    }
    r->dbid = dbid;
    mc_req_command(r, -1, 0);
    op_str_arg(r, "HGETALL");
    op_key_arg(r, mc_key_entity(s, type_name, dbid), true);
    mc_store_submit(s, r);
}

void mc_persist_read_owner(mc_persist_store *s, const char *type_name, uint64_t dbid,
                           mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = op_start(s, OP_READ_SCHEMA, type_name, cb, ctx);
    if (!r)
        return;
    if (!op_name_ok(type_name) || !dbid) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "read_owner: type name and dbid required");
        return;
    }
    r->dbid = dbid;
    mc_req_command(r, -1, 0);
    op_str_arg(r, "HGETALL");
    op_key_arg(r, mc_key_owner(s, type_name, dbid), true);
    mc_store_submit(s, r);
}

void mc_persist_read_schema(mc_persist_store *s, const char *type_name, mc_persist_cb cb,
                            void *ctx)
{
    mc_persist_req *r = op_start(s, OP_READ_SCHEMA, type_name, cb, ctx);
    if (!r)
        return;
    if (!op_name_ok(type_name)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "read_schema: bad type name");
        return;
    }
    mc_req_command(r, -1, 0);
    op_str_arg(r, "HGETALL");
    op_key_arg(r, mc_key_schema(s, type_name), true);
    mc_store_submit(s, r);
}

/* --- enumeration ------------------------------------------------------------------------- */

void op_list_types_reply(mc_persist_req *r, const redisReply *reply)
{
    if (r->step == 0) {
        if (reply->type != REDIS_REPLY_ARRAY) {
            op_unexpected(r, reply);
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
            if (op_is_str(e) && e->len < 256 && !memchr(e->str, '\0', e->len)) {
                r->names[r->nnames] = strndup(e->str, e->len);
                if (r->names[r->nnames] && op_name_ok(r->names[r->nnames]))
                    r->nnames++;
                else
                    free(r->names[r->nnames]);
            }
        }
        r->idx = 0;
    } else {
        if (reply->type != REDIS_REPLY_INTEGER || reply->integer < 0) {
            op_unexpected(r, reply);
            return;
        }
        r->counts[r->idx++] = (uint64_t)reply->integer;
    }
    if (r->idx < r->nnames) {
        r->step = 1;
        mc_req_command(r, -1, 0);
        op_str_arg(r, "SCARD");
        op_key_arg(r, mc_key_type_set(r->s, r->names[r->idx]), true);
        op_next(r);
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
    mc_persist_req *r = op_start(s, OP_LIST_TYPES, NULL, cb, ctx);
    if (!r)
        return;
    mc_req_command(r, -1, 0);
    op_str_arg(r, "SMEMBERS");
    op_key_arg(r, mc_key_plain(s, "types"), true);
    mc_store_submit(s, r);
}

void op_scan_reply(mc_persist_req *r, const redisReply *reply)
{
    const redisReply *members = op_elem(reply, 1);
    uint64_t cursor;
    if (!op_elem_u64(reply, 0, &cursor) || !members || members->type != REDIS_REPLY_ARRAY) {
        op_unexpected(r, reply);
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
        if (!op_is_str(m))
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
    mc_persist_req *r = op_start(s, op, type_name, cb, ctx);
    if (!r)
        return;
    if (op == OP_SCAN_TYPE && !op_name_ok(type_name)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "scan_type: bad type name");
        return;
    }
    mc_req_command(r, -1, 0);
    op_str_arg(r, "SSCAN");
    op_key_arg(r, op == OP_SCAN_TYPE ? mc_key_type_set(s, type_name) : mc_key_plain(s, "autoload"),
            true);
    mc_req_argf(r, "%llu", (unsigned long long)cursor);
    op_str_arg(r, "COUNT");
    op_str_arg(r, "1000");
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
    mc_persist_req *r = op_start(s, OP_AUTOLOAD, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!type || !dbid) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "set_autoload: type and dbid required");
        return;
    }
    r->dbid = dbid;
    mc_req_command(r, -1, 0);
    op_str_arg(r, on ? "SADD" : "SREM");
    op_key_arg(r, mc_key_plain(s, "autoload"), true);
    op_ref_arg(r);
    mc_store_submit(s, r);
}

/* --- identifier index upkeep (operators) -------------------------------------------------- */

size_t mc_persist_node_count(const mc_persist_store *s) { return mc_cluster_node_count(s); }

void mc_persist_scan_idents(mc_persist_store *s, size_t node, uint64_t cursor,
                            mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = op_start(s, OP_SCAN_KEYS, NULL, cb, ctx);
    if (!r)
        return;
    r->node = mc_cluster_node(s, node);
    if (!r->node) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "scan_idents: no node %zu", node);
        return;
    }
    mc_req_command(r, -1, 0);
    op_str_arg(r, "SCAN");
    mc_req_argf(r, "%llu", (unsigned long long)cursor);
    op_str_arg(r, "MATCH");
    mc_req_argf(r, "%s:id:*", s->prefix);
    op_str_arg(r, "COUNT");
    op_str_arg(r, "1000");
    mc_store_submit(s, r);
}

enum { X_GET, X_VERIFY, X_UNCLAIM };

void op_drop_ident_reply(mc_persist_req *r, const redisReply *reply)
{
    switch (r->step) {
    case X_GET:
        if (reply->type == REDIS_REPLY_NIL) {
            mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no index entry for %s '%s'", r->type_name,
                        r->ident);
            return;
        }
        if (!op_is_str(reply) || mc_parse_u64(reply->str, reply->len, &r->dbid) != 0) {
            /* Not even a dbid: stale by definition; remove it whatever it holds. */
            r->dbid = 0;
        }
        r->step = X_VERIFY;
        mc_req_command(r, -1, 0);
        op_str_arg(r, "HGET");
        op_key_arg(r, mc_key_entity(r->s, r->type_name, r->dbid), true);
        op_str_arg(r, op_ident_prop(r->type)->name);
        op_next(r);
        return;
    case X_VERIFY:
        if (op_is_str(reply) && strlen(r->ident_json) == reply->len &&
            memcmp(reply->str, r->ident_json, reply->len) == 0) {
            mc_req_fail(r, MC_PERSIST_EXISTS, "%s %llu holds '%s': the entry is not stale",
                        r->type_name, (unsigned long long)r->dbid, r->ident);
            return;
        }
        r->step = X_UNCLAIM;
        if (r->dbid) {
            op_claim_cmd(r, MC_SCRIPT_UNCLAIM, r->ident);
        } else {
            mc_req_command(r, -1, 0);
            op_str_arg(r, "DEL");
            op_key_arg(r, mc_key_ident(r->s, r->type_name, r->ident), true);
        }
        op_next(r);
        return;
    case X_UNCLAIM:
        op_finish_ok(r);
        return;
    }
}

void mc_persist_drop_stale_ident(mc_persist_store *s, const mc_entity_type_def *type,
                                 const char *ident, mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = op_start(s, OP_DROP_IDENT, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    const mc_def_property *ip = type ? op_ident_prop(type) : NULL;
    if (!ip || !ident || !ident[0] || !op_name_ok(type->name)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST,
                        "drop_stale_ident: a type with an identifier and a value");
        return;
    }
    r->type = type;
    r->ident = strdup(ident);
    r->ident_json = op_ident_json_of(ip, ident);
    if (!r->ident || !r->ident_json) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "drop_stale_ident: bad identifier value");
        return;
    }
    r->step = X_GET;
    mc_req_command(r, -1, 0);
    op_str_arg(r, "GET");
    op_key_arg(r, mc_key_ident(s, type->name, ident), true);
    mc_store_submit(s, r);
}
