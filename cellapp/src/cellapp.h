/* The cellapp's part of the entity engine: spaces and the cell entities in them, created
 * for bases (CREATE_CELL), destroyed on request (DESTROY_CELL), by themselves or with their
 * space, each telling its base (CELL_GONE); calls relayed to bases (BASE_VIA_CELL,
 * CLIENT_VIA_CELL). Built on common/entity (entity/engine.h). */
#ifndef MC_CELLAPP_H
#define MC_CELLAPP_H

#include "entity/engine.h"
#include "mercury/status.h"

typedef struct mc_space {
    int32_t id;
    mc_entity **entities;
    size_t n, cap;
    uint64_t n_watch;   /* entities, for the watcher */
} mc_space;

typedef struct {
    mc_space **spaces;
    size_t n, cap;
    uint64_t created, destroyed;
} cell_state;

extern const mc_role_part cell_role_part;

/* spaces.c */
mc_space *space_find(mc_engine *e, int32_t id);
mc_space *space_new(mc_engine *e, int32_t id);
int space_add(mc_engine *e, mc_space *sp, mc_entity *ent);
/* Take an entity out of its space; an empty space goes. */
void space_remove(mc_engine *e, mc_entity *ent);
/* Destroy every cell in the space (onSpaceGone first). */
void space_destroy(mc_engine *e, mc_space *sp);
int space_add_watchers(mc_engine *e);
void spaces_free(mc_engine *e);

/* cell_calls.c */
void cell_on_call(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                  const uint8_t *args, size_t len);

/* cell_create.c */
void cell_on_create_cell(mc_engine *e, const mc_origin *o, mc_istream *is);
void cell_on_destroy_cell(mc_engine *e, const mc_origin *o, mc_istream *is);
/* cell_fetch.c: FETCH_CELL, the cell part of a base's writeToDB. */
void cell_on_fetch_cell(mc_engine *e, const mc_origin *o, mc_istream *is);

/* Tell the base its cell is gone (once), with the cell's last properties. */
void cell_tell_base_gone(mc_engine *e, mc_entity *ent, mc_cell_gone_why why);

#endif
