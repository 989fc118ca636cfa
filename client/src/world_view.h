/* What the player's cell sees, as the client library keeps it (mcclient/client.h): the
 * entities in view (id, type, position, direction), and the player's own cell entity, kept
 * up to date from the world update records (entity/world_wire.h). Internal to the library. */
#ifndef MC_CLIENT_WORLD_VIEW_H
#define MC_CLIENT_WORLD_VIEW_H

#include "mcclient/client.h"

typedef struct {
    mc_client_entity *e;   /* sorted by id */
    size_t n, cap;
    mc_client_entity player;
    bool has_player_cell;
} world_view;

void world_view_clear(world_view *v);
void world_view_free(world_view *v);
/* Apply a run of records; each one applied is handed to fn (may be NULL) after the view
 * changed (a LEAVE before the entity goes). 0, or -1 with the reason (the records before
 * the bad one were applied). */
int world_view_apply(world_view *v, const mc_entity_defs *defs, int32_t player_id,
                     uint16_t player_type, const uint8_t *data, size_t len,
                     void (*fn)(void *ctx, const mc_world_record *r), void *ctx, char *why,
                     size_t whylen);
const mc_client_entity *world_view_find(const world_view *v, int32_t id);

#endif
