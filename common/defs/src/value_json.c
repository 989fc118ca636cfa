/* JSON text -> values of def types: the typed mapping. The parser follows the def type, so it
 * only descends into a JSON array or object where the type has a container: nesting is bounded
 * by the type's depth (and MC_JSON_MAX_DEPTH), and nothing is ever skipped unparsed. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "common/error.h"
#include "common/value_json.h"
#include "value_json_internal.h"

_Static_assert(offsetof(mc_def_field, name) == 0, "mc_jlookup reads the name first");

static bool kind_signed(mc_type_kind k)
{
    return k <= MC_TYPE_INT64;
}

static uint64_t kind_max(mc_type_kind k)
{
    switch (k) {
    case MC_TYPE_INT8: return INT8_MAX;
    case MC_TYPE_INT16: return INT16_MAX;
    case MC_TYPE_INT32: return INT32_MAX;
    case MC_TYPE_INT64: return INT64_MAX;
    case MC_TYPE_UINT8: return UINT8_MAX;
    case MC_TYPE_UINT16: return UINT16_MAX;
    case MC_TYPE_UINT32: return UINT32_MAX;
    default: return UINT64_MAX;
    }
}

/* The magnitude of an integer token's digits; false when it exceeds UINT64_MAX. */
static bool magnitude(const char *digits, uint64_t *out)
{
    uint64_t m = 0;
    for (const char *c = digits; *c; c++) {
        uint64_t d = (uint64_t)(*c - '0');
        if (m > (UINT64_MAX - d) / 10)
            return false;
        m = m * 10 + d;
    }
    *out = m;
    return true;
}

/* A JSON integer of kind k into *out (as.i or as.u), exactly, never through a double. */
static int parse_int(mc_jp *p, mc_type_kind k, mc_value *out)
{
    char tok[MC_JSON_MAX_NUMBER + 1];
    bool integral;
    const char *name = mc_type_kind_name(k);
    size_t at = jp_here(p);
    if (!jp_number_next(p))
        return jp_fail(p, "expected an integer for %s, found %s", name, jp_found(p));
    if (jp_number(p, tok, &integral) != 0)
        return -1;
    if (!integral)
        return jp_fail_at(p, at, "%.40s is not an integer (%s takes integers only)", tok, name);
    bool neg = tok[0] == '-';
    uint64_t m;
    /* INT64's lowest is one further from zero than its highest */
    uint64_t limit = neg ? (kind_signed(k) ? kind_max(k) + 1 : 0) : kind_max(k);
    if (!magnitude(tok + neg, &m) || m > limit)
        return jp_fail_at(p, at, "%.40s does not fit %s", tok, name);
    out->kind = k;
    if (!kind_signed(k))
        out->as.u = m;
    else if (neg)
        out->as.i = m ? -(int64_t)(m - 1) - 1 : 0;
    else
        out->as.i = (int64_t)m;
    return 0;
}

/* A JSON number as a double, finite; as a FLOAT32 (rounded to float) when f32. */
static int parse_real(mc_jp *p, bool f32, const char *what, double *out)
{
    char tok[MC_JSON_MAX_NUMBER + 1];
    bool integral;
    size_t at = jp_here(p);
    if (!jp_number_next(p))
        return jp_fail(p, "expected a number for %s, found %s", what, jp_found(p));
    if (jp_number(p, tok, &integral) != 0)
        return -1;
    char *end;
    double d = strtod(tok, &end); /* the token is JSON's grammar: "C" locale digits and '.' */
    if (end != tok + strlen(tok)) /* a process that set another LC_NUMERIC: refuse, not misread */
        return jp_fail_at(p, at, "%.40s is not understood as a number (LC_NUMERIC)", tok);
    /* a float rounds to infinity from FLT_MAX + half its last unit (2^128 - 2^103) up */
    if (!isfinite(d) || (f32 && fabs(d) >= ldexp(1.0, 128) - ldexp(1.0, 103)))
        return jp_fail_at(p, at, "%.40s does not fit %s", tok, f32 ? "FLOAT32" : "FLOAT64");
    if (f32)
        d = (double)(float)d;
    *out = d;
    return 0;
}

/* STRING, UNICODE_STRING, BLOB (base64 text). */
static int parse_bytes(mc_jp *p, mc_type_kind k, mc_value *out)
{
    char *s;
    size_t n;
    size_t at = jp_here(p);
    if (jp_peek(p) != '"')
        return jp_fail(p, "expected a string for %s, found %s", mc_type_kind_name(k), jp_found(p));
    if (jp_string(p, &s, &n) != 0)
        return -1;
    if (k != MC_TYPE_BLOB) {
        out->kind = k;
        out->as.bytes.data = s;
        out->as.bytes.len = (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n);
        return 0;
    }
    size_t cap = n / 4 * 3 + 1, got = 0;
    const char *end = NULL;
    char *bin = malloc(cap);
    if (!bin || sodium_base642bin((unsigned char *)bin, cap, s, n, NULL, &got, &end,
                                  sodium_base64_VARIANT_ORIGINAL) != 0 ||
        end != s + n) {
        free(bin);
        free(s);
        return jp_fail_at(p, at, "BLOB is not base64 (standard alphabet, padded)");
    }
    free(s);
    bin[got] = '\0';
    out->kind = k;
    out->as.bytes.data = bin;
    out->as.bytes.len = (uint32_t)got;
    return 0;
}

static int parse_vector(mc_jp *p, mc_type_kind k, mc_value *out)
{
    unsigned n = (unsigned)(k - MC_TYPE_VECTOR2) + 2;
    if (jp_peek(p) != '[')
        return jp_fail(p, "expected an array of %u numbers for %s, found %s", n,
                       mc_type_kind_name(k), jp_found(p));
    if (jp_enter(p) != 0)
        return -1;
    p->pos++;
    out->kind = k;
    for (unsigned i = 0; i < n; i++) {
        double d;
        if ((i && jp_expect(p, ',', "',' (a VECTOR has more numbers)") != 0) ||
            parse_real(p, true, mc_type_kind_name(k), &d) != 0)
            return -1;
        out->as.vec[i] = (float)d;
    }
    if (jp_expect(p, ']', "']' after the VECTOR's numbers") != 0)
        return -1;
    jp_leave(p);
    return 0;
}

/* "a.b.c.d:port" (decimal, no leading zeros) into host-order ip and port. */
static bool parse_addr(const char *s, uint32_t *ip, uint16_t *port)
{
    uint32_t parts[5];
    for (int i = 0; i < 5; i++) {
        if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
            return false;
        uint32_t v = 0;
        int nd = 0;
        while (*s >= '0' && *s <= '9' && nd < 6) {
            v = v * 10 + (uint32_t)(*s++ - '0');
            nd++;
        }
        if (v > (i < 4 ? 255u : 65535u) || *s != (i < 3 ? '.' : i == 3 ? ':' : '\0'))
            return false;
        parts[i] = v;
        if (i < 4)
            s++;
    }
    *ip = parts[0] << 24 | parts[1] << 16 | parts[2] << 8 | parts[3];
    *port = (uint16_t)parts[4];
    return true;
}

enum { MB_ID, MB_ADDR, MB_COMPONENT, MB_TYPE, MB_KEYS };
static const char *const mb_keys[MB_KEYS] = {"id", "addr", "component", "type"};

/* One member of a mailbox object, the key already read. */
static int mailbox_member(mc_jp *p, int key, mc_mailbox_ref *r, mc_component *c)
{
    mc_value num = {0};
    size_t at = jp_here(p);
    if (key == MB_ID || key == MB_TYPE) {
        if (parse_int(p, key == MB_ID ? MC_TYPE_INT32 : MC_TYPE_UINT16, &num) != 0)
            return -1;
        if (key == MB_TYPE && num.as.u > MC_ENTITY_TYPE_MAX)
            return jp_fail_at(p, at, "mailbox entity type %u is above %u", (unsigned)num.as.u,
                              MC_ENTITY_TYPE_MAX);
        if (key == MB_ID)
            r->id = (int32_t)num.as.i;
        else
            mc_mailbox_ref_set_type(r, (uint16_t)num.as.u);
        return 0;
    }
    char *s, show[64];
    size_t n;
    if (jp_string(p, &s, &n) != 0)
        return -1;
    int rc = 0;
    if (key == MB_ADDR && !parse_addr(s, &r->ip, &r->port))
        rc = jp_fail_at(p, at, "mailbox addr \"%s\" is not IP:PORT", jp_show(show, sizeof(show), s, n));
    if (key == MB_COMPONENT && mc_component_parse(s, c) != 0)
        rc = jp_fail_at(p, at, "unknown mailbox component \"%s\"", jp_show(show, sizeof(show), s, n));
    free(s);
    return rc;
}

static int mailbox_key(mc_jp *p, bool *seen)
{
    char *key, show[64];
    size_t n, at = jp_here(p);
    if (jp_string(p, &key, &n) != 0)
        return -1;
    int k = 0;
    while (k < MB_KEYS && strcmp(key, mb_keys[k]))
        k++;
    if (k == MB_KEYS || seen[k])
        jp_fail_at(p, at, "%s mailbox key \"%s\" (keys: id, addr, component, type)",
                   k == MB_KEYS ? "unknown" : "repeated", jp_show(show, sizeof(show), key, n));
    free(key);
    if (k == MB_KEYS || seen[k])
        return -1;
    seen[k] = true;
    return k;
}

static int parse_mailbox(mc_jp *p, mc_value *out)
{
    out->kind = MC_TYPE_MAILBOX;
    if (jp_null(p))
        return 0;
    if (jp_peek(p) != '{')
        return jp_fail(p, "expected a mailbox object or null, found %s", jp_found(p));
    if (jp_enter(p) != 0)
        return -1;
    p->pos++;
    bool seen[MB_KEYS] = {false};
    mc_component c = MC_COMPONENT_CELL;
    for (int i = 0; i < MB_KEYS; i++) {
        int k;
        if ((i && jp_expect(p, ',', "',' (a mailbox has id, addr, component and type)") != 0) ||
            (k = mailbox_key(p, seen)) < 0 || jp_expect(p, ':', "':'") != 0 ||
            mailbox_member(p, k, &out->as.mailbox, &c) != 0)
            return -1;
    }
    if (jp_expect(p, '}', "'}' after the mailbox's four keys") != 0)
        return -1;
    jp_leave(p);
    mc_mailbox_ref_set_component(&out->as.mailbox, c);
    return 0;
}

/* Grow a list's items to hold one more. */
static int list_room(mc_jp *p, mc_value *out, uint32_t *cap)
{
    if (out->as.list.count < *cap)
        return 0;
    uint32_t ncap = *cap ? *cap * 2 : 4;
    if (ncap > MC_DEFS_MAX_ELEMENTS)
        ncap = MC_DEFS_MAX_ELEMENTS;
    mc_value *items = realloc(out->as.list.items, ncap * sizeof(mc_value));
    if (!items)
        return jp_fail(p, "out of memory");
    memset(items + *cap, 0, (ncap - *cap) * sizeof(mc_value));
    out->as.list.items = items;
    *cap = ncap;
    return 0;
}

static int list_element(mc_jp *p, const mc_def_type *t, mc_value *out, uint32_t *cap)
{
    const char *kind = mc_type_kind_name(t->kind);
    uint32_t n = out->as.list.count;
    if (n >= MC_DEFS_MAX_ELEMENTS || (t->size && n >= t->size))
        return jp_fail(p, "%s takes %s %u elements, found more", kind,
                       t->size ? "exactly" : "at most", t->size ? t->size : MC_DEFS_MAX_ELEMENTS);
    if (list_room(p, out, cap) != 0)
        return -1;
    size_t saved = jp_push_index(p, n);
    if (jv_parse(p, t->of, 0, &out->as.list.items[n]) != 0)
        return -1;
    jp_pop(p, saved);
    out->as.list.count++;
    return 0;
}

static int parse_list(mc_jp *p, const mc_def_type *t, mc_value *out)
{
    const char *kind = mc_type_kind_name(t->kind);
    if (jp_peek(p) != '[')
        return jp_fail(p, "expected an array for %s, found %s", kind, jp_found(p));
    if (jp_enter(p) != 0)
        return -1;
    size_t open = p->pos++;
    out->kind = t->kind;
    uint32_t cap = 0;
    if (jp_peek(p) == ']') {
        p->pos++;
    } else {
        for (;;) {
            if (list_element(p, t, out, &cap) != 0)
                return -1;
            if (jp_peek(p) == ']') {
                p->pos++;
                break;
            }
            if (jp_expect(p, ',', "',' or ']'") != 0)
                return -1;
        }
    }
    if (t->size && out->as.list.count != t->size)
        return jp_fail_at(p, open, "%s takes exactly %u elements, found %u", kind, t->size,
                          out->as.list.count);
    jp_leave(p);
    return 0;
}

/* One "field": value member of a FIXED_DICT object. */
static int dict_member(mc_jp *p, const mc_def_type *t, mc_value *out, bool *seen,
                       mc_jlookup *names)
{
    char *key, show[64];
    size_t n, at = jp_here(p);
    if (jp_string(p, &key, &n) != 0)
        return -1;
    size_t f = jl_find(names, key);
    if (f == t->nfields || seen[f])
        jp_fail_at(p, at, "%s field \"%s\" in %s", f == t->nfields ? "unknown" : "repeated",
                   jp_show(show, sizeof(show), key, n), t->alias ? t->alias : "FIXED_DICT");
    free(key);
    if (f == t->nfields || seen[f] || jp_expect(p, ':', "':'") != 0)
        return -1;
    seen[f] = true;
    size_t saved = jp_push_name(p, ".", t->fields[f].name);
    if (jv_parse(p, t->fields[f].type, t->fields[f].max_len, &out->as.list.items[f]) != 0)
        return -1;
    jp_pop(p, saved);
    return 0;
}

static int dict_defaults(mc_jp *p, const mc_def_type *t, mc_value *out, const bool *seen)
{
    for (size_t f = 0; f < t->nfields; f++) {
        if (seen[f])
            continue;
        if (jp_cells(p, t->fields[f].type->cells) != 0)
            return -1;
        if (mc_value_init_default(&out->as.list.items[f], t->fields[f].type) != 0)
            return jp_fail(p, "out of memory");
    }
    return 0;
}

static int dict_body(mc_jp *p, const mc_def_type *t, mc_value *out, bool *seen,
                     mc_jlookup *names)
{
    if (jp_peek(p) == '}') {
        p->pos++;
        return dict_defaults(p, t, out, seen);
    }
    for (;;) {
        if (dict_member(p, t, out, seen, names) != 0)
            return -1;
        if (jp_peek(p) == '}') {
            p->pos++;
            return dict_defaults(p, t, out, seen);
        }
        if (jp_expect(p, ',', "',' or '}'") != 0)
            return -1;
    }
}

static int parse_dict(mc_jp *p, const mc_def_type *t, mc_value *out)
{
    out->kind = MC_TYPE_FIXED_DICT;
    if (t->allow_none && jp_null(p)) {
        out->as.list.none = true;
        return 0;
    }
    if (jp_peek(p) != '{')
        return jp_fail(p, "expected an object%s for %s, found %s", t->allow_none ? " or null" : "",
                       t->alias ? t->alias : "FIXED_DICT", jp_found(p));
    if (t->nfields > UINT32_MAX || jp_enter(p) != 0)
        return -1;
    p->pos++;
    out->as.list.items = calloc(t->nfields ? t->nfields : 1, sizeof(mc_value));
    bool *seen = calloc(t->nfields ? t->nfields : 1, sizeof(bool));
    if (!out->as.list.items || !seen) {
        free(seen);
        return jp_fail(p, "out of memory");
    }
    out->as.list.count = (uint32_t)t->nfields;
    mc_jlookup names;
    jl_init(&names, t->fields, sizeof(t->fields[0]), t->nfields);
    int rc = dict_body(p, t, out, seen, &names);
    jl_free(&names);
    free(seen);
    if (rc == 0)
        jp_leave(p);
    return rc;
}

static int parse_scalar(mc_jp *p, const mc_def_type *t, mc_value *out)
{
    switch (t->kind) {
    case MC_TYPE_FLOAT32:
    case MC_TYPE_FLOAT64:
        out->kind = t->kind;
        return parse_real(p, t->kind == MC_TYPE_FLOAT32, mc_type_kind_name(t->kind), &out->as.f);
    case MC_TYPE_STRING:
    case MC_TYPE_UNICODE_STRING:
    case MC_TYPE_BLOB:
        return parse_bytes(p, t->kind, out);
    case MC_TYPE_VECTOR2:
    case MC_TYPE_VECTOR3:
    case MC_TYPE_VECTOR4:
        return parse_vector(p, t->kind, out);
    case MC_TYPE_MAILBOX:
        return parse_mailbox(p, out);
    default:
        return parse_int(p, t->kind, out);
    }
}

int jv_parse(mc_jp *p, const mc_def_type *t, uint32_t max_bytes, mc_value *out)
{
    memset(out, 0, sizeof(*out));
    if (jp_cells(p, 1) != 0)
        return -1;
    size_t at = jp_here(p);
    int rc;
    if (t->kind == MC_TYPE_ARRAY || t->kind == MC_TYPE_TUPLE)
        rc = parse_list(p, t, out);
    else if (t->kind == MC_TYPE_FIXED_DICT)
        rc = parse_dict(p, t, out);
    else
        rc = parse_scalar(p, t, out);
    if (rc == 0 && t->kind < MC_TYPE_ARRAY) {
        /* the leaf as a decoder checks it: byte limits, NUL, UTF-8, mailboxes */
        char r[200];
        mc_value_limits lim = {.max_bytes = max_bytes, .entity_types = p->entity_types};
        if (!mc_value_check(t, out, &lim, r, sizeof(r)))
            rc = jp_fail_at(p, at, "%s", r);
    }
    if (rc != 0)
        mc_value_free(out);
    return rc;
}

int mc_value_from_json(const mc_def_type *t, const char *json, size_t len,
                       const mc_value_limits *lim, mc_value *out, char *why, size_t whylen)
{
    mc_jp p;
    mc_value_limits l = lim ? *lim : (mc_value_limits){0};
    jp_init(&p, json, len, l.entity_types, why, whylen);
    if (jv_parse(&p, t, l.max_bytes, out) != 0)
        return -1;
    char r[200];
    int rc = jp_end(&p);
    if (rc == 0 && !mc_value_check(t, out, &l, r, sizeof(r)))
        rc = jp_fail_at(&p, 0, "%s", r); /* the leaves were checked already: a safety net */
    if (rc != 0)
        mc_value_free(out);
    return rc;
}
