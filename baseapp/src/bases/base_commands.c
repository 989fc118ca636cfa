/* Operator commands of a baseapp (beside the engine's call and destroy):
 *   command/createBase TYPE [JSON-PROPS]          create a base here; prints its mailbox
 *   command/createBaseAnywhere TYPE [JSON-PROPS]  on the least-loaded baseapp
 * Properties are a JSON object {"name": value, ...} checked against the def. */
#include "bases.h"
#include "common/value_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse(mc_engine *e, int argc, const char *const *argv, const mc_entity_type_def **td,
                 uint16_t **idx, mc_value **vals, size_t *n, char *why, size_t whylen)
{
    *idx = NULL;
    *vals = NULL;
    *n = 0;
    if (argc < 1 || argc > 2) {
        snprintf(why, whylen, "usage: TYPE [JSON-PROPS]");
        return -1;
    }
    *td = mc_defs_type_by_name(mc_engine_defs(e), argv[0]);
    if (!*td) {
        snprintf(why, whylen, "no entity type '%s'", argv[0]);
        return -1;
    }
    if (argc < 2)
        return 0;
    return mc_json_to_props(mc_engine_defs(e), *td, argv[1], strlen(argv[1]), idx, vals, n,
                            why, whylen);
}

static char *describe(mc_engine *e, const mc_mailbox_ref *mb)
{
    char text[160];
    mc_engine_mailbox_text(e, mb, text, sizeof text);
    char *out = malloc(200);
    if (out)
        snprintf(out, 200, "%d %s", (int)mb->id, text);
    return out;
}

static bool cmd_create(void *ctx, int argc, const char *const *argv, char **result, char *why,
                       size_t whylen)
{
    mc_engine *e = ctx;
    const mc_entity_type_def *td;
    uint16_t *idx;
    mc_value *vals;
    size_t n;
    if (parse(e, argc, argv, &td, &idx, &vals, &n, why, whylen) != 0)
        return false;
    int status;
    mc_entity *ent = base_create(e, td->id, idx, vals, n, &status, why, whylen);
    mc_json_props_free(idx, vals, n);
    if (!ent)
        return false;
    mc_mailbox_ref mb = mc_engine_mailbox(e, ent, MC_COMPONENT_BASE);
    *result = describe(e, &mb);
    return true;
}

static void created(mc_engine *e, void *ctx, int status, const mc_mailbox_ref *mb,
                    const char *reason)
{
    mc_watch_done *done = ctx;
    if (status != MC_CALL_OK) {
        char msg[MC_REASON_MAX + 40];
        snprintf(msg, sizeof msg, "%s: %s", mc_call_status_name(status), reason ? reason : "");
        mc_watch_complete(done, false, NULL, msg);
        return;
    }
    char *text = describe(e, mb);
    mc_watch_complete(done, true, text, NULL);
    free(text);
}

static void cmd_create_anywhere(void *ctx, int argc, const char *const *argv,
                                mc_watch_done *done)
{
    mc_engine *e = ctx;
    const mc_entity_type_def *td;
    uint16_t *idx;
    mc_value *vals;
    size_t n;
    char why[MC_REASON_MAX];
    if (parse(e, argc, argv, &td, &idx, &vals, &n, why, sizeof why) != 0) {
        mc_watch_complete(done, false, NULL, why);
        return;
    }
    mc_ostream os;
    mc_ostream_init(&os);
    int rc = base_encode_create(e, td->id, idx, vals, n, &os, why, sizeof why);
    mc_json_props_free(idx, vals, n);
    if (rc == 0) {
        rc = base_create_on(e, NULL, os.data, os.size, created, done);
        if (rc != MC_CALL_OK)
            snprintf(why, sizeof why, "%s", mc_call_status_name(rc));
    }
    mc_ostream_free(&os);
    if (rc != 0)
        mc_watch_complete(done, false, NULL, why);
}

int base_add_commands(mc_engine *e)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    if (mc_watch_add_callable(w, "command/createBase", cmd_create, e,
                              "createBase TYPE [JSON-PROPS]: create a base on this baseapp") !=
        MC_WATCH_OK)
        return -1;
    if (mc_watch_add_async_callable(w, "command/createBaseAnywhere", cmd_create_anywhere, e,
                                    "createBaseAnywhere TYPE [JSON-PROPS]: create a base on "
                                    "the least-loaded baseapp") != MC_WATCH_OK)
        return -1;
    return 0;
}
