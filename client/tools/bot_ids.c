/* Entity id -> bot table (bot_ids.h): linear probing, never shrinks, no deletion. */
#include "bot_ids.h"

#include <stdlib.h>

int bot_ids_init(bot_ids *m, uint32_t count)
{
    uint32_t cap = 16;
    while (cap < 2 * (uint64_t)count && cap < (1u << 30))
        cap <<= 1;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = calloc(cap, sizeof *m->vals);
    m->mask = cap - 1;
    m->n = 0;
    if (!m->keys || !m->vals) {
        bot_ids_free(m);
        return -1;
    }
    return 0;
}

void bot_ids_free(bot_ids *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->mask = m->n = 0;
}

static uint32_t slot_of(const bot_ids *m, int32_t id)
{
    uint32_t h = (uint32_t)id * 2654435761u;
    return (h ^ (h >> 16)) & m->mask;
}

int bot_ids_put(bot_ids *m, int32_t id, void *v)
{
    if (id <= 0 || !m->keys)
        return -1;
    for (uint32_t i = slot_of(m, id), probes = 0; probes <= m->mask;
         i = (i + 1) & m->mask, probes++) {
        if (m->keys[i] == id) {
            m->vals[i] = v;
            return 0;
        }
        if (m->keys[i] == 0) {
            if (m->n + 1 > (m->mask + 1) / 2 + (m->mask + 1) / 4)
                return -1; /* keep probes short: at most three quarters full */
            m->keys[i] = id;
            m->vals[i] = v;
            m->n++;
            return 0;
        }
    }
    return -1;
}

void *bot_ids_get(const bot_ids *m, int32_t id)
{
    if (id <= 0 || !m->keys)
        return NULL;
    for (uint32_t i = slot_of(m, id), probes = 0; probes <= m->mask;
         i = (i + 1) & m->mask, probes++) {
        if (m->keys[i] == id)
            return m->vals[i];
        if (m->keys[i] == 0)
            return NULL;
    }
    return NULL;
}
