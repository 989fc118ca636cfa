/* Entity message headers, replies and payloads: encoders and pure decoders (entity/wire.h). */
#include "entity/wire.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mc_call_header_pack(uint8_t out[MC_CALL_HEADER_SIZE], const mc_call_header *h)
{
    mc_store_u32(out, (uint32_t)h->entity_id);
    mc_store_u16(out + 4, h->salt);
    mc_store_u16(out + 6, h->method);
    mc_store_u32(out + 8, (uint32_t)h->caller_id);
}

void mc_call_header_write(mc_ostream *os, const mc_call_header *h)
{
    uint8_t b[MC_CALL_HEADER_SIZE];
    mc_call_header_pack(b, h);
    mc_write_bytes(os, b, sizeof b);
}

bool mc_call_header_read(mc_istream *is, mc_call_header *h)
{
    const uint8_t *p = mc_read_bytes(is, MC_CALL_HEADER_SIZE); /* NULL: too short */
    if (p) {
        h->entity_id = (int32_t)mc_load_u32(p);
        h->salt = mc_load_u16(p + 4);
        h->method = mc_load_u16(p + 6);
        h->caller_id = (int32_t)mc_load_u32(p + 8);
    }
    if (!p || h->entity_id <= 0 || h->caller_id < 0) {
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

/* ---- CREATE_BASE ------------------------------------------------------------------------ */

#define MC_CREATE_BASE_MAX_PROPS 4096u

int mc_create_base_encode(const mc_entity_defs *defs, uint16_t type, const uint16_t *indices,
                          const mc_value *values, size_t n, mc_ostream *os, char *why,
                          size_t whylen)
{
    const mc_entity_type_def *td = mc_defs_type(defs, type);
    if (!td || n > MC_CREATE_BASE_MAX_PROPS) {
        snprintf(why, whylen, td ? "too many properties" : "no such entity type");
        return -1;
    }
    mc_write_u16(os, type);
    mc_write_u16(os, (uint16_t)n);
    for (size_t i = 0; i < n; i++) {
        if (indices[i] >= td->nprops) {
            snprintf(why, whylen, "%s has no property %u", td->name, (unsigned)indices[i]);
            return -1;
        }
        const mc_def_property *p = &td->props[indices[i]];
        mc_value_limits lim = mc_defs_property_limits(defs, p);
        mc_write_u16(os, indices[i]);
        char r[160];
        if (mc_value_encode(p->type, &values[i], &lim, os, r, sizeof r) != 0) {
            snprintf(why, whylen, "property %s: %s", p->name, r);
            return -1;
        }
    }
    if (!mc_ostream_ok(os)) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    return 0;
}

void mc_create_base_free(uint16_t *indices, mc_value *values, size_t n)
{
    for (size_t i = 0; values && i < n; i++)
        mc_value_free(&values[i]);
    free(values);
    free(indices);
}

int mc_create_base_decode(const mc_entity_defs *defs, mc_istream *is, uint16_t *type,
                          uint16_t **indices, mc_value **values, size_t *n, char *why,
                          size_t whylen)
{
    *indices = NULL;
    *values = NULL;
    *n = 0;
    *type = mc_read_u16(is);
    uint16_t count = mc_read_u16(is);
    const mc_entity_type_def *td = mc_defs_type(defs, *type);
    if (!mc_istream_ok(is) || !td) {
        snprintf(why, whylen, mc_istream_ok(is) ? "no such entity type %u"
                                                : "malformed CREATE_BASE: %u bytes",
                 mc_istream_ok(is) ? (unsigned)*type : (unsigned)mc_istream_remaining(is));
        return MC_CALL_ERR_ARGS;
    }
    /* Each property takes at least its 2-byte index: a count beyond what remains is
     * malformed before anything is allocated for it. */
    if ((size_t)count * 2u > mc_istream_remaining(is)) {
        snprintf(why, whylen, "malformed CREATE_BASE: %u properties in %zu bytes",
                 (unsigned)count, mc_istream_remaining(is));
        return MC_CALL_ERR_ARGS;
    }
    if (count == 0) {
        if (!mc_istream_done(is)) {
            snprintf(why, whylen, "malformed CREATE_BASE: trailing bytes");
            return MC_CALL_ERR_ARGS;
        }
        return MC_CALL_OK;
    }
    uint16_t *idx = calloc(count, sizeof *idx);
    mc_value *vals = calloc(count, sizeof *vals);
    if (!idx || !vals) {
        free(idx);
        free(vals);
        snprintf(why, whylen, "out of memory");
        return MC_CALL_ERR_BUSY;
    }
    size_t got = 0;
    for (; got < count; got++) {
        idx[got] = mc_read_u16(is);
        if (!mc_istream_ok(is) || idx[got] >= td->nprops) {
            snprintf(why, whylen, "malformed CREATE_BASE: property %u", (unsigned)idx[got]);
            goto bad;
        }
        const mc_def_property *p = &td->props[idx[got]];
        mc_value_limits lim = mc_defs_property_limits(defs, p);
        char r[160];
        if (mc_value_decode(p->type, is, &lim, &vals[got], r, sizeof r) != 0) {
            snprintf(why, whylen, "property %s: %s", p->name, r);
            goto bad;
        }
    }
    if (!mc_istream_done(is)) {
        snprintf(why, whylen, "malformed CREATE_BASE: trailing bytes");
        goto bad;
    }
    *indices = idx;
    *values = vals;
    *n = count;
    return MC_CALL_OK;
bad:
    mc_create_base_free(idx, vals, got);
    return MC_CALL_ERR_ARGS;
}

/* ---- CREATE_CELL, DESTROY_CELL, CELL_GONE ------------------------------------------------ */

void mc_create_cell_encode(mc_ostream *os, const mc_create_cell_head *h)
{
    mc_write_i32(os, h->entity_id);
    mc_write_u16(os, h->type);
    mc_write_i32(os, h->near_id);
    mc_mailbox_ref_write(os, &h->base);
    mc_write_vec3(os, h->position);
    mc_write_vec3(os, h->direction);
}

bool mc_create_cell_decode(const mc_entity_defs *defs, mc_istream *is, mc_create_cell_head *h,
                           char *why, size_t whylen)
{
    size_t ntypes = mc_defs_type_count(defs);
    h->entity_id = mc_read_i32(is);
    h->type = mc_read_u16(is);
    h->near_id = mc_read_i32(is);
    if (!mc_mailbox_ref_read(is, &h->base, ntypes) || !mc_read_vec3(is, &h->position) ||
        !mc_read_vec3(is, &h->direction)) {
        snprintf(why, whylen, "malformed CREATE_CELL: short, or a bad mailbox or position");
        return false;
    }
    if (h->entity_id <= 0 || h->near_id < 0 || h->type >= ntypes) {
        snprintf(why, whylen, "malformed CREATE_CELL: entity %d, near %d, type %u",
                 (int)h->entity_id, (int)h->near_id, (unsigned)h->type);
        mc_istream_fail(is);
        return false;
    }
    if (h->base.id != h->entity_id ||
        mc_mailbox_ref_component(&h->base) != MC_COMPONENT_BASE ||
        mc_mailbox_ref_type(&h->base) != h->type) {
        snprintf(why, whylen, "malformed CREATE_CELL: the base mailbox is not entity %d's",
                 (int)h->entity_id);
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_destroy_cell_encode(mc_ostream *os, int32_t entity_id) { mc_write_i32(os, entity_id); }

bool mc_destroy_cell_decode(mc_istream *is, int32_t *entity_id)
{
    *entity_id = mc_read_i32(is);
    if (!mc_istream_done(is) || *entity_id <= 0) {
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_cell_gone_encode(mc_ostream *os, const mc_cell_gone_head *h)
{
    mc_write_i32(os, h->entity_id);
    mc_write_u8(os, h->why);
    mc_write_vec3(os, h->position);
    mc_write_vec3(os, h->direction);
}

bool mc_cell_gone_decode(mc_istream *is, mc_cell_gone_head *h)
{
    h->entity_id = mc_read_i32(is);
    h->why = mc_read_u8(is);
    if (!mc_istream_ok(is) || !mc_read_vec3(is, &h->position) ||
        !mc_read_vec3(is, &h->direction))
        return false;
    if (h->entity_id <= 0) {
        mc_istream_fail(is);
        return false;
    }
    return true;
}
