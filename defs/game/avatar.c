/* Example game: the Avatar's base and cell handlers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "game.h"
#include "tagged.h"

int Avatar_base_onTimer(const mc_call_ctx *call, Avatar_base *self, uint32_t arg1, int64_t arg2)
{
    (void)call;
    (void)arg1;
    self->xp += arg2;
    return 0;
}

int Avatar_base_setAccount(const mc_call_ctx *call, Avatar_base *self, mc_mailbox_ref account)
{
    (void)call;
    if (!mc_mailbox_ref_is_none(&account) &&
        mc_mailbox_ref_component(&account) != MC_COMPONENT_BASE)
        return -1;
    self->account = account;
    return 0;
}

int Avatar_base_logout(const mc_call_ctx *call, Avatar_base *self)
{
    (void)call;
    memset(&self->account, 0, sizeof(self->account));
    return 0;
}

int Avatar_base_getName(const mc_call_ctx *call, Avatar_base *self, char **out_name)
{
    (void)call;
    *out_name = strdup(self->name ? self->name : "");
    return *out_name ? 0 : -1;
}

int Avatar_cell_addTag(const mc_call_ctx *call, Avatar_cell *self, const char *arg1)
{
    (void)call;
    return tagged_add(&self->tags, arg1);
}

/* Chat: the cell tells the speaker's client (the cellapp fans client calls of entities in
 * range out to every client that sees this entity). */
int Avatar_cell_chat(const mc_call_ctx *call, Avatar_cell *self, const char *text)
{
    (void)self;
    if (!text[0])
        return -1;
    mc_mailbox_ref to = call->self;
    mc_mailbox_ref_set_component(&to, MC_COMPONENT_CLIENT);
    return send_Avatar_client_onChat(call->sink, &to, call->caller_id, text);
}

int Avatar_cell_emote(const mc_call_ctx *call, Avatar_cell *self, uint16_t emoteId)
{
    (void)self;
    char text[32];
    snprintf(text, sizeof(text), "*emote %u*", (unsigned)emoteId);
    mc_mailbox_ref to = call->self;
    mc_mailbox_ref_set_component(&to, MC_COMPONENT_CLIENT);
    return send_Avatar_client_onChat(call->sink, &to, call->self.id, text);
}

int Avatar_cell_setTarget(const mc_call_ctx *call, Avatar_cell *self, const mc_value *target)
{
    (void)call;
    mc_value copy;
    if (mc_value_copy(&copy, target) != 0)
        return -1;
    mc_value_free(&self->target);
    self->target = copy;
    return 0;
}

int Avatar_cell_teleport(const mc_call_ctx *call, Avatar_cell *self, mc_vector3 position,
                         mc_vector3 direction)
{
    (void)call;
    (void)direction;
    self->spawnPoint = position;
    return 0;
}
