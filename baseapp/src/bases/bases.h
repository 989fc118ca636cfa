/* The baseapp's part of the entity engine: base entities, their cells (created, lost,
 * destroyed), the calls they relay to their cells, creation on request, globally named
 * bases. The part bases/ of the baseapp, built on common/entity (entity/engine.h): the
 * lowest part, it reaches the parts above it only through base_hooks (app.h). */
#ifndef MC_BASEAPP_H
#define MC_BASEAPP_H

#include "entity/engine.h"
#include "mercury/status.h"

/* A call waiting for a cell that is being created. */
typedef struct mc_queued_call {
    struct mc_queued_call *next;
    mc_origin origin;
    mc_call_header header;
    size_t len;
    uint8_t args[];
} mc_queued_call;

extern const mc_role_part base_role_part;
extern const mc_engine_ops base_engine_ops;

/* base_calls.c */
void base_on_call(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                  const uint8_t *args, size_t len);
/* Relay the queued calls to the new cell, or fail them all with status and reason. */
void base_flush_cell_queue(mc_engine *e, mc_entity *ent);
void base_fail_cell_queue(mc_engine *e, mc_entity *ent, int status, const char *reason);

/* base_create.c */
void base_on_create_base(mc_engine *e, const mc_origin *o, mc_istream *is);
/* Create a base here now: properties given by index (checked), onCreated run. Returns the
 * entity, or NULL with a status and reason. */
mc_entity *base_create(mc_engine *e, uint16_t type, const uint16_t *indices,
                       const mc_value *values, size_t n, int *status, char *why,
                       size_t whylen);
/* The same without running onCreated (the caller runs it once the base is set up). */
mc_entity *base_create_quiet(mc_engine *e, uint16_t type, const uint16_t *indices,
                             const mc_value *values, size_t n, int *status, char *why,
                             size_t whylen);
int base_op_create_locally(const mc_call_ctx *call, const char *type,
                           const mc_prop_init *props, size_t nprops, mc_mailbox_ref *out);
int base_op_create_anywhere(const mc_call_ctx *call, const char *type,
                            const mc_prop_init *props, size_t nprops, mc_create_fn fn,
                            void *ud);
int base_op_create_remotely(const mc_call_ctx *call, const mc_mailbox_ref *where,
                            const char *type, const mc_prop_init *props, size_t nprops,
                            mc_create_fn fn, void *ud);
/* Encode a CREATE_BASE payload (type, properties by index). */
int base_encode_create(mc_engine *e, uint16_t type, const uint16_t *indices,
                       const mc_value *values, size_t n, mc_ostream *os, char *why,
                       size_t whylen);
/* Send a CREATE_BASE to the baseapp at addr (NULL: the least-loaded); done gets the
 * outcome exactly once unless the engine is freed first (then with MC_CALL_ERR_UNAVAILABLE). */
typedef void (*base_created_fn)(mc_engine *e, void *ctx, int status, const mc_mailbox_ref *mb,
                                const char *reason);
int base_create_on(mc_engine *e, const char *addr, const uint8_t *payload, size_t len,
                   base_created_fn done, void *ctx);

/* base_cells.c */
int base_op_create_cell(const mc_call_ctx *call, const mc_mailbox_ref *near,
                        const mc_vector3 *position, const mc_vector3 *direction);
int base_op_create_in_new_space(const mc_call_ctx *call, const mc_vector3 *position,
                                const mc_vector3 *direction);
int base_op_destroy_cell(const mc_call_ctx *call);
/* Destroy a base's live cell (DESTROY_CELL; the base hears CELL_GONE): MC_CALL_ERR_STATE
 * unless the cell is live. */
int base_destroy_cell(mc_engine *e, mc_entity *ent);
/* The same as base_op_create_cell / base_op_create_in_new_space for a base of this baseapp
 * outside its handlers (the engine restoring a loaded base's cell, db_cells.c). */
int base_create_cell(mc_engine *e, mc_entity *ent, const mc_mailbox_ref *near,
                     const mc_vector3 *position, const mc_vector3 *direction);
int base_create_in_new_space(mc_engine *e, mc_entity *ent, const mc_vector3 *position,
                             const mc_vector3 *direction);
void base_on_cell_gone(mc_engine *e, const mc_origin *o, mc_istream *is);
/* CELL_MOVED: the cell went to another cellapp (a teleport); only from its current one. */
void base_on_cell_moved(mc_engine *e, const mc_origin *o, mc_istream *is);
void base_on_peer_death(mc_engine *e, const char *addr);
/* The base has no cell any more: onLoseCell (why: for the log). */
void base_lose_cell(mc_engine *e, mc_entity *ent, const char *why);
/* RESTORE_CELL for ent into `space` on the cellapp at addr (its answer ends in
 * base_restore_done or base_restore_failed). 0 or an mc_call_status. */
int base_send_restore_cell(mc_engine *e, mc_entity *ent, const mc_address *addr, int32_t space);

/* base_restore.c: cells restored after their cellapp died (docs/WORLD.md "Cells restored"):
 * the copy of its cell a base keeps (CELL_COPY), and the restore. */
#define BASE_RESTORE_OPTION_COUNT 1
extern const mc_option base_restore_options[BASE_RESTORE_OPTION_COUNT];
int base_restore_init(mc_engine *e, char *err, size_t errlen);
void base_restore_free(mc_engine *e);
void base_on_cell_copy(mc_engine *e, const mc_origin *o, mc_istream *is);
/* These bases' cells were on a cellapp that died (ids: they may go meanwhile): each is
 * restored from its copy, or hears onLoseCell. */
void base_restore_lost(mc_engine *e, const int32_t *ids, size_t n);
void base_restore_done(mc_engine *e, mc_entity *ent);
void base_restore_failed(mc_engine *e, mc_entity *ent, int status, const char *why);
/* entities/<id>/cellCopy: "space S at X Y Z" (where its cell is, or comes back). */
void base_restore_add_entity_watchers(mc_engine *e, const char *dir, void *ref);

/* base_globals.c */
int base_op_register_globally(const mc_call_ctx *call, const char *name, mc_done_fn fn,
                              void *ud);
int base_op_deregister_globally(const mc_call_ctx *call, const char *name);
int base_op_look_up(const mc_call_ctx *call, const char *name, mc_lookup_fn fn, void *ud);
/* A restored base registers a name it had again (the manager dropped it with its dead
 * baseapp); remembered once the manager says OK, logged otherwise. */
int base_globals_register_restored(mc_engine *e, mc_entity *ent, const char *name);
/* Drop an entity's names (destroyed): tells the manager unless the engine is freeing. */
void base_drop_globals(mc_engine *e, mc_entity *ent);

/* base_commands.c */
int base_add_commands(mc_engine *e);

#endif
