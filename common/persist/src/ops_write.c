/* Writes: write (fenced, identifier claim/unclaim), create, delete, import (ops.h). The order of
 * the steps is docs/PERSISTENCE.md's. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/value_json.h"
#include "ops.h"

/* --- steps: write ------------------------------------------------------------------------ */

enum { W_FIRST, W_CLAIM, W_CLAIMED, W_UNCLAIM_OLD, W_UNCLAIM_NEW };

static void write_cmd(mc_persist_req *r, bool claimed)
{
    mc_req_command(r, MC_SCRIPT_WRITE, 2);
    op_entity_keys(r);
    op_str_arg(r, r->token);
    op_str_arg(r, claimed ? "1" : "0");
    const mc_def_property *ip = r->type ? op_ident_prop(r->type) : NULL;
    op_str_arg(r, ip ? ip->name : "");
    op_str_arg(r, r->ident_json ? r->ident_json : "");
    mc_req_argf(r, "%llu", (unsigned long long)r->serial);
    op_fields_args(r);
}


void op_write_reply(mc_persist_req *r, const redisReply *reply)
{
    const mc_def_property *ip = op_ident_prop(r->type);
    switch (r->step) {
    case W_FIRST:
    case W_CLAIMED:
        if (op_word_is(reply, "FENCED")) {
            const redisReply *why = op_elem(reply, 1);
            snprintf(r->reason, sizeof r->reason, "%s:%llu: %.*s", r->type_name,
                     (unsigned long long)r->dbid, op_is_str(why) ? (int)why->len : 0,
                     op_is_str(why) ? why->str : "");
            if (r->step == W_CLAIMED && r->claim_created && r->ident) {
                r->status = MC_PERSIST_FENCED;
                r->step = W_UNCLAIM_NEW;
                op_claim_cmd(r, MC_SCRIPT_UNCLAIM, r->ident);
                op_next(r);
                return;
            }
            mc_req_fail(r, MC_PERSIST_FENCED, "%s", r->reason);
            return;
        }
        if (op_word_is(reply, "SUPERSEDED")) {
            /* A newer write of this check-out landed first (this one was resent after a lost
             * connection): not applied, and no identifier entry is touched (the entity may
             * hold the old or the new value; at worst a claim made for this write stays as a
             * stale entry, docs/PERSISTENCE.md). */
            op_finish_ok(r);
            return;
        }
        if (op_word_is(reply, "CLAIM") && r->step == W_FIRST && ip) {
            const redisReply *old = op_elem(reply, 1);
            free(r->old_ident);
            r->old_ident = op_is_str(old) ? op_ident_raw_of(r->s, ip, old->str, old->len) : NULL;
            if (r->ident) {
                r->step = W_CLAIM;
                op_claim_cmd(r, MC_SCRIPT_CLAIM, r->ident);
            } else {
                r->step = W_CLAIMED;
                write_cmd(r, true);
            }
            op_next(r);
            return;
        }
        if (!op_word_is(reply, "OK")) {
            op_unexpected(r, reply);
            return;
        }
        if (r->step == W_CLAIMED && r->old_ident && r->old_ident[0] &&
            (!r->ident || strcmp(r->old_ident, r->ident) != 0)) {
            r->step = W_UNCLAIM_OLD;
            op_claim_cmd(r, MC_SCRIPT_UNCLAIM, r->old_ident);
            op_next(r);
            return;
        }
        op_finish_ok(r);
        return;
    case W_CLAIM: {
        uint64_t holder = 0;
        if (op_word_is(reply, "IDENT_TAKEN") && op_elem_u64(reply, 1, &holder)) {
            mc_persist_result res = {.status = MC_PERSIST_IDENT_TAKEN, .dbid = holder};
            char why[300];
            snprintf(why, sizeof why, "%s '%s' is held by dbid %llu", r->type_name, r->ident,
                     (unsigned long long)holder);
            res.reason = why;
            mc_req_finish(r, &res);
            return;
        }
        const redisReply *created = op_elem(reply, 1);
        if (!op_word_is(reply, "OK") || !op_is_str(created)) {
            op_unexpected(r, reply);
            return;
        }
        r->claim_created = created->len == 1 && created->str[0] == '1';
        r->step = W_CLAIMED;
        write_cmd(r, true);
        op_next(r);
        return;
    }
    case W_UNCLAIM_OLD:
        op_finish_ok(r);
        return;
    case W_UNCLAIM_NEW:
        mc_req_fail(r, r->status, "%s", r->reason);
        return;
    }
}

void mc_persist_write(mc_persist_store *s, const mc_persist_entity *e, const char *token,
                      mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = op_start(s, OP_WRITE, e && e->type ? e->type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!e || !e->type || !e->dbid || !token || strlen(token) >= sizeof r->token) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "write: type, dbid and token required");
        return;
    }
    r->type = e->type;
    r->dbid = e->dbid;
    r->serial = e->serial;
    snprintf(r->token, sizeof r->token, "%s", token);
    if (e->serial > (1ULL << 53)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "write: serial beyond 2^53");
        return;
    }
    if (op_render(r, e) != 0) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "%s", r->reason);
        return;
    }
    r->step = W_FIRST;
    write_cmd(r, false);
    mc_store_submit(s, r);
}

/* --- steps shared by create and import ------------------------------------------------ */

/* SADD <types> TYPE: the types that have entities. */
static void cmd_type_known(mc_persist_req *r)
{
    mc_req_command(r, -1, 0);
    op_str_arg(r, "SADD");
    op_key_arg(r, mc_key_plain(r->s, "types"), true);
    op_str_arg(r, r->type_name);
}

/* SADD <type set> DBID: the type's entities. */
static void cmd_type_member(mc_persist_req *r)
{
    mc_req_command(r, -1, 0);
    op_str_arg(r, "SADD");
    op_key_arg(r, mc_key_type_set(r->s, r->type_name), true);
    mc_req_argf(r, "%llu", (unsigned long long)r->dbid);
}

/* The identifier's claim found it held by another entity: the request ends IDENT_TAKEN
 * (true), naming the holder. */
static bool ident_taken(mc_persist_req *r, const redisReply *reply)
{
    uint64_t holder = 0;
    if (!op_word_is(reply, "IDENT_TAKEN") || !op_elem_u64(reply, 1, &holder))
        return false;
    char why[300];
    snprintf(why, sizeof why, "%s '%s' is held by dbid %llu", r->type_name, r->ident,
             (unsigned long long)holder);
    mc_persist_result res = {.status = MC_PERSIST_IDENT_TAKEN, .dbid = holder, .reason = why};
    mc_req_finish(r, &res);
    return true;
}

/* --- steps: create ----------------------------------------------------------------------- */

enum { C_INCR, C_CLAIM, C_TYPES, C_TYPESET, C_OWNED, C_CREATE };

static void create_step(mc_persist_req *r)
{
    mc_persist_store *s = r->s;
    switch (r->step) {
    case C_CLAIM:
        op_claim_cmd(r, MC_SCRIPT_CLAIM, r->ident);
        break;
    case C_TYPES:
        cmd_type_known(r);
        break;
    case C_TYPESET:
        cmd_type_member(r);
        break;
    case C_OWNED:
        mc_req_command(r, -1, 0);
        op_str_arg(r, "SADD");
        op_key_arg(r, mc_key_owned(s, s->owner, s->incarnation), true);
        op_ref_arg(r);
        break;
    case C_CREATE:
        mc_req_command(r, MC_SCRIPT_CREATE, 2);
        op_entity_keys(r);
        op_str_arg(r, r->token);
        op_str_arg(r, s->owner);
        mc_req_argf(r, "%llu", (unsigned long long)s->incarnation);
        op_fields_args(r);
        break;
    }
    op_next(r);
}

void op_create_reply(mc_persist_req *r, const redisReply *reply)
{
    switch (r->step) {
    case C_INCR:
        if (reply->type != REDIS_REPLY_INTEGER || reply->integer <= 0) {
            op_unexpected(r, reply);
            return;
        }
        r->dbid = (uint64_t)reply->integer;
        r->step = r->ident ? C_CLAIM : C_TYPES;
        create_step(r);
        return;
    case C_CLAIM: {
        if (ident_taken(r, reply))
            return;
        if (!op_word_is(reply, "OK")) {
            op_unexpected(r, reply);
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
            op_unexpected(r, reply);
            return;
        }
        r->step++;
        create_step(r);
        return;
    case C_CREATE:
        if (op_word_is(reply, "EXISTS")) {
            mc_req_fail(r, MC_PERSIST_EXISTS, "%s:%llu exists already", r->type_name,
                        (unsigned long long)r->dbid);
            return;
        }
        if (!op_word_is(reply, "OK")) {
            op_unexpected(r, reply);
            return;
        }
        op_finish_ok(r);
        return;
    }
}

void mc_persist_create(mc_persist_store *s, const mc_persist_entity *e, mc_persist_cb cb,
                       void *ctx)
{
    mc_persist_req *r = op_start(s, OP_CREATE, e && e->type ? e->type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!e || !e->type || !op_name_ok(e->type->name)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "create: no entity type");
        return;
    }
    r->type = e->type;
    op_new_token(r);
    if (op_render(r, e) != 0) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "%s", r->reason);
        return;
    }
    r->step = C_INCR;
    mc_req_command(r, -1, 0);
    op_str_arg(r, "INCR");
    op_key_arg(r, mc_key_plain(s, "dbid"), true);
    mc_store_submit(s, r);
}

/* --- steps: delete ----------------------------------------------------------------------- */

enum { D_SCRIPT, D_UNCLAIM, D_TYPESET, D_AUTOLOAD };

void op_delete_reply(mc_persist_req *r, const redisReply *reply)
{
    mc_persist_store *s = r->s;
    switch (r->step) {
    case D_SCRIPT:
        if (op_word_is(reply, "NOT_FOUND")) {
            mc_req_fail(r, MC_PERSIST_NOT_FOUND, "%s:%llu: no such entity", r->type_name,
                        (unsigned long long)r->dbid);
            return;
        }
        if (op_word_is(reply, "OWNED")) {
            mc_req_fail(r, MC_PERSIST_OWNED, "%s:%llu is checked out (use force)", r->type_name,
                        (unsigned long long)r->dbid);
            return;
        }
        if (op_word_is(reply, "FENCED")) {
            mc_req_fail(r, MC_PERSIST_FENCED, "%s:%llu: token is not the owner's", r->type_name,
                        (unsigned long long)r->dbid);
            return;
        }
        if (!op_word_is(reply, "OK")) {
            op_unexpected(r, reply);
            return;
        }
        {
            const redisReply *id = op_elem(reply, 1);
            const mc_def_property *ip = r->type ? op_ident_prop(r->type) : NULL;
            free(r->old_ident);
            r->old_ident = (ip && op_is_str(id)) ? op_ident_raw_of(s, ip, id->str, id->len) : NULL;
        }
        if (r->old_ident && r->old_ident[0]) {
            r->step = D_UNCLAIM;
            op_claim_cmd(r, MC_SCRIPT_UNCLAIM, r->old_ident);
            op_next(r);
            return;
        }
        /* fall through */
    case D_UNCLAIM:
        r->step = D_TYPESET;
        mc_req_command(r, -1, 0);
        op_str_arg(r, "SREM");
        op_key_arg(r, mc_key_type_set(s, r->type_name), true);
        mc_req_argf(r, "%llu", (unsigned long long)r->dbid);
        op_next(r);
        return;
    case D_TYPESET:
        r->step = D_AUTOLOAD;
        mc_req_command(r, -1, 0);
        op_str_arg(r, "SREM");
        op_key_arg(r, mc_key_plain(s, "autoload"), true);
        op_ref_arg(r);
        op_next(r);
        return;
    case D_AUTOLOAD:
        op_finish_ok(r);
        return;
    }
}

void mc_persist_delete(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                       const char *token, bool force, mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = op_start(s, OP_DELETE, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!type || !dbid || (token && strlen(token) >= sizeof r->token)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "delete: type and dbid required");
        return;
    }
    r->type = type;
    r->dbid = dbid;
    const mc_def_property *ip = op_ident_prop(type);
    mc_req_command(r, MC_SCRIPT_DELETE, 2);
    op_entity_keys(r);
    op_str_arg(r, token ? token : "");
    op_str_arg(r, force ? "1" : "0");
    op_str_arg(r, ip ? ip->name : "");
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
        op_claim_cmd(r, MC_SCRIPT_CLAIM, r->ident);
        break;
    case I_TYPES:
        cmd_type_known(r);
        break;
    case I_TYPESET:
        cmd_type_member(r);
        break;
    case I_SCRIPT:
        mc_req_command(r, MC_SCRIPT_IMPORT, 2);
        op_entity_keys(r);
        op_str_arg(r, r->flag ? "1" : "0");
        op_fields_args(r);
        break;
    case I_RAISE:
        mc_req_command(r, MC_SCRIPT_RAISE, 1);
        op_key_arg(r, mc_key_plain(s, "dbid"), true);
        mc_req_argf(r, "%llu", (unsigned long long)r->dbid);
        break;
    }
    op_next(r);
}

void op_import_reply(mc_persist_req *r, const redisReply *reply)
{
    switch (r->step) {
    case I_CLAIM:
        if (ident_taken(r, reply))
            return;
        break;
    case I_SCRIPT:
        if (op_word_is(reply, "EXISTS")) {
            mc_req_fail(r, MC_PERSIST_EXISTS, "%s:%llu exists", r->type_name,
                        (unsigned long long)r->dbid);
            return;
        }
        if (op_word_is(reply, "OWNED")) {
            mc_req_fail(r, MC_PERSIST_OWNED, "%s:%llu is checked out", r->type_name,
                        (unsigned long long)r->dbid);
            return;
        }
        break;
    case I_RAISE:
        op_finish_ok(r);
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
    mc_persist_req *r = op_start(s, OP_IMPORT, e && e->type ? e->type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!e || !e->type || !e->dbid || !op_name_ok(e->type->name)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "import: type and dbid required");
        return;
    }
    r->type = e->type;
    r->dbid = e->dbid;
    r->flag = replace;
    if (op_render(r, e) != 0) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "%s", r->reason);
        return;
    }
    r->step = r->ident ? I_CLAIM : I_TYPES;
    switch (r->step) {
    case I_CLAIM:
        op_claim_cmd(r, MC_SCRIPT_CLAIM, r->ident);
        break;
    default:
        mc_req_command(r, -1, 0);
        op_str_arg(r, "SADD");
        op_key_arg(r, mc_key_plain(s, "types"), true);
        op_str_arg(r, r->type_name);
        break;
    }
    mc_store_submit(s, r);
}
