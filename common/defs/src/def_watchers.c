/* Watchers describing the loaded definitions (read-only). */
#include <stdio.h>

#include "defs_internal.h"

static void get_type_count(void *ctx, mc_watch_value *out)
{
    out->as.u = ((const mc_entity_defs *)ctx)->ntypes;
}

static void get_alias_count(void *ctx, mc_watch_value *out)
{
    out->as.u = ((const mc_entity_defs *)ctx)->naliases;
}

#define TYPE_GETTER(fn, expr)                                                              \
    static void fn(void *ctx, mc_watch_value *out)                                         \
    {                                                                                      \
        const mc_entity_type_def *t = ctx;                                                 \
        out->as.u = (expr);                                                                \
    }

TYPE_GETTER(get_id, t->id)
TYPE_GETTER(get_props, t->nprops)
TYPE_GETTER(get_base, t->nmethods[MC_PART_BASE])
TYPE_GETTER(get_cell, t->nmethods[MC_PART_CELL])
TYPE_GETTER(get_client, t->nmethods[MC_PART_CLIENT])
TYPE_GETTER(get_exp_base, t->nexposed[MC_PART_BASE])
TYPE_GETTER(get_exp_cell, t->nexposed[MC_PART_CELL])

static void get_client_server(void *ctx, mc_watch_value *out)
{
    out->as.b = ((const mc_entity_type_def *)ctx)->client_server;
}

mc_watch_status mc_defs_add_watchers(const mc_entity_defs *defs, mc_watchers *w, const char *dir)
{
    char path[MC_WATCH_MAX_PATH];
    mc_watch_status st;
#define ADD(fmt_path, type, getter, ctx)                                                   \
    do {                                                                                   \
        snprintf(path, sizeof(path), "%s/" fmt_path, dir);                                 \
        st = mc_watch_add(w, path, type, MC_WATCH_READ_ONLY, getter, NULL, (void *)(ctx)); \
        if (st != MC_WATCH_OK)                                                             \
            return st;                                                                     \
    } while (0)
    snprintf(path, sizeof(path), "%s/digest", dir);
    st = mc_watch_add_const_string(w, path, defs->digest_hex);
    if (st != MC_WATCH_OK)
        return st;
    ADD("typeCount", MC_WATCH_UINT, get_type_count, defs);
    ADD("aliasCount", MC_WATCH_UINT, get_alias_count, defs);
    for (size_t i = 0; i < defs->ntypes; i++) {
        const mc_entity_type_def *t = &defs->types[i];
        static const struct {
            const char *name;
            mc_watch_get_fn get;
        } leaves[] = {
            {"id", get_id},           {"properties", get_props},
            {"baseMethods", get_base}, {"cellMethods", get_cell},
            {"clientMethods", get_client}, {"exposedBase", get_exp_base},
            {"exposedCell", get_exp_cell},
        };
        for (size_t k = 0; k < sizeof(leaves) / sizeof(leaves[0]); k++) {
            snprintf(path, sizeof(path), "%s/types/%s/%s", dir, t->name, leaves[k].name);
            st = mc_watch_add(w, path, MC_WATCH_UINT, MC_WATCH_READ_ONLY, leaves[k].get, NULL,
                              (void *)t);
            if (st != MC_WATCH_OK)
                return st;
        }
        snprintf(path, sizeof(path), "%s/types/%s/clientServer", dir, t->name);
        st = mc_watch_add(w, path, MC_WATCH_BOOL, MC_WATCH_READ_ONLY, get_client_server, NULL,
                          (void *)t);
        if (st != MC_WATCH_OK)
            return st;
    }
#undef ADD
    return MC_WATCH_OK;
}
