/* Schema records and the entity hash's fields: pure functions (no Redis), shared by the store,
 * mc-db and the fuzz target.
 *
 * A type's schema record (key mc:s:{Type}) maps each persistent property to its type text
 * (mc_def_type_describe: aliases expanded, e.g. "ARRAY<INT16>", "FIXED_DICT{key:STRING,
 * value:FLOAT32}?"). Comparing a stored record with the current defs gives: added properties
 * (persistent now, not in the record: they take their default on load), removed ones (in the
 * record, no longer persistent properties: ignored on load), and changed ones (same name,
 * other type text: loads of the type are refused). Everything read from Redis is untrusted.
 */
#ifndef MC_PERSIST_SCHEMA_H
#define MC_PERSIST_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"
#include "persist/store.h"

/* Engine field names in the entity hash ('@' never starts a property name). */
#define MC_PERSIST_FIELD_POSITION "@position"
#define MC_PERSIST_FIELD_DIRECTION "@direction"
#define MC_PERSIST_FIELD_SPACE "@spaceId"

/* One name/value pair as read from Redis (not NUL-terminated, may hold any bytes). */
typedef struct {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
} mc_persist_field;

/* The result of a comparison; each list a heap array of heap strings. */
typedef struct {
    char **added;        /* property names */
    size_t nadded;
    char **removed;      /* property names */
    size_t nremoved;
    char **changed;      /* "name: stored TYPE, now TYPE" */
    size_t nchanged;
} mc_persist_schema_diff;

/* The type text of a property's type (heap, free()), NULL on allocation failure. */
char *mc_persist_type_text(const mc_def_property *p);
/* Compare a stored record (fields: property name -> type text; any bytes) with the type's
 * current persistent properties. 0 (diff filled, possibly empty) or -1 on allocation failure.
 * Free with mc_persist_schema_diff_free. */
int mc_persist_schema_compare(const mc_entity_type_def *t, const mc_persist_field *stored,
                              size_t n, mc_persist_schema_diff *diff);
void mc_persist_schema_diff_free(mc_persist_schema_diff *diff);
/* One line summarising a diff: "ok", or "added: a, b; removed: c; changed: d: stored X,
 * now Y" (heap, free()). */
char *mc_persist_schema_diff_text(const mc_persist_schema_diff *diff);

/* Decode an entity hash (fields as read) into rec for type t: every persistent property from
 * its canonical JSON text (mc_value_from_json with mc_defs_property_limits), defaults for the
 * others and for absent ones (listed in rec->added), unknown fields listed in rec->removed,
 * engine fields parsed. 0, or -1 with rec zeroed and a reason naming the field in why. */
int mc_persist_record_decode(const mc_entity_defs *defs, const mc_entity_type_def *t,
                             uint64_t dbid, const mc_persist_field *fields, size_t n,
                             mc_persist_record *rec, char *why, size_t whylen);
void mc_persist_record_free(mc_persist_record *rec);

/* Engine fields as text: "[x,y,z]" for a vector, a decimal integer for the space id.
 * Parsers return 0 or -1 (not three finite numbers / not an integer). */
int mc_persist_vec3_text(const float v[3], char *buf, size_t buflen);
int mc_persist_vec3_parse(const char *text, size_t len, float out[3]);
int mc_persist_int_parse(const char *text, size_t len, int64_t *out);

#endif
