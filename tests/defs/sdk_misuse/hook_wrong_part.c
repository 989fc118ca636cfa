/* expect: no previous prototype.*Hero_cell_onClientDeath */
#include "game.h"

/* onClientDeath is a base callback: on the cell it would never run. */
int Hero_cell_onClientDeath(const mc_call_ctx *call, Hero_cell *self)
{
    return call && self ? 0 : -1;
}
