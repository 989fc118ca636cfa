/* Values of def types: a C representation of a value of any mc_def_type, its default,
 * and its encoding on the wire (common/stream.h encodings).
 *
 * Wire encodings (big-endian): INTn/UINTn fixed width; FLOAT32/FLOAT64 IEEE bits;
 * STRING, UNICODE_STRING, BLOB a packed length then bytes (STRING and UNICODE_STRING hold no
 * NUL byte, UNICODE_STRING is valid UTF-8); VECTORn n FLOAT32; MAILBOX 12 bytes
 * (mailbox_ref.h); ARRAY and TUPLE a packed element count then the elements (with a
 * <size>, the count must equal it); FIXED_DICT with AllowNone a bool (0 = None) then, if
 * present, each field in declaration order.
 *
 * Decoding never trusts the input: lengths and counts are checked against the type's and
 * the caller's limits and against the bytes that remain before anything is allocated.
 */
#ifndef MC_COMMON_VALUE_H
#define MC_COMMON_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/def_type.h"
#include "common/mailbox_ref.h"
#include "common/stream.h"

typedef struct mc_value mc_value;

struct mc_value {
    mc_type_kind kind;
    union {
        int64_t i;  /* INT8..INT64 */
        uint64_t u; /* UINT8..UINT64 */
        double f;   /* FLOAT32, FLOAT64 */
        struct {
            char *data;   /* heap, NUL-terminated (the NUL is not part of len) */
            uint32_t len;
        } bytes;          /* STRING, UNICODE_STRING, BLOB */
        float vec[4];     /* VECTOR2..4 */
        mc_mailbox_ref mailbox;
        struct {
            mc_value *items; /* heap array */
            uint32_t count;
            bool none;       /* FIXED_DICT with AllowNone: the value is None */
        } list;              /* ARRAY, TUPLE, FIXED_DICT (items = fields in order) */
    } as;
};

/* Limits a decode applies beyond the type's own. */
typedef struct {
    uint32_t max_bytes;   /* top-level STRING/UNICODE_STRING/BLOB length, 0 = type limit */
    size_t entity_types;  /* MAILBOX entity type ids must be below this; 0 = no check */
} mc_value_limits;

/* The type's default: zero, empty, fixed-size containers filled with element defaults,
 * FIXED_DICT fields defaulted (None when it has AllowNone). Returns 0, or -1 on allocation failure. */
int mc_value_init_default(mc_value *v, const mc_def_type *t);
/* Release what a value owns (safe on a zeroed value); leaves it zeroed. */
void mc_value_free(mc_value *v);
/* Deep copy. Returns 0 or -1. */
int mc_value_copy(mc_value *dst, const mc_value *src);
bool mc_value_equal(const mc_value *a, const mc_value *b);

/* Append a deep copy of item to an ARRAY value (no type check: encode checks). 0 or -1. */
int mc_value_append(mc_value *list, const mc_value *item);

/* Set a STRING/UNICODE_STRING/BLOB value from bytes (copied). Returns 0 or -1. */
int mc_value_set_bytes(mc_value *v, mc_type_kind kind, const void *data, size_t len);

/* Check a value against a type (kinds, ranges, lengths, counts, UTF-8, mailboxes).
 * Returns true, or false with the reason in why. */
bool mc_value_check(const mc_def_type *t, const mc_value *v, const mc_value_limits *lim,
                    char *why, size_t whylen);
/* Check then append to os. Returns 0, or -1 with the reason in why (os unchanged then). */
int mc_value_encode(const mc_def_type *t, const mc_value *v, const mc_value_limits *lim,
                    mc_ostream *os, char *why, size_t whylen);
/* Decode one value. On failure returns -1, fails the stream, leaves *v zeroed and writes
 * the reason in why. */
int mc_value_decode(const mc_def_type *t, mc_istream *is, const mc_value_limits *lim,
                    mc_value *v, char *why, size_t whylen);

/* Render a value as text for logs and defc (heap string, free()). */
char *mc_value_to_text(const mc_value *v);

/* Strict UTF-8 check (no overlongs, surrogates or code points above U+10FFFF). */
bool mc_utf8_valid(const uint8_t *s, size_t len);

#endif
