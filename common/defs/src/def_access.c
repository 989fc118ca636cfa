/* Read access to loaded definitions, names, limits, argument encoding. */
#include <stdio.h>
#include <string.h>

#include "defs_internal.h"

const char *mc_defs_digest_hex(const mc_entity_defs *defs)
{
    return defs->digest_hex;
}

const uint8_t *mc_defs_digest(const mc_entity_defs *defs)
{
    return defs->digest;
}

const char *mc_defs_normalised(const mc_entity_defs *defs)
{
    return defs->normalised;
}

size_t mc_defs_type_count(const mc_entity_defs *defs)
{
    return defs->ntypes;
}

const mc_entity_type_def *mc_defs_type(const mc_entity_defs *defs, uint16_t id)
{
    return id < defs->ntypes ? &defs->types[id] : NULL;
}

const mc_entity_type_def *mc_defs_type_by_name(const mc_entity_defs *defs, const char *name)
{
    for (size_t i = 0; i < defs->ntypes; i++)
        if (!strcmp(defs->types[i].name, name))
            return &defs->types[i];
    return NULL;
}

size_t mc_defs_alias_count(const mc_entity_defs *defs)
{
    return defs->naliases;
}

const mc_def_type *mc_defs_alias(const mc_entity_defs *defs, size_t i)
{
    return i < defs->naliases ? defs->aliases[i].type : NULL;
}

const mc_def_type *mc_defs_alias_by_name(const mc_entity_defs *defs, const char *name)
{
    for (size_t i = 0; i < defs->naliases; i++)
        if (!strcmp(defs->aliases[i].name, name))
            return defs->aliases[i].type;
    return NULL;
}

const mc_def_method *mc_defs_method(const mc_entity_type_def *t, mc_part part, uint16_t index)
{
    if ((unsigned)part >= MC_PART_COUNT || index >= t->nmethods[part])
        return NULL;
    return &t->methods[part][index];
}

const mc_def_method *mc_defs_method_by_name(const mc_entity_type_def *t, mc_part part,
                                            const char *name)
{
    if ((unsigned)part >= MC_PART_COUNT)
        return NULL;
    for (size_t i = 0; i < t->nmethods[part]; i++)
        if (!strcmp(t->methods[part][i].name, name))
            return &t->methods[part][i];
    return NULL;
}

const mc_def_method *mc_defs_exposed_method(const mc_entity_type_def *t, mc_part part,
                                            uint16_t exposed_index)
{
    if ((unsigned)part >= MC_PART_COUNT || exposed_index >= t->nexposed[part])
        return NULL;
    return &t->methods[part][t->exposed[part][exposed_index]];
}

const mc_def_property *mc_defs_property_by_name(const mc_entity_type_def *t, const char *name)
{
    for (size_t i = 0; i < t->nprops; i++)
        if (!strcmp(t->props[i].name, name))
            return &t->props[i];
    return NULL;
}

const mc_def_property *mc_defs_part_property(const mc_entity_type_def *t, mc_part part,
                                             uint16_t part_index)
{
    if ((unsigned)part >= MC_PART_COUNT || part_index >= t->nparts_props[part])
        return NULL;
    return &t->props[t->part_props[part][part_index]];
}

const char *mc_part_name(mc_part part)
{
    switch (part) {
    case MC_PART_BASE: return "base";
    case MC_PART_CELL: return "cell";
    case MC_PART_CLIENT: return "client";
    }
    return "?";
}

static const char *const flags_names[] = {
    "CELL_PRIVATE",    "CELL_PUBLIC",         "OTHER_CLIENTS", "OWN_CLIENT",  "BASE",
    "BASE_AND_CLIENT", "CELL_PUBLIC_AND_OWN", "ALL_CLIENTS",   "EDITOR_ONLY",
};

const char *mc_prop_flags_name(mc_prop_flags flags)
{
    return (unsigned)flags <= MC_FLAGS_EDITOR_ONLY ? flags_names[flags] : "?";
}

bool mc_prop_flags_on_part(mc_prop_flags flags, mc_part part)
{
    switch (part) {
    case MC_PART_BASE:
        return flags == MC_FLAGS_BASE || flags == MC_FLAGS_BASE_AND_CLIENT;
    case MC_PART_CELL:
        return flags == MC_FLAGS_CELL_PRIVATE || flags == MC_FLAGS_CELL_PUBLIC ||
               flags == MC_FLAGS_OTHER_CLIENTS || flags == MC_FLAGS_OWN_CLIENT ||
               flags == MC_FLAGS_CELL_PUBLIC_AND_OWN || flags == MC_FLAGS_ALL_CLIENTS;
    case MC_PART_CLIENT:
        return flags == MC_FLAGS_OTHER_CLIENTS || flags == MC_FLAGS_OWN_CLIENT ||
               flags == MC_FLAGS_BASE_AND_CLIENT || flags == MC_FLAGS_CELL_PUBLIC_AND_OWN ||
               flags == MC_FLAGS_ALL_CLIENTS;
    }
    return false;
}

mc_value_limits mc_defs_property_limits(const mc_entity_defs *defs, const mc_def_property *p)
{
    mc_value_limits l = {.max_bytes = p->db_length, .entity_types = defs->ntypes};
    return l;
}

mc_value_limits mc_defs_value_limits(const mc_entity_defs *defs)
{
    mc_value_limits l = {.max_bytes = 0, .entity_types = defs->ntypes};
    return l;
}

static int encode_list(const mc_entity_defs *defs, const mc_def_method *m, const mc_def_arg *as,
                       size_t n, const mc_value *vals, mc_ostream *os, char *why, size_t whylen)
{
    mc_value_limits lim = mc_defs_value_limits(defs);
    size_t start = os->size;
    for (size_t i = 0; i < n; i++) {
        char r[200];
        if (mc_value_encode(as[i].type, &vals[i], &lim, os, r, sizeof(r)) != 0) {
            snprintf(why, whylen, "%s argument %zu%s%s: %s", m->name, i + 1,
                     as[i].name ? " " : "", as[i].name ? as[i].name : "", r);
            if (mc_ostream_ok(os))
                os->size = start;
            return -1;
        }
    }
    return 0;
}

static int decode_list(const mc_entity_defs *defs, const mc_def_method *m, const mc_def_arg *as,
                       size_t n, mc_istream *is, mc_value *vals, char *why, size_t whylen)
{
    mc_value_limits lim = mc_defs_value_limits(defs);
    for (size_t i = 0; i < n; i++)
        memset(&vals[i], 0, sizeof(vals[i]));
    for (size_t i = 0; i < n; i++) {
        char r[200];
        if (mc_value_decode(as[i].type, is, &lim, &vals[i], r, sizeof(r)) != 0) {
            snprintf(why, whylen, "%s argument %zu%s%s: %s", m->name, i + 1,
                     as[i].name ? " " : "", as[i].name ? as[i].name : "", r);
            for (size_t k = 0; k < i; k++)
                mc_value_free(&vals[k]);
            return -1;
        }
    }
    if (mc_istream_remaining(is) != 0) {
        snprintf(why, whylen, "%s: %zu bytes left after the arguments", m->name,
                 mc_istream_remaining(is));
        for (size_t k = 0; k < n; k++)
            mc_value_free(&vals[k]);
        mc_istream_fail(is);
        return -1;
    }
    return 0;
}

int mc_defs_encode_args(const mc_entity_defs *defs, const mc_def_method *m,
                        const mc_value *args, mc_ostream *os, char *why, size_t whylen)
{
    return encode_list(defs, m, m->args, m->nargs, args, os, why, whylen);
}

int mc_defs_decode_args(const mc_entity_defs *defs, const mc_def_method *m, mc_istream *is,
                        mc_value *args, char *why, size_t whylen)
{
    return decode_list(defs, m, m->args, m->nargs, is, args, why, whylen);
}

int mc_defs_encode_returns(const mc_entity_defs *defs, const mc_def_method *m,
                           const mc_value *vals, mc_ostream *os, char *why, size_t whylen)
{
    return encode_list(defs, m, m->returns, m->nreturns, vals, os, why, whylen);
}

int mc_defs_decode_returns(const mc_entity_defs *defs, const mc_def_method *m,
                           mc_istream *is, mc_value *vals, char *why, size_t whylen)
{
    return decode_list(defs, m, m->returns, m->nreturns, is, vals, why, whylen);
}

static uint32_t fnv1a(uint32_t h, const void *data, size_t n)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

uint32_t mc_def_method_signature(const mc_def_method *m)
{
    uint32_t h = 2166136261u;
    h = fnv1a(h, m->name, strlen(m->name) + 1);
    uint8_t b[3] = {(uint8_t)m->part, (uint8_t)m->nargs, (uint8_t)m->nreturns};
    h = fnv1a(h, b, sizeof b);
    for (size_t i = 0; i < m->nargs; i++) {
        uint8_t k = (uint8_t)m->args[i].type->kind;
        h = fnv1a(h, &k, 1);
    }
    for (size_t i = 0; i < m->nreturns; i++) {
        uint8_t k = (uint8_t)(0x80u | m->returns[i].type->kind);
        h = fnv1a(h, &k, 1);
    }
    return h;
}
