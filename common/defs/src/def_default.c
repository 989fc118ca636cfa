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

static int parse_value_node(loader *L, const mc_def_type *t, xmlNodePtr n, const char *file,
                            uint32_t max_len, mc_value *out)
{
    memset(out, 0, sizeof(*out));
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
        for (xmlNodePtr c = n->children; c; c = c->next) {
            if (!xml_is_elem(c))
                continue;
            size_t k = 0;
            while (k < t->nfields && strcmp(t->fields[k].name, xml_name(c)))
                k++;
            if (k == t->nfields) {
                mc_errs_add(&L->errs, file, xml_line(c), xml_name(c),
                            "no such field in the FIXED_DICT");
                mc_value_free(out);
                return -1;
            }
            mc_value_free(&out->as.list.items[k]);
            if (parse_value_node(L, t->fields[k].type, c, file, t->fields[k].max_len,
                                 &out->as.list.items[k]) != 0) {
                mc_value_free(out);
                return -1;
            }
        }
        return 0;
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
