/* One property at a time (props_encode_one / props_decode_one of the generated module): for
 * every property of every part of a type using every def type, the bytes of each property
 * in index order are exactly the part's whole stream, a property decoded into a fresh struct
 * encodes to the same bytes, a property the part does not hold is "not found", and bytes
 * that do not decode leave the field as it was. */
#include "check_main.h"
#include "defs_test_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "game.h"

int Probe_client_every(const mc_call_ctx *call, Probe_client *self, int8_t i8, int16_t i16,
                       int32_t i32, int64_t i64, uint8_t u8, uint16_t u16, uint32_t u32,
                       uint64_t u64, float f32, double f64, const char *s, const char *us,
                       const mc_value *b, mc_vector2 v2, mc_vector3 v3, mc_vector4 v4,
                       mc_mailbox_ref mb, const mc_value *arr, const mc_value *tup,
                       const mc_value *dict)
{
    (void)call; (void)self; (void)i8; (void)i16; (void)i32; (void)i64; (void)u8; (void)u16;
    (void)u32; (void)u64; (void)f32; (void)f64; (void)s; (void)us; (void)b; (void)v2;
    (void)v3; (void)v4; (void)mb; (void)arr; (void)tup; (void)dict;
    return 0;
}

static mc_entity_defs *load_probe(void)
{
    char res[4096], err[8192];
    const char *src = getenv("MC_SOURCE_DIR");
    snprintf(res, sizeof(res), "%s/tests/defs/allkinds", src ? src : ".");
    mc_entity_defs *d = mc_defs_load(res, err, sizeof(err));
    ck_assert_msg(d != NULL, "%s", err);
    return d;
}

START_TEST(each_property_alone_matches_the_whole_stream)
{
    mc_entity_defs *defs = load_probe();
    const mc_game_module *m = mc_game_module_get();
    const mc_game_type *gt = &m->types[Probe_TYPE_ID];
    const mc_entity_type_def *td = mc_defs_type(defs, Probe_TYPE_ID);
    char why[256];
    for (int part = 0; part < MC_PART_COUNT; part++) {
        void *a = calloc(1, gt->props_size[part] + 1), *b = calloc(1, gt->props_size[part] + 1);
        ck_assert(a && b);
        ck_assert_int_eq(gt->props_init(defs, (mc_part)part, a), 0);
        ck_assert_int_eq(gt->props_init(defs, (mc_part)part, b), 0);
        /* give the cell part values other than the defaults (every kind) */
        if (part == MC_PART_CELL) {
            Probe_cell *c = a;
            c->i8 = -8;
            c->i64 = -64000000000;
            c->u64 = 18000000000000000000u;
            c->f32 = 1.25f;
            c->v3 = (mc_vector3){1, -2, 3};
            free(c->s);
            c->s = strdup("changed");
            mc_value n = mc_gen_int(MC_TYPE_INT16, -7);
            ck_assert_int_eq(mc_value_append(&c->arr, &n), 0);
        }
        mc_ostream whole, pieces, again;
        mc_ostream_init(&whole);
        mc_ostream_init(&pieces);
        mc_ostream_init(&again);
        ck_assert_int_eq(gt->props_encode(defs, (mc_part)part, a, false, &whole, why, sizeof why),
                         MC_CALL_OK);
        size_t held = 0;
        for (size_t i = 0; i < td->nprops; i++) {
            bool on = td->props[i].part_index[part] >= 0;
            size_t before = pieces.size;
            int rc = gt->props_encode_one(defs, (mc_part)part, a, (uint16_t)i, &pieces, why,
                                          sizeof why);
            if (!on) {
                ck_assert_int_eq(rc, MC_CALL_ERR_NOT_FOUND);
                ck_assert_uint_eq(pieces.size, before);
                continue;
            }
            held++;
            ck_assert_msg(rc == MC_CALL_OK, "%s", why);
            /* decoded alone into b, it encodes to the same bytes */
            mc_istream is;
            mc_istream_init(&is, pieces.data + before, pieces.size - before);
            ck_assert_int_eq(gt->props_decode_one(defs, (mc_part)part, b, (uint16_t)i, &is, why,
                                                  sizeof why),
                             MC_CALL_OK);
            ck_assert(mc_istream_done(&is));
            mc_ostream_reset(&again);
            ck_assert_int_eq(gt->props_encode_one(defs, (mc_part)part, b, (uint16_t)i, &again,
                                                  why, sizeof why),
                             MC_CALL_OK);
            ck_assert_uint_eq(again.size, pieces.size - before);
            if (again.size)
                ck_assert_mem_eq(again.data, pieces.data + before, again.size);
            /* one byte short: refused, the field unchanged */
            if (pieces.size - before > 0) {
                mc_istream_init(&is, pieces.data + before, pieces.size - before - 1);
                int bad = gt->props_decode_one(defs, (mc_part)part, b, (uint16_t)i, &is, why,
                                               sizeof why);
                ck_assert_int_eq(bad, MC_CALL_ERR_ARGS);
                mc_ostream_reset(&again);
                gt->props_encode_one(defs, (mc_part)part, b, (uint16_t)i, &again, why,
                                     sizeof why);
                ck_assert_mem_eq(again.data, pieces.data + before, again.size);
            }
        }
        ck_assert_uint_eq(held, td->nparts_props[part]);
        ck_assert_uint_eq(pieces.size, whole.size);
        if (whole.size)
            ck_assert_mem_eq(pieces.data, whole.data, whole.size);
        ck_assert_int_eq(gt->props_encode_one(defs, (mc_part)part, a, 999, &pieces, why,
                                              sizeof why),
                         MC_CALL_ERR_NOT_FOUND);
        gt->props_free((mc_part)part, a);
        gt->props_free((mc_part)part, b);
        free(a);
        free(b);
        mc_ostream_free(&whole);
        mc_ostream_free(&pieces);
        mc_ostream_free(&again);
    }
    mc_defs_free(defs);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("defs_props_one");
    TCase *tc = tcase_create("props_one");
    tcase_add_test(tc, each_property_alone_matches_the_whole_stream);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
