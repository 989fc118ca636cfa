/* GHOST_DATA, GHOST_DELETE, GHOST_CLIENT_CALL and GHOST_REACH (entity/ghost_wire.h). */
#include "entity/ghost_wire.h"
#include "entity/wire.h"

#include <math.h>
#include <stdio.h>

void mc_ghost_head_encode(mc_ostream *os, const mc_ghost_head *h)
{
    mc_write_i32(os, h->entity_id);
    mc_write_u16(os, h->type);
    mc_write_i32(os, h->space_id);
    mc_write_vec3(os, h->position);
    mc_write_vec3(os, h->direction);
    mc_write_u16(os, h->nprops);
}

bool mc_ghost_head_decode(mc_istream *is, mc_ghost_head *h, char *why, size_t whylen)
{
    h->entity_id = mc_read_i32(is);
    h->type = mc_read_u16(is);
    h->space_id = mc_read_i32(is);
    if (!mc_istream_ok(is) || !mc_read_vec3(is, &h->position) ||
        !mc_read_vec3(is, &h->direction)) {
        snprintf(why, whylen, "malformed GHOST_DATA: short, or a position that is not finite");
        mc_istream_fail(is);
        return false;
    }
    h->nprops = mc_read_u16(is);
    if (!mc_istream_ok(is) || h->entity_id <= 0 || h->space_id <= 0) {
        snprintf(why, whylen, "malformed GHOST_DATA: short, or entity %d, space %d",
                 (int)h->entity_id, (int)h->space_id);
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_ghost_delete_encode(mc_ostream *os, int32_t entity_id) { mc_write_i32(os, entity_id); }

bool mc_ghost_delete_decode(mc_istream *is, int32_t *entity_id, char *why, size_t whylen)
{
    *entity_id = mc_read_i32(is);
    if (!mc_istream_ok(is) || *entity_id <= 0) {
        snprintf(why, whylen, "malformed GHOST_DELETE: short, or entity %d", (int)*entity_id);
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_ghost_call_encode(mc_ostream *os, int32_t entity_id, uint16_t method,
                          const uint8_t *args, size_t len)
{
    mc_write_i32(os, entity_id);
    mc_write_u16(os, method);
    mc_write_bytes(os, args, len);
}

bool mc_ghost_call_decode(mc_istream *is, int32_t *entity_id, uint16_t *method,
                          const uint8_t **args, size_t *len, char *why, size_t whylen)
{
    *entity_id = mc_read_i32(is);
    *method = mc_read_u16(is);
    if (!mc_istream_ok(is) || *entity_id <= 0) {
        snprintf(why, whylen, "malformed GHOST_CLIENT_CALL: short, or entity %d",
                 (int)*entity_id);
        mc_istream_fail(is);
        *args = NULL;
        *len = 0;
        return false;
    }
    *len = mc_istream_remaining(is);
    *args = mc_read_bytes(is, *len);
    if (!*args) { /* 0 bytes left: an empty argument list */
        static const uint8_t none[1];
        *args = none;
    }
    return true;
}

void mc_ghost_reach_encode(mc_ostream *os, int32_t space_id, float reach)
{
    mc_write_i32(os, space_id);
    mc_write_f32(os, reach);
}

bool mc_ghost_reach_decode(mc_istream *is, int32_t *space_id, float *reach, char *why,
                           size_t whylen)
{
    *space_id = mc_read_i32(is);
    *reach = mc_read_f32(is);
    if (!mc_istream_ok(is) || !mc_istream_done(is)) {
        snprintf(why, whylen, "malformed GHOST_REACH: not 8 bytes");
        mc_istream_fail(is);
        return false;
    }
    if (*space_id <= 0 || !isfinite(*reach) || *reach < 0 || *reach > MC_GHOST_REACH_MAX) {
        snprintf(why, whylen, "malformed GHOST_REACH: space %d, reach %g (0..%g)",
                 (int)*space_id, (double)*reach, (double)MC_GHOST_REACH_MAX);
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_ghost_call_seq_encode(mc_ostream *os, int32_t entity_id, uint16_t method, uint32_t seq,
                              const uint8_t *args, size_t len)
{
    mc_write_i32(os, entity_id);
    mc_write_u16(os, method);
    mc_write_u32(os, seq);
    mc_write_bytes(os, args, len);
}

bool mc_ghost_call_seq_decode(mc_istream *is, int32_t *entity_id, uint16_t *method,
                              uint32_t *seq, const uint8_t **args, size_t *len, char *why,
                              size_t whylen)
{
    *entity_id = mc_read_i32(is);
    *method = mc_read_u16(is);
    *seq = mc_read_u32(is);
    if (!mc_istream_ok(is) || *entity_id <= 0 || *seq == 0) {
        snprintf(why, whylen, "malformed GHOST_CLIENT_CALL_SEQ: short, entity %d or number %u",
                 (int)*entity_id, (unsigned)*seq);
        mc_istream_fail(is);
        *args = NULL;
        *len = 0;
        return false;
    }
    *len = mc_istream_remaining(is);
    *args = mc_read_bytes(is, *len);
    if (!*args) {
        static const uint8_t none[1];
        *args = none;
    }
    return true;
}
