/* expect: no previous prototype.*Hero_base_giv */
#include "game.h"

int Hero_base_giv(const mc_call_ctx *call, Hero_base *self, const mc_value *slots)
{
    return call && self && slots ? 0 : -1;
}
