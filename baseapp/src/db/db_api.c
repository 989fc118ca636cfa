/* The game's persistence functions (the baseapp's entries of mc_engine_ops: writeToDB,
 * databaseID, setAutoLoad, createBase[Anywhere]FromDB[ByName], destroy(deleteFromDB,
 * writeToDB)) and the operator's commands:
 *   command/writeToDB ID                          write a base; prints its database id
 *   command/createBaseFromDB TYPE DBID            load here (or find it live)
 *   command/createBaseFromDBByName TYPE NAME      the same by its Identifier
 *   command/createBaseAnywhereFromDB TYPE DBID    on the least-loaded baseapp
 *   command/createBaseAnywhereFromDBByName TYPE NAME
 *   command/destroyBase ID delete|write|nowrite   destroy, deleting it from the database,
 *                                                 writing it a last time, or neither
 *   command/setAutoLoad ID on|off                 load it when the cluster starts */
#include "db.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The caller of an asynchronous function, told through its callback with its context. */
typedef struct {
    mc_mailbox_ref caller;
    mc_write_fn written;
    mc_load_fn loaded;
    void *ud;
} game_wait;

static void caller_frame(mc_engine *e, const game_wait *g, mc_call_frame *f)
{
    mc_entity *ent = mc_mailbox_ref_is_none(&g->caller) ? NULL : mc_engine_find(e, g->caller.id);
    mc_engine_frame(e, f, ent && !ent->in_reap && ent->part == MC_PART_BASE ? ent : NULL);
    f->ctx.self = g->caller;
}

static void game_written(mc_engine *e, void *ctx, int status, uint64_t dbid, const char *reason)
{
    game_wait *g = ctx;
    mc_call_frame f;
    caller_frame(e, g, &f);
    g->written(&f.ctx, g->ud, status, (int64_t)dbid, reason ? reason : "");
    free(g);
}

static void game_loaded(mc_engine *e, void *ctx, int status, const mc_mailbox_ref *base,
                        uint64_t dbid, bool was_live, const char *reason)
{
    game_wait *g = ctx;
    mc_call_frame f;
    caller_frame(e, g, &f);
    mc_mailbox_ref none = {0};
    g->loaded(&f.ctx, g->ud, status, status == MC_CALL_OK && base ? *base : none, (int64_t)dbid,
              was_live, reason ? reason : "");
    free(g);
}

int db_op_write(const mc_call_ctx *call, mc_write_fn fn, void *ud)
{
    mc_engine *e = mc_engine_of(call);
    mc_entity *ent = mc_engine_entity_of(call, MC_PART_BASE);
    if (!ent || ent->destroying)
        return MC_CALL_ERR_STATE;
    game_wait *g = NULL;
    if (fn) {
        g = calloc(1, sizeof *g);
        if (!g)
            return MC_CALL_ERR_BUSY;
        g->caller = call->self;
        g->written = fn;
        g->ud = ud;
    }
    int rc = db_write(base_db_of(e), ent, false, fn ? game_written : NULL, g);
    if (rc != MC_CALL_OK)
        free(g);
    return rc;
}

int64_t db_op_database_id(const mc_call_ctx *call)
{
    mc_engine *e = mc_engine_of(call);
    mc_entity *ent = mc_engine_entity_of(call, MC_PART_BASE);
    db_rec *r = ent ? db_rec_of(base_db_of(e), ent->id) : NULL;
    return r ? (int64_t)r->dbid : 0;
}

int db_op_set_auto_load(const mc_call_ctx *call, bool on)
{
    mc_engine *e = mc_engine_of(call);
    mc_entity *ent = mc_engine_entity_of(call, MC_PART_BASE);
    base_db *db = base_db_of(e);
    int st;
    if (!ent)
        return MC_CALL_ERR_STATE;
    if (!db_store(db, &st))
        return st;
    db_rec *r = db_rec_get(db, ent);
    if (!r)
        return MC_CALL_ERR_BUSY;
    r->autoload = on;
    db_store_autoload(db, r);
    return MC_CALL_OK;
}

int db_op_create_from_db(const mc_call_ctx *call, bool anywhere, const char *type,
                         int64_t dbid, const char *name, mc_load_fn fn, void *ud)
{
    mc_engine *e = mc_engine_of(call);
    if (!e)
        return MC_CALL_ERR_STATE;
    const mc_entity_type_def *td = type ? mc_defs_type_by_name(mc_engine_defs(e), type) : NULL;
    if (!td)
        return MC_CALL_ERR_NOT_FOUND;
    if (!fn || dbid < 0)
        return MC_CALL_ERR_ARGS;
    game_wait *g = calloc(1, sizeof *g);
    if (!g)
        return MC_CALL_ERR_BUSY;
    g->caller = call->self;
    g->loaded = fn;
    g->ud = ud;
    base_db *db = base_db_of(e);
    int rc = anywhere ? db_load_anywhere(db, td, (uint64_t)dbid, name, game_loaded, g)
                      : db_load(db, td, (uint64_t)dbid, name, game_loaded, g);
    if (rc != MC_CALL_OK)
        free(g);
    return rc;
}

/* Destroy a base with what its record says destroy does to it in the database. */
static int destroy_base(mc_engine *e, mc_entity *ent, bool delete_from_db, bool write_to_db)
{
    if (ent->cell_state != MC_CELL_NONE || ent->in_reap)
        return MC_CALL_ERR_STATE; /* as BigWorld: destroyCellEntity first */
    base_db *db = base_db_of(e);
    int st;
    if (delete_from_db && !db_store(db, &st))
        return st;
    if (delete_from_db || !write_to_db) {
        db_rec *r = db_rec_get(db, ent);
        if (!r)
            return MC_CALL_ERR_BUSY;
        r->destroy_delete = delete_from_db;
        r->destroy_nowrite = !write_to_db;
    }
    mc_engine_destroy_entity(e, ent);
    return MC_CALL_OK;
}

int db_op_destroy_base(const mc_call_ctx *call, bool delete_from_db, bool write_to_db)
{
    mc_entity *ent = mc_engine_entity_of(call, MC_PART_BASE);
    if (!ent)
        return MC_CALL_ERR_STATE;
    return destroy_base(mc_engine_of(call), ent, delete_from_db, write_to_db);
}

/* ---- operator commands --------------------------------------------------------------------- */

static mc_entity *base_arg(mc_engine *e, const char *text, char *why, size_t whylen)
{
    char *end;
    long id = strtol(text, &end, 10);
    mc_entity *ent = *end || id <= 0 || id > INT32_MAX ? NULL : mc_engine_find(e, (int32_t)id);
    if (!ent || ent->in_reap)
        snprintf(why, whylen, "no base %s here", text);
    return ent;
}

static void cmd_written(mc_engine *e, void *ctx, int status, uint64_t dbid, const char *reason)
{
    (void)e;
    mc_watch_done *done = ctx;
    char text[MC_REASON_MAX + 64];
    if (status == MC_CALL_OK) {
        snprintf(text, sizeof text, "%llu", (unsigned long long)dbid);
        mc_watch_complete(done, true, text, NULL);
    } else {
        snprintf(text, sizeof text, "%s: %s", mc_call_status_name(status), reason);
        mc_watch_complete(done, false, NULL, text);
    }
}

static void cmd_write(void *ctx, int argc, const char *const *argv, mc_watch_done *done)
{
    mc_engine *e = ctx;
    char why[MC_REASON_MAX] = "usage: ID";
    mc_entity *ent = argc == 1 ? base_arg(e, argv[0], why, sizeof why) : NULL;
    int rc = ent ? db_write(base_db_of(e), ent, false, cmd_written, done) : -1;
    if (rc != MC_CALL_OK) {
        if (ent)
            snprintf(why, sizeof why, "%s%s", mc_call_status_name(rc),
                     rc == MC_CALL_ERR_UNAVAILABLE ? " (no --redis or --redisCluster, or not "
                                                     "registered yet)"
                                                   : "");
        mc_watch_complete(done, false, NULL, why);
    }
}

static void cmd_loaded(mc_engine *e, void *ctx, int status, const mc_mailbox_ref *base,
                       uint64_t dbid, bool was_live, const char *reason)
{
    mc_watch_done *done = ctx;
    char text[400];
    if (status != MC_CALL_OK) {
        snprintf(text, sizeof text, "%s: %s", mc_call_status_name(status), reason);
        mc_watch_complete(done, false, NULL, text);
        return;
    }
    char mb[200];
    mc_engine_mailbox_text(e, base, mb, sizeof mb);
    snprintf(text, sizeof text, "%d %s dbid %llu %s", (int)base->id, mb,
             (unsigned long long)dbid, was_live ? "live" : "loaded");
    mc_watch_complete(done, true, text, NULL);
}

static void cmd_load(mc_engine *e, int argc, const char *const *argv, mc_watch_done *done,
                     bool anywhere, bool by_name)
{
    char why[MC_REASON_MAX];
    if (argc != 2) {
        mc_watch_complete(done, false, NULL, by_name ? "usage: TYPE NAME" : "usage: TYPE DBID");
        return;
    }
    const mc_entity_type_def *td = mc_defs_type_by_name(mc_engine_defs(e), argv[0]);
    if (!td) {
        snprintf(why, sizeof why, "no entity type '%s'", argv[0]);
        mc_watch_complete(done, false, NULL, why);
        return;
    }
    uint64_t dbid = 0;
    if (!by_name) {
        char *end;
        dbid = strtoull(argv[1], &end, 10);
        if (*end || dbid == 0 || argv[1][0] == '-') {
            snprintf(why, sizeof why, "'%s' is not a database id", argv[1]);
            mc_watch_complete(done, false, NULL, why);
            return;
        }
    }
    base_db *db = base_db_of(e);
    const char *name = by_name ? argv[1] : NULL;
    int rc = anywhere ? db_load_anywhere(db, td, dbid, name, cmd_loaded, done)
                      : db_load(db, td, dbid, name, cmd_loaded, done);
    if (rc != MC_CALL_OK) {
        snprintf(why, sizeof why, "%s%s", mc_call_status_name(rc),
                 rc == MC_CALL_ERR_UNAVAILABLE ? " (no --redis or --redisCluster, or not "
                                                 "registered yet)"
                 : rc == MC_CALL_ERR_ARGS ? " (an identifier needs a type with <Identifier>)"
                                          : "");
        mc_watch_complete(done, false, NULL, why);
    }
}

static void cmd_load_here(void *ctx, int argc, const char *const *argv, mc_watch_done *done)
{
    cmd_load(ctx, argc, argv, done, false, false);
}

static void cmd_load_here_name(void *ctx, int argc, const char *const *argv,
                               mc_watch_done *done)
{
    cmd_load(ctx, argc, argv, done, false, true);
}

static void cmd_load_anywhere(void *ctx, int argc, const char *const *argv,
                              mc_watch_done *done)
{
    cmd_load(ctx, argc, argv, done, true, false);
}

static void cmd_load_anywhere_name(void *ctx, int argc, const char *const *argv,
                                   mc_watch_done *done)
{
    cmd_load(ctx, argc, argv, done, true, true);
}

static bool cmd_destroy(void *ctx, int argc, const char *const *argv, char **result, char *why,
                        size_t whylen)
{
    mc_engine *e = ctx;
    if (argc != 2 || (strcmp(argv[1], "delete") && strcmp(argv[1], "write") &&
                      strcmp(argv[1], "nowrite"))) {
        snprintf(why, whylen, "usage: ID delete|write|nowrite");
        return false;
    }
    mc_entity *ent = base_arg(e, argv[0], why, whylen);
    if (!ent)
        return false;
    bool del = strcmp(argv[1], "delete") == 0;
    int rc = destroy_base(e, ent, del, strcmp(argv[1], "write") == 0);
    if (rc != MC_CALL_OK) {
        snprintf(why, whylen, "%s", rc == MC_CALL_ERR_STATE ? "it has a cell: destroy it first"
                                                            : mc_call_status_name(rc));
        return false;
    }
    *result = strdup("destroying");
    return true;
}

static bool cmd_autoload(void *ctx, int argc, const char *const *argv, char **result,
                         char *why, size_t whylen)
{
    mc_engine *e = ctx;
    if (argc != 2 || (strcmp(argv[1], "on") && strcmp(argv[1], "off"))) {
        snprintf(why, whylen, "usage: ID on|off");
        return false;
    }
    mc_entity *ent = base_arg(e, argv[0], why, whylen);
    if (!ent)
        return false;
    mc_call_frame f;
    mc_engine_frame(e, &f, ent);
    int rc = db_op_set_auto_load(&f.ctx, strcmp(argv[1], "on") == 0);
    if (rc != MC_CALL_OK) {
        snprintf(why, whylen, "%s", mc_call_status_name(rc));
        return false;
    }
    *result = strdup(argv[1]);
    return true;
}

int db_add_commands(mc_engine *e)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    static const struct {
        const char *path;
        mc_watch_async_fn fn;
        const char *help;
    } async[] = {
        {"command/writeToDB", cmd_write, "writeToDB ID: write a base to the database"},
        {"command/createBaseFromDB", cmd_load_here,
         "createBaseFromDB TYPE DBID: load a base here (or find it live)"},
        {"command/createBaseFromDBByName", cmd_load_here_name,
         "createBaseFromDBByName TYPE NAME: load a base here by its identifier"},
        {"command/createBaseAnywhereFromDB", cmd_load_anywhere,
         "createBaseAnywhereFromDB TYPE DBID: load a base on the least-loaded baseapp"},
        {"command/createBaseAnywhereFromDBByName", cmd_load_anywhere_name,
         "createBaseAnywhereFromDBByName TYPE NAME: the same by its identifier"},
    };
    for (size_t i = 0; i < sizeof async / sizeof async[0]; i++)
        if (mc_watch_add_async_callable(w, async[i].path, async[i].fn, e, async[i].help) !=
            MC_WATCH_OK)
            return -1;
    if (mc_watch_add_callable(w, "command/destroyBase", cmd_destroy, e,
                              "destroyBase ID delete|write|nowrite: destroy a base, deleting "
                              "it from the database, writing it a last time, or neither") !=
        MC_WATCH_OK)
        return -1;
    if (mc_watch_add_callable(w, "command/setAutoLoad", cmd_autoload, e,
                              "setAutoLoad ID on|off: load the base when the cluster starts") !=
        MC_WATCH_OK)
        return -1;
    return 0;
}
