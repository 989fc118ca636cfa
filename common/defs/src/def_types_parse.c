/* Parsing type specifications and the alias file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "defs_internal.h"

static const struct {
    const char *name;
    mc_type_kind kind;
} builtin_names[] = {
    {"INT8", MC_TYPE_INT8},         {"INT16", MC_TYPE_INT16},
    {"INT32", MC_TYPE_INT32},       {"INT64", MC_TYPE_INT64},
    {"UINT8", MC_TYPE_UINT8},       {"UINT16", MC_TYPE_UINT16},
    {"UINT32", MC_TYPE_UINT32},     {"UINT64", MC_TYPE_UINT64},
    {"FLOAT32", MC_TYPE_FLOAT32},   {"FLOAT", MC_TYPE_FLOAT32},
    {"FLOAT64", MC_TYPE_FLOAT64},   {"STRING", MC_TYPE_STRING},
    {"UNICODE_STRING", MC_TYPE_UNICODE_STRING},
    {"BLOB", MC_TYPE_BLOB},         {"VECTOR2", MC_TYPE_VECTOR2},
    {"VECTOR3", MC_TYPE_VECTOR3},   {"VECTOR4", MC_TYPE_VECTOR4},
    {"MAILBOX", MC_TYPE_MAILBOX},   {"ARRAY", MC_TYPE_ARRAY},
    {"TUPLE", MC_TYPE_TUPLE},       {"FIXED_DICT", MC_TYPE_FIXED_DICT},
};

/* Types from BigWorld and KBEngine we know and refuse, with the reason. */
static const struct {
    const char *name;
    const char *why;
} refused_names[] = {
    {"PYTHON", "holds arbitrary pickled Python objects, which C cannot decode"},
    {"USER_TYPE", "is implemented by Python code (use FIXED_DICT)"},
    {"CLASS", "is a Python class type (use FIXED_DICT)"},
    {"PY_DICT", "holds Python objects (use FIXED_DICT)"},
    {"PY_TUPLE", "holds Python objects (use TUPLE)"},
    {"PY_LIST", "holds Python objects (use ARRAY)"},
    {"UDO_REF", "(user data object references) is not supported"},
    {"PATROL_PATH", "is not supported"},
    {"ENTITYCALL", "is KBEngine's name: write MAILBOX"},
    {"UNICODE", "is KBEngine's name: write UNICODE_STRING"},
    {"ENTITY_COMPONENT", "is not supported"},
    {"BOOL", "is not a BigWorld type: use UINT8 or INT8"},
};

static size_t wire_min(mc_type_kind k)
{
    switch (k) {
    case MC_TYPE_INT8:
    case MC_TYPE_UINT8:
        return 1;
    case MC_TYPE_INT16:
    case MC_TYPE_UINT16:
        return 2;
    case MC_TYPE_INT32:
    case MC_TYPE_UINT32:
    case MC_TYPE_FLOAT32:
        return 4;
    case MC_TYPE_INT64:
    case MC_TYPE_UINT64:
    case MC_TYPE_FLOAT64:
    case MC_TYPE_VECTOR2:
        return 8;
    case MC_TYPE_VECTOR3:
        return 12;
    case MC_TYPE_VECTOR4:
        return 16;
    case MC_TYPE_MAILBOX:
        return MC_MAILBOX_WIRE_SIZE;
    default:
        return 1; /* length / count / flag byte */
    }
}

void types_init_builtins(loader *L)
{
    for (int k = 0; k <= MC_TYPE_MAILBOX; k++) {
        if (k == MC_TYPE_ARRAY || k == MC_TYPE_TUPLE || k == MC_TYPE_FIXED_DICT)
            continue;
        mc_def_type *t = mc_arena_alloc(L->arena, sizeof(*t));
        if (!t)
            return;
        t->kind = (mc_type_kind)k;
        t->min_wire_size = wire_min(t->kind);
        t->depth = 1;
        t->nodes = 1;
        t->cells = 1;
        L->builtin[k] = t;
    }
}

/* Saturating size arithmetic for the expanded size of nested types. */
static size_t sat_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t sat_mul(size_t a, size_t b)
{
    return b && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

static const mc_def_type *resolve_alias(loader *L, alias_entry *a);

static alias_entry *find_alias(loader *L, const char *name)
{
    size_t i;
    return name_index_get(&L->alias_names, name, &i) == 0 ? &L->defs->aliases[i] : NULL;
}

static bool parse_count(loader *L, xmlNodePtr n, const char *file, uint32_t *out)
{
    char *t = xml_text(L, n);
    if (!t)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (!*t || *end || errno || xml_count_children(n)) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                    "expected a whole number, found '%.40s'", t);
        return false;
    }
    if (v < 1 || v > (long long)MC_DEFS_MAX_ELEMENTS) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n), "%lld is out of range 1..%u", v,
                    MC_DEFS_MAX_ELEMENTS);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static const mc_def_type *parse_sequence(loader *L, xmlNodePtr n, const char *file,
                                         mc_type_kind kind)
{
    const mc_def_type *of = NULL;
    uint32_t size = 0;
    bool ok = true, seen_of = false, seen_size = false;
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (!xml_is_elem(c))
            continue;
        if (!strcmp(xml_name(c), "of")) {
            if (seen_of) {
                mc_errs_add(&L->errs, file, xml_line(c), "of", "given twice");
                ok = false;
            }
            seen_of = true;
            of = parse_type(L, c, file);
            if (!of)
                ok = false;
        } else if (!strcmp(xml_name(c), "size")) {
            if (seen_size) {
                mc_errs_add(&L->errs, file, xml_line(c), "size", "given twice");
                ok = false;
            }
            seen_size = true;
            if (!parse_count(L, c, file, &size))
                ok = false;
        } else if (!strcmp(xml_name(c), "persistAsBlob")) {
            mc_errs_add(&L->errs, file, xml_line(c), xml_name(c),
                        "not supported (arrays are stored element by element)");
            ok = false;
        } else {
            mc_errs_add(&L->errs, file, xml_line(c), xml_name(c),
                        "unexpected element in %s (only <of> and <size>)",
                        mc_type_kind_name(kind));
            ok = false;
        }
    }
    if (!seen_of && ok) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n), "%s needs an <of> element type",
                    mc_type_kind_name(kind));
        ok = false;
    }
    if (!ok)
        return NULL;
    mc_def_type *t = mc_arena_alloc(L->arena, sizeof(*t));
    if (!t)
        return NULL;
    t->kind = kind;
    t->of = of;
    t->depth = of->depth + 1;
    t->size = size;
    /* A count, then size elements (none when the size is open). */
    t->min_wire_size = sat_add(1, sat_mul(size, of->min_wire_size));
    t->nodes = sat_add(1, of->nodes);
    t->cells = sat_add(1, sat_mul(size, of->cells));
    return t;
}

static const mc_def_type *parse_fixed_dict(loader *L, xmlNodePtr n, const char *file)
{
    xmlNodePtr props = NULL;
    bool ok = true, allow_none = false, seen_none = false;
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (!xml_is_elem(c))
            continue;
        const char *nm = xml_name(c);
        if (!strcmp(nm, "Properties")) {
            if (props) {
                mc_errs_add(&L->errs, file, xml_line(c), nm, "given twice");
                ok = false;
            }
            props = c;
        } else if (!strcmp(nm, "AllowNone")) {
            if (seen_none) {
                mc_errs_add(&L->errs, file, xml_line(c), nm, "given twice");
                ok = false;
            }
            seen_none = true;
            if (!xml_bool(L, c, file, &allow_none))
                ok = false;
        } else if (!strcmp(nm, "implementedBy")) {
            mc_errs_add(&L->errs, file, xml_line(c), nm,
                        "not supported (a Python converter class; FIXED_DICT values are "
                        "plain field lists here)");
            ok = false;
        } else {
            mc_errs_add(&L->errs, file, xml_line(c), nm,
                        "unexpected element in FIXED_DICT (only <Properties> and <AllowNone>)");
            ok = false;
        }
    }
    if (!props) {
        if (ok)
            mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                        "FIXED_DICT needs a <Properties> element");
        return NULL;
    }
    if (!xml_no_text(L, props, file))
        ok = false;
    size_t nf = xml_count_children(props);
    if (nf == 0) {
        mc_errs_add(&L->errs, file, xml_line(props), "Properties",
                    "FIXED_DICT needs at least one field");
        return NULL;
    }
    mc_def_field *fields = mc_arena_calloc(L->arena, nf, sizeof(*fields));
    if (!fields)
        return NULL;
    size_t i = 0;
    name_index seen = {0};
    for (xmlNodePtr f = props->children; f; f = f->next) {
        if (!xml_is_elem(f))
            continue;
        mc_def_field *fd = &fields[i++];
        fd->name = mc_arena_strdup(L->arena, xml_name(f));
        if (!ident_ok(fd->name)) {
            mc_errs_add(&L->errs, file, xml_line(f), xml_name(f),
                        "field name is not a valid identifier");
            ok = false;
        }
        if (name_dup(L, &seen, fd->name, i - 1, NULL)) {
            mc_errs_add(&L->errs, file, xml_line(f), xml_name(f), "field declared twice");
            ok = false;
        }
        xmlNodePtr type_node = NULL;
        if (!xml_no_text(L, f, file))
            ok = false;
        for (xmlNodePtr c = f->children; c; c = c->next) {
            if (!xml_is_elem(c))
                continue;
            if (!strcmp(xml_name(c), "Type")) {
                if (type_node) {
                    mc_errs_add(&L->errs, file, xml_line(c), "Type", "given twice");
                    ok = false;
                }
                type_node = c;
                fd->type = parse_type(L, c, file);
                if (!fd->type)
                    ok = false;
            } else if (!strcmp(xml_name(c), "DatabaseLength")) {
                uint32_t v = 0;
                char *t = xml_text(L, c);
                char *end;
                long long x = t ? strtoll(t, &end, 10) : 0;
                if (!t || !*t || *end || x < 1 || x > (long long)MC_DEFS_MAX_BYTES) {
                    mc_errs_add(&L->errs, file, xml_line(c), "DatabaseLength",
                                "expected a length 1..%u", MC_DEFS_MAX_BYTES);
                    ok = false;
                } else {
                    v = (uint32_t)x;
                }
                fd->max_len = v;
            } else if (!strcmp(xml_name(c), "Persistent")) {
                bool b;
                if (!xml_bool(L, c, file, &b))
                    ok = false;
                else if (!b) {
                    mc_errs_add(&L->errs, file, xml_line(c), "Persistent",
                                "non-persistent FIXED_DICT fields are not supported");
                    ok = false;
                }
            } else {
                mc_errs_add(&L->errs, file, xml_line(c), xml_name(c),
                            "unexpected element in a FIXED_DICT field (only <Type>, "
                            "<DatabaseLength>, <Persistent>)");
                ok = false;
            }
        }
        if (!type_node && ok) {
            mc_errs_add(&L->errs, file, xml_line(f), xml_name(f), "field needs a <Type>");
            ok = false;
        }
        if (ok && fd->max_len && fd->type->kind != MC_TYPE_STRING &&
            fd->type->kind != MC_TYPE_UNICODE_STRING && fd->type->kind != MC_TYPE_BLOB) {
            mc_errs_add(&L->errs, file, xml_line(f), xml_name(f),
                        "DatabaseLength only applies to STRING, UNICODE_STRING and BLOB");
            ok = false;
        }
    }
    name_index_free(&seen);
    if (!ok)
        return NULL;
    mc_def_type *t = mc_arena_alloc(L->arena, sizeof(*t));
    if (!t)
        return NULL;
    t->kind = MC_TYPE_FIXED_DICT;
    t->allow_none = allow_none;
    t->nfields = nf;
    t->fields = fields;
    size_t min = 0, nodes = 1, cells = 1;
    unsigned depth = 0;
    for (size_t k = 0; k < nf; k++) {
        const mc_def_type *ft = fields[k].type;
        min = sat_add(min, ft->min_wire_size);
        nodes = sat_add(nodes, ft->nodes);
        cells = sat_add(cells, ft->cells);
        if (ft->depth > depth)
            depth = ft->depth;
    }
    t->min_wire_size = allow_none ? 1 : min; /* nf >= 1, so min >= 1 */
    t->nodes = nodes;
    t->cells = cells;
    t->depth = depth + 1;
    return t;
}

static const mc_def_type *parse_type_inner(loader *L, xmlNodePtr n, const char *file);

const mc_def_type *parse_type(loader *L, xmlNodePtr n, const char *file)
{
    if (L->depth >= 4 * MC_DEFS_MAX_DEPTH) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                    "types nest too deeply (aliases and containers)");
        return NULL;
    }
    L->depth++;
    const mc_def_type *t = parse_type_inner(L, n, file);
    L->depth--;
    if (t && t->depth > MC_DEFS_MAX_DEPTH) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                    "containers nest %u deep, limit %u", t->depth, MC_DEFS_MAX_DEPTH);
        return NULL;
    }
    /* Aliases used inside aliases multiply: bound the expanded type (its text in the
     * digest, the work per value) and its default value before anything builds them. */
    if (t && t->nodes > MC_DEFS_MAX_TYPE_NODES) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                    "type has more than %u parts with aliases expanded",
                    MC_DEFS_MAX_TYPE_NODES);
        return NULL;
    }
    if (t && t->cells > MC_DEFS_MAX_CELLS) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                    "default value would hold more than %u values (fixed sizes multiplied)",
                    MC_DEFS_MAX_CELLS);
        return NULL;
    }
    return t;
}

static const mc_def_type *parse_type_inner(loader *L, xmlNodePtr n, const char *file)
{
    char *text = xml_text(L, n);
    if (!text)
        return NULL;
    if (!*text) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n), "missing type name");
        return NULL;
    }
    for (char *p = text; *p; p++)
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
            mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                        "type '%.60s' is not one word", text);
            return NULL;
        }
    for (size_t i = 0; i < sizeof(refused_names) / sizeof(refused_names[0]); i++)
        if (!strcmp(text, refused_names[i].name)) {
            mc_errs_add(&L->errs, file, xml_line(n), xml_name(n), "type %s is not supported: %s %s",
                        text, text, refused_names[i].why);
            return NULL;
        }
    for (size_t i = 0; i < sizeof(builtin_names) / sizeof(builtin_names[0]); i++) {
        if (strcmp(text, builtin_names[i].name))
            continue;
        mc_type_kind k = builtin_names[i].kind;
        if (k == MC_TYPE_ARRAY || k == MC_TYPE_TUPLE)
            return parse_sequence(L, n, file, k);
        if (k == MC_TYPE_FIXED_DICT)
            return parse_fixed_dict(L, n, file);
        for (xmlNodePtr c = n->children; c; c = c->next)
            if (xml_is_elem(c)) {
                mc_errs_add(&L->errs, file, xml_line(c), xml_name(c),
                            "unexpected element inside a %s type", text);
                return NULL;
            }
        return L->builtin[k];
    }
    alias_entry *a = find_alias(L, text);
    if (a) {
        for (xmlNodePtr c = n->children; c; c = c->next)
            if (xml_is_elem(c)) {
                mc_errs_add(&L->errs, file, xml_line(c), xml_name(c),
                            "unexpected element after alias %s", text);
                return NULL;
            }
        const mc_def_type *t = resolve_alias(L, a);
        if (!t && a->state == 1)
            mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                        "alias %s refers to itself", text);
        else if (!t && a->state == -1 && file != a->file)
            mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                        "alias %s is invalid (see its error)", text);
        return t;
    }
    mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                "unknown type '%.60s' (not a supported type and no alias of that name)", text);
    return NULL;
}

static const mc_def_type *resolve_alias(loader *L, alias_entry *a)
{
    if (a->state == 2)
        return a->type;
    if (a->state != 0)
        return NULL; /* failed, or a cycle (reported by the caller) */
    a->state = 1;
    const mc_def_type *t = parse_type(L, a->node, a->file);
    if (!t) {
        a->state = -1;
        return NULL;
    }
    /* An alias names its own copy so the alias name can be reported. */
    mc_def_type *copy = mc_arena_alloc(L->arena, sizeof(*copy));
    if (!copy) {
        a->state = -1;
        return NULL;
    }
    *copy = *t;
    copy->alias = a->name;
    a->type = copy;
    a->state = 2;
    return copy;
}

int load_aliases(loader *L)
{
    bool missing = false;
    const char *path = mc_arena_printf(L->arena, "%s/alias.xml", L->defs_dir);
    const char *kbe = mc_arena_printf(L->arena, "%s/types.xml", L->defs_dir);
    if (!path || !kbe)
        return -1;
    xmlDocPtr doc = xml_read(L, path, false, &missing);
    if (missing) {
        bool missing2 = false;
        doc = xml_read(L, kbe, false, &missing2);
        if (missing2)
            return 0; /* no aliases */
        path = kbe;
    } else if (access(kbe, F_OK) == 0) {
        mc_errs_add(&L->errs, kbe, 0, NULL,
                    "both alias.xml and types.xml exist: keep one of them");
    }
    if (!doc)
        return -1;
    L->alias_doc = doc;
    L->alias_file = path;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    bool plain = xml_plain(L, doc, path, NULL);
    if (!xml_no_text(L, root, path))
        return -1;
    size_t n = xml_count_children(root);
    L->defs->aliases = mc_arena_calloc(L->arena, n ? n : 1, sizeof(alias_entry));
    if (!L->defs->aliases)
        return -1;
    int rc = 0;
    for (xmlNodePtr c = root->children; c; c = c->next) {
        if (!xml_is_elem(c))
            continue;
        const char *nm = xml_name(c);
        if (!ident_ok(nm)) {
            mc_errs_add(&L->errs, path, xml_line(c), nm, "alias name is not a valid identifier");
            rc = -1;
            continue;
        }
        bool clash = false;
        for (size_t i = 0; i < sizeof(builtin_names) / sizeof(builtin_names[0]); i++)
            if (!strcmp(nm, builtin_names[i].name))
                clash = true;
        /* the key is the arena copy: the alias document is freed after loading aliases */
        const char *copy = clash ? NULL : mc_arena_strdup(L->arena, nm);
        if (!clash && !copy)
            return -1;
        if (!clash)
            clash = name_dup(L, &L->alias_names, copy, L->defs->naliases, NULL);
        if (clash) {
            mc_errs_add(&L->errs, path, xml_line(c), nm,
                        "alias declared twice or named like a built-in type");
            rc = -1;
            continue;
        }
        alias_entry *a = &L->defs->aliases[L->defs->naliases++];
        a->name = copy;
        a->file = path;
        a->node = c;
    }
    if (!plain)
        rc = -1;
    for (size_t i = 0; i < L->defs->naliases; i++) {
        alias_entry *a = &L->defs->aliases[i];
        if (a->state == 0 && !resolve_alias(L, a))
            rc = -1;
        else if (a->state != 2)
            rc = -1;
    }
    return rc;
}
