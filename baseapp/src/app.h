/* The baseapp as a whole: the parts it owns and the hooks that join them.
 *
 * Every part keeps its own state and sits on the ones below it (docs/ARCHITECTURE.md
 * "Inside the baseapp"):
 *
 *   bases/    base entities, their cells, calls, creation, global names (on common/entity)
 *   db/       persistence: records, writes, loads, check-outs (on bases/)
 *   clients/  the external interface: proxies, resumption, world updates (on bases/)
 *   backup/   backups of bases held elsewhere and their restore (on db/ and clients/)
 *   retire/   offloading every base before leaving (on backup/, db/, clients/)
 *   login/    PREPARE_LOGIN: readies an account's base, issues its session (on db/)
 *   app*.c    the owner: builds the parts, installs the hooks, the login sessions' sweep
 *
 * A lower part never calls an upper one: where it must tell or ask one (a base's cell came,
 * a base got a database id, is this base leaving?) it calls a hook of its own state that
 * the owner installed at init (app.c). A part reaches its own state from the engine with its
 * accessor below and no other part's.
 */
#ifndef MC_BASEAPP_APP_H
#define MC_BASEAPP_APP_H

#include "entity/engine.h"

#include <event2/event.h>

/* What bases/ asks of the parts above it (installed by app.c; NULL: nothing to do). */
typedef struct base_hooks {
    /* A call for a base not here: true when an upper part took it (an offload's new home,
     * a held backup) */
    bool (*take_call)(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                      const uint8_t *args, size_t len);
    bool (*hold_call)(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                      const uint8_t *args, size_t len);
    /* A CLIENT / CLIENT_VIA_BASE call for a base here: false when it has no client */
    bool (*client_call)(mc_engine *e, const mc_origin *o, mc_entity *ent,
                        const mc_call_header *h, const uint8_t *args, size_t len);
    /* A handler ran on a base (its client hears what changed) */
    void (*after_call)(mc_engine *e, mc_entity *ent);
    /* A base's cell was created in space (before the calls queued for it go) */
    void (*cell_space)(mc_engine *e, int32_t id, int32_t space);
    /* A base's new cell is live (its calls went): its client, if any, is served by it */
    void (*cell_live)(mc_engine *e, mc_entity *ent);
    /* A base's cell was created, destroyed or lost, or could not be created */
    void (*cell_change)(mc_engine *e, int32_t id);
} base_hooks;

/* The login sessions (clients/client_sessions.h). */
typedef struct base_sessions base_sessions;

typedef struct baseapp {
    mc_engine *e;
    base_hooks bases;             /* bases/ */
    struct base_restore *lost_cells; /* bases/base_restore.c */
    struct base_db *db;           /* db/ */
    struct base_clients *clients; /* clients/ */
    struct base_backup *backup;   /* backup/ */
    struct base_retire *retire;   /* retire/ */
    struct login_prepare *login;  /* login/ */
    /* login sessions issued for clients (--sessionExpiryMs, --maxSessions): login/ issues
     * them, clients/ takes them, app_sessions.c sweeps them */
    base_sessions *sessions;
    uint64_t sessions_unclaimed;  /* bases told onClientDeath: their client never came */
    struct app_session_watch {
        size_t off;               /* of the counter in base_sessions_stats; -1: live count */
        struct baseapp *app;
    } session_watch[7];
    struct event *sweep_ev;       /* the sessions' sweep, once a second */
} baseapp;

/* The baseapp of an engine (NULL before app init and after app free). */
static inline baseapp *baseapp_of(mc_engine *e) { return mc_engine_role_state(e); }

/* Each part's state (NULL when it is not there). */
static inline struct base_db *base_db_of(mc_engine *e)
{
    baseapp *a = baseapp_of(e);
    return a ? a->db : NULL;
}
static inline base_hooks *base_hooks_of(mc_engine *e)
{
    baseapp *a = baseapp_of(e);
    return a ? &a->bases : NULL;
}
/* The same, never NULL (no hooks once the baseapp is freed). */
static inline const base_hooks *base_hooks_or_none(mc_engine *e)
{
    static const base_hooks none;
    baseapp *a = baseapp_of(e);
    return a ? &a->bases : &none;
}
static inline struct base_restore *base_restore_of(mc_engine *e)
{
    baseapp *a = baseapp_of(e);
    return a ? a->lost_cells : NULL;
}
static inline struct base_clients *proxy_state(mc_engine *e)
{
    baseapp *a = baseapp_of(e);
    return a ? a->clients : NULL;
}
static inline struct base_backup *backup_of(mc_engine *e)
{
    baseapp *a = baseapp_of(e);
    return a ? a->backup : NULL;
}
static inline struct base_retire *retire_of(mc_engine *e)
{
    baseapp *a = baseapp_of(e);
    return a ? a->retire : NULL;
}
static inline struct login_prepare *login_prepare_of(mc_engine *e)
{
    baseapp *a = baseapp_of(e);
    return a ? a->login : NULL;
}
static inline base_sessions *base_sessions_of(mc_engine *e)
{
    baseapp *a = baseapp_of(e);
    return a ? a->sessions : NULL;
}

/* app.c: the role's init, shutdown and free (app_role.c's role table), and the options of
 * the parts that have no table of their own (backups, retiring). */
#define BASEAPP_PART_OPTION_COUNT (BACKUP_OPTION_COUNT + RETIRE_OPTION_COUNT)
extern const mc_option baseapp_part_options[];
int baseapp_init(mc_engine *e, char *err, size_t errlen);
void baseapp_on_shutdown(mc_engine *e);
void baseapp_free(mc_engine *e);

/* app_sessions.c: the login sessions (options --sessionExpiryMs, --maxSessions, the
 * sessions/ watchers, the once-a-second sweep of sessions whose client never came). */
#define APP_SESSION_OPTION_COUNT 2
extern const mc_option app_session_options[APP_SESSION_OPTION_COUNT];
int app_sessions_init(baseapp *a, char *err, size_t errlen);
void app_sessions_free(baseapp *a);

#endif
