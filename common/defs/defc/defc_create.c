/* defc: typed entity creation. Per entity type T: the T_new struct of the properties a new
 * T starts with (its base and cell parts), and create_T_locally / _anywhere / _remotely and
 * load_T[_anywhere][_by_name] over the engine API (common/entity_api.h), so game code never
 * names a type by a string and cannot pass a property the type does not have. */
#include <string.h>

#include "defc.h"

static bool has_identifier(const mc_entity_type_def *t)
{
    for (size_t i = 0; i < t->nprops; i++)
        if (t->props[i].identifier)
            return true;
    return false;
}

/* Base and cell properties: what a creation may set. */
static size_t creatable(const mc_entity_type_def *t)
{
    return t->nparts_props[MC_PART_BASE] + t->nparts_props[MC_PART_CELL];
}

void defc_create_names(const mc_entity_type_def *t, defc_name_fn fn, void *ud)
{
    static const char *const fmts[] = {
        "%s_new", "init_%s_new", "free_%s_new", "create_%s_locally", "create_%s_anywhere",
        "create_%s_remotely", "load_%s", "load_%s_anywhere", "defc_props_%s",
    };
    char id[256];
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        snprintf(id, sizeof id, fmts[i], t->name);
        fn(ud, id);
    }
    if (has_identifier(t)) {
        snprintf(id, sizeof id, "load_%s_by_name", t->name);
        fn(ud, id);
        snprintf(id, sizeof id, "load_%s_anywhere_by_name", t->name);
        fn(ud, id);
    }
}

void defc_emit_create_decls(FILE *f, const mc_entity_type_def *t)
{
    const char *T = t->name;
    fprintf(f, "\n/* Creating %s entities (docs/ENTITIES.md, \"Creating entities\"): the properties one "
               "starts with,\n * every one at its default after init_%s_new; set what differs "
               "(strings with mc_str_set),\n * create, then free_%s_new. NULL props: every "
               "default. Statuses and callbacks as\n * mc_createBaseLocally & co. */\n",
            T, T, T);
    fprintf(f, "typedef struct {\n    %s_base base;\n    %s_cell cell; /* its cellData */\n} "
               "%s_new;\n", T, T, T);
    fprintf(f, "int init_%s_new(const mc_call_ctx *call, %s_new *props);\n", T, T);
    fprintf(f, "void free_%s_new(%s_new *props);\n", T, T);
    fprintf(f, "int create_%s_locally(const mc_call_ctx *call, const %s_new *props, "
               "mc_mailbox_ref *out);\n", T, T);
    fprintf(f, "int create_%s_anywhere(const mc_call_ctx *call, const %s_new *props, "
               "mc_create_fn fn, void *ud);\n", T, T);
    fprintf(f, "int create_%s_remotely(const mc_call_ctx *call, const mc_mailbox_ref *where,\n"
               "    const %s_new *props, mc_create_fn fn, void *ud);\n", T, T);
    fprintf(f, "/* Loading %s entities from the database, here or on the least-loaded baseapp "
               "(mc_createBase[Anywhere]FromDB%s). */\n",
            T, has_identifier(t) ? "[ByName]" : "");
    fprintf(f, "int load_%s(const mc_call_ctx *call, int64_t dbid, mc_load_fn fn, void *ud);\n",
            T);
    fprintf(f, "int load_%s_anywhere(const mc_call_ctx *call, int64_t dbid, mc_load_fn fn, "
               "void *ud);\n", T);
    if (has_identifier(t)) {
        fprintf(f, "int load_%s_by_name(const mc_call_ctx *call, const char *name, mc_load_fn "
                   "fn, void *ud);\n", T);
        fprintf(f, "int load_%s_anywhere_by_name(const mc_call_ctx *call, const char *name,\n"
                   "    mc_load_fn fn, void *ud);\n", T);
    }
}

/* defc_props_T: the properties of a T_new as (name, value view) pairs. */
static void emit_props(FILE *f, const mc_entity_type_def *t)
{
    char cn[80], e[128];
    fprintf(f, "static size_t defc_props_%s(const %s_new *p, mc_value *v, mc_prop_init *out)\n"
               "{\n    size_t n = 0;\n", t->name, t->name);
    for (int part = MC_PART_BASE; part <= MC_PART_CELL; part++)
        for (size_t i = 0; i < t->nprops; i++) {
            const mc_def_property *p = &t->props[i];
            if (p->part_index[part] < 0)
                continue;
            snprintf(e, sizeof e, "p->%s.%s", part == MC_PART_BASE ? "base" : "cell",
                     defc_cname(p->name, cn, sizeof cn));
            fprintf(f, "    v[n] = ");
            defc_emit_view(f, p->type->kind, e, false);
            fprintf(f, ";\n    out[n] = (mc_prop_init){\"%s\", &v[n]};\n    n++;\n", p->name);
        }
    if (!creatable(t))
        fprintf(f, "    (void)p;\n    (void)v;\n    (void)out;\n");
    fprintf(f, "    return n;\n}\n\n");
}

static void emit_create(FILE *f, const mc_entity_type_def *t, const char *fn, const char *params,
                        const char *call_fmt)
{
    size_t n = creatable(t);
    fprintf(f, "int create_%s_%s(const mc_call_ctx *call, %sconst %s_new *props, %s)\n{\n",
            t->name, fn, strcmp(fn, "remotely") ? "" : "const mc_mailbox_ref *where, ", t->name,
            params);
    fprintf(f, "    mc_value v[%zu];\n    mc_prop_init init[%zu];\n"
               "    size_t n = props ? defc_props_%s(props, v, init) : 0;\n    return ",
            n ? n : 1, n ? n : 1, t->name);
    fprintf(f, call_fmt, t->name);
    fprintf(f, ";\n}\n\n");
}

void defc_emit_create_defs(FILE *f, const mc_entity_type_def *t)
{
    const char *T = t->name;
    fprintf(f, "int init_%s_new(const mc_call_ctx *call, %s_new *props)\n{\n"
               "    memset(props, 0, sizeof *props);\n"
               "    if (init_%s_base(call->defs, &props->base) != 0)\n"
               "        return MC_CALL_ERR_BUSY;\n"
               "    if (init_%s_cell(call->defs, &props->cell) != 0) {\n"
               "        free_%s_base(&props->base);\n        return MC_CALL_ERR_BUSY;\n    }\n"
               "    return MC_CALL_OK;\n}\n\n", T, T, T, T, T);
    fprintf(f, "void free_%s_new(%s_new *props)\n{\n    free_%s_base(&props->base);\n"
               "    free_%s_cell(&props->cell);\n}\n\n", T, T, T, T);
    emit_props(f, t);
    emit_create(f, t, "locally", "mc_mailbox_ref *out",
                "mc_createBaseLocally(call, \"%s\", init, n, out)");
    emit_create(f, t, "anywhere", "mc_create_fn fn, void *ud",
                "mc_createBaseAnywhere(call, \"%s\", init, n, fn, ud)");
    emit_create(f, t, "remotely", "mc_create_fn fn, void *ud",
                "mc_createBaseRemotely(call, where, \"%s\", init, n, fn, ud)");
    fprintf(f, "int load_%s(const mc_call_ctx *call, int64_t dbid, mc_load_fn fn, void *ud)\n{\n"
               "    return mc_createBaseFromDB(call, \"%s\", dbid, fn, ud);\n}\n\n", T, T);
    fprintf(f, "int load_%s_anywhere(const mc_call_ctx *call, int64_t dbid, mc_load_fn fn, "
               "void *ud)\n{\n    return mc_createBaseAnywhereFromDB(call, \"%s\", dbid, fn, ud);"
               "\n}\n\n", T, T);
    if (has_identifier(t)) {
        fprintf(f, "int load_%s_by_name(const mc_call_ctx *call, const char *name, mc_load_fn "
                   "fn, void *ud)\n{\n    return mc_createBaseFromDBByName(call, \"%s\", name, "
                   "fn, ud);\n}\n\n", T, T);
        fprintf(f, "int load_%s_anywhere_by_name(const mc_call_ctx *call, const char *name,\n"
                   "    mc_load_fn fn, void *ud)\n{\n    return "
                   "mc_createBaseAnywhereFromDBByName(call, \"%s\", name, fn, ud);\n}\n\n", T, T);
    }
}
