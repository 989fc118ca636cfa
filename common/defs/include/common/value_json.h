/* JSON text <-> values of def types, for operators (the watcher tool) who create entities and
 * call methods with properties and arguments written as JSON. The text comes from the
 * network: the parser is written for hostile input (see docs/DEFS.md, "JSON form of values").
 *
 * Forms (to_json writes them, from_json reads them, so a round trip gives an equal value):
 *   INTn, UINTn        JSON integer (no fraction or exponent), exact range check
 *   FLOAT32, FLOAT64   JSON number (finite after conversion); a non-finite value (only a
 *                      decoded wire value can hold one) is written as null, which is refused
 *   STRING, UNICODE_STRING  JSON string, UTF-8 (STRING bytes pass through unchanged)
 *   BLOB               base64 string (standard alphabet, padding required)
 *   VECTORn            array of n numbers
 *   MAILBOX            null (the none mailbox) or
 *                      {"id": 12, "addr": "10.0.0.1:20013", "component": "BASE", "type": 1}
 *   ARRAY, TUPLE       array
 *   FIXED_DICT         object keyed by field names (missing fields take their type's default,
 *                      unknown fields are refused); null for None when AllowNone
 *
 * Bounds: nesting at most MC_JSON_MAX_DEPTH (and never deeper than the type), numbers at most
 * MC_JSON_MAX_NUMBER characters, at most len + MC_DEFS_MAX_CELLS values built from one text
 * (missing FIXED_DICT fields count their defaults), everything else as mc_value_check.
 * Numbers assume the "C" LC_NUMERIC (no process here calls setlocale); under a locale with
 * another decimal mark a fractional number is refused, never misread.
 */
#ifndef MC_COMMON_VALUE_JSON_H
#define MC_COMMON_VALUE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"
#include "common/value.h"

#define MC_JSON_MAX_DEPTH 64u
#define MC_JSON_MAX_NUMBER 256u

/* Parse JSON text (exactly one JSON value, whitespace around allowed, nothing else) as a
 * value of def type t, checked like a decoded value (mc_value_check with lim; lim may be
 * NULL). 0, or -1 with *out zeroed and a one-line reason in why that names where
 * (e.g. "look[2]: 300 does not fit UINT8 (offset 9)"). */
int mc_value_from_json(const mc_def_type *t, const char *json, size_t len,
                       const mc_value_limits *lim, mc_value *out, char *why, size_t whylen);
/* Render a value of type t as compact JSON (heap string, free()); NULL on allocation failure
 * or when v is not shaped like a value of t (wrong kind, field count). */
char *mc_value_to_json(const mc_def_type *t, const mc_value *v);

/* A JSON array as the arguments of method m (exactly m->nargs, each checked against its type
 * with mc_defs_value_limits); args must have room for m->nargs; on failure nothing is left
 * allocated (every args[i] zeroed). An empty (or all-whitespace) text or "[]" is zero
 * arguments. */
int mc_json_to_args(const mc_entity_defs *defs, const mc_def_method *m, const char *json,
                    size_t len, mc_value *args, char *why, size_t whylen);
/* The return values (or arguments) of a method as a JSON array text (heap, free()); NULL on
 * allocation failure or a value not shaped like its parameter's type. */
char *mc_json_from_values(const mc_def_arg *params, size_t n, const mc_value *vals);

/* A JSON object {"prop": value, ...} as initial property values of entity type t: every key
 * must be a property of the type (EDITOR_ONLY ones refused), no key twice, each value checked
 * with mc_defs_property_limits. An empty (or all-whitespace) text is no properties. On success
 * *indices and *values (heap arrays, *count entries, in the order of the text; free with
 * mc_json_props_free) hold property indices (mc_def_property.index) and values; on failure
 * they are NULL and *count 0. */
int mc_json_to_props(const mc_entity_defs *defs, const mc_entity_type_def *t, const char *json,
                     size_t len, uint16_t **indices, mc_value **values, size_t *count,
                     char *why, size_t whylen);
void mc_json_props_free(uint16_t *indices, mc_value *values, size_t count);

#endif
