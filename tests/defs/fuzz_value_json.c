/* libFuzzer target: hostile JSON as operator input on the example game's defs. The first byte
 * picks a target (modulo their count): the initial properties of an entity type
 * (mc_json_to_props), the arguments of a method (mc_json_to_args), or a value of an alias
 * (mc_value_from_json); the rest is the JSON text. A text that parses must render with
 * to_json and parse back to an equal value (abort otherwise); a refusal must say why in one
 * line and leave nothing behind. Targets in order: per entity type (by id) its properties,
 * then its base, cell and client methods; then the aliases. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/value_json.h"

#ifndef MC_EXAMPLE_RES
#define MC_EXAMPLE_RES "defs"
#endif

typedef struct {
    const mc_entity_type_def *type; /* properties of this type, or */
    const mc_def_method *method;    /* arguments of this method, or */
    const mc_def_type *alias;       /* a value of this alias */
} target;

static mc_entity_defs *defs;
static target targets[512];
static size_t ntargets;

static void add(target t)
{
    if (ntargets < sizeof(targets) / sizeof(targets[0]))
        targets[ntargets++] = t;
}

static void load_once(void)
{
    if (defs)
        return;
    char res[4096], err[8192];
    const char *src = getenv("MC_SOURCE_DIR");
    if (src)
        snprintf(res, sizeof(res), "%s/defs", src);
    else
        snprintf(res, sizeof(res), "%s", MC_EXAMPLE_RES);
    defs = mc_defs_load(res, err, sizeof(err));
    if (!defs) {
        fprintf(stderr, "fuzz_value_json: cannot load %s: %s\n", res, err);
        abort();
    }
    for (uint16_t id = 0; id < mc_defs_type_count(defs); id++) {
        const mc_entity_type_def *t = mc_defs_type(defs, id);
        add((target){.type = t});
        for (int part = 0; part < MC_PART_COUNT; part++)
            for (size_t m = 0; m < t->nmethods[part]; m++)
                add((target){.method = &t->methods[part][m]});
    }
    for (size_t a = 0; a < mc_defs_alias_count(defs); a++)
        add((target){.alias = mc_defs_alias(defs, a)});
}

static void refused(const char *why)
{
    if (!why[0] || strchr(why, '\n'))
        abort(); /* a refusal says why, in one line */
}

/* to_json then from_json gives an equal value, and the same text again. */
static void round_trip(const mc_def_type *t, const mc_value *v, const mc_value_limits *lim)
{
    char *text = mc_value_to_json(t, v), why[256];
    if (!text)
        abort();
    mc_value back;
    if (mc_value_from_json(t, text, strlen(text), lim, &back, why, sizeof(why)) != 0 ||
        !mc_value_equal(v, &back)) {
        fprintf(stderr, "no round trip: %s (%s)\n", text, why);
        abort();
    }
    char *again = mc_value_to_json(t, &back);
    if (!again || strcmp(again, text))
        abort();
    free(again);
    free(text);
    mc_value_free(&back);
}

static void fuzz_props(const mc_entity_type_def *t, const char *json, size_t len)
{
    uint16_t *idx;
    mc_value *vals;
    size_t count;
    char why[256] = "";
    if (mc_json_to_props(defs, t, json, len, &idx, &vals, &count, why, sizeof(why)) != 0) {
        refused(why);
        if (idx || vals || count)
            abort();
        return;
    }
    for (size_t i = 0; i < count; i++) {
        if (idx[i] >= t->nprops)
            abort();
        const mc_def_property *p = &t->props[idx[i]];
        mc_value_limits lim = mc_defs_property_limits(defs, p);
        if (!mc_value_check(p->type, &vals[i], &lim, why, sizeof(why)))
            abort();
        round_trip(p->type, &vals[i], &lim);
    }
    mc_json_props_free(idx, vals, count);
}

static void fuzz_args(const mc_def_method *m, const char *json, size_t len)
{
    mc_value args[256], back[256];
    char why[256] = "";
    if (mc_json_to_args(defs, m, json, len, args, why, sizeof(why)) != 0) {
        refused(why);
        for (size_t i = 0; i < m->nargs; i++)
            if (args[i].kind != 0 || args[i].as.list.items)
                abort(); /* nothing left allocated */
        return;
    }
    char *text = mc_json_from_values(m->args, m->nargs, args);
    if (!text || mc_json_to_args(defs, m, text, strlen(text), back, why, sizeof(why)) != 0)
        abort();
    mc_value_limits lim = mc_defs_value_limits(defs);
    for (size_t i = 0; i < m->nargs; i++) {
        if (!mc_value_equal(&args[i], &back[i]))
            abort();
        round_trip(m->args[i].type, &args[i], &lim);
        mc_value_free(&args[i]);
        mc_value_free(&back[i]);
    }
    free(text);
}

static void fuzz_alias(const mc_def_type *t, const char *json, size_t len)
{
    mc_value v;
    char why[256] = "";
    mc_value_limits lim = mc_defs_value_limits(defs);
    if (mc_value_from_json(t, json, len, &lim, &v, why, sizeof(why)) != 0) {
        refused(why);
        if (v.kind != 0 || v.as.list.items)
            abort();
        return;
    }
    round_trip(t, &v, &lim);
    mc_value_free(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mc_log_set_level(MC_LOG_CRITICAL);
    load_once();
    if (size < 1 || ntargets == 0)
        return 0;
    const target *t = &targets[data[0] % ntargets];
    /* a copy of exactly the text, so reading past len is caught */
    char *json = malloc(size - 1 ? size - 1 : 1);
    if (!json)
        return 0;
    memcpy(json, data + 1, size - 1);
    if (t->type)
        fuzz_props(t->type, json, size - 1);
    else if (t->method)
        fuzz_args(t->method, json, size - 1);
    else
        fuzz_alias(t->alias, json, size - 1);
    free(json);
    return 0;
}
