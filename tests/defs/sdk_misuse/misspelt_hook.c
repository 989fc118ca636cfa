/* expect: no previous prototype.*Hero_base_onCreatd */
#include "game.h"

int Hero_base_onCreatd(const mc_call_ctx *call, Hero_base *self)
{
    return call && self ? 0 : -1;
}
