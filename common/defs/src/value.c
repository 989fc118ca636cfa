/* Values of def types: defaults, copies, checks, encoding and decoding. */
#include "common/value.h"

#include "strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void why_set(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void why_set(char *why, size_t whylen, const char *fmt, ...)
{
    if (!why || !whylen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
}

static bool is_bytes(mc_type_kind k)
{
    return k == MC_TYPE_STRING || k == MC_TYPE_UNICODE_STRING || k == MC_TYPE_BLOB;
}

static bool is_list(mc_type_kind k)
{
    return k == MC_TYPE_ARRAY || k == MC_TYPE_TUPLE || k == MC_TYPE_FIXED_DICT;
}

static const char *const kind_names[] = {
    "INT8",    "INT16",   "INT32",   "INT64",          "UINT8",  "UINT16",  "UINT32",
    "UINT64",  "FLOAT32", "FLOAT64", "UNICODE_STRING", "BLOB",   "VECTOR2", "VECTOR3",
    "VECTOR4", "MAILBOX", "ARRAY",   "TUPLE",          "FIXED_DICT",
};

const char *mc_type_kind_name(mc_type_kind kind)
{
    if (kind == MC_TYPE_STRING)
        return "STRING";
    if ((unsigned)kind > MC_TYPE_FIXED_DICT)
        return "?";
    return kind < MC_TYPE_STRING ? kind_names[kind] : kind_names[kind - 1];
}

void mc_value_free(mc_value *v)
{
    if (!v)
        return;
    if (is_bytes(v->kind)) {
        free(v->as.bytes.data);
    } else if (is_list(v->kind)) {
        for (uint32_t i = 0; i < v->as.list.count; i++)
            mc_value_free(&v->as.list.items[i]);
        free(v->as.list.items);
    }
    memset(v, 0, sizeof(*v));
}

int mc_value_set_bytes(mc_value *v, mc_type_kind kind, const void *data, size_t len)
{
    if (len > UINT32_MAX - 1)
        return -1;
    char *p = malloc(len + 1);
    if (!p)
        return -1;
    if (len)
        memcpy(p, data, len);
    p[len] = '\0';
    memset(v, 0, sizeof(*v));
    v->kind = kind;
    v->as.bytes.data = p;
    v->as.bytes.len = (uint32_t)len;
    return 0;
}

static int list_alloc(mc_value *v, mc_type_kind kind, uint32_t count)
{
    memset(v, 0, sizeof(*v));
    v->kind = kind;
    if (count) {
        v->as.list.items = calloc(count, sizeof(mc_value));
        if (!v->as.list.items)
            return -1;
    }
    v->as.list.count = count;
    return 0;
}

int mc_value_init_default(mc_value *v, const mc_def_type *t)
{
    memset(v, 0, sizeof(*v));
    v->kind = t->kind;
    if (is_bytes(t->kind))
        return mc_value_set_bytes(v, t->kind, "", 0);
    if (t->kind == MC_TYPE_ARRAY || t->kind == MC_TYPE_TUPLE) {
        if (list_alloc(v, t->kind, t->size) != 0)
            return -1;
        for (uint32_t i = 0; i < t->size; i++)
            if (mc_value_init_default(&v->as.list.items[i], t->of) != 0) {
                mc_value_free(v);
                return -1;
            }
        return 0;
    }
    if (t->kind == MC_TYPE_FIXED_DICT) {
        if (t->allow_none) {
            v->as.list.none = true;
            return 0;
        }
        if (list_alloc(v, t->kind, (uint32_t)t->nfields) != 0)
            return -1;
        for (size_t i = 0; i < t->nfields; i++)
            if (mc_value_init_default(&v->as.list.items[i], t->fields[i].type) != 0) {
                mc_value_free(v);
                return -1;
            }
        return 0;
    }
    return 0;
}

int mc_value_copy(mc_value *dst, const mc_value *src)
{
    if (is_bytes(src->kind))
        return mc_value_set_bytes(dst, src->kind, src->as.bytes.data, src->as.bytes.len);
    if (is_list(src->kind)) {
        if (list_alloc(dst, src->kind, src->as.list.count) != 0)
            return -1;
        dst->as.list.none = src->as.list.none;
        for (uint32_t i = 0; i < src->as.list.count; i++)
            if (mc_value_copy(&dst->as.list.items[i], &src->as.list.items[i]) != 0) {
                mc_value_free(dst);
                return -1;
            }
        return 0;
    }
    *dst = *src;
    return 0;
}

int mc_value_append(mc_value *list, const mc_value *item)
{
    if (list->as.list.count >= MC_DEFS_MAX_ELEMENTS)
        return -1;
    mc_value *items = realloc(list->as.list.items, (list->as.list.count + 1u) * sizeof(mc_value));
    if (!items)
        return -1;
    list->as.list.items = items;
    if (mc_value_copy(&items[list->as.list.count], item) != 0)
        return -1;
    list->as.list.count++;
    return 0;
}

bool mc_value_equal(const mc_value *a, const mc_value *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case MC_TYPE_INT8:
    case MC_TYPE_INT16:
    case MC_TYPE_INT32:
    case MC_TYPE_INT64:
        return a->as.i == b->as.i;
    case MC_TYPE_UINT8:
    case MC_TYPE_UINT16:
    case MC_TYPE_UINT32:
    case MC_TYPE_UINT64:
        return a->as.u == b->as.u;
    case MC_TYPE_FLOAT32:
    case MC_TYPE_FLOAT64:
        return a->as.f == b->as.f || (isnan(a->as.f) && isnan(b->as.f));
    case MC_TYPE_STRING:
    case MC_TYPE_UNICODE_STRING:
    case MC_TYPE_BLOB:
        return a->as.bytes.len == b->as.bytes.len &&
               (a->as.bytes.len == 0 ||
                !memcmp(a->as.bytes.data, b->as.bytes.data, a->as.bytes.len));
    case MC_TYPE_VECTOR2:
    case MC_TYPE_VECTOR3:
    case MC_TYPE_VECTOR4:
        return !memcmp(a->as.vec, b->as.vec, sizeof(a->as.vec));
    case MC_TYPE_MAILBOX:
        return a->as.mailbox.id == b->as.mailbox.id && a->as.mailbox.ip == b->as.mailbox.ip &&
               a->as.mailbox.port == b->as.mailbox.port &&
               a->as.mailbox.salt == b->as.mailbox.salt;
    default:
        if (a->as.list.none != b->as.list.none || a->as.list.count != b->as.list.count)
            return false;
        for (uint32_t i = 0; i < a->as.list.count; i++)
            if (!mc_value_equal(&a->as.list.items[i], &b->as.list.items[i]))
                return false;
        return true;
    }
}

bool mc_utf8_valid(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp;
        if ((c & 0xE0) == 0xC0) {
            n = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (len - i <= n)
            return false;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000))
            return false; /* overlong */
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += n + 1;
    }
    return true;
}

static bool check_int(const mc_def_type *t, const mc_value *v, char *why, size_t whylen)
{
    int64_t lo = 0, hi = 0;
    uint64_t uhi = 0;
    switch (t->kind) {
    case MC_TYPE_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
    case MC_TYPE_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
    case MC_TYPE_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    case MC_TYPE_INT64: lo = INT64_MIN; hi = INT64_MAX; break;
    case MC_TYPE_UINT8: uhi = UINT8_MAX; break;
    case MC_TYPE_UINT16: uhi = UINT16_MAX; break;
    case MC_TYPE_UINT32: uhi = UINT32_MAX; break;
    default: uhi = UINT64_MAX; break;
    }
    if (t->kind <= MC_TYPE_INT64) {
        if (v->as.i < lo || v->as.i > hi) {
            why_set(why, whylen, "%lld is out of range for %s", (long long)v->as.i,
                    mc_type_kind_name(t->kind));
            return false;
        }
    } else if (v->as.u > uhi) {
        why_set(why, whylen, "%llu is out of range for %s", (unsigned long long)v->as.u,
                mc_type_kind_name(t->kind));
        return false;
    }
    return true;
}

static bool check_rec(const mc_def_type *t, const mc_value *v, uint32_t max_bytes,
                      size_t entity_types, char *why, size_t whylen)
{
    if (v->kind != t->kind) {
        why_set(why, whylen, "value of kind %s where %s is expected", mc_type_kind_name(v->kind),
                mc_type_kind_name(t->kind));
        return false;
    }
    switch (t->kind) {
    case MC_TYPE_INT8:
    case MC_TYPE_INT16:
    case MC_TYPE_INT32:
    case MC_TYPE_INT64:
    case MC_TYPE_UINT8:
    case MC_TYPE_UINT16:
    case MC_TYPE_UINT32:
    case MC_TYPE_UINT64:
        return check_int(t, v, why, whylen);
    case MC_TYPE_FLOAT32:
        if (isfinite(v->as.f) && fabs(v->as.f) > 3.4028234663852886e38) {
            why_set(why, whylen, "%g is out of range for FLOAT32", v->as.f);
            return false;
        }
        return true;
    case MC_TYPE_FLOAT64:
    case MC_TYPE_VECTOR2:
    case MC_TYPE_VECTOR3:
    case MC_TYPE_VECTOR4:
        return true;
    case MC_TYPE_STRING:
    case MC_TYPE_UNICODE_STRING:
    case MC_TYPE_BLOB: {
        uint32_t limit = max_bytes ? max_bytes : MC_DEFS_MAX_BYTES;
        if (v->as.bytes.len > limit) {
            why_set(why, whylen, "%s of %u bytes exceeds the limit of %u",
                    mc_type_kind_name(t->kind), v->as.bytes.len, limit);
            return false;
        }
        if (v->as.bytes.len && !v->as.bytes.data) {
            why_set(why, whylen, "%s without data", mc_type_kind_name(t->kind));
            return false;
        }
        if (t->kind != MC_TYPE_BLOB && v->as.bytes.len &&
            memchr(v->as.bytes.data, '\0', v->as.bytes.len)) {
            why_set(why, whylen, "%s holds a NUL byte", mc_type_kind_name(t->kind));
            return false;
        }
        if (t->kind == MC_TYPE_UNICODE_STRING &&
            !mc_utf8_valid((const uint8_t *)v->as.bytes.data, v->as.bytes.len)) {
            why_set(why, whylen, "UNICODE_STRING is not valid UTF-8");
            return false;
        }
        return true;
    }
    case MC_TYPE_MAILBOX:
        return mc_mailbox_ref_valid(&v->as.mailbox, entity_types, why, whylen);
    case MC_TYPE_ARRAY:
    case MC_TYPE_TUPLE:
        if (v->as.list.none) {
            why_set(why, whylen, "%s cannot be None", mc_type_kind_name(t->kind));
            return false;
        }
        if (v->as.list.count > MC_DEFS_MAX_ELEMENTS ||
            (t->size && v->as.list.count != t->size)) {
            why_set(why, whylen, "%s has %u elements, %s %u", mc_type_kind_name(t->kind),
                    v->as.list.count, t->size ? "needs exactly" : "limit",
                    t->size ? t->size : MC_DEFS_MAX_ELEMENTS);
            return false;
        }
        for (uint32_t i = 0; i < v->as.list.count; i++)
            if (!check_rec(t->of, &v->as.list.items[i], 0, entity_types, why, whylen))
                return false;
        return true;
    default:
        if (v->as.list.none) {
            if (!t->allow_none) {
                why_set(why, whylen, "FIXED_DICT without AllowNone cannot be None");
                return false;
            }
            return true;
        }
        if (v->as.list.count != t->nfields) {
            why_set(why, whylen, "FIXED_DICT has %u fields, needs %zu", v->as.list.count,
                    t->nfields);
            return false;
        }
        for (size_t i = 0; i < t->nfields; i++)
            if (!check_rec(t->fields[i].type, &v->as.list.items[i], t->fields[i].max_len,
                           entity_types, why, whylen))
                return false;
        return true;
    }
}

bool mc_value_check(const mc_def_type *t, const mc_value *v, const mc_value_limits *lim,
                    char *why, size_t whylen)
{
    return check_rec(t, v, lim ? lim->max_bytes : 0, lim ? lim->entity_types : 0, why, whylen);
}

static void encode_rec(const mc_def_type *t, const mc_value *v, mc_ostream *os)
{
    switch (t->kind) {
    case MC_TYPE_INT8: mc_write_i8(os, (int8_t)v->as.i); break;
    case MC_TYPE_INT16: mc_write_i16(os, (int16_t)v->as.i); break;
    case MC_TYPE_INT32: mc_write_i32(os, (int32_t)v->as.i); break;
    case MC_TYPE_INT64: mc_write_i64(os, v->as.i); break;
    case MC_TYPE_UINT8: mc_write_u8(os, (uint8_t)v->as.u); break;
    case MC_TYPE_UINT16: mc_write_u16(os, (uint16_t)v->as.u); break;
    case MC_TYPE_UINT32: mc_write_u32(os, (uint32_t)v->as.u); break;
    case MC_TYPE_UINT64: mc_write_u64(os, v->as.u); break;
    case MC_TYPE_FLOAT32: mc_write_f32(os, (float)v->as.f); break;
    case MC_TYPE_FLOAT64: mc_write_f64(os, v->as.f); break;
    case MC_TYPE_STRING:
    case MC_TYPE_UNICODE_STRING:
    case MC_TYPE_BLOB: mc_write_blob(os, v->as.bytes.data, v->as.bytes.len); break;
    case MC_TYPE_VECTOR2:
    case MC_TYPE_VECTOR3:
    case MC_TYPE_VECTOR4: {
        int n = t->kind == MC_TYPE_VECTOR2 ? 2 : t->kind == MC_TYPE_VECTOR3 ? 3 : 4;
        for (int i = 0; i < n; i++)
            mc_write_f32(os, v->as.vec[i]);
        break;
    }
    case MC_TYPE_MAILBOX: mc_mailbox_ref_write(os, &v->as.mailbox); break;
    case MC_TYPE_ARRAY:
    case MC_TYPE_TUPLE:
        mc_write_packed_length(os, v->as.list.count);
        for (uint32_t i = 0; i < v->as.list.count; i++)
            encode_rec(t->of, &v->as.list.items[i], os);
        break;
    default:
        if (t->allow_none) {
            mc_write_bool(os, !v->as.list.none);
            if (v->as.list.none)
                break;
        }
        for (size_t i = 0; i < t->nfields; i++)
            encode_rec(t->fields[i].type, &v->as.list.items[i], os);
        break;
    }
}

int mc_value_encode(const mc_def_type *t, const mc_value *v, const mc_value_limits *lim,
                    mc_ostream *os, char *why, size_t whylen)
{
    if (!mc_value_check(t, v, lim, why, whylen))
        return -1;
    encode_rec(t, v, os);
    if (!mc_ostream_ok(os)) {
        why_set(why, whylen, "output stream failed (out of memory or too large)");
        return -1;
    }
    return 0;
}

static int decode_rec(const mc_def_type *t, mc_istream *is, uint32_t max_bytes,
                      size_t entity_types, mc_value *v, char *why, size_t whylen)
{
    memset(v, 0, sizeof(*v));
    v->kind = t->kind;
    switch (t->kind) {
    case MC_TYPE_INT8: v->as.i = mc_read_i8(is); break;
    case MC_TYPE_INT16: v->as.i = mc_read_i16(is); break;
    case MC_TYPE_INT32: v->as.i = mc_read_i32(is); break;
    case MC_TYPE_INT64: v->as.i = mc_read_i64(is); break;
    case MC_TYPE_UINT8: v->as.u = mc_read_u8(is); break;
    case MC_TYPE_UINT16: v->as.u = mc_read_u16(is); break;
    case MC_TYPE_UINT32: v->as.u = mc_read_u32(is); break;
    case MC_TYPE_UINT64: v->as.u = mc_read_u64(is); break;
    case MC_TYPE_FLOAT32: v->as.f = mc_read_f32(is); break;
    case MC_TYPE_FLOAT64: v->as.f = mc_read_f64(is); break;
    case MC_TYPE_VECTOR2:
    case MC_TYPE_VECTOR3:
    case MC_TYPE_VECTOR4: {
        int n = t->kind == MC_TYPE_VECTOR2 ? 2 : t->kind == MC_TYPE_VECTOR3 ? 3 : 4;
        for (int i = 0; i < n; i++)
            v->as.vec[i] = mc_read_f32(is);
        break;
    }
    case MC_TYPE_STRING:
    case MC_TYPE_UNICODE_STRING:
    case MC_TYPE_BLOB: {
        uint32_t limit = max_bytes ? max_bytes : MC_DEFS_MAX_BYTES;
        size_t len = 0;
        size_t at = is->pos;
        const uint8_t *p = mc_read_blob(is, &len, limit);
        if (!p) {
            why_set(why, whylen, "%s at offset %zu: length over the limit of %u or past the end",
                    mc_type_kind_name(t->kind), at, limit);
            goto fail;
        }
        if (mc_value_set_bytes(v, t->kind, p, len) != 0) {
            why_set(why, whylen, "out of memory");
            goto fail;
        }
        if (t->kind != MC_TYPE_BLOB && len && memchr(p, '\0', len)) {
            why_set(why, whylen, "%s at offset %zu holds a NUL byte",
                    mc_type_kind_name(t->kind), at);
            goto fail;
        }
        if (t->kind == MC_TYPE_UNICODE_STRING && !mc_utf8_valid(p, len)) {
            why_set(why, whylen, "UNICODE_STRING at offset %zu is not valid UTF-8", at);
            goto fail;
        }
        return 0;
    }
    case MC_TYPE_MAILBOX: {
        size_t at = is->pos;
        v->as.mailbox.id = mc_read_i32(is);
        v->as.mailbox.ip = mc_read_u32(is);
        v->as.mailbox.port = mc_read_u16(is);
        v->as.mailbox.salt = mc_read_u16(is);
        if (mc_istream_ok(is)) {
            char r[160];
            if (!mc_mailbox_ref_valid(&v->as.mailbox, entity_types, r, sizeof(r))) {
                why_set(why, whylen, "MAILBOX at offset %zu: %s", at, r);
                goto fail;
            }
        }
        break;
    }
    case MC_TYPE_ARRAY:
    case MC_TYPE_TUPLE: {
        size_t at = is->pos;
        uint32_t count = mc_read_packed_length(is, MC_DEFS_MAX_ELEMENTS);
        if (!mc_istream_ok(is)) {
            why_set(why, whylen, "%s at offset %zu: bad element count",
                    mc_type_kind_name(t->kind), at);
            goto fail;
        }
        if (t->size && count != t->size) {
            why_set(why, whylen, "%s at offset %zu has %u elements, needs exactly %u",
                    mc_type_kind_name(t->kind), at, count, t->size);
            goto fail;
        }
        /* Every element takes at least min_wire_size bytes: refuse counts the input cannot
         * hold before allocating. */
        if ((uint64_t)count * t->of->min_wire_size > mc_istream_remaining(is)) {
            why_set(why, whylen, "%s at offset %zu claims %u elements, only %zu bytes remain",
                    mc_type_kind_name(t->kind), at, count, mc_istream_remaining(is));
            goto fail;
        }
        if (list_alloc(v, t->kind, count) != 0) {
            why_set(why, whylen, "out of memory");
            goto fail;
        }
        for (uint32_t i = 0; i < count; i++)
            if (decode_rec(t->of, is, 0, entity_types, &v->as.list.items[i], why, whylen) != 0)
                goto fail;
        return 0;
    }
    default: {
        if (t->allow_none) {
            size_t at = is->pos;
            bool present = mc_read_bool(is);
            if (!mc_istream_ok(is)) {
                why_set(why, whylen, "FIXED_DICT at offset %zu: bad None flag", at);
                goto fail;
            }
            if (!present) {
                v->as.list.none = true;
                return 0;
            }
        }
        /* As for arrays: the fields must fit in what remains before they are allocated. */
        size_t need = 0;
        for (size_t i = 0; i < t->nfields; i++)
            need += t->fields[i].type->min_wire_size;
        if (need > mc_istream_remaining(is)) {
            why_set(why, whylen,
                    "FIXED_DICT at offset %zu needs at least %zu bytes, only %zu remain", is->pos,
                    need, mc_istream_remaining(is));
            goto fail;
        }
        if (list_alloc(v, t->kind, (uint32_t)t->nfields) != 0) {
            why_set(why, whylen, "out of memory");
            goto fail;
        }
        for (size_t i = 0; i < t->nfields; i++)
            if (decode_rec(t->fields[i].type, is, t->fields[i].max_len, entity_types,
                           &v->as.list.items[i], why, whylen) != 0)
                goto fail;
        return 0;
    }
    }
    if (!mc_istream_ok(is)) {
        why_set(why, whylen, "%s: truncated input", mc_type_kind_name(t->kind));
        goto fail;
    }
    return 0;
fail:
    mc_istream_fail(is);
    mc_value_free(v);
    return -1;
}

int mc_value_decode(const mc_def_type *t, mc_istream *is, const mc_value_limits *lim,
                    mc_value *v, char *why, size_t whylen)
{
    if (!mc_istream_ok(is)) {
        memset(v, 0, sizeof(*v));
        why_set(why, whylen, "stream already failed");
        return -1;
    }
    return decode_rec(t, is, lim ? lim->max_bytes : 0, lim ? lim->entity_types : 0, v, why,
                      whylen);
}

/* Text rendering. */
static void text_rec(strbuf *b, const mc_value *v)
{
    switch (v->kind) {
    case MC_TYPE_INT8:
    case MC_TYPE_INT16:
    case MC_TYPE_INT32:
    case MC_TYPE_INT64: strbuf_add(b, "%lld", (long long)v->as.i); break;
    case MC_TYPE_UINT8:
    case MC_TYPE_UINT16:
    case MC_TYPE_UINT32:
    case MC_TYPE_UINT64: strbuf_add(b, "%llu", (unsigned long long)v->as.u); break;
    case MC_TYPE_FLOAT32:
    case MC_TYPE_FLOAT64: strbuf_add(b, "%.9g", v->as.f); break;
    case MC_TYPE_STRING:
    case MC_TYPE_UNICODE_STRING:
        strbuf_add(b, "\"");
        for (uint32_t i = 0; i < v->as.bytes.len; i++) {
            unsigned char c = (unsigned char)v->as.bytes.data[i];
            if (c == '"' || c == '\\')
                strbuf_add(b, "\\%c", c);
            else if (c < 0x20 || c == 0x7F)
                strbuf_add(b, "\\x%02x", c);
            else
                strbuf_add(b, "%c", c);
        }
        strbuf_add(b, "\"");
        break;
    case MC_TYPE_BLOB:
        strbuf_add(b, "0x");
        for (uint32_t i = 0; i < v->as.bytes.len; i++)
            strbuf_add(b, "%02x", (unsigned char)v->as.bytes.data[i]);
        break;
    case MC_TYPE_VECTOR2: strbuf_add(b, "(%.9g %.9g)", v->as.vec[0], v->as.vec[1]); break;
    case MC_TYPE_VECTOR3:
        strbuf_add(b, "(%.9g %.9g %.9g)", v->as.vec[0], v->as.vec[1], v->as.vec[2]);
        break;
    case MC_TYPE_VECTOR4:
        strbuf_add(b, "(%.9g %.9g %.9g %.9g)", v->as.vec[0], v->as.vec[1], v->as.vec[2],
               v->as.vec[3]);
        break;
    case MC_TYPE_MAILBOX:
        if (mc_mailbox_ref_is_none(&v->as.mailbox)) {
            strbuf_add(b, "None");
        } else {
            uint32_t ip = v->as.mailbox.ip;
            strbuf_add(b, "<%s %d type %u at %u.%u.%u.%u:%u>",
                   mc_component_name(mc_mailbox_ref_component(&v->as.mailbox)),
                   (int)v->as.mailbox.id, (unsigned)mc_mailbox_ref_type(&v->as.mailbox),
                   ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255,
                   (unsigned)v->as.mailbox.port);
        }
        break;
    default:
        if (v->as.list.none) {
            strbuf_add(b, "None");
            break;
        }
        strbuf_add(b, v->kind == MC_TYPE_FIXED_DICT ? "{" : "[");
        for (uint32_t i = 0; i < v->as.list.count; i++) {
            if (i)
                strbuf_add(b, ", ");
            text_rec(b, &v->as.list.items[i]);
        }
        strbuf_add(b, v->kind == MC_TYPE_FIXED_DICT ? "}" : "]");
        break;
    }
}

char *mc_value_to_text(const mc_value *v)
{
    strbuf b = {0};
    text_rec(&b, v);
    return strbuf_finish(&b);
}

static void type_rec(strbuf *b, const mc_def_type *t)
{
    switch (t->kind) {
    case MC_TYPE_ARRAY:
    case MC_TYPE_TUPLE:
        strbuf_add(b, "%s<", mc_type_kind_name(t->kind));
        type_rec(b, t->of);
        strbuf_add(b, ">");
        if (t->size)
            strbuf_add(b, "[%u]", t->size);
        break;
    case MC_TYPE_FIXED_DICT:
        strbuf_add(b, "FIXED_DICT{");
        for (size_t i = 0; i < t->nfields; i++) {
            strbuf_add(b, "%s%s:", i ? "," : "", t->fields[i].name);
            type_rec(b, t->fields[i].type);
            if (t->fields[i].max_len)
                strbuf_add(b, "(%u)", t->fields[i].max_len);
        }
        strbuf_add(b, "}%s", t->allow_none ? "?" : "");
        break;
    default:
        strbuf_add(b, "%s", mc_type_kind_name(t->kind));
        break;
    }
}

char *mc_def_type_describe(const mc_def_type *t)
{
    strbuf b = {0};
    type_rec(&b, t);
    return strbuf_finish(&b);
}
