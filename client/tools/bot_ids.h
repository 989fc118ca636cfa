/* Which bot of this bots process plays an entity: a fixed open-addressing table from the
 * avatar's entity id to its bot, filled as each bot's own cell entity arrives, so a bot that
 * sees another entity move can find the bot that moved it (update latency, bot.c). Sized at
 * start for the bot count; entries live as long as the bots array. No global state.
 */
#ifndef MC_CLIENT_BOT_IDS_H
#define MC_CLIENT_BOT_IDS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int32_t *keys;  /* 0: empty */
    void **vals;
    uint32_t mask, n;
} bot_ids;

/* Room for at least `count` ids (twice as many slots). 0, or -1 out of memory. */
int bot_ids_init(bot_ids *m, uint32_t count);
void bot_ids_free(bot_ids *m);
/* Add or replace id -> v (id > 0). -1 when full or id <= 0. */
int bot_ids_put(bot_ids *m, int32_t id, void *v);
/* The value for id, or NULL. */
void *bot_ids_get(const bot_ids *m, int32_t id);

#endif
