/* libFuzzer target: hostile entity-message payloads (entity/wire.h) against the Probe game
 * (tests/entity/game), whose generated code and handlers are linked in. The first byte picks
 * the message; the rest is its payload, as a handler receives it:
 *   0  ENTITY_CALL: mc_call_header_read, then (for a type, part and method the receiver would
 *      accept) mc_game_dispatch on a fresh Probe part struct: the real argument decoding and
 *      handler. The call context's sink accepts sends and requests and drops them (at most
 *      256 per input); there is no engine (ops NULL: the engine API answers "state").
 *   1  CREATE_BASE: mc_create_base_decode.
 *   2  CREATE_CELL: mc_create_cell_decode, then props_decode of the cell part (as a cellapp).
 *   3  CELL_GONE: mc_cell_gone_decode, then props_decode of the cell part (as a baseapp).
 *   4  DESTROY_CELL: mc_destroy_cell_decode.
 *   5  CELL_MIGRATE: mc_migrate_decode, then props_decode of the cell part (as a cellapp).
 *   6  CELL_MOVED: mc_cell_moved_decode.
 *   7  CELL_MIGRATE_END: mc_migrate_end_decode.
 *   8  CELL_COPY: mc_cell_copy_decode, then props_decode of the cell part (as a baseapp).
 *   9  RESTORE_CELL: mc_restore_cell_decode, then as CREATE_CELL (as a cellapp).
 *  10  GHOST_DATA: mc_ghost_head_decode, then each (index, value) as a ghost takes it: the
 *      index a ghosted cell property of Probe, props_decode_one into a fresh cell struct.
 *  11  GHOST_DELETE: mc_ghost_delete_decode.
 *  12  GHOST_CLIENT_CALL: mc_ghost_call_decode, then (a client method of Probe) its arguments
 *      decoded against the method's def, as a ghost's cellapp takes them.
 *  13  WITNESS_CALLS: mc_witness_calls_head_decode and each entry (mc_witness_call_decode),
 *      then its type, client method and arguments checked against the defs, as the new
 *      cellapp of an offloaded witness takes them.
 *  14  GHOST_CLIENT_CALL_SEQ: mc_ghost_call_seq_decode (the call's number after the method),
 *      then as 12.
 *  15  WITNESS_HEARD: mc_witness_heard_decode (an offloaded witness's record of the last
 *      numbered call its client heard of each entity).
 *  16  GHOST_REACH: mc_ghost_reach_decode: exactly 8 bytes, a positive space id, a finite
 *      reach within 0..MC_GHOST_REACH_MAX (the upper end of --aoiMaxRadius).
 * Whatever decodes must encode again and decode to the same values (abort otherwise); a
 * refusal must say why in one line and leave nothing allocated (LeakSanitizer).
 *
 * With MC_FUZZ_WRITE_SEEDS=<dir> in the environment the binary writes its seed corpus there
 * (valid messages of each kind, made with the encoders) and exits: that is how the files in
 * fuzz_seeds/ were made. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/value_json.h"
#include "entity/move_wire.h"
#include "entity/restore_wire.h"
#include "entity/ghost_wire.h"
#include "entity/wire.h"
#include "game.h"

#ifndef MC_PROBE_RES
#define MC_PROBE_RES "tests/entity/game"
#endif

enum {
    SEL_CALL,
    SEL_CREATE_BASE,
    SEL_CREATE_CELL,
    SEL_CELL_GONE,
    SEL_DESTROY_CELL,
    SEL_MIGRATE,
    SEL_CELL_MOVED,
    SEL_MIGRATE_END,
    SEL_CELL_COPY,
    SEL_RESTORE_CELL,
    SEL_GHOST_DATA,
    SEL_GHOST_DELETE,
    SEL_GHOST_CLIENT_CALL,
    SEL_WITNESS_CALLS,
    SEL_GHOST_CLIENT_CALL_SEQ,
    SEL_WITNESS_HEARD,
    SEL_GHOST_REACH,
    SEL_COUNT
};

static mc_entity_defs *defs;
static const mc_game_module *module;

static void die(const char *what, const char *why)
{
    fprintf(stderr, "fuzz_entity_messages: %s: %s\n", what, why);
    abort();
}

static void refused(const char *why)
{
    if (!why[0] || strchr(why, '\n'))
        die("a refusal must say why in one line", why);
}

/* ---- the sink: accepts and drops ------------------------------------------------------- */

static unsigned sink_budget;

static int sink_send(void *ctx, const mc_mailbox_ref *to, mc_part part, uint16_t index,
                     const uint8_t *args, size_t len)
{
    (void)ctx, (void)to, (void)part, (void)index, (void)args, (void)len;
    if (sink_budget == 0)
        return MC_CALL_ERR_BUSY;
    sink_budget--;
    return MC_CALL_OK;
}

static int sink_request(void *ctx, const mc_mailbox_ref *to, mc_part part, uint16_t index,
                        const uint8_t *args, size_t len, mc_reply_fn on_reply, void *cb,
                        void *ud)
{
    (void)on_reply, (void)cb, (void)ud;
    return sink_send(ctx, to, part, index, args, len);
}

/* ---- helpers --------------------------------------------------------------------------- */

static const mc_game_type *probe_type(void) { return &module->types[Probe_TYPE_ID]; }

/* A fresh part struct at its defaults (heap; free with part_free). */
static void *part_new(mc_part part)
{
    const mc_game_type *gt = probe_type();
    void *props = calloc(1, gt->props_size[part] + 1);
    if (!props || gt->props_init(defs, part, props) != 0)
        die("props_init", "out of memory");
    return props;
}

static void part_free(mc_part part, void *props)
{
    probe_type()->props_free(part, props);
    free(props);
}

/* The part's properties encode, and decode into a fresh struct to the same bytes. */
static void part_round_trip(mc_part part, const void *props)
{
    const mc_game_type *gt = probe_type();
    char why[256];
    mc_ostream a, b;
    mc_ostream_init(&a);
    mc_ostream_init(&b);
    if (gt->props_encode(defs, part, props, false, &a, why, sizeof why) != MC_CALL_OK)
        die("a decoded part does not encode", why);
    void *copy = part_new(part);
    mc_istream is;
    mc_istream_init(&is, a.data, a.size);
    if (gt->props_decode(defs, part, copy, false, &is, why, sizeof why) != MC_CALL_OK ||
        !mc_istream_done(&is))
        die("an encoded part does not decode", why);
    if (gt->props_encode(defs, part, copy, false, &b, why, sizeof why) != MC_CALL_OK ||
        a.size != b.size || memcmp(a.data, b.data, a.size) != 0)
        die("a part does not round-trip", why);
    part_free(part, copy);
    mc_ostream_free(&a);
    mc_ostream_free(&b);
}

/* Decode the rest of is as the cell part's properties (what a cellapp does with CREATE_CELL
 * and a baseapp with CELL_GONE); when they decode, they round-trip. */
static void cell_props(mc_istream *is, bool whole)
{
    void *props = part_new(MC_PART_CELL);
    char why[256] = "";
    int st = probe_type()->props_decode(defs, MC_PART_CELL, props, false, is, why, sizeof why);
    if (st == MC_CALL_OK && (!whole || mc_istream_done(is)))
        part_round_trip(MC_PART_CELL, props);
    else if (st != MC_CALL_OK)
        refused(why);
    part_free(MC_PART_CELL, props);
}

static bool vec_equal(mc_vector3 a, mc_vector3 b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* ---- the messages ---------------------------------------------------------------------- */

/* Handlers loop on a count argument: keep them short (the decoding was done either way). */
static bool too_long(const mc_def_method *m, const mc_value *args)
{
    for (size_t i = 0; i < m->nargs; i++)
        if (m->args[i].name && strcmp(m->args[i].name, "count") == 0 && args[i].as.u > 64)
            return true;
    return false;
}

static void fuzz_call(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    mc_call_header h;
    if (!mc_call_header_read(&is, &h))
        return; /* malformed: refused before any entity is looked at */
    mc_component c = mc_salt_component(h.salt);
    uint16_t type = mc_salt_type(h.salt);
    mc_part part = c == MC_COMPONENT_CELL || c == MC_COMPONENT_CELL_VIA_BASE ? MC_PART_CELL
                                                                              : MC_PART_BASE;
    if (type >= module->ntypes || h.method >= module->types[type].nmethods[part])
        return; /* wrongType / noMethod */
    const mc_def_method *m = mc_defs_method(mc_defs_type(defs, type), part, h.method);
    if (!m)
        die("method", "generated method count differs from the defs");
    const uint8_t *args = data + MC_CALL_HEADER_SIZE;
    size_t len = size - MC_CALL_HEADER_SIZE;

    /* The generic decoder and the generated one must agree on what is well-formed. */
    mc_value vals[64];
    memset(vals, 0, sizeof vals);
    char why[256] = "";
    mc_istream ais;
    mc_istream_init(&ais, args, len);
    bool decodes = m->nargs <= 64 && mc_defs_decode_args(defs, m, &ais, vals, why, sizeof why) == 0;
    bool skip = decodes && too_long(m, vals);
    if (decodes)
        for (size_t i = 0; i < m->nargs; i++)
            mc_value_free(&vals[i]);
    if (skip)
        return;

    mc_call_sink sink = {.defs = defs, .send = sink_send, .request = sink_request, .ctx = NULL};
    mc_call_ctx call = {.defs = defs, .sink = &sink, .engine = NULL,
                        .caller_id = h.caller_id, .ops = NULL};
    mc_mailbox_ref_init(&call.self, h.entity_id, 0x7F000001u, 20000,
                        part == MC_PART_CELL ? MC_COMPONENT_CELL : MC_COMPONENT_BASE, type);
    sink_budget = 256;
    void *props = part_new(part);
    mc_ostream reply;
    mc_ostream_init(&reply);
    why[0] = '\0';
    int st = mc_game_dispatch(module, &call, type, part, h.method, props, args, len,
                              m->nreturns ? &reply : NULL, why, sizeof why);
    if ((st == MC_CALL_ERR_ARGS) == decodes) {
        fprintf(stderr, "%s.%s: dispatch %d (%s), mc_defs_decode_args %s\n",
                mc_defs_type(defs, type)->name, m->name, st, why, decodes ? "ok" : "refused");
        die("decoders disagree", m->name);
    }
    if (st == MC_CALL_OK) {
        /* The return values decode, and what the handler did to the entity still encodes. */
        if (m->nreturns) {
            mc_istream ris;
            mc_istream_init(&ris, reply.data, reply.size);
            if (mc_defs_decode_returns(defs, m, &ris, vals, why, sizeof why) != 0 ||
                !mc_istream_done(&ris))
                die("return values do not decode", why);
            for (size_t i = 0; i < m->nreturns; i++)
                mc_value_free(&vals[i]);
        }
        part_round_trip(part, props);
    } else if (st == MC_CALL_ERR_ARGS) {
        refused(why);
    }
    mc_ostream_free(&reply);
    part_free(part, props);
}

static void fuzz_create_base(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    uint16_t type, *idx;
    mc_value *vals;
    size_t n;
    char why[256] = "";
    int st = mc_create_base_decode(defs, &is, &type, &idx, &vals, &n, why, sizeof why);
    if (st != MC_CALL_OK) {
        if (idx || vals || n)
            die("CREATE_BASE refused but left values", why);
        refused(why);
        return;
    }
    const mc_entity_type_def *td = mc_defs_type(defs, type);
    for (size_t i = 0; i < n; i++)
        if (!td || idx[i] >= td->nprops)
            die("CREATE_BASE", "an index past the type's properties");
    /* Encode what decoded; it decodes again to equal values. */
    mc_ostream os;
    mc_ostream_init(&os);
    if (mc_create_base_encode(defs, type, idx, vals, n, &os, why, sizeof why) != 0)
        die("a decoded CREATE_BASE does not encode", why);
    mc_istream again;
    mc_istream_init(&again, os.data, os.size);
    uint16_t type2, *idx2;
    mc_value *vals2;
    size_t n2;
    if (mc_create_base_decode(defs, &again, &type2, &idx2, &vals2, &n2, why, sizeof why) !=
            MC_CALL_OK ||
        type2 != type || n2 != n)
        die("an encoded CREATE_BASE does not decode", why);
    for (size_t i = 0; i < n; i++)
        if (idx2[i] != idx[i] || !mc_value_equal(&vals2[i], &vals[i]))
            die("CREATE_BASE", "values differ after a round trip");
    mc_create_base_free(idx2, vals2, n2);
    mc_ostream_free(&os);
    mc_create_base_free(idx, vals, n);
}

static void fuzz_create_cell(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    mc_create_cell_head h;
    char why[256] = "";
    if (!mc_create_cell_decode(defs, &is, &h, why, sizeof why)) {
        refused(why);
        return;
    }
    if (h.entity_id <= 0 || h.near_id < 0 || h.type >= mc_defs_type_count(defs) ||
        h.base.id != h.entity_id || mc_mailbox_ref_component(&h.base) != MC_COMPONENT_BASE)
        die("CREATE_CELL", "a head that should have been refused");
    mc_ostream os;
    mc_ostream_init(&os);
    mc_create_cell_encode(&os, &h);
    mc_istream again;
    mc_istream_init(&again, os.data, os.size);
    mc_create_cell_head h2;
    if (!mc_create_cell_decode(defs, &again, &h2, why, sizeof why) || !mc_istream_done(&again) ||
        h2.entity_id != h.entity_id || h2.type != h.type || h2.near_id != h.near_id ||
        memcmp(&h2.base, &h.base, sizeof h.base) != 0 || !vec_equal(h2.position, h.position) ||
        !vec_equal(h2.direction, h.direction))
        die("CREATE_CELL", "the head does not round-trip");
    mc_ostream_free(&os);
    cell_props(&is, true);
}

static void fuzz_cell_gone(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    mc_cell_gone_head h;
    if (!mc_cell_gone_decode(&is, &h))
        return;
    if (h.entity_id <= 0)
        die("CELL_GONE", "an id that should have been refused");
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cell_gone_encode(&os, &h);
    mc_istream again;
    mc_istream_init(&again, os.data, os.size);
    mc_cell_gone_head h2;
    if (!mc_cell_gone_decode(&again, &h2) || !mc_istream_done(&again) ||
        h2.entity_id != h.entity_id || h2.why != h.why || !vec_equal(h2.position, h.position) ||
        !vec_equal(h2.direction, h.direction))
        die("CELL_GONE", "the head does not round-trip");
    mc_ostream_free(&os);
    cell_props(&is, false);
}

static void fuzz_cell_copy(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    mc_cell_copy_head h;
    char why[256] = "";
    if (!mc_cell_copy_decode(&is, &h, why, sizeof why)) {
        refused(why);
        return;
    }
    if (h.entity_id <= 0 || h.space_id <= 0)
        die("CELL_COPY", "an id that should have been refused");
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cell_copy_encode(&os, &h);
    mc_istream again;
    mc_istream_init(&again, os.data, os.size);
    mc_cell_copy_head h2;
    if (!mc_cell_copy_decode(&again, &h2, why, sizeof why) || !mc_istream_done(&again) ||
        h2.entity_id != h.entity_id || h2.space_id != h.space_id ||
        !vec_equal(h2.position, h.position) || !vec_equal(h2.direction, h.direction))
        die("CELL_COPY", "the head does not round-trip");
    mc_ostream_free(&os);
    cell_props(&is, true);
}

static void fuzz_restore_cell(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    int32_t space;
    char why[256] = "";
    if (!mc_restore_cell_decode(&is, &space, why, sizeof why)) {
        refused(why);
        return;
    }
    if (space <= 0)
        die("RESTORE_CELL", "a space that should have been refused");
    fuzz_create_cell(data + 4, size - 4);
}

static void fuzz_ghost_data(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    mc_ghost_head h;
    char why[256] = "";
    if (!mc_ghost_head_decode(&is, &h, why, sizeof why)) {
        refused(why);
        return;
    }
    if (h.entity_id <= 0 || h.space_id <= 0)
        die("GHOST_DATA", "an id that should have been refused");
    mc_ostream os;
    mc_ostream_init(&os);
    mc_ghost_head_encode(&os, &h);
    mc_istream again;
    mc_istream_init(&again, os.data, os.size);
    mc_ghost_head h2;
    if (!mc_ghost_head_decode(&again, &h2, why, sizeof why) || !mc_istream_done(&again) ||
        h2.entity_id != h.entity_id || h2.space_id != h.space_id || h2.type != h.type ||
        h2.nprops != h.nprops || !vec_equal(h2.position, h.position) ||
        !vec_equal(h2.direction, h.direction))
        die("GHOST_DATA", "the head does not round-trip");
    mc_ostream_free(&os);
    const mc_entity_type_def *td = mc_defs_type(defs, Probe_TYPE_ID);
    void *props = part_new(MC_PART_CELL);
    for (uint16_t k = 0; k < h.nprops && k < 64; k++) {
        uint16_t index = mc_read_u16(&is);
        if (!mc_istream_ok(&is) || index >= td->nprops || !td->props[index].ghosted ||
            td->props[index].part_index[MC_PART_CELL] < 0)
            break;
        if (probe_type()->props_decode_one(defs, MC_PART_CELL, props, index, &is, why,
                                           sizeof why) != MC_CALL_OK) {
            refused(why);
            break;
        }
    }
    part_free(MC_PART_CELL, props);
}

static void fuzz_ghost_reach(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    int32_t space;
    float reach;
    char why[256] = "";
    bool ok = mc_ghost_reach_decode(&is, &space, &reach, why, sizeof why);
    if (ok != (size == 8 && space > 0 && reach >= 0 && reach <= MC_GHOST_REACH_MAX))
        die("GHOST_REACH", "accepted what it should refuse, or the reverse");
    if (!ok) {
        refused(why);
        return;
    }
    mc_ostream os;
    mc_ostream_init(&os);
    mc_ghost_reach_encode(&os, space, reach);
    if (os.size != size || memcmp(os.data, data, size) != 0)
        die("GHOST_REACH", "does not round-trip");
    mc_ostream_free(&os);
}

static void fuzz_ghost_delete(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    int32_t id;
    char why[256] = "";
    bool ok = mc_ghost_delete_decode(&is, &id, why, sizeof why);
    if (ok != (size >= 4 && id > 0))
        die("GHOST_DELETE", "accepted what it should refuse, or the reverse");
    if (!ok)
        refused(why);
}

static void fuzz_ghost_client_call_any(const uint8_t *data, size_t size, bool numbered)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    int32_t id;
    uint16_t method;
    uint32_t seq = 0;
    const uint8_t *args;
    size_t len;
    char why[256] = "";
    size_t head = numbered ? 10 : 6;
    bool ok = numbered
                  ? mc_ghost_call_seq_decode(&is, &id, &method, &seq, &args, &len, why, sizeof why)
                  : mc_ghost_call_decode(&is, &id, &method, &args, &len, why, sizeof why);
    if (ok != (size >= head && id > 0 && (!numbered || seq > 0)))
        die("GHOST_CLIENT_CALL", "accepted what it should refuse, or the reverse");
    if (!ok) {
        refused(why);
        return;
    }
    if (len != size - head || !mc_istream_done(&is))
        die("GHOST_CLIENT_CALL", "the arguments are not the rest of the message");
    const mc_entity_type_def *td = mc_defs_type(defs, probe_type()->id);
    if (method >= td->nmethods[MC_PART_CLIENT]) {
        refused("no such client method");
        return;
    }
    const mc_def_method *m = &td->methods[MC_PART_CLIENT][method];
    mc_value *vals = calloc(m->nargs ? m->nargs : 1, sizeof *vals);
    if (!vals)
        return;
    mc_istream ai;
    mc_istream_init(&ai, args, len);
    if (mc_defs_decode_args(defs, m, &ai, vals, why, sizeof why) != 0) {
        refused(why);
        free(vals);
        return;
    }
    /* what decodes encodes to the same bytes */
    mc_ostream os;
    mc_ostream_init(&os);
    if (numbered)
        mc_ghost_call_seq_encode(&os, id, method, seq, NULL, 0);
    else
        mc_ghost_call_encode(&os, id, method, NULL, 0);
    if (mc_defs_encode_args(defs, m, vals, &os, why, sizeof why) != 0)
        die("GHOST_CLIENT_CALL", why);
    if (os.size != size || memcmp(os.data, data, size) != 0)
        die("GHOST_CLIENT_CALL", "does not round-trip");
    mc_ostream_free(&os);
    for (size_t i = 0; i < m->nargs; i++)
        mc_value_free(&vals[i]);
    free(vals);
}

static void fuzz_destroy_cell(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    int32_t id;
    bool ok = mc_destroy_cell_decode(&is, &id);
    if (ok != (size == 4 && id > 0))
        die("DESTROY_CELL", "accepted what it should refuse, or the reverse");
}

static void fuzz_migrate(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    mc_migrate_head h;
    char why[256] = "";
    if (!mc_migrate_decode(defs, &is, &h, why, sizeof why)) {
        if (h.timers || h.ntimers || h.told || h.ntold || h.holders || h.nholders)
            die("CELL_MIGRATE refused but left timers, a view or ghost holders", why);
        refused(why);
        return;
    }
    if (h.cell.near_id <= 0 || h.ntimers > MC_MIGRATE_TIMERS_MAX || !(h.radius >= 0) ||
        !(h.hysteresis >= 0))
        die("CELL_MIGRATE", "a head that should have been refused");
    mc_ostream os;
    mc_ostream_init(&os);
    mc_migrate_encode(&os, &h);
    mc_istream again;
    mc_istream_init(&again, os.data, os.size);
    mc_migrate_head h2;
    if (!mc_migrate_decode(defs, &again, &h2, why, sizeof why) || !mc_istream_done(&again) ||
        h2.cell.entity_id != h.cell.entity_id || h2.cell.near_id != h.cell.near_id ||
        h2.witness != h.witness || memcmp(&h2.radius, &h.radius, sizeof h.radius) != 0 ||
        h2.ntimers != h.ntimers ||
        (h.ntimers && memcmp(h2.timers, h.timers, h.ntimers * sizeof *h.timers) != 0) ||
        h2.handover != h.handover || h2.ntold != h.ntold ||
        (h.ntold && memcmp(h2.told, h.told, h.ntold * sizeof *h.told) != 0) ||
        h2.nholders != h.nholders ||
        (h.nholders && memcmp(h2.holders, h.holders, h.nholders * sizeof *h.holders) != 0))
        die("CELL_MIGRATE", "the head does not round-trip");
    mc_migrate_free(&h2);
    mc_migrate_free(&h);
    mc_ostream_free(&os);
    cell_props(&is, true);
}

static void fuzz_cell_moved(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    int32_t id;
    mc_mailbox_ref cell;
    char why[256] = "";
    if (!mc_cell_moved_decode(defs, &is, &id, &cell, why, sizeof why)) {
        refused(why);
        return;
    }
    if (id <= 0 || cell.id != id || mc_mailbox_ref_component(&cell) != MC_COMPONENT_CELL ||
        size != 16)
        die("CELL_MOVED", "accepted what it should refuse");
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cell_moved_encode(&os, id, &cell);
    if (os.size != size || memcmp(os.data, data, size) != 0)
        die("CELL_MOVED", "does not round-trip");
    mc_ostream_free(&os);
}

static void fuzz_ghost_client_call(const uint8_t *data, size_t size)
{
    fuzz_ghost_client_call_any(data, size, false);
}

static void fuzz_witness_heard(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    int32_t id;
    mc_witness_heard *h;
    size_t n;
    if (!mc_witness_heard_decode(&is, &id, &h, &n)) {
        if (h)
            die("WITNESS_HEARD", "refused but left a record");
        refused("malformed");
        return;
    }
    if (id <= 0 || n > MC_MIGRATE_TOLD_MAX || size != 8 + n * 8)
        die("WITNESS_HEARD", "accepted what it should refuse");
    mc_ostream os;
    mc_ostream_init(&os);
    mc_witness_heard_encode(&os, id, h, n);
    if (os.size != size || memcmp(os.data, data, size) != 0)
        die("WITNESS_HEARD", "does not round-trip");
    mc_ostream_free(&os);
    free(h);
}

static void fuzz_witness_calls(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    int32_t id;
    uint16_t n;
    if (!mc_witness_calls_head_decode(&is, &id, &n)) {
        if (size >= 6 && id > 0 && n <= MC_WITNESS_CALLS_MAX)
            die("WITNESS_CALLS", "refused a good head");
        refused("malformed head");
        return;
    }
    for (uint16_t i = 0; i < n; i++) {
        mc_witness_call c;
        if (!mc_witness_call_decode(&is, &c)) {
            refused("malformed entry");
            break;
        }
        if (c.id <= 0 || c.len > MC_WITNESS_CALL_ARGS_MAX)
            die("WITNESS_CALLS", "accepted a bad entry");
        /* what decoded encodes and decodes to the same entry */
        mc_ostream os;
        mc_ostream_init(&os);
        mc_witness_call_encode(&os, &c);
        mc_istream again;
        mc_istream_init(&again, os.data, os.size);
        mc_witness_call d;
        if (!mc_witness_call_decode(&again, &d) || !mc_istream_done(&again) || d.id != c.id ||
            d.type != c.type || d.method != c.method || d.len != c.len ||
            (c.len && memcmp(d.args, c.args, c.len) != 0))
            die("WITNESS_CALLS", "an entry does not round-trip");
        mc_ostream_free(&os);
        const mc_entity_type_def *td = mc_defs_type(defs, c.type);
        const mc_def_method *m = td ? mc_defs_method(td, MC_PART_CLIENT, c.method) : NULL;
        if (!m) {
            refused("no such type or client method");
            continue;
        }
        mc_value *vals = calloc(m->nargs ? m->nargs : 1, sizeof *vals);
        if (!vals)
            break;
        mc_istream ai;
        mc_istream_init(&ai, c.args, c.len);
        char why[256] = "";
        if (mc_defs_decode_args(defs, m, &ai, vals, why, sizeof why) != 0) {
            refused(why);
        } else {
            for (size_t k = 0; k < m->nargs; k++)
                mc_value_free(&vals[k]);
        }
        free(vals);
    }
}

static void fuzz_migrate_end(const uint8_t *data, size_t size)
{
    mc_istream is;
    mc_istream_init(&is, data, size);
    int32_t id;
    uint8_t outcome;
    bool ok = mc_migrate_end_decode(&is, &id, &outcome);
    if (ok != (size == 5 && id > 0 && outcome <= MC_MIGRATE_FLUSHED))
        die("CELL_MIGRATE_END", "accepted what it should refuse, or the reverse");
}

/* ---- seeds ----------------------------------------------------------------------------- */

static void seed_file(const char *dir, const char *name, uint8_t sel, const mc_ostream *os)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/msg_%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(&sel, 1, 1, f) != 1 || (os->size && fwrite(os->data, 1, os->size, f) !=
                                                              os->size) ||
        fclose(f) != 0)
        die("cannot write a seed", path);
}

static mc_mailbox_ref seed_mailbox(int32_t id, mc_component c)
{
    mc_mailbox_ref m;
    mc_mailbox_ref_init(&m, id, 0x7F000001u, 20001, c, Probe_TYPE_ID);
    return m;
}

static void seed_call(const char *dir, mc_part part, const char *method, const char *json)
{
    const mc_def_method *m =
        mc_defs_method_by_name(mc_defs_type(defs, Probe_TYPE_ID), part, method);
    mc_value args[64];
    char why[256];
    if (!m || mc_json_to_args(defs, m, json, strlen(json), args, why, sizeof why) != 0)
        die(method, m ? why : "no such method");
    mc_ostream os;
    mc_ostream_init(&os);
    mc_call_header h = {.entity_id = 4097, .method = m->index, .caller_id = 0,
                        .salt = mc_salt_pack(part == MC_PART_CELL ? MC_COMPONENT_CELL
                                                                  : MC_COMPONENT_BASE,
                                             Probe_TYPE_ID)};
    mc_call_header_write(&os, &h);
    if (mc_defs_encode_args(defs, m, args, &os, why, sizeof why) != 0)
        die(method, why);
    for (size_t i = 0; i < m->nargs; i++)
        mc_value_free(&args[i]);
    char name[128];
    snprintf(name, sizeof name, "call_%s_%s", mc_part_name(part), method);
    seed_file(dir, name, SEL_CALL, &os);
    mc_ostream_free(&os);
}

static void seed_create_base(const char *dir, const char *name, const char *json)
{
    uint16_t *idx;
    mc_value *vals;
    size_t n;
    char why[256];
    if (mc_json_to_props(defs, mc_defs_type(defs, Probe_TYPE_ID), json, strlen(json), &idx,
                         &vals, &n, why, sizeof why) != 0)
        die(name, why);
    mc_ostream os;
    mc_ostream_init(&os);
    if (mc_create_base_encode(defs, Probe_TYPE_ID, idx, vals, n, &os, why, sizeof why) != 0)
        die(name, why);
    seed_file(dir, name, SEL_CREATE_BASE, &os);
    mc_ostream_free(&os);
    mc_json_props_free(idx, vals, n);
}

/* The cell part's properties with a note set. */
static void write_cell_props(mc_ostream *os, const char *note)
{
    Probe_cell *props = part_new(MC_PART_CELL);
    if (note) {
        free(props->cellNote);
        props->cellNote = strdup(note);
    }
    props->cellSeen = 3;
    props->hp = -7;
    char why[256];
    if (probe_type()->props_encode(defs, MC_PART_CELL, props, false, os, why, sizeof why) !=
        MC_CALL_OK)
        die("cell properties", why);
    part_free(MC_PART_CELL, props);
}

static void write_seeds(const char *dir)
{
    seed_call(dir, MC_PART_BASE, "ping", "[1]");
    seed_call(dir, MC_PART_BASE, "echo", "[-42]");
    seed_call(dir, MC_PART_BASE, "fail", "[]");
    seed_call(dir, MC_PART_BASE, "event", "[\"hello\"]");
    seed_call(dir, MC_PART_BASE, "remember",
              "[{\"id\":12,\"addr\":\"127.0.0.1:20001\",\"component\":\"CELL_VIA_BASE\","
              "\"type\":0}]");
    seed_call(dir, MC_PART_BASE, "blast",
              "[{\"id\":12,\"addr\":\"127.0.0.1:20001\",\"component\":\"BASE\",\"type\":0}, 3, 1]");
    seed_call(dir, MC_PART_BASE, "ask",
              "[{\"id\":12,\"addr\":\"127.0.0.1:20001\",\"component\":\"CELL\",\"type\":0}, 5]");
    seed_call(dir, MC_PART_BASE, "makeCell", "[null]");
    seed_call(dir, MC_PART_BASE, "startTimer", "[0.05, 0.05]");
    seed_call(dir, MC_PART_BASE, "registerAs", "[\"svc\"]");
    seed_call(dir, MC_PART_BASE, "spawn", "[2]");
    seed_call(dir, MC_PART_BASE, "die", "[]");
    seed_call(dir, MC_PART_CELL, "note", "[\"a note\"]");
    seed_call(dir, MC_PART_CELL, "echo", "[7]");
    seed_call(dir, MC_PART_CELL, "blast",
              "[{\"id\":12,\"addr\":\"127.0.0.1:20001\",\"component\":\"BASE_VIA_CELL\","
              "\"type\":0}, 2, 1]");

    seed_create_base(dir, "create_base_empty", "");
    seed_create_base(dir, "create_base_label", "{\"label\":\"x\"}");
    seed_create_base(dir, "create_base_many",
                     "{\"label\":\"many\",\"created\":[1,2,3],\"hp\":5,\"cellNote\":\"n\","
                     "\"peer\":{\"id\":3,\"addr\":\"127.0.0.1:20001\",\"component\":\"BASE\","
                     "\"type\":0}}");

    mc_ostream os;
    mc_ostream_init(&os);
    mc_create_cell_head ch = {.entity_id = 4097, .type = Probe_TYPE_ID, .near_id = 0,
                              .base = seed_mailbox(4097, MC_COMPONENT_BASE),
                              .position = {1, 2, 3}, .direction = {0, 0, 1.5f}};
    mc_create_cell_encode(&os, &ch);
    write_cell_props(&os, NULL);
    seed_file(dir, "create_cell_new_space", SEL_CREATE_CELL, &os);
    mc_ostream_reset(&os);
    ch.near_id = 12;
    mc_create_cell_encode(&os, &ch);
    write_cell_props(&os, "kept");
    seed_file(dir, "create_cell_near", SEL_CREATE_CELL, &os);

    mc_ostream_reset(&os);
    mc_restore_cell_encode(&os, 8193);
    ch.near_id = 0;
    mc_create_cell_encode(&os, &ch);
    write_cell_props(&os, "restored");
    seed_file(dir, "restore_cell", SEL_RESTORE_CELL, &os);

    mc_ostream_reset(&os);
    mc_cell_copy_head cp = {.entity_id = 4097, .space_id = 8193, .position = {7, 8, 9},
                            .direction = {0, 0, 1}};
    mc_cell_copy_encode(&os, &cp);
    write_cell_props(&os, "copied");
    seed_file(dir, "cell_copy", SEL_CELL_COPY, &os);

    /* a ghost of a Probe with its one ghosted property (hp), and its deletion */
    mc_ostream_reset(&os);
    const mc_entity_type_def *gtd = mc_defs_type(defs, Probe_TYPE_ID);
    uint16_t ghosted = 0;
    for (size_t i = 0; i < gtd->nprops; i++)
        ghosted += gtd->props[i].ghosted && gtd->props[i].part_index[MC_PART_CELL] >= 0;
    mc_ghost_head ghh = {.entity_id = 4097, .type = Probe_TYPE_ID, .space_id = 8193,
                         .position = {-3, 0, 2}, .direction = {1, 0, 0}, .nprops = ghosted};
    mc_ghost_head_encode(&os, &ghh);
    void *gp = part_new(MC_PART_CELL);
    char gwhy[256];
    for (size_t i = 0; i < gtd->nprops; i++)
        if (gtd->props[i].ghosted && gtd->props[i].part_index[MC_PART_CELL] >= 0) {
            mc_write_u16(&os, gtd->props[i].index);
            if (probe_type()->props_encode_one(defs, MC_PART_CELL, gp, gtd->props[i].index, &os,
                                               gwhy, sizeof gwhy) != MC_CALL_OK)
                die("seed", gwhy);
        }
    part_free(MC_PART_CELL, gp);
    seed_file(dir, "ghost_data", SEL_GHOST_DATA, &os);
    mc_ostream_reset(&os);
    mc_ghost_delete_encode(&os, 4097);
    seed_file(dir, "ghost_delete", SEL_GHOST_DELETE, &os);
    mc_ostream_reset(&os);
    mc_ghost_reach_encode(&os, 7, 155);
    seed_file(dir, "ghost_reach", SEL_GHOST_REACH, &os);
    mc_ostream_reset(&os);
    {
        static const uint8_t ping_seq[4] = {0, 0, 0, 7}; /* onPing(7) */
        mc_ghost_call_encode(&os, 4097, 0, ping_seq, sizeof ping_seq);
    }
    seed_file(dir, "ghost_client_call", SEL_GHOST_CLIENT_CALL, &os);

    mc_ostream_reset(&os);
    {
        static const uint8_t ping_seq[4] = {0, 0, 0, 7}; /* onPing(7) */
        mc_witness_calls_head_encode(&os, 4097, 2);
        mc_witness_call c = {.id = 4098, .type = probe_type()->id, .method = 0,
                             .args = ping_seq, .len = sizeof ping_seq};
        mc_witness_call_encode(&os, &c);
        c.id = 4099;
        mc_witness_call_encode(&os, &c);
    }
    seed_file(dir, "witness_calls", SEL_WITNESS_CALLS, &os);

    mc_ostream_reset(&os);
    {
        static const uint8_t ping_seq[4] = {0, 0, 0, 7}; /* onPing(7) */
        mc_ghost_call_seq_encode(&os, 4097, 0, 12, ping_seq, sizeof ping_seq);
    }
    seed_file(dir, "ghost_client_call_seq", SEL_GHOST_CLIENT_CALL_SEQ, &os);

    mc_ostream_reset(&os);
    {
        mc_witness_heard h[2] = {{4098, 3}, {4099, 70000}};
        mc_witness_heard_encode(&os, 4097, h, 2);
    }
    seed_file(dir, "witness_heard", SEL_WITNESS_HEARD, &os);

    mc_ostream_reset(&os);
    mc_cell_gone_head gh = {.entity_id = 4097, .why = MC_CELL_GONE_SPACE,
                            .position = {4, 5, 6}};
    mc_cell_gone_encode(&os, &gh);
    write_cell_props(&os, "last words");
    seed_file(dir, "cell_gone", SEL_CELL_GONE, &os);
    mc_ostream_reset(&os);
    mc_cell_gone_encode(&os, &gh);
    seed_file(dir, "cell_gone_no_props", SEL_CELL_GONE, &os);

    mc_ostream_reset(&os);
    mc_destroy_cell_encode(&os, 4097);
    seed_file(dir, "destroy_cell", SEL_DESTROY_CELL, &os);

    mc_ostream_reset(&os);
    mc_migrate_timer timers[2] = {{.id = 3, .remaining_us = 150000, .repeat_us = 200000,
                                   .user_arg = 42},
                                  {.id = 9, .remaining_us = 4000000, .user_arg = -1}};
    mc_migrate_head mh = {.cell = ch, .witness = true, .radius = 30, .hysteresis = 2,
                          .timers = timers, .ntimers = 2};
    mh.cell.near_id = 12;
    mc_migrate_encode(&os, &mh);
    write_cell_props(&os, "carried");
    seed_file(dir, "cell_migrate", SEL_MIGRATE, &os);
    mc_ostream_reset(&os);
    mh.witness = false;
    mh.ntimers = 0;
    mc_migrate_encode(&os, &mh);
    write_cell_props(&os, NULL);
    seed_file(dir, "cell_migrate_plain", SEL_MIGRATE, &os);
    /* an offloaded witness: its view and its ghosts' holders handed over */
    mc_ostream_reset(&os);
    int32_t told[2] = {5, 4098};
    mc_address holders[2] = {{0x7F000001u, 20003}, {0x7F000001u, 20004}};
    mh.witness = true;
    mh.ntimers = 2;
    mh.handover = true;
    mh.told = told;
    mh.ntold = 2;
    mh.holders = holders;
    mh.nholders = 2;
    mh.cell.near_id = mh.cell.entity_id;
    mc_migrate_encode(&os, &mh);
    write_cell_props(&os, "offloaded");
    seed_file(dir, "cell_migrate_offload", SEL_MIGRATE, &os);

    mc_ostream_reset(&os);
    mc_mailbox_ref moved = seed_mailbox(4097, MC_COMPONENT_CELL);
    mc_cell_moved_encode(&os, 4097, &moved);
    seed_file(dir, "cell_moved", SEL_CELL_MOVED, &os);

    for (uint8_t outcome = 0; outcome <= MC_MIGRATE_FLUSHED; outcome++) {
        mc_ostream_reset(&os);
        mc_migrate_end_encode(&os, 4097, outcome);
        char name[64];
        snprintf(name, sizeof name, "cell_migrate_end_%u", (unsigned)outcome);
        seed_file(dir, name, SEL_MIGRATE_END, &os);
    }
    mc_ostream_free(&os);
}

/* ---- libFuzzer ------------------------------------------------------------------------- */

static void load_once(void)
{
    if (defs)
        return;
    mc_log_set_level(MC_LOG_ERROR);
    char res[4096], err[8192];
    const char *src = getenv("MC_SOURCE_DIR");
    if (src)
        snprintf(res, sizeof res, "%s/tests/entity/game", src);
    else
        snprintf(res, sizeof res, "%s", MC_PROBE_RES);
    defs = mc_defs_load(res, err, sizeof err);
    if (!defs)
        die(res, err);
    module = mc_game_module_get();
    if (mc_game_check(module, defs, err, sizeof err) != 0)
        die("the Probe module does not match its defs", err);
    const char *seeds = getenv("MC_FUZZ_WRITE_SEEDS");
    if (seeds) {
        write_seeds(seeds);
        _exit(0); /* not exit(): libFuzzer would report the exit as a crash */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_once();
    if (size < 1)
        return 0;
    uint8_t sel = data[0] % SEL_COUNT;
    data++;
    size--;
    switch (sel) {
    case SEL_CALL:
        fuzz_call(data, size);
        break;
    case SEL_CREATE_BASE:
        fuzz_create_base(data, size);
        break;
    case SEL_CREATE_CELL:
        fuzz_create_cell(data, size);
        break;
    case SEL_CELL_GONE:
        fuzz_cell_gone(data, size);
        break;
    case SEL_DESTROY_CELL:
        fuzz_destroy_cell(data, size);
        break;
    case SEL_MIGRATE:
        fuzz_migrate(data, size);
        break;
    case SEL_CELL_MOVED:
        fuzz_cell_moved(data, size);
        break;
    case SEL_CELL_COPY:
        fuzz_cell_copy(data, size);
        break;
    case SEL_RESTORE_CELL:
        fuzz_restore_cell(data, size);
        break;
    case SEL_GHOST_DATA:
        fuzz_ghost_data(data, size);
        break;
    case SEL_GHOST_DELETE:
        fuzz_ghost_delete(data, size);
        break;
    case SEL_GHOST_CLIENT_CALL:
        fuzz_ghost_client_call(data, size);
        break;
    case SEL_GHOST_CLIENT_CALL_SEQ:
        fuzz_ghost_client_call_any(data, size, true);
        break;
    case SEL_WITNESS_HEARD:
        fuzz_witness_heard(data, size);
        break;
    case SEL_WITNESS_CALLS:
        fuzz_witness_calls(data, size);
        break;
    case SEL_GHOST_REACH:
        fuzz_ghost_reach(data, size);
        break;
    default:
        fuzz_migrate_end(data, size);
        break;
    }
    return 0;
}
