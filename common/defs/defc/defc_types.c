/* Kinds as generated C sees them (defc.h). */
#include "defc.h"

const char *defc_scalar_ctype(mc_type_kind k)
{
    switch (k) {
    case MC_TYPE_INT8: return "int8_t";
    case MC_TYPE_INT16: return "int16_t";
    case MC_TYPE_INT32: return "int32_t";
    case MC_TYPE_INT64: return "int64_t";
    case MC_TYPE_UINT8: return "uint8_t";
    case MC_TYPE_UINT16: return "uint16_t";
    case MC_TYPE_UINT32: return "uint32_t";
    case MC_TYPE_UINT64: return "uint64_t";
    case MC_TYPE_FLOAT32: return "float";
    case MC_TYPE_FLOAT64: return "double";
    case MC_TYPE_VECTOR2: return "mc_vector2";
    case MC_TYPE_VECTOR3: return "mc_vector3";
    case MC_TYPE_VECTOR4: return "mc_vector4";
    case MC_TYPE_MAILBOX: return "mc_mailbox_ref";
    default: return NULL;
    }
}

bool defc_is_str(mc_type_kind k) { return k == MC_TYPE_STRING || k == MC_TYPE_UNICODE_STRING; }

bool defc_is_generic(mc_type_kind k)
{
    return k == MC_TYPE_BLOB || k == MC_TYPE_ARRAY || k == MC_TYPE_TUPLE ||
           k == MC_TYPE_FIXED_DICT;
}
