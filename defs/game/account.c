/* Example game: the Account proxy's base handlers. */
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/entity_api.h"
#include "game.h"

#define AVATAR_NAME_MAX 32u

/* The Account's own client, reached through its base. */
static mc_mailbox_ref own_client(const mc_call_ctx *call)
{
    mc_mailbox_ref to = call->self;
    mc_mailbox_ref_set_component(&to, MC_COMPONENT_CLIENT);
    return to;
}

static int find_avatar(const Account_base *self, const char *name)
{
    for (uint32_t i = 0; i < self->avatars.as.list.count; i++) {
        const mc_value *summary = &self->avatars.as.list.items[i];
        if (!strcmp(summary->as.list.items[0].as.bytes.data, name))
            return (int)i;
    }
    return -1;
}

/* selectAvatar: the player picks one of its avatars; it is created here and the Account
 * hands it its client (giveClientTo): the client's player is the Avatar from now on. */
int Account_base_selectAvatar(const mc_call_ctx *call, Account_base *self, const char *name)
{
    mc_mailbox_ref client = own_client(call);
    if (find_avatar(self, name) < 0)
        return send_Account_client_onSelectFailed(call->sink, &client, "no such avatar");
    self->lastLogin = (int64_t)(mc_clock_now_us() / 1000000u);
    mc_value v = mc_gen_str(MC_TYPE_STRING, name);
    mc_prop_init props[] = {{"name", &v}};
    mc_mailbox_ref avatar;
    if (mc_createBaseLocally(call, "Avatar", props, 1, &avatar) != MC_CALL_OK)
        return send_Account_client_onSelectFailed(call->sink, &client, "cannot create it");
    self->avatar = avatar;
    mc_mailbox_ref me = call->self;
    mc_mailbox_ref_set_component(&me, MC_COMPONENT_BASE);
    send_Avatar_base_setAccount(call->sink, &avatar, me);
    return mc_giveClientTo(call, &avatar) == MC_CALL_OK ? 0 : -1;
}

/* A client has this Account as its player (it connected): it hears its avatars. */
int Account_base_onEntitiesEnabled(const mc_call_ctx *call, Account_base *self)
{
    mc_mailbox_ref client = own_client(call);
    return send_Account_client_onAvatarList(call->sink, &client, &self->avatars);
}

/* The player left the world from its Avatar (which had the client): the Account goes too, so
 * that the account can log in again. */
int Account_base_avatarLoggedOff(const mc_call_ctx *call, Account_base *self)
{
    (void)self;
    return mc_destroy(call);
}

/* Its client went (logged off, or silent too long) while the Account was its player: the
 * Account goes too (written a last time when it has a database id). */
int Account_base_onClientDeath(const mc_call_ctx *call, Account_base *self)
{
    (void)self;
    return mc_destroy(call);
}

int Account_base_createAvatar(const mc_call_ctx *call, Account_base *self, const char *name,
                              const mc_value *look)
{
    mc_mailbox_ref client = own_client(call);
    (void)look;
    if (!name[0] || strlen(name) > AVATAR_NAME_MAX)
        return send_Account_client_onSelectFailed(call->sink, &client, "bad avatar name");
    if (find_avatar(self, name) >= 0)
        return send_Account_client_onSelectFailed(call->sink, &client, "name taken");
    mc_value fields[2];
    if (mc_value_set_bytes(&fields[0], MC_TYPE_STRING, name, strlen(name)) != 0)
        return -1;
    fields[1] = mc_gen_uint(MC_TYPE_UINT8, 1);
    mc_value summary = {.kind = MC_TYPE_FIXED_DICT};
    summary.as.list.items = fields;
    summary.as.list.count = 2;
    int rc = mc_value_append(&self->avatars, &summary);
    mc_value_free(&fields[0]);
    if (rc != 0)
        return -1;
    return send_Account_client_onAvatarList(call->sink, &client, &self->avatars);
}

int Account_base_getAvatarCount(const mc_call_ctx *call, Account_base *self, uint16_t *out_count)
{
    (void)call;
    *out_count = (uint16_t)self->avatars.as.list.count;
    return 0;
}

/* play: the Account creates its Avatar on the least-loaded baseapp and introduces itself. */
static void on_avatar_created(const mc_call_ctx *call, void *ud, int status, mc_mailbox_ref base,
                              const char *reason)
{
    (void)ud;
    (void)reason;
    Account_base *self = mc_self(call);
    if (!self || status != MC_CALL_OK)
        return;
    self->avatar = base;
    mc_mailbox_ref me = call->self;
    mc_mailbox_ref_set_component(&me, MC_COMPONENT_BASE);
    send_Avatar_base_setAccount(call->sink, &base, me);
}

static int create_avatar(const mc_call_ctx *call, const char *name)
{
    mc_value v = mc_gen_str(MC_TYPE_STRING, name);
    mc_prop_init props[] = {{"name", &v}};
    return mc_createBaseAnywhere(call, "Avatar", props, 1, on_avatar_created, NULL);
}

/* The Avatar of that name was looked up in the database: loaded (or live already) on the
 * least-loaded baseapp, or a new one when there is none. */
static void on_avatar_loaded(const mc_call_ctx *call, void *ud, int status, mc_mailbox_ref base,
                             int64_t dbid, bool was_live, const char *reason)
{
    char *name = ud;
    (void)dbid;
    (void)was_live;
    if (status == MC_CALL_OK)
        on_avatar_created(call, NULL, status, base, reason);
    else if (status == MC_CALL_ERR_NOT_FOUND && mc_self(call))
        create_avatar(call, name);
    free(name);
}

int Account_base_play(const mc_call_ctx *call, Account_base *self, const char *name)
{
    (void)self;
    if (!name[0] || strlen(name) > AVATAR_NAME_MAX)
        return -1;
    /* Avatars are persistent: load this one (by its Identifier, its name) if it was ever
     * written; without a database, create it. */
    char *copy = strdup(name);
    if (copy && mc_createBaseAnywhereFromDBByName(call, "Avatar", name, on_avatar_loaded,
                                                  copy) == MC_CALL_OK)
        return 0;
    free(copy);
    return create_avatar(call, name) == MC_CALL_OK ? 0 : -1;
}
