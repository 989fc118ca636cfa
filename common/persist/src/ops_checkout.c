/* Check-outs: check-out by dbid or identifier, mark live, release, release of a dead
 * owner's check-outs (ops.h). */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/value_json.h"
#include "ops.h"

/* --- steps: check-out, mark live, release ------------------------------------------------- */

enum { K_LOOKUP, K_OWNED, K_SCRIPT, K_UNSTALE, K_UNSTALE_RELEASE, K_UNSTALE_SREM };

static void checkout_step(mc_persist_req *r)
{
    mc_persist_store *s = r->s;
    if (r->step == K_LOOKUP) {
        mc_req_command(r, -1, 0);
        op_str_arg(r, "GET");
        op_key_arg(r, mc_key_ident(s, r->type_name, r->ident), true);
    } else if (r->step == K_OWNED) {
        mc_req_command(r, -1, 0);
        op_str_arg(r, "SADD");
        op_key_arg(r, mc_key_owned(s, s->owner, s->incarnation), true);
        op_ref_arg(r);
    } else {
        const mc_def_property *ip = op_ident_prop(r->type);
        mc_req_command(r, MC_SCRIPT_CHECKOUT, 2);
        op_entity_keys(r);
        op_str_arg(r, s->owner);
        mc_req_argf(r, "%llu", (unsigned long long)s->incarnation);
        op_str_arg(r, r->token);
        op_str_arg(r, r->ident && ip ? ip->name : "");
        op_str_arg(r, r->ident && ip && r->ident_json ? r->ident_json : "");
    }
}

/* A stale identifier entry (its entity, checked out by this request meanwhile, does not
 * hold the value): remove the entry if it still names the dbid, release the check-out,
 * and answer NOT_FOUND. */
static void unstale_reply(mc_persist_req *r, const redisReply *reply)
{
    switch (r->step) {
    case K_UNSTALE:
        r->step = K_UNSTALE_RELEASE;
        mc_req_command(r, MC_SCRIPT_RELEASE, 1);
        op_key_arg(r, mc_key_owner(r->s, r->type_name, r->dbid), true);
        op_str_arg(r, r->token);
        op_next(r);
        return;
    case K_UNSTALE_RELEASE:
        if (!op_word_is(reply, "OK")) {
            op_unexpected(r, reply); /* cannot be: the check-out is ours */
            return;
        }
        r->step = K_UNSTALE_SREM;
        mc_req_command(r, -1, 0);
        op_str_arg(r, "SREM");
        op_key_arg(r, mc_key_owned(r->s, r->s->owner, r->s->incarnation), true);
        op_ref_arg(r);
        op_next(r);
        return;
    default:
        r->s->stale_idents_removed++;
        r->token[0] = '\0'; /* released: nothing to give back */
        mc_req_fail(r, MC_PERSIST_NOT_FOUND,
                    "no %s '%s' (a stale identifier entry naming %s:%llu was removed)",
                    r->type_name, r->ident, r->type_name, (unsigned long long)r->dbid);
        return;
    }
}

void op_checkout_reply(mc_persist_req *r, const redisReply *reply)
{
    if (r->step >= K_UNSTALE) {
        unstale_reply(r, reply);
        return;
    }
    switch (r->step) {
    case K_LOOKUP:
        if (reply->type == REDIS_REPLY_NIL) {
            mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no %s '%s'", r->type_name, r->ident);
            return;
        }
        if (!op_is_str(reply) || mc_parse_u64(reply->str, reply->len, &r->dbid) != 0) {
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
        if (op_word_is(reply, "STALE") && r->ident) {
            r->step = K_UNSTALE;
            op_claim_cmd(r, MC_SCRIPT_UNCLAIM, r->ident);
            op_next(r);
            return;
        }
        if (op_word_is(reply, "NOT_FOUND")) {
            if (r->ident)
                mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no %s '%s'", r->type_name, r->ident);
            else
                mc_req_fail(r, MC_PERSIST_NOT_FOUND, "no %s:%llu", r->type_name,
                            (unsigned long long)r->dbid);
            return;
        }
        if (op_word_is(reply, "OWNED")) {
            const redisReply *name = op_elem(reply, 1), *state = op_elem(reply, 3),
                             *mb = op_elem(reply, 4);
            uint64_t inc = 0;
            if (!op_is_str(name) || !op_is_str(state) || !op_is_str(mb) || !op_elem_u64(reply, 2, &inc)) {
                op_unexpected(r, reply);
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
        if (!op_word_is(reply, "OK")) {
            op_unexpected(r, reply);
            return;
        }
        op_finish_ok(r);
        return;
    }
    checkout_step(r);
    op_next(r);
}

static void checkout_common(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                            const char *ident, mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = op_start(s, OP_CHECKOUT, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    const mc_def_property *ip = type ? op_ident_prop(type) : NULL;
    if (!type || !op_name_ok(type->name) || (!ident && !dbid) || (ident && !ip) ||
        (ident && !ident[0])) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST,
                        ident ? "checkout: type with an identifier and a value required"
                              : "checkout: type and dbid required");
        return;
    }
    r->type = type;
    r->dbid = dbid;
    op_new_token(r);
    if (ident) {
        r->ident = strdup(ident);
        r->ident_json = op_ident_json_of(ip, ident);
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


void mc_persist_mark_live(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                          const char *token, const uint8_t *mailbox, size_t len,
                          mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = op_start(s, OP_MARK_LIVE, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!type || !dbid || !token || (len && !mailbox)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "mark_live: type, dbid and token required");
        return;
    }
    r->type = type;
    r->dbid = dbid;
    mc_req_command(r, MC_SCRIPT_MARK_LIVE, 1);
    op_key_arg(r, mc_key_owner(s, type->name, dbid), true);
    op_str_arg(r, token);
    mc_req_arg(r, mailbox ? (const char *)mailbox : "", len);
    mc_store_submit(s, r);
}

enum { R_SCRIPT, R_SREM };

void op_release_reply(mc_persist_req *r, const redisReply *reply)
{
    if (r->step == R_SREM) {
        op_finish_ok(r);
        return;
    }
    if (!op_word_is(reply, "OK")) {
        op_fenced_or_ok(r, reply);
        return;
    }
    r->step = R_SREM;
    mc_req_command(r, -1, 0);
    op_str_arg(r, "SREM");
    op_key_arg(r, mc_key_owned(r->s, r->s->owner, r->s->incarnation), true);
    op_ref_arg(r);
    op_next(r);
}

void mc_persist_release(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                        const char *token, mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = op_start(s, OP_RELEASE, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!type || !dbid || !token) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "release: type, dbid and token required");
        return;
    }
    r->type = type;
    r->dbid = dbid;
    mc_req_command(r, MC_SCRIPT_RELEASE, 1);
    op_key_arg(r, mc_key_owner(s, type->name, dbid), true);
    op_str_arg(r, token);
    r->step = R_SCRIPT;
    mc_store_submit(s, r);
}

/* --- release of a dead owner's check-outs ------------------------------------------------ */

enum { RO_SCAN, RO_RELEASE, RO_SREM };

static void ro_scan(mc_persist_req *r)
{
    r->step = RO_SCAN;
    mc_req_command(r, -1, 0);
    op_str_arg(r, "SSCAN");
    op_key_arg(r, mc_key_owned(r->s, r->owner, 0), true);
    mc_req_argf(r, "%llu", (unsigned long long)r->cursor);
    op_str_arg(r, "COUNT");
    op_str_arg(r, "100");
}

/* Split "Type:dbid"; false when the member is malformed. */
static bool split_ref(const char *m, char *type, size_t typelen, uint64_t *dbid)
{
    const char *colon = strrchr(m, ':');
    if (!colon || colon == m || (size_t)(colon - m) >= typelen)
        return false;
    memcpy(type, m, (size_t)(colon - m));
    type[colon - m] = '\0';
    return mc_parse_u64(colon + 1, strlen(colon + 1), dbid) == 0 && *dbid > 0 && op_name_ok(type);
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
        op_key_arg(r, mc_key_owner(r->s, type, dbid), true);
        op_str_arg(r, r->owner);
        mc_req_argf(r, "%llu", (unsigned long long)r->incarnation);
        op_next(r);
        return;
    }
    if (r->cursor != 0) {
        ro_scan(r);
        op_next(r);
        return;
    }
    op_finish_ok(r);
}

void op_release_owner_reply(mc_persist_req *r, const redisReply *reply)
{
    switch (r->step) {
    case RO_SCAN: {
        const redisReply *members = op_elem(reply, 1);
        if (!op_elem_u64(reply, 0, &r->cursor) || !members || members->type != REDIS_REPLY_ARRAY) {
            op_unexpected(r, reply);
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
            if (op_is_str(m) && m->len < 512 && !memchr(m->str, '\0', m->len)) {
                r->names[r->nnames] = strndup(m->str, m->len);
                if (r->names[r->nnames])
                    r->nnames++;
            }
        }
        ro_next_member(r);
        return;
    }
    case RO_RELEASE: {
        const redisReply *what = op_elem(reply, 1);
        if (!op_word_is(reply, "OK") || !op_is_str(what)) {
            op_unexpected(r, reply);
            return;
        }
        if (what->len == 1 && what->str[0] == '1')
            r->count++;
        if ((what->len == 4 && memcmp(what->str, "keep", 4) == 0) ||
            (what->len == 6 && memcmp(what->str, "absent", 6) == 0)) {
            /* keep: another incarnation of the same name holds it. absent: not checked out
             * (yet): the owner may have added the member and be about to check it out (a
             * process declared dead that still runs); removing the member then would leave
             * a check-out its set does not name. */
            r->idx++;
            ro_next_member(r);
            return;
        }
        r->step = RO_SREM;
        mc_req_command(r, -1, 0);
        op_str_arg(r, "SREM");
        op_key_arg(r, mc_key_owned(r->s, r->owner, 0), true);
        op_str_arg(r, r->names[r->idx]);
        op_next(r);
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
    mc_persist_req *r = op_start(s, OP_RELEASE_OWNER, NULL, cb, ctx);
    if (!r)
        return;
    if (!op_name_ok(owner)) {
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

void mc_persist_release_checkout(mc_persist_store *s, const mc_entity_type_def *type,
                                 uint64_t dbid, const char *owner, uint64_t incarnation,
                                 mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = op_start(s, OP_RELEASE_OWNER, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!type || !dbid || !op_name_ok(type->name) || !op_name_ok(owner)) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST,
                        "release_checkout: type, dbid and owner name required");
        return;
    }
    r->type = type;
    r->dbid = dbid;
    r->owner = strdup(owner);
    r->incarnation = incarnation;
    r->names = calloc(1, sizeof *r->names);
    char ref[300];
    snprintf(ref, sizeof ref, "%s:%llu", type->name, (unsigned long long)dbid);
    if (r->names)
        r->names[0] = strdup(ref);
    if (!r->owner || !r->names || !r->names[0]) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "out of memory");
        return;
    }
    r->nnames = 1;
    r->idx = 0;
    r->cursor = 0; /* one member, no scan: done after it */
    r->step = RO_RELEASE;
    mc_req_command(r, MC_SCRIPT_RELEASE_OWNER, 1);
    op_key_arg(r, mc_key_owner(s, type->name, dbid), true);
    op_str_arg(r, r->owner);
    mc_req_argf(r, "%llu", (unsigned long long)incarnation);
    mc_store_submit(s, r);
}
