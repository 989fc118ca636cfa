/* expect: static declaration.*Hero_base_onDestroy */
#include "game.h"

/* static: the module's table could never reach it. */
static int Hero_base_onDestroy(const mc_call_ctx *call, Hero_base *self)
{
    return call && self ? 0 : -1;
}
