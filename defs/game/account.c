/* Example game: the Account proxy's base handlers.
 *
 * The idioms of the SDK, one per thing (docs/ENTITIES.md, "Writing a game"):
 *   - a handler returns a status: MC_CALL_OK (0) or the failing call's;
 *   - my own client is mc_ownClient(call), my own mailbox call->self;
 *   - containers through their generated accessors (AVATAR_LIST_*, AVATAR_SUMMARY_*);
 *   - entities created and loaded by type (create_Avatar_*, load_Avatar_*), with their
 *     starting properties in an Avatar_new. */
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "game.h"

#define AVATAR_NAME_MAX 32u

/* The index of the Account's avatar of that name, or -1. */
static int find_avatar(const Account_base *self, const char *name)
{
    for (uint32_t i = 0; i < AVATAR_LIST_count(&self->avatars); i++) {
        const mc_value *summary;
        const char *have;
        if (AVATAR_LIST_at(&self->avatars, i, &summary) == MC_CALL_OK &&
            AVATAR_SUMMARY_get_name(summary, &have) == MC_CALL_OK && !strcmp(have, name))
            return (int)i;
    }
    return -1;
}

/* Tell the player why its choice was refused. */
static int refuse(const mc_call_ctx *call, const char *reason)
{
    mc_mailbox_ref client = mc_ownClient(call);
    return send_Account_client_onSelectFailed(call->sink, &client, reason);
}

/* A new Avatar's starting properties: every default but its name. */
static int avatar_named(const mc_call_ctx *call, const char *name, Avatar_new *props)
{
    int rc = init_Avatar_new(call, props);
    if (rc == MC_CALL_OK && (rc = mc_str_set(&props->base.name, name)) != MC_CALL_OK)
        free_Avatar_new(props);
    return rc;
}

/* selectAvatar: the player picks one of its avatars; it is created here and the Account
 * hands it its client (giveClientTo): the client's player is the Avatar from now on. */
int Account_base_selectAvatar(const mc_call_ctx *call, Account_base *self, const char *name)
{
    if (find_avatar(self, name) < 0)
        return refuse(call, "no such avatar");
    self->lastLogin = (int64_t)(mc_clock_now_us() / 1000000u);
    Avatar_new props;
    mc_mailbox_ref avatar;
    int rc = avatar_named(call, name, &props);
    if (rc != MC_CALL_OK)
        return rc;
    rc = create_Avatar_locally(call, &props, &avatar);
    free_Avatar_new(&props);
    if (rc != MC_CALL_OK)
        return refuse(call, "cannot create it");
    self->avatar = avatar;
    send_Avatar_base_setAccount(call->sink, &avatar, call->self);
    return mc_giveClientTo(call, &avatar);
}

/* A client has this Account as its player (it connected): it hears its avatars. */
int Account_base_onEntitiesEnabled(const mc_call_ctx *call, Account_base *self)
{
    mc_mailbox_ref client = mc_ownClient(call);
    return send_Account_client_onAvatarList(call->sink, &client, &self->avatars);
}

/* The player left the world from its Avatar (which had the client): the Account goes too, so
 * that the account can log in again. */
int Account_base_avatarLoggedOff(const mc_call_ctx *call, Account_base *self)
{
    return mc_destroy(call);
}

/* Its client went (logged off, or silent too long) while the Account was its player: the
 * Account goes too (written a last time when it has a database id). */
int Account_base_onClientDeath(const mc_call_ctx *call, Account_base *self)
{
    return mc_destroy(call);
}

/* createAvatar: a new summary in the Account's list (level 1); the client hears the list. */
int Account_base_createAvatar(const mc_call_ctx *call, Account_base *self, const char *name,
                              const mc_value *look)
{
    if (!name[0] || strlen(name) > AVATAR_NAME_MAX)
        return refuse(call, "bad avatar name");
    if (find_avatar(self, name) >= 0)
        return refuse(call, "name taken");
    mc_value *summary;
    int rc = AVATAR_LIST_append(&self->avatars, &summary);
    if (rc != MC_CALL_OK)
        return rc;
    if ((rc = AVATAR_SUMMARY_set_name(summary, name)) != MC_CALL_OK ||
        (rc = AVATAR_SUMMARY_set_level(summary, 1)) != MC_CALL_OK) {
        AVATAR_LIST_remove(&self->avatars, AVATAR_LIST_count(&self->avatars) - 1);
        return rc;
    }
    mc_mailbox_ref client = mc_ownClient(call);
    return send_Account_client_onAvatarList(call->sink, &client, &self->avatars);
}

int Account_base_getAvatarCount(const mc_call_ctx *call, Account_base *self, uint16_t *out_count)
{
    *out_count = (uint16_t)AVATAR_LIST_count(&self->avatars);
    return MC_CALL_OK;
}

/* play: the Account's Avatar exists (created or loaded): it learns its Account. */
static void on_avatar_created(const mc_call_ctx *call, void *ud, int status, mc_mailbox_ref base,
                              const char *reason)
{
    Account_base *self = mc_self(call);
    if (!self || status != MC_CALL_OK)
        return;
    self->avatar = base;
    send_Avatar_base_setAccount(call->sink, &base, call->self);
}

/* A new Avatar of that name on the least-loaded baseapp. */
static int create_avatar(const mc_call_ctx *call, const char *name)
{
    Avatar_new props;
    int rc = avatar_named(call, name, &props);
    if (rc != MC_CALL_OK)
        return rc;
    rc = create_Avatar_anywhere(call, &props, on_avatar_created, NULL);
    free_Avatar_new(&props);
    return rc;
}

/* The Avatar of that name was looked up in the database: loaded (or live already) on the
 * least-loaded baseapp, or a new one when there is none. */
static void on_avatar_loaded(const mc_call_ctx *call, void *ud, int status, mc_mailbox_ref base,
                             int64_t dbid, bool was_live, const char *reason)
{
    char *name = ud;
    if (status == MC_CALL_OK)
        on_avatar_created(call, NULL, status, base, reason);
    else if (status == MC_CALL_ERR_NOT_FOUND && mc_self(call))
        create_avatar(call, name);
    free(name);
}

/* play: the Account's Avatar of that name, on the least-loaded baseapp. Avatars are
 * persistent: the one of that name (its Identifier) is loaded if it was ever written;
 * without a database a new one is created. */
int Account_base_play(const mc_call_ctx *call, Account_base *self, const char *name)
{
    if (!name[0] || strlen(name) > AVATAR_NAME_MAX)
        return MC_CALL_ERR_ARGS;
    char *copy = strdup(name);
    if (copy && load_Avatar_anywhere_by_name(call, name, on_avatar_loaded, copy) == MC_CALL_OK)
        return MC_CALL_OK;
    free(copy);
    return create_avatar(call, name);
}
