/* JSON <-> def values: exact forms of every kind both ways, round trips of every property,
 * alias, argument and return value of the example game and the all-kinds defs, every refusal
 * with its located reason, hostile shapes (depth bombs, value bombs, long arrays), and the
 * argument and property helpers. */
#include "check_main.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/defs.h"
#include "common/value_json.h"
#include "defs_test_util.h"

static mc_entity_defs *load(const char *rel)
{
    char res[4096], err[8192];
    const char *src = getenv("MC_SOURCE_DIR");
    snprintf(res, sizeof(res), "%s/%s", src ? src : ".", rel);
    mc_entity_defs *d = mc_defs_load(res, err, sizeof(err));
    ck_assert_msg(d != NULL, "%s", err);
    return d;
}

static mc_entity_defs *load_example(void)
{
    return load("defs");
}

static mc_entity_defs *load_allkinds(void)
{
    return load("tests/defs/allkinds");
}

/* to_json(v), from_json of that, equal; to_json again gives the same text. */
static void round_trip(const mc_def_type *t, const mc_value *v, const mc_value_limits *lim)
{
    char *text = mc_value_to_json(t, v);
    char *desc = mc_def_type_describe(t);
    ck_assert_msg(text != NULL, "to_json %s", desc);
    mc_value back;
    char why[256];
    int rc = mc_value_from_json(t, text, strlen(text), lim, &back, why, sizeof(why));
    ck_assert_msg(rc == 0, "from_json %s of %s: %s", desc, text, why);
    ck_assert_msg(mc_value_equal(v, &back), "%s: %s did not round-trip", desc, text);
    char *again = mc_value_to_json(t, &back);
    ck_assert_str_eq(again, text);
    free(again);
    mc_value_free(&back);
    free(text);
    free(desc);
}

/* JSON in -> value -> JSON out, exactly. */
static void both_ways(const mc_def_type *t, const char *in, const char *out)
{
    mc_value v;
    char why[256];
    mc_value_limits lim = {.entity_types = 3};
    int rc = mc_value_from_json(t, in, strlen(in), &lim, &v, why, sizeof(why));
    ck_assert_msg(rc == 0, "%s: %s", in, why);
    char *text = mc_value_to_json(t, &v);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(!strcmp(text, out), "%s gave %s, expected %s", in, text, out);
    round_trip(t, &v, &lim);
    free(text);
    mc_value_free(&v);
}

/* from_json must fail with a reason containing want, leaving the value zeroed. */
static void refuse_n(const mc_def_type *t, const char *in, size_t len, const char *want)
{
    mc_value v;
    memset(&v, 0xAB, sizeof(v));
    char why[256] = "";
    mc_value_limits lim = {.entity_types = 3};
    int rc = mc_value_from_json(t, in, len, &lim, &v, why, sizeof(why));
    ck_assert_msg(rc == -1, "%.60s was accepted", in);
    ck_assert_msg(strstr(why, want) != NULL, "%.60s: \"%s\" does not say \"%s\"", in, why, want);
    ck_assert_msg(strchr(why, '\n') == NULL, "reason is more than one line: %s", why);
    ck_assert_int_eq(v.kind, 0);
    ck_assert_ptr_null(v.as.list.items);
}

static void refuse(const mc_def_type *t, const char *in, const char *want)
{
    refuse_n(t, in, strlen(in), want);
}

#define T(k) {.kind = (k), .min_wire_size = 1, .depth = 1, .nodes = 1, .cells = 1}
static const mc_def_type t_i8 = T(MC_TYPE_INT8), t_i16 = T(MC_TYPE_INT16),
                         t_i32 = T(MC_TYPE_INT32), t_i64 = T(MC_TYPE_INT64),
                         t_u8 = T(MC_TYPE_UINT8), t_u16 = T(MC_TYPE_UINT16),
                         t_u32 = T(MC_TYPE_UINT32), t_u64 = T(MC_TYPE_UINT64),
                         t_f32 = T(MC_TYPE_FLOAT32), t_f64 = T(MC_TYPE_FLOAT64),
                         t_str = T(MC_TYPE_STRING), t_uni = T(MC_TYPE_UNICODE_STRING),
                         t_blob = T(MC_TYPE_BLOB), t_v2 = T(MC_TYPE_VECTOR2),
                         t_v3 = T(MC_TYPE_VECTOR3), t_v4 = T(MC_TYPE_VECTOR4),
                         t_mb = T(MC_TYPE_MAILBOX);
static const mc_def_type t_arr = {.kind = MC_TYPE_ARRAY, .of = &t_i16, .depth = 2, .cells = 1};
static const mc_def_type t_tup = {.kind = MC_TYPE_TUPLE, .of = &t_str, .size = 2, .depth = 2,
                                  .cells = 3};
static const mc_def_field pair_fields[] = {{"key", &t_str, 4}, {"value", &t_f32, 0}};
static const mc_def_type t_pair = {.kind = MC_TYPE_FIXED_DICT, .alias = "PAIR",
                                   .allow_none = true, .nfields = 2, .fields = pair_fields,
                                   .depth = 2, .cells = 3};
static const mc_def_type t_pair_req = {.kind = MC_TYPE_FIXED_DICT, .nfields = 2,
                                       .fields = pair_fields, .depth = 2, .cells = 3};

START_TEST(every_kind_both_ways)
{
    both_ways(&t_i8, "-128", "-128");
    both_ways(&t_i8, " \t\r\n127 \n", "127");
    both_ways(&t_i16, "-0", "0");
    both_ways(&t_i32, "-2147483648", "-2147483648");
    both_ways(&t_i64, "-9223372036854775808", "-9223372036854775808");
    both_ways(&t_i64, "9223372036854775807", "9223372036854775807");
    both_ways(&t_u8, "255", "255");
    both_ways(&t_u16, "65535", "65535");
    both_ways(&t_u32, "4294967295", "4294967295");
    both_ways(&t_u64, "18446744073709551615", "18446744073709551615");
    both_ways(&t_u64, "0", "0");
    both_ways(&t_f32, "1.5", "1.5");
    both_ways(&t_f32, "0.1", "0.100000001");
    both_ways(&t_f32, "7", "7");
    both_ways(&t_f32, "-2.5E-3", "-0.00249999994");
    both_ways(&t_f32, "3.4028234663852886e38", "3.40282347e+38");
    both_ways(&t_f32, "1e-50", "0");
    both_ways(&t_f64, "0.1", "0.10000000000000001");
    both_ways(&t_f64, "-1e300", "-1.0000000000000001e+300");
    both_ways(&t_f64, "5e-324", "4.9406564584124654e-324");
    both_ways(&t_str, "\"\"", "\"\"");
    both_ways(&t_str, "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0001\\u001F\\u00e9\"",
              "\"a\\\"b\\\\c/d\\b\\f\\n\\r\\t\\u0001\\u001f\xc3\xa9\"");
    both_ways(&t_uni, "\"\\ud83d\\ude00 \\u2713 h\xc3\xa9\"", "\"\xf0\x9f\x98\x80 \xe2\x9c\x93 h\xc3\xa9\"");
    both_ways(&t_uni, "\"\\uD83D\\uDE00\"", "\"\xf0\x9f\x98\x80\"");
    both_ways(&t_str, "\"\xff\xfe raw bytes\"", "\"\xff\xfe raw bytes\""); /* STRING: bytes */
    both_ways(&t_str, "\"\x7f\"", "\"\x7f\"");
    both_ways(&t_blob, "\"\"", "\"\"");
    both_ways(&t_blob, "\"AP8B\"", "\"AP8B\"");
    both_ways(&t_blob, "\"AA==\"", "\"AA==\"");
    both_ways(&t_blob, "\"AAE=\"", "\"AAE=\"");
    both_ways(&t_v2, "[1, 2.5]", "[1,2.5]");
    both_ways(&t_v3, "[ -3 , 0.5 , 1e2 ]", "[-3,0.5,100]");
    both_ways(&t_v4, "[0.1,0,0,1]", "[0.100000001,0,0,1]");
    both_ways(&t_mb, "null", "null");
    both_ways(&t_mb,
              "{\"type\": 2, \"component\": \"CLIENT_VIA_BASE\", \"addr\": \"10.1.2.3:20013\","
              " \"id\": 77}",
              "{\"id\":77,\"addr\":\"10.1.2.3:20013\",\"component\":\"CLIENT_VIA_BASE\",\"type\":2}");
    both_ways(&t_mb, "{\"id\":0,\"addr\":\"0.0.0.0:0\",\"component\":\"CELL\",\"type\":0}", "null");
    both_ways(&t_mb, "{\"id\":2147483647,\"addr\":\"255.255.255.255:65535\",\"component\":"
                     "\"SERVICE\",\"type\":0}",
              "{\"id\":2147483647,\"addr\":\"255.255.255.255:65535\",\"component\":\"SERVICE\","
              "\"type\":0}");
    both_ways(&t_arr, "[]", "[]");
    both_ways(&t_arr, "[ 1 , -2,3 ]", "[1,-2,3]");
    both_ways(&t_tup, "[\"a\", \"b\"]", "[\"a\",\"b\"]");
    both_ways(&t_pair, "null", "null");
    both_ways(&t_pair, "{}", "{\"key\":\"\",\"value\":0}");
    both_ways(&t_pair, "{\"value\": 0.5, \"key\": \"k\"}", "{\"key\":\"k\",\"value\":0.5}");
    both_ways(&t_pair_req, "{\"key\":\"abcd\"}", "{\"key\":\"abcd\",\"value\":0}");
}
END_TEST

/* A deterministic non-default sample of any type; mailboxes use types below ntypes. */
static void sample(const mc_def_type *t, unsigned seed, size_t ntypes, mc_value *v)
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
    case MC_TYPE_FLOAT32: v->as.f = (float)(0.1 + seed); break;
    case MC_TYPE_FLOAT64: v->as.f = seed % 2 ? -2.25e100 + seed : 1.0 / 3.0 + seed; break;
    case MC_TYPE_STRING: {
        char buf[32];
        snprintf(buf, sizeof(buf), "s\"\\\x01\n\xff%u", seed);
        ck_assert_int_eq(mc_value_set_bytes(v, t->kind, buf, strlen(buf) % 16), 0);
        break;
    }
    case MC_TYPE_UNICODE_STRING: {
        const char *u = "h\xc3\xa9\t\"\xe2\x9c\x93\xf0\x9f\x98\x80";
        ck_assert_int_eq(mc_value_set_bytes(v, t->kind, u, strlen(u)), 0);
        break;
    }
    case MC_TYPE_BLOB: {
        const uint8_t b[] = {0, 255, 1, (uint8_t)seed, 0, '"'};
        ck_assert_int_eq(mc_value_set_bytes(v, t->kind, b, 1 + seed % sizeof(b)), 0);
        break;
    }
    case MC_TYPE_VECTOR2:
    case MC_TYPE_VECTOR3:
    case MC_TYPE_VECTOR4:
        for (int i = 0; i < (int)(t->kind - MC_TYPE_VECTOR2 + 2); i++)
            v->as.vec[i] = (float)(i + 0.1 + seed) * (i % 2 ? -1.0f : 1.0f);
        break;
    case MC_TYPE_MAILBOX:
        if (seed % 5 == 0)
            break; /* none */
        ck_assert_int_eq(mc_mailbox_ref_init(&v->as.mailbox, 1000 + (int32_t)seed, 0x7F000001 + seed,
                                             (uint16_t)(20013 + seed), (mc_component)(seed % 8),
                                             (uint16_t)(seed % ntypes)),
                         0);
        break;
    case MC_TYPE_ARRAY:
    case MC_TYPE_TUPLE: {
        uint32_t n = t->size ? t->size : 3;
        v->as.list.items = calloc(n, sizeof(mc_value));
        ck_assert_ptr_nonnull(v->as.list.items);
        v->as.list.count = n;
        for (uint32_t i = 0; i < n; i++)
            sample(t->of, seed + i + 1, ntypes, &v->as.list.items[i]);
        break;
    }
    case MC_TYPE_FIXED_DICT:
        if (t->allow_none && seed % 3 == 1) {
            v->as.list.none = true;
            break;
        }
        v->as.list.items = calloc(t->nfields, sizeof(mc_value));
        ck_assert_ptr_nonnull(v->as.list.items);
        v->as.list.count = (uint32_t)t->nfields;
        for (size_t i = 0; i < t->nfields; i++)
            sample(t->fields[i].type, seed + (unsigned)i * 7 + 2, ntypes, &v->as.list.items[i]);
        break;
    }
}

/* Every property (default and samples) of every type, every alias, every method's arguments
 * and return values (through the args helper and mc_json_from_values). */
static void round_trip_defs(const mc_entity_defs *d)
{
    size_t ntypes = mc_defs_type_count(d);
    mc_value_limits vlim = mc_defs_value_limits(d);
    for (uint16_t id = 0; id < ntypes; id++) {
        const mc_entity_type_def *et = mc_defs_type(d, id);
        for (size_t i = 0; i < et->nprops; i++) {
            const mc_def_property *p = &et->props[i];
            mc_value_limits lim = mc_defs_property_limits(d, p);
            if (p->type->kind == MC_TYPE_STRING && p->db_length)
                lim.max_bytes = 0; /* samples are not cut to the DatabaseLength */
            round_trip(p->type, &p->default_value, &lim);
            for (unsigned seed = 0; seed < 6; seed++) {
                mc_value v;
                sample(p->type, seed, ntypes, &v);
                round_trip(p->type, &v, &vlim);
                mc_value_free(&v);
            }
        }
        for (int part = 0; part < MC_PART_COUNT; part++)
            for (size_t m = 0; m < et->nmethods[part]; m++) {
                const mc_def_method *md = &et->methods[part][m];
                for (unsigned seed = 0; seed < 4; seed++) {
                    mc_value vals[300], back[300];
                    char why[256];
                    for (size_t a = 0; a < md->nargs; a++)
                        sample(md->args[a].type, seed + (unsigned)a, ntypes, &vals[a]);
                    char *text = mc_json_from_values(md->args, md->nargs, vals);
                    ck_assert_ptr_nonnull(text);
                    int rc = mc_json_to_args(d, md, text, strlen(text), back, why, sizeof(why));
                    ck_assert_msg(rc == 0, "%s(%s): %s", md->name, text, why);
                    for (size_t a = 0; a < md->nargs; a++) {
                        ck_assert_msg(mc_value_equal(&vals[a], &back[a]), "%s arg %zu", md->name, a);
                        mc_value_free(&vals[a]);
                        mc_value_free(&back[a]);
                    }
                    free(text);
                    for (size_t r = 0; r < md->nreturns; r++)
                        sample(md->returns[r].type, seed + (unsigned)r, ntypes, &vals[r]);
                    text = mc_json_from_values(md->returns, md->nreturns, vals);
                    ck_assert_ptr_nonnull(text);
                    ck_assert(text[0] == '[' && text[strlen(text) - 1] == ']');
                    for (size_t r = 0; r < md->nreturns; r++)
                        mc_value_free(&vals[r]);
                    free(text);
                }
            }
    }
    for (size_t a = 0; a < mc_defs_alias_count(d); a++)
        for (unsigned seed = 0; seed < 6; seed++) {
            mc_value v;
            sample(mc_defs_alias(d, a), seed, ntypes, &v);
            round_trip(mc_defs_alias(d, a), &v, &vlim);
            mc_value_free(&v);
        }
}

START_TEST(example_defs_round_trip)
{
    mc_entity_defs *d = load_example();
    round_trip_defs(d);
    mc_defs_free(d);
}
END_TEST

START_TEST(allkinds_defs_round_trip)
{
    mc_entity_defs *d = load_allkinds();
    round_trip_defs(d);
    const mc_entity_type_def *t = mc_defs_type_by_name(d, "Probe");
    const mc_def_method *every = mc_defs_method_by_name(t, MC_PART_CELL, "every");
    ck_assert_ptr_nonnull(every);
    const char *json =
        "[-1, -2, -3, -4, 1, 2, 3, 4, 0.5, 0.25, \"s\", \"\\u00e9\", \"AQI=\", [1,2], [1,2,3],"
        " [1,2,3,4], {\"id\":1,\"addr\":\"127.0.0.1:1\",\"component\":\"CELL\",\"type\":0},"
        " [7, 8], [\"x\", \"y\"], {\"key\": \"k\", \"value\": 2}]";
    mc_value args[20];
    char why[256];
    ck_assert_msg(mc_json_to_args(d, every, json, strlen(json), args, why, sizeof(why)) == 0,
                  "%s", why);
    char *text = mc_json_from_values(every->args, every->nargs, args);
    ck_assert_str_eq(text, "[-1,-2,-3,-4,1,2,3,4,0.5,0.25,\"s\",\"\xc3\xa9\",\"AQI=\",[1,2],"
                           "[1,2,3],[1,2,3,4],{\"id\":1,\"addr\":\"127.0.0.1:1\",\"component\":"
                           "\"CELL\",\"type\":0},[7,8],[\"x\",\"y\"],{\"key\":\"k\",\"value\":2}]");
    free(text);
    for (int i = 0; i < 20; i++)
        mc_value_free(&args[i]);
    mc_defs_free(d);
}
END_TEST

START_TEST(refusals)
{
    refuse(&t_u8, "300", "300 does not fit UINT8");
    refuse(&t_u8, "256", "does not fit UINT8");
    refuse(&t_i8, "-129", "-129 does not fit INT8");
    refuse(&t_i8, "128", "does not fit INT8");
    refuse(&t_i16, "32768", "does not fit INT16");
    refuse(&t_i32, "-2147483649", "does not fit INT32");
    refuse(&t_u32, "4294967296", "does not fit UINT32");
    refuse(&t_i64, "9223372036854775808", "does not fit INT64");
    refuse(&t_i64, "-9223372036854775809", "does not fit INT64");
    refuse(&t_u64, "18446744073709551616", "does not fit UINT64");
    refuse(&t_u64, "99999999999999999999999999", "does not fit UINT64");
    refuse(&t_u32, "-1", "-1 does not fit UINT32");
    refuse(&t_i32, "1.0", "1.0 is not an integer");
    refuse(&t_i32, "1e2", "1e2 is not an integer");
    refuse(&t_u64, "1E0", "not an integer");
    refuse(&t_i32, "\"5\"", "expected an integer for INT32, found a string");
    refuse(&t_i32, "true", "found a boolean");
    refuse(&t_i32, "null", "found null");
    refuse(&t_i32, "[1]", "found an array");
    refuse(&t_i32, "{}", "found an object");
    refuse(&t_i32, "01", "leading zero");
    refuse(&t_i32, "-", "a digit must follow '-'");
    refuse(&t_i32, "-x", "a digit must follow '-'");
    refuse(&t_i32, "+1", "found '+'");
    refuse(&t_i32, "NaN", "found 'N'");
    refuse(&t_f64, "1.", "a digit must follow '.'");
    refuse(&t_f64, ".5", "found '.'");
    refuse(&t_f64, "1e", "a digit must follow the exponent mark");
    refuse(&t_f64, "1e+", "a digit must follow the exponent mark");
    refuse(&t_f32, "1e39", "1e39 does not fit FLOAT32");
    refuse(&t_f32, "-3.5e38", "does not fit FLOAT32");
    refuse(&t_f32, "3.4028236e38", "does not fit FLOAT32");
    refuse(&t_f64, "1e309", "1e309 does not fit FLOAT64");
    refuse(&t_f64, "-1e999999999999", "does not fit FLOAT64");
    refuse(&t_f32, "null", "expected a number for FLOAT32, found null");
    refuse(&t_f64, "\"Infinity\"", "expected a number for FLOAT64, found a string");
    char longnum[400];
    memset(longnum, '1', sizeof(longnum) - 1);
    longnum[sizeof(longnum) - 1] = '\0';
    refuse(&t_f64, longnum, "number longer than 256 characters");
    refuse(&t_str, "\"\\x\"", "bad escape \\x");
    refuse(&t_str, "\"\\U0041\"", "bad escape \\U");
    refuse(&t_str, "\"\\u12\"", "\\u needs 4 hex digits");
    refuse(&t_str, "\"\\u12g4\"", "\\u needs 4 hex digits");
    refuse(&t_str, "\"\\ud800\"", "lone high surrogate \\uD800");
    refuse(&t_str, "\"\\ud800x\"", "lone high surrogate");
    refuse(&t_str, "\"\\ud800\\u0041\"", "lone high surrogate");
    refuse(&t_str, "\"\\ud800\\ud800\"", "lone high surrogate");
    refuse(&t_uni, "\"\\udc00\"", "lone low surrogate \\uDC00");
    refuse(&t_uni, "\"a\\u0000b\"", "\\u0000 (NUL) is not allowed");
    refuse_n(&t_str, "\"a\0b\"", 5, "raw control character 0x00");
    refuse(&t_str, "\"a\nb\"", "raw control character 0x0a");
    refuse(&t_str, "\"a\x1f\"", "raw control character 0x1f");
    refuse(&t_str, "\"abc", "unterminated string");
    refuse(&t_str, "\"abc\\\"", "unterminated string");
    refuse(&t_str, "\"\\", "unterminated string");
    refuse(&t_str, "5", "expected a string for STRING, found a number");
    refuse(&t_uni, "\"\xff\"", "UNICODE_STRING is not valid UTF-8");
    refuse(&t_uni, "\"\xed\xa0\x80\"", "not valid UTF-8"); /* a raw surrogate */
    refuse(&t_blob, "\"AP8\"", "BLOB is not base64");
    refuse(&t_blob, "\"AA\"", "BLOB is not base64");
    refuse(&t_blob, "\"AA=\"", "BLOB is not base64");
    refuse(&t_blob, "\"A*==\"", "BLOB is not base64");
    refuse(&t_blob, "\"AB==\"", "BLOB is not base64"); /* non-zero padding bits */
    refuse(&t_blob, "\"AA==AA==\"", "BLOB is not base64");
    refuse(&t_blob, "\"AA== \"", "BLOB is not base64");
    refuse(&t_blob, "\"-_8B\"", "BLOB is not base64"); /* URL-safe alphabet */
    refuse(&t_blob, "[0]", "expected a string for BLOB");
    refuse(&t_v3, "[1,2]", "expected ',' (a VECTOR has more numbers), found ']'");
    refuse(&t_v3, "[1,2,3,4]", "expected ']' after the VECTOR's numbers");
    refuse(&t_v2, "[1,\"2\"]", "expected a number for VECTOR2, found a string");
    refuse(&t_v2, "[1,1e39]", "does not fit FLOAT32");
    refuse(&t_v2, "{}", "expected an array of 2 numbers for VECTOR2");
    refuse(&t_arr, "[1,]", "[1]: expected an integer for INT16, found ']'");
    refuse(&t_arr, "[1 2]", "expected ',' or ']', found a number");
    refuse(&t_arr, "[1,2", "expected ',' or ']', found the end of the text");
    refuse(&t_arr, "[", "[0]: expected an integer for INT16, found the end of the text");
    refuse(&t_arr, "[1,70000]", "[1]: 70000 does not fit INT16");
    refuse(&t_arr, "{\"0\":1}", "expected an array for ARRAY, found an object");
    refuse(&t_tup, "[\"a\"]", "TUPLE takes exactly 2 elements, found 1");
    refuse(&t_tup, "[]", "TUPLE takes exactly 2 elements, found 0");
    refuse(&t_tup, "[\"a\",\"b\",\"c\"]", "TUPLE takes exactly 2 elements, found more");
    refuse(&t_pair, "{\"nope\":1}", "unknown field \"nope\" in PAIR");
    refuse(&t_pair, "{\"key\":\"a\",\"key\":\"b\"}", "repeated field \"key\" in PAIR");
    refuse(&t_pair, "{\"key\":\"abcde\"}", ".key: STRING of 5 bytes exceeds the limit of 4");
    refuse(&t_pair, "{\"key\" 1}", "expected ':'");
    refuse(&t_pair, "{\"key\":\"a\",}", "expected a string, found '}'");
    refuse(&t_pair, "{\"key\":\"a\" \"value\":1}", "expected ',' or '}'");
    refuse(&t_pair, "{key:1}", "expected a string, found 'k'");
    refuse(&t_pair, "[]", "expected an object or null for PAIR, found an array");
    refuse(&t_pair_req, "null", "expected an object for FIXED_DICT, found null");
    refuse(&t_pair, "{\"v\\u0000\":1}", "NUL");
    /* trailing garbage, nothing at all */
    refuse(&t_i32, "1 2", "trailing text after the JSON value: a number");
    refuse(&t_i32, "12abc", "trailing text after the JSON value: 'a'");
    refuse(&t_arr, "[1]]", "trailing text");
    refuse(&t_mb, "nullnull", "trailing text");
    refuse(&t_i32, "", "expected an integer for INT32, found the end of the text");
    refuse(&t_i32, "   ", "found the end of the text");
    refuse_n(&t_i32, "1\0", 2, "trailing text after the JSON value: byte 0x00");
    /* where: offsets */
    refuse(&t_arr, "[1, 2, 99999]", "[2]: 99999 does not fit INT16 (offset 7)");
}
END_TEST

START_TEST(mailbox_refusals)
{
    refuse(&t_mb, "{\"id\":1}", "expected ',' (a mailbox has id, addr, component and type), found '}'");
    refuse(&t_mb, "{}", "expected a string, found '}'");
    refuse(&t_mb, "{\"id\":1,\"addr\":\"127.0.0.1:1\",\"component\":\"BASE\",\"type\":0,"
                  "\"x\":1}",
           "expected '}' after the mailbox's four keys");
    refuse(&t_mb, "{\"ip\":1}", "unknown mailbox key \"ip\"");
    refuse(&t_mb, "{\"id\":1,\"id\":2}", "repeated mailbox key \"id\"");
    const char *bad_addr[] = {"1.2.3:4", "1.2.3.4", "256.0.0.1:1", "1.2.3.4:65536", "01.2.3.4:5",
                              "1.2.3.4:05", "a.b.c.d:1", "1.2.3.4:1x", " 1.2.3.4:1", "1.2.3.4.5:1",
                              "1.2.3.4:", "1234567.1.1.1:1", ""};
    for (size_t i = 0; i < sizeof(bad_addr) / sizeof(bad_addr[0]); i++) {
        char json[200];
        snprintf(json, sizeof(json),
                 "{\"id\":1,\"addr\":\"%s\",\"component\":\"BASE\",\"type\":0}", bad_addr[i]);
        refuse(&t_mb, json, "is not IP:PORT");
    }
    refuse(&t_mb, "{\"id\":1,\"addr\":\"1.2.3.4:1\",\"component\":\"base\",\"type\":0}",
           "unknown mailbox component \"base\"");
    refuse(&t_mb, "{\"id\":1,\"addr\":\"1.2.3.4:1\",\"component\":\"BASE\",\"type\":8192}",
           "mailbox entity type 8192 is above 8191");
    refuse(&t_mb, "{\"id\":1,\"addr\":\"1.2.3.4:1\",\"component\":\"BASE\",\"type\":70000}",
           "does not fit UINT16");
    refuse(&t_mb, "{\"id\":1,\"addr\":\"1.2.3.4:1\",\"component\":\"BASE\",\"type\":3}",
           "mailbox entity type 3 is not a defined type (3 types)");
    refuse(&t_mb, "{\"id\":-1,\"addr\":\"1.2.3.4:1\",\"component\":\"BASE\",\"type\":0}",
           "mailbox entity id -1 is negative");
    refuse(&t_mb, "{\"id\":2147483648,\"addr\":\"1.2.3.4:1\",\"component\":\"BASE\",\"type\":0}",
           "does not fit INT32");
    refuse(&t_mb, "{\"id\":1,\"addr\":\"1.2.3.4:0\",\"component\":\"BASE\",\"type\":0}",
           "has no address");
    refuse(&t_mb, "{\"id\":1,\"addr\":\"0.0.0.0:5\",\"component\":\"BASE\",\"type\":0}",
           "has no address");
    refuse(&t_mb, "{\"id\":0,\"addr\":\"1.2.3.4:5\",\"component\":\"BASE\",\"type\":0}",
           "(none) has other fields set");
    refuse(&t_mb, "{\"id\":1.5}", "not an integer");
    refuse(&t_mb, "{\"id\":1,\"addr\":5}", "expected a string, found a number");
    refuse(&t_mb, "\"BASE\"", "expected a mailbox object or null, found a string");
}
END_TEST

/* Types nested deeper than the JSON bound: a chain of ARRAY<ARRAY<...<INT8>>>. */
static mc_def_type chain[80];

START_TEST(hostile_shapes)
{
    /* a depth bomb against a flat type is refused at the first extra bracket */
    size_t n = 1000000;
    char *bomb = malloc(2 * n + 1);
    memset(bomb, '[', n);
    memset(bomb + n, ']', n);
    bomb[2 * n] = '\0';
    refuse(&t_arr, bomb, "[0]: expected an integer for INT16, found an array");
    refuse(&t_i8, bomb, "found an array");
    refuse(&t_pair, bomb, "expected an object or null");
    /* a type deeper than the bound: the bound holds */
    chain[0] = (mc_def_type)T(MC_TYPE_INT8);
    for (int i = 1; i < 80; i++)
        chain[i] = (mc_def_type){.kind = MC_TYPE_ARRAY, .of = &chain[i - 1], .depth = (unsigned)i + 1,
                                 .cells = 1};
    refuse(&chain[79], bomb, "nesting deeper than 64");
    /* 64 levels are fine */
    memset(bomb, '[', 64);
    memset(bomb + 64, ']', 64);
    bomb[128] = '\0';
    mc_value v;
    char why[256];
    ck_assert_msg(mc_value_from_json(&chain[64], bomb, 128, NULL, &v, why, sizeof(why)) == 0, "%s",
                  why);
    mc_value_free(&v);
    free(bomb);

    /* 65535 elements parse; one more is refused */
    size_t big = 65536;
    char *arr = malloc(2 * big + 2);
    arr[0] = '[';
    for (size_t i = 0; i < big; i++) {
        arr[1 + 2 * i] = '7';
        arr[2 + 2 * i] = ',';
    }
    arr[2 * big] = ']';
    arr[2 * big + 1] = '\0';
    refuse(&t_arr, arr, "ARRAY takes at most 65535 elements, found more");
    arr[2 * big - 2] = ']';
    arr[2 * big - 1] = '\0';
    ck_assert_msg(mc_value_from_json(&t_arr, arr, strlen(arr), NULL, &v, why, sizeof(why)) == 0,
                  "%s", why);
    ck_assert_uint_eq(v.as.list.count, 65535);
    mc_value_free(&v);
    free(arr);

    /* a value bomb: "{}" defaults a field of 65536 values; 40 of them exceed the budget */
    static const mc_def_type big_tup = {.kind = MC_TYPE_TUPLE, .of = &t_i8, .size = 65535,
                                        .depth = 2, .cells = 65536};
    static const mc_def_field big_fields[] = {{"t", &big_tup, 0}};
    static const mc_def_type big_dict = {.kind = MC_TYPE_FIXED_DICT, .nfields = 1,
                                         .fields = big_fields, .depth = 3, .cells = 65537};
    static const mc_def_type dicts = {.kind = MC_TYPE_ARRAY, .of = &big_dict, .depth = 4,
                                      .cells = 1};
    const char *few = "[{},{}]";
    ck_assert_msg(mc_value_from_json(&dicts, few, strlen(few), NULL, &v, why, sizeof(why)) == 0,
                  "%s", why);
    ck_assert_uint_eq(v.as.list.items[1].as.list.items[0].as.list.count, 65535);
    mc_value_free(&v);
    char many[200] = "[";
    for (int i = 0; i < 40; i++)
        strcat(many, i ? ",{}" : "{}");
    strcat(many, "]");
    refuse(&dicts, many, "too many values: more than");

    /* a very long string is parsed in linear time and checked against the limit */
    size_t slen = 4u << 20;
    char *s = malloc(slen + 3);
    s[0] = '"';
    memset(s + 1, 'a', slen);
    s[slen + 1] = '"';
    s[slen + 2] = '\0';
    refuse(&t_str, s, "STRING of 4194304 bytes exceeds the limit of 1048576");
    for (size_t i = 1; i + 6 <= slen; i += 6)
        memcpy(s + i, "\\u00e9", 6);
    refuse(&t_uni, s, "exceeds the limit");
    free(s);
}
END_TEST

/* A FIXED_DICT of 300 fields: keys in any order go through the sorted index. */
START_TEST(many_fields)
{
    enum { N = 300 };
    static char names[N][8];
    static mc_def_field fields[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "f%d", i);
        fields[i] = (mc_def_field){.name = names[i], .type = &t_u16};
    }
    mc_def_type wide = {.kind = MC_TYPE_FIXED_DICT, .nfields = N, .fields = fields, .depth = 2,
                        .cells = N + 1};
    char *json = malloc(N * 16 + 16), *o = json;
    o += sprintf(o, "{");
    for (int i = N - 1; i >= 0; i--)
        o += sprintf(o, "%s\"f%d\":%d", i == N - 1 ? "" : ",", i, i);
    strcpy(o, "}");
    mc_value v;
    char why[256];
    ck_assert_msg(mc_value_from_json(&wide, json, strlen(json), NULL, &v, why, sizeof(why)) == 0,
                  "%s", why);
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(v.as.list.items[i].as.u, (unsigned)i);
    round_trip(&wide, &v, NULL);
    mc_value_free(&v);
    strcpy(o, ",\"f150\":1}");
    refuse(&wide, json, "repeated field \"f150\" in FIXED_DICT");
    strcpy(o, ",\"f300\":1}");
    refuse(&wide, json, "unknown field \"f300\" in FIXED_DICT");
    o = json + sprintf(json, "{");
    for (int i = 0; i < 20; i++)
        o += sprintf(o, "\"f%d\":1,", i * 7);
    strcpy(o, "\"f0\":2}");
    refuse(&wide, json, "repeated field \"f0\"");
    free(json);
}
END_TEST

static void args_refused(const mc_entity_defs *d, const char *type, mc_part part,
                         const char *method, const char *json, const char *want)
{
    const mc_def_method *m = mc_defs_method_by_name(mc_defs_type_by_name(d, type), part, method);
    ck_assert_ptr_nonnull(m);
    mc_value args[8];
    memset(args, 0x5A, sizeof(args));
    char why[256] = "";
    ck_assert_msg(mc_json_to_args(d, m, json, strlen(json), args, why, sizeof(why)) == -1,
                  "%s(%s) accepted", method, json);
    ck_assert_msg(strstr(why, want) != NULL, "%s(%s): \"%s\" does not say \"%s\"", method, json,
                  why, want);
    for (size_t i = 0; i < m->nargs; i++) {
        ck_assert_int_eq(args[i].kind, 0);
        ck_assert_ptr_null(args[i].as.list.items);
    }
}

START_TEST(args_helper)
{
    mc_entity_defs *d = load_example();
    const mc_entity_type_def *av = mc_defs_type_by_name(d, "Avatar");
    const mc_def_method *tp = mc_defs_method_by_name(av, MC_PART_CELL, "teleport");
    mc_value args[2];
    char why[256];
    const char *json = " [ [1, 2, 3], [0, 0.5, -1] ] ";
    ck_assert_msg(mc_json_to_args(d, tp, json, strlen(json), args, why, sizeof(why)) == 0, "%s",
                  why);
    ck_assert(args[0].kind == MC_TYPE_VECTOR3 && args[0].as.vec[2] == 3.0f);
    ck_assert(args[1].as.vec[1] == 0.5f);
    char *text = mc_json_from_values(tp->args, tp->nargs, args);
    ck_assert_str_eq(text, "[[1,2,3],[0,0.5,-1]]");
    free(text);
    mc_value_free(&args[0]);
    mc_value_free(&args[1]);

    const mc_def_method *logout = mc_defs_method_by_name(av, MC_PART_BASE, "logout");
    ck_assert_int_eq(mc_json_to_args(d, logout, "", 0, args, why, sizeof(why)), 0);
    ck_assert_int_eq(mc_json_to_args(d, logout, " \n", 2, args, why, sizeof(why)), 0);
    ck_assert_int_eq(mc_json_to_args(d, logout, NULL, 0, args, why, sizeof(why)), 0);
    ck_assert_int_eq(mc_json_to_args(d, logout, "[]", 2, args, why, sizeof(why)), 0);
    ck_assert_int_eq(mc_json_to_args(d, logout, "[ ]", 3, args, why, sizeof(why)), 0);
    text = mc_json_from_values(logout->args, 0, NULL);
    ck_assert_str_eq(text, "[]");
    free(text);

    args_refused(d, "Avatar", MC_PART_BASE, "logout", "[1]", "too many arguments: logout takes 0");
    args_refused(d, "Avatar", MC_PART_BASE, "logout", "[", "unterminated argument array");
    args_refused(d, "Avatar", MC_PART_BASE, "logout", "{}", "expected a JSON array of arguments");
    args_refused(d, "Avatar", MC_PART_BASE, "logout", "[] x", "trailing text");
    args_refused(d, "Avatar", MC_PART_CELL, "teleport", "", "missing arguments: teleport takes 2, got none");
    args_refused(d, "Avatar", MC_PART_CELL, "teleport", "[]", "missing arguments: teleport takes 2, got 0");
    args_refused(d, "Avatar", MC_PART_CELL, "teleport", "[[1,2,3]]",
                 "missing arguments: teleport takes 2, got 1");
    args_refused(d, "Avatar", MC_PART_CELL, "teleport", "[[1,2,3],[1,2,3],[1,2,3]]",
                 "too many arguments: teleport takes 2");
    args_refused(d, "Avatar", MC_PART_CELL, "teleport", "[[1,2,3],[1,2]]",
                 "teleport argument direction: expected ',' (a VECTOR has more numbers), found ']' "
                 "(offset 13)");
    args_refused(d, "Avatar", MC_PART_CELL, "teleport", "[[1,2,3] [1,2,3]]",
                 "expected ',' or ']' after an argument");
    args_refused(d, "Avatar", MC_PART_BASE, "onTimer", "[1, 1.5]",
                 "onTimer argument #2: 1.5 is not an integer (INT64 takes integers only)");
    args_refused(d, "Avatar", MC_PART_BASE, "setAccount",
                 "[{\"id\":1,\"addr\":\"1.2.3.4:5\",\"component\":\"BASE\",\"type\":3}]",
                 "setAccount argument account: mailbox entity type 3 is not a defined type");
    args_refused(d, "Avatar", MC_PART_CELL, "setTarget",
                 "[{\"entity\":{\"id\":1,\"addr\":\"1.2.3.4:5\",\"component\":\"CELL\",\"type\":1},"
                 "\"since\":\"now\"}]",
                 "setTarget argument target.since: expected a number for FLOAT64, found a string");
    args_refused(d, "Account", MC_PART_BASE, "createAvatar", "[\"bob\", [1,2,3,256]]",
                 "createAvatar argument look[3]: 256 does not fit UINT8");
    args_refused(d, "Account", MC_PART_BASE, "createAvatar", "[\"\\ud800\", [1,2,3,4]]",
                 "createAvatar argument name: lone high surrogate");

    /* mc_json_from_values refuses a value that is not of its parameter's type */
    mc_value wrong = {.kind = MC_TYPE_STRING};
    ck_assert_ptr_null(mc_json_from_values(tp->args, 1, &wrong));
    ck_assert_ptr_null(mc_value_to_json(&t_pair_req, &(mc_value){.kind = MC_TYPE_FIXED_DICT}));
    mc_defs_free(d);
}
END_TEST

static void props_refused(const mc_entity_defs *d, const char *type, const char *json,
                          const char *want)
{
    uint16_t *idx = (uint16_t *)1;
    mc_value *vals = (mc_value *)1;
    size_t count = 99;
    char why[256] = "";
    ck_assert_msg(mc_json_to_props(d, mc_defs_type_by_name(d, type), json, strlen(json), &idx,
                                   &vals, &count, why, sizeof(why)) == -1,
                  "%s accepted", json);
    ck_assert_msg(strstr(why, want) != NULL, "%s: \"%s\" does not say \"%s\"", json, why, want);
    ck_assert_ptr_null(idx);
    ck_assert_ptr_null(vals);
    ck_assert_uint_eq(count, 0);
}

START_TEST(props_helper)
{
    mc_entity_defs *d = load_example();
    const mc_entity_type_def *av = mc_defs_type_by_name(d, "Avatar");
    const char *json =
        "{\"name\": \"bob\", \"look\": [1, 2, 3, 4], \"gold\": 18446744073709551615,"
        " \"inventory\": [{\"id\": 7, \"count\": 2, \"label\": \"sword\"}, {\"id\": 8}],"
        " \"target\": null, \"portrait\": \"AAEC\", \"tags\": [\"a\"], \"createdAt\": 1.25}";
    uint16_t *idx;
    mc_value *vals;
    size_t count;
    char why[256];
    ck_assert_msg(mc_json_to_props(d, av, json, strlen(json), &idx, &vals, &count, why,
                                   sizeof(why)) == 0,
                  "%s", why);
    ck_assert_uint_eq(count, 8);
    const char *names[] = {"name", "look", "gold", "inventory", "target", "portrait", "tags",
                           "createdAt"};
    for (size_t i = 0; i < count; i++) {
        const mc_def_property *p = mc_defs_property_by_name(av, names[i]);
        ck_assert_uint_eq(idx[i], p->index);
        mc_value_limits lim = mc_defs_property_limits(d, p);
        ck_assert(mc_value_check(p->type, &vals[i], &lim, why, sizeof(why)));
    }
    ck_assert_uint_eq(vals[2].as.u, UINT64_MAX);
    ck_assert_uint_eq(vals[3].as.list.count, 2);
    ck_assert_uint_eq(vals[3].as.list.items[1].as.list.items[1].as.u, 0); /* defaulted count */
    char *text = mc_value_to_json(mc_defs_property_by_name(av, "inventory")->type, &vals[3]);
    ck_assert_str_eq(text, "[{\"id\":7,\"count\":2,\"label\":\"sword\"},"
                           "{\"id\":8,\"count\":0,\"label\":\"\"}]");
    free(text);
    mc_json_props_free(idx, vals, count);

    ck_assert_int_eq(mc_json_to_props(d, av, "", 0, &idx, &vals, &count, why, sizeof(why)), 0);
    ck_assert_uint_eq(count, 0);
    mc_json_props_free(idx, vals, count);
    ck_assert_int_eq(mc_json_to_props(d, av, " {} ", 4, &idx, &vals, &count, why, sizeof(why)), 0);
    ck_assert_uint_eq(count, 0);
    mc_json_props_free(idx, vals, count);

    /* every property's default, as one object (more keys than the linear scan handles) */
    for (uint16_t id = 0; id < mc_defs_type_count(d); id++) {
        const mc_entity_type_def *et = mc_defs_type(d, id);
        size_t cap = 64, len = 1, want = 0;
        char *obj = malloc(cap);
        strcpy(obj, "{");
        for (size_t i = 0; i < et->nprops; i++) {
            if (et->props[i].flags == MC_FLAGS_EDITOR_ONLY)
                continue;
            char *v = mc_value_to_json(et->props[i].type, &et->props[i].default_value);
            size_t need = len + strlen(v) + strlen(et->props[i].name) + 8;
            if (need > cap)
                obj = realloc(obj, cap = 2 * need);
            len += (size_t)sprintf(obj + len, "%s\"%s\":%s", want ? "," : "", et->props[i].name, v);
            want++;
            free(v);
        }
        strcpy(obj + len, "}");
        ck_assert_msg(mc_json_to_props(d, et, obj, strlen(obj), &idx, &vals, &count, why,
                                       sizeof(why)) == 0,
                      "%s: %s", obj, why);
        ck_assert_uint_eq(count, want);
        for (size_t i = 0; i < count; i++)
            ck_assert(mc_value_equal(&vals[i], &et->props[idx[i]].default_value));
        mc_json_props_free(idx, vals, count);
        free(obj);
    }
    props_refused(d, "Avatar",
                  "{\"name\":\"a\",\"health\":1,\"maxHealth\":1,\"level\":1,\"rank\":1,"
                  "\"title\":\"t\",\"aggro\":1,\"faction\":1,\"gold\":1,\"xp\":1,\"rank\":2}",
                  "property rank given twice");
    props_refused(d, "Avatar",
                  "{\"name\":\"a\",\"health\":1,\"maxHealth\":1,\"level\":1,\"rank\":1,"
                  "\"title\":\"t\",\"aggro\":1,\"faction\":1,\"gold\":1,\"xp\":1,\"editorTint\":2}",
                  "property editorTint is EDITOR_ONLY");
    props_refused(d, "Avatar", "{\"look\": [1, 2, 300, 4]}",
                  "property look[2]: 300 does not fit UINT8");
    props_refused(d, "Avatar", "{\"inventory\": [{\"id\": 1, \"count\": 70000}]}",
                  "property inventory[0].count: 70000 does not fit UINT16 (offset 34)");
    props_refused(d, "Avatar", "{\"inventory\": [{\"id\": 1, \"colour\": 1}]}",
                  "property inventory[0]: unknown field \"colour\" in ITEM");
    props_refused(d, "Avatar", "{\"editorTint\": [1, 1, 1, 1]}", "property editorTint is EDITOR_ONLY");
    props_refused(d, "Avatar", "{\"nope\": 1}", "Avatar has no property \"nope\"");
    props_refused(d, "Avatar", "{\"level\": 1, \"level\": 2}", "property level given twice");
    props_refused(d, "Avatar", "{\"name\": \"123456789012345678901234567890123\"}",
                  "property name: STRING of 33 bytes exceeds the limit of 32");
    props_refused(d, "Avatar", "{\"portrait\": \"AAE\"}", "property portrait: BLOB is not base64");
    props_refused(d, "Avatar", "{\"account\": {\"id\": 1, \"addr\": \"1.2.3.4:5\", "
                               "\"component\": \"BASE\", \"type\": 3}}",
                  "not a defined type (3 types)");
    props_refused(d, "Avatar", "[]", "expected a JSON object of properties, found an array");
    props_refused(d, "Avatar", "{\"level\": 1} {}", "trailing text");
    props_refused(d, "Avatar", "{\"level\": 1,}", "expected a string, found '}'");
    props_refused(d, "Avatar", "{\"level\" 1}", "expected ':'");
    props_refused(d, "Avatar", "{\"level\": 1", "expected ',' or '}', found the end of the text");
    props_refused(d, "Avatar", "{\"title\": \"\\udead\"}", "property title: lone low surrogate");
    props_refused(d, "Avatar", "{\"target\": {\"since\": 1, \"since\": 2}}",
                  "property target: repeated field \"since\" in OPTIONAL_TARGET");
    props_refused(d, "Space", "{\"health\": 1}", "Space has no property \"health\"");
    mc_defs_free(d);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("value_json");
    TCase *tc = tcase_create("json");
    tcase_add_test(tc, every_kind_both_ways);
    tcase_add_test(tc, example_defs_round_trip);
    tcase_add_test(tc, allkinds_defs_round_trip);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, mailbox_refusals);
    tcase_add_test(tc, hostile_shapes);
    tcase_add_test(tc, many_fields);
    tcase_add_test(tc, args_helper);
    tcase_add_test(tc, props_helper);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
