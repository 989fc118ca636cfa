/* Taking a check-out over from a dead owner (mc_persist_take_over, issue 20): the new
 * owner's owned set first (so that, were it to die next, its check-outs are found), then the
 * TAKE_OVER script on the owner record, checked by the old token alone (never by the old
 * owner's name, which another process may have been given since). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

enum { T_OWNED, T_SCRIPT };

static void take_over_script(mc_persist_req *r)
{
    mc_persist_store *s = r->s;
    r->step = T_SCRIPT;
    mc_req_command(r, MC_SCRIPT_TAKE_OVER, 1);
    op_key_arg(r, mc_key_owner(s, r->type_name, r->dbid), true);
    op_str_arg(r, r->ident); /* the old token */
    op_str_arg(r, s->owner);
    mc_req_argf(r, "%llu", (unsigned long long)s->incarnation);
    op_str_arg(r, r->token);
    mc_req_arg(r, r->old_ident ? r->old_ident : "", (size_t)r->count);
    r->count = 0; /* the result's count means nothing here */
}

void op_take_over_reply(mc_persist_req *r, const redisReply *reply)
{
    if (r->step == T_OWNED) {
        take_over_script(r);
        op_next(r);
        return;
    }
    op_fenced_or_ok(r, reply);
}

void mc_persist_take_over(mc_persist_store *s, const mc_entity_type_def *type, uint64_t dbid,
                          const char *old_token, const uint8_t *mailbox,
                          size_t len, mc_persist_cb cb, void *ctx)
{
    mc_persist_req *r = op_start(s, OP_TAKE_OVER, type ? type->name : NULL, cb, ctx);
    if (!r)
        return;
    if (!type || !dbid || !old_token || !*old_token || (len && !mailbox) || len > 64) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "take_over: type, dbid and old token required");
        return;
    }
    r->type = type;
    r->dbid = dbid;
    r->ident = strdup(old_token);
    r->old_ident = malloc(len + 1);
    if (!r->ident || !r->old_ident) {
        mc_store_reject(r, MC_PERSIST_BAD_REQUEST, "take_over: out of memory");
        return;
    }
    if (len)
        memcpy(r->old_ident, mailbox, len);
    r->count = len; /* the mailbox's length (old_ident holds its bytes) */
    op_new_token(r);
    r->step = T_OWNED;
    mc_req_command(r, -1, 0);
    op_str_arg(r, "SADD");
    op_key_arg(r, mc_key_owned(s, s->owner, s->incarnation), true);
    op_ref_arg(r);
    mc_store_submit(s, r);
}
