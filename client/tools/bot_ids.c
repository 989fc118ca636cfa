/* Entity id -> bot table (bot_ids.h), on the shared hash map (common/map.h). */
#include "bot_ids.h"

int bot_ids_init(bot_ids *m, uint32_t count)
{
    (void)count; /* the map grows as it needs */
    mc_map_init(&m->map);
    return 0;
}

void bot_ids_free(bot_ids *m) { mc_map_free(&m->map); }

int bot_ids_put(bot_ids *m, int32_t id, void *v)
{
    if (id <= 0 || !v)
        return -1;
    return mc_map_put(&m->map, (uint64_t)id, 0, v) ? 0 : -1;
}

void *bot_ids_get(const bot_ids *m, int32_t id)
{
    return id > 0 ? mc_map_get(&m->map, (uint64_t)id, 0) : NULL;
}
