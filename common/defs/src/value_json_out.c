/* Values of def types -> compact JSON text, in the forms value_json.c reads back. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "common/value_json.h"
#include "value_json_internal.h"

static bool jb_reserve(mc_jbuf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n <= b->cap - b->len)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *p = realloc(b->buf, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->buf = p;
    b->cap = cap;
    return true;
}

static void jb_put(mc_jbuf *b, const char *s, size_t n)
{
    if (jb_reserve(b, n)) {
        memcpy(b->buf + b->len, s, n);
        b->len += n;
    }
}

void jb_putc(mc_jbuf *b, char c)
{
    jb_put(b, &c, 1);
}

static void jb_puts(mc_jbuf *b, const char *s)
{
    jb_put(b, s, strlen(s));
}

static void jb_printf(mc_jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jb_printf(mc_jbuf *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(tmp))
        b->failed = true;
    else
        jb_put(b, tmp, (size_t)n);
}

char *jb_finish(mc_jbuf *b)
{
    jb_putc(b, '\0');
    if (b->failed) {
        free(b->buf);
        memset(b, 0, sizeof(*b));
        return NULL;
    }
    return b->buf;
}

/* A JSON string: '"' and '\' escaped, control characters as \n... or \u00XX, every other byte
 * (UTF-8, or whatever a STRING holds) passed through. */
static void put_string(mc_jbuf *b, const char *s, size_t n)
{
    jb_putc(b, '"');
    size_t run = 0; /* bytes copied as they are, written in one go */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        jb_put(b, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"': jb_puts(b, "\\\""); break;
        case '\\': jb_puts(b, "\\\\"); break;
        case '\n': jb_puts(b, "\\n"); break;
        case '\r': jb_puts(b, "\\r"); break;
        case '\t': jb_puts(b, "\\t"); break;
        case '\b': jb_puts(b, "\\b"); break;
        case '\f': jb_puts(b, "\\f"); break;
        default: jb_printf(b, "\\u%04x", c); break;
        }
    }
    jb_put(b, s + run, n - run);
    jb_putc(b, '"');
}

static void put_base64(mc_jbuf *b, const char *data, size_t n)
{
    size_t cap = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
    char *text = malloc(cap);
    if (!text) {
        b->failed = true;
        return;
    }
    sodium_bin2base64(text, cap, (const unsigned char *)data, n, sodium_base64_VARIANT_ORIGINAL);
    put_string(b, text, strlen(text));
    free(text);
}

/* A float as the shortest text that reads back to the same float (FLOAT32, VECTORn) or
 * double; non-finite values (only decoded wire values hold them) as null. */
static void put_real(mc_jbuf *b, double d, bool f32)
{
    if (!isfinite(d))
        jb_puts(b, "null");
    else if (f32 && fabs(d) <= 3.4028234663852886e38)
        jb_printf(b, "%.9g", (double)(float)d);
    else
        jb_printf(b, "%.17g", d);
}

static void put_mailbox(mc_jbuf *b, const mc_mailbox_ref *r)
{
    if (r->id == 0 && r->ip == 0 && r->port == 0 && r->salt == 0) {
        jb_puts(b, "null");
        return;
    }
    jb_printf(b, "{\"id\":%d,\"addr\":\"%u.%u.%u.%u:%u\",", (int)r->id,
              (unsigned)(r->ip >> 24), (unsigned)(r->ip >> 16 & 255),
              (unsigned)(r->ip >> 8 & 255), (unsigned)(r->ip & 255), (unsigned)r->port);
    jb_printf(b, "\"component\":\"%s\",\"type\":%u}",
              mc_component_name(mc_mailbox_ref_component(r)),
              (unsigned)mc_mailbox_ref_type(r));
}

static bool render_list(mc_jbuf *b, const mc_def_type *t, const mc_value *v)
{
    if (v->as.list.none || (v->as.list.count && !v->as.list.items))
        return false;
    jb_putc(b, '[');
    for (uint32_t i = 0; i < v->as.list.count; i++) {
        if (i)
            jb_putc(b, ',');
        if (!jv_render(b, t->of, &v->as.list.items[i]))
            return false;
    }
    jb_putc(b, ']');
    return true;
}

static bool render_dict(mc_jbuf *b, const mc_def_type *t, const mc_value *v)
{
    if (v->as.list.none) {
        jb_puts(b, "null");
        return true;
    }
    if (v->as.list.count != t->nfields || (t->nfields && !v->as.list.items))
        return false;
    jb_putc(b, '{');
    for (size_t i = 0; i < t->nfields; i++) {
        if (i)
            jb_putc(b, ',');
        put_string(b, t->fields[i].name, strlen(t->fields[i].name));
        jb_putc(b, ':');
        if (!jv_render(b, t->fields[i].type, &v->as.list.items[i]))
            return false;
    }
    jb_putc(b, '}');
    return true;
}

static void render_vector(mc_jbuf *b, const mc_value *v)
{
    unsigned n = (unsigned)(v->kind - MC_TYPE_VECTOR2) + 2;
    jb_putc(b, '[');
    for (unsigned i = 0; i < n; i++) {
        if (i)
            jb_putc(b, ',');
        put_real(b, v->as.vec[i], true);
    }
    jb_putc(b, ']');
}

bool jv_render(mc_jbuf *b, const mc_def_type *t, const mc_value *v)
{
    if (v->kind != t->kind)
        return false;
    switch (t->kind) {
    case MC_TYPE_INT8:
    case MC_TYPE_INT16:
    case MC_TYPE_INT32:
    case MC_TYPE_INT64: jb_printf(b, "%lld", (long long)v->as.i); return true;
    case MC_TYPE_UINT8:
    case MC_TYPE_UINT16:
    case MC_TYPE_UINT32:
    case MC_TYPE_UINT64: jb_printf(b, "%llu", (unsigned long long)v->as.u); return true;
    case MC_TYPE_FLOAT32:
    case MC_TYPE_FLOAT64: put_real(b, v->as.f, t->kind == MC_TYPE_FLOAT32); return true;
    case MC_TYPE_STRING:
    case MC_TYPE_UNICODE_STRING:
    case MC_TYPE_BLOB:
        if (v->as.bytes.len && !v->as.bytes.data)
            return false;
        if (t->kind == MC_TYPE_BLOB)
            put_base64(b, v->as.bytes.data, v->as.bytes.len);
        else
            put_string(b, v->as.bytes.data, v->as.bytes.len);
        return true;
    case MC_TYPE_VECTOR2:
    case MC_TYPE_VECTOR3:
    case MC_TYPE_VECTOR4: render_vector(b, v); return true;
    case MC_TYPE_MAILBOX: put_mailbox(b, &v->as.mailbox); return true;
    case MC_TYPE_ARRAY:
    case MC_TYPE_TUPLE: return render_list(b, t, v);
    default: return render_dict(b, t, v);
    }
}

char *mc_value_to_json(const mc_def_type *t, const mc_value *v)
{
    mc_jbuf b = {0};
    if (!jv_render(&b, t, v))
        b.failed = true;
    return jb_finish(&b);
}

char *mc_json_from_values(const mc_def_arg *params, size_t n, const mc_value *vals)
{
    mc_jbuf b = {0};
    jb_putc(&b, '[');
    for (size_t i = 0; i < n && !b.failed; i++) {
        if (i)
            jb_putc(&b, ',');
        if (!jv_render(&b, params[i].type, &vals[i]))
            b.failed = true;
    }
    jb_putc(&b, ']');
    return jb_finish(&b);
}
