/* Property values of a part struct without knowing its C layout: through the generated
 * encode / decode of the whole part (props_encode / props_decode), one value at a time. */
#include "engine_internal.h"
#include "common/value_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decode the part's properties (in part order) into values[nparts]; 0 or -1. */
static int part_values(mc_engine *e, uint16_t type, mc_part part, const void *props,
                       mc_value *values, size_t n, char *why, size_t whylen)
{
    const mc_entity_type_def *td = mc_defs_type(e->defs, type);
    const mc_game_type *gt = &e->module->types[type];
    mc_ostream os;
    mc_ostream_init(&os);
    if (gt->props_encode(e->defs, part, props, false, &os, why, whylen) != MC_CALL_OK) {
        mc_ostream_free(&os);
        return -1;
    }
    mc_istream is;
    mc_istream_init(&is, os.data, os.size);
    size_t i = 0;
    for (; i < n; i++) {
        const mc_def_property *p = mc_defs_part_property(td, part, (uint16_t)i);
        mc_value_limits lim = mc_defs_property_limits(e->defs, p);
        if (mc_value_decode(p->type, &is, &lim, &values[i], why, whylen) != 0)
            break;
    }
    mc_ostream_free(&os);
    if (i == n)
        return 0;
    while (i > 0)
        mc_value_free(&values[--i]);
    return -1;
}

int mc_engine_apply_props(mc_engine *e, uint16_t type, mc_part part, void *props,
                          const uint16_t *indices, const mc_value *values, size_t n, char *why,
                          size_t whylen)
{
    const mc_entity_type_def *td = mc_defs_type(e->defs, type);
    size_t count = td->nparts_props[part];
    bool any = false;
    for (size_t k = 0; k < n; k++)
        if (indices[k] < td->nprops && td->props[indices[k]].part_index[part] >= 0)
            any = true;
    if (!any || count == 0)
        return 0;
    mc_value *cur = calloc(count, sizeof *cur);
    if (!cur) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    int rc = part_values(e, type, part, props, cur, count, why, whylen);
    mc_ostream os;
    mc_ostream_init(&os);
    for (size_t i = 0; rc == 0 && i < count; i++) {
        const mc_def_property *p = mc_defs_part_property(td, part, (uint16_t)i);
        const mc_value *v = &cur[i];
        for (size_t k = 0; k < n; k++)
            if (indices[k] == p->index)
                v = &values[k];
        mc_value_limits lim = mc_defs_property_limits(e->defs, p);
        char r[160];
        if (mc_value_encode(p->type, v, &lim, &os, r, sizeof r) != 0) {
            snprintf(why, whylen, "property %s: %s", p->name, r);
            rc = -1;
        }
    }
    if (rc == 0) {
        mc_istream is;
        mc_istream_init(&is, os.data, os.size);
        if (e->module->types[type].props_decode(e->defs, part, props, false, &is, why,
                                                whylen) != MC_CALL_OK)
            rc = -1;
    }
    mc_ostream_free(&os);
    if (cur && rc == 0)
        for (size_t i = 0; i < count; i++)
            mc_value_free(&cur[i]);
    free(cur);
    return rc;
}

int mc_engine_props_by_name(mc_engine *e, const mc_entity_type_def *td,
                            const mc_prop_init *props, size_t n, uint16_t **indices,
                            mc_value **values, char *why, size_t whylen)
{
    *indices = NULL;
    *values = NULL;
    if (n == 0)
        return 0;
    uint16_t *idx = calloc(n, sizeof *idx);
    mc_value *vals = calloc(n, sizeof *vals);
    if (!idx || !vals) {
        free(idx);
        free(vals);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const mc_def_property *p = props[i].name ? mc_defs_property_by_name(td, props[i].name)
                                                 : NULL;
        if (!p || p->flags == MC_FLAGS_EDITOR_ONLY) {
            snprintf(why, whylen, "%s has no property '%s'", td->name,
                     props[i].name ? props[i].name : "(null)");
            goto bad;
        }
        for (size_t k = 0; k < i; k++)
            if (idx[k] == p->index) {
                snprintf(why, whylen, "property %s given twice", p->name);
                goto bad;
            }
        mc_value_limits lim = mc_defs_property_limits(e->defs, p);
        char r[160];
        if (!props[i].value || !mc_value_check(p->type, props[i].value, &lim, r, sizeof r)) {
            snprintf(why, whylen, "property %s: %s", p->name, props[i].value ? r : "no value");
            goto bad;
        }
        if (mc_value_copy(&vals[i], props[i].value) != 0) {
            snprintf(why, whylen, "out of memory");
            goto bad;
        }
        idx[i] = p->index;
    }
    *indices = idx;
    *values = vals;
    return 0;
bad:
    mc_json_props_free(idx, vals, n);
    return -1;
}

/* The text of one property of an entity (JSON form), for watchers; heap or NULL. */
char *engine_property_text(mc_engine *e, const mc_entity *ent, mc_part part, const void *props,
                           uint16_t part_index)
{
    const mc_entity_type_def *td = ent->td;
    size_t count = td->nparts_props[part];
    if (part_index >= count || !props)
        return NULL;
    mc_value *cur = calloc(count, sizeof *cur);
    char why[160];
    if (!cur || part_values(e, ent->type, part, props, cur, count, why, sizeof why) != 0) {
        free(cur);
        return NULL;
    }
    const mc_def_property *p = mc_defs_part_property(td, part, part_index);
    char *text = mc_value_to_json(p->type, &cur[part_index]);
    for (size_t i = 0; i < count; i++)
        mc_value_free(&cur[i]);
    free(cur);
    return text;
}
