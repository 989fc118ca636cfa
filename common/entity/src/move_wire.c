/* CELL_MIGRATE, CELL_MOVED and CELL_MIGRATE_END: encoders and pure decoders
 * (entity/move_wire.h). */
#include "entity/move_wire.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mc_migrate_encode(mc_ostream *os, const mc_migrate_head *h)
{
    mc_create_cell_encode(os, &h->cell);
    mc_write_u8(os, (uint8_t)((h->witness ? 1 : 0) | (h->witness && h->handover ? 2 : 0) |
                              (h->nholders ? 4 : 0) | (h->calls_seq ? 8 : 0)));
    mc_write_f32(os, h->radius);
    mc_write_f32(os, h->hysteresis);
    mc_write_u16(os, (uint16_t)h->ntimers);
    for (size_t i = 0; i < h->ntimers; i++) {
        const mc_migrate_timer *t = &h->timers[i];
        mc_write_u32(os, t->id);
        mc_write_u64(os, t->remaining_us);
        mc_write_u64(os, t->repeat_us);
        mc_write_i64(os, t->user_arg);
    }
    if (h->witness && h->handover) {
        mc_write_u32(os, (uint32_t)h->ntold);
        for (size_t i = 0; i < h->ntold; i++)
            mc_write_i32(os, h->told[i]);
    }
    if (h->nholders) {
        mc_write_u16(os, (uint16_t)h->nholders);
        for (size_t i = 0; i < h->nholders; i++) {
            mc_write_u32(os, h->holders[i].ip);
            mc_write_u16(os, h->holders[i].port);
        }
    }
    if (h->calls_seq)
        mc_write_u32(os, h->calls_seq);
}

static bool refuse(mc_istream *is, mc_migrate_head *h, char *why, size_t whylen,
                   const char *what)
{
    snprintf(why, whylen, "malformed CELL_MIGRATE: %s", what);
    mc_istream_fail(is);
    mc_migrate_free(h);
    return false;
}

bool mc_migrate_decode(const mc_entity_defs *defs, mc_istream *is, mc_migrate_head *h,
                       char *why, size_t whylen)
{
    memset(h, 0, sizeof *h);
    char inner[MC_REASON_MAX];
    if (!mc_create_cell_decode(defs, is, &h->cell, inner, sizeof inner))
        return refuse(is, h, why, whylen, inner);
    if (h->cell.near_id <= 0)
        return refuse(is, h, why, whylen, "no cell to be near");
    uint8_t flags = mc_read_u8(is);
    h->radius = mc_read_f32(is);
    h->hysteresis = mc_read_f32(is);
    uint16_t n = mc_read_u16(is);
    if (!mc_istream_ok(is))
        return refuse(is, h, why, whylen, "short");
    if ((flags & ~15u) || (flags & 3u) == 2u)
        return refuse(is, h, why, whylen, "unknown flags");
    h->witness = flags & 1u;
    h->handover = flags & 2u;
    if (!isfinite(h->radius) || !isfinite(h->hysteresis) || h->radius < 0 ||
        h->hysteresis < 0)
        return refuse(is, h, why, whylen, "bad AoI radius or hysteresis");
    if (n > MC_MIGRATE_TIMERS_MAX)
        return refuse(is, h, why, whylen, "too many timers");
    /* each timer is 28 bytes: never allocate for more than the payload holds */
    if ((size_t)n * 28u > mc_istream_remaining(is))
        return refuse(is, h, why, whylen, "short (timers)");
    if (n) {
        h->timers = calloc(n, sizeof *h->timers);
        if (!h->timers)
            return refuse(is, h, why, whylen, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        mc_migrate_timer *t = &h->timers[i];
        t->id = mc_read_u32(is);
        t->remaining_us = mc_read_u64(is);
        t->repeat_us = mc_read_u64(is);
        t->user_arg = mc_read_i64(is);
        h->ntimers = i + 1;
        if (!mc_istream_ok(is))
            return refuse(is, h, why, whylen, "short (timers)");
        if (t->id == 0 || t->remaining_us > MC_MIGRATE_TIMER_US_MAX ||
            t->repeat_us > MC_MIGRATE_TIMER_US_MAX)
            return refuse(is, h, why, whylen, "bad timer");
        for (size_t j = 0; j < i; j++)
            if (h->timers[j].id == t->id)
                return refuse(is, h, why, whylen, "a timer id twice");
    }
    if (h->handover) {
        uint32_t nt = mc_read_u32(is);
        if (!mc_istream_ok(is))
            return refuse(is, h, why, whylen, "short (view)");
        if (nt > MC_MIGRATE_TOLD_MAX || (size_t)nt * 4u > mc_istream_remaining(is))
            return refuse(is, h, why, whylen, "a handed-over view too long");
        if (nt && !(h->told = calloc(nt, sizeof *h->told)))
            return refuse(is, h, why, whylen, "out of memory");
        for (uint32_t i = 0; i < nt; i++) {
            h->told[i] = mc_read_i32(is);
            h->ntold = i + 1;
            if (h->told[i] <= 0)
                return refuse(is, h, why, whylen, "a handed-over id not positive");
        }
    }
    if (flags & 4u) {
        uint16_t nh = mc_read_u16(is);
        if (!mc_istream_ok(is))
            return refuse(is, h, why, whylen, "short (ghost holders)");
        if (nh == 0 || nh > MC_MIGRATE_HOLDERS_MAX || (size_t)nh * 6u > mc_istream_remaining(is))
            return refuse(is, h, why, whylen, "no ghost holder, or too many");
        if (!(h->holders = calloc(nh, sizeof *h->holders)))
            return refuse(is, h, why, whylen, "out of memory");
        for (uint16_t i = 0; i < nh; i++) {
            mc_address *a = &h->holders[i];
            a->ip = mc_read_u32(is);
            a->port = mc_read_u16(is);
            h->nholders = (size_t)i + 1;
            if (a->ip == 0 || a->port == 0)
                return refuse(is, h, why, whylen, "a ghost holder with no address");
            for (uint16_t j = 0; j < i; j++)
                if (mc_address_equal(&h->holders[j], a))
                    return refuse(is, h, why, whylen, "a ghost holder named twice");
        }
    }
    if (flags & 8u) {
        h->calls_seq = mc_read_u32(is);
        if (!mc_istream_ok(is))
            return refuse(is, h, why, whylen, "short (call number)");
        if (!h->calls_seq)
            return refuse(is, h, why, whylen, "a call number of 0");
    }
    return true;
}

void mc_migrate_free(mc_migrate_head *h)
{
    free(h->timers);
    h->timers = NULL;
    h->ntimers = 0;
    free(h->told);
    h->told = NULL;
    h->ntold = 0;
    free(h->holders);
    h->holders = NULL;
    h->nholders = 0;
}

void mc_cell_moved_encode(mc_ostream *os, int32_t entity_id, const mc_mailbox_ref *cell)
{
    mc_write_i32(os, entity_id);
    mc_mailbox_ref_write(os, cell);
}

bool mc_cell_moved_decode(const mc_entity_defs *defs, mc_istream *is, int32_t *entity_id,
                          mc_mailbox_ref *cell, char *why, size_t whylen)
{
    *entity_id = mc_read_i32(is);
    if (!mc_mailbox_ref_read(is, cell, mc_defs_type_count(defs)) || !mc_istream_done(is)) {
        snprintf(why, whylen, "malformed CELL_MOVED: short, trailing bytes or a bad mailbox");
        mc_istream_fail(is);
        return false;
    }
    if (*entity_id <= 0 || cell->id != *entity_id ||
        mc_mailbox_ref_component(cell) != MC_COMPONENT_CELL) {
        snprintf(why, whylen, "malformed CELL_MOVED: the mailbox is not entity %d's cell",
                 (int)*entity_id);
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_migrate_end_encode(mc_ostream *os, int32_t entity_id, uint8_t outcome)
{
    mc_write_i32(os, entity_id);
    mc_write_u8(os, outcome);
}

bool mc_migrate_end_decode(mc_istream *is, int32_t *entity_id, uint8_t *outcome)
{
    *entity_id = mc_read_i32(is);
    *outcome = mc_read_u8(is);
    if (!mc_istream_done(is) || *entity_id <= 0 || *outcome > MC_MIGRATE_FLUSHED) {
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_witness_calls_head_encode(mc_ostream *os, int32_t entity_id, uint16_t n)
{
    mc_write_i32(os, entity_id);
    mc_write_u16(os, n);
}

void mc_witness_call_encode(mc_ostream *os, const mc_witness_call *c)
{
    mc_write_i32(os, c->id);
    mc_write_u16(os, c->type);
    mc_write_u16(os, c->method);
    mc_write_blob(os, c->args, c->len);
}

bool mc_witness_calls_head_decode(mc_istream *is, int32_t *entity_id, uint16_t *n)
{
    *entity_id = mc_read_i32(is);
    *n = mc_read_u16(is);
    if (!mc_istream_ok(is) || *entity_id <= 0 || *n > MC_WITNESS_CALLS_MAX) {
        mc_istream_fail(is);
        return false;
    }
    return true;
}

bool mc_witness_call_decode(mc_istream *is, mc_witness_call *c)
{
    c->id = mc_read_i32(is);
    c->type = mc_read_u16(is);
    c->method = mc_read_u16(is);
    c->args = mc_read_blob(is, &c->len, MC_WITNESS_CALL_ARGS_MAX);
    if (!mc_istream_ok(is) || c->id <= 0) {
        mc_istream_fail(is);
        return false;
    }
    return true;
}

void mc_witness_heard_encode(mc_ostream *os, int32_t entity_id, const mc_witness_heard *h,
                             size_t n)
{
    mc_write_i32(os, entity_id);
    mc_write_u32(os, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        mc_write_i32(os, h[i].id);
        mc_write_u32(os, h[i].seq);
    }
}

bool mc_witness_heard_decode(mc_istream *is, int32_t *entity_id, mc_witness_heard **out,
                             size_t *n)
{
    *out = NULL;
    *n = 0;
    *entity_id = mc_read_i32(is);
    uint32_t k = mc_read_u32(is);
    if (!mc_istream_ok(is) || *entity_id <= 0 || k > MC_MIGRATE_TOLD_MAX ||
        mc_istream_remaining(is) != (size_t)k * 8u) {
        mc_istream_fail(is);
        return false;
    }
    mc_witness_heard *h = k ? calloc(k, sizeof *h) : NULL;
    if (k && !h) {
        mc_istream_fail(is);
        return false;
    }
    for (uint32_t i = 0; i < k; i++) {
        h[i].id = mc_read_i32(is);
        h[i].seq = mc_read_u32(is);
        if (h[i].id <= 0) {
            free(h);
            mc_istream_fail(is);
            return false;
        }
    }
    *out = h;
    *n = k;
    return true;
}
