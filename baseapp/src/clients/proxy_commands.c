/* Operator commands of the external interface (watchers; operators reach them from the
 * internal network only):
 *   command/issueSession ID   a login session for base ID here, as the loginapp's
 *                             preparation would issue: prints "SESSION-ID-HEX KEY-HEX ADDR"
 *                             (16 and 64 hex digits, the external address to connect to)
 *   command/kickClient ID     tell base ID's client it is kicked and drop it */
#include "app.h"
#include "entity/client_wire.h"
#include "proxy_internal.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mc_entity *base_arg(mc_engine *e, int argc, const char *const *argv, char *why,
                           size_t whylen)
{
    if (argc != 1) {
        snprintf(why, whylen, "usage: ID");
        return NULL;
    }
    char *end;
    errno = 0;
    long id = strtol(argv[0], &end, 10);
    mc_entity *ent = !errno && *end == '\0' && id > 0 && id <= INT32_MAX
                         ? mc_engine_find(e, (int32_t)id)
                         : NULL;
    if (!ent || ent->part != MC_PART_BASE || ent->in_reap) {
        snprintf(why, whylen, "no base '%s' here", argv[0]);
        return NULL;
    }
    return ent;
}

static bool cmd_issue(void *ctx, int argc, const char *const *argv, char **result, char *why,
                      size_t whylen)
{
    mc_engine *e = ctx;
    mc_entity *ent = base_arg(e, argc, argv, why, whylen);
    if (!ent)
        return false;
    if (!ent->td->client_server) {
        snprintf(why, whylen, "%s %d has no client part", ent->td->name, (int)ent->id);
        return false;
    }
    uint64_t sid;
    uint8_t key[MC_SECURE_KEY_BYTES];
    if (base_sessions_issue(base_sessions_of(e), ent->id, NULL, false, &sid, key) != 0) {
        snprintf(why, whylen, "too many sessions wait for their clients (--maxSessions)");
        return false;
    }
    char hex[2 * MC_SECURE_KEY_BYTES + 1];
    sodium_bin2hex(hex, sizeof hex, key, sizeof key);
    sodium_memzero(key, sizeof key);
    char *out = malloc(200);
    if (out)
        snprintf(out, 200, "%016llx %s %s", (unsigned long long)sid, hex,
                 mc_server_external_addr(mc_engine_server(e)));
    sodium_memzero(hex, sizeof hex);
    *result = out;
    return out != NULL;
}

static bool cmd_kick(void *ctx, int argc, const char *const *argv, char **result, char *why,
                     size_t whylen)
{
    mc_engine *e = ctx;
    mc_entity *ent = base_arg(e, argc, argv, why, whylen);
    if (!ent)
        return false;
    base_clients *bc = proxy_state(e);
    proxy_client *pc = proxy_of_entity(bc, ent->id);
    if (!pc) {
        snprintf(why, whylen, "%s %d has no client", ent->td->name, (int)ent->id);
        return false;
    }
    bc->st.kicked++;
    int32_t id = ent->id;
    proxy_close(bc, pc, MC_CW_BYE_KICKED, "an operator dropped the client");
    ent = mc_engine_find(e, id);
    proxy_resume_forget(bc, id);
    if (ent && !ent->in_reap) {
        bc->st.deaths++;
        mc_engine_run_hook(e, ent, MC_HOOK_CLIENT_DEATH, NULL);
    }
    *result = strdup("kicked");
    return *result != NULL;
}

int proxy_add_commands(mc_engine *e)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    if (mc_watch_add_callable(w, "command/issueSession", cmd_issue, e,
                              "issueSession ID: a login session for base ID (prints the "
                              "session id, key and external address)") != MC_WATCH_OK)
        return -1;
    if (mc_watch_add_callable(w, "command/kickClient", cmd_kick, e,
                              "kickClient ID: drop base ID's client (it is told why)") !=
        MC_WATCH_OK)
        return -1;
    return 0;
}
