/* The baseapp's role table for the engine: its engine API, its messages, destroying bases
 * and their watchers. */
#include "bases/bases.h"
#include "app.h"
#include "backup/backup.h"
#include "entity/restore_wire.h"
#include "db/db.h"
#include "login/login_prepare.h"
#include "proto/login.h"
#include "common/log.h"
#include "clients/base_world.h"
#include "clients/proxy.h"
#include "retire/retire.h"
#include "entity/backup_wire.h"
#include "entity/move_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int base_op_destroy(const mc_call_ctx *call)
{
    mc_engine *e = mc_engine_of(call);
    mc_entity *ent = mc_engine_entity_of(call, MC_PART_BASE);
    if (!ent)
        return MC_CALL_ERR_STATE;
    if (ent->cell_state != MC_CELL_NONE)
        return MC_CALL_ERR_STATE; /* as BigWorld: destroyCellEntity first */
    mc_engine_destroy_entity(e, ent);
    return MC_CALL_OK;
}

static mc_mailbox_ref base_op_cell(const mc_call_ctx *call)
{
    mc_entity *ent = mc_engine_entity_of(call, MC_PART_BASE);
    mc_mailbox_ref none = {0};
    return ent && ent->cell_state == MC_CELL_LIVE ? ent->cell : none;
}

static void *base_op_cell_data(const mc_call_ctx *call)
{
    mc_entity *ent = mc_engine_entity_of(call, MC_PART_BASE);
    return ent && ent->cell_state == MC_CELL_NONE ? ent->cell_data : NULL;
}

const mc_engine_ops base_engine_ops = {
    .self = mc_engine_op_self,
    .time = mc_engine_op_time,
    .add_timer = mc_engine_op_add_timer,
    .del_timer = mc_engine_op_del_timer,
    .destroy = base_op_destroy,
    .create_base_locally = base_op_create_locally,
    .create_base_anywhere = base_op_create_anywhere,
    .create_base_remotely = base_op_create_remotely,
    .create_cell_entity = base_op_create_cell,
    .create_in_new_space = base_op_create_in_new_space,
    .destroy_cell_entity = base_op_destroy_cell,
    .base_cell = base_op_cell,
    .cell_data = base_op_cell_data,
    .register_globally = base_op_register_globally,
    .deregister_globally = base_op_deregister_globally,
    .look_up_base_by_name = base_op_look_up,
    .write_to_db = db_op_write,
    .database_id = db_op_database_id,
    .set_auto_load = db_op_set_auto_load,
    .create_base_from_db = db_op_create_from_db,
    .destroy_base = db_op_destroy_base,
    .give_client_to = proxy_op_give_client_to,
    .has_client = proxy_op_has_client,
};

/* The entity messages a baseapp takes (ENTITY_CALL is base_on_call). */
static const mc_role_message base_messages[] = {
    {MC_MSG_CREATE_BASE, base_on_create_base},
    /* a cell's messages to its base pass through retire_pass.c: a base leaving (this
     * baseapp retires) or just taken from a retiring one takes them in order */
    {MC_MSG_CELL_GONE, retire_on_cell_gone},
    {MC_MSG_CELL_MOVED, retire_on_cell_moved},
    {MC_MSG_CELL_COPY, retire_on_cell_copy},
    {MC_MSG_LOAD_BASE, db_on_load_base},
    {MC_MSG_PREPARE_LOGIN, login_on_prepare},
    {MC_MSG_RESUME_PREPARE, proxy_on_resume_prepare},
    {MC_MSG_CLIENT_UPDATE, retire_on_client_update},
    {MC_MSG_BACKUP_BASE, backup_on_backup_base},
    {MC_MSG_BACKUP_DROP, backup_on_backup_drop},
    {MC_MSG_BACKUP_REFUSED, backup_on_backup_refused},
    {MC_MSG_OFFLOAD_BASE, retire_on_offload},
    {MC_MSG_RETIRE_PASS, retire_on_pass},
    {MC_MSG_RETIRE_CLIENT_CALL, retire_on_client_call},
    {MC_MSG_RETIRE_END, retire_on_end},
    {MC_MSG_RETIRE_HOMES, retire_on_homes},
    {MC_MSG_RETIRED, mc_engine_on_retired},
    {MC_MSG_RETIRED_NOTED, retire_on_noted},
    {MC_MSG_RETIRE_SENDER_END, retire_on_sender_end},
    {MC_MSG_RETIRED_HOMES, retire_on_retired_homes},
};

static void base_part_on_peer_death(mc_engine *e, const char *addr)
{
    retire_on_peer_death(e, addr); /* a retiring baseapp's stream ended with it */
    base_on_peer_death(e, addr);
}

static void on_destroy(mc_engine *e, mc_entity *ent)
{
    base_fail_cell_queue(e, ent, MC_CALL_ERR_DESTROYED, "destroyed");
    base_drop_globals(e, ent);
    proxy_on_destroy(e, ent);
    if (!retire_quiet_destroy(e, ent)) /* offloaded: its check-out is its new home's */
        db_on_destroy(e, ent);
    backup_on_destroy(e, ent);
}

static const char *const cell_states[] = {"none", "creating", "live", "destroying"};

static void get_cell(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    char text[128] = "?";
    if (ent) {
        if (ent->cell_state == MC_CELL_LIVE || ent->cell_state == MC_CELL_DESTROYING)
            mc_engine_mailbox_text(e, &ent->cell, text, sizeof text);
        else
            snprintf(text, sizeof text, "%s", cell_states[ent->cell_state]);
    }
    out->as.s = strdup(text);
}

static void get_globals(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    size_t len = 1;
    for (size_t i = 0; ent && i < ent->nglobal_names; i++)
        len += strlen(ent->global_names[i]) + 1;
    char *s = calloc(1, len);
    for (size_t i = 0; s && ent && i < ent->nglobal_names; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, ent->global_names[i]);
    }
    out->as.s = s ? s : strdup("");
}

static void add_entity_watchers(mc_engine *e, mc_entity *ent, const char *dir, void *ref)
{
    (void)ent;
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    char path[MC_WATCH_MAX_PATH];
    snprintf(path, sizeof path, "%s/cell", dir);
    mc_watch_add(w, path, MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_cell, NULL, ref);
    snprintf(path, sizeof path, "%s/globalNames", dir);
    mc_watch_add(w, path, MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_globals, NULL, ref);
    base_restore_add_entity_watchers(e, dir, ref);
    db_add_entity_watchers(e, ent, dir, ref);
}

/* A baseapp died: its bases held here as backups are restored (their check-outs taken over),
 * and what no restorer took over is released once the grace has passed (backup_state.c). A
 * graceful stop releases its own check-outs. */
static void on_process_death(mc_engine *e, const char *name, uint32_t pid, const char *host,
                             uint64_t incarnation, const char *addr, bool stopped)
{
    if (!name || strncmp(name, "baseapp", 7) != 0)
        return;
    if (stopped) {
        backup_on_process_death(e, addr, incarnation, name, true);
        db_on_process_death(e, name, pid, host, incarnation, addr, true);
        return;
    }
    backup_on_process_death(e, addr, incarnation, name, false);
}

const mc_role_part base_role_part = {
    .part = MC_PART_BASE,
    .on_call = base_on_call,
    .messages = base_messages,
    .message_count = sizeof base_messages / sizeof base_messages[0],
    .on_peer_death = base_part_on_peer_death,
    .on_peer_down = retire_on_peer_down, /* killed or stopped: a new home's bases go again */
    .on_destroy = on_destroy,
    .add_entity_watchers = add_entity_watchers,
    .on_init = baseapp_init,
    .on_shutdown = baseapp_on_shutdown,
    .on_free = baseapp_free,
    .ops = &base_engine_ops,
    .options = base_db_options,
    .option_count = BASE_DB_OPTION_COUNT,
    .after_run = db_after_run,
    .on_process_death = on_process_death,
};
