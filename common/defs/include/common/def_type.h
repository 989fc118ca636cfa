/* Def types: the data types a .def file can give a property, a method argument or an
 * alias (INT8 .. FIXED_DICT, MAILBOX). A loaded mc_entity_defs owns every mc_def_type;
 * types are shared by pointer (an alias is one type object) and never change after load.
 */
#ifndef MC_COMMON_DEF_TYPE_H
#define MC_COMMON_DEF_TYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    MC_TYPE_INT8,
    MC_TYPE_INT16,
    MC_TYPE_INT32,
    MC_TYPE_INT64,
    MC_TYPE_UINT8,
    MC_TYPE_UINT16,
    MC_TYPE_UINT32,
    MC_TYPE_UINT64,
    MC_TYPE_FLOAT32,
    MC_TYPE_FLOAT64,
    MC_TYPE_STRING,
    MC_TYPE_UNICODE_STRING,
    MC_TYPE_BLOB,
    MC_TYPE_VECTOR2,
    MC_TYPE_VECTOR3,
    MC_TYPE_VECTOR4,
    MC_TYPE_MAILBOX,
    MC_TYPE_ARRAY,
    MC_TYPE_TUPLE,
    MC_TYPE_FIXED_DICT,
} mc_type_kind;

/* Limits every decoder applies (a property's DatabaseLength may lower the byte limit). */
#define MC_DEFS_MAX_BYTES (1024u * 1024u)   /* STRING, UNICODE_STRING, BLOB */
#define MC_DEFS_MAX_ELEMENTS 65535u         /* ARRAY, TUPLE */
#define MC_DEFS_MAX_NAME 63u                /* identifiers */
#define MC_DEFS_MAX_DEPTH 16u               /* nesting of container types */
#define MC_DEFS_MAX_TYPE_NODES 4096u        /* a type's nodes with aliases expanded */
#define MC_DEFS_MAX_CELLS (1u << 20)        /* mc_values in a type's default value */

typedef struct mc_def_type mc_def_type;

typedef struct {
    const char *name;
    const mc_def_type *type;
    uint32_t max_len; /* DatabaseLength of the field, 0 = type limit */
} mc_def_field;

struct mc_def_type {
    mc_type_kind kind;
    const char *alias;      /* alias name, or NULL for an anonymous type */
    const mc_def_type *of;  /* ARRAY, TUPLE: element type */
    uint32_t size;          /* ARRAY, TUPLE: fixed element count, 0 = any */
    bool allow_none;        /* FIXED_DICT */
    size_t nfields;         /* FIXED_DICT */
    const mc_def_field *fields;
    size_t min_wire_size;   /* fewest bytes a value of this type takes (always >= 1) */
    unsigned depth;         /* 1 for scalars, 1 + deepest element for containers */
    size_t nodes;           /* nodes of the type with aliases expanded (1 for scalars) */
    size_t cells;           /* mc_values in its default with every FIXED_DICT present */
};

/* "INT8", ..., "FIXED_DICT" */
const char *mc_type_kind_name(mc_type_kind kind);
/* Canonical text of a type with aliases expanded, e.g. "ARRAY<INT32>[4]" or
 * "FIXED_DICT{a:INT8,b:STRING}?"; heap string (free()), NULL on allocation failure. */
char *mc_def_type_describe(const mc_def_type *t);

#endif
