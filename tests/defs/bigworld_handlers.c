/* Handlers of the BigWorld-style def set (tests/defs/bigworld), in the SDK's idioms: what
 * integration_persist_cell_identifier drives through real processes (enterWorld,
 * setPlayerName, leaveWorld) and what the rest of the types need to build. */
#include "game.h"

/* Being (the parent of both types): damage taken on the cell. */
static int take_damage(int32_t *health, int32_t amount)
{
    if (amount < 0)
        return MC_CALL_ERR_ARGS;
    *health = *health > amount ? *health - amount : 0;
    return MC_CALL_OK;
}

int Avatar_cell_takeDamage(const mc_call_ctx *call, Avatar_cell *self, int32_t amount,
                           int32_t source)
{
    return take_damage(&self->health, amount);
}

int Merchant_cell_takeDamage(const mc_call_ctx *call, Merchant_cell *self, int32_t amount,
                             int32_t source)
{
    return take_damage(&self->health, amount);
}

/* Chatter: what an Avatar says, every client that sees it hears. */
int Avatar_cell_say(const mc_call_ctx *call, Avatar_cell *self, const char *text)
{
    mc_clients all = mc_allClients(call);
    return fanout_Avatar_client_chat(call->sink, &all, call->self.id, text);
}

/* The player's name lives on the cell (ALL_CLIENTS) and is the Avatar's Identifier: the base
 * writes it with its own properties and finds the Avatar by it. */
int Avatar_cell_setPlayerName(const mc_call_ctx *call, Avatar_cell *self, const char *name)
{
    if (!name[0])
        return MC_CALL_ERR_ARGS;
    return mc_str_set(&self->playerName, name);
}

int Avatar_base_enterWorld(const mc_call_ctx *call, Avatar_base *self)
{
    return mc_createInNewSpace(call, NULL, NULL);
}

int Avatar_base_leaveWorld(const mc_call_ctx *call, Avatar_base *self)
{
    return mc_destroyCellEntity(call);
}

/* logOff: the cell goes first; the base follows in onLoseCell. */
int Avatar_base_logOff(const mc_call_ctx *call, Avatar_base *self)
{
    mc_mailbox_ref cell = mc_base_cell(call);
    return mc_mailbox_ref_is_none(&cell) ? mc_destroy(call) : mc_destroyCellEntity(call);
}

int Merchant_base_restock(const mc_call_ctx *call, Merchant_base *self, uint16_t itemType,
                          uint8_t count)
{
    mc_value *stack;
    int rc = INVENTORY_append(&self->stock, &stack);
    if (rc == MC_CALL_OK && (rc = ITEM_STACK_set_itemType(stack, itemType)) == MC_CALL_OK)
        rc = ITEM_STACK_set_count(stack, count);
    return rc;
}
