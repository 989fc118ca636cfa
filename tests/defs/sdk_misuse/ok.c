/* A hook and a handler spelt as the generated prototypes say: it builds. */
#include "game.h"

int Hero_base_onCreated(const mc_call_ctx *call, Hero_base *self)
{
    return call && self ? 0 : -1;
}

int Hero_base_give(const mc_call_ctx *call, Hero_base *self, const mc_value *slots)
{
    return call && self && slots ? 0 : -1;
}
