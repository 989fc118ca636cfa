/* Base backups on the wire (entity/backup_wire.h). */
#include "entity/backup_wire.h"
#include "entity/wire.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mc_backup_encode(mc_ostream *os, const mc_backup_head *h, const uint8_t *base_props,
                      size_t base_len, const uint8_t *cell_props, size_t cell_len,
                      const uint8_t *proxy, size_t proxy_len)
{
    mc_write_i32(os, h->entity_id);
    mc_write_u16(os, h->type);
    mc_write_u32(os, h->serial);
    mc_write_u8(os, h->flags);
    mc_mailbox_ref_write(os, &h->cell);
    mc_write_vec3(os, h->position);
    mc_write_vec3(os, h->direction);
    mc_write_i32(os, h->space);
    mc_write_u64(os, h->dbid);
    mc_write_string(os, h->token);
    mc_write_u8(os, (uint8_t)h->nnames);
    for (size_t i = 0; i < h->nnames; i++)
        mc_write_string(os, h->names[i]);
    mc_write_u16(os, (uint16_t)h->ntimers);
    for (size_t i = 0; i < h->ntimers; i++) {
        mc_write_u32(os, h->timers[i].id);
        mc_write_u64(os, h->timers[i].due_in_us);
        mc_write_u64(os, h->timers[i].repeat_us);
        mc_write_i64(os, h->timers[i].user_arg);
    }
    mc_write_blob(os, base_props, base_len);
    mc_write_blob(os, cell_props, cell_len);
    mc_write_blob(os, proxy, proxy_len);
}

static bool fail(mc_istream *is, char *why, size_t whylen, const char *what)
{
    snprintf(why, whylen, "malformed BACKUP_BASE: %s", what);
    mc_istream_fail(is);
    return false;
}

bool mc_backup_decode(const mc_entity_defs *defs, mc_istream *is, mc_backup_head *h, char *why,
                      size_t whylen)
{
    memset(h, 0, sizeof *h);
    h->entity_id = mc_read_i32(is);
    h->type = mc_read_u16(is);
    h->serial = mc_read_u32(is);
    h->flags = mc_read_u8(is);
    if (!mc_istream_ok(is))
        return fail(is, why, whylen, "short");
    if (h->entity_id <= 0)
        return fail(is, why, whylen, "entity id not positive");
    if (h->type >= mc_defs_type_count(defs))
        return fail(is, why, whylen, "unknown type");
    if (h->flags & ~(MC_BACKUP_FLAG_CELL | MC_BACKUP_FLAG_CLIENT | MC_BACKUP_FLAG_CREATING))
        return fail(is, why, whylen, "unknown flags");
    if (!mc_mailbox_ref_read(is, &h->cell, mc_defs_type_count(defs)))
        return fail(is, why, whylen, "bad cell mailbox");
    if (h->flags & MC_BACKUP_FLAG_CELL) {
        if (h->cell.id != h->entity_id ||
            mc_mailbox_ref_component(&h->cell) != MC_COMPONENT_CELL ||
            mc_mailbox_ref_type(&h->cell) != h->type)
            return fail(is, why, whylen, "the cell mailbox is not this entity's cell");
    } else if (!mc_mailbox_ref_is_none(&h->cell)) {
        return fail(is, why, whylen, "a cell mailbox without the cell flag");
    }
    if (!mc_read_vec3(is, &h->position) || !mc_read_vec3(is, &h->direction))
        return fail(is, why, whylen, "positions not finite");
    h->space = mc_read_i32(is);
    if (h->space < 0)
        return fail(is, why, whylen, "negative space id");
    h->dbid = mc_read_u64(is);
    if (!mc_read_string_into(is, h->token, sizeof h->token))
        return fail(is, why, whylen, "bad token");
    h->nnames = mc_read_u8(is);
    if (h->nnames > MC_BACKUP_NAMES_MAX)
        return fail(is, why, whylen, "too many global names");
    for (size_t i = 0; i < h->nnames; i++)
        if (!mc_read_string_into(is, h->names[i], sizeof h->names[i]) || !h->names[i][0])
            return fail(is, why, whylen, "bad global name");
    h->ntimers = mc_read_u16(is);
    if (!mc_istream_ok(is) || h->ntimers > MC_BACKUP_TIMERS_MAX)
        return fail(is, why, whylen, "too many timers");
    /* each timer takes 28 bytes: refuse a count the rest cannot hold before allocating */
    if (h->ntimers * 28u > mc_istream_remaining(is))
        return fail(is, why, whylen, "short timers");
    if (h->ntimers) {
        h->timers = calloc(h->ntimers, sizeof *h->timers);
        if (!h->timers)
            return fail(is, why, whylen, "out of memory");
    }
    for (size_t i = 0; i < h->ntimers; i++) {
        h->timers[i].id = mc_read_u32(is);
        h->timers[i].due_in_us = mc_read_u64(is);
        h->timers[i].repeat_us = mc_read_u64(is);
        h->timers[i].user_arg = mc_read_i64(is);
        if (h->timers[i].id == 0) {
            mc_backup_head_free(h);
            return fail(is, why, whylen, "timer id 0");
        }
    }
    h->base_props = mc_read_blob(is, &h->base_len, UINT32_MAX);
    h->cell_props = mc_read_blob(is, &h->cell_len, UINT32_MAX);
    h->proxy = mc_read_blob(is, &h->proxy_len, UINT32_MAX);
    if (!mc_istream_done(is)) {
        mc_backup_head_free(h);
        return fail(is, why, whylen, "short or trailing bytes");
    }
    return true;
}

void mc_backup_head_free(mc_backup_head *h)
{
    free(h->timers);
    h->timers = NULL;
    h->ntimers = 0;
}

void mc_backup_drop_encode(mc_ostream *os, int32_t entity_id) { mc_write_i32(os, entity_id); }

bool mc_backup_drop_decode(mc_istream *is, int32_t *entity_id)
{
    *entity_id = mc_read_i32(is);
    if (!mc_istream_done(is) || *entity_id <= 0) {
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_backup_refused_encode(mc_ostream *os, int32_t entity_id, uint8_t reason)
{
    mc_write_i32(os, entity_id);
    mc_write_u8(os, reason);
}

bool mc_backup_refused_decode(mc_istream *is, int32_t *entity_id, uint8_t *reason)
{
    *entity_id = mc_read_i32(is);
    *reason = mc_read_u8(is);
    if (!mc_istream_done(is) || *entity_id <= 0 || *reason < 1 ||
        *reason > MC_BACKUP_REFUSED_REASON_MAX) {
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_base_restored_encode(mc_ostream *os, int32_t entity_id, const mc_mailbox_ref *base)
{
    mc_write_i32(os, entity_id);
    mc_mailbox_ref_write(os, base);
}

bool mc_base_restored_decode(const mc_entity_defs *defs, mc_istream *is, int32_t *entity_id,
                             mc_mailbox_ref *base)
{
    *entity_id = mc_read_i32(is);
    if (!mc_mailbox_ref_read(is, base, mc_defs_type_count(defs)) || !mc_istream_done(is) ||
        *entity_id <= 0 || base->id != *entity_id ||
        mc_mailbox_ref_component(base) != MC_COMPONENT_BASE) {
        mc_istream_fail(is);
        return false;
    }
    return true;
}
