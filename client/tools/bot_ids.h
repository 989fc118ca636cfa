/* Which bot of this bots process plays an entity: the avatar's entity id -> its bot, filled
 * as each bot's own cell entity arrives, so a bot that sees another entity move can find the
 * bot that moved it (update latency, bot.c). On the shared hash map (common/map.h); entries
 * live as long as the bots array. No global state.
 */
#ifndef MC_CLIENT_BOT_IDS_H
#define MC_CLIENT_BOT_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "common/map.h"

typedef struct {
    mc_map map;
} bot_ids;

/* An empty table for about `count` bots (it grows as it needs). 0. */
int bot_ids_init(bot_ids *m, uint32_t count);
void bot_ids_free(bot_ids *m);
/* Add or replace id -> v (id > 0, v not NULL). -1 when out of memory or id <= 0. */
int bot_ids_put(bot_ids *m, int32_t id, void *v);
/* The value for id, or NULL. */
void *bot_ids_get(const bot_ids *m, int32_t id);

#endif
