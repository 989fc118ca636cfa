/* Flat calls: methods whose arguments or return values are all fixed-size numbers and
 * vectors are sent, dispatched and answered by generated code without mc_value. Their bytes
 * must be exactly what the generic path (mc_defs_encode_args / _returns) writes and reads, in
 * both directions and at the edges of every type's range, and wrong lengths are refused. */
#include "check_main.h"
#include "defs_test_util.h"
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "game.h"

/* The client part's handler of Probe.every (declared by the generated header). */
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

static const mc_def_method *method(const mc_entity_defs *defs, mc_part part, uint16_t index)
{
    return mc_defs_method(mc_defs_type(defs, Probe_TYPE_ID), part, index);
}

/* The 13 values of Probe.numbers as generic values (the edges of each range). */
static void edge_values(mc_value v[13])
{
    v[0] = mc_gen_int(MC_TYPE_INT8, INT8_MIN);
    v[1] = mc_gen_int(MC_TYPE_INT16, INT16_MIN);
    v[2] = mc_gen_int(MC_TYPE_INT32, INT32_MIN);
    v[3] = mc_gen_int(MC_TYPE_INT64, INT64_MIN);
    v[4] = mc_gen_uint(MC_TYPE_UINT8, UINT8_MAX);
    v[5] = mc_gen_uint(MC_TYPE_UINT16, UINT16_MAX);
    v[6] = mc_gen_uint(MC_TYPE_UINT32, UINT32_MAX);
    v[7] = mc_gen_uint(MC_TYPE_UINT64, UINT64_MAX);
    v[8] = mc_gen_float(MC_TYPE_FLOAT32, -FLT_MAX);
    v[9] = mc_gen_float(MC_TYPE_FLOAT64, DBL_MIN);
    v[10] = mc_gen_vec(MC_TYPE_VECTOR2, 1.5f, -2.5f, 0, 0);
    v[11] = mc_gen_vec(MC_TYPE_VECTOR3, 3, -4, 5e-39f, 0);
    v[12] = mc_gen_vec(MC_TYPE_VECTOR4, 6, 7, -8, 9e37f);
}

START_TEST(flat_sender_writes_the_generic_bytes)
{
    mc_entity_defs *defs = load_probe();
    capture cap = {0};
    mc_call_sink sink = {.defs = defs, .send = capture_send, .ctx = &cap};
    mc_mailbox_ref cell;
    mc_mailbox_ref_init(&cell, 77, 0x7f000001, 4000, MC_COMPONENT_CELL, Probe_TYPE_ID);
    int rc = send_Probe_cell_numbers(&sink, &cell, INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN,
                                     UINT8_MAX, UINT16_MAX, UINT32_MAX, UINT64_MAX, -FLT_MAX,
                                     DBL_MIN, (mc_vector2){1.5f, -2.5f},
                                     (mc_vector3){3, -4, 5e-39f}, (mc_vector4){6, 7, -8, 9e37f});
    ck_assert_int_eq(rc, MC_CALL_OK);
    ck_assert_int_eq(cap.calls, 1);
    ck_assert_uint_eq(cap.index, Probe_cell_numbers_INDEX);
    mc_value v[13];
    edge_values(v);
    mc_ostream os;
    mc_ostream_init(&os);
    char err[256];
    ck_assert_msg(mc_defs_encode_args(defs, method(defs, MC_PART_CELL, Probe_cell_numbers_INDEX),
                                      v, &os, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(cap.len, 1 + 2 + 4 + 8 + 1 + 2 + 4 + 8 + 4 + 8 + 8 + 12 + 16);
    ck_assert_uint_eq(cap.len, os.size);
    ck_assert_mem_eq(cap.bytes, os.data, os.size);
    /* the mailbox and method checks of the generic sender hold for the flat one */
    mc_mailbox_ref base;
    mc_mailbox_ref_init(&base, 77, 0x7f000001, 4000, MC_COMPONENT_BASE, Probe_TYPE_ID);
    rc = send_Probe_cell_numbers(&sink, &base, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (mc_vector2){0},
                                 (mc_vector3){0}, (mc_vector4){0});
    ck_assert_int_eq(rc, MC_CALL_ERR_MAILBOX);
    mc_mailbox_ref none = {0};
    rc = send_Probe_cell_numbers(&sink, &none, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (mc_vector2){0},
                                 (mc_vector3){0}, (mc_vector4){0});
    ck_assert_int_eq(rc, MC_CALL_ERR_MAILBOX);
    mc_call_sink no_send = {.defs = defs, .ctx = &cap};
    rc = send_Probe_cell_numbers(&no_send, &cell, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (mc_vector2){0},
                                 (mc_vector3){0}, (mc_vector4){0});
    ck_assert_int_eq(rc, MC_CALL_ERR_SEND);
    /* definitions other than the generated code's (the example game's): refused by the
     * method signature, nothing sent */
    char res[4096], lerr[8192];
    const char *src = getenv("MC_SOURCE_DIR");
    snprintf(res, sizeof(res), "%s/defs", src ? src : ".");
    mc_entity_defs *other = mc_defs_load(res, lerr, sizeof(lerr));
    ck_assert_msg(other != NULL, "%s", lerr);
    mc_call_sink wrong = {.defs = other, .send = capture_send, .ctx = &cap};
    rc = send_Probe_cell_numbers(&wrong, &cell, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (mc_vector2){0},
                                 (mc_vector3){0}, (mc_vector4){0});
    ck_assert_int_eq(rc, MC_CALL_ERR_DEFS);
    mc_defs_free(other);
    ck_assert_int_eq(cap.calls, 1);
    mc_ostream_free(&os);
    mc_defs_free(defs);
}
END_TEST

START_TEST(flat_dispatch_reads_the_generic_bytes)
{
    mc_entity_defs *defs = load_probe();
    mc_value v[13];
    edge_values(v);
    mc_ostream os;
    mc_ostream_init(&os);
    char err[256];
    ck_assert(mc_defs_encode_args(defs, method(defs, MC_PART_CELL, Probe_cell_numbers_INDEX), v,
                                  &os, err, sizeof(err)) == 0);
    Probe_cell props;
    ck_assert_int_eq(init_Probe_cell(defs, &props), 0);
    mc_call_ctx call = {.defs = defs};
    mc_mailbox_ref_init(&call.self, 77, 0x7f000001, 4000, MC_COMPONENT_CELL, Probe_TYPE_ID);
    int rc = mc_game_dispatch(mc_game_module_get(), &call, Probe_TYPE_ID, MC_PART_CELL,
                              Probe_cell_numbers_INDEX, &props, os.data, os.size, NULL, err,
                              sizeof(err));
    ck_assert_msg(rc == MC_CALL_OK, "%s", err);
    ck_assert_int_eq(props.i8, INT8_MIN);
    ck_assert_int_eq(props.i16, INT16_MIN);
    ck_assert_int_eq(props.i32, INT32_MIN);
    ck_assert(props.i64 == INT64_MIN);
    ck_assert_uint_eq(props.u8, UINT8_MAX);
    ck_assert_uint_eq(props.u16, UINT16_MAX);
    ck_assert_uint_eq(props.u32, UINT32_MAX);
    ck_assert(props.u64 == UINT64_MAX);
    ck_assert(props.f32 == -FLT_MAX);
    ck_assert(props.f64 == DBL_MIN);
    ck_assert(props.v2.x == 1.5f && props.v2.y == -2.5f);
    ck_assert(props.v3.x == 3 && props.v3.y == -4 && props.v3.z == 5e-39f);
    ck_assert(props.v4.x == 6 && props.v4.z == -8 && props.v4.w == 9e37f);

    /* one byte short, one byte too many, nothing: refused, the handler not run */
    props.i8 = 0;
    rc = mc_game_dispatch(mc_game_module_get(), &call, Probe_TYPE_ID, MC_PART_CELL,
                          Probe_cell_numbers_INDEX, &props, os.data, os.size - 1, NULL, err,
                          sizeof(err));
    ck_assert_int_eq(rc, MC_CALL_ERR_ARGS);
    ck_assert_msg(strstr(err, "numbers") != NULL, "%s", err);
    uint8_t longer[128];
    memcpy(longer, os.data, os.size);
    longer[os.size] = 0;
    rc = mc_game_dispatch(mc_game_module_get(), &call, Probe_TYPE_ID, MC_PART_CELL,
                          Probe_cell_numbers_INDEX, &props, longer, os.size + 1, NULL, err,
                          sizeof(err));
    ck_assert_int_eq(rc, MC_CALL_ERR_ARGS);
    rc = mc_game_dispatch(mc_game_module_get(), &call, Probe_TYPE_ID, MC_PART_CELL,
                          Probe_cell_numbers_INDEX, &props, NULL, 0, NULL, err, sizeof(err));
    ck_assert_int_eq(rc, MC_CALL_ERR_ARGS);
    ck_assert_int_eq(props.i8, 0);
    /* the handler's failure is reported as such (INT32 13 makes it fail) */
    v[2] = mc_gen_int(MC_TYPE_INT32, 13);
    mc_ostream_reset(&os);
    ck_assert(mc_defs_encode_args(defs, method(defs, MC_PART_CELL, Probe_cell_numbers_INDEX), v,
                                  &os, err, sizeof(err)) == 0);
    rc = mc_game_dispatch(mc_game_module_get(), &call, Probe_TYPE_ID, MC_PART_CELL,
                          Probe_cell_numbers_INDEX, &props, os.data, os.size, NULL, err,
                          sizeof(err));
    ck_assert_int_eq(rc, MC_CALL_ERR_HANDLER);
    free_Probe_cell(&props);
    mc_ostream_free(&os);
    mc_defs_free(defs);
}
END_TEST

/* What the reply callback of numbersBack saw. */
typedef struct {
    int calls, status;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f32;
    double f64;
    mc_vector2 v2;
    mc_vector3 v3;
    mc_vector4 v4;
} numbers_seen;

static void on_numbers(const mc_call_ctx *call, void *ud, int status, int8_t i8, int16_t i16,
                       int32_t i32, int64_t i64, uint8_t u8, uint16_t u16, uint32_t u32,
                       uint64_t u64, float f32, double f64, mc_vector2 v2, mc_vector3 v3,
                       mc_vector4 v4)
{
    (void)call;
    numbers_seen *w = ud;
    *w = (numbers_seen){w->calls + 1, status, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64,
                        v2, v3, v4};
}

START_TEST(flat_two_way_round_trip)
{
    mc_entity_defs *defs = load_probe();
    capture cap = {0};
    mc_call_sink sink = {.defs = defs, .send = capture_send, .request = capture_request,
                         .ctx = &cap};
    mc_mailbox_ref base;
    mc_mailbox_ref_init(&base, 9, 0x7f000001, 4000, MC_COMPONENT_BASE, Probe_TYPE_ID);
    numbers_seen seen = {0};
    ck_assert_int_eq(send_Probe_base_numbersBack(&sink, &base, 7, on_numbers, &seen),
                     MC_CALL_OK);
    ck_assert_uint_eq(cap.len, 4);
    ck_assert_mem_eq(cap.bytes, ((const uint8_t[]){0, 0, 0, 7}), 4);
    Probe_base props;
    ck_assert_int_eq(init_Probe_base(defs, &props), 0);
    mc_call_ctx call = {.defs = defs, .sink = &sink, .self = base};
    mc_ostream reply;
    mc_ostream_init(&reply);
    char err[256];
    int rc = mc_game_dispatch(mc_game_module_get(), &call, Probe_TYPE_ID, MC_PART_BASE,
                              Probe_base_numbersBack_INDEX, &props, cap.bytes, cap.len, &reply,
                              err, sizeof(err));
    ck_assert_msg(rc == MC_CALL_OK, "%s", err);
    /* the flat reply decodes with the generic decoder to the handler's values */
    const mc_def_method *m = method(defs, MC_PART_BASE, Probe_base_numbersBack_INDEX);
    mc_value r[13];
    mc_istream is;
    mc_istream_init(&is, reply.data, reply.size);
    ck_assert_msg(mc_defs_decode_returns(defs, m, &is, r, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(r[0].as.i, -7);
    ck_assert_int_eq(r[1].as.i, -14);
    ck_assert_int_eq(r[2].as.i, -21);
    ck_assert(r[3].as.i == -7000000000000);
    ck_assert_uint_eq(r[4].as.u, 252);
    ck_assert_uint_eq(r[5].as.u, 65007);
    ck_assert_uint_eq(r[6].as.u, 4000000007u);
    ck_assert(r[7].as.u == UINT64_MAX - 7);
    ck_assert(r[8].as.f == -0.875);
    ck_assert(r[12].as.vec[0] == 1e30f && r[12].as.vec[3] == 7.0f);
    /* the generic encoding of those values is the same bytes */
    mc_ostream again;
    mc_ostream_init(&again);
    ck_assert(mc_defs_encode_returns(defs, m, r, &again, err, sizeof(err)) == 0);
    ck_assert_uint_eq(again.size, reply.size);
    ck_assert_mem_eq(again.data, reply.data, reply.size);
    for (int i = 0; i < 13; i++)
        mc_value_free(&r[i]);
    /* the trampoline reads them straight into the typed callback */
    mc_istream_init(&is, reply.data, reply.size);
    cap.on_reply(&call, MC_CALL_OK, &is, cap.cb, cap.ud);
    ck_assert_int_eq(seen.calls, 1);
    ck_assert_int_eq(seen.status, MC_CALL_OK);
    ck_assert_int_eq(seen.i8, -7);
    ck_assert_int_eq(seen.i16, -14);
    ck_assert(seen.i64 == -7000000000000);
    ck_assert_uint_eq(seen.u32, 4000000007u);
    ck_assert(seen.u64 == UINT64_MAX - 7);
    ck_assert(seen.f64 == 7.0 / 3);
    ck_assert(seen.v2.x == -1 && seen.v2.y == 7);
    ck_assert(seen.v3.y == -0.25f);
    ck_assert(seen.v4.y == -1e-30f);
    /* a reply one byte short: MC_CALL_ERR_ARGS and zeroes */
    mc_istream_init(&is, reply.data, reply.size - 1);
    cap.on_reply(&call, MC_CALL_OK, &is, cap.cb, cap.ud);
    ck_assert_int_eq(seen.calls, 2);
    ck_assert_int_eq(seen.status, MC_CALL_ERR_ARGS);
    ck_assert_int_eq(seen.i8, 0);
    ck_assert(seen.u64 == 0 && seen.v4.w == 0);
    /* an engine error reaches the callback as is */
    cap.on_reply(&call, MC_CALL_ERR_TIMEOUT, NULL, cap.cb, cap.ud);
    ck_assert_int_eq(seen.calls, 3);
    ck_assert_int_eq(seen.status, MC_CALL_ERR_TIMEOUT);
    /* the handler refusing writes no reply */
    mc_ostream_reset(&reply);
    uint8_t neg[4] = {0xff, 0xff, 0xff, 0xff};
    rc = mc_game_dispatch(mc_game_module_get(), &call, Probe_TYPE_ID, MC_PART_BASE,
                          Probe_base_numbersBack_INDEX, &props, neg, sizeof(neg), &reply, err,
                          sizeof(err));
    ck_assert_int_eq(rc, MC_CALL_ERR_HANDLER);
    ck_assert_uint_eq(reply.size, 0);
    /* a sink without request(): the flat two-way sender fails as the generic one does */
    mc_call_sink one_way = {.defs = defs, .send = capture_send, .ctx = &cap};
    ck_assert_int_eq(send_Probe_base_numbersBack(&one_way, &base, 1, on_numbers, &seen),
                     MC_CALL_ERR_SEND);
    mc_ostream_free(&again);
    mc_ostream_free(&reply);
    free_Probe_base(&props);
    mc_defs_free(defs);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("defs_flat");
    TCase *tc = tcase_create("flat");
    tcase_add_test(tc, flat_sender_writes_the_generic_bytes);
    tcase_add_test(tc, flat_dispatch_reads_the_generic_bytes);
    tcase_add_test(tc, flat_two_way_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
