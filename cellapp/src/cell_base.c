/* What a cell tells its base (the lowest of the cellapp's cell files: the making, moving
 * and destroying files sit on it): the answer to CREATE_CELL and CELL_MIGRATE, and the
 * CELL_GONE that tells a base its cell went, with the cell's last properties. */
#include "cellapp.h"
#include "common/log.h"

void cell_answer_placed(mc_engine *e, const mc_origin *o, int status, int32_t space,
                        const char *why)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_write_i8(&os, (int8_t)status);
    mc_write_i32(&os, space);
    mc_write_string(&os, why ? why : "");
    mc_engine_reply(e, o, os.data, os.size);
    mc_ostream_free(&os);
}

void cell_gone_payload(mc_engine *e, mc_entity *ent, mc_cell_gone_why why, mc_ostream *os)
{
    mc_cell_gone_head head = {.entity_id = ent->id, .why = (uint8_t)why,
                              .position = ent->position, .direction = ent->direction};
    mc_cell_gone_encode(os, &head);
    char r[MC_REASON_MAX];
    if (ent->gt->props_encode(mc_engine_defs(e), MC_PART_CELL, ent->props, false, os, r,
                              sizeof r) != MC_CALL_OK) {
        MC_WARNING("%s %d: cell properties do not encode (%s): its base gets none", ent->td->name,
                   (int)ent->id, r);
        mc_ostream_reset(os);
        mc_cell_gone_encode(os, &head);
    }
}

void cell_tell_base_gone(mc_engine *e, mc_entity *ent, mc_cell_gone_why why)
{
    if (ent->gone_why < 0 || mc_engine_freeing(e))
        return;
    ent->gone_why = -1;
    mc_ostream os;
    mc_ostream_init(&os);
    cell_gone_payload(e, ent, why, &os);
    mc_address addr;
    mc_mailbox_address(&ent->base, &addr);
    int rc = mc_engine_send(e, &addr, MC_MSG_CELL_GONE, os.data, os.size);
    if (rc != MC_CALL_OK)
        MC_DEBUG("%s %d: cannot tell its base the cell is gone: %s", ent->td->name,
                 (int)ent->id, mc_call_status_name(rc));
    mc_ostream_free(&os);
}
