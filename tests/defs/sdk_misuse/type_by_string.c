/* expect: create_Heroo_locally */
#include "game.h"

/* A misspelt entity type in a creation: no such function. */
int Hero_base_give(const mc_call_ctx *call, Hero_base *self, const mc_value *slots)
{
    mc_mailbox_ref made;
    return self && slots ? create_Heroo_locally(call, NULL, &made) : -1;
}
