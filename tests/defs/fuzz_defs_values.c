/* libFuzzer target: decode hostile bytes as def values of every kind. A value that decodes
 * must re-encode and decode to an equal value; nothing may crash, leak or over-allocate. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/value.h"

#define T(k, min) {.kind = (k), .min_wire_size = (min), .depth = 1}

static const mc_def_type t_i8 = T(MC_TYPE_INT8, 1), t_i64 = T(MC_TYPE_INT64, 8),
                         t_u16 = T(MC_TYPE_UINT16, 2), t_f32 = T(MC_TYPE_FLOAT32, 4),
                         t_f64 = T(MC_TYPE_FLOAT64, 8), t_str = T(MC_TYPE_STRING, 1),
                         t_uni = T(MC_TYPE_UNICODE_STRING, 1), t_blob = T(MC_TYPE_BLOB, 1),
                         t_v2 = T(MC_TYPE_VECTOR2, 8), t_v4 = T(MC_TYPE_VECTOR4, 16),
                         t_mb = T(MC_TYPE_MAILBOX, 12);
static const mc_def_field dict_fields[] = {
    {"name", &t_uni, 16}, {"data", &t_blob, 0}, {"who", &t_mb, 0},
    {"pos", &t_v2, 0},    {"n", &t_u16, 0},
};
static const mc_def_type t_dict = {.kind = MC_TYPE_FIXED_DICT, .allow_none = true,
                                   .nfields = 5, .fields = dict_fields, .min_wire_size = 1,
                                   .depth = 2};
static const mc_def_type t_arr_dict = {.kind = MC_TYPE_ARRAY, .of = &t_dict,
                                       .min_wire_size = 1, .depth = 3};
static const mc_def_type t_tuple = {.kind = MC_TYPE_TUPLE, .of = &t_str, .size = 3,
                                    .min_wire_size = 1, .depth = 2};
static const mc_def_type t_arr_arr = {.kind = MC_TYPE_ARRAY, .of = &t_arr_dict,
                                      .min_wire_size = 1, .depth = 4};
static const mc_def_type t_arr_i8 = {.kind = MC_TYPE_ARRAY, .of = &t_i8, .min_wire_size = 1,
                                     .depth = 2};

static const mc_def_type *const types[] = {
    &t_i8, &t_i64, &t_u16, &t_f32, &t_f64, &t_str, &t_uni, &t_blob, &t_v2, &t_v4, &t_mb,
    &t_dict, &t_arr_dict, &t_tuple, &t_arr_arr, &t_arr_i8,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const mc_def_type *t = types[data[0] % (sizeof(types) / sizeof(types[0]))];
    mc_value_limits lim = {.max_bytes = (data[0] & 0x80) ? 8 : 0, .entity_types = 4};
    mc_istream is;
    mc_istream_init(&is, data + 1, size - 1);
    mc_value v;
    char why[256];
    if (mc_value_decode(t, &is, &lim, &v, why, sizeof(why)) != 0) {
        if (v.kind != 0 || mc_istream_ok(&is))
            abort(); /* a failed decode must leave nothing behind */
        return 0;
    }
    mc_ostream os;
    mc_ostream_init(&os);
    if (mc_value_encode(t, &v, &lim, &os, why, sizeof(why)) != 0)
        abort(); /* whatever decodes must encode */
    mc_istream is2;
    mc_istream_init(&is2, os.data, os.size);
    mc_value back;
    if (mc_value_decode(t, &is2, &lim, &back, why, sizeof(why)) != 0 || !mc_istream_done(&is2) ||
        !mc_value_equal(&v, &back))
        abort();
    char *text = mc_value_to_text(&v);
    free(text);
    mc_value_free(&back);
    mc_value_free(&v);
    mc_ostream_free(&os);
    return 0;
}
