/* defc: typed accessors of container values (FIXED_DICT, ARRAY, TUPLE).
 *
 * Every container type gets a C name: an alias its alias name (ITEM, INVENTORY), an anonymous
 * type the name of what holds it (a property: <Type>_<prop>; a method argument or return
 * value: <Type>_<part>_<method>_<arg>; an element: <name>_item; a field: <name>_<field>).
 * For a name N the generated functions work on an mc_value of that shape and return an
 * mc_call_status (common/gen_access.h says which):
 *
 *   FIXED_DICT  N_init(v)                         a present value, every field at its default
 *               N_get_<f>(d, &out)                the field, as the C type handlers get
 *               N_set_<f>(d, x)                   numbers, vectors, mailboxes, strings, BLOBs
 *               N_edit_<f>(d, &ptr)               a container field, to change in place
 *               N_is_none(d), N_set_none(d)       with AllowNone; a change makes it present
 *   ARRAY/TUPLE N_init(v), N_count(a)
 *               N_at(a, i, &out)                  element i, bounds-checked
 *               N_set(a, i, x) / N_edit(a, i, &p) element i, to change
 *               N_append(a, x) / N_append(a, &p)  a new last element (p: at its default)
 *               N_remove(a, i), N_clear(a)        (not for a fixed <size>)
 */
#include <stdlib.h>
#include <string.h>

#include "defc.h"

#define NAME_MAX_LEN 400

static bool is_container(const mc_def_type *t)
{
    return t->kind == MC_TYPE_ARRAY || t->kind == MC_TYPE_TUPLE || t->kind == MC_TYPE_FIXED_DICT;
}

/* The C name of a child container of container `name`: its alias, or name_item /
 * name_<field>. False when the child is not a container. */
static bool child_name(const mc_def_type *child, const char *name, const char *part,
                       char *out, size_t len)
{
    if (!is_container(child))
        return false;
    char cn[80];
    if (child->alias)
        snprintf(out, len, "%s", child->alias);
    else
        snprintf(out, len, "%s_%s", name, defc_cname(part, cn, sizeof cn));
    return true;
}

/* ---- names (for defc's collision check) ---------------------------------------------- */

static void names_rec(const mc_def_type *t, const char *name, defc_name_fn fn, void *ud)
{
    char id[NAME_MAX_LEN + 100], child[NAME_MAX_LEN], cn[80];
#define NAME(...) (snprintf(id, sizeof id, __VA_ARGS__), fn(ud, id))
    NAME("%s_init", name);
    if (t->kind == MC_TYPE_FIXED_DICT) {
        if (t->allow_none) {
            NAME("%s_is_none", name);
            NAME("%s_set_none", name);
        }
        for (size_t i = 0; i < t->nfields; i++) {
            const mc_def_field *f = &t->fields[i];
            defc_cname(f->name, cn, sizeof cn);
            NAME("%s_get_%s", name, cn);
            NAME(is_container(f->type) ? "%s_edit_%s" : "%s_set_%s", name, cn);
            if (child_name(f->type, name, f->name, child, sizeof child) && !f->type->alias)
                names_rec(f->type, child, fn, ud);
        }
        return;
    }
    NAME("%s_count", name);
    NAME("%s_at", name);
    NAME(is_container(t->of) ? "%s_edit" : "%s_set", name);
    if (!t->size) {
        NAME("%s_append", name);
        NAME("%s_remove", name);
        NAME("%s_clear", name);
    }
    if (child_name(t->of, name, "item", child, sizeof child) && !t->of->alias)
        names_rec(t->of, child, fn, ud);
#undef NAME
}

void defc_access_names(const mc_def_type *t, const char *name, defc_name_fn fn, void *ud)
{
    if (is_container(t))
        names_rec(t, name, fn, ud);
}

/* ---- declarations --------------------------------------------------------------------- */

/* The getter's out parameter type and the setter's value parameters for a field or
 * element of kind k. */
static const char *get_out(mc_type_kind k)
{
    if (defc_is_str(k))
        return "const char **out";
    if (defc_is_generic(k))
        return "const mc_value **out";
    return NULL; /* scalar: "<ctype> *out" */
}

static void set_params(FILE *f, mc_type_kind k)
{
    if (defc_is_str(k))
        fprintf(f, "const char *value");
    else if (k == MC_TYPE_BLOB)
        fprintf(f, "const void *data, size_t len");
    else
        fprintf(f, "%s value", defc_scalar_ctype(k));
}

static void out_param(FILE *f, mc_type_kind k)
{
    const char *o = get_out(k);
    if (o)
        fprintf(f, "%s", o);
    else
        fprintf(f, "%s *out", defc_scalar_ctype(k));
}

static void decls_rec(FILE *f, const mc_def_type *t, const char *name)
{
    char child[NAME_MAX_LEN], cn[80], *d = mc_def_type_describe(t);
    fprintf(f, "/* %s: %s */\nint %s_init(mc_value *v);\n", name, d ? d : "?", name);
    free(d);
    if (t->kind == MC_TYPE_FIXED_DICT) {
        if (t->allow_none)
            fprintf(f, "bool %s_is_none(const mc_value *d);\nint %s_set_none(mc_value *d);\n",
                    name, name);
        for (size_t i = 0; i < t->nfields; i++) {
            const mc_def_field *fl = &t->fields[i];
            mc_type_kind k = fl->type->kind;
            defc_cname(fl->name, cn, sizeof cn);
            fprintf(f, "int %s_get_%s(const mc_value *d, ", name, cn);
            out_param(f, k);
            fprintf(f, ");\n");
            if (is_container(fl->type))
                fprintf(f, "int %s_edit_%s(mc_value *d, mc_value **out);\n", name, cn);
            else {
                fprintf(f, "int %s_set_%s(mc_value *d, ", name, cn);
                set_params(f, k);
                fprintf(f, ");\n");
            }
        }
        for (size_t i = 0; i < t->nfields; i++)
            if (child_name(t->fields[i].type, name, t->fields[i].name, child, sizeof child) &&
                !t->fields[i].type->alias)
                decls_rec(f, t->fields[i].type, child);
        return;
    }
    mc_type_kind k = t->of->kind;
    fprintf(f, "uint32_t %s_count(const mc_value *a);\nint %s_at(const mc_value *a, uint32_t i, ",
            name, name);
    out_param(f, k);
    fprintf(f, ");\n");
    if (is_container(t->of)) {
        fprintf(f, "int %s_edit(mc_value *a, uint32_t i, mc_value **out);\n", name);
        if (!t->size)
            fprintf(f, "int %s_append(mc_value *a, mc_value **out);\n", name);
    } else {
        fprintf(f, "int %s_set(mc_value *a, uint32_t i, ", name);
        set_params(f, k);
        fprintf(f, ");\n");
        if (!t->size) {
            fprintf(f, "int %s_append(mc_value *a, ", name);
            set_params(f, k);
            fprintf(f, ");\n");
        }
    }
    if (!t->size)
        fprintf(f, "int %s_remove(mc_value *a, uint32_t i);\nint %s_clear(mc_value *a);\n", name,
                name);
    if (child_name(t->of, name, "item", child, sizeof child) && !t->of->alias)
        decls_rec(f, t->of, child);
}

void defc_emit_access_decls(FILE *f, const mc_def_type *t, const char *name)
{
    if (is_container(t))
        decls_rec(f, t, name);
}

/* ---- definitions ---------------------------------------------------------------------- */

/* Make the zeroed value *lv the default of type t (a child container's default: its
 * <child>_init, or None for a dict with AllowNone); on failure `goto fail`. Whether it can
 * fail. */
static bool emit_default(FILE *f, const char *ind, const mc_def_type *t, const char *cname,
                         const char *lv)
{
    const char *kn = mc_type_kind_name(t->kind);
    if (t->kind == MC_TYPE_FIXED_DICT && t->allow_none) {
        fprintf(f, "%s(%s)->kind = MC_TYPE_FIXED_DICT;\n%s(%s)->as.list.none = true;\n", ind,
                lv, ind, lv);
        return false;
    }
    if (is_container(t)) {
        fprintf(f, "%sif (%s_init(%s) != MC_CALL_OK)\n%s    goto fail;\n", ind, cname, lv, ind);
        return true;
    }
    if (defc_is_str(t->kind) || t->kind == MC_TYPE_BLOB) {
        fprintf(f, "%sif (mc_value_set_bytes(%s, MC_TYPE_%s, \"\", 0) != 0)\n%s    goto fail;\n",
                ind, lv, kn, ind);
        return true;
    }
    fprintf(f, "%s(%s)->kind = MC_TYPE_%s;\n", ind, lv, kn);
    return false;
}

/* *out = the C value of the scalar mc_value pointer v. */
static void emit_scalar_get(FILE *f, mc_type_kind k, const char *v)
{
    const char *ct = defc_scalar_ctype(k);
    if (k <= MC_TYPE_INT64)
        fprintf(f, "        *out = (%s)%s->as.i;\n", ct, v);
    else if (k <= MC_TYPE_UINT64)
        fprintf(f, "        *out = (%s)%s->as.u;\n", ct, v);
    else if (k == MC_TYPE_FLOAT32 || k == MC_TYPE_FLOAT64)
        fprintf(f, "        *out = (%s)%s->as.f;\n", ct, v);
    else if (k == MC_TYPE_VECTOR2)
        fprintf(f, "        *out = (mc_vector2){%s->as.vec[0], %s->as.vec[1]};\n", v, v);
    else if (k == MC_TYPE_VECTOR3)
        fprintf(f, "        *out = (mc_vector3){%s->as.vec[0], %s->as.vec[1], %s->as.vec[2]};\n",
                v, v, v);
    else if (k == MC_TYPE_VECTOR4)
        fprintf(f, "        *out = (mc_vector4){%s->as.vec[0], %s->as.vec[1], %s->as.vec[2], "
                   "%s->as.vec[3]};\n", v, v, v, v);
    else
        fprintf(f, "        *out = %s->as.mailbox;\n", v);
}

/* The out of a getter from the found mc_value pointer v. */
static void emit_get(FILE *f, mc_type_kind k, const char *v)
{
    if (defc_is_str(k))
        fprintf(f, "        *out = %s->as.bytes.data ? %s->as.bytes.data : \"\";\n", v, v);
    else if (defc_is_generic(k))
        fprintf(f, "        *out = %s;\n", v);
    else
        emit_scalar_get(f, k, v);
}

/* Store `value` (or data, len) into the mc_value pointer v of kind k; sets rc. */
static void emit_set(FILE *f, mc_type_kind k, const char *v)
{
    const char *kn = mc_type_kind_name(k);
    if (defc_is_str(k))
        fprintf(f, "        rc = mc_gen_set_bytes(%s, MC_TYPE_%s, value ? value : \"\", value ? "
                   "strlen(value) : 0);\n", v, kn);
    else if (k == MC_TYPE_BLOB)
        fprintf(f, "        rc = mc_gen_set_bytes(%s, MC_TYPE_BLOB, data, len);\n", v);
    else if (k <= MC_TYPE_INT64)
        fprintf(f, "        %s->as.i = value;\n", v);
    else if (k <= MC_TYPE_UINT64)
        fprintf(f, "        %s->as.u = value;\n", v);
    else if (k == MC_TYPE_FLOAT32 || k == MC_TYPE_FLOAT64)
        fprintf(f, "        %s->as.f = value;\n", v);
    else if (k == MC_TYPE_MAILBOX)
        fprintf(f, "        %s->as.mailbox = value;\n", v);
    else {
        static const char *const comp[] = {"x", "y", "z", "w"};
        int n = k == MC_TYPE_VECTOR2 ? 2 : k == MC_TYPE_VECTOR3 ? 3 : 4;
        for (int i = 0; i < n; i++)
            fprintf(f, "        %s->as.vec[%d] = value.%s;\n", v, i, comp[i]);
    }
}

static void emit_init(FILE *f, const mc_def_type *t, const char *name)
{
    char child[NAME_MAX_LEN];
    fprintf(f, "int %s_init(mc_value *v)\n{\n", name);
    bool can_fail = false;
    if (t->kind == MC_TYPE_FIXED_DICT) {
        fprintf(f, "    if (mc_gen_dict_alloc(v, %zuu) != MC_CALL_OK)\n        return "
                   "MC_CALL_ERR_BUSY;\n", t->nfields);
        for (size_t i = 0; i < t->nfields; i++) {
            char lv[64];
            snprintf(lv, sizeof lv, "&v->as.list.items[%zu]", i);
            const mc_def_type *ft = t->fields[i].type;
            child_name(ft, name, t->fields[i].name, child, sizeof child);
            can_fail |= emit_default(f, "    ", ft, child, lv);
        }
    } else {
        fprintf(f, "    if (mc_gen_list_alloc(v, MC_TYPE_%s, %uu) != MC_CALL_OK)\n        return "
                   "MC_CALL_ERR_BUSY;\n", mc_type_kind_name(t->kind), (unsigned)t->size);
        if (t->size) {
            child_name(t->of, name, "item", child, sizeof child);
            fprintf(f, "    for (uint32_t i = 0; i < %uu; i++) {\n", (unsigned)t->size);
            can_fail = emit_default(f, "        ", t->of, child, "&v->as.list.items[i]");
            fprintf(f, "    }\n");
        }
    }
    fprintf(f, "    return MC_CALL_OK;\n");
    if (can_fail)
        fprintf(f, "fail:\n    mc_value_free(v);\n    return MC_CALL_ERR_BUSY;\n");
    fprintf(f, "}\n\n");
}

static void emit_dict(FILE *f, const mc_def_type *t, const char *name)
{
    char cn[80];
    size_t nf = t->nfields;
    if (t->allow_none)
        fprintf(f, "bool %s_is_none(const mc_value *d)\n{\n    return mc_gen_is_none(d);\n}\n\n"
                   "int %s_set_none(mc_value *d)\n{\n    return mc_gen_set_none(d, %zuu);\n}\n\n",
                name, name, nf);
    for (size_t i = 0; i < nf; i++) {
        const mc_def_field *fl = &t->fields[i];
        mc_type_kind k = fl->type->kind;
        const char *kn = mc_type_kind_name(k);
        defc_cname(fl->name, cn, sizeof cn);
        fprintf(f, "int %s_get_%s(const mc_value *d, ", name, cn);
        out_param(f, k);
        fprintf(f, ")\n{\n    const mc_value *f;\n    int rc = mc_gen_field(d, %zuu, %zuu, "
                   "MC_TYPE_%s, &f);\n    if (rc == MC_CALL_OK) {\n", nf, i, kn);
        emit_get(f, k, "f");
        fprintf(f, "    }\n    return rc;\n}\n\n");
        if (is_container(fl->type)) {
            fprintf(f, "int %s_edit_%s(mc_value *d, mc_value **out)\n{\n    return "
                       "mc_gen_field_mut(d, %zuu, %zuu, MC_TYPE_%s, %s_init, out);\n}\n\n",
                    name, cn, nf, i, kn, name);
            continue;
        }
        fprintf(f, "int %s_set_%s(mc_value *d, ", name, cn);
        set_params(f, k);
        fprintf(f, ")\n{\n    mc_value *f;\n    int rc = mc_gen_field_mut(d, %zuu, %zuu, "
                   "MC_TYPE_%s, %s_init, &f);\n    if (rc == MC_CALL_OK) {\n", nf, i, kn, name);
        emit_set(f, k, "f");
        fprintf(f, "    }\n    return rc;\n}\n\n");
    }
}

static void emit_list(FILE *f, const mc_def_type *t, const char *name)
{
    char child[NAME_MAX_LEN];
    const char *L = mc_type_kind_name(t->kind);
    mc_type_kind k = t->of->kind;
    const char *kn = mc_type_kind_name(k);
    unsigned size = (unsigned)t->size;
    fprintf(f, "uint32_t %s_count(const mc_value *a)\n{\n    return mc_gen_count(a, MC_TYPE_%s);"
               "\n}\n\n", name, L);
    fprintf(f, "int %s_at(const mc_value *a, uint32_t i, ", name);
    out_param(f, k);
    fprintf(f, ")\n{\n    const mc_value *e;\n    int rc = mc_gen_item(a, MC_TYPE_%s, i, MC_TYPE_%s, "
               "&e);\n    if (rc == MC_CALL_OK) {\n", L, kn);
    emit_get(f, k, "e");
    fprintf(f, "    }\n    return rc;\n}\n\n");
    if (is_container(t->of)) {
        child_name(t->of, name, "item", child, sizeof child);
        fprintf(f, "int %s_edit(mc_value *a, uint32_t i, mc_value **out)\n{\n    return "
                   "mc_gen_item_mut(a, MC_TYPE_%s, i, MC_TYPE_%s, out);\n}\n\n", name, L, kn);
        if (!size) {
            fprintf(f, "int %s_append(mc_value *a, mc_value **out)\n{\n    mc_value *e;\n"
                       "    int rc = mc_gen_append(a, MC_TYPE_%s, 0u, &e);\n"
                       "    if (rc != MC_CALL_OK)\n        return rc;\n", name, L);
            if (emit_default(f, "    ", t->of, child, "e"))
                fprintf(f, "    *out = e;\n    return MC_CALL_OK;\nfail:\n    mc_gen_unappend(a);"
                           "\n    return MC_CALL_ERR_BUSY;\n}\n\n");
            else
                fprintf(f, "    *out = e;\n    return MC_CALL_OK;\n}\n\n");
        }
    } else {
        fprintf(f, "int %s_set(mc_value *a, uint32_t i, ", name);
        set_params(f, k);
        fprintf(f, ")\n{\n    mc_value *e;\n    int rc = mc_gen_item_mut(a, MC_TYPE_%s, i, "
                   "MC_TYPE_%s, &e);\n    if (rc == MC_CALL_OK) {\n", L, kn);
        emit_set(f, k, "e");
        fprintf(f, "    }\n    return rc;\n}\n\n");
        if (!size) {
            fprintf(f, "int %s_append(mc_value *a, ", name);
            set_params(f, k);
            fprintf(f, ")\n{\n    mc_value *e;\n    int rc = mc_gen_append(a, MC_TYPE_%s, 0u, &e);"
                       "\n    if (rc == MC_CALL_OK) {\n        e->kind = MC_TYPE_%s;\n", L, kn);
            emit_set(f, k, "e");
            fprintf(f, "        if (rc != MC_CALL_OK)\n            mc_gen_unappend(a);\n    }\n"
                       "    return rc;\n}\n\n");
        }
    }
    if (!size)
        fprintf(f, "int %s_remove(mc_value *a, uint32_t i)\n{\n    return mc_gen_remove(a, "
                   "MC_TYPE_%s, 0u, i);\n}\n\nint %s_clear(mc_value *a)\n{\n    return "
                   "mc_gen_clear(a, MC_TYPE_%s, 0u);\n}\n\n", name, L, name, L);
}

static void defs_rec(FILE *f, const mc_def_type *t, const char *name)
{
    char child[NAME_MAX_LEN];
    emit_init(f, t, name);
    if (t->kind == MC_TYPE_FIXED_DICT) {
        emit_dict(f, t, name);
        for (size_t i = 0; i < t->nfields; i++)
            if (child_name(t->fields[i].type, name, t->fields[i].name, child, sizeof child) &&
                !t->fields[i].type->alias)
                defs_rec(f, t->fields[i].type, child);
        return;
    }
    emit_list(f, t, name);
    if (child_name(t->of, name, "item", child, sizeof child) && !t->of->alias)
        defs_rec(f, t->of, child);
}

void defc_emit_access_defs(FILE *f, const mc_def_type *t, const char *name)
{
    if (is_container(t))
        defs_rec(f, t, name);
}

/* ---- which containers get accessors --------------------------------------------------- */

void defc_type_containers(const mc_entity_type_def *t, defc_container_fn fn, void *ud)
{
    static const char *const pt[MC_PART_COUNT] = {"base", "cell", "client"};
    char name[NAME_MAX_LEN], cn[80], an[80];
    for (size_t i = 0; i < t->nprops; i++) {
        const mc_def_property *p = &t->props[i];
        if (!is_container(p->type) || p->type->alias)
            continue;
        snprintf(name, sizeof name, "%s_%s", t->name, defc_cname(p->name, cn, sizeof cn));
        fn(ud, p->type, name, p->file, p->line, p->name);
    }
    for (int part = 0; part < MC_PART_COUNT; part++)
        for (size_t m = 0; m < t->nmethods[part]; m++) {
            const mc_def_method *me = &t->methods[part][m];
            defc_cname(me->name, cn, sizeof cn);
            for (size_t i = 0; i < me->nargs + me->nreturns; i++) {
                const mc_def_arg *a = i < me->nargs ? &me->args[i] : &me->returns[i - me->nargs];
                if (!is_container(a->type) || a->type->alias)
                    continue;
                if (a->name)
                    defc_cname(a->name, an, sizeof an);
                else
                    snprintf(an, sizeof an, "arg%zu", i + 1);
                snprintf(name, sizeof name, "%s_%s_%s_%s", t->name, pt[part], cn, an);
                fn(ud, a->type, name, me->file, me->line, me->name);
            }
        }
}

void defc_alias_containers(const mc_entity_defs *defs, defc_container_fn fn, void *ud)
{
    size_t n = mc_defs_alias_count(defs);
    for (size_t i = 0; i < n; i++) {
        const mc_def_type *t = mc_defs_alias(defs, i);
        if (!is_container(t) || !t->alias)
            continue;
        bool seen = false; /* an alias of an alias is the same type object */
        for (size_t k = 0; k < i && !seen; k++)
            seen = mc_defs_alias(defs, k) == t;
        if (!seen)
            fn(ud, t, t->alias, NULL, 0, t->alias);
    }
}
