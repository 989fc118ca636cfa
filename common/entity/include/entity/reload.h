/* Hot reload of the game module (command/reloadGame): what makes a rebuilt module fit to
 * replace the running one.
 *
 * A baseapp or cellapp swaps its game module between two turns of its event loop, never in
 * the middle of a dispatch: entity state lives in the engine (property structs allocated by
 * the old module's props_init, freed later by the new module's props_free), so the new
 * module must be generated from the same definitions (digest, checked by mc_game_open) and
 * lay out every property struct the same way. The engine (common/entity/src/reload.c)
 * checks that with mc_game_swap_check before it swaps; a module that fails it is refused
 * with the reason and the old one keeps running.
 */
#ifndef MC_ENTITY_RELOAD_H
#define MC_ENTITY_RELOAD_H

#include <stddef.h>

#include "common/game_module.h"

/* Can `next` replace `running` under live entities? Both already passed mc_game_check
 * against the process's definitions. Refused: a client-side table, another type count,
 * another name or id of a type, another property struct size of any part, another method
 * count. 0, or -1 with the reason in why. */
int mc_game_swap_check(const mc_game_module *running, const mc_game_module *next, char *why,
                       size_t whylen);

#endif
