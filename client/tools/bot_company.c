/* Whether a bot has company: bot_company.h. */
#include "bot_company.h"

#include <math.h>

bool bot_alone(const bot *bots, uint32_t count, uint32_t i, float radius_m)
{
    if (i >= count || bots[i].state != BOT_PLAY || !bots[i].have_pos)
        return false;
    float r = radius_m - BOT_COMPANY_MARGIN_M;
    if (r <= 0)
        return true;
    float r2 = r * r;
    mc_vector3 p = bots[i].pos;
    for (uint32_t j = 0; j < count; j++) {
        if (j == i || bots[j].state != BOT_PLAY || !bots[j].have_pos)
            continue;
        float dx = bots[j].pos.x - p.x, dz = bots[j].pos.z - p.z;
        if (dx * dx + dz * dz < r2)
            return false;
    }
    return true;
}

float bot_nearest_m(const bot *bots, uint32_t count, uint32_t i)
{
    if (i >= count || !bots[i].have_pos)
        return -1;
    float best = -1;
    for (uint32_t j = 0; j < count; j++) {
        if (j == i || bots[j].state != BOT_PLAY || !bots[j].have_pos)
            continue;
        float dx = bots[j].pos.x - bots[i].pos.x, dz = bots[j].pos.z - bots[i].pos.z;
        float d = sqrtf(dx * dx + dz * dz);
        if (best < 0 || d < best)
            best = d;
    }
    return best;
}
