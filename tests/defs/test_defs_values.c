/* Def values: round trips of every type, exact encodings, and clean failure on truncated,
 * oversized and malformed input. */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/defs.h"
#include "common/game_module.h"
#include "defs_test_util.h"

static mc_entity_defs *load_example(void)
{
    char res[4096], err[8192];
    mc_entity_defs *d = mc_defs_load(tu_example_res(res, sizeof(res)), err, sizeof(err));
    ck_assert_msg(d != NULL, "%s", err);
    return d;
}

/* A deterministic non-default sample of any type. */
static void sample(const mc_def_type *t, unsigned seed, mc_value *v)
{
    memset(v, 0, sizeof(*v));
    v->kind = t->kind;
    switch (t->kind) {
    case MC_TYPE_INT8: v->as.i = seed % 2 ? INT8_MIN : INT8_MAX; break;
    case MC_TYPE_INT16: v->as.i = seed % 2 ? INT16_MIN : -1234; break;
    case MC_TYPE_INT32: v->as.i = seed % 2 ? INT32_MIN : 123456789; break;
    case MC_TYPE_INT64: v->as.i = seed % 2 ? INT64_MIN : INT64_MAX - (int64_t)seed; break;
    case MC_TYPE_UINT8: v->as.u = 200 + seed % 50; break;
    case MC_TYPE_UINT16: v->as.u = UINT16_MAX - seed; break;
    case MC_TYPE_UINT32: v->as.u = UINT32_MAX - seed; break;
    case MC_TYPE_UINT64: v->as.u = UINT64_MAX - seed; break;
    case MC_TYPE_FLOAT32: v->as.f = (float)(1.5 + seed); break;
    case MC_TYPE_FLOAT64: v->as.f = -2.25e100 + seed; break;
    case MC_TYPE_STRING: {
        char buf[32];
        snprintf(buf, sizeof(buf), "str%u", seed);
        ck_assert_int_eq(mc_value_set_bytes(v, t->kind, buf, strlen(buf)), 0);
        break;
    }
    case MC_TYPE_UNICODE_STRING:
        ck_assert_int_eq(mc_value_set_bytes(v, t->kind, "h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80",
                                            15),
                         0);
        break;
    case MC_TYPE_BLOB: {
        const uint8_t b[] = {0, 255, 1, (uint8_t)seed, 0};
        ck_assert_int_eq(mc_value_set_bytes(v, t->kind, b, sizeof(b)), 0);
        break;
    }
    case MC_TYPE_VECTOR2:
    case MC_TYPE_VECTOR3:
    case MC_TYPE_VECTOR4:
        for (int i = 0; i < 4; i++)
            v->as.vec[i] = 0;
        for (int i = 0; i < (int)(t->kind - MC_TYPE_VECTOR2 + 2); i++)
            v->as.vec[i] = (float)(i + 0.5 + seed);
        break;
    case MC_TYPE_MAILBOX:
        ck_assert_int_eq(mc_mailbox_ref_init(&v->as.mailbox, 1000 + (int32_t)seed, 0x7F000001,
                                             20013, (mc_component)(seed % 8), (uint16_t)(seed % 3)),
                         0);
        break;
    case MC_TYPE_ARRAY:
    case MC_TYPE_TUPLE: {
        uint32_t n = t->size ? t->size : 3;
        v->as.list.items = calloc(n, sizeof(mc_value));
        ck_assert_ptr_nonnull(v->as.list.items);
        v->as.list.count = n;
        for (uint32_t i = 0; i < n; i++)
            sample(t->of, seed + i + 1, &v->as.list.items[i]);
        break;
    }
    case MC_TYPE_FIXED_DICT:
        if (t->allow_none && seed % 2) {
            v->as.list.none = true;
            break;
        }
        v->as.list.items = calloc(t->nfields, sizeof(mc_value));
        ck_assert_ptr_nonnull(v->as.list.items);
        v->as.list.count = (uint32_t)t->nfields;
        for (size_t i = 0; i < t->nfields; i++)
            sample(t->fields[i].type, seed + (unsigned)i * 7 + 2, &v->as.list.items[i]);
        break;
    }
}

/* Encode, decode, compare; then every strict prefix must fail cleanly. */
static void round_trip(const mc_entity_defs *d, const mc_def_type *t, const mc_value *v,
                       const mc_value_limits *lim)
{
    char why[256];
    mc_ostream os;
    mc_ostream_init(&os);
    int rc = mc_value_encode(t, v, lim, &os, why, sizeof(why));
    char *desc = mc_def_type_describe(t);
    ck_assert_msg(rc == 0, "encode %s: %s", desc, why);
    ck_assert_uint_ge(os.size, t->min_wire_size);
    mc_istream is;
    mc_istream_init(&is, os.data, os.size);
    mc_value back;
    rc = mc_value_decode(t, &is, lim, &back, why, sizeof(why));
    ck_assert_msg(rc == 0, "decode %s: %s", desc, why);
    ck_assert_msg(mc_istream_done(&is), "decode %s left bytes", desc);
    ck_assert_msg(mc_value_equal(v, &back), "%s did not round-trip", desc);
    mc_value copy;
    ck_assert_int_eq(mc_value_copy(&copy, &back), 0);
    ck_assert(mc_value_equal(&copy, v));
    mc_value_free(&copy);
    mc_value_free(&back);
    for (size_t cut = 0; cut < os.size; cut++) {
        mc_istream_init(&is, os.data, cut);
        rc = mc_value_decode(t, &is, lim, &back, why, sizeof(why));
        ck_assert_msg(rc == -1, "%s: prefix of %zu/%zu bytes decoded", desc, cut, os.size);
        ck_assert(!mc_istream_ok(&is));
        ck_assert_int_eq(back.kind, 0);
        ck_assert_ptr_null(back.as.list.items);
    }
    (void)d;
    free(desc);
    mc_ostream_free(&os);
}

START_TEST(every_property_round_trips)
{
    mc_entity_defs *d = load_example();
    int checked = 0;
    for (uint16_t id = 0; id < mc_defs_type_count(d); id++) {
        const mc_entity_type_def *t = mc_defs_type(d, id);
        for (size_t i = 0; i < t->nprops; i++) {
            const mc_def_property *p = &t->props[i];
            mc_value_limits lim = mc_defs_property_limits(d, p);
            round_trip(d, p->type, &p->default_value, &lim);
            for (unsigned seed = 0; seed < 4; seed++) {
                mc_value v;
                sample(p->type, seed, &v);
                round_trip(d, p->type, &v, &lim);
                mc_value_free(&v);
            }
            checked++;
        }
    }
    ck_assert_int_eq(checked, 5 + 23 + 7);
    mc_defs_free(d);
}
END_TEST

START_TEST(every_alias_and_argument_round_trips)
{
    mc_entity_defs *d = load_example();
    mc_value_limits lim = mc_defs_value_limits(d);
    for (size_t a = 0; a < mc_defs_alias_count(d); a++)
        for (unsigned seed = 0; seed < 4; seed++) {
            mc_value v;
            sample(mc_defs_alias(d, a), seed, &v);
            round_trip(d, mc_defs_alias(d, a), &v, &lim);
            mc_value_free(&v);
        }
    /* whole argument lists of every method */
    for (uint16_t id = 0; id < mc_defs_type_count(d); id++) {
        const mc_entity_type_def *t = mc_defs_type(d, id);
        for (int part = 0; part < MC_PART_COUNT; part++)
            for (size_t k = 0; k < t->nmethods[part]; k++) {
                const mc_def_method *m = &t->methods[part][k];
                mc_value args[8], back[8];
                ck_assert_uint_le(m->nargs, 8);
                for (size_t i = 0; i < m->nargs; i++)
                    sample(m->args[i].type, (unsigned)(i + k), &args[i]);
                mc_ostream os;
                mc_ostream_init(&os);
                char why[256];
                ck_assert_msg(mc_defs_encode_args(d, m, args, &os, why, sizeof(why)) == 0, "%s",
                              why);
                mc_istream is;
                mc_istream_init(&is, os.data, os.size);
                ck_assert_msg(mc_defs_decode_args(d, m, &is, back, why, sizeof(why)) == 0, "%s",
                              why);
                for (size_t i = 0; i < m->nargs; i++) {
                    ck_assert(mc_value_equal(&args[i], &back[i]));
                    mc_value_free(&back[i]);
                }
                /* one byte too many is refused */
                mc_write_u8(&os, 0);
                mc_istream_init(&is, os.data, os.size);
                ck_assert_int_eq(mc_defs_decode_args(d, m, &is, back, why, sizeof(why)), -1);
                ck_assert_ptr_nonnull(strstr(why, "left after the arguments"));
                for (size_t i = 0; i < m->nargs; i++)
                    mc_value_free(&args[i]);
                mc_ostream_free(&os);
            }
    }
    mc_defs_free(d);
}
END_TEST

/* Types built by hand for exact encodings. */
static mc_def_type scalar(mc_type_kind k, size_t min)
{
    mc_def_type t;
    memset(&t, 0, sizeof(t));
    t.kind = k;
    t.min_wire_size = min;
    t.depth = 1;
    return t;
}

static void expect_bytes(const mc_def_type *t, const mc_value *v, const uint8_t *want, size_t n)
{
    mc_ostream os;
    mc_ostream_init(&os);
    char why[128];
    ck_assert_msg(mc_value_encode(t, v, NULL, &os, why, sizeof(why)) == 0, "%s", why);
    ck_assert_uint_eq(os.size, n);
    ck_assert_mem_eq(os.data, want, n);
    mc_ostream_free(&os);
}

START_TEST(exact_encodings)
{
    mc_def_type i32 = scalar(MC_TYPE_INT32, 4), str = scalar(MC_TYPE_STRING, 1),
                v3 = scalar(MC_TYPE_VECTOR3, 12), mb = scalar(MC_TYPE_MAILBOX, 12),
                u16 = scalar(MC_TYPE_UINT16, 2);
    mc_value v = mc_gen_int(MC_TYPE_INT32, -2);
    expect_bytes(&i32, &v, (const uint8_t[]){0xff, 0xff, 0xff, 0xfe}, 4);
    v = mc_gen_str(MC_TYPE_STRING, "ab");
    expect_bytes(&str, &v, (const uint8_t[]){0x02, 'a', 'b'}, 3);
    char *long_str = malloc(301);
    memset(long_str, 'x', 300);
    long_str[300] = '\0';
    v = mc_gen_str(MC_TYPE_STRING, long_str);
    mc_ostream os;
    mc_ostream_init(&os);
    char why[128];
    ck_assert_int_eq(mc_value_encode(&str, &v, NULL, &os, why, sizeof(why)), 0);
    ck_assert_uint_eq(os.size, 305);
    ck_assert_mem_eq(os.data, ((const uint8_t[]){0xff, 0x00, 0x00, 0x01, 0x2c}), 5);
    mc_ostream_free(&os);
    free(long_str);
    v = mc_gen_vec(MC_TYPE_VECTOR3, 1.0f, -2.0f, 0.5f, 0.0f);
    expect_bytes(&v3, &v,
                 (const uint8_t[]){0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0, 0x3f, 0, 0, 0}, 12);
    mc_mailbox_ref ref;
    ck_assert_int_eq(mc_mailbox_ref_init(&ref, 7, 0x7f000001, 0x4e25, MC_COMPONENT_CELL_VIA_BASE, 2), 0);
    v = mc_gen_mailbox(ref);
    /* salt = 5 << 13 | 2 = 0xa002 */
    expect_bytes(&mb, &v,
                 (const uint8_t[]){0, 0, 0, 7, 0x7f, 0, 0, 1, 0x4e, 0x25, 0xa0, 0x02}, 12);
    /* ARRAY<UINT16> [1, 2]: count then elements; FIXED_DICT with AllowNone None: 00 */
    mc_def_type arr = scalar(MC_TYPE_ARRAY, 1);
    arr.of = &u16;
    mc_value items[2] = {mc_gen_uint(MC_TYPE_UINT16, 1), mc_gen_uint(MC_TYPE_UINT16, 2)};
    mc_value a = {.kind = MC_TYPE_ARRAY};
    a.as.list.items = items;
    a.as.list.count = 2;
    expect_bytes(&arr, &a, (const uint8_t[]){2, 0, 1, 0, 2}, 5);
    mc_def_field f = {"x", &u16, 0};
    mc_def_type dict = scalar(MC_TYPE_FIXED_DICT, 1);
    dict.allow_none = true;
    dict.nfields = 1;
    dict.fields = &f;
    mc_value none = {.kind = MC_TYPE_FIXED_DICT};
    none.as.list.none = true;
    expect_bytes(&dict, &none, (const uint8_t[]){0}, 1);
    mc_value present = {.kind = MC_TYPE_FIXED_DICT};
    present.as.list.items = items;
    present.as.list.count = 1;
    expect_bytes(&dict, &present, (const uint8_t[]){1, 0, 1}, 3);
}
END_TEST

/* Decode raw bytes as type t with limits; expect failure mentioning reason. */
static void expect_refused(const mc_def_type *t, const uint8_t *bytes, size_t n,
                           const mc_value_limits *lim, const char *reason)
{
    mc_istream is;
    mc_istream_init(&is, bytes, n);
    mc_value v;
    char why[256] = "";
    int rc = mc_value_decode(t, &is, lim, &v, why, sizeof(why));
    ck_assert_msg(rc == -1, "accepted, expected '%s'", reason);
    ck_assert(!mc_istream_ok(&is));
    ck_assert_int_eq(v.kind, 0);
    ck_assert_msg(strstr(why, reason) != NULL, "expected '%s' in '%s'", reason, why);
}

START_TEST(malformed_and_oversized)
{
    mc_def_type str = scalar(MC_TYPE_STRING, 1), uni = scalar(MC_TYPE_UNICODE_STRING, 1),
                blob = scalar(MC_TYPE_BLOB, 1), u8 = scalar(MC_TYPE_UINT8, 1),
                mb = scalar(MC_TYPE_MAILBOX, 12), i64 = scalar(MC_TYPE_INT64, 8);
    /* a length claiming 2 GiB */
    expect_refused(&str, (const uint8_t[]){0xff, 0x80, 0, 0, 0, 'a'}, 6, NULL, "length over");
    /* within the type limit but over the property's DatabaseLength */
    mc_value_limits small = {.max_bytes = 3, .entity_types = 0};
    expect_refused(&str, (const uint8_t[]){4, 'a', 'b', 'c', 'd'}, 5, &small, "limit of 3");
    expect_refused(&str, (const uint8_t[]){3, 'a', 0, 'c'}, 4, NULL, "NUL byte");
    expect_refused(&uni, (const uint8_t[]){2, 0xc0, 0x80}, 3, NULL, "not valid UTF-8");
    expect_refused(&uni, (const uint8_t[]){3, 0xed, 0xa0, 0x80}, 4, NULL, "not valid UTF-8");
    expect_refused(&uni, (const uint8_t[]){4, 0xf4, 0x90, 0x80, 0x80}, 5, NULL, "not valid UTF-8");
    expect_refused(&uni, (const uint8_t[]){2, 0xe2, 0x82}, 3, NULL, "not valid UTF-8");
    expect_refused(&uni, (const uint8_t[]){1, 0xff}, 2, NULL, "not valid UTF-8");
    /* over the 1 MiB type limit, with every byte present */
    size_t big = MC_DEFS_MAX_BYTES + 1;
    uint8_t *buf = calloc(big + 5, 1);
    buf[0] = 0xff;
    mc_store_u32(buf + 1, (uint32_t)big);
    expect_refused(&blob, buf, big + 5, NULL, "length over");
    free(buf);
    /* arrays: count over the element limit, count more than the bytes left, wrong tuple size */
    mc_def_type arr = scalar(MC_TYPE_ARRAY, 1);
    arr.of = &i64;
    expect_refused(&arr, (const uint8_t[]){0xff, 0, 1, 0, 0}, 5, NULL, "bad element count");
    expect_refused(&arr, (const uint8_t[]){200, 0, 0, 0, 0, 0, 0, 0, 1}, 9, NULL,
                   "bad element count");
    expect_refused(&arr, (const uint8_t[]){3, 0, 0, 0, 0, 0, 0, 0, 1}, 9, NULL,
                   "claims 3 elements, only 8 bytes remain");
    mc_def_type tup = scalar(MC_TYPE_TUPLE, 1);
    tup.of = &u8;
    tup.size = 2;
    expect_refused(&tup, (const uint8_t[]){3, 1, 2, 3}, 4, NULL, "needs exactly 2");
    /* FIXED_DICT None flag other than 0/1 */
    mc_def_field f = {"x", &u8, 0};
    mc_def_type dict = scalar(MC_TYPE_FIXED_DICT, 1);
    dict.allow_none = true;
    dict.nfields = 1;
    dict.fields = &f;
    expect_refused(&dict, (const uint8_t[]){2, 5}, 2, NULL, "bad None flag");
    /* present, but its fields cannot fit: refused before they are allocated */
    mc_def_field two[] = {{"x", &u8, 0}, {"y", &i64, 0}};
    dict.nfields = 2;
    dict.fields = two;
    expect_refused(&dict, (const uint8_t[]){1, 5, 0, 0, 0}, 5, NULL,
                   "FIXED_DICT at offset 1 needs at least 9 bytes, only 4 remain");
    /* mailboxes: none with fields set, unknown entity type, negative id, no address */
    mc_value_limits three = {.max_bytes = 0, .entity_types = 3};
    expect_refused(&mb, (const uint8_t[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 12, &three,
                   "has other fields set");
    expect_refused(&mb, (const uint8_t[]){0, 0, 0, 9, 127, 0, 0, 1, 0x4e, 0x20, 0x20, 0x03}, 12,
                   &three, "entity type 3 is not a defined type");
    expect_refused(&mb, (const uint8_t[]){0xff, 0xff, 0xff, 0xff, 127, 0, 0, 1, 0x4e, 0x20, 0, 0},
                   12, &three, "negative");
    expect_refused(&mb, (const uint8_t[]){0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0x20, 0x01}, 12, &three,
                   "no address");
    /* the error is inside a nested value */
    mc_def_type nested = scalar(MC_TYPE_ARRAY, 1);
    nested.of = &uni;
    expect_refused(&nested, (const uint8_t[]){2, 1, 'a', 1, 0xff}, 5, NULL,
                   "UNICODE_STRING at offset 3");
}
END_TEST

START_TEST(encode_refuses_bad_values)
{
    mc_def_type i8 = scalar(MC_TYPE_INT8, 1), u32 = scalar(MC_TYPE_UINT32, 4),
                str = scalar(MC_TYPE_STRING, 1);
    mc_ostream os;
    mc_ostream_init(&os);
    char why[256];
    mc_value v = mc_gen_int(MC_TYPE_INT8, 200);
    ck_assert_int_eq(mc_value_encode(&i8, &v, NULL, &os, why, sizeof(why)), -1);
    ck_assert_ptr_nonnull(strstr(why, "out of range for INT8"));
    v = mc_gen_uint(MC_TYPE_UINT32, 1ull << 32);
    ck_assert_int_eq(mc_value_encode(&u32, &v, NULL, &os, why, sizeof(why)), -1);
    v = mc_gen_int(MC_TYPE_INT32, 1);
    ck_assert_int_eq(mc_value_encode(&u32, &v, NULL, &os, why, sizeof(why)), -1);
    ck_assert_ptr_nonnull(strstr(why, "where UINT32 is expected"));
    mc_def_type f32 = scalar(MC_TYPE_FLOAT32, 4);
    v = mc_gen_float(MC_TYPE_FLOAT32, 1e39);
    ck_assert_int_eq(mc_value_encode(&f32, &v, NULL, &os, why, sizeof(why)), -1);
    ck_assert_ptr_nonnull(strstr(why, "out of range for FLOAT32"));
    v = mc_gen_str(MC_TYPE_STRING, "toolong");
    mc_value_limits lim = {.max_bytes = 3, .entity_types = 0};
    ck_assert_int_eq(mc_value_encode(&str, &v, &lim, &os, why, sizeof(why)), -1);
    ck_assert_uint_eq(os.size, 0);
    mc_ostream_free(&os);
}
END_TEST

START_TEST(mailbox_refs)
{
    for (int c = 0; c < MC_COMPONENT_COUNT; c++) {
        mc_mailbox_ref r;
        ck_assert_int_eq(mc_mailbox_ref_init(&r, 42, 0x0a000001, 9000, (mc_component)c, 8191), 0);
        ck_assert_int_eq(mc_mailbox_ref_component(&r), c);
        ck_assert_uint_eq(mc_mailbox_ref_type(&r), 8191);
        mc_component parsed;
        ck_assert_int_eq(mc_component_parse(mc_component_name((mc_component)c), &parsed), 0);
        ck_assert_int_eq(parsed, c);
        mc_ostream os;
        mc_ostream_init(&os);
        mc_mailbox_ref_write(&os, &r);
        ck_assert_uint_eq(os.size, MC_MAILBOX_WIRE_SIZE);
        mc_istream is;
        mc_istream_init(&is, os.data, os.size);
        mc_mailbox_ref back;
        ck_assert(mc_mailbox_ref_read(&is, &back, 0));
        ck_assert(!memcmp(&back, &r, sizeof(r)));
        /* with 3 types, type 8191 is refused */
        mc_istream_init(&is, os.data, os.size);
        ck_assert(!mc_mailbox_ref_read(&is, &back, 3));
        ck_assert_int_eq(back.id, 0);
        mc_ostream_free(&os);
    }
    mc_mailbox_ref r;
    ck_assert_int_eq(mc_mailbox_ref_init(&r, 1, 1, 1, MC_COMPONENT_BASE, 8192), -1);
    ck_assert_int_eq(mc_mailbox_ref_init(&r, 1, 1, 1, (mc_component)8, 1), -1);
    ck_assert_int_eq(mc_mailbox_ref_init(&r, 5, 1, 1, MC_COMPONENT_BASE, 17), 0);
    mc_mailbox_ref_set_component(&r, MC_COMPONENT_CLIENT_VIA_CELL);
    ck_assert_uint_eq(mc_mailbox_ref_type(&r), 17);
    mc_mailbox_ref_set_type(&r, 3);
    ck_assert_int_eq(mc_mailbox_ref_component(&r), MC_COMPONENT_CLIENT_VIA_CELL);
    ck_assert_int_eq(mc_component_final(MC_COMPONENT_CLIENT_VIA_CELL), MC_COMPONENT_CLIENT);
    ck_assert_int_eq(mc_component_first_hop(MC_COMPONENT_CLIENT_VIA_CELL), MC_COMPONENT_CELL);
    ck_assert_int_eq(mc_component_final(MC_COMPONENT_CELL_VIA_BASE), MC_COMPONENT_CELL);
    ck_assert_int_eq(mc_component_first_hop(MC_COMPONENT_CELL_VIA_BASE), MC_COMPONENT_BASE);
    ck_assert_int_eq(mc_component_final(MC_COMPONENT_BASE_VIA_CELL), MC_COMPONENT_BASE);
    ck_assert_int_eq(mc_component_first_hop(MC_COMPONENT_CLIENT_VIA_BASE), MC_COMPONENT_BASE);
    ck_assert_int_eq(mc_component_final(MC_COMPONENT_SERVICE), MC_COMPONENT_BASE);
    mc_component bad;
    ck_assert_int_eq(mc_component_parse("cell", &bad), -1);
}
END_TEST

START_TEST(utf8_validation)
{
    ck_assert(mc_utf8_valid((const uint8_t *)"", 0));
    ck_assert(mc_utf8_valid((const uint8_t *)"plain", 5));
    ck_assert(mc_utf8_valid((const uint8_t *)"\xc2\x80\xdf\xbf", 4));
    ck_assert(mc_utf8_valid((const uint8_t *)"\xe0\xa0\x80\xef\xbf\xbf", 6));
    ck_assert(mc_utf8_valid((const uint8_t *)"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", 8));
    ck_assert(!mc_utf8_valid((const uint8_t *)"\xc1\xbf", 2));         /* overlong */
    ck_assert(!mc_utf8_valid((const uint8_t *)"\xe0\x9f\xbf", 3));     /* overlong */
    ck_assert(!mc_utf8_valid((const uint8_t *)"\xf0\x8f\xbf\xbf", 4)); /* overlong */
    ck_assert(!mc_utf8_valid((const uint8_t *)"\xed\xbf\xbf", 3));     /* surrogate */
    ck_assert(!mc_utf8_valid((const uint8_t *)"\xf8\x88\x80\x80\x80", 5));
    ck_assert(!mc_utf8_valid((const uint8_t *)"\x80", 1));
    ck_assert(!mc_utf8_valid((const uint8_t *)"\xc2", 1));
    ck_assert(!mc_utf8_valid((const uint8_t *)"\xc2\x41", 2));
}
END_TEST

START_TEST(defaults_and_text)
{
    mc_entity_defs *d = load_example();
    const mc_entity_type_def *av = mc_defs_type_by_name(d, "Avatar");
    const mc_def_property *look = mc_defs_property_by_name(av, "look");
    char *text = mc_value_to_text(&look->default_value);
    ck_assert_str_eq(text, "[200, 180, 150, 255]");
    free(text);
    const mc_def_property *target = mc_defs_property_by_name(av, "target");
    ck_assert(target->default_value.as.list.none);
    const mc_def_property *stats = mc_defs_property_by_name(av, "stats");
    ck_assert_uint_eq(stats->default_value.as.list.count, 3);
    const mc_def_property *title = mc_defs_property_by_name(av, "title");
    ck_assert_str_eq(title->default_value.as.bytes.data, "Novice");
    const mc_def_property *tint = mc_defs_property_by_name(av, "editorTint");
    ck_assert(tint->default_value.as.vec[3] == 1.0f);
    mc_value v;
    ck_assert_int_eq(mc_value_init_default(&v, mc_defs_alias_by_name(d, "ITEM")), 0);
    ck_assert_uint_eq(v.as.list.count, 3);
    text = mc_value_to_text(&v);
    ck_assert_str_eq(text, "{0, 0, \"\"}");
    free(text);
    mc_value_free(&v);
    mc_defs_free(d);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("defs_values");
    TCase *tc = tcase_create("values");
    tcase_add_test(tc, every_property_round_trips);
    tcase_add_test(tc, every_alias_and_argument_round_trips);
    tcase_add_test(tc, exact_encodings);
    tcase_add_test(tc, malformed_and_oversized);
    tcase_add_test(tc, encode_refuses_bad_values);
    tcase_add_test(tc, mailbox_refs);
    tcase_add_test(tc, utf8_validation);
    tcase_add_test(tc, defaults_and_text);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
