/* CELL_COPY and RESTORE_CELL (entity/restore_wire.h). */
#include "entity/restore_wire.h"
#include "entity/wire.h"

#include <stdio.h>

void mc_cell_copy_encode(mc_ostream *os, const mc_cell_copy_head *h)
{
    mc_write_i32(os, h->entity_id);
    mc_write_i32(os, h->space_id);
    mc_write_vec3(os, h->position);
    mc_write_vec3(os, h->direction);
}

bool mc_cell_copy_decode(mc_istream *is, mc_cell_copy_head *h, char *why, size_t whylen)
{
    h->entity_id = mc_read_i32(is);
    h->space_id = mc_read_i32(is);
    if (!mc_istream_ok(is) || !mc_read_vec3(is, &h->position) ||
        !mc_read_vec3(is, &h->direction)) {
        snprintf(why, whylen, "malformed CELL_COPY: short, or a position that is not finite");
        mc_istream_fail(is);
        return false;
    }
    if (h->entity_id <= 0 || h->space_id <= 0) {
        snprintf(why, whylen, "malformed CELL_COPY: entity %d, space %d", (int)h->entity_id,
                 (int)h->space_id);
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_restore_cell_encode(mc_ostream *os, int32_t space_id) { mc_write_i32(os, space_id); }

bool mc_restore_cell_decode(mc_istream *is, int32_t *space_id, char *why, size_t whylen)
{
    *space_id = mc_read_i32(is);
    if (!mc_istream_ok(is) || *space_id <= 0) {
        snprintf(why, whylen, "malformed RESTORE_CELL: short, or space %d", (int)*space_id);
        mc_istream_fail(is);
        return false;
    }
    return true;
}
