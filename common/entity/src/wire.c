/* Entity message headers and replies (entity/wire.h). */
#include "entity/wire.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void mc_call_header_write(mc_ostream *os, const mc_call_header *h)
{
    mc_write_i32(os, h->entity_id);
    mc_write_u16(os, h->salt);
    mc_write_u16(os, h->method);
    mc_write_i32(os, h->caller_id);
}

bool mc_call_header_read(mc_istream *is, mc_call_header *h)
{
    h->entity_id = mc_read_i32(is);
    h->salt = mc_read_u16(is);
    h->method = mc_read_u16(is);
    h->caller_id = mc_read_i32(is);
    if (!mc_istream_ok(is) || h->entity_id <= 0 || h->caller_id < 0) {
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_call_reply_write(mc_ostream *os, int status, const uint8_t *returns, size_t len,
                         const char *reason)
{
    mc_write_i8(os, (int8_t)status);
    if (status == MC_CALL_OK) {
        if (len)
            mc_write_bytes(os, returns, len);
        return;
    }
    char r[MC_REASON_MAX + 1];
    snprintf(r, sizeof r, "%s", reason ? reason : "");
    mc_write_string(os, r);
}

bool mc_call_reply_read(mc_istream *is, int *status, char *why, size_t whylen)
{
    int8_t st = mc_read_i8(is);
    if (!mc_istream_ok(is) || st > 0 || st < -100) {
        mc_istream_fail(is);
        return false;
    }
    *status = st;
    if (whylen)
        why[0] = '\0';
    if (st == MC_CALL_OK)
        return true;
    char r[MC_REASON_MAX + 1];
    if (!mc_read_string_into(is, r, sizeof r))
        return false;
    snprintf(why, whylen, "%s", r);
    return true;
}

void mc_write_vec3(mc_ostream *os, mc_vector3 v)
{
    mc_write_f32(os, v.x);
    mc_write_f32(os, v.y);
    mc_write_f32(os, v.z);
}

bool mc_read_vec3(mc_istream *is, mc_vector3 *v)
{
    v->x = mc_read_f32(is);
    v->y = mc_read_f32(is);
    v->z = mc_read_f32(is);
    if (!mc_istream_ok(is) || !isfinite(v->x) || !isfinite(v->y) || !isfinite(v->z)) {
        mc_istream_fail(is);
        return false;
    }
    return true;
}
