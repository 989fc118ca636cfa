/* Operator commands every entity process has (the role adds its own):
 *   command/call ID METHOD [JSON-ARGS]  run a method of the part held here, the arguments a
 *                                       JSON array checked against the def exactly like a
 *                                       call from the network (it goes through the same
 *                                       path); answers the return values as a JSON array
 *   command/destroy ID                  destroy the entity (the game's rules apply)
 *   command/setProperty ID NAME JSON    set a property of the part held here (a game
 *                                       master's tool), the value checked against its def;
 *                                       clients that may see it hear the change as from game
 *                                       code
 */
#include "engine_internal.h"
#include "common/log.h"
#include "common/value_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool parse_id(const char *text, int32_t *out)
{
    int64_t v;
    if (!mc_parse_int(text, &v) || v <= 0 || v > INT32_MAX)
        return false;
    *out = (int32_t)v;
    return true;
}

typedef struct {
    mc_watch_done *done;
    const mc_def_method *m;
} call_wait;

static void call_done(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    call_wait *w = ctx;
    char why[MC_REASON_MAX] = "";
    if (status == MC_CALL_OK && payload && !mc_call_reply_read(payload, &status, why, sizeof why))
        status = MC_CALL_ERR_ARGS;
    if (status != MC_CALL_OK) {
        char msg[MC_REASON_MAX + 64];
        snprintf(msg, sizeof msg, "%s%s%s", mc_call_status_name(status), why[0] ? ": " : "",
                 why);
        mc_watch_complete(w->done, false, NULL, msg);
        free(w);
        return;
    }
    mc_value vals[256];
    memset(vals, 0, sizeof vals);
    char *json = NULL;
    if (w->m->nreturns == 0)
        json = strdup("[]");
    else if (payload && mc_defs_decode_returns(e->defs, w->m, payload, vals, why, sizeof why) == 0) {
        json = mc_json_from_values(w->m->returns, w->m->nreturns, vals);
        for (size_t i = 0; i < w->m->nreturns; i++)
            mc_value_free(&vals[i]);
    }
    if (json)
        mc_watch_complete(w->done, true, json, NULL);
    else
        mc_watch_complete(w->done, false, NULL, why[0] ? why : "cannot render the answer");
    free(json);
    free(w);
}

static void cmd_call(void *ctx, int argc, const char *const *argv, mc_watch_done *done)
{
    mc_engine *e = ctx;
    int32_t id;
    if (argc < 2 || argc > 3 || !parse_id(argv[0], &id)) {
        mc_watch_complete(done, false, NULL, "usage: call ID METHOD [JSON-ARGS]");
        return;
    }
    mc_entity *ent = mc_engine_find(e, id);
    if (!ent) {
        mc_watch_complete(done, false, NULL, "no such entity here");
        return;
    }
    const mc_def_method *m = mc_defs_method_by_name(ent->td, ent->part, argv[1]);
    if (!m) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s has no %s method '%s'", ent->td->name,
                 mc_part_name(ent->part), argv[1]);
        mc_watch_complete(done, false, NULL, msg);
        return;
    }
    const char *json = argc == 3 ? argv[2] : "[]";
    mc_value args[256];
    memset(args, 0, sizeof args);
    char why[256];
    if (mc_json_to_args(e->defs, m, json, strlen(json), args, why, sizeof why) != 0) {
        mc_watch_complete(done, false, NULL, why);
        return;
    }
    mc_ostream os;
    mc_ostream_init(&os);
    int rc = mc_defs_encode_args(e->defs, m, args, &os, why, sizeof why);
    for (size_t i = 0; i < m->nargs; i++)
        mc_value_free(&args[i]);
    call_wait *w = rc == 0 ? malloc(sizeof *w) : NULL;
    if (!w) {
        mc_ostream_free(&os);
        mc_watch_complete(done, false, NULL, rc == 0 ? "out of memory" : why);
        return;
    }
    w->done = done;
    w->m = m;
    mc_mailbox_ref to = mc_engine_mailbox(
        e, ent, ent->part == MC_PART_CELL ? MC_COMPONENT_CELL : MC_COMPONENT_BASE);
    rc = mc_engine_call(e, &to, m->index, 0, os.data, os.size, call_done, w);
    mc_ostream_free(&os);
    if (rc != MC_CALL_OK) {
        free(w);
        mc_watch_complete(done, false, NULL, mc_call_status_name(rc));
    }
}

static bool cmd_destroy(void *ctx, int argc, const char *const *argv, char **result, char *why,
                        size_t whylen)
{
    mc_engine *e = ctx;
    int32_t id;
    if (argc != 1 || !parse_id(argv[0], &id)) {
        snprintf(why, whylen, "usage: destroy ID");
        return false;
    }
    mc_entity *ent = mc_engine_find(e, id);
    if (!ent || ent->in_reap) {
        snprintf(why, whylen, "no such entity here");
        return false;
    }
    mc_call_frame f;
    mc_engine_frame(e, &f, ent);
    int rc = e->part->ops->destroy(&f.ctx);
    if (rc != MC_CALL_OK) {
        snprintf(why, whylen, "%s", rc == MC_CALL_ERR_STATE
                                        ? "refused: the base has a cell (destroy the cell first)"
                                        : mc_call_status_name(rc));
        return false;
    }
    *result = strdup("destroying");
    return true;
}

static bool cmd_set_property(void *ctx, int argc, const char *const *argv, char **result,
                             char *why, size_t whylen)
{
    mc_engine *e = ctx;
    int32_t id;
    if (argc != 3 || !parse_id(argv[0], &id)) {
        snprintf(why, whylen, "usage: setProperty ID NAME JSON");
        return false;
    }
    mc_entity *ent = mc_engine_find(e, id);
    if (!ent || ent->in_reap) {
        snprintf(why, whylen, "no such entity here");
        return false;
    }
    const mc_def_property *p = mc_defs_property_by_name(ent->td, argv[1]);
    if (!p || p->part_index[ent->part] < 0) {
        snprintf(why, whylen, "%s has no %s property %s", ent->td->name, mc_part_name(ent->part),
                 argv[1]);
        return false;
    }
    mc_value v;
    mc_value_limits lim = {.max_bytes = p->db_length,
                           .entity_types = mc_defs_type_count(e->defs)};
    char vwhy[200];
    if (mc_value_from_json(p->type, argv[2], strlen(argv[2]), &lim, &v, vwhy, sizeof vwhy) != 0) {
        snprintf(why, whylen, "%s: %s", p->name, vwhy);
        return false;
    }
    mc_ostream os;
    mc_ostream_init(&os);
    int rc = mc_value_encode(p->type, &v, &lim, &os, vwhy, sizeof vwhy);
    mc_value_free(&v);
    if (rc == 0) {
        mc_istream is;
        mc_istream_init(&is, os.data, os.size);
        rc = ent->gt->props_decode_one(e->defs, ent->part, ent->props, p->index, &is, vwhy,
                                       sizeof vwhy);
    }
    mc_ostream_free(&os);
    if (rc != 0) {
        snprintf(why, whylen, "%s: %s", p->name, vwhy);
        return false;
    }
    MC_INFO("operator: %s %d.%s = %s", ent->td->name, (int)ent->id, p->name, argv[2]);
    *result = strdup("set");
    return true;
}

int engine_add_commands(mc_engine *e)
{
    mc_watchers *w = mc_server_watchers(e->server);
    if (mc_watch_add_async_callable(w, "command/call", cmd_call, e,
                                    "call ID METHOD [JSON-ARGS]: run a method of the part "
                                    "held here; prints the return values as JSON") !=
        MC_WATCH_OK)
        return -1;
    if (mc_watch_add_callable(w, "command/destroy", cmd_destroy, e,
                              "destroy ID: destroy an entity held here") != MC_WATCH_OK)
        return -1;
    if (mc_watch_add_callable(w, "command/setProperty", cmd_set_property, e,
                              "setProperty ID NAME JSON: set a property of the part held "
                              "here (checked against its def)") != MC_WATCH_OK)
        return -1;
    return 0;
}
