/* The cells of loaded bases: a base whose record was written while it had a cell (its
 * record names a space) gets its cell back when it is loaded, with its persistent cell
 * properties (cellData), position and direction as written - unless the game gave it a
 * cell itself in onCreated or in the load's callback (the restore runs from the loop, just
 * after). Where: in the space of the record when this baseapp knows a live cell in it
 * (CREATE_CELL near that cell); otherwise in a new space on the least-loaded cellapp, which
 * then stands for the stored space here: the other bases of that space loaded here join it,
 * so the entities of a space come back together. While the first one's cell is being
 * created the others wait for it (bounded), then go to a new space of their own.
 * Only with --restoreCells (off by default: every cell is left to the game);
 * docs/ENTITIES.md. */
#include "db.h"
#include "common/log.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define RESTORE_RETRY_MS 100
#define RESTORE_TRIES 100 /* 10 s waiting for the cell a space's first restore creates */

typedef struct db_restore {
    struct db_restore *prev, *next;
    base_db *db;
    int32_t id;
    int64_t space;    /* the space in the record */
    int tries;
    struct event *ev;
} db_restore;

static void restore_drop(db_restore *op)
{
    base_db *db = op->db;
    if (op->prev)
        op->prev->next = op->next;
    else if (db->restores == op)
        db->restores = op->next;
    if (op->next)
        op->next->prev = op->prev;
    if (op->ev)
        event_free(op->ev);
    free(op);
}

void db_restores_free(base_db *db)
{
    while (db->restores)
        restore_drop(db->restores);
    mc_map_free(&db->space_anchor);
}

/* The base standing for a space here: alive, with its cell live or being created. */
static mc_entity *anchor_of(base_db *db, int64_t space)
{
    if (space <= 0)
        return NULL;
    int32_t id = (int32_t)(intptr_t)mc_map_get(&db->space_anchor, (uint64_t)space, 0);
    mc_entity *a = id ? mc_engine_find(db->e, id) : NULL;
    if (!a || a->in_reap || a->part != MC_PART_BASE ||
        (a->cell_state != MC_CELL_LIVE && a->cell_state != MC_CELL_CREATING)) {
        if (id)
            mc_map_remove(&db->space_anchor, (uint64_t)space, 0);
        return NULL;
    }
    return a;
}

static void set_anchor(base_db *db, int64_t space, int32_t id)
{
    if (space > 0 && id > 0 &&
        !mc_map_put(&db->space_anchor, (uint64_t)space, 0, (void *)(intptr_t)id))
        MC_WARNING("persistence: out of memory noting space %lld", (long long)space);
}

void db_note_cell_space(mc_engine *e, int32_t id, int32_t space)
{
    base_db *db = base_db_of(e);
    if (!db || space <= 0)
        return;
    db_rec *rec = db_rec_of(db, id);
    if (rec)
        rec->space_id = space;
    if (!anchor_of(db, space))
        set_anchor(db, space, id);
}

static void restore_try(db_restore *op);

static void on_retry(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    restore_try(ctx);
}

static void restore_later(db_restore *op, int ms)
{
    if (!op->ev)
        op->ev = event_new(mc_server_event_base(mc_engine_server(op->db->e)), -1, 0, on_retry,
                           op);
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    if (!op->ev || event_add(op->ev, &tv) != 0) {
        MC_WARNING("persistence: entity %d: cannot arm a timer to restore its cell",
                   (int)op->id);
        restore_drop(op);
    }
}

static void restore_try(db_restore *op)
{
    base_db *db = op->db;
    mc_entity *ent = mc_engine_find(db->e, op->id);
    if (!ent || ent->in_reap || ent->destroying || ent->cell_state != MC_CELL_NONE ||
        db->shutting_down || mc_engine_freeing(db->e)) {
        restore_drop(op); /* gone, or the game gave it a cell (or is destroying it) */
        return;
    }
    db_rec *rec = db_rec_of(db, ent->id);
    mc_entity *a = anchor_of(db, op->space);
    if (a && a->cell_state == MC_CELL_CREATING && ++op->tries < RESTORE_TRIES) {
        restore_later(op, RESTORE_RETRY_MS); /* the space's first cell is on its way */
        return;
    }
    int rc;
    if (a && a->cell_state == MC_CELL_LIVE) {
        rc = base_create_cell(db->e, ent, &a->cell, NULL, NULL);
        MC_INFO("persistence: %s %d (database id %llu): restoring its cell in space %lld, "
                "near entity %d: %s", ent->td->name, (int)ent->id,
                (unsigned long long)(rec ? rec->dbid : 0), (long long)op->space, (int)a->id,
                mc_call_status_name(rc));
    } else {
        rc = base_create_in_new_space(db->e, ent, NULL, NULL);
        MC_INFO("persistence: %s %d (database id %llu): restoring its cell in a new space "
                "(no live cell of its space %lld here): %s", ent->td->name, (int)ent->id,
                (unsigned long long)(rec ? rec->dbid : 0), (long long)op->space,
                mc_call_status_name(rc));
        if (rc == MC_CALL_OK)
            set_anchor(db, op->space, ent->id); /* it stands for that space from now on */
    }
    restore_drop(op);
}

void db_restore_cell(base_db *db, mc_entity *ent, int64_t space)
{
    if (!db->restore_cells || space <= 0 || !ent->cell_data || ent->cell_state != MC_CELL_NONE)
        return;
    db_restore *op = calloc(1, sizeof *op);
    if (!op) {
        MC_ERROR("persistence: out of memory restoring the cell of entity %d", (int)ent->id);
        return;
    }
    op->db = db;
    op->id = ent->id;
    op->space = space;
    op->next = db->restores;
    if (db->restores)
        db->restores->prev = op;
    db->restores = op;
    restore_later(op, 0); /* after the load's callback: the game may make the cell itself */
}
