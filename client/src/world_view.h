/* What the player's cell sees, as the client library keeps it (mcclient/client.h): the
 * entities in view (id, type, position, direction), and the player's own cell entity, kept
 * up to date from the world update records (entity/world_wire.h). Internal to the library. */
#ifndef MC_CLIENT_WORLD_VIEW_H
#define MC_CLIENT_WORLD_VIEW_H

#include "mcclient/client.h"

typedef struct {
    mc_client_entity *e;   /* sorted by id */
    uint32_t *stamp;       /* per entity (same slots): the newest VOLATILE stamp applied */
    size_t n, cap;
    mc_client_entity player;
    bool has_player_cell;
    uint32_t newest;       /* the newest VOLATILE stamp received (0: none yet) */
    uint64_t stale;        /* VOLATILE records ignored: older than one already applied */
} world_view;

void world_view_clear(world_view *v);
void world_view_free(world_view *v);
/* Apply a run of records; each one applied is handed to fn (may be NULL) after the view
 * changed (a LEAVE before the entity goes). stamp: the WORLD_VOLATILE message's stamp for a
 * volatile run (0 for a reliable one): a VOLATILE record of an entity is ignored (not
 * applied, not handed to fn, counted in stale) unless its stamp is newer (serial order)
 * than the last one applied to that entity, or than the newest received when the entity
 * entered. 0, or -1 with the reason (the records before the bad one were applied). */
int world_view_apply(world_view *v, const mc_entity_defs *defs, int32_t player_id,
                     uint16_t player_type, uint32_t stamp, const uint8_t *data, size_t len,
                     void (*fn)(void *ctx, const mc_world_record *r), void *ctx, char *why,
                     size_t whylen);
const mc_client_entity *world_view_find(const world_view *v, int32_t id);

#endif
