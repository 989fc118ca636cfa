/* Entities as an engine holds them: one record per base (on a baseapp) or cell (on a
 * cellapp), kept in a table by entity id.
 *
 * A record owns the game's property struct of its part (props, <Type>_base or <Type>_cell)
 * and, on a base, the cellData struct (<Type>_cell) its next cell starts from. Records are
 * created and destroyed by the role (baseapp/, cellapp/) through the engine
 * (entity/engine.h); the table itself only finds them.
 */
#ifndef MC_ENTITY_ENTITY_H
#define MC_ENTITY_ENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/game_module.h"
#include "common/mailbox_ref.h"

typedef enum {
    MC_CELL_NONE = 0,     /* no cell */
    MC_CELL_CREATING,     /* CREATE_CELL sent, no answer yet */
    MC_CELL_LIVE,         /* the cell exists at `cell` */
    MC_CELL_DESTROYING,   /* DESTROY_CELL sent, CELL_GONE not yet received */
} mc_cell_state;

struct mc_space;
struct mc_queued_call;

typedef struct mc_entity {
    int32_t id;
    uint16_t type;
    mc_part part;                 /* MC_PART_BASE or MC_PART_CELL */
    const mc_game_type *gt;
    const mc_entity_type_def *td;
    void *props;
    bool destroying;              /* destroy requested: runs once the handler returns */
    bool in_reap;

    uint32_t *timers;             /* ids of its live timers */
    size_t ntimers, timers_cap;

    /* Base part. */
    void *cell_data;              /* <Type>_cell: what the next cell starts from */
    mc_vector3 cell_position, cell_direction;
    mc_cell_state cell_state;
    mc_mailbox_ref cell;          /* CELL mailbox while MC_CELL_LIVE / DESTROYING */
    int32_t cell_space;           /* the space its cell is in (CREATE_CELL's answer, then
                                   * CELL_COPY): where a restored cell goes; 0 none */
    struct mc_queued_call *cell_queue_head, *cell_queue_tail; /* calls waiting for the cell */
    size_t cell_queue_len;
    char **global_names;
    size_t nglobal_names;

    /* Cell part. */
    mc_mailbox_ref base;          /* BASE mailbox of its base */
    struct mc_space *space;
    mc_vector3 position, direction;
    size_t space_slot;            /* index in space->entities */
    int gone_why;                 /* mc_cell_gone_why told to the base; -1 once told */
    uint8_t move_state;           /* moving to another cellapp (cellapp/src/cell_move.c):
                                   * 0 no, 1 leaving (calls queued here), 2 arriving (calls
                                   * from others than the old cellapp held) */

    uint64_t copy_digest;         /* digest of the CELL_COPY last sent to its base (0: none;
                                   * cellapp/src/cell_copy.c) */

    bool is_ghost;                /* cellapp: a ghost of a real on another cellapp (no
                                   * timers, hooks or base; calls go to the real) */
    void *ghost_data;             /* cellapp: real: where its ghosts are; ghost: its real's
                                   * cellapp (cellapp/src/ghosts.c) */
    void *watch_ctx;              /* the engine's per-entity watcher contexts */
    void *role_data;              /* the role's own per-entity state (cellapp: AoI) */
    struct mc_entity *next_in_bucket;
} mc_entity;

/* A hash table id -> entity (chained, grows by doubling). */
typedef struct {
    mc_entity **buckets;
    size_t nbuckets;
    size_t count;
} mc_entity_table;

int mc_entity_table_init(mc_entity_table *t);
void mc_entity_table_free(mc_entity_table *t);
mc_entity *mc_entity_table_find(const mc_entity_table *t, int32_t id);
/* 0, or -1 when out of memory or the id is present already. */
int mc_entity_table_add(mc_entity_table *t, mc_entity *e);
void mc_entity_table_remove(mc_entity_table *t, mc_entity *e);
/* Visit every entity (the visitor must not add or remove entities). */
void mc_entity_table_each(const mc_entity_table *t, void (*fn)(void *ctx, mc_entity *e),
                          void *ctx);
/* Every entity as an array snapshot (heap, free()); NULL when empty or out of memory. */
mc_entity **mc_entity_table_snapshot(const mc_entity_table *t, size_t *n);

#endif
