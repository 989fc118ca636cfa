/* Parsing one .def file (an entity type or an interface) into a raw_def. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "defs_internal.h"

static const char *const c_keywords[] = {
    "auto",     "break",    "case",     "char",     "const",    "continue", "default",
    "do",       "double",   "else",     "enum",     "extern",   "float",    "for",
    "goto",     "if",       "inline",   "int",      "long",     "register", "restrict",
    "return",   "short",    "signed",   "sizeof",   "static",   "struct",   "switch",
    "typedef",  "union",    "unsigned", "void",     "volatile", "while",    "bool",
    "true",     "false",    "self",     "ctx",      "call",     "reply",
};

/* Names become C identifiers in generated code. */
static bool name_ok(loader *L, xmlNodePtr n, const char *file, const char *what)
{
    const char *nm = xml_name(n);
    if (!ident_ok(nm)) {
        mc_errs_add(&L->errs, file, xml_line(n), nm,
                    "%s name is not a valid identifier (letters, digits, _; at most %u)", what,
                    MC_DEFS_MAX_NAME);
        return false;
    }
    for (size_t i = 0; i < sizeof(c_keywords) / sizeof(c_keywords[0]); i++)
        if (!strcmp(nm, c_keywords[i])) {
            mc_errs_add(&L->errs, file, xml_line(n), nm,
                        "%s name is reserved in generated C code", what);
            return false;
        }
    /* A leading '_' is fine (BigWorld's _timer1): generated code writes such a name as
     * defc_timer1, so user names may not start with defc_ themselves. */
    if (!strncmp(nm, "defc_", 5)) {
        mc_errs_add(&L->errs, file, xml_line(n), nm,
                    "%s name may not start with 'defc_' (reserved for generated code)", what);
        return false;
    }
    return true;
}

static const char *const flag_names[] = {
    "CELL_PRIVATE", "CELL_PUBLIC",         "OTHER_CLIENTS", "OWN_CLIENT",  "BASE",
    "BASE_AND_CLIENT", "CELL_PUBLIC_AND_OWN", "ALL_CLIENTS", "EDITOR_ONLY",
};

static bool one_text(loader *L, xmlNodePtr n, const char *file, char **out)
{
    if (xml_count_children(n)) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n), "expected text, found elements");
        return false;
    }
    *out = xml_text(L, n);
    return *out != NULL;
}

static bool parse_u32(loader *L, xmlNodePtr n, const char *file, uint32_t lo, uint32_t hi,
                      uint32_t *out)
{
    char *t;
    if (!one_text(L, n, file, &t))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (!*t || *end || errno || v < lo || v > hi) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                    "expected a whole number %u..%u, found '%.40s'", lo, hi, t);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static bool is_bytes_type(const mc_def_type *t)
{
    return t->kind == MC_TYPE_STRING || t->kind == MC_TYPE_UNICODE_STRING ||
           t->kind == MC_TYPE_BLOB;
}

static int parse_property(loader *L, raw_def *rd, xmlNodePtr n, mc_def_property *p)
{
    const char *file = rd->file;
    bool ok = name_ok(L, n, file, "property");
    p->name = mc_arena_strdup(L->arena, xml_name(n));
    p->file = file;
    p->line = xml_line(n);
    if (!xml_no_text(L, n, file))
        ok = false;
    xmlNodePtr type_n = NULL, flags_n = NULL, default_n = NULL;
    bool seen[16] = {0};
    static const char *const known[] = {"Type",       "Flags",          "Persistent",
                                        "Default",    "Identifier",     "DatabaseLength",
                                        "Indexed",    "Editable"};
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (!xml_is_elem(c))
            continue;
        const char *nm = xml_name(c);
        size_t k = 0;
        while (k < sizeof(known) / sizeof(known[0]) && strcmp(nm, known[k]))
            k++;
        if (k == sizeof(known) / sizeof(known[0])) {
            mc_errs_add(&L->errs, file, xml_line(c), nm,
                        "unsupported property element (supported: Type, Flags, Persistent, "
                        "Default, Identifier, DatabaseLength, Indexed, Editable)");
            ok = false;
            continue;
        }
        if (seen[k]) {
            mc_errs_add(&L->errs, file, xml_line(c), nm, "given twice");
            ok = false;
            continue;
        }
        seen[k] = true;
        switch (k) {
        case 0: type_n = c; break;
        case 1: flags_n = c; break;
        case 2: if (!xml_bool(L, c, file, &p->persistent)) ok = false; break;
        case 3: default_n = c; break;
        case 4: if (!xml_bool(L, c, file, &p->identifier)) ok = false; break;
        case 5:
            if (!parse_u32(L, c, file, 1, MC_DEFS_MAX_BYTES, &p->db_length))
                ok = false;
            break;
        case 6: if (!xml_bool(L, c, file, &p->indexed)) ok = false; break;
        default: if (!xml_bool(L, c, file, &p->editable)) ok = false; break;
        }
    }
    if (!type_n) {
        mc_errs_add(&L->errs, file, xml_line(n), p->name, "property needs a <Type>");
        return -1;
    }
    p->type = parse_type(L, type_n, file);
    if (!p->type)
        ok = false;
    if (!flags_n) {
        mc_errs_add(&L->errs, file, xml_line(n), p->name, "property needs <Flags>");
        ok = false;
    } else {
        char *f;
        if (!one_text(L, flags_n, file, &f)) {
            ok = false;
        } else {
            size_t k = 0;
            while (k < sizeof(flag_names) / sizeof(flag_names[0]) && strcmp(f, flag_names[k]))
                k++;
            if (k == sizeof(flag_names) / sizeof(flag_names[0])) {
                mc_errs_add(&L->errs, file, xml_line(flags_n), "Flags",
                            "unknown flags '%.40s'", f);
                ok = false;
            } else {
                p->flags = (mc_prop_flags)k;
            }
        }
    }
    if (!ok)
        return -1;
    if (p->db_length && !is_bytes_type(p->type)) {
        mc_errs_add(&L->errs, file, xml_line(n), p->name,
                    "DatabaseLength only applies to STRING, UNICODE_STRING and BLOB");
        ok = false;
    }
    if (p->identifier) {
        if (p->type->kind != MC_TYPE_STRING && p->type->kind != MC_TYPE_UNICODE_STRING) {
            mc_errs_add(&L->errs, file, xml_line(n), p->name,
                        "an Identifier must be a STRING or UNICODE_STRING");
            ok = false;
        }
        if (!p->persistent) {
            mc_errs_add(&L->errs, file, xml_line(n), p->name, "an Identifier must be Persistent");
            ok = false;
        }
    }
    if (p->indexed && !p->persistent) {
        mc_errs_add(&L->errs, file, xml_line(n), p->name, "an Indexed property must be Persistent");
        ok = false;
    }
    if (p->persistent && p->flags == MC_FLAGS_EDITOR_ONLY) {
        mc_errs_add(&L->errs, file, xml_line(n), p->name,
                    "an EDITOR_ONLY property exists on no server part and cannot be Persistent");
        ok = false;
    }
    if (!ok)
        return -1;
    if (default_n) {
        if (parse_default(L, p->type, default_n, file, &p->default_value) != 0)
            return -1;
        char why[200];
        mc_value_limits lim = {.max_bytes = p->db_length, .entity_types = 0};
        if (!mc_value_check(p->type, &p->default_value, &lim, why, sizeof(why))) {
            mc_errs_add(&L->errs, file, xml_line(default_n), "Default", "%s", why);
            mc_value_free(&p->default_value);
            return -1;
        }
    } else if (default_charge(L, p->type->cells, n, file) != 0) {
        return -1;
    } else if (mc_value_init_default(&p->default_value, p->type) != 0) {
        mc_errs_add(&L->errs, file, xml_line(n), p->name, "out of memory");
        return -1;
    }
    return 0;
}

static int parse_arg_list(loader *L, raw_def *rd, xmlNodePtr n, mc_def_arg **out, size_t *nout,
                          bool named)
{
    size_t k = xml_count_children(n);
    mc_def_arg *args = mc_arena_calloc(L->arena, k ? k : 1, sizeof(*args));
    if (!args)
        return -1;
    int rc = 0;
    size_t i = 0;
    name_index seen = {0};
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (!xml_is_elem(c))
            continue;
        mc_def_arg *a = &args[i++];
        if (named) {
            if (!name_ok(L, c, rd->file, "argument")) {
                rc = -1;
                continue;
            }
            a->name = mc_arena_strdup(L->arena, xml_name(c));
            if (name_dup(L, &seen, a->name, i - 1, NULL)) {
                mc_errs_add(&L->errs, rd->file, xml_line(c), xml_name(c),
                            "argument declared twice");
                rc = -1;
            }
        }
        a->type = parse_type(L, c, rd->file);
        if (!a->type)
            rc = -1;
    }
    name_index_free(&seen);
    *out = args;
    *nout = i;
    return rc;
}

static int parse_method(loader *L, raw_def *rd, xmlNodePtr n, mc_part part, mc_def_method *m)
{
    const char *file = rd->file;
    bool ok = name_ok(L, n, file, "method");
    m->name = mc_arena_strdup(L->arena, xml_name(n));
    m->part = part;
    m->file = file;
    m->line = xml_line(n);
    m->exposed_index = -1;
    if (!xml_no_text(L, n, file))
        ok = false;
    size_t nold = 0;
    xmlNodePtr args_n = NULL, ret_n = NULL, exposed_n = NULL;
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (!xml_is_elem(c))
            continue;
        const char *nm = xml_name(c);
        if (!strcmp(nm, "Arg")) {
            nold++;
        } else if (!strcmp(nm, "Args") || !strcmp(nm, "ReturnValues") || !strcmp(nm, "Exposed")) {
            xmlNodePtr *slot = nm[0] == 'A' ? &args_n : nm[0] == 'R' ? &ret_n : &exposed_n;
            if (*slot) {
                mc_errs_add(&L->errs, file, xml_line(c), nm, "given twice");
                ok = false;
            }
            *slot = c;
        } else {
            mc_errs_add(&L->errs, file, xml_line(c), nm,
                        "unsupported method element (supported: Arg, Args, Exposed, "
                        "ReturnValues)");
            ok = false;
        }
    }
    if (nold && args_n) {
        mc_errs_add(&L->errs, file, xml_line(args_n), "Args",
                    "method %s mixes <Arg> and <Args>: use one style", m->name);
        ok = false;
    }
    if (nold) {
        mc_def_arg *args = mc_arena_calloc(L->arena, nold, sizeof(*args));
        if (!args)
            return -1;
        size_t i = 0;
        for (xmlNodePtr c = n->children; c; c = c->next)
            if (xml_is_elem(c) && !strcmp(xml_name(c), "Arg")) {
                args[i].type = parse_type(L, c, file);
                if (!args[i].type)
                    ok = false;
                i++;
            }
        m->args = args;
        m->nargs = nold;
    } else if (args_n) {
        mc_def_arg *args;
        if (!xml_no_text(L, args_n, file) ||
            parse_arg_list(L, rd, args_n, &args, &m->nargs, true) != 0)
            ok = false;
        else
            m->args = args;
    }
    if (exposed_n) {
        char *t;
        if (!one_text(L, exposed_n, file, &t)) {
            ok = false;
        } else if (part == MC_PART_CLIENT) {
            mc_errs_add(&L->errs, file, xml_line(exposed_n), "Exposed",
                        "client methods cannot be exposed (only base and cell methods)");
            ok = false;
        } else if (part == MC_PART_BASE) {
            if (*t && strcmp(t, "OWN_CLIENT")) {
                mc_errs_add(&L->errs, file, xml_line(exposed_n), "Exposed",
                            "a base method can only be exposed to its own client, not '%.40s'",
                            t);
                ok = false;
            }
            m->exposed = MC_EXPOSED_OWN_CLIENT;
        } else if (!*t || !strcmp(t, "ALL_CLIENTS")) {
            m->exposed = MC_EXPOSED_ALL_CLIENTS;
        } else if (!strcmp(t, "OWN_CLIENT")) {
            m->exposed = MC_EXPOSED_OWN_CLIENT;
        } else {
            mc_errs_add(&L->errs, file, xml_line(exposed_n), "Exposed",
                        "expected empty, OWN_CLIENT or ALL_CLIENTS, found '%.40s'", t);
            ok = false;
        }
    }
    if (ret_n) {
        mc_def_arg *rets;
        if (part == MC_PART_CLIENT) {
            mc_errs_add(&L->errs, file, xml_line(ret_n), "ReturnValues",
                        "client methods cannot return values");
            ok = false;
        } else if (exposed_n) {
            mc_errs_add(&L->errs, file, xml_line(ret_n), "ReturnValues",
                        "an exposed method cannot return values to a client");
            ok = false;
        } else if (!xml_no_text(L, ret_n, file) ||
                   parse_arg_list(L, rd, ret_n, &rets, &m->nreturns, true) != 0) {
            ok = false;
        } else if (m->nreturns == 0) {
            mc_errs_add(&L->errs, file, xml_line(ret_n), "ReturnValues",
                        "empty: name at least one return value");
            ok = false;
        } else {
            m->returns = rets;
        }
    }
    /* Handlers take return values as out_<name> pointers after the arguments (both lists
     * hold at most 255 names, checked below, so this stays small). */
    for (size_t r = 0; r < m->nreturns && m->nreturns <= 255 && m->nargs <= 255; r++)
        for (size_t a = 0; a < m->nargs; a++) {
            const char *an = m->args[a].name, *rn = m->returns[r].name;
            if (!an || !rn || strncmp(an, "out_", 4))
                continue;
            /* a return value _x is written out_defc_x (a leading '_' becomes defc_) */
            bool mangled = rn[0] == '_';
            bool clash = mangled ? !strncmp(an + 4, "defc", 4) && !strcmp(an + 8, rn)
                                 : !strcmp(an + 4, rn);
            if (clash) {
                mc_errs_add(&L->errs, file, xml_line(ret_n), rn,
                            "return value %s clashes with argument %s (handlers receive it as "
                            "out_%s%s)",
                            rn, an, mangled ? "defc" : "", rn);
                ok = false;
            }
        }
    if (m->nreturns > 255) {
        mc_errs_add(&L->errs, file, xml_line(ret_n), "ReturnValues", "more than 255 values");
        ok = false;
    }
    if (m->nargs > 255) {
        mc_errs_add(&L->errs, file, xml_line(n), m->name, "more than 255 arguments");
        ok = false;
    }
    return ok ? 0 : -1;
}

static int parse_methods(loader *L, raw_def *rd, xmlNodePtr n, mc_part part)
{
    if (!xml_no_text(L, n, rd->file))
        return -1;
    if (rd->methods[part]) {
        mc_errs_add(&L->errs, rd->file, xml_line(n), xml_name(n), "given twice");
        return -1;
    }
    size_t k = xml_count_children(n);
    if (k > 65535) {
        mc_errs_add(&L->errs, rd->file, xml_line(n), xml_name(n),
                    "%zu methods, at most 65535 per part of an entity type", k);
        return -1;
    }
    mc_def_method *ms = mc_arena_calloc(L->arena, k ? k : 1, sizeof(*ms));
    if (!ms)
        return -1;
    int rc = 0;
    size_t i = 0, j;
    name_index seen = {0};
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (!xml_is_elem(c))
            continue;
        if (parse_method(L, rd, c, part, &ms[i]) != 0)
            rc = -1;
        if (name_dup(L, &seen, ms[i].name, i, &j)) {
            mc_errs_add(&L->errs, rd->file, xml_line(c), ms[i].name,
                        "method declared twice (first at line %d)", ms[j].line);
            rc = -1;
        }
        i++;
    }
    name_index_free(&seen);
    rd->methods[part] = ms;
    rd->nmethods[part] = i;
    return rc;
}

static int parse_volatile(loader *L, raw_def *rd, xmlNodePtr n)
{
    const char *file = rd->file;
    if (!xml_no_text(L, n, file))
        return -1;
    if (rd->has_volatile) {
        mc_errs_add(&L->errs, file, xml_line(n), "Volatile", "given twice");
        return -1;
    }
    rd->has_volatile = true;
    int rc = 0;
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (!xml_is_elem(c))
            continue;
        const char *nm = xml_name(c);
        bool *flag;
        float *dist;
        if (!strcmp(nm, "position")) {
            flag = &rd->vol.position;
            dist = &rd->vol.position_dist;
        } else if (!strcmp(nm, "yaw")) {
            flag = &rd->vol.yaw;
            dist = &rd->vol.yaw_dist;
        } else if (!strcmp(nm, "pitch")) {
            flag = &rd->vol.pitch;
            dist = &rd->vol.pitch_dist;
        } else if (!strcmp(nm, "roll")) {
            flag = &rd->vol.roll;
            dist = &rd->vol.roll_dist;
        } else {
            mc_errs_add(&L->errs, file, xml_line(c), nm,
                        "unsupported volatile member (position, yaw, pitch, roll)");
            rc = -1;
            continue;
        }
        if (*flag) {
            mc_errs_add(&L->errs, file, xml_line(c), nm, "given twice");
            rc = -1;
            continue;
        }
        char *t;
        if (!one_text(L, c, file, &t)) {
            rc = -1;
            continue;
        }
        *flag = true;
        if (*t) {
            char *end;
            double d = strtod(t, &end);
            if (*end || !isfinite(d) || d < 0 || d > 1e9) {
                mc_errs_add(&L->errs, file, xml_line(c), nm,
                            "expected empty (always) or a distance >= 0, found '%.40s'", t);
                rc = -1;
                continue;
            }
            *dist = (float)d;
        }
    }
    return rc;
}

static int parse_names(loader *L, raw_def *rd, xmlNodePtr n, const char ***out, size_t *nout,
                       int **lines, const char *child, const char *what)
{
    const char *file = rd->file;
    if (!xml_no_text(L, n, file))
        return -1;
    size_t k = xml_count_children(n);
    const char **names = mc_arena_calloc(L->arena, k ? k : 1, sizeof(*names));
    int *ls = mc_arena_calloc(L->arena, k ? k : 1, sizeof(*ls));
    if (!names || !ls)
        return -1;
    int rc = 0;
    size_t i = 0;
    name_index seen = {0};
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (!xml_is_elem(c))
            continue;
        const char *nm;
        if (child) {
            char *t;
            if (strcmp(xml_name(c), child)) {
                mc_errs_add(&L->errs, file, xml_line(c), xml_name(c), "expected <%s>", child);
                rc = -1;
                continue;
            }
            if (!one_text(L, c, file, &t)) {
                rc = -1;
                continue;
            }
            if (!ident_ok(t)) {
                mc_errs_add(&L->errs, file, xml_line(c), child, "'%.60s' is not a valid %s name",
                            t, what);
                rc = -1;
                continue;
            }
            nm = t;
        } else {
            if (!name_ok(L, c, file, what) || !xml_no_text(L, c, file) ||
                xml_count_children(c)) {
                if (xml_count_children(c))
                    mc_errs_add(&L->errs, file, xml_line(c), xml_name(c),
                                "a temporary property is an empty element");
                rc = -1;
                continue;
            }
            nm = mc_arena_strdup(L->arena, xml_name(c));
        }
        if (name_dup(L, &seen, nm, i, NULL)) {
            mc_errs_add(&L->errs, file, xml_line(c), xml_name(c), "%s %s listed twice", what, nm);
            rc = -1;
        }
        ls[i] = xml_line(c);
        names[i++] = nm;
    }
    name_index_free(&seen);
    *out = names;
    *nout = i;
    if (lines)
        *lines = ls;
    return rc;
}

static int parse_root(loader *L, raw_def *rd, xmlNodePtr root)
{
    const char *file = rd->file;
    int rc = xml_no_text(L, root, file) ? 0 : -1;
    bool seen_props = false, seen_impl = false, seen_temp = false;
    for (xmlNodePtr c = root->children; c; c = c->next) {
        if (!xml_is_elem(c))
            continue;
        const char *nm = xml_name(c);
        if (!strcmp(nm, "Parent")) {
            char *t;
            if (rd->is_interface) {
                mc_errs_add(&L->errs, file, xml_line(c), nm,
                            "an interface cannot have a Parent (use Implements)");
                rc = -1;
            } else if (rd->parent) {
                mc_errs_add(&L->errs, file, xml_line(c), nm, "given twice");
                rc = -1;
            } else if (!one_text(L, c, file, &t) || !ident_ok(t)) {
                mc_errs_add(&L->errs, file, xml_line(c), nm, "expected an entity type name");
                rc = -1;
            } else {
                rd->parent = t;
                rd->parent_line = xml_line(c);
            }
        } else if (!strcmp(nm, "Implements") || !strcmp(nm, "Interfaces")) {
            if (seen_impl) {
                mc_errs_add(&L->errs, file, xml_line(c), nm, "given twice");
                rc = -1;
                continue;
            }
            seen_impl = true;
            if (parse_names(L, rd, c, &rd->impl, &rd->nimpl, &rd->impl_line, "Interface",
                            "interface") != 0)
                rc = -1;
        } else if (!strcmp(nm, "Properties")) {
            if (seen_props) {
                mc_errs_add(&L->errs, file, xml_line(c), nm, "given twice");
                rc = -1;
                continue;
            }
            seen_props = true;
            if (!xml_no_text(L, c, file))
                rc = -1;
            size_t k = xml_count_children(c);
            if (k > 65535) {
                mc_errs_add(&L->errs, file, xml_line(c), nm,
                            "%zu properties, at most 65535 per entity type", k);
                rc = -1;
                continue;
            }
            rd->props = mc_arena_calloc(L->arena, k ? k : 1, sizeof(mc_def_property));
            if (!rd->props)
                return -1;
            name_index prop_names = {0};
            for (xmlNodePtr p = c->children; p; p = p->next) {
                if (!xml_is_elem(p))
                    continue;
                mc_def_property *prop = &rd->props[rd->nprops];
                if (parse_property(L, rd, p, prop) != 0) {
                    mc_value_free(&prop->default_value);
                    memset(prop, 0, sizeof(*prop));
                    rc = -1;
                    continue;
                }
                size_t j;
                if (name_dup(L, &prop_names, prop->name, rd->nprops, &j)) {
                    mc_errs_add(&L->errs, file, xml_line(p), prop->name,
                                "property declared twice (first at line %d)", rd->props[j].line);
                    rc = -1;
                }
                rd->nprops++;
            }
            name_index_free(&prop_names);
        } else if (!strcmp(nm, "TempProperties")) {
            if (seen_temp) {
                mc_errs_add(&L->errs, file, xml_line(c), nm, "given twice");
                rc = -1;
                continue;
            }
            seen_temp = true;
            if (parse_names(L, rd, c, &rd->temp, &rd->ntemp, NULL, NULL, "temporary property") !=
                0)
                rc = -1;
        } else if (!strcmp(nm, "Volatile")) {
            if (rd->is_interface) {
                mc_errs_add(&L->errs, file, xml_line(c), nm,
                            "an interface cannot declare Volatile (only entity types)");
                rc = -1;
            } else if (parse_volatile(L, rd, c) != 0) {
                rc = -1;
            }
        } else if (!strcmp(nm, "BaseMethods")) {
            if (parse_methods(L, rd, c, MC_PART_BASE) != 0)
                rc = -1;
        } else if (!strcmp(nm, "CellMethods")) {
            if (parse_methods(L, rd, c, MC_PART_CELL) != 0)
                rc = -1;
        } else if (!strcmp(nm, "ClientMethods")) {
            if (parse_methods(L, rd, c, MC_PART_CLIENT) != 0)
                rc = -1;
        } else {
            mc_errs_add(&L->errs, file, xml_line(c), nm,
                        "unsupported element (supported: Parent, Implements, Properties, "
                        "TempProperties, Volatile, ClientMethods, CellMethods, BaseMethods)");
            rc = -1;
        }
    }
    return rc;
}

raw_def *get_raw_def(loader *L, const char *name, bool is_interface, const char *from_file,
                     int from_line)
{
    /* Each file is read once: the index maps names to raw_def pointers (as uintptr_t). */
    name_index *known = &L->raw_names[is_interface];
    size_t at;
    if (name_index_get(known, name, &at) == 0) {
        raw_def *r = (raw_def *)(uintptr_t)at;
        return r->state == 2 ? r : NULL;
    }
    raw_def *rd = mc_arena_alloc(L->arena, sizeof(*rd));
    if (!rd)
        return NULL;
    rd->name = mc_arena_strdup(L->arena, name);
    if (!rd->name || name_dup(L, known, rd->name, (size_t)(uintptr_t)rd, NULL) || L->arena->failed)
        return NULL;
    rd->is_interface = is_interface;
    rd->file = mc_arena_printf(L->arena, "%s/%s.def", is_interface ? L->iface_dir : L->defs_dir,
                               name);
    rd->next = L->defs->raws;
    L->defs->raws = rd;
    rd->state = -1;
    if (!rd->name || !rd->file)
        return NULL;
    bool missing = false;
    xmlDocPtr doc = xml_read(L, rd->file, false, &missing);
    if (missing) {
        size_t fl = strlen(from_file);
        bool from_list = fl >= 12 && !strcmp(from_file + fl - 12, "entities.xml");
        mc_errs_add(&L->errs, from_file, from_line,
                    is_interface ? "Interface" : from_list ? name : "Parent",
                    "%s %s: no file %s", is_interface ? "interface" : "entity type", name,
                    rd->file);
        return NULL;
    }
    if (!doc)
        return NULL;
    int rc = xml_plain(L, doc, rd->file, NULL) ? 0 : -1;
    if (parse_root(L, rd, xmlDocGetRootElement(doc)) != 0)
        rc = -1;
    xmlFreeDoc(doc);
    if (rc != 0)
        return NULL;
    rd->state = 2;
    return rd;
}
