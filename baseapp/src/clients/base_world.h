/* The baseapp's end of world updates (entity/world_wire.h): a cellapp sends, per tick, the
 * records a witness's client should get (CLIENT_UPDATE); the base of that witness checks
 * they come from its own live cell and hands them to its client (reliable or volatile).
 * Watchers world/{updatesIn,bytesIn,noClient,stale,refused}. */
#ifndef MC_BASEAPP_BASE_WORLD_H
#define MC_BASEAPP_BASE_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "entity/engine.h"

typedef struct {
    uint64_t updates, bytes, no_client, stale, refused;
} base_world_stats;

/* Publish the watchers (0 or -1; proxy_init). */
int base_world_add_watchers(mc_engine *e);
void base_on_client_update(mc_engine *e, const mc_origin *o, mc_istream *is);
/* Hand records to the base's client: 0, or -1 when it has none (they are dropped: its
 * client, when one comes, is sent its view afresh). */
int base_world_to_client(mc_engine *e, mc_entity *ent, bool is_volatile, const uint8_t *bytes,
                         size_t len);

#endif
