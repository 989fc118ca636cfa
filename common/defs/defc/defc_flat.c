/* defc: flat calls. A method whose arguments (or return values) are all fixed-size numbers
 * and vectors is sent, dispatched and answered without mc_value: the generated code writes
 * the values into a stack buffer and reads them from the call's bytes with the inline
 * mc_gen_put_* / mc_gen_get_* of common/game_module.h (the same bytes mc_value_encode
 * writes). Everything else keeps the generic path. */
#include <stdio.h>

#include "defc.h"

/* Bytes of one flat value of kind k, or 0 when k is not flat. */
static size_t flat_size(mc_type_kind k)
{
    switch (k) {
    case MC_TYPE_INT8:
    case MC_TYPE_UINT8: return 1;
    case MC_TYPE_INT16:
    case MC_TYPE_UINT16: return 2;
    case MC_TYPE_INT32:
    case MC_TYPE_UINT32:
    case MC_TYPE_FLOAT32: return 4;
    case MC_TYPE_INT64:
    case MC_TYPE_UINT64:
    case MC_TYPE_FLOAT64:
    case MC_TYPE_VECTOR2: return 8;
    case MC_TYPE_VECTOR3: return 12;
    case MC_TYPE_VECTOR4: return 16;
    default: return 0;
    }
}

bool defc_flat_list(const mc_def_arg *as, size_t n, size_t *size)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t s = flat_size(as[i].type->kind);
        if (!s)
            return false;
        total += s;
    }
    *size = total;
    return true;
}

/* The width suffix of the put/get helpers for an integer kind (signed values travel as their
 * two's complement bits, as mc_write_i* writes them). */
static const char *int_width(mc_type_kind k)
{
    switch (k) {
    case MC_TYPE_INT8:
    case MC_TYPE_UINT8: return "u8";
    case MC_TYPE_INT16:
    case MC_TYPE_UINT16: return "u16";
    case MC_TYPE_INT32:
    case MC_TYPE_UINT32: return "u32";
    default: return "u64";
    }
}

static const char *uint_ctype(mc_type_kind k)
{
    switch (k) {
    case MC_TYPE_INT8:
    case MC_TYPE_UINT8: return "uint8_t";
    case MC_TYPE_INT16:
    case MC_TYPE_UINT16: return "uint16_t";
    case MC_TYPE_INT32:
    case MC_TYPE_UINT32: return "uint32_t";
    default: return "uint64_t";
    }
}

void defc_emit_flat_put(FILE *f, const char *indent, const char *p, mc_type_kind k,
                        const char *e)
{
    static const char comp[] = "xyzw";
    int nvec = k == MC_TYPE_VECTOR2 ? 2 : k == MC_TYPE_VECTOR3 ? 3 : k == MC_TYPE_VECTOR4 ? 4 : 0;
    if (nvec) {
        for (int i = 0; i < nvec; i++)
            fprintf(f, "%s%s = mc_gen_put_f32(%s, %s.%c);\n", indent, p, p, e, comp[i]);
    } else if (k == MC_TYPE_FLOAT32 || k == MC_TYPE_FLOAT64) {
        fprintf(f, "%s%s = mc_gen_put_%s(%s, %s);\n", indent, p,
                k == MC_TYPE_FLOAT32 ? "f32" : "f64", p, e);
    } else {
        fprintf(f, "%s%s = mc_gen_put_%s(%s, (%s)%s);\n", indent, p, int_width(k), p,
                uint_ctype(k), e);
    }
}

void defc_emit_flat_get(FILE *f, const char *b, size_t off, mc_type_kind k, const char *ctype)
{
    int nvec = k == MC_TYPE_VECTOR2 ? 2 : k == MC_TYPE_VECTOR3 ? 3 : k == MC_TYPE_VECTOR4 ? 4 : 0;
    if (nvec) {
        fprintf(f, "(%s){", ctype);
        for (int i = 0; i < nvec; i++)
            fprintf(f, "%smc_gen_get_f32(%s + %zu)", i ? ", " : "", b, off + 4u * (size_t)i);
        fprintf(f, "}");
    } else if (k == MC_TYPE_FLOAT32 || k == MC_TYPE_FLOAT64) {
        fprintf(f, "mc_gen_get_%s(%s + %zu)", k == MC_TYPE_FLOAT32 ? "f32" : "f64", b, off);
    } else {
        fprintf(f, "(%s)mc_gen_get_%s(%s + %zu)", ctype, int_width(k), b, off);
    }
}

size_t defc_flat_size(mc_type_kind k) { return flat_size(k); }
