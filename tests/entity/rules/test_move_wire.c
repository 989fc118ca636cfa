/* The messages that move a cell between cellapps (entity/move_wire.h) against the example
 * game's defs: what the encoders write decodes to the same values; every malformed payload
 * is refused with a one-line reason and nothing held (truncation at every byte, a near id of
 * 0, unknown flags, a bad radius, too many timers, a timer id of 0 or repeated, times too
 * long, ghost holders named twice, with no address, none or too many, a call number missing
 * or 0, a CELL_MOVED mailbox that is not the entity's CELL, an END outcome beyond 2).
 * Also the reach a cell's cellapp tells its neighbours (GHOST_REACH, entity/ghost_wire.h):
 * a NaN, infinite, negative or too large reach, a space id not positive, short or long. */
#include "check_main.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "entity/ghost_wire.h"
#include "entity/move_wire.h"

static mc_entity_defs *defs;
static uint16_t avatar;

static void load(void)
{
    char err[4096];
    defs = mc_defs_load(MC_GAME_RES, err, sizeof err);
    ck_assert_msg(defs != NULL, "%s", err);
    const mc_entity_type_def *td = mc_defs_type_by_name(defs, "Avatar");
    ck_assert_ptr_nonnull(td);
    avatar = td->id;
}

static mc_migrate_head head(mc_migrate_timer *timers, size_t n)
{
    mc_migrate_head h = {.witness = true, .radius = 30, .hysteresis = 2, .timers = timers,
                         .ntimers = n};
    h.cell.entity_id = 4097;
    h.cell.type = avatar;
    h.cell.near_id = 12;
    mc_mailbox_ref_init(&h.cell.base, 4097, 0x7F000001u, 20001, MC_COMPONENT_BASE, avatar);
    h.cell.position = (mc_vector3){1, 2, 3};
    h.cell.direction = (mc_vector3){0, 0, 1.5f};
    return h;
}

/* Decoding os must fail with a reason and leave nothing allocated. */
static void refused(const mc_ostream *os, const char *what)
{
    mc_istream is;
    mc_istream_init(&is, os->data, os->size);
    mc_migrate_head h;
    char why[256] = "";
    ck_assert_msg(!mc_migrate_decode(defs, &is, &h, why, sizeof why), "%s accepted", what);
    ck_assert_msg(why[0] && !strchr(why, '\n'), "%s: reason '%s'", what, why);
    ck_assert_ptr_null(h.timers);
    ck_assert_ptr_null(h.holders);
}

START_TEST(a_migrating_cell_round_trips)
{
    load();
    mc_migrate_timer t[2] = {{.id = 3, .remaining_us = 150000, .repeat_us = 200000,
                              .user_arg = 42},
                             {.id = 9, .remaining_us = 4000000, .user_arg = -1}};
    mc_migrate_head h = head(t, 2);
    mc_ostream os;
    mc_ostream_init(&os);
    mc_migrate_encode(&os, &h);
    mc_write_u8(&os, 0xAB); /* the cell properties follow */
    mc_istream is;
    mc_istream_init(&is, os.data, os.size);
    mc_migrate_head d;
    char why[256] = "";
    ck_assert_msg(mc_migrate_decode(defs, &is, &d, why, sizeof why), "%s", why);
    ck_assert_int_eq(d.cell.entity_id, 4097);
    ck_assert_int_eq(d.cell.near_id, 12);
    ck_assert(d.witness);
    ck_assert(d.radius == 30 && d.hysteresis == 2);
    ck_assert_uint_eq(d.ntimers, 2);
    ck_assert_int_eq(memcmp(d.timers, t, sizeof t), 0);
    ck_assert_uint_eq(mc_istream_remaining(&is), 1);
    ck_assert_uint_eq(mc_read_u8(&is), 0xAB);
    ck_assert(!d.handover);
    mc_migrate_free(&d);

    /* an offloaded witness's view handed over: the ids its client knows */
    int32_t told[3] = {5, 4098, 77};
    mc_migrate_head hv = head(t, 2);
    hv.handover = true;
    hv.told = told;
    hv.ntold = 3;
    mc_ostream ov;
    mc_ostream_init(&ov);
    mc_migrate_encode(&ov, &hv);
    mc_write_u8(&ov, 0xCD);
    mc_istream_init(&is, ov.data, ov.size);
    ck_assert_msg(mc_migrate_decode(defs, &is, &d, why, sizeof why), "%s", why);
    ck_assert(d.witness && d.handover);
    ck_assert_uint_eq(d.ntold, 3);
    ck_assert_int_eq(memcmp(d.told, told, sizeof told), 0);
    ck_assert_uint_eq(mc_read_u8(&is), 0xCD);
    mc_migrate_free(&d);
    ck_assert_ptr_null(d.told);
    /* a handed-over id not positive, or a count beyond what follows: refused */
    told[1] = 0;
    mc_ostream_reset(&ov);
    mc_migrate_encode(&ov, &hv);
    refused(&ov, "a handed-over id 0");
    told[1] = 4098;
    mc_ostream_reset(&ov);
    hv.ntold = 2;
    mc_migrate_encode(&ov, &hv);
    mc_store_u32(ov.data + ov.size - 12, 1000); /* the count, before the two ids */
    refused(&ov, "a handed-over view longer than the payload");
    mc_ostream_free(&ov);

    /* an offloaded real's ghost holders (flags bit 2), with and without a handed-over view */
    mc_address holders[3] = {{0x7F000001u, 20003}, {0x7F000001u, 20004}, {0x0A000002u, 9}};
    for (int with_view = 0; with_view < 2; with_view++) {
        mc_migrate_head hh = head(t, 2);
        hh.handover = with_view;
        hh.told = told;
        hh.ntold = with_view ? 2 : 0;
        hh.holders = holders;
        hh.nholders = 3;
        mc_ostream oh;
        mc_ostream_init(&oh);
        mc_migrate_encode(&oh, &hh);
        mc_write_u8(&oh, 0xEF);
        mc_istream_init(&is, oh.data, oh.size);
        ck_assert_msg(mc_migrate_decode(defs, &is, &d, why, sizeof why), "%s", why);
        ck_assert_uint_eq(d.nholders, 3);
        for (int i = 0; i < 3; i++)
            ck_assert(mc_address_equal(&d.holders[i], &holders[i]));
        ck_assert(d.handover == (bool)with_view);
        ck_assert_uint_eq(mc_read_u8(&is), 0xEF);
        mc_migrate_free(&d);
        ck_assert_ptr_null(d.holders);
        /* a holder named twice, or with no address, or more than the payload holds */
        holders[2] = holders[0];
        mc_ostream_reset(&oh);
        mc_migrate_encode(&oh, &hh);
        refused(&oh, "a ghost holder named twice");
        holders[2] = (mc_address){0, 9};
        mc_ostream_reset(&oh);
        mc_migrate_encode(&oh, &hh);
        refused(&oh, "a ghost holder with no address");
        holders[2] = (mc_address){0x0A000002u, 9};
        mc_ostream_reset(&oh);
        mc_migrate_encode(&oh, &hh);
        mc_store_u16(oh.data + oh.size - 20, 4); /* the count, before the three holders */
        refused(&oh, "more ghost holders than the payload holds");
        mc_ostream_reset(&oh);
        mc_migrate_encode(&oh, &hh);
        mc_store_u16(oh.data + oh.size - 20, MC_MIGRATE_HOLDERS_MAX + 1);
        refused(&oh, "too many ghost holders");
        mc_ostream_reset(&oh);
        mc_migrate_encode(&oh, &hh);
        mc_store_u16(oh.data + oh.size - 20, 0);
        refused(&oh, "flags bit 2 with no ghost holder");
        mc_ostream_free(&oh);
    }

    /* the real's call number (flags bit 3), after the holders and the view, on every move;
     * none (0) is not sent: the flags byte and length as before */
    for (int offload = 0; offload < 2; offload++) {
        mc_migrate_head hs = head(t, 2);
        hs.handover = offload;
        hs.told = told;
        hs.ntold = offload ? 2 : 0;
        hs.holders = holders;
        hs.nholders = offload ? 3 : 0;
        mc_ostream o0, o1;
        mc_ostream_init(&o0);
        mc_ostream_init(&o1);
        mc_migrate_encode(&o0, &hs);
        hs.calls_seq = 4000000000u;
        mc_migrate_encode(&o1, &hs);
        ck_assert_uint_eq(o1.size, o0.size + 4);
        ck_assert_uint_eq(o1.data[46], o0.data[46] | 8u);
        ck_assert_uint_eq(mc_load_u32(o1.data + o1.size - 4), 4000000000u);
        mc_write_u8(&o1, 0xEF);
        mc_istream_init(&is, o1.data, o1.size);
        ck_assert_msg(mc_migrate_decode(defs, &is, &d, why, sizeof why), "%s", why);
        ck_assert_uint_eq(d.calls_seq, 4000000000u);
        ck_assert_uint_eq(d.nholders, offload ? 3u : 0u);
        ck_assert_uint_eq(mc_read_u8(&is), 0xEF);
        mc_migrate_free(&d);
        mc_istream_init(&is, o0.data, o0.size);
        ck_assert_msg(mc_migrate_decode(defs, &is, &d, why, sizeof why), "%s", why);
        ck_assert_uint_eq(d.calls_seq, 0);
        mc_migrate_free(&d);
        mc_ostream_free(&o0);
        mc_ostream_free(&o1);
    }

    /* truncated anywhere in the head: refused */
    size_t full = os.size - 1;
    for (size_t cut = 0; cut < full; cut++) {
        mc_ostream part;
        mc_ostream_init(&part);
        mc_write_bytes(&part, os.data, cut);
        refused(&part, "a truncated head");
        mc_ostream_free(&part);
    }
    mc_ostream_free(&os);

    mc_mailbox_ref cell;
    mc_mailbox_ref_init(&cell, 4097, 0x7F000001u, 20002, MC_COMPONENT_CELL, avatar);
    mc_ostream_init(&os);
    mc_cell_moved_encode(&os, 4097, &cell);
    ck_assert_uint_eq(os.size, 16);
    mc_istream_init(&is, os.data, os.size);
    int32_t id;
    mc_mailbox_ref got;
    ck_assert(mc_cell_moved_decode(defs, &is, &id, &got, why, sizeof why));
    ck_assert_int_eq(id, 4097);
    ck_assert_int_eq(memcmp(&got, &cell, sizeof cell), 0);
    mc_ostream_reset(&os);
    for (uint8_t o = 0; o <= MC_MIGRATE_FLUSHED; o++) {
        mc_ostream_reset(&os);
        mc_migrate_end_encode(&os, 4097, o);
        mc_istream_init(&is, os.data, os.size);
        uint8_t out;
        ck_assert(mc_migrate_end_decode(&is, &id, &out));
        ck_assert_int_eq(out, o);
    }
    mc_ostream_free(&os);
    mc_defs_free(defs);
}
END_TEST

START_TEST(malformed_moves_are_refused_with_a_reason)
{
    load();
    mc_ostream os;
    mc_ostream_init(&os);
    mc_migrate_timer t[2] = {{.id = 3, .remaining_us = 1}, {.id = 4, .remaining_us = 1}};
    mc_migrate_head h = head(t, 2);
    h.cell.near_id = 0;
    mc_migrate_encode(&os, &h);
    refused(&os, "near id 0");

    mc_ostream_reset(&os);
    h = head(t, 2);
    h.radius = NAN;
    mc_migrate_encode(&os, &h);
    refused(&os, "a NaN radius");

    mc_ostream_reset(&os);
    h = head(t, 2);
    h.hysteresis = -1;
    mc_migrate_encode(&os, &h);
    refused(&os, "a negative hysteresis");

    mc_ostream_reset(&os);
    t[1].id = 3;
    h = head(t, 2);
    mc_migrate_encode(&os, &h);
    refused(&os, "a timer id twice");
    t[1].id = 0;
    mc_ostream_reset(&os);
    mc_migrate_encode(&os, &h);
    refused(&os, "a timer id 0");
    t[1].id = 4;
    t[1].repeat_us = MC_MIGRATE_TIMER_US_MAX + 1;
    mc_ostream_reset(&os);
    mc_migrate_encode(&os, &h);
    refused(&os, "a period too long");
    t[1].repeat_us = 0;

    /* unknown flags: the byte after the CREATE_CELL head */
    mc_ostream_reset(&os);
    h = head(t, 2);
    mc_create_cell_encode(&os, &h.cell);
    mc_write_u8(&os, 2);
    mc_write_f32(&os, 0);
    mc_write_f32(&os, 0);
    mc_write_u16(&os, 0);
    refused(&os, "unknown flags");
    mc_ostream_reset(&os);
    mc_create_cell_encode(&os, &h.cell);
    mc_write_u8(&os, 16);
    mc_write_f32(&os, 0);
    mc_write_f32(&os, 0);
    mc_write_u16(&os, 0);
    refused(&os, "unknown flags (bit 4)");
    /* bit 3 without its call number, or with a number of 0 */
    mc_ostream_reset(&os);
    mc_create_cell_encode(&os, &h.cell);
    mc_write_u8(&os, 8);
    mc_write_f32(&os, 0);
    mc_write_f32(&os, 0);
    mc_write_u16(&os, 0);
    refused(&os, "flags bit 3 with no call number");
    mc_write_u32(&os, 0);
    refused(&os, "a call number of 0");

    /* more timers than allowed, and more than the payload holds */
    mc_ostream_reset(&os);
    mc_create_cell_encode(&os, &h.cell);
    mc_write_u8(&os, 0);
    mc_write_f32(&os, 0);
    mc_write_f32(&os, 0);
    mc_write_u16(&os, MC_MIGRATE_TIMERS_MAX + 1);
    refused(&os, "too many timers");
    mc_ostream_reset(&os);
    mc_create_cell_encode(&os, &h.cell);
    mc_write_u8(&os, 0);
    mc_write_f32(&os, 0);
    mc_write_f32(&os, 0);
    mc_write_u16(&os, 100);
    refused(&os, "timers the payload does not hold");

    /* CELL_MOVED: another entity's mailbox, a BASE mailbox, trailing bytes, short */
    char why[256];
    int32_t id;
    mc_mailbox_ref cell, got;
    mc_mailbox_ref_init(&cell, 4098, 0x7F000001u, 20002, MC_COMPONENT_CELL, avatar);
    mc_ostream_reset(&os);
    mc_cell_moved_encode(&os, 4097, &cell);
    mc_istream is;
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_cell_moved_decode(defs, &is, &id, &got, why, sizeof why));
    mc_mailbox_ref_init(&cell, 4097, 0x7F000001u, 20002, MC_COMPONENT_BASE, avatar);
    mc_ostream_reset(&os);
    mc_cell_moved_encode(&os, 4097, &cell);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_cell_moved_decode(defs, &is, &id, &got, why, sizeof why));
    mc_mailbox_ref_init(&cell, 4097, 0x7F000001u, 20002, MC_COMPONENT_CELL, avatar);
    mc_ostream_reset(&os);
    mc_cell_moved_encode(&os, 4097, &cell);
    mc_write_u8(&os, 0);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_cell_moved_decode(defs, &is, &id, &got, why, sizeof why));
    ck_assert(why[0] && !strchr(why, '\n'));
    mc_istream_init(&is, os.data, 15);
    ck_assert(!mc_cell_moved_decode(defs, &is, &id, &got, why, sizeof why));

    /* CELL_MIGRATE_END: outcome 3, id 0, a byte too many */
    uint8_t outcome;
    mc_ostream_reset(&os);
    mc_migrate_end_encode(&os, 4097, 3);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_migrate_end_decode(&is, &id, &outcome));
    mc_ostream_reset(&os);
    mc_migrate_end_encode(&os, 0, 0);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_migrate_end_decode(&is, &id, &outcome));
    mc_ostream_reset(&os);
    mc_migrate_end_encode(&os, 4097, 0);
    mc_write_u8(&os, 0);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_migrate_end_decode(&is, &id, &outcome));
    mc_ostream_free(&os);
    mc_defs_free(defs);
}
END_TEST

/* WITNESS_CALLS: the head and entries round-trip; a bad head or entry is refused. */
START_TEST(witness_calls_round_trip_and_bad_ones_are_refused)
{
    mc_ostream os;
    mc_ostream_init(&os);
    const uint8_t args[3] = {1, 2, 3};
    mc_witness_calls_head_encode(&os, 4097, 2);
    mc_witness_call a = {.id = 5, .type = 2, .method = 1, .args = args, .len = 3};
    mc_witness_call b = {.id = 6, .type = 3, .method = 0, .args = args, .len = 0};
    mc_witness_call_encode(&os, &a);
    mc_witness_call_encode(&os, &b);
    mc_istream is;
    mc_istream_init(&is, os.data, os.size);
    int32_t id;
    uint16_t n;
    ck_assert(mc_witness_calls_head_decode(&is, &id, &n));
    ck_assert_int_eq(id, 4097);
    ck_assert_int_eq(n, 2);
    mc_witness_call c;
    ck_assert(mc_witness_call_decode(&is, &c));
    ck_assert_int_eq(c.id, 5);
    ck_assert_int_eq(c.type, 2);
    ck_assert_int_eq(c.method, 1);
    ck_assert_uint_eq(c.len, 3);
    ck_assert_mem_eq(c.args, args, 3);
    ck_assert(mc_witness_call_decode(&is, &c));
    ck_assert_int_eq(c.id, 6);
    ck_assert_uint_eq(c.len, 0);
    ck_assert(mc_istream_done(&is));
    ck_assert(!mc_witness_call_decode(&is, &c)); /* nothing left */
    /* an entity id not positive; too many entries */
    mc_ostream_reset(&os);
    mc_witness_calls_head_encode(&os, 0, 1);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_witness_calls_head_decode(&is, &id, &n));
    mc_ostream_reset(&os);
    mc_witness_calls_head_encode(&os, 7, MC_WITNESS_CALLS_MAX + 1);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_witness_calls_head_decode(&is, &id, &n));
    /* a caller id not positive; arguments cut short */
    mc_ostream_reset(&os);
    a.id = -1;
    mc_witness_call_encode(&os, &a);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_witness_call_decode(&is, &c));
    mc_ostream_reset(&os);
    a.id = 5;
    mc_witness_call_encode(&os, &a);
    mc_istream_init(&is, os.data, os.size - 1);
    ck_assert(!mc_witness_call_decode(&is, &c));
    mc_ostream_free(&os);
}
END_TEST

/* GHOST_REACH of these values, decoded: accepted or not. */
static bool reach_ok(int32_t space, float reach, size_t extra, size_t cut)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_ghost_reach_encode(&os, space, reach);
    for (size_t i = 0; i < extra; i++)
        mc_write_u8(&os, 0);
    mc_istream is;
    mc_istream_init(&is, os.data, os.size - cut);
    int32_t sp = -1;
    float r = -1;
    char why[256] = "";
    bool ok = mc_ghost_reach_decode(&is, &sp, &r, why, sizeof why);
    if (ok) {
        ck_assert_int_eq(sp, space);
        ck_assert(r == reach);
    } else {
        ck_assert_msg(why[0] && !strchr(why, '\n'), "reason '%s'", why);
    }
    mc_ostream_free(&os);
    return ok;
}

START_TEST(a_reach_round_trips_and_bad_ones_are_refused)
{
    ck_assert(reach_ok(7, 155, 0, 0));
    ck_assert(reach_ok(7, 0, 0, 0));   /* none beyond the ghost distance */
    /* beyond any one cellapp's --aoiMaxRadius (500 by default) yet within the protocol's:
     * taken, the receiver clamps it to its own limit */
    ck_assert(reach_ok(7, 500.5f, 0, 0));
    ck_assert(reach_ok(7, 150000, 0, 0));
    ck_assert(reach_ok(7, MC_GHOST_REACH_MAX, 0, 0)); /* the maximum itself */
    ck_assert(!reach_ok(7, MC_GHOST_REACH_MAX + 1, 0, 0));
    ck_assert(!reach_ok(7, 1e30f, 0, 0));
    ck_assert(!reach_ok(7, NAN, 0, 0));
    ck_assert(!reach_ok(7, INFINITY, 0, 0));
    ck_assert(!reach_ok(7, -1, 0, 0));
    ck_assert(!reach_ok(0, 155, 0, 0));
    ck_assert(!reach_ok(-3, 155, 0, 0));
    ck_assert(!reach_ok(7, 155, 1, 0)); /* trailing bytes */
    for (size_t cut = 1; cut <= 8; cut++)
        ck_assert(!reach_ok(7, 155, 0, cut));
}
END_TEST

/* WITNESS_HEARD round-trips; a bad one is refused and leaves nothing. GHOST_CLIENT_CALL_SEQ
 * round-trips; a number of 0 or a short one is refused. */
START_TEST(witness_heard_and_numbered_ghost_calls_round_trip_and_bad_ones_are_refused)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_witness_heard h[2] = {{5, 0}, {9, 4000000000u}};
    mc_witness_heard_encode(&os, 4097, h, 2);
    ck_assert_uint_eq(os.size, 8 + 16);
    mc_istream is;
    mc_istream_init(&is, os.data, os.size);
    int32_t id;
    mc_witness_heard *out;
    size_t n;
    ck_assert(mc_witness_heard_decode(&is, &id, &out, &n));
    ck_assert_int_eq(id, 4097);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(out[1].id, 9);
    ck_assert_uint_eq(out[1].seq, 4000000000u);
    free(out);
    /* cut short, trailing bytes, an id not positive, a caller id not positive, too many */
    mc_istream_init(&is, os.data, os.size - 1);
    ck_assert(!mc_witness_heard_decode(&is, &id, &out, &n));
    ck_assert_ptr_null(out);
    mc_write_u8(&os, 0);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_witness_heard_decode(&is, &id, &out, &n));
    mc_ostream_reset(&os);
    mc_witness_heard_encode(&os, 0, h, 2);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_witness_heard_decode(&is, &id, &out, &n));
    mc_ostream_reset(&os);
    h[0].id = -3;
    mc_witness_heard_encode(&os, 7, h, 2);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_witness_heard_decode(&is, &id, &out, &n));
    ck_assert_ptr_null(out);
    mc_ostream_reset(&os);
    mc_write_i32(&os, 7);
    mc_write_u32(&os, MC_MIGRATE_TOLD_MAX + 1);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_witness_heard_decode(&is, &id, &out, &n));
    /* the numbered ghost call */
    const uint8_t args[3] = {1, 2, 3};
    mc_ostream_reset(&os);
    mc_ghost_call_seq_encode(&os, 12, 2, 77, args, 3);
    mc_istream_init(&is, os.data, os.size);
    uint16_t method;
    uint32_t seq;
    const uint8_t *a;
    size_t len;
    char why[256];
    ck_assert(mc_ghost_call_seq_decode(&is, &id, &method, &seq, &a, &len, why, sizeof why));
    ck_assert_int_eq(id, 12);
    ck_assert_uint_eq(method, 2);
    ck_assert_uint_eq(seq, 77);
    ck_assert_uint_eq(len, 3);
    ck_assert_mem_eq(a, args, 3);
    mc_ostream_reset(&os);
    mc_ghost_call_seq_encode(&os, 12, 2, 0, args, 3);
    mc_istream_init(&is, os.data, os.size);
    ck_assert(!mc_ghost_call_seq_decode(&is, &id, &method, &seq, &a, &len, why, sizeof why));
    ck_assert(why[0]);
    mc_istream_init(&is, os.data, 9);
    ck_assert(!mc_ghost_call_seq_decode(&is, &id, &method, &seq, &a, &len, why, sizeof why));
    mc_ostream_free(&os);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("move_wire");
    TCase *tc = tcase_create("messages");
    tcase_add_test(tc, a_migrating_cell_round_trips);
    tcase_add_test(tc, malformed_moves_are_refused_with_a_reason);
    tcase_add_test(tc, witness_calls_round_trip_and_bad_ones_are_refused);
    tcase_add_test(tc, a_reach_round_trips_and_bad_ones_are_refused);
    tcase_add_test(tc, witness_heard_and_numbered_ghost_calls_round_trip_and_bad_ones_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
