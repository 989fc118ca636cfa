/* Cells made for bases (CREATE_CELL, RESTORE_CELL) and destroyed for them (DESTROY_CELL);
 * the answers and CELL_GONE they hear are cell_base.c's. */
#include "cellapp.h"
#include "common/log.h"
#include "entity/restore_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cell_state *state_of(mc_engine *e) { return mc_engine_role_state(e); }

static void answer(mc_engine *e, const mc_origin *o, int status, int32_t space,
                   const char *why)
{
    cell_answer_placed(e, o, status, space, why);
    if (status != MC_CALL_OK)
        MC_INFO("CREATE_CELL refused: %s", why);
}

/* CREATE_CELL, or (restore_space > 0) RESTORE_CELL's: into that space, made here with
 * that id when it is not here. */
static void create_cell(mc_engine *e, const mc_origin *o, mc_istream *is, int32_t restore_space)
{
    const mc_entity_defs *defs = mc_engine_defs(e);
    mc_create_cell_head head;
    char why[MC_REASON_MAX] = "";
    if (!mc_create_cell_decode(defs, is, &head, why, sizeof why)) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        answer(e, o, MC_CALL_ERR_ARGS, 0, why);
        return;
    }
    int32_t id = head.entity_id;
    uint16_t type = head.type;
    int32_t near_id = head.near_id;
    mc_mailbox_ref base = head.base;
    mc_vector3 pos = head.position, dir = head.direction;
    mc_space *sp = NULL;
    if (restore_space > 0 && near_id) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        answer(e, o, MC_CALL_ERR_ARGS, 0, "malformed RESTORE_CELL: a near id");
        return;
    }
    if (near_id) {
        mc_entity *near = mc_engine_find(e, near_id);
        if (!near || near->in_reap || !near->space) {
            snprintf(why, sizeof why, "no cell %d here to be near", (int)near_id);
            mc_engine_count_refused(e, MC_REFUSE_NO_ENTITY);
            answer(e, o, MC_CALL_ERR_NO_ENTITY, 0, why);
            return;
        }
        sp = near->space;
    }
    /* a real of it is made here: its ghost goes, its calls numbered on from the ghost's */
    uint32_t calls_seq = cell_ghosts_make_way(e, id);
    mc_entity *ent = mc_engine_new_entity(e, type, id, why, sizeof why);
    if (!ent) {
        answer(e, o, MC_CALL_ERR_STATE, 0, why);
        return;
    }
    if (calls_seq)
        cell_ghosts_seed_seq(ent, calls_seq);
    if (ent->gt->props_decode(defs, MC_PART_CELL, ent->props, false, is, why, sizeof why) !=
            MC_CALL_OK ||
        !mc_istream_done(is)) {
        if (!why[0])
            snprintf(why, sizeof why, "trailing bytes after the cell properties");
        mc_engine_discard_entity(e, ent);
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        answer(e, o, MC_CALL_ERR_ARGS, 0, why);
        return;
    }
    ent->base = base;
    ent->position = pos;
    ent->direction = dir;
    ent->gone_why = MC_CELL_GONE_SELF;
    if (restore_space > 0 && !(sp = space_find(e, restore_space)) &&
        !(sp = space_new(e, restore_space))) {
        mc_engine_discard_entity(e, ent);
        answer(e, o, MC_CALL_ERR_BUSY, 0, "out of memory");
        return;
    }
    if (!sp) {
        int32_t space_id;
        if (mc_server_next_entity_id(mc_engine_server(e), &space_id) != 0 ||
            !(sp = space_new(e, space_id))) {
            mc_engine_discard_entity(e, ent);
            answer(e, o, MC_CALL_ERR_UNAVAILABLE, 0, "cannot make a space (no ids yet)");
            return;
        }
    }
    if (space_add(e, sp, ent) != 0) {
        int32_t space_id = sp->id;
        mc_engine_discard_entity(e, ent);
        answer(e, o, MC_CALL_ERR_BUSY, space_id, "out of memory");
        return;
    }
    MC_DEBUG("%s %d: cell created in space %d", ent->td->name, (int)id, (int)sp->id);
    int32_t space_id = sp->id;
    answer(e, o, MC_CALL_OK, space_id, NULL);
    if (restore_space > 0) {
        state_of(e)->restored++;
        MC_INFO("%s %d: cell restored in space %d", ent->td->name, (int)id, (int)space_id);
        return; /* the cell comes back: its base hears onRestoreCell, it is not created */
    }
    mc_engine_run_hook(e, ent, MC_HOOK_CREATED, NULL);
}

void cell_on_create_cell(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    create_cell(e, o, is, 0);
}

void cell_on_restore_cell(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    char why[MC_REASON_MAX] = "";
    int32_t space;
    if (!mc_restore_cell_decode(is, &space, why, sizeof why)) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        state_of(e)->restore_refused++;
        answer(e, o, MC_CALL_ERR_ARGS, 0, why);
        return;
    }
    uint64_t before = state_of(e)->restored;
    create_cell(e, o, is, space);
    if (state_of(e)->restored == before)
        state_of(e)->restore_refused++;
}

void cell_on_destroy_cell(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    int32_t id;
    /* Refusals answer a request (DESTROY_CELL is one-way) rather than leave it waiting. */
    if (!mc_destroy_cell_decode(is, &id)) {
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                         "DESTROY_CELL malformed: ignored");
        return;
    }
    mc_entity *ent = mc_engine_find(e, id);
    if (!ent) {
        mc_engine_refuse(e, o, MC_REFUSE_NO_ENTITY, MC_CALL_ERR_NO_ENTITY,
                         "DESTROY_CELL for %d ignored: no such cell", (int)id);
        return;
    }
    mc_address base_addr;
    mc_mailbox_address(&ent->base, &base_addr);
    if (!mc_address_equal(&base_addr, &o->addr) &&
        !cell_move_from_peer(e, id, &o->addr)) { /* forwarded by the cellapp it left */
        mc_engine_refuse(e, o, MC_REFUSE_WRONG_PART, MC_CALL_ERR_MAILBOX,
                         "DESTROY_CELL for %d not from its base: ignored", (int)id);
        return;
    }
    if (ent->gone_why >= 0)
        ent->gone_why = MC_CELL_GONE_DESTROYED;
    mc_engine_destroy_entity(e, ent);
}
