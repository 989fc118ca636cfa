/* Whether a bot has company: another bot of this process walking within its view radius, so
 * that its client must hear world updates (the other's moves). A bot with nobody in view
 * hears nothing, fault or not: the fault watch (fault_watch.h) does not count such a silence
 * against it. Only bots of this process are known (other entities in the world are not):
 * with other players about, a bot is sometimes taken for alone when it is not, never the
 * other way round.
 */
#ifndef MC_CLIENT_BOT_COMPANY_H
#define MC_CLIENT_BOT_COMPANY_H

#include <stdbool.h>
#include <stdint.h>

#include "bot.h"

/* Company within the view radius less this margin (the positions the server holds lag the
 * bots' own by a move or so, and a view takes newcomers at its next update). */
#define BOT_COMPANY_MARGIN_M 2.0f

/* True when bots[i] walks (BOT_PLAY) and no other walking bot of bots[0..count) stands
 * within radius_m - BOT_COMPANY_MARGIN_M of it (x and z). */
bool bot_alone(const bot *bots, uint32_t count, uint32_t i, float radius_m);

/* The distance (x and z) from bots[i] to the nearest other walking bot, or -1 when none. */
float bot_nearest_m(const bot *bots, uint32_t count, uint32_t i);

#endif
