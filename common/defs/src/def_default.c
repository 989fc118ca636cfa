/* <Default> values written in def files. */
#include <errno.h>
#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "defs_internal.h"

static int bad(loader *L, xmlNodePtr n, const char *file, const mc_def_type *t, const char *text)
{
    mc_errs_add(&L->errs, file, xml_line(n), xml_name(n), "'%.60s' is not a valid %s default",
                text, mc_type_kind_name(t->kind));
    return -1;
}

static int parse_text_value(loader *L, const mc_def_type *t, xmlNodePtr n, const char *file,
                            uint32_t max_len, mc_value *out)
{
    char *text = xml_text(L, n);
    if (!text)
        return -1;
    memset(out, 0, sizeof(*out));
    out->kind = t->kind;
    char *end = NULL;
    errno = 0;
    switch (t->kind) {
    case MC_TYPE_INT8:
    case MC_TYPE_INT16:
    case MC_TYPE_INT32:
    case MC_TYPE_INT64:
        if (!*text)
            return 0;
        out->as.i = strtoll(text, &end, 10);
        if (*end || errno)
            return bad(L, n, file, t, text);
        break;
    case MC_TYPE_UINT8:
    case MC_TYPE_UINT16:
    case MC_TYPE_UINT32:
    case MC_TYPE_UINT64:
        if (!*text)
            return 0;
        if (text[0] == '-')
            return bad(L, n, file, t, text);
        out->as.u = strtoull(text, &end, 10);
        if (*end || errno)
            return bad(L, n, file, t, text);
        break;
    case MC_TYPE_FLOAT32:
    case MC_TYPE_FLOAT64:
        if (!*text)
            return 0;
        out->as.f = strtod(text, &end);
        if (*end || !isfinite(out->as.f) ||
            (t->kind == MC_TYPE_FLOAT32 && fabs(out->as.f) > 3.4028234663852886e38))
            return bad(L, n, file, t, text);
        if (t->kind == MC_TYPE_FLOAT32)
            out->as.f = (float)out->as.f;
        break;
    case MC_TYPE_VECTOR2:
    case MC_TYPE_VECTOR3:
    case MC_TYPE_VECTOR4: {
        int want = t->kind == MC_TYPE_VECTOR2 ? 2 : t->kind == MC_TYPE_VECTOR3 ? 3 : 4;
        if (!*text)
            return 0;
        char *p = text;
        for (int i = 0; i < want; i++) {
            double d = strtod(p, &end);
            if (end == p || !isfinite(d) || fabs(d) > 3.4028234663852886e38)
                return bad(L, n, file, t, text);
            out->as.vec[i] = (float)d;
            p = end;
            while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\n' || *p == '\r')
                p++;
        }
        if (*p)
            return bad(L, n, file, t, text);
        break;
    }
    case MC_TYPE_STRING:
    case MC_TYPE_UNICODE_STRING:
        if (mc_value_set_bytes(out, t->kind, text, strlen(text)) != 0)
            return -1;
        break;
    case MC_TYPE_BLOB: {
        size_t cap = strlen(text) + 1, len = 0;
        unsigned char *buf = malloc(cap);
        if (!buf)
            return -1;
        if (sodium_base642bin(buf, cap, text, strlen(text), " \t\r\n", &len, NULL,
                              sodium_base64_VARIANT_ORIGINAL) != 0) {
            free(buf);
            mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                        "BLOB default must be base64");
            return -1;
        }
        int rc = mc_value_set_bytes(out, t->kind, buf, len);
        free(buf);
        if (rc != 0)
            return -1;
        break;
    }
    default:
        return bad(L, n, file, t, text);
    }
    char why[256];
    mc_value_limits lim = {.max_bytes = max_len, .entity_types = 0};
    if (!mc_value_check(t, out, &lim, why, sizeof(why))) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n), "bad default: %s", why);
        mc_value_free(out);
        return -1;
    }
    return 0;
}

int default_charge(loader *L, size_t cells, xmlNodePtr n, const char *file)
{
    if (cells > MC_DEFS_MAX_CELLS - L->default_cells) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                    "default values of all properties together would hold more than %u values",
                    MC_DEFS_MAX_CELLS);
        return -1;
    }
    L->default_cells += cells;
    return 0;
}

static int parse_value_node(loader *L, const mc_def_type *t, xmlNodePtr n, const char *file,
                            uint32_t max_len, mc_value *out)
{
    memset(out, 0, sizeof(*out));
    /* A FIXED_DICT is built whole before its given fields replace defaults; an empty
     * sequence takes its type default. Everything else is one value per element. */
    bool whole = t->kind == MC_TYPE_FIXED_DICT ||
                 ((t->kind == MC_TYPE_ARRAY || t->kind == MC_TYPE_TUPLE) && !xml_count_children(n));
    if (default_charge(L, whole ? t->cells : 1, n, file) != 0)
        return -1;
    if (t->kind == MC_TYPE_MAILBOX) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                    "a MAILBOX cannot have a default (it is always None at first)");
        return -1;
    }
    if (t->kind == MC_TYPE_ARRAY || t->kind == MC_TYPE_TUPLE) {
        if (!xml_no_text(L, n, file))
            return -1;
        size_t count = xml_count_children(n);
        if (count > MC_DEFS_MAX_ELEMENTS || (t->size && count != t->size && count != 0)) {
            mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                        "default has %zu items, the %s holds %u", count,
                        mc_type_kind_name(t->kind), t->size);
            return -1;
        }
        if (count == 0)
            return mc_value_init_default(out, t);
        out->kind = t->kind;
        out->as.list.items = calloc(count, sizeof(mc_value));
        if (!out->as.list.items)
            return -1;
        out->as.list.count = (uint32_t)count;
        size_t i = 0;
        for (xmlNodePtr c = n->children; c; c = c->next) {
            if (!xml_is_elem(c))
                continue;
            if (strcmp(xml_name(c), "item")) {
                mc_errs_add(&L->errs, file, xml_line(c), xml_name(c),
                            "array defaults are a list of <item> elements");
                mc_value_free(out);
                return -1;
            }
            if (parse_value_node(L, t->of, c, file, 0, &out->as.list.items[i++]) != 0) {
                mc_value_free(out);
                return -1;
            }
        }
        return 0;
    }
    if (t->kind == MC_TYPE_FIXED_DICT) {
        if (!xml_no_text(L, n, file))
            return -1;
        if (xml_count_children(n) == 0 && t->allow_none) {
            out->kind = t->kind;
            out->as.list.none = true;
            return 0;
        }
        out->kind = t->kind;
        out->as.list.items = calloc(t->nfields, sizeof(mc_value));
        if (!out->as.list.items)
            return -1;
        out->as.list.count = (uint32_t)t->nfields;
        for (size_t k = 0; k < t->nfields; k++)
            if (mc_value_init_default(&out->as.list.items[k], t->fields[k].type) != 0) {
                mc_value_free(out);
                return -1;
            }
        /* Field positions by name (their cost is in t->cells, charged above); a field given
         * twice is refused rather than the last one silently winning. */
        name_index fields = {0};
        int rc = 0;
        for (size_t k = 0; k < t->nfields && rc == 0; k++)
            if (name_index_put(&fields, t->fields[k].name, k, NULL) < 0) {
                L->arena->failed = 1; /* reported as out of memory */
                rc = -1;
            }
        name_index given = {0};
        for (xmlNodePtr c = n->children; c && rc == 0; c = c->next) {
            if (!xml_is_elem(c))
                continue;
            size_t k, first;
            if (name_index_get(&fields, xml_name(c), &k) != 0) {
                mc_errs_add(&L->errs, file, xml_line(c), xml_name(c),
                            "no such field in the FIXED_DICT");
                rc = -1;
            } else if (name_dup(L, &given, t->fields[k].name, (size_t)xml_line(c), &first)) {
                mc_errs_add(&L->errs, file, xml_line(c), xml_name(c),
                            "field given twice in the default (first at line %zu)", first);
                rc = -1;
            } else {
                mc_value_free(&out->as.list.items[k]);
                rc = parse_value_node(L, t->fields[k].type, c, file, t->fields[k].max_len,
                                      &out->as.list.items[k]);
            }
        }
        name_index_free(&fields);
        name_index_free(&given);
        if (rc != 0)
            mc_value_free(out);
        return rc;
    }
    if (xml_count_children(n)) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                    "a %s default is plain text, found elements", mc_type_kind_name(t->kind));
        return -1;
    }
    return parse_text_value(L, t, n, file, max_len, out);
}

int parse_default(loader *L, const mc_def_type *t, xmlNodePtr n, const char *file,
                  mc_value *out)
{
    return parse_value_node(L, t, n, file, 0, out);
}
