/* The operations: each API call is a request that runs as a sequence of steps, one Redis
 * command each (a script on one hash slot, or a plain command); the reply to a step decides
 * the next one or finishes the request. This file: the schema check at the first connection
 * and the dispatch of replies; the operations are in ops_write.c, ops_checkout.c, ops_read.c. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/value_json.h"
#include "ops.h"

/* --- schema check at the first connection ------------------------------------------------ */

static void schema_done_one(mc_persist_req *r)
{
    mc_persist_result res = {.status = MC_PERSIST_OK};
    mc_req_finish(r, &res); /* counts the type as checked */
}

void op_schema_reply(mc_persist_req *r, const redisReply *reply)
{
    mc_persist_store *s = r->s;
    if (r->step == 1) {
        schema_done_one(r);
        return;
    }
    size_t n;
    mc_persist_field *f = op_fields_of(reply, &n);
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
    op_key_arg(r, mc_key_schema(s, r->type_name), true);
    op_fields_args(r);
    op_next(r);
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
        if (!any || !op_name_ok(t->name))
            continue;
        mc_persist_req *r = op_start(s, OP_SCHEMA, t->name, NULL, NULL);
        if (!r)
            continue;
        r->type = t;
        r->deadline = UINT64_MAX;
        for (size_t p = 0; p < t->nprops; p++)
            if (t->props[p].persistent)
                op_push_field(r, t->props[p].name, mc_persist_type_text(&t->props[p]));
        mc_req_command(r, -1, 0);
        op_str_arg(r, "HGETALL");
        op_key_arg(r, mc_key_schema(s, t->name), true);
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
    case OP_SCHEMA: op_schema_reply(r, reply); return;
    case OP_CREATE: op_create_reply(r, reply); return;
    case OP_WRITE: op_write_reply(r, reply); return;
    case OP_DELETE: op_delete_reply(r, reply); return;
    case OP_IMPORT: op_import_reply(r, reply); return;
    case OP_CHECKOUT: op_checkout_reply(r, reply); return;
    case OP_MARK_LIVE: op_fenced_or_ok(r, reply); return;
    case OP_TAKE_OVER: op_take_over_reply(r, reply); return;
    case OP_RELEASE: op_release_reply(r, reply); return;
    case OP_RELEASE_OWNER: op_release_owner_reply(r, reply); return;
    case OP_LOAD: op_load_reply(r, reply); return;
    case OP_LOOKUP: op_lookup_reply(r, reply); return;
    case OP_LIST_TYPES: op_list_types_reply(r, reply); return;
    case OP_SCAN_TYPE:
    case OP_SCAN_AUTOLOAD:
    case OP_SCAN_KEYS: op_scan_reply(r, reply); return;
    case OP_DROP_IDENT: op_drop_ident_reply(r, reply); return;
    case OP_AUTOLOAD: op_finish_ok(r); return;
    case OP_LOAD_RAW:
    case OP_READ_SCHEMA: op_pairs_reply(r, reply); return;
    case OP_SLOTS:
        mc_cluster_slots_reply(r->s, reply);
        mc_req_free(r);
        return;
    }
}
