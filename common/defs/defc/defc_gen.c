/* defc code generation: per entity type a header and a source (property structs per part,
 * typed senders, handler prototypes, dispatchers) and game_module.c (the registration
 * table a game module exports). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "defc.h"

static const char *const part_tags[MC_PART_COUNT] = {"base", "cell", "client"};

/* A def name as it appears in generated C identifiers (buf: a char array). */
#define CN(name, buf) defc_cname((name), (buf), sizeof(buf))

static void emit_reply_typedef(FILE *f, const mc_entity_type_def *t, const mc_def_method *m);

static void decl_container(void *ud, const mc_def_type *t, const char *name, const char *file,
                           int line, const char *elem)
{
    (void)file;
    (void)line;
    (void)elem;
    defc_emit_access_decls(ud, t, name);
}

static void def_container(void *ud, const mc_def_type *t, const char *name, const char *file,
                          int line, const char *elem)
{
    (void)file;
    (void)line;
    (void)elem;
    defc_emit_access_defs(ud, t, name);
}
static void emit_hook_decls(FILE *f, const mc_entity_type_def *t);
static void emit_hooks(FILE *f, const mc_entity_type_def *t);

static bool is_int(mc_type_kind k)
{
    return k <= MC_TYPE_INT64;
}
static bool is_uint(mc_type_kind k)
{
    return k >= MC_TYPE_UINT8 && k <= MC_TYPE_UINT64;
}

/* Parameter type of an argument. */
static const char *arg_ctype(mc_type_kind k)
{
    if (defc_is_str(k))
        return "const char *";
    if (defc_is_generic(k))
        return "const mc_value *";
    return defc_scalar_ctype(k);
}

/* Type of a property field / a return value's storage. */
static const char *field_ctype(mc_type_kind k)
{
    if (defc_is_str(k))
        return "char *";
    if (defc_is_generic(k))
        return "mc_value";
    return defc_scalar_ctype(k);
}

static const char *sep_type(const char *ct)
{
    size_t n = strlen(ct);
    return n && ct[n - 1] == '*' ? "" : " ";
}

static char *arg_name(const mc_def_arg *a, size_t i, char *buf, size_t len)
{
    if (a->name)
        defc_cname(a->name, buf, len);
    else
        snprintf(buf, len, "arg%zu", i + 1);
    return buf;
}

/* Value view of C expression e of kind k (for senders and returns). */
void defc_emit_view(FILE *f, mc_type_kind k, const char *e, bool pointer_generic)
{
    const char *kn = mc_type_kind_name(k);
    if (is_int(k))
        fprintf(f, "mc_gen_int(MC_TYPE_%s, %s)", kn, e);
    else if (is_uint(k))
        fprintf(f, "mc_gen_uint(MC_TYPE_%s, %s)", kn, e);
    else if (k == MC_TYPE_FLOAT32 || k == MC_TYPE_FLOAT64)
        fprintf(f, "mc_gen_float(MC_TYPE_%s, %s)", kn, e);
    else if (defc_is_str(k))
        fprintf(f, "mc_gen_str(MC_TYPE_%s, %s)", kn, e);
    else if (k == MC_TYPE_VECTOR2)
        fprintf(f, "mc_gen_vec(MC_TYPE_VECTOR2, %s.x, %s.y, 0.0f, 0.0f)", e, e);
    else if (k == MC_TYPE_VECTOR3)
        fprintf(f, "mc_gen_vec(MC_TYPE_VECTOR3, %s.x, %s.y, %s.z, 0.0f)", e, e, e);
    else if (k == MC_TYPE_VECTOR4)
        fprintf(f, "mc_gen_vec(MC_TYPE_VECTOR4, %s.x, %s.y, %s.z, %s.w)", e, e, e, e);
    else if (k == MC_TYPE_MAILBOX)
        fprintf(f, "mc_gen_mailbox(%s)", e);
    else if (pointer_generic)
        fprintf(f, "(%s ? *%s : defc_none)", e, e);
    else
        fprintf(f, "%s", e);
}

/* C value of decoded mc_value expression v (an lvalue) of kind k, as a handler argument. */
static void emit_from_value(FILE *f, mc_type_kind k, const char *v)
{
    if (is_int(k) || is_uint(k) || k == MC_TYPE_FLOAT32 || k == MC_TYPE_FLOAT64)
        fprintf(f, "(%s)%s.as.%s", defc_scalar_ctype(k), v,
                is_int(k) ? "i" : is_uint(k) ? "u" : "f");
    else if (defc_is_str(k))
        fprintf(f, "%s.as.bytes.data", v);
    else if (k == MC_TYPE_VECTOR2)
        fprintf(f, "(mc_vector2){%s.as.vec[0], %s.as.vec[1]}", v, v);
    else if (k == MC_TYPE_VECTOR3)
        fprintf(f, "(mc_vector3){%s.as.vec[0], %s.as.vec[1], %s.as.vec[2]}", v, v, v);
    else if (k == MC_TYPE_VECTOR4)
        fprintf(f, "(mc_vector4){%s.as.vec[0], %s.as.vec[1], %s.as.vec[2], %s.as.vec[3]}", v, v,
                v, v);
    else if (k == MC_TYPE_MAILBOX)
        fprintf(f, "%s.as.mailbox", v);
    else
        fprintf(f, "&%s", v);
}

static void emit_handler_proto(FILE *f, const mc_entity_type_def *t, const mc_def_method *m)
{
    const char *pt = part_tags[m->part];
    char nb[80];
    fprintf(f, "int %s_%s_%s(const mc_call_ctx *call, %s_%s *self", t->name, pt,
            CN(m->name, nb), t->name, pt);
    for (size_t i = 0; i < m->nargs; i++) {
        const char *ct = arg_ctype(m->args[i].type->kind);
        fprintf(f, ", %s%s%s", ct, sep_type(ct), arg_name(&m->args[i], i, nb, sizeof(nb)));
    }
    for (size_t i = 0; i < m->nreturns; i++) {
        const char *ct = field_ctype(m->returns[i].type->kind);
        fprintf(f, ", %s%s*out_%s", ct, sep_type(ct), CN(m->returns[i].name, nb));
    }
    fprintf(f, ")");
}

/* A one-way client method also gets a fan-out sender (fanout_: to an mc_clients). */
static bool has_fan_out(const mc_def_method *m)
{
    return m->part == MC_PART_CLIENT && !m->nreturns;
}

static void emit_sender_proto(FILE *f, const mc_entity_type_def *t, const mc_def_method *m,
                              bool fan_out)
{
    const char *pt = part_tags[m->part];
    char nb[80];
    fprintf(f, "int %s_%s_%s_%s(const mc_call_sink *defc_sink, const %s *defc_to",
            fan_out ? "fanout" : "send", t->name, pt, CN(m->name, nb),
            fan_out ? "mc_clients" : "mc_mailbox_ref");
    for (size_t i = 0; i < m->nargs; i++) {
        const char *ct = arg_ctype(m->args[i].type->kind);
        fprintf(f, ", %s%s%s", ct, sep_type(ct), arg_name(&m->args[i], i, nb, sizeof(nb)));
    }
    if (m->nreturns)
        fprintf(f, ", %s_%s_%s_reply defc_on_reply, void *defc_ud", t->name, pt,
                CN(m->name, nb));
    fprintf(f, ")");
}

static int emit_header(FILE *f, const mc_entity_defs *defs, const mc_entity_type_def *t)
{
    fprintf(f, "/* Generated by defc from entity_defs/%s.def: do not edit.\n"
               " * Entity type %s (id %u), %s. */\n",
            t->name, t->name, (unsigned)t->id,
            t->client_server ? "client-server" : "server only");
    fprintf(f, "#ifndef MC_GEN_%s_H\n#define MC_GEN_%s_H\n\n", t->name, t->name);
    fprintf(f, "#include <stdbool.h>\n#include <stdint.h>\n\n#include \"common/entity_api.h\"\n"
               "#include \"common/game_module.h\"\n#include \"common/gen_access.h\"\n"
               "#include \"game_values.h\"\n\n");
    fprintf(f, "#define %s_TYPE_ID %uu\n\n", t->name, (unsigned)t->id);
    char nb[80];
    for (int part = 0; part < MC_PART_COUNT; part++) {
        for (size_t i = 0; i < t->nmethods[part]; i++)
            fprintf(f, "#define %s_%s_%s_INDEX %uu\n", t->name, part_tags[part],
                    CN(t->methods[part][i].name, nb), (unsigned)i);
        for (size_t i = 0; i < t->nmethods[part]; i++)
            if (t->methods[part][i].exposed)
                fprintf(f, "#define %s_%s_%s_EXPOSED_INDEX %du\n", t->name, part_tags[part],
                        CN(t->methods[part][i].name, nb), (int)t->methods[part][i].exposed_index);
    }
    fprintf(f, "\n");
    for (int part = 0; part < MC_PART_COUNT; part++) {
        fprintf(f, "/* Properties the %s part holds, in index order. */\ntypedef struct {\n",
                part_tags[part]);
        size_t n = 0;
        for (size_t i = 0; i < t->nprops; i++) {
            const mc_def_property *p = &t->props[i];
            if (p->part_index[part] < 0)
                continue;
            const char *ct = field_ctype(p->type->kind);
            char *d = mc_def_type_describe(p->type);
            fprintf(f, "    %s%s%s; /* %s%s%s %s */\n", ct, sep_type(ct), CN(p->name, nb),
                    p->name[0] == '_' ? p->name : "", p->name[0] == '_' ? ": " : "",
                    d ? d : "?", mc_prop_flags_name(p->flags));
            free(d);
            n++;
        }
        if (!n)
            fprintf(f, "    char defc_empty; /* no properties */\n");
        fprintf(f, "} %s_%s;\n", t->name, part_tags[part]);
        fprintf(f, "int init_%s_%s(const mc_entity_defs *defs, %s_%s *props);\n", t->name,
                part_tags[part], t->name, part_tags[part]);
        fprintf(f, "void free_%s_%s(%s_%s *props);\n", t->name, part_tags[part], t->name,
                part_tags[part]);
        fprintf(f, "int encode_%s_%s(const mc_entity_defs *defs, const %s_%s *props, "
                   "bool persistent_only,\n    mc_ostream *os, char *why, size_t whylen);\n",
                t->name, part_tags[part], t->name, part_tags[part]);
        fprintf(f, "int decode_%s_%s(const mc_entity_defs *defs, %s_%s *props, "
                   "bool persistent_only,\n    mc_istream *is, char *why, size_t whylen);\n\n",
                t->name, part_tags[part], t->name, part_tags[part]);
    }
    fprintf(f, "/* Container accessors of the anonymous FIXED_DICT, ARRAY and TUPLE types of "
               "%s's\n * properties, arguments and return values (aliases: game_values.h). */\n",
            t->name);
    defc_type_containers(t, decl_container, f);
    defc_emit_create_decls(f, t);
    fprintf(f, "\n/* Reply callbacks of two-way methods: status MC_CALL_OK with the return values "
               "(valid\n * during the call only), or an error status with zero / NULL "
               "values. */\n");
    for (int part = MC_PART_BASE; part <= MC_PART_CELL; part++)
        for (size_t i = 0; i < t->nmethods[part]; i++)
            if (t->methods[part][i].nreturns)
                emit_reply_typedef(f, t, &t->methods[part][i]);
    fprintf(f, "\n/* Senders: encode the arguments (checked against the def) and hand them to the\n"
               " * sink (sink->request for two-way methods: the callback runs once, later, unless "
               "the\n * sender fails). The mailbox must be of this type and reach the method's "
               "part. A one-way\n * client method's fanout_ sender takes a cell entity's "
               "mc_allClients / mc_otherClients\n * instead. Return an mc_call_status. */\n");
    for (int part = 0; part < MC_PART_COUNT; part++)
        for (size_t i = 0; i < t->nmethods[part]; i++) {
            emit_sender_proto(f, t, &t->methods[part][i], false);
            fprintf(f, ";\n");
            if (has_fan_out(&t->methods[part][i])) {
                emit_sender_proto(f, t, &t->methods[part][i], true);
                fprintf(f, ";\n");
            }
        }
    fprintf(f, "\n/* Handlers the game writes for the base and cell parts (return 0, or non-zero\n"
               " * to report a failure). Arguments are valid during the call only. Return values\n"
               " * (out_*) arrive zeroed, strings NULL (set a malloc()ed string) and mc_value ones\n"
               " * holding the type's default (change in place, or mc_value_free then set). */\n");
    for (int part = MC_PART_BASE; part <= MC_PART_CELL; part++)
        for (size_t i = 0; i < t->nmethods[part]; i++) {
            emit_handler_proto(f, t, &t->methods[part][i]);
            fprintf(f, ";\n");
        }
    if (t->nmethods[MC_PART_CLIENT]) {
        fprintf(f, "\n/* Handlers a C client writes for the client part (not part of a server "
                   "game module). */\n");
        for (size_t i = 0; i < t->nmethods[MC_PART_CLIENT]; i++) {
            emit_handler_proto(f, t, &t->methods[MC_PART_CLIENT][i]);
            fprintf(f, ";\n");
        }
    }
    emit_hook_decls(f, t);
    fprintf(f, "\n/* Registration pieces (game_module.c). */\n");
    fprintf(f, "int mc_gen_%s_props_init(const mc_entity_defs *defs, mc_part part, void *props);\n",
            t->name);
    fprintf(f, "int mc_gen_%s_props_encode(const mc_entity_defs *defs, mc_part part, const void "
               "*props,\n    bool persistent_only, mc_ostream *os, char *why, size_t whylen);\n",
            t->name);
    fprintf(f, "int mc_gen_%s_props_decode(const mc_entity_defs *defs, mc_part part, void *props,\n"
               "    bool persistent_only, mc_istream *is, char *why, size_t whylen);\n",
            t->name);
    fprintf(f, "int mc_gen_%s_props_encode_one(const mc_entity_defs *defs, mc_part part, "
               "const void *props,\n    uint16_t index, mc_ostream *os, char *why, size_t "
               "whylen);\n",
            t->name);
    fprintf(f, "int mc_gen_%s_props_decode_one(const mc_entity_defs *defs, mc_part part, "
               "void *props,\n    uint16_t index, mc_istream *is, char *why, size_t whylen);\n",
            t->name);
    fprintf(f, "void mc_gen_%s_props_free(mc_part part, void *props);\n", t->name);
    fprintf(f, "void mc_gen_%s_hooks(mc_game_hooks hooks[MC_PART_COUNT]);\n", t->name);
    for (int part = MC_PART_BASE; part <= MC_PART_CELL; part++)
        if (t->nmethods[part])
            fprintf(f, "extern const mc_game_method mc_gen_%s_%s_methods[%zu];\n", t->name,
                    part_tags[part], t->nmethods[part]);
    fprintf(f, "\n#endif\n");
    (void)defs;
    return 0;
}

static void emit_props_funcs(FILE *f, const mc_entity_type_def *t, int part)
{
    const char *pt = part_tags[part];
    char nb[80];
    fprintf(f, "int init_%s_%s(const mc_entity_defs *defs, %s_%s *props)\n{\n", t->name, pt,
            t->name, pt);
    fprintf(f, "    const mc_value *d;\n    memset(props, 0, sizeof(*props));\n    (void)d;\n");
    for (size_t i = 0; i < t->nprops; i++) {
        const mc_def_property *p = &t->props[i];
        if (p->part_index[part] < 0)
            continue;
        mc_type_kind k = p->type->kind;
        fprintf(f, "    d = mc_gen_default(defs, %s_TYPE_ID, %u);\n", t->name, (unsigned)i);
        fprintf(f, "    if (!d || d->kind != MC_TYPE_%s)\n        goto fail;\n",
                mc_type_kind_name(k));
        if (defc_is_str(k))
            fprintf(f, "    if (mc_gen_default_str(defs, %s_TYPE_ID, %u, &props->%s) != 0)\n"
                       "        goto fail;\n",
                    t->name, (unsigned)i, CN(p->name, nb));
        else if (defc_is_generic(k))
            fprintf(f, "    if (mc_gen_default_value(defs, %s_TYPE_ID, %u, &props->%s) != 0)\n"
                       "        goto fail;\n",
                    t->name, (unsigned)i, CN(p->name, nb));
        else {
            fprintf(f, "    props->%s = ", CN(p->name, nb));
            emit_from_value(f, k, "(*d)");
            fprintf(f, ";\n");
        }
    }
    if (t->nparts_props[part])
        fprintf(f, "    return 0;\nfail:\n    free_%s_%s(props);\n    return -1;\n}\n\n", t->name,
                pt);
    else
        fprintf(f, "    (void)defs;\n    return 0;\n}\n\n");
    fprintf(f, "void free_%s_%s(%s_%s *props)\n{\n", t->name, pt, t->name, pt);
    for (size_t i = 0; i < t->nprops; i++) {
        const mc_def_property *p = &t->props[i];
        if (p->part_index[part] < 0)
            continue;
        if (defc_is_str(p->type->kind))
            fprintf(f, "    free(props->%s);\n", CN(p->name, nb));
        else if (defc_is_generic(p->type->kind))
            fprintf(f, "    mc_value_free(&props->%s);\n", CN(p->name, nb));
    }
    fprintf(f, "    memset(props, 0, sizeof(*props));\n}\n\n");
}

static const char *part_enum(int part)
{
    return part == MC_PART_BASE ? "BASE" : part == MC_PART_CELL ? "CELL" : "CLIENT";
}

/* encode_T_part / decode_T_part: a part's properties as a stream. */
static void emit_props_stream(FILE *f, const mc_entity_type_def *t, int part)
{
    const char *pt = part_tags[part];
    size_t n = t->nparts_props[part];
    char nb[80];
    fprintf(f, "int encode_%s_%s(const mc_entity_defs *defs, const %s_%s *props, "
               "bool persistent_only,\n    mc_ostream *os, char *why, size_t whylen)\n{\n",
            t->name, pt, t->name, pt);
    if (!n) {
        fprintf(f, "    (void)defs;\n    (void)props;\n    (void)persistent_only;\n    (void)os;\n"
                   "    (void)why;\n    (void)whylen;\n    return MC_CALL_OK;\n}\n\n");
    } else {
        fprintf(f, "    const mc_def_property *p;\n    mc_value v;\n    size_t start = os->size;\n");
        for (size_t i = 0; i < t->nprops; i++) {
            const mc_def_property *p = &t->props[i];
            if (p->part_index[part] < 0)
                continue;
            char e[96];
            snprintf(e, sizeof(e), "props->%s", CN(p->name, nb));
            fprintf(f, "    p = mc_gen_property(defs, %s_TYPE_ID, %u, \"%s\");\n", t->name,
                    (unsigned)i, p->name);
            fprintf(f, "    if (!p)\n        goto defs;\n");
            fprintf(f, "    if (!persistent_only || p->persistent) {\n        v = ");
            defc_emit_view(f, p->type->kind, e, false);
            fprintf(f, ";\n        if (mc_gen_encode_prop(defs, p, &v, os, why, whylen) != 0)\n"
                       "            goto fail;\n    }\n");
        }
        fprintf(f, "    return MC_CALL_OK;\ndefs:\n    snprintf(why, whylen, \"definitions do not "
                   "match generated %s\");\n    if (mc_ostream_ok(os))\n        os->size = start;\n"
                   "    return MC_CALL_ERR_DEFS;\nfail:\n    if (mc_ostream_ok(os))\n"
                   "        os->size = start;\n    return MC_CALL_ERR_ARGS;\n}\n\n",
                t->name);
    }
    fprintf(f, "int decode_%s_%s(const mc_entity_defs *defs, %s_%s *props, bool persistent_only,\n"
               "    mc_istream *is, char *why, size_t whylen)\n{\n",
            t->name, pt, t->name, pt);
    if (!n) {
        fprintf(f, "    (void)defs;\n    (void)props;\n    (void)persistent_only;\n    (void)is;\n"
                   "    (void)why;\n    (void)whylen;\n    return MC_CALL_OK;\n}\n\n");
        return;
    }
    fprintf(f, "    const mc_def_property *p[%zu];\n    bool in[%zu];\n    mc_value v[%zu];\n"
               "    memset(v, 0, sizeof(v));\n    int rc = MC_CALL_OK;\n",
            n, n, n);
    size_t k = 0;
    for (size_t i = 0; i < t->nprops; i++) {
        const mc_def_property *p = &t->props[i];
        if (p->part_index[part] < 0)
            continue;
        fprintf(f, "    p[%zu] = mc_gen_property(defs, %s_TYPE_ID, %u, \"%s\");\n", k, t->name,
                (unsigned)i, p->name);
        fprintf(f, "    if (!p[%zu]) {\n        snprintf(why, whylen, \"definitions do not match "
                   "generated %s\");\n        rc = MC_CALL_ERR_DEFS;\n        goto out;\n    }\n",
                k, t->name);
        fprintf(f, "    in[%zu] = !persistent_only || p[%zu]->persistent;\n", k, k);
        fprintf(f, "    if (in[%zu] && (rc = mc_gen_decode_prop(defs, p[%zu], is, &v[%zu], why, "
                   "whylen)) != 0)\n        goto out;\n",
                k, k, k);
        k++;
    }
    k = 0;
    for (size_t i = 0; i < t->nprops; i++) {
        const mc_def_property *p = &t->props[i];
        if (p->part_index[part] < 0)
            continue;
        mc_type_kind kind = p->type->kind;
        fprintf(f, "    if (in[%zu]) {\n", k);
        if (defc_is_str(kind))
            fprintf(f, "        free(props->%s);\n        props->%s = v[%zu].as.bytes.data;\n"
                       "        memset(&v[%zu], 0, sizeof(v[%zu]));\n",
                    CN(p->name, nb), nb, k, k, k);
        else if (defc_is_generic(kind))
            fprintf(f, "        mc_value_free(&props->%s);\n        props->%s = v[%zu];\n"
                       "        memset(&v[%zu], 0, sizeof(v[%zu]));\n",
                    CN(p->name, nb), nb, k, k, k);
        else {
            char vb[32];
            snprintf(vb, sizeof(vb), "v[%zu]", k);
            fprintf(f, "        props->%s = ", CN(p->name, nb));
            emit_from_value(f, kind, vb);
            fprintf(f, ";\n");
        }
        fprintf(f, "    }\n");
        k++;
    }
    fprintf(f, "out:\n    for (size_t i = 0; i < %zu; i++)\n        mc_value_free(&v[i]);\n"
               "    return rc;\n}\n\n",
            n);
}

/* One property of a part by its index in the type (property changes, entering views):
 * encode_one_T_part / decode_one_T_part. decode_one replaces the field only when the value
 * decoded. */
static void emit_props_one(FILE *f, const mc_entity_type_def *t, int part)
{
    const char *pt = part_tags[part];
    char nb[80];
    fprintf(f, "static int encode_one_%s_%s(const mc_entity_defs *defs, const %s_%s *props,\n"
               "    uint16_t index, mc_ostream *os, char *why, size_t whylen)\n{\n"
               "    const mc_def_property *p = NULL;\n    mc_value v;\n    (void)defs;\n"
               "    (void)props;\n    (void)os;\n    (void)v;\n    (void)p;\n"
               "    switch (index) {\n",
            t->name, pt, t->name, pt);
    for (size_t i = 0; i < t->nprops; i++) {
        const mc_def_property *p = &t->props[i];
        if (p->part_index[part] < 0)
            continue;
        char e[96];
        snprintf(e, sizeof(e), "props->%s", CN(p->name, nb));
        fprintf(f, "    case %zu:\n        if (!(p = mc_gen_property(defs, %s_TYPE_ID, %zu, \"%s\")))"
                   "\n            break;\n        v = ",
                i, t->name, i, p->name);
        defc_emit_view(f, p->type->kind, e, false);
        fprintf(f, ";\n        return mc_gen_encode_prop(defs, p, &v, os, why, whylen);\n");
    }
    fprintf(f, "    default:\n        snprintf(why, whylen, \"%s has no %s property %%u\", "
               "(unsigned)index);\n        return MC_CALL_ERR_NOT_FOUND;\n    }\n"
               "    snprintf(why, whylen, \"definitions do not match generated %s\");\n"
               "    return MC_CALL_ERR_DEFS;\n}\n\n",
            t->name, pt, t->name);
    fprintf(f, "static int decode_one_%s_%s(const mc_entity_defs *defs, %s_%s *props,\n"
               "    uint16_t index, mc_istream *is, char *why, size_t whylen)\n{\n"
               "    const mc_def_property *p = NULL;\n    mc_value v;\n    int rc;\n"
               "    (void)defs;\n    (void)props;\n    (void)is;\n    (void)v;\n    (void)rc;\n"
               "    (void)p;\n    switch (index) {\n",
            t->name, pt, t->name, pt);
    for (size_t i = 0; i < t->nprops; i++) {
        const mc_def_property *p = &t->props[i];
        if (p->part_index[part] < 0)
            continue;
        mc_type_kind kind = p->type->kind;
        fprintf(f, "    case %zu:\n        if (!(p = mc_gen_property(defs, %s_TYPE_ID, %zu, \"%s\")))"
                   "\n            break;\n        if ((rc = mc_gen_decode_prop(defs, p, is, &v, why, "
                   "whylen)) != 0)\n            return rc;\n",
                i, t->name, i, p->name);
        if (defc_is_str(kind))
            fprintf(f, "        free(props->%s);\n        props->%s = v.as.bytes.data;\n",
                    CN(p->name, nb), nb);
        else if (defc_is_generic(kind))
            fprintf(f, "        mc_value_free(&props->%s);\n        props->%s = v;\n",
                    CN(p->name, nb), nb);
        else {
            fprintf(f, "        props->%s = ", CN(p->name, nb));
            emit_from_value(f, kind, "v");
            fprintf(f, ";\n");
        }
        fprintf(f, "        return MC_CALL_OK;\n");
    }
    fprintf(f, "    default:\n        snprintf(why, whylen, \"%s has no %s property %%u\", "
               "(unsigned)index);\n        return MC_CALL_ERR_NOT_FOUND;\n    }\n"
               "    snprintf(why, whylen, \"definitions do not match generated %s\");\n"
               "    return MC_CALL_ERR_DEFS;\n}\n\n",
            t->name, pt, t->name);
}

static void emit_reply_trampoline(FILE *f, const mc_entity_type_def *t, const mc_def_method *m);

/* A flat sender: the arguments written into a stack buffer, no mc_value. */
static void emit_flat_sender_body(FILE *f, const mc_entity_type_def *t, const mc_def_method *m,
                                  size_t size, bool fan_out)
{
    char nb[80];
    if (size) {
        fprintf(f, "    uint8_t defc_buf[%zu];\n    uint8_t *defc_p = defc_buf;\n", size);
        for (size_t i = 0; i < m->nargs; i++)
            defc_emit_flat_put(f, "    ", "defc_p", m->args[i].type->kind,
                               arg_name(&m->args[i], i, nb, sizeof(nb)));
        fprintf(f, "    (void)defc_p;\n");
    }
    const char *buf = size ? "defc_buf" : "(const uint8_t *)\"\"";
    if (!m->nreturns) {
        fprintf(f, "    return mc_gen_%s_flat(defc_sink, defc_to, %s_TYPE_ID, MC_PART_%s, %uu, "
                   "0x%08xu /* %s */, %s, %zu);\n}\n\n",
                fan_out ? "fan_out" : "send", t->name, part_enum(m->part), (unsigned)m->index,
                (unsigned)m->signature, m->name, buf, size);
        return;
    }
    fprintf(f, "    return mc_gen_request_flat(defc_sink, defc_to, %s_TYPE_ID, MC_PART_%s, %uu, "
               "0x%08xu /* %s */, %s, %zu,\n                               defc_reply_%s_%s_%s, "
               "(void *)defc_on_reply, defc_ud);\n}\n\n",
            t->name, part_enum(m->part), (unsigned)m->index, (unsigned)m->signature, m->name,
            buf, size, t->name, part_tags[m->part], CN(m->name, nb));
}

static void emit_sender(FILE *f, const mc_entity_type_def *t, const mc_def_method *m,
                        bool fan_out)
{
    if (m->nreturns)
        emit_reply_trampoline(f, t, m);
    emit_sender_proto(f, t, m, fan_out);
    fprintf(f, "\n{\n");
    char nb[80];
    size_t flat;
    if (defc_flat_list(m->args, m->nargs, &flat)) {
        emit_flat_sender_body(f, t, m, flat, fan_out);
        return;
    }
    bool generic = false;
    for (size_t i = 0; i < m->nargs; i++)
        if (defc_is_generic(m->args[i].type->kind))
            generic = true;
    if (generic)
        fprintf(f, "    const mc_value defc_none = {0};\n");
    if (m->nargs) {
        fprintf(f, "    const mc_value defc_args[%zu] = {\n", m->nargs);
        for (size_t i = 0; i < m->nargs; i++) {
            fprintf(f, "        ");
            defc_emit_view(f, m->args[i].type->kind, arg_name(&m->args[i], i, nb, sizeof(nb)), true);
            fprintf(f, ",\n");
        }
        fprintf(f, "    };\n");
    }
    if (!m->nreturns) {
        fprintf(f, "    return mc_gen_%s(defc_sink, defc_to, %s_TYPE_ID, MC_PART_%s, %uu, "
                   "\"%s\", %s, %zu);\n}\n\n",
                fan_out ? "fan_out" : "send", t->name, part_enum(m->part), (unsigned)m->index,
                m->name, m->nargs ? "defc_args" : "NULL", m->nargs);
        return;
    }
    fprintf(f, "    return mc_gen_request(defc_sink, defc_to, %s_TYPE_ID, MC_PART_%s, %uu, \"%s\", "
               "%s, %zu,\n                          defc_reply_%s_%s_%s, (void *)defc_on_reply, "
               "defc_ud);\n}\n\n",
            t->name, part_enum(m->part), (unsigned)m->index, m->name,
            m->nargs ? "defc_args" : "NULL", m->nargs, t->name, part_tags[m->part],
            CN(m->name, nb));
}

/* typedef of the callback a two-way sender takes: the return values as handler arguments. */
static void emit_reply_typedef(FILE *f, const mc_entity_type_def *t, const mc_def_method *m)
{
    char nb[80];
    fprintf(f, "typedef void (*%s_%s_%s_reply)(const mc_call_ctx *call, void *ud, int status",
            t->name, part_tags[m->part], CN(m->name, nb));
    for (size_t i = 0; i < m->nreturns; i++) {
        const char *ct = arg_ctype(m->returns[i].type->kind);
        fprintf(f, ", %s%s%s", ct, sep_type(ct), CN(m->returns[i].name, nb));
    }
    fprintf(f, ");\n");
}

/* The rest of a flat trampoline: the return values read straight from the reply's bytes
 * (zeroes when the call failed). */
static void emit_flat_trampoline_body(FILE *f, const mc_entity_type_def *t,
                                      const mc_def_method *m, size_t size)
{
    size_t n = m->nreturns;
    fprintf(f, "    const uint8_t *defc_b = NULL;\n");
    fprintf(f, "    if (status == MC_CALL_OK) {\n        const mc_def_method *m = call ? "
               "mc_gen_method_sig(call->defs, %s_TYPE_ID,\n            MC_PART_%s, %uu, "
               "0x%08xu /* %s */) : NULL;\n",
            t->name, part_enum(m->part), (unsigned)m->index, (unsigned)m->signature, m->name);
    fprintf(f, "        if (!m || m->nreturns != %zu)\n            status = MC_CALL_ERR_DEFS;\n"
               "        else if (!returns || !(defc_b = mc_gen_flat_take(returns, %zu, \"%s\", "
               "NULL, 0)))\n            status = MC_CALL_ERR_ARGS;\n    }\n",
            n, size, m->name);
    fprintf(f, "    if (status != MC_CALL_OK) {\n        fn(call, ud, status");
    for (size_t i = 0; i < n; i++)
        fprintf(f, ", (%s){0}", defc_scalar_ctype(m->returns[i].type->kind));
    fprintf(f, ");\n        return;\n    }\n    fn(call, ud, status");
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        mc_type_kind k = m->returns[i].type->kind;
        fprintf(f, ",\n       ");
        defc_emit_flat_get(f, "defc_b", off, k, defc_scalar_ctype(k));
        off += defc_flat_size(k);
    }
    fprintf(f, ");\n}\n\n");
}

/* The mc_reply_fn of a two-way method: decode the returns, call the typed callback. */
static void emit_reply_trampoline(FILE *f, const mc_entity_type_def *t, const mc_def_method *m)
{
    char mn[80];
    const char *pt = part_tags[m->part];
    size_t n = m->nreturns;
    CN(m->name, mn);
    fprintf(f, "static void defc_reply_%s_%s_%s(const mc_call_ctx *call, int status, "
               "mc_istream *returns,\n    void *cb, void *ud)\n{\n",
            t->name, pt, mn);
    fprintf(f, "    if (!cb)\n        return;\n");
    fprintf(f, "    %s_%s_%s_reply fn = (%s_%s_%s_reply)cb;\n", t->name, pt, mn, t->name, pt, mn);
    size_t flat;
    if (defc_flat_list(m->returns, n, &flat)) {
        emit_flat_trampoline_body(f, t, m, flat);
        return;
    }
    fprintf(f, "    mc_value v[%zu];\n    memset(v, 0, sizeof(v));\n", n);
    fprintf(f, "    if (status == MC_CALL_OK) {\n        const mc_def_method *m = call ? "
               "mc_gen_method(call->defs, %s_TYPE_ID,\n            MC_PART_%s, %uu, \"%s\") : "
               "NULL;\n        char why[256];\n",
            t->name, part_enum(m->part), (unsigned)m->index, m->name);
    fprintf(f, "        if (!m || m->nreturns != %zu)\n            status = MC_CALL_ERR_DEFS;\n"
               "        else if (!returns || mc_defs_decode_returns(call->defs, m, returns, v, "
               "why, sizeof(why)) != 0)\n            status = MC_CALL_ERR_ARGS;\n    }\n",
            n);
    fprintf(f, "    const bool ok = status == MC_CALL_OK;\n    (void)ok;\n");
    fprintf(f, "    fn(call, ud, status");
    for (size_t i = 0; i < n; i++) {
        mc_type_kind k = m->returns[i].type->kind;
        char vb[32];
        snprintf(vb, sizeof(vb), "v[%zu]", i);
        fprintf(f, ",\n       ");
        if (defc_is_generic(k))
            fprintf(f, "ok ? &v[%zu] : NULL", i);
        else
            emit_from_value(f, k, vb);
    }
    fprintf(f, ");\n    for (size_t i = 0; i < %zu; i++)\n        mc_value_free(&v[i]);\n}\n\n",
            n);
}

/* ---- Engine callbacks (mc_game_hooks). */

static const char *const hook_params[] = {
    [DEFC_HOOK_PLAIN] = "",
    [DEFC_HOOK_REASON] = ", const char *reason",
    [DEFC_HOOK_TIMER] = ", uint32_t timerId, int64_t userArg",
    [DEFC_HOOK_ENTITY] = ", mc_mailbox_ref entity",
    [DEFC_HOOK_ENTITY_ID] = ", int32_t entityId",
    [DEFC_HOOK_STATUS] = ", int32_t reason",
};

/* The parameters of a hook adapter (the mc_game_hooks slot's signature after props). */
static const char *const adapter_params[] = {
    [DEFC_HOOK_PLAIN] = "",
    [DEFC_HOOK_REASON] = ", const char *reason",
    [DEFC_HOOK_TIMER] = ", uint32_t timer_id, int64_t user_arg",
    [DEFC_HOOK_ENTITY] = ", mc_mailbox_ref entity",
    [DEFC_HOOK_ENTITY_ID] = ", int32_t entity_id",
    [DEFC_HOOK_STATUS] = ", int32_t reason",
};

/* The prototype a game may define for a callback no def method implements. */
static void emit_hook_proto(FILE *f, const mc_entity_type_def *t, int part, const defc_hook *h)
{
    const char *pt = part_tags[part];
    fprintf(f, "int %s_%s_%s(const mc_call_ctx *call, %s_%s *self%s)", t->name, pt, h->name,
            t->name, pt, hook_params[h->shape]);
}

static void emit_hook_decls(FILE *f, const mc_entity_type_def *t)
{
    fprintf(f, "\n/* Engine callbacks (mc_game_hooks): define any of these and the engine calls "
               "it; one left\n * undefined leaves its slot NULL. Return 0, or non-zero to report "
               "a failure. Game modules\n * build with -Wmissing-prototypes: a callback or handler "
               "whose name or arguments differ\n * from these prototypes does not build. */\n");
    for (int part = MC_PART_BASE; part <= MC_PART_CELL; part++)
        for (size_t i = 0; i < defc_nhooks; i++) {
            const defc_hook *h = &defc_hooks[i];
            if (!(h->parts & (1u << part)))
                continue;
            if (defc_hook_method(t, part, h)) {
                fprintf(f, "/* %s_%s_%s: the %s method's handler above. */\n", t->name,
                        part_tags[part], h->name, part_tags[part]);
                continue;
            }
            emit_hook_proto(f, t, part, h);
            fprintf(f, ";\n");
        }
}

/* Arguments a hook adapter passes on to the function it calls. */
static void emit_hook_call_args(FILE *f, const defc_hook *h, const mc_def_method *m)
{
    if (h->shape == DEFC_HOOK_REASON)
        fprintf(f, ", reason ? reason : \"\"");
    else if (h->shape == DEFC_HOOK_TIMER)
        fprintf(f, ", (%s)timer_id, user_arg",
                m ? defc_scalar_ctype(m->args[0].type->kind) : "uint32_t");
    else if (h->shape == DEFC_HOOK_ENTITY)
        fprintf(f, ", entity");
    else if (h->shape == DEFC_HOOK_ENTITY_ID)
        fprintf(f, ", entity_id");
    else if (h->shape == DEFC_HOOK_STATUS)
        fprintf(f, ", reason");
}

static void emit_hook_adapter(FILE *f, const mc_entity_type_def *t, int part, const defc_hook *h)
{
    const char *pt = part_tags[part];
    const mc_def_method *m = defc_hook_method(t, part, h);
    if (!m) {
        fprintf(f, "__attribute__((weak, visibility(\"hidden\"))) ");
        emit_hook_proto(f, t, part, h);
        fprintf(f, ";\n");
    }
    fprintf(f, "static int defc_hook_%s_%s_%s(const mc_call_ctx *call, void *props%s)\n{\n",
            t->name, pt, h->name, adapter_params[h->shape]);
    fprintf(f, "    return %s_%s_%s(call, (%s_%s *)props", t->name, pt, h->name, t->name, pt);
    emit_hook_call_args(f, h, m);
    fprintf(f, ");\n}\n\n");
}

/* Adapters per callback, and mc_gen_T_hooks filling a type's slots: a def method's handler
 * always, a game function when the game defines it (weak reference, NULL otherwise). */
static void emit_hooks(FILE *f, const mc_entity_type_def *t)
{
    fprintf(f, "/* Engine callbacks. */\n");
    for (int part = MC_PART_BASE; part <= MC_PART_CELL; part++)
        for (size_t i = 0; i < defc_nhooks; i++)
            if (defc_hooks[i].parts & (1u << part))
                emit_hook_adapter(f, t, part, &defc_hooks[i]);
    fprintf(f, "void mc_gen_%s_hooks(mc_game_hooks hooks[MC_PART_COUNT])\n{\n", t->name);
    for (int part = MC_PART_BASE; part <= MC_PART_CELL; part++)
        for (size_t i = 0; i < defc_nhooks; i++) {
            const defc_hook *h = &defc_hooks[i];
            if (!(h->parts & (1u << part)))
                continue;
            const char *pt = part_tags[part];
            if (defc_hook_method(t, part, h))
                fprintf(f, "    hooks[MC_PART_%s].%s = defc_hook_%s_%s_%s;\n", part_enum(part),
                        h->slot, t->name, pt, h->name);
            else
                fprintf(f, "    hooks[MC_PART_%s].%s = %s_%s_%s ? defc_hook_%s_%s_%s : NULL;\n",
                        part_enum(part), h->slot, t->name, pt, h->name, t->name, pt, h->name);
        }
    fprintf(f, "}\n");
}

static void emit_dispatch(FILE *f, const mc_entity_type_def *t, const mc_def_method *m)
{
    const char *pt = part_tags[m->part];
    char mn[80];
    CN(m->name, mn);
    const char *PT = part_enum(m->part);
    fprintf(f,
            "static int dispatch_%s_%s_%s(const mc_call_ctx *call, void *props, mc_istream *args,\n"
            "                             mc_ostream *reply, char *why, size_t whylen)\n{\n",
            t->name, pt, mn);
    size_t flat_args, flat_rets;
    bool fa = defc_flat_list(m->args, m->nargs, &flat_args);
    bool fr = defc_flat_list(m->returns, m->nreturns, &flat_rets);
    if (fa)
        fprintf(f, "    const mc_def_method *m = mc_gen_method_sig(call->defs, %s_TYPE_ID, "
                   "MC_PART_%s, %uu,\n        0x%08xu /* %s */);\n",
                t->name, PT, (unsigned)m->index, (unsigned)m->signature, m->name);
    else
        fprintf(f, "    const mc_def_method *m = mc_gen_method(call->defs, %s_TYPE_ID, MC_PART_%s, "
                   "%uu, \"%s\");\n",
                t->name, PT, (unsigned)m->index, m->name);
    fprintf(f, "    if (!m || m->nargs != %zu || m->nreturns != %zu) {\n"
               "        snprintf(why, whylen, \"definitions do not match generated %s.%s\");\n"
               "        return MC_CALL_ERR_DEFS;\n    }\n",
            m->nargs, m->nreturns, t->name, m->name);
    if (fa) {
        fprintf(f, "    const uint8_t *defc_b = mc_gen_flat_take(args, %zu, \"%s\", why, whylen);\n"
                   "    if (!defc_b)\n        return MC_CALL_ERR_ARGS;\n    (void)defc_b;\n",
                flat_args, m->name);
    } else {
        size_t na = m->nargs ? m->nargs : 1;
        fprintf(f, "    mc_value v[%zu];\n", na);
        fprintf(f, "    if (mc_defs_decode_args(call->defs, m, args, v, why, whylen) != 0)\n"
                   "        return MC_CALL_ERR_ARGS;\n");
    }
    for (size_t i = 0; i < m->nreturns; i++) {
        mc_type_kind k = m->returns[i].type->kind;
        const char *ct = field_ctype(k);
        if (defc_is_generic(k))
            fprintf(f, "    mc_value r%zu;\n    mc_value_init_default(&r%zu, m->returns[%zu].type);\n",
                    i, i, i);
        else if (defc_is_str(k))
            fprintf(f, "    char *r%zu = NULL;\n", i);
        else
            fprintf(f, "    %s%sr%zu;\n    memset(&r%zu, 0, sizeof(r%zu));\n", ct, sep_type(ct), i,
                    i, i);
    }
    fprintf(f, "    int rc = %s_%s_%s(call, (%s_%s *)props", t->name, pt, mn, t->name, pt);
    size_t off = 0;
    for (size_t i = 0; i < m->nargs; i++) {
        mc_type_kind k = m->args[i].type->kind;
        fprintf(f, ", ");
        if (fa) {
            defc_emit_flat_get(f, "defc_b", off, k, defc_scalar_ctype(k));
            off += defc_flat_size(k);
            continue;
        }
        char vb[32];
        snprintf(vb, sizeof(vb), "v[%zu]", i);
        emit_from_value(f, k, vb);
    }
    for (size_t i = 0; i < m->nreturns; i++)
        fprintf(f, ", &r%zu", i);
    fprintf(f, ");\n");
    if (m->nargs && !fa)
        fprintf(f, "    for (size_t i = 0; i < %zu; i++)\n        mc_value_free(&v[i]);\n",
                m->nargs);
    fprintf(f, "    if (rc != 0)\n        snprintf(why, whylen, \"handler %s_%s_%s failed (%%d)\", "
               "rc);\n",
            t->name, pt, m->name);
    if (m->nreturns && fr) {
        fprintf(f, "    if (rc == 0 && reply) {\n"
                   "        uint8_t *defc_p = mc_ostream_append(reply, %zu);\n"
                   "        if (!defc_p)\n            rc = -1;\n        else {\n",
                flat_rets);
        for (size_t i = 0; i < m->nreturns; i++) {
            char rb[32];
            snprintf(rb, sizeof(rb), "r%zu", i);
            defc_emit_flat_put(f, "            ", "defc_p", m->returns[i].type->kind, rb);
        }
        fprintf(f, "            (void)defc_p;\n        }\n    }\n");
    } else if (m->nreturns) {
        fprintf(f, "    if (rc == 0 && reply) {\n        const mc_value rv[%zu] = {\n", m->nreturns);
        for (size_t i = 0; i < m->nreturns; i++) {
            char rb[32];
            snprintf(rb, sizeof(rb), "r%zu", i);
            fprintf(f, "            ");
            defc_emit_view(f, m->returns[i].type->kind, rb, false);
            fprintf(f, ",\n");
        }
        fprintf(f, "        };\n        if (mc_defs_encode_returns(call->defs, m, rv, reply, why, "
                   "whylen) != 0)\n            rc = -1;\n    }\n");
        for (size_t i = 0; i < m->nreturns; i++) {
            mc_type_kind k = m->returns[i].type->kind;
            if (defc_is_generic(k))
                fprintf(f, "    mc_value_free(&r%zu);\n", i);
            else if (defc_is_str(k))
                fprintf(f, "    free(r%zu);\n", i);
        }
    }
    fprintf(f, "    return rc == 0 ? MC_CALL_OK : MC_CALL_ERR_HANDLER;\n}\n\n");
}

static int emit_source(FILE *f, const mc_entity_type_def *t)
{
    char nb[80];
    /* the type's own file, relative: the output does not depend on where --res is */
    fprintf(f, "/* Generated by defc from entity_defs/%s.def: do not edit. */\n", t->name);
    fprintf(f, "#include \"%s.h\"\n\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n",
            t->name);
    for (int part = 0; part < MC_PART_COUNT; part++) {
        emit_props_funcs(f, t, part);
        emit_props_stream(f, t, part);
        emit_props_one(f, t, part);
    }
    fprintf(f, "int mc_gen_%s_props_init(const mc_entity_defs *defs, mc_part part, void *props)\n{\n"
               "    switch (part) {\n",
            t->name);
    for (int part = 0; part < MC_PART_COUNT; part++)
        fprintf(f, "    case MC_PART_%s: return init_%s_%s(defs, props);\n",
                part == 0 ? "BASE" : part == 1 ? "CELL" : "CLIENT", t->name, part_tags[part]);
    fprintf(f, "    }\n    return -1;\n}\n\n");
    fprintf(f, "int mc_gen_%s_props_encode(const mc_entity_defs *defs, mc_part part, const void "
               "*props,\n    bool persistent_only, mc_ostream *os, char *why, size_t whylen)\n{\n"
               "    switch (part) {\n",
            t->name);
    for (int part = 0; part < MC_PART_COUNT; part++)
        fprintf(f, "    case MC_PART_%s: return encode_%s_%s(defs, props, persistent_only, os, why, "
                   "whylen);\n",
                part_enum(part), t->name, part_tags[part]);
    fprintf(f, "    }\n    return MC_CALL_ERR_DEFS;\n}\n\n");
    fprintf(f, "int mc_gen_%s_props_decode(const mc_entity_defs *defs, mc_part part, void *props,\n"
               "    bool persistent_only, mc_istream *is, char *why, size_t whylen)\n{\n"
               "    switch (part) {\n",
            t->name);
    for (int part = 0; part < MC_PART_COUNT; part++)
        fprintf(f, "    case MC_PART_%s: return decode_%s_%s(defs, props, persistent_only, is, why, "
                   "whylen);\n",
                part_enum(part), t->name, part_tags[part]);
    fprintf(f, "    }\n    return MC_CALL_ERR_DEFS;\n}\n\n");
    fprintf(f, "int mc_gen_%s_props_encode_one(const mc_entity_defs *defs, mc_part part, "
               "const void *props,\n    uint16_t index, mc_ostream *os, char *why, size_t whylen)"
               "\n{\n    switch (part) {\n",
            t->name);
    for (int part = 0; part < MC_PART_COUNT; part++)
        fprintf(f, "    case MC_PART_%s: return encode_one_%s_%s(defs, props, index, os, why, "
                   "whylen);\n",
                part_enum(part), t->name, part_tags[part]);
    fprintf(f, "    }\n    return MC_CALL_ERR_DEFS;\n}\n\n");
    fprintf(f, "int mc_gen_%s_props_decode_one(const mc_entity_defs *defs, mc_part part, "
               "void *props,\n    uint16_t index, mc_istream *is, char *why, size_t whylen)"
               "\n{\n    switch (part) {\n",
            t->name);
    for (int part = 0; part < MC_PART_COUNT; part++)
        fprintf(f, "    case MC_PART_%s: return decode_one_%s_%s(defs, props, index, is, why, "
                   "whylen);\n",
                part_enum(part), t->name, part_tags[part]);
    fprintf(f, "    }\n    return MC_CALL_ERR_DEFS;\n}\n\n");
    fprintf(f, "void mc_gen_%s_props_free(mc_part part, void *props)\n{\n    switch (part) {\n",
            t->name);
    for (int part = 0; part < MC_PART_COUNT; part++)
        fprintf(f, "    case MC_PART_%s: free_%s_%s(props); break;\n",
                part == 0 ? "BASE" : part == 1 ? "CELL" : "CLIENT", t->name, part_tags[part]);
    fprintf(f, "    }\n}\n\n");
    for (int part = 0; part < MC_PART_COUNT; part++)
        for (size_t i = 0; i < t->nmethods[part]; i++) {
            emit_sender(f, t, &t->methods[part][i], false);
            if (has_fan_out(&t->methods[part][i]))
                emit_sender(f, t, &t->methods[part][i], true);
        }
    defc_type_containers(t, def_container, f);
    /* A C client compiles the types with MC_GAME_CLIENT_SIDE (mc_add_game_client): property
     * structs and senders, without the server handlers' dispatchers and callbacks. */
    fprintf(f, "#ifndef MC_GAME_CLIENT_SIDE\n");
    for (int part = MC_PART_BASE; part <= MC_PART_CELL; part++) {
        for (size_t i = 0; i < t->nmethods[part]; i++)
            emit_dispatch(f, t, &t->methods[part][i]);
        if (!t->nmethods[part])
            continue;
        fprintf(f, "const mc_game_method mc_gen_%s_%s_methods[%zu] = {\n", t->name,
                part_tags[part], t->nmethods[part]);
        for (size_t i = 0; i < t->nmethods[part]; i++)
            fprintf(f, "    {\"%s\", dispatch_%s_%s_%s},\n", t->methods[part][i].name, t->name,
                    part_tags[part], CN(t->methods[part][i].name, nb));
        fprintf(f, "};\n\n");
    }
    emit_hooks(f, t);
    defc_emit_create_defs(f, t);
    fprintf(f, "#endif /* MC_GAME_CLIENT_SIDE */\n");
    return 0;
}

/* The start of a type's entry in a registration table (server or client): name, id and
 * the property functions; the caller adds the methods and closes it. */
static void emit_type_entry_start(FILE *f, const mc_entity_type_def *t)
{
    fprintf(f, "    {\n        .name = \"%s\",\n        .id = %u,\n", t->name, (unsigned)t->id);
    fprintf(f, "        .props_size = {sizeof(%s_base), sizeof(%s_cell), sizeof(%s_client)},\n",
            t->name, t->name, t->name);
    fprintf(f, "        .props_init = mc_gen_%s_props_init,\n        .props_free = "
               "mc_gen_%s_props_free,\n",
            t->name, t->name);
    fprintf(f, "        .props_encode = mc_gen_%s_props_encode,\n        .props_decode = "
               "mc_gen_%s_props_decode,\n",
            t->name, t->name);
    fprintf(f, "        .props_encode_one = mc_gen_%s_props_encode_one,\n"
               "        .props_decode_one = mc_gen_%s_props_decode_one,\n",
            t->name, t->name);
}

static int emit_module(FILE *f, FILE *h, const mc_entity_defs *defs, const char *module)
{
    size_t nt = mc_defs_type_count(defs);
    fprintf(h, "/* Generated by defc: every entity type of game module %s. */\n", module);
    fprintf(h, "#ifndef MC_GEN_GAME_H\n#define MC_GEN_GAME_H\n\n");
    for (size_t i = 0; i < nt; i++)
        fprintf(h, "#include \"%s.h\"\n", mc_defs_type(defs, (uint16_t)i)->name);
    fprintf(h, "\n#define MC_GAME_DIGEST \"%s\"\n\n#endif\n", mc_defs_digest_hex(defs));

    fprintf(f, "/* Generated by defc: the registration table of game module %s. */\n", module);
    fprintf(f, "#include \"game.h\"\n\n");
    fprintf(f, "/* Not const: defc_hooks_init fills the engine callback slots when the module "
               "loads. */\nstatic mc_game_type defc_types[%zu] = {\n", nt);
    for (size_t i = 0; i < nt; i++) {
        const mc_entity_type_def *t = mc_defs_type(defs, (uint16_t)i);
        emit_type_entry_start(f, t);
        fprintf(f, "        .nmethods = {%zu, %zu, 0},\n", t->nmethods[0], t->nmethods[1]);
        fprintf(f, "        .methods = {%s%s%s, %s%s%s, NULL},\n    },\n",
                t->nmethods[0] ? "mc_gen_" : "NULL", t->nmethods[0] ? t->name : "",
                t->nmethods[0] ? "_base_methods" : "", t->nmethods[1] ? "mc_gen_" : "NULL",
                t->nmethods[1] ? t->name : "", t->nmethods[1] ? "_cell_methods" : "");
    }
    fprintf(f, "};\n\n");
    fprintf(f, "/* The engine callbacks the game defines (resolved when the module was linked). "
               "*/\n__attribute__((constructor)) static void defc_hooks_init(void)\n{\n");
    for (size_t i = 0; i < nt; i++)
        fprintf(f, "    mc_gen_%s_hooks(defc_types[%zu].hooks);\n",
                mc_defs_type(defs, (uint16_t)i)->name, i);
    fprintf(f, "}\n\n");
    fprintf(f, "static const mc_game_module defc_module = {\n    .abi = MC_GAME_ABI,\n"
               "    .name = \"%s\",\n    .digest_hex = MC_GAME_DIGEST,\n    .ntypes = %zu,\n"
               "    .types = defc_types,\n};\n\n",
            module, nt);
    fprintf(f, "__attribute__((visibility(\"default\"))) const mc_game_module *"
               "mc_game_module_get(void)\n{\n    return &defc_module;\n}\n");
    return 0;
}

/* game_client.c: dispatchers and a table for the client part, for a C client. Server game
 * modules do not compile it (they do not implement client handlers). */
static void emit_client(FILE *f, const mc_entity_defs *defs, const char *module)
{
    char nb[80];
    size_t nt = mc_defs_type_count(defs);
    fprintf(f, "/* Generated by defc: client-side dispatch of game %s (for a C client; not part "
               "of a server\n * game module). */\n",
            module);
    fprintf(f, "#include \"game.h\"\n\n#include <stdio.h>\n#include <stdlib.h>\n#include "
               "<string.h>\n\n");
    for (size_t i = 0; i < nt; i++) {
        const mc_entity_type_def *t = mc_defs_type(defs, (uint16_t)i);
        for (size_t k = 0; k < t->nmethods[MC_PART_CLIENT]; k++)
            emit_dispatch(f, t, &t->methods[MC_PART_CLIENT][k]);
        if (!t->nmethods[MC_PART_CLIENT])
            continue;
        fprintf(f, "static const mc_game_method defc_%s_client_methods[%zu] = {\n", t->name,
                t->nmethods[MC_PART_CLIENT]);
        for (size_t k = 0; k < t->nmethods[MC_PART_CLIENT]; k++)
            fprintf(f, "    {\"%s\", dispatch_%s_client_%s},\n", t->methods[MC_PART_CLIENT][k].name,
                    t->name, CN(t->methods[MC_PART_CLIENT][k].name, nb));
        fprintf(f, "};\n\n");
    }
    fprintf(f, "static const mc_game_type defc_client_types[%zu] = {\n", nt);
    for (size_t i = 0; i < nt; i++) {
        const mc_entity_type_def *t = mc_defs_type(defs, (uint16_t)i);
        emit_type_entry_start(f, t);
        fprintf(f, "        .nmethods = {0, 0, %zu},\n", t->nmethods[MC_PART_CLIENT]);
        if (t->nmethods[MC_PART_CLIENT])
            fprintf(f, "        .methods = {NULL, NULL, defc_%s_client_methods},\n    },\n",
                    t->name);
        else
            fprintf(f, "        .methods = {NULL, NULL, NULL},\n    },\n");
    }
    fprintf(f, "};\n\n");
    fprintf(f, "static const mc_game_module defc_client_module = {\n    .abi = MC_GAME_ABI,\n"
               "    .name = \"%s\",\n    .digest_hex = MC_GAME_DIGEST,\n    .client_side = true,\n"
               "    .ntypes = %zu,\n    .types = defc_client_types,\n};\n\n",
            module, nt);
    fprintf(f, "const mc_game_module *mc_game_client_get(void)\n{\n    return &defc_client_module;\n}\n");
}

static FILE *open_out(const char *dir, const char *name, const char *ext, char *path,
                      size_t len)
{
    snprintf(path, len, "%s/%s%s", dir, name, ext);
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "defc: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *path)
{
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "defc: error writing %s\n", path);
        return -1;
    }
    return 0;
}

/* game_values.h / game_values.c: the accessors of every container alias. */
static int emit_values(const mc_entity_defs *defs, const char *out_dir)
{
    char path[4096];
    FILE *h = open_out(out_dir, "game_values", ".h", path, sizeof(path));
    if (!h)
        return -1;
    fprintf(h, "/* Generated by defc from entity_defs/alias.xml: do not edit.\n * Typed accessors "
               "of the FIXED_DICT, ARRAY and TUPLE aliases (common/gen_access.h\n * gives the "
               "statuses). */\n#ifndef MC_GEN_GAME_VALUES_H\n#define MC_GEN_GAME_VALUES_H\n\n"
               "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n\n"
               "#include \"common/game_module.h\"\n#include \"common/gen_access.h\"\n\n");
    defc_alias_containers(defs, decl_container, h);
    fprintf(h, "\n#endif\n");
    if (close_out(h, path) != 0)
        return -1;
    FILE *c = open_out(out_dir, "game_values", ".c", path, sizeof(path));
    if (!c)
        return -1;
    fprintf(c, "/* Generated by defc from entity_defs/alias.xml: do not edit. */\n"
               "#include \"game_values.h\"\n\n#include <string.h>\n\n");
    defc_alias_containers(defs, def_container, c);
    return close_out(c, path);
}

int defc_generate(const mc_entity_defs *defs, const char *out_dir, const char *module)
{
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "defc: cannot create %s: %s\n", out_dir, strerror(errno));
        return -1;
    }
    char path[4096];
    int rc = 0;
    for (size_t i = 0; i < mc_defs_type_count(defs) && rc == 0; i++) {
        const mc_entity_type_def *t = mc_defs_type(defs, (uint16_t)i);
        FILE *f = open_out(out_dir, t->name, ".h", path, sizeof(path));
        if (!f)
            return -1;
        emit_header(f, defs, t);
        if (close_out(f, path) != 0)
            return -1;
        f = open_out(out_dir, t->name, ".c", path, sizeof(path));
        if (!f)
            return -1;
        emit_source(f, t);
        if (close_out(f, path) != 0)
            return -1;
    }
    if (emit_values(defs, out_dir) != 0)
        return -1;
    FILE *all = open_out(out_dir, "game_types", ".c", path, sizeof(path));
    if (!all)
        return -1;
    fprintf(all, "/* Generated by defc: every entity type's source, in one unit for the build. */\n");
    fprintf(all, "#include \"game_values.c\"\n");
    for (size_t i = 0; i < mc_defs_type_count(defs); i++)
        fprintf(all, "#include \"%s.c\"\n", mc_defs_type(defs, (uint16_t)i)->name);
    if (close_out(all, path) != 0)
        return -1;
    FILE *cl = open_out(out_dir, "game_client", ".c", path, sizeof(path));
    if (!cl)
        return -1;
    emit_client(cl, defs, module);
    if (close_out(cl, path) != 0)
        return -1;
    FILE *h = open_out(out_dir, "game", ".h", path, sizeof(path));
    if (!h)
        return -1;
    char cpath[4096];
    FILE *c = open_out(out_dir, "game_module", ".c", cpath, sizeof(cpath));
    if (!c) {
        fclose(h);
        return -1;
    }
    emit_module(c, h, defs, module);
    if (close_out(h, path) != 0)
        rc = -1;
    if (close_out(c, cpath) != 0)
        rc = -1;
    return rc;
}
