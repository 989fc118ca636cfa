/* libFuzzer target: entity hashes and schema records as read from Redis (untrusted). The
 * first byte picks the entity type of tests/persist/res (Thing or Hero); the rest is split at
 * NUL bytes into field name, value, name, value... The fields are decoded as an entity
 * (mc_persist_record_decode) and compared as a schema record (mc_persist_schema_compare);
 * each field also goes through the engine-field parsers. A decoded record must hold a value
 * of the right type for every property and re-render (abort otherwise); a refusal must say
 * why and leave nothing allocated. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/value_json.h"
#include "persist/schema.h"

#ifndef MC_PERSIST_RES
#define MC_PERSIST_RES "tests/persist/res"
#endif

static mc_entity_defs *defs;

static void load_once(void)
{
    if (defs)
        return;
    mc_log_set_level(MC_LOG_CRITICAL);
    char err[8192];
    defs = mc_defs_load(MC_PERSIST_RES, err, sizeof err);
    if (!defs) {
        fprintf(stderr, "fuzz_persist_record: defs: %s\n", err);
        abort();
    }
}

#define MAX_FIELDS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_once();
    if (size < 1)
        return 0;
    const mc_entity_type_def *t =
        mc_defs_type(defs, (uint16_t)(data[0] % mc_defs_type_count(defs)));
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    mc_persist_field fields[MAX_FIELDS];
    size_t n = 0;
    while (p < end && n < MAX_FIELDS) {
        const char *name = p;
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        size_t nlen = nul ? (size_t)(nul - p) : (size_t)(end - p);
        p = nul ? nul + 1 : end;
        const char *val = p;
        nul = p < end ? memchr(p, '\0', (size_t)(end - p)) : NULL;
        size_t vlen = nul ? (size_t)(nul - p) : (size_t)(end - p);
        p = nul ? nul + 1 : end;
        fields[n++] = (mc_persist_field){name, nlen, val, vlen};
    }
    mc_persist_record rec;
    char why[512];
    if (mc_persist_record_decode(defs, t, 7, fields, n, &rec, why, sizeof why) == 0) {
        for (size_t i = 0; i < t->nprops; i++) {
            char *json = mc_value_to_json(t->props[i].type, &rec.values[i]);
            if (!json)
                abort(); /* a decoded value must be shaped like its type */
            free(json);
        }
        mc_persist_record_free(&rec);
    } else if (!why[0] || rec.values || rec.nadded || rec.nremoved) {
        abort();
    }
    mc_persist_schema_diff d;
    if (mc_persist_schema_compare(t, fields, n, &d) == 0) {
        char *text = mc_persist_schema_diff_text(&d);
        free(text);
        mc_persist_schema_diff_free(&d);
    }
    for (size_t i = 0; i < n; i++) {
        float v[3];
        int64_t x;
        mc_persist_vec3_parse(fields[i].value, fields[i].value_len, v);
        mc_persist_int_parse(fields[i].value, fields[i].value_len, &x);
    }
    return 0;
}
