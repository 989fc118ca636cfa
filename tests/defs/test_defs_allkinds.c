/* Generated code for a type that uses every def type as argument, property and return value:
 * it compiles, its senders produce the bytes the decoder expects, and dispatching those
 * bytes reaches the handler with the same values. */
#include "check_main.h"
#include "defs_test_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "game.h"


/* The client part's handler (what a C client writes): counts calls and keeps the string. */
int Probe_client_every(const mc_call_ctx *call, Probe_client *self, int8_t i8, int16_t i16,
                       int32_t i32, int64_t i64, uint8_t u8, uint16_t u16, uint32_t u32,
                       uint64_t u64, float f32, double f64, const char *s, const char *us,
                       const mc_value *b, mc_vector2 v2, mc_vector3 v3, mc_vector4 v4,
                       mc_mailbox_ref mb, const mc_value *arr, const mc_value *tup,
                       const mc_value *dict)
{
    (void)self;
    (void)i8; (void)i16; (void)i64; (void)u8; (void)u16; (void)u32; (void)u64; (void)f32;
    (void)f64; (void)s; (void)b; (void)v2; (void)v3; (void)v4; (void)mb; (void)arr; (void)tup;
    (void)dict;
    int *seen = call->engine;
    *seen = i32;
    return strcmp(us, "\xe2\x82\xac") ? -1 : 0;
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

START_TEST(every_kind_through_sender_and_dispatch)
{
    mc_entity_defs *defs = load_probe();
    char err[512];
    ck_assert_msg(mc_game_check(mc_game_module_get(), defs, err, sizeof(err)) == 0, "%s", err);
    ck_assert_str_eq(MC_GAME_DIGEST, mc_defs_digest_hex(defs));
    capture cap = {0};
    mc_call_sink sink = {.defs = defs, .send = capture_send, .ctx = &cap};
    mc_mailbox_ref cell, client, other;
    mc_mailbox_ref_init(&cell, 77, 0x7f000001, 4000, MC_COMPONENT_CELL, Probe_TYPE_ID);
    mc_mailbox_ref_init(&client, 77, 0x7f000001, 4001, MC_COMPONENT_CLIENT_VIA_BASE,
                        Probe_TYPE_ID);
    mc_mailbox_ref_init(&other, 5, 0x7f000001, 4002, MC_COMPONENT_BASE, Probe_TYPE_ID);

    uint8_t blob_bytes[] = {0, 1, 2, 0xff};
    mc_value blob;
    mc_value_set_bytes(&blob, MC_TYPE_BLOB, blob_bytes, sizeof(blob_bytes));
    mc_value arr = {.kind = MC_TYPE_ARRAY};
    mc_value arr_items[2] = {mc_gen_int(MC_TYPE_INT16, -5), mc_gen_int(MC_TYPE_INT16, 300)};
    arr.as.list.items = arr_items;
    arr.as.list.count = 2;
    mc_value tup = {.kind = MC_TYPE_TUPLE};
    mc_value tup_items[2] = {mc_gen_str(MC_TYPE_STRING, "a"), mc_gen_str(MC_TYPE_STRING, "bc")};
    tup.as.list.items = tup_items;
    tup.as.list.count = 2;
    mc_value dict = {.kind = MC_TYPE_FIXED_DICT};
    mc_value dict_items[2] = {mc_gen_str(MC_TYPE_STRING, "k"), mc_gen_float(MC_TYPE_FLOAT32, 0.25)};
    dict.as.list.items = dict_items;
    dict.as.list.count = 2;

    int rc = send_Probe_cell_every(&sink, &cell, -8, -16, -32, -64, 8, 16, 32, 64, 1.5f, 2.5,
                                   "str", "\xe2\x82\xac", &blob, (mc_vector2){1, 2},
                                   (mc_vector3){3, 4, 5}, (mc_vector4){6, 7, 8, 9}, other, &arr,
                                   &tup, &dict);
    ck_assert_int_eq(rc, MC_CALL_OK);
    ck_assert_int_eq(cap.calls, 1);
    ck_assert_int_eq(cap.part, MC_PART_CELL);
    ck_assert_uint_eq(cap.index, Probe_cell_every_INDEX);
    /* The bytes: spot-check the head (INT8 -8, INT16 -16, INT32 -32) and decode all. */
    ck_assert_mem_eq(cap.bytes, ((const uint8_t[]){0xf8, 0xff, 0xf0, 0xff, 0xff, 0xff, 0xe0}), 7);
    const mc_def_method *m = mc_defs_method(mc_defs_type(defs, Probe_TYPE_ID), MC_PART_CELL,
                                            Probe_cell_every_INDEX);
    mc_value got[20];
    mc_istream is;
    mc_istream_init(&is, cap.bytes, cap.len);
    ck_assert_msg(mc_defs_decode_args(defs, m, &is, got, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(got[0].as.i, -8);
    ck_assert_uint_eq(got[7].as.u, 64);
    ck_assert(got[9].as.f == 2.5);
    ck_assert_str_eq(got[11].as.bytes.data, "\xe2\x82\xac");
    ck_assert(mc_value_equal(&got[12], &blob));
    ck_assert(got[15].as.vec[3] == 9.0f);
    ck_assert_int_eq(got[16].as.mailbox.id, 5);
    ck_assert(mc_value_equal(&got[17], &arr));
    ck_assert(mc_value_equal(&got[18], &tup));
    ck_assert(mc_value_equal(&got[19], &dict));
    for (int i = 0; i < 20; i++)
        mc_value_free(&got[i]);

    /* Dispatch the captured bytes into a cell's properties. */
    Probe_cell props;
    ck_assert_int_eq(init_Probe_cell(defs, &props), 0);
    ck_assert(props.dict.as.list.none);
    mc_call_ctx call = {.defs = defs, .sink = &sink, .self = cell};
    rc = mc_game_dispatch(mc_game_module_get(), &call, Probe_TYPE_ID, MC_PART_CELL,
                          Probe_cell_every_INDEX, &props, cap.bytes, cap.len, NULL, err,
                          sizeof(err));
    ck_assert_msg(rc == MC_CALL_OK, "%s", err);
    ck_assert_int_eq(props.i8, -8);
    ck_assert_int_eq(props.i64, -64);
    ck_assert_uint_eq(props.u16, 16);
    ck_assert(props.f32 == 1.5f);
    ck_assert_str_eq(props.s, "str");
    ck_assert_str_eq(props.us, "\xe2\x82\xac");
    ck_assert(mc_value_equal(&props.b, &blob));
    ck_assert(props.v2.y == 2.0f && props.v3.z == 5.0f && props.v4.w == 9.0f);
    ck_assert_int_eq(props.mb.id, 5);
    ck_assert(mc_value_equal(&props.arr, &arr));
    ck_assert(mc_value_equal(&props.tup, &tup));
    ck_assert(mc_value_equal(&props.dict, &dict));

    /* The cell's properties stream out and back into a fresh struct unchanged. */
    mc_ostream ps;
    mc_ostream_init(&ps);
    ck_assert_msg(encode_Probe_cell(defs, &props, false, &ps, err, sizeof(err)) == MC_CALL_OK,
                  "%s", err);
    Probe_cell copy;
    ck_assert_int_eq(init_Probe_cell(defs, &copy), 0);
    mc_istream_init(&is, ps.data, ps.size);
    ck_assert_msg(decode_Probe_cell(defs, &copy, false, &is, err, sizeof(err)) == MC_CALL_OK,
                  "%s", err);
    ck_assert(mc_istream_done(&is));
    ck_assert_int_eq(copy.i32, -32);
    ck_assert_str_eq(copy.us, "\xe2\x82\xac");
    ck_assert(mc_value_equal(&copy.tup, &tup));
    ck_assert(copy.v4.x == 6.0f);
    mc_ostream ps2;
    mc_ostream_init(&ps2);
    ck_assert_int_eq(encode_Probe_cell(defs, &copy, false, &ps2, err, sizeof(err)), MC_CALL_OK);
    ck_assert_uint_eq(ps2.size, ps.size);
    ck_assert_mem_eq(ps2.data, ps.data, ps.size);
    /* a truncated stream fails and leaves the struct as it was */
    mc_istream_init(&is, ps.data, ps.size - 1);
    ck_assert_int_eq(decode_Probe_cell(defs, &copy, false, &is, err, sizeof(err)),
                     MC_CALL_ERR_ARGS);
    ck_assert_str_eq(copy.s, "str");
    ck_assert(mc_value_equal(&copy.dict, &dict));
    /* nothing here is persistent: a persistent-only stream is empty */
    mc_ostream_reset(&ps2);
    ck_assert_int_eq(encode_Probe_cell(defs, &copy, true, &ps2, err, sizeof(err)), MC_CALL_OK);
    ck_assert_uint_eq(ps2.size, 0);
    /* a value that breaks its type is refused with the property's name */
    copy.dict.as.list.count = 1;
    mc_ostream_reset(&ps2);
    ck_assert_int_eq(encode_Probe_cell(defs, &copy, false, &ps2, err, sizeof(err)),
                     MC_CALL_ERR_ARGS);
    ck_assert_ptr_nonnull(strstr(err, "property dict"));
    ck_assert_uint_eq(ps2.size, 0);
    copy.dict.as.list.count = 2;
    mc_ostream_free(&ps);
    mc_ostream_free(&ps2);
    free_Probe_cell(&copy);
    free_Probe_cell(&props);

    /* The client sender encodes the same bytes for the same arguments. */
    capture cap2 = {0};
    mc_call_sink sink2 = {.defs = defs, .send = capture_send, .ctx = &cap2};
    rc = send_Probe_client_every(&sink2, &client, -8, -16, -32, -64, 8, 16, 32, 64, 1.5f, 2.5,
                                 "str", "\xe2\x82\xac", &blob, (mc_vector2){1, 2},
                                 (mc_vector3){3, 4, 5}, (mc_vector4){6, 7, 8, 9}, other, &arr,
                                 &tup, &dict);
    ck_assert_int_eq(rc, MC_CALL_OK);
    ck_assert_int_eq(cap2.part, MC_PART_CLIENT);
    ck_assert_uint_eq(cap2.len, cap.len);
    ck_assert_mem_eq(cap2.bytes, cap.bytes, cap.len);
    /* ... and a C client dispatches them through the client table */
    const mc_game_module *cm = mc_game_client_get();
    ck_assert_msg(mc_game_check(cm, defs, err, sizeof(err)) == 0, "%s", err);
    ck_assert(cm->client_side);
    int seen = 0;
    mc_call_ctx ccall = {.defs = defs, .engine = &seen, .self = client};
    Probe_client cprops;
    ck_assert_int_eq(init_Probe_client(defs, &cprops), 0);
    rc = mc_game_dispatch(cm, &ccall, Probe_TYPE_ID, MC_PART_CLIENT, Probe_client_every_INDEX,
                          &cprops, cap2.bytes, cap2.len, NULL, err, sizeof(err));
    ck_assert_msg(rc == MC_CALL_OK, "%s", err);
    ck_assert_int_eq(seen, -32);
    free_Probe_client(&cprops);
    /* the server table has no client dispatchers and the client table none for the server */
    rc = mc_game_dispatch(mc_game_module_get(), &ccall, Probe_TYPE_ID, MC_PART_CLIENT, 0,
                          &cprops, cap2.bytes, cap2.len, NULL, err, sizeof(err));
    ck_assert_int_eq(rc, MC_CALL_ERR_NO_METHOD);
    rc = mc_game_dispatch(cm, &ccall, Probe_TYPE_ID, MC_PART_CELL, 0, &cprops, cap2.bytes,
                          cap2.len, NULL, err, sizeof(err));
    ck_assert_int_eq(rc, MC_CALL_ERR_NO_METHOD);

    /* A NULL container argument or a cell mailbox for a client method is refused. */
    rc = send_Probe_client_every(&sink2, &client, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", "", NULL,
                                 (mc_vector2){0, 0}, (mc_vector3){0, 0, 0},
                                 (mc_vector4){0, 0, 0, 0}, other, &arr, &tup, &dict);
    ck_assert_int_eq(rc, MC_CALL_ERR_ARGS);
    rc = send_Probe_client_every(&sink2, &cell, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", "", &blob,
                                 (mc_vector2){0, 0}, (mc_vector3){0, 0, 0},
                                 (mc_vector4){0, 0, 0, 0}, other, &arr, &tup, &dict);
    ck_assert_int_eq(rc, MC_CALL_ERR_MAILBOX);
    ck_assert_int_eq(cap2.calls, 1);
    mc_value_free(&blob);
    mc_defs_free(defs);
}
END_TEST

/* What the reply callback of twoWay saw. */
typedef struct {
    int calls;
    int status;
    const mc_call_ctx *call;
    int8_t i8;
    int64_t i64;
    uint64_t u64;
    double f64;
    char s[32];
    bool s_null;
    bool b_null;
    size_t b_len;
    mc_vector3 v3;
    mc_mailbox_ref mb;
    size_t arr_count;
    bool dict_none;
} two_way_seen;

static void on_two_way(const mc_call_ctx *call, void *ud, int status, int8_t i8, int16_t i16,
                       int32_t i32, int64_t i64, uint8_t u8, uint16_t u16, uint32_t u32,
                       uint64_t u64, float f32, double f64, const char *s, const char *us,
                       const mc_value *b, mc_vector2 v2, mc_vector3 v3, mc_vector4 v4,
                       mc_mailbox_ref mb, const mc_value *arr, const mc_value *tup,
                       const mc_value *dict)
{
    (void)i16; (void)i32; (void)u8; (void)u16; (void)u32; (void)f32; (void)us; (void)v2;
    (void)v4; (void)tup;
    two_way_seen *w = ud;
    w->calls++;
    w->status = status;
    w->call = call;
    w->i8 = i8;
    w->i64 = i64;
    w->u64 = u64;
    w->f64 = f64;
    w->s_null = s == NULL;
    snprintf(w->s, sizeof(w->s), "%s", s ? s : "");
    w->b_null = b == NULL;
    w->b_len = b ? b->as.bytes.len : 0;
    w->v3 = v3;
    w->mb = mb;
    w->arr_count = arr ? arr->as.list.count : 0;
    w->dict_none = dict && dict->as.list.none;
}

START_TEST(two_way_returns_every_kind)
{
    mc_entity_defs *defs = load_probe();
    capture cap = {0};
    mc_call_sink sink = {.defs = defs, .send = capture_send, .request = capture_request,
                         .ctx = &cap};
    mc_mailbox_ref base;
    mc_mailbox_ref_init(&base, 9, 0x7f000001, 4000, MC_COMPONENT_BASE, Probe_TYPE_ID);
    two_way_seen seen = {0};
    ck_assert_int_eq(send_Probe_base_twoWay(&sink, &base, 7, on_two_way, &seen), MC_CALL_OK);
    ck_assert_int_eq(cap.calls, 1);
    ck_assert_uint_eq(cap.index, Probe_base_twoWay_INDEX);
    ck_assert_uint_eq(cap.len, 4);
    ck_assert_mem_eq(cap.bytes, ((const uint8_t[]){0, 0, 0, 7}), 4);
    ck_assert_ptr_nonnull(cap.on_reply);
    ck_assert_ptr_eq(cap.ud, &seen);
    ck_assert_int_eq(seen.calls, 0); /* the reply comes later, from the engine */
    Probe_base props;
    ck_assert_int_eq(init_Probe_base(defs, &props), 0);
    mc_call_ctx call = {.defs = defs, .sink = &sink, .self = base};
    mc_ostream reply;
    mc_ostream_init(&reply);
    char err[512];
    int rc = mc_game_dispatch(mc_game_module_get(), &call, Probe_TYPE_ID, MC_PART_BASE,
                              Probe_base_twoWay_INDEX, &props, cap.bytes, cap.len, &reply, err,
                              sizeof(err));
    ck_assert_msg(rc == MC_CALL_OK, "%s", err);
    const mc_def_method *m = mc_defs_method(mc_defs_type(defs, Probe_TYPE_ID), MC_PART_BASE,
                                            Probe_base_twoWay_INDEX);
    mc_value r[20];
    mc_istream is;
    mc_istream_init(&is, reply.data, reply.size);
    ck_assert_msg(mc_defs_decode_returns(defs, m, &is, r, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(r[0].as.i, -7);
    ck_assert_int_eq(r[3].as.i, 7000000000000);
    ck_assert_uint_eq(r[4].as.u, 8);
    ck_assert(r[8].as.f == 3.5);
    ck_assert_str_eq(r[10].as.bytes.data, "plain");
    ck_assert_str_eq(r[11].as.bytes.data, "\xc3\xbc");
    ck_assert_uint_eq(r[12].as.bytes.len, 3);
    ck_assert(r[14].as.vec[2] == 3.0f);
    ck_assert_int_eq(r[16].as.mailbox.id, 9);
    ck_assert_uint_eq(r[17].as.list.count, 1);
    ck_assert_int_eq(r[17].as.list.items[0].as.i, 7);
    ck_assert_str_eq(r[18].as.list.items[1].as.bytes.data, "second");
    ck_assert(r[19].as.list.none);
    for (int i = 0; i < 20; i++)
        mc_value_free(&r[i]);

    /* The engine hands the reply bytes to the trampoline: the callback gets typed values. */
    mc_istream_init(&is, reply.data, reply.size);
    cap.on_reply(&call, MC_CALL_OK, &is, cap.cb, cap.ud);
    ck_assert_int_eq(seen.calls, 1);
    ck_assert_int_eq(seen.status, MC_CALL_OK);
    ck_assert_ptr_eq(seen.call, &call);
    ck_assert_int_eq(seen.i8, -7);
    ck_assert_int_eq(seen.i64, 7000000000000);
    ck_assert_uint_eq(seen.u64, 11);
    ck_assert(seen.f64 == 1.75);
    ck_assert_str_eq(seen.s, "plain");
    ck_assert(!seen.b_null);
    ck_assert_uint_eq(seen.b_len, 3);
    ck_assert(seen.v3.z == 3.0f);
    ck_assert_int_eq(seen.mb.id, 9);
    ck_assert_uint_eq(seen.arr_count, 1);
    ck_assert(seen.dict_none);
    /* bytes that do not decode: MC_CALL_ERR_ARGS and zero / NULL values */
    mc_istream_init(&is, reply.data, reply.size - 1);
    cap.on_reply(&call, MC_CALL_OK, &is, cap.cb, cap.ud);
    ck_assert_int_eq(seen.calls, 2);
    ck_assert_int_eq(seen.status, MC_CALL_ERR_ARGS);
    ck_assert_int_eq(seen.i8, 0);
    ck_assert_int_eq(seen.i64, 0);
    ck_assert(seen.s_null);
    ck_assert(seen.b_null);
    ck_assert_int_eq(seen.mb.id, 0);
    ck_assert_uint_eq(seen.arr_count, 0);
    /* an error status from the engine reaches the callback as is */
    cap.on_reply(&call, MC_CALL_ERR_TIMEOUT, NULL, cap.cb, cap.ud);
    ck_assert_int_eq(seen.calls, 3);
    ck_assert_int_eq(seen.status, MC_CALL_ERR_TIMEOUT);
    ck_assert(seen.s_null);
    /* no callback: the trampoline does nothing */
    ck_assert_int_eq(send_Probe_base_twoWay(&sink, &base, 1, NULL, NULL), MC_CALL_OK);
    ck_assert_ptr_null(cap.cb);
    mc_istream_init(&is, reply.data, reply.size);
    cap.on_reply(&call, MC_CALL_OK, &is, cap.cb, cap.ud);
    ck_assert_int_eq(seen.calls, 3);

    /* The sender's own failures: a wrong mailbox, a sink without request(), the sink's
     * entity-layer status passed through, its other failures as MC_CALL_ERR_SEND. */
    mc_mailbox_ref cellmb;
    mc_mailbox_ref_init(&cellmb, 9, 0x7f000001, 4000, MC_COMPONENT_CELL, Probe_TYPE_ID);
    ck_assert_int_eq(send_Probe_base_twoWay(&sink, &cellmb, 1, on_two_way, &seen),
                     MC_CALL_ERR_MAILBOX);
    mc_call_sink one_way = {.defs = defs, .send = capture_send, .ctx = &cap};
    ck_assert_int_eq(send_Probe_base_twoWay(&one_way, &base, 1, on_two_way, &seen),
                     MC_CALL_ERR_SEND);
    cap.request_status = MC_CALL_ERR_PROCESS_DEAD;
    ck_assert_int_eq(send_Probe_base_twoWay(&sink, &base, 1, on_two_way, &seen),
                     MC_CALL_ERR_PROCESS_DEAD);
    cap.request_status = -1;
    ck_assert_int_eq(send_Probe_base_twoWay(&sink, &base, 1, on_two_way, &seen),
                     MC_CALL_ERR_SEND);
    ck_assert_int_eq(cap.calls, 2);
    ck_assert_int_eq(seen.calls, 3);

    /* the handler refusing (negative argument) is reported and writes no reply */
    mc_ostream_reset(&reply);
    uint8_t neg[4] = {0xff, 0xff, 0xff, 0xff};
    rc = mc_game_dispatch(mc_game_module_get(), &call, Probe_TYPE_ID, MC_PART_BASE,
                          Probe_base_twoWay_INDEX, &props, neg, sizeof(neg), &reply, err,
                          sizeof(err));
    ck_assert_int_eq(rc, MC_CALL_ERR_HANDLER);
    ck_assert_uint_eq(reply.size, 0);
    mc_ostream_free(&reply);
    free_Probe_base(&props);
    mc_defs_free(defs);
}
END_TEST

/* The hook slots of a Probe table: the callbacks allkinds_handlers.c defines are set and reach
 * the handlers with their arguments; the others are NULL. */
static void check_probe_hooks(const mc_game_module *gm, const mc_entity_defs *defs)
{
    const mc_game_hooks *b = &gm->types[Probe_TYPE_ID].hooks[MC_PART_BASE];
    const mc_game_hooks *c = &gm->types[Probe_TYPE_ID].hooks[MC_PART_CELL];
    ck_assert_ptr_nonnull(b->on_created);
    ck_assert_ptr_nonnull(b->on_create_cell_failure);
    ck_assert_ptr_null(b->on_destroy);
    ck_assert_ptr_null(b->on_get_cell);
    ck_assert_ptr_null(b->on_lose_cell);
    ck_assert_ptr_null(b->on_timer);
    ck_assert_ptr_null(b->on_space_gone); /* a cell callback */
    ck_assert_ptr_nonnull(c->on_timer);
    ck_assert_ptr_null(c->on_created);
    ck_assert_ptr_null(c->on_destroy);
    ck_assert_ptr_null(c->on_space_gone);
    ck_assert_ptr_null(c->on_teleport_failure);
    ck_assert_ptr_null(b->on_teleport_failure); /* a cell callback */
    ck_assert_ptr_null(c->on_get_cell); /* base callbacks */
    ck_assert_ptr_null(c->on_create_cell_failure);

    char text[64] = "";
    mc_call_ctx call = {.defs = defs, .engine = text};
    mc_mailbox_ref_init(&call.self, 42, 0x7f000001, 4000, MC_COMPONENT_BASE, Probe_TYPE_ID);
    void *base = calloc(1, gm->types[Probe_TYPE_ID].props_size[MC_PART_BASE]);
    void *cell = calloc(1, gm->types[Probe_TYPE_ID].props_size[MC_PART_CELL]);
    ck_assert(base && cell);
    ck_assert_int_eq(gm->types[Probe_TYPE_ID].props_init(defs, MC_PART_BASE, base), 0);
    ck_assert_int_eq(gm->types[Probe_TYPE_ID].props_init(defs, MC_PART_CELL, cell), 0);
    ck_assert_int_eq(b->on_created(&call, base), 0);
    ck_assert_str_eq(text, "created 42");
    ck_assert_int_eq(b->on_create_cell_failure(&call, base, "space gone"), 7);
    ck_assert_str_eq(text, "no cell: space gone");
    ck_assert_int_eq(c->on_timer(&call, cell, 4000000000u, -12345678901), 0);
    mc_ostream os;
    mc_ostream_init(&os);
    char err[256];
    ck_assert_int_eq(gm->types[Probe_TYPE_ID].props_encode(defs, MC_PART_CELL, cell, false, &os,
                                                           err, sizeof(err)),
                     MC_CALL_OK);
    Probe_cell got;
    ck_assert_int_eq(init_Probe_cell(defs, &got), 0);
    mc_istream is;
    mc_istream_init(&is, os.data, os.size);
    ck_assert_int_eq(decode_Probe_cell(defs, &got, false, &is, err, sizeof(err)), MC_CALL_OK);
    ck_assert_uint_eq(got.u32, 4000000000u);
    ck_assert_int_eq(got.i64, -12345678901);
    free_Probe_cell(&got);
    mc_ostream_free(&os);
    gm->types[Probe_TYPE_ID].props_free(MC_PART_BASE, base);
    gm->types[Probe_TYPE_ID].props_free(MC_PART_CELL, cell);
    free(base);
    free(cell);
}

START_TEST(engine_callbacks)
{
    mc_entity_defs *defs = load_probe();
    /* linked into this test */
    check_probe_hooks(mc_game_module_get(), defs);
    /* and the module built by mc_add_game_module (hidden symbols), opened as engines do */
    const char *bin = getenv("MC_BIN_DIR");
    char path[4096], err[512];
    snprintf(path, sizeof(path), "%s/../lib/mc_game_allkinds.so", bin ? bin : "build/bin");
    mc_game *g = mc_game_open(path, defs, err, sizeof(err));
    ck_assert_msg(g != NULL, "%s", err);
    ck_assert_ptr_ne(mc_game_table(g), mc_game_module_get());
    check_probe_hooks(mc_game_table(g), defs);
    mc_game_close(g);
    /* the client table has no callbacks */
    const mc_game_hooks *ch = &mc_game_client_get()->types[Probe_TYPE_ID].hooks[MC_PART_BASE];
    ck_assert_ptr_null(ch->on_created);
    mc_defs_free(defs);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("defs_allkinds");
    TCase *tc = tcase_create("allkinds");
    tcase_add_test(tc, every_kind_through_sender_and_dispatch);
    tcase_add_test(tc, two_way_returns_every_kind);
    tcase_add_test(tc, engine_callbacks);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
