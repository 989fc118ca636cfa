/* JSON as a method's arguments and as an entity's initial properties. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/value_json.h"
#include "value_json_internal.h"

_Static_assert(offsetof(mc_def_property, name) == 0, "mc_jlookup reads the name first");

static void free_values(mc_value *vals, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mc_value_free(&vals[i]);
}

static void arg_path(mc_jp *p, const mc_def_method *m, size_t i)
{
    char root[MC_DEFS_MAX_NAME * 2 + 40];
    if (m->args[i].name)
        snprintf(root, sizeof(root), "%s argument %s", m->name, m->args[i].name);
    else
        snprintf(root, sizeof(root), "%s argument #%zu", m->name, i + 1);
    jp_pop(p, 0);
    jp_push_name(p, "", root);
}

/* The elements of the argument array, its '[' consumed; *got counts the parsed ones. */
static int args_body(mc_jp *p, const mc_def_method *m, mc_value *args, size_t *got)
{
    if (jp_peek(p) == ']') {
        p->pos++;
    } else {
        for (;;) {
            if (jp_peek(p) < 0)
                return jp_fail(p, "unterminated argument array");
            if (*got >= m->nargs) {
                jp_pop(p, 0);
                return jp_fail(p, "too many arguments: %s takes %zu", m->name, m->nargs);
            }
            arg_path(p, m, *got);
            if (jv_parse(p, m->args[*got].type, 0, &args[*got]) != 0)
                return -1;
            (*got)++;
            jp_pop(p, 0);
            if (jp_peek(p) == ']') {
                p->pos++;
                break;
            }
            if (jp_expect(p, ',', "',' or ']' after an argument") != 0)
                return -1;
        }
    }
    if (*got < m->nargs)
        return jp_fail(p, "missing arguments: %s takes %zu, got %zu", m->name, m->nargs, *got);
    return jp_end(p);
}

int mc_json_to_args(const mc_entity_defs *defs, const mc_def_method *m, const char *json,
                    size_t len, mc_value *args, char *why, size_t whylen)
{
    mc_value_limits lim = mc_defs_value_limits(defs);
    mc_jp p;
    jp_init(&p, json, len, lim.entity_types, why, whylen);
    for (size_t i = 0; i < m->nargs; i++)
        memset(&args[i], 0, sizeof(args[i]));
    size_t got = 0;
    int rc;
    if (jp_peek(&p) < 0) /* an empty text: no arguments */
        rc = m->nargs ? jp_fail(&p, "missing arguments: %s takes %zu, got none", m->name,
                                m->nargs)
                      : 0;
    else if ((rc = jp_expect(&p, '[', "a JSON array of arguments")) == 0)
        rc = args_body(&p, m, args, &got);
    for (size_t i = 0; rc == 0 && i < m->nargs; i++) {
        char r[200];
        if (!mc_value_check(m->args[i].type, &args[i], &lim, r, sizeof(r))) {
            arg_path(&p, m, i);
            rc = jp_fail_at(&p, 0, "%s", r);
        }
    }
    if (rc != 0)
        free_values(args, got);
    return rc;
}

typedef struct {
    uint16_t *indices;
    mc_value *values;
    size_t count;
    bool *seen; /* per property index */
    mc_jlookup names;
} props_out;

/* One "name": value member of the property object. */
static int prop_member(mc_jp *p, const mc_entity_defs *defs, const mc_entity_type_def *t,
                       props_out *o)
{
    char *key, show[64];
    size_t n, at = jp_here(p);
    if (jp_string(p, &key, &n) != 0)
        return -1;
    size_t pi = jl_find(&o->names, key);
    const mc_def_property *prop = pi < t->nprops ? &t->props[pi] : NULL;
    int rc = 0;
    if (!prop)
        rc = jp_fail_at(p, at, "%s has no property \"%s\"", t->name,
                        jp_show(show, sizeof(show), key, n));
    else if (prop->flags == MC_FLAGS_EDITOR_ONLY)
        rc = jp_fail_at(p, at, "property %s is EDITOR_ONLY", prop->name);
    else if (o->seen[prop->index])
        rc = jp_fail_at(p, at, "property %s given twice", prop->name);
    free(key);
    if (rc != 0 || jp_expect(p, ':', "':'") != 0)
        return -1;
    o->seen[prop->index] = true;
    mc_value_limits lim = mc_defs_property_limits(defs, prop);
    jp_push_name(p, "property ", prop->name);
    mc_value *v = &o->values[o->count];
    char r[200];
    if (jv_parse(p, prop->type, lim.max_bytes, v) != 0)
        return -1;
    if (!mc_value_check(prop->type, v, &lim, r, sizeof(r))) {
        mc_value_free(v);
        return jp_fail_at(p, at, "%s", r);
    }
    jp_pop(p, 0);
    o->indices[o->count++] = prop->index;
    return 0;
}

static int props_body(mc_jp *p, const mc_entity_defs *defs, const mc_entity_type_def *t,
                      props_out *o)
{
    if (jp_expect(p, '{', "a JSON object of properties") != 0)
        return -1;
    if (jp_peek(p) == '}') {
        p->pos++;
        return jp_end(p);
    }
    for (;;) {
        if (prop_member(p, defs, t, o) != 0)
            return -1;
        if (jp_peek(p) == '}') {
            p->pos++;
            return jp_end(p);
        }
        if (jp_expect(p, ',', "',' or '}'") != 0)
            return -1;
    }
}

int mc_json_to_props(const mc_entity_defs *defs, const mc_entity_type_def *t, const char *json,
                     size_t len, uint16_t **indices, mc_value **values, size_t *count,
                     char *why, size_t whylen)
{
    *indices = NULL;
    *values = NULL;
    *count = 0;
    mc_jp p;
    jp_init(&p, json, len, mc_defs_value_limits(defs).entity_types, why, whylen);
    if (jp_peek(&p) < 0)
        return 0; /* an empty text: no properties */
    size_t n = t->nprops ? t->nprops : 1;
    props_out o = {.indices = calloc(n, sizeof(uint16_t)), .values = calloc(n, sizeof(mc_value)),
                   .seen = calloc(n, sizeof(bool))};
    jl_init(&o.names, t->props, sizeof(t->props[0]), t->nprops);
    int rc = o.indices && o.values && o.seen ? props_body(&p, defs, t, &o)
                                             : jp_fail(&p, "out of memory");
    jl_free(&o.names);
    free(o.seen);
    if (rc != 0) {
        mc_json_props_free(o.indices, o.values, o.count);
        return -1;
    }
    *indices = o.indices;
    *values = o.values;
    *count = o.count;
    return 0;
}

void mc_json_props_free(uint16_t *indices, mc_value *values, size_t count)
{
    if (values)
        free_values(values, count);
    free(values);
    free(indices);
}
