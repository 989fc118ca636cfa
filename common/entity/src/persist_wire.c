/* FETCH_CELL and LOAD_BASE payloads: encoders and pure decoders (entity/persist_wire.h). */
#include "entity/persist_wire.h"
#include "entity/wire.h"

#include <stdio.h>
#include <string.h>

void mc_fetch_cell_encode(mc_ostream *os, int32_t entity_id) { mc_write_i32(os, entity_id); }

bool mc_fetch_cell_decode(mc_istream *is, int32_t *entity_id)
{
    *entity_id = mc_read_i32(is);
    if (!mc_istream_done(is) || *entity_id <= 0) {
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_fetch_cell_reply_ok(mc_ostream *os, const mc_fetch_cell_head *h)
{
    mc_write_i8(os, MC_CALL_OK);
    mc_write_i32(os, h->space_id);
    mc_write_vec3(os, h->position);
    mc_write_vec3(os, h->direction);
}

void mc_fetch_cell_reply_error(mc_ostream *os, int status, const char *reason)
{
    char r[MC_REASON_MAX + 1];
    snprintf(r, sizeof r, "%s", reason ? reason : "");
    mc_write_i8(os, (int8_t)(status == MC_CALL_OK ? MC_CALL_ERR_STATE : status));
    mc_write_string(os, r);
}

bool mc_fetch_cell_reply_read(mc_istream *is, mc_fetch_cell_head *h, char *why, size_t whylen)
{
    memset(h, 0, sizeof *h);
    if (whylen)
        why[0] = '\0';
    h->status = mc_read_i8(is);
    if (!mc_istream_ok(is) || h->status > 0 || h->status < -100) {
        mc_istream_fail(is);
        return false;
    }
    if (h->status != MC_CALL_OK) {
        char r[MC_REASON_MAX + 1];
        if (!mc_read_string_into(is, r, sizeof r))
            return false;
        snprintf(why, whylen, "%s", r);
        return true;
    }
    h->space_id = mc_read_i32(is);
    return mc_read_vec3(is, &h->position) && mc_read_vec3(is, &h->direction);
}

void mc_load_base_encode(mc_ostream *os, const mc_load_base_req *r)
{
    mc_write_u16(os, r->type);
    mc_write_u64(os, r->dbid);
    mc_write_string(os, r->ident);
}

bool mc_load_base_decode(const mc_entity_defs *defs, mc_istream *is, mc_load_base_req *r,
                         char *why, size_t whylen)
{
    memset(r, 0, sizeof *r);
    r->type = mc_read_u16(is);
    r->dbid = mc_read_u64(is);
    if (!mc_read_string_into(is, r->ident, sizeof r->ident) || !mc_istream_done(is)) {
        mc_istream_fail(is);
        snprintf(why, whylen, "LOAD_BASE malformed (short, identifier too long or trailing "
                              "bytes)");
        return false;
    }
    if (!mc_defs_type(defs, r->type)) {
        snprintf(why, whylen, "LOAD_BASE: no entity type %u", (unsigned)r->type);
        return false;
    }
    if ((r->dbid == 0) == (r->ident[0] == '\0')) {
        snprintf(why, whylen, "LOAD_BASE: give a database id or an identifier, not %s",
                 r->dbid ? "both" : "neither");
        return false;
    }
    return true;
}

void mc_load_base_reply_encode(mc_ostream *os, const mc_load_base_reply *r)
{
    mc_write_i8(os, r->status);
    mc_mailbox_ref_write(os, &r->base);
    mc_write_u64(os, r->dbid);
    mc_write_u8(os, r->was_live ? 1 : 0);
    mc_write_string(os, r->reason);
}

bool mc_load_base_reply_decode(const mc_entity_defs *defs, mc_istream *is,
                               mc_load_base_reply *r)
{
    memset(r, 0, sizeof *r);
    r->status = mc_read_i8(is);
    bool ok = mc_mailbox_ref_read(is, &r->base, mc_defs_type_count(defs));
    r->dbid = mc_read_u64(is);
    r->was_live = mc_read_bool(is);
    ok = ok && mc_read_string_into(is, r->reason, sizeof r->reason) && mc_istream_done(is);
    if (!ok || r->status > 0 || r->status < -100 ||
        (r->status == MC_CALL_OK && (mc_mailbox_ref_is_none(&r->base) || r->dbid == 0))) {
        mc_istream_fail(is);
        return false;
    }
    return true;
}
