/* The baseapp's owner: builds its parts in order (bases, persistence, login sessions, backups,
 * retiring, login preparation, clients), installs the hooks through which a lower part tells
 * or asks an upper one, and takes them down in the reverse order. */
#include "app.h"
#include "backup/backup.h"
#include "db/db.h"
#include "bases/bases.h"
#include "login/login_prepare.h"
#include "clients/proxy.h"
#include "retire/retire.h"

#include <stdio.h>
#include <stdlib.h>

const mc_option baseapp_part_options[BASEAPP_PART_OPTION_COUNT] = {
    BACKUP_OPTIONS,
    RETIRE_OPTIONS,
};

/* The base's new cell serves its client, if it has one (a witness). */
static void cell_live(mc_engine *e, mc_entity *ent)
{
    if (proxy_has_client(e, ent))
        proxy_world_attached(e, ent);
}

static void install_hooks(baseapp *a)
{
    a->bases = (base_hooks){
        .take_call = retire_take_call,
        .hold_call = backup_hold_call,
        .client_call = proxy_client_call,
        .after_call = proxy_after_call,
        .cell_space = db_note_cell_space,
        .cell_live = cell_live,
        .cell_change = db_on_cell_change,
    };
    a->db->hooks = (db_hooks){
        .has_dbid = backup_send_now,
        .is_leaving = retire_is_leaving,
        .owner_in_grace = backup_owner_in_grace,
        .taken_over = backup_count_takeover,
        .released_of_dead = backup_count_lost,
    };
    a->backup->is_leaving = retire_is_leaving;
    proxy_set_hooks(a->e, &(proxy_hooks){
                              .ticket_sent = backup_send_now,
                              .is_leaving = retire_is_leaving,
                              .moved_call = retire_take_client_call,
                          });
}

int baseapp_init(mc_engine *e, char *err, size_t errlen)
{
    baseapp *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    a->e = e;
    mc_engine_set_role_state(e, a);
    if (base_add_commands(e) != 0) {
        snprintf(err, errlen, "cannot publish the baseapp's commands");
        return -1;
    }
    if (base_db_init(e, &a->db, err, errlen) != 0 || app_sessions_init(a, err, errlen) != 0)
        return -1;
    if (base_restore_init(e, err, errlen) != 0 || backup_init(e, err, errlen) != 0 ||
        retire_init(e, err, errlen) != 0)
        return -1;
    if (login_prepare_init(e) != 0) {
        snprintf(err, errlen, "cannot publish the login/prepare watchers");
        return -1;
    }
    if (proxy_init(e, err, errlen) != 0)
        return -1;
    install_hooks(a);
    return 0;
}

void baseapp_on_shutdown(mc_engine *e)
{
    proxy_on_shutdown(e);
    db_on_shutdown(e);
}

void baseapp_free(mc_engine *e)
{
    baseapp *a = baseapp_of(e);
    if (!a)
        return;
    proxy_free(e);
    login_prepare_free(e);
    retire_free(e);
    backup_free(e);
    base_restore_free(e);
    base_db_free(a->db);
    a->db = NULL;
    app_sessions_free(a);
    mc_engine_set_role_state(e, NULL);
    free(a);
}
