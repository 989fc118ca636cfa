/* The processes the manager declared dead (by internal address): what the engine no longer
 * sends to, takes from, or waits on. A birth at an address makes it live again. */
#include "engine_internal.h"

#include <stdlib.h>

/* Per call: no text formatting, no scan of the peer table (the dead addresses are few). */
bool engine_peer_dead(const mc_engine *e, const mc_address *addr)
{
    for (size_t i = 0; i < e->ndead; i++)
        if (mc_address_equal(&e->dead[i], addr))
            return true;
    return false;
}

void engine_mark_peer(mc_engine *e, const char *addr, bool dead)
{
    mc_address a;
    if (mc_address_parse(addr, &a) != MC_OK)
        return;
    for (size_t i = 0; i < e->ndead; i++)
        if (mc_address_equal(&e->dead[i], &a)) {
            if (!dead)
                e->dead[i] = e->dead[--e->ndead];
            return;
        }
    if (!dead)
        return;
    if (e->ndead == e->dead_cap) {
        size_t cap = e->dead_cap ? e->dead_cap * 2 : 8;
        mc_address *d = realloc(e->dead, cap * sizeof *d);
        if (!d)
            return;
        e->dead = d;
        e->dead_cap = cap;
    }
    e->dead[e->ndead++] = a;
}
