/* expect: conflicting types.*Hero_base_onTimer */
#include "game.h"

int Hero_base_onTimer(const mc_call_ctx *call, Hero_base *self, uint32_t timerId)
{
    return call && self && timerId ? 0 : -1;
}
