/* The JSON tokenizer: a cursor over untrusted text, strings with every escape, numbers by the
 * JSON grammar, located error messages, and the depth, size and path bookkeeping. Nothing here
 * recurses; every scan is linear in the text. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/value_json.h"
#include "value_json_internal.h"

void jp_init(mc_jp *p, const char *s, size_t len, size_t entity_types, char *why, size_t whylen)
{
    memset(p, 0, sizeof(*p));
    p->s = s ? s : "";
    p->len = s ? len : 0;
    p->why = why;
    p->whylen = whylen;
    p->entity_types = entity_types;
    p->max_cells = p->len < SIZE_MAX - MC_DEFS_MAX_CELLS ? p->len + MC_DEFS_MAX_CELLS : SIZE_MAX;
}

static int fail_v(mc_jp *p, size_t at, const char *fmt, va_list ap)
{
    char msg[256];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (p->pathlen)
        mc_set_error(p->why, p->whylen, "%s: %s (offset %zu)", p->path, msg, at);
    else
        mc_set_error(p->why, p->whylen, "%s (offset %zu)", msg, at);
    return -1;
}

int jp_fail(mc_jp *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(p, p->pos, fmt, ap);
    va_end(ap);
    return -1;
}

int jp_fail_at(mc_jp *p, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(p, at, fmt, ap);
    va_end(ap);
    return -1;
}

int jp_peek(mc_jp *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return (unsigned char)c;
        p->pos++;
    }
    return -1;
}

size_t jp_here(mc_jp *p)
{
    jp_peek(p);
    return p->pos;
}

bool jp_number_next(mc_jp *p)
{
    int c = jp_peek(p);
    return c == '-' || (c >= '0' && c <= '9');
}

static bool has_literal(const mc_jp *p, const char *lit)
{
    size_t n = strlen(lit);
    return p->len - p->pos >= n && !memcmp(p->s + p->pos, lit, n);
}

const char *jp_found(mc_jp *p)
{
    int c = jp_peek(p);
    if (c < 0)
        return "the end of the text";
    if (c == '"')
        return "a string";
    if (c == '[')
        return "an array";
    if (c == '{')
        return "an object";
    if (c == '-' || (c >= '0' && c <= '9'))
        return "a number";
    if (has_literal(p, "true") || has_literal(p, "false"))
        return "a boolean";
    if (has_literal(p, "null"))
        return "null";
    if (c > 0x20 && c < 0x7F)
        snprintf(p->found, sizeof(p->found), "'%c'", c);
    else
        snprintf(p->found, sizeof(p->found), "byte 0x%02x", (unsigned)c);
    return p->found;
}

int jp_expect(mc_jp *p, char c, const char *what)
{
    if (jp_peek(p) != (unsigned char)c)
        return jp_fail(p, "expected %s, found %s", what, jp_found(p));
    p->pos++;
    return 0;
}

bool jp_null(mc_jp *p)
{
    if (jp_peek(p) != 'n' || !has_literal(p, "null"))
        return false;
    p->pos += 4;
    return true;
}

int jp_end(mc_jp *p)
{
    if (jp_peek(p) >= 0)
        return jp_fail(p, "trailing text after the JSON value: %s", jp_found(p));
    return 0;
}

static int hex4(const char *s, uint32_t *v)
{
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        uint32_t d;
        if (c >= '0' && c <= '9')
            d = (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (uint32_t)(c - 'A' + 10);
        else
            return -1;
        r = r << 4 | d;
    }
    *v = r;
    return 0;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A \uXXXX escape (with its low surrogate when it is a high one) at s[k], the string ending at
 * end: the code point and the bytes it used. */
static int unicode_escape(mc_jp *p, size_t k, size_t end, uint32_t *cp, size_t *used)
{
    const char *s = p->s;
    if (end - k < 6 || hex4(s + k + 2, cp) != 0)
        return jp_fail_at(p, k, "bad escape: \\u needs 4 hex digits");
    *used = 6;
    if (*cp == 0)
        return jp_fail_at(p, k, "\\u0000 (NUL) is not allowed in a string");
    if (*cp >= 0xDC00 && *cp <= 0xDFFF)
        return jp_fail_at(p, k, "lone low surrogate \\u%04X", (unsigned)*cp);
    if (*cp < 0xD800 || *cp > 0xDBFF)
        return 0;
    uint32_t lo;
    if (end - k < 12 || s[k + 6] != '\\' || s[k + 7] != 'u' || hex4(s + k + 8, &lo) != 0 ||
        lo < 0xDC00 || lo > 0xDFFF)
        return jp_fail_at(p, k, "lone high surrogate \\u%04X (no low surrogate follows)",
                          (unsigned)*cp);
    *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
    *used = 12;
    return 0;
}

static int simple_escape(char e, char *out)
{
    switch (e) {
    case '"': *out = '"'; return 0;
    case '\\': *out = '\\'; return 0;
    case '/': *out = '/'; return 0;
    case 'b': *out = '\b'; return 0;
    case 'f': *out = '\f'; return 0;
    case 'n': *out = '\n'; return 0;
    case 'r': *out = '\r'; return 0;
    case 't': *out = '\t'; return 0;
    default: return -1;
    }
}

/* Find the closing quote of the string whose first content byte is at start. */
static int string_end(mc_jp *p, size_t start, size_t *end)
{
    size_t i = start;
    for (;;) {
        if (i >= p->len)
            return jp_fail_at(p, start - 1, "unterminated string");
        unsigned char c = (unsigned char)p->s[i];
        if (c == '"')
            break;
        if (c < 0x20)
            return jp_fail_at(p, i, "raw control character 0x%02x in a string (write \\u%04x)",
                              c, c);
        i += c == '\\' ? 2 : 1;
    }
    *end = i;
    return 0;
}

static int unescape(mc_jp *p, size_t start, size_t end, char *o, size_t *olen)
{
    const char *s = p->s;
    size_t n = 0;
    for (size_t k = start; k < end;) {
        if (s[k] != '\\') {
            o[n++] = s[k++];
            continue;
        }
        if (s[k + 1] == 'u') {
            uint32_t cp = 0;
            size_t used = 0;
            if (unicode_escape(p, k, end, &cp, &used) != 0)
                return -1;
            n += put_utf8(o + n, cp);
            k += used;
            continue;
        }
        if (simple_escape(s[k + 1], &o[n]) != 0) {
            unsigned char e = (unsigned char)s[k + 1];
            if (e > 0x20 && e < 0x7F)
                return jp_fail_at(p, k, "bad escape \\%c", e);
            return jp_fail_at(p, k, "bad escape \\ followed by byte 0x%02x", e);
        }
        n++;
        k += 2;
    }
    o[n] = '\0';
    *olen = n;
    return 0;
}

int jp_string(mc_jp *p, char **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (jp_peek(p) != '"')
        return jp_fail(p, "expected a string, found %s", jp_found(p));
    size_t start = p->pos + 1, end = start;
    if (string_end(p, start, &end) != 0)
        return -1;
    char *o = malloc(end - start + 1); /* escapes only shrink */
    if (!o)
        return jp_fail(p, "out of memory");
    if (unescape(p, start, end, o, outlen) != 0) {
        free(o);
        return -1;
    }
    *out = o;
    p->pos = end + 1;
    return 0;
}

static bool digit_at(const mc_jp *p, size_t i)
{
    return i < p->len && p->s[i] >= '0' && p->s[i] <= '9';
}

/* One or more digits at *i (advanced past them), or fail naming what needs them. */
static int digits(mc_jp *p, size_t *i, const char *after)
{
    if (!digit_at(p, *i))
        return jp_fail_at(p, *i, "bad number: a digit must follow %s", after);
    while (digit_at(p, *i))
        (*i)++;
    return 0;
}

int jp_number(mc_jp *p, char *buf, bool *integral)
{
    int c = jp_peek(p);
    if (c != '-' && (c < '0' || c > '9'))
        return jp_fail(p, "expected a number, found %s", jp_found(p));
    size_t start = p->pos, i = start;
    *integral = true;
    if (p->s[i] == '-')
        i++;
    if (digit_at(p, i) && p->s[i] == '0') {
        i++;
        if (digit_at(p, i))
            return jp_fail_at(p, start, "bad number: leading zero");
    } else if (digits(p, &i, "'-'") != 0) {
        return -1;
    }
    if (i < p->len && p->s[i] == '.') {
        *integral = false;
        i++;
        if (digits(p, &i, "'.'") != 0)
            return -1;
    }
    if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
        *integral = false;
        i++;
        if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
            i++;
        if (digits(p, &i, "the exponent mark") != 0)
            return -1;
    }
    if (i - start > MC_JSON_MAX_NUMBER)
        return jp_fail_at(p, start, "number longer than %u characters", MC_JSON_MAX_NUMBER);
    memcpy(buf, p->s + start, i - start);
    buf[i - start] = '\0';
    p->pos = i;
    return 0;
}

int jp_enter(mc_jp *p)
{
    if (p->depth >= MC_JSON_MAX_DEPTH)
        return jp_fail(p, "nesting deeper than %u", MC_JSON_MAX_DEPTH);
    p->depth++;
    return 0;
}

void jp_leave(mc_jp *p)
{
    p->depth--;
}

int jp_cells(mc_jp *p, size_t n)
{
    if (n > p->max_cells - p->cells)
        return jp_fail(p, "too many values: more than %zu from one text", p->max_cells);
    p->cells += n;
    return 0;
}

static size_t push(mc_jp *p, const char *piece)
{
    size_t saved = p->pathlen, room = sizeof(p->path) - p->pathlen, n = strlen(piece);
    if (n + 4 <= room) {
        memcpy(p->path + p->pathlen, piece, n + 1);
        p->pathlen += n;
    } else if (room >= 4 && (p->pathlen < 3 || strcmp(p->path + p->pathlen - 3, "..."))) {
        memcpy(p->path + p->pathlen, "...", 4);
        p->pathlen += 3;
    }
    return saved;
}

size_t jp_push_index(mc_jp *p, uint32_t i)
{
    char piece[16];
    snprintf(piece, sizeof(piece), "[%u]", (unsigned)i);
    return push(p, piece);
}

size_t jp_push_name(mc_jp *p, const char *sep, const char *name)
{
    char piece[sizeof(p->path)];
    snprintf(piece, sizeof(piece), "%s%s", sep, name);
    return push(p, piece);
}

void jp_pop(mc_jp *p, size_t saved)
{
    p->pathlen = saved;
    p->path[saved] = '\0';
}

const char *jp_show(char *buf, size_t buflen, const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 4 < buflen && i < 40; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[n++] = c >= 0x20 && c < 0x7F ? (char)c : '?';
    }
    if (len > 40 && n + 4 <= buflen) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return buf;
}

struct jl_name {
    const char *name;
    size_t index;
};

#define JL_LINEAR 8u /* lookups done by a scan before the index is built */

static const char *jl_name_at(const mc_jlookup *l, size_t i)
{
    return *(const char *const *)(const void *)(l->base + i * l->stride);
}

static int jl_cmp(const void *a, const void *b)
{
    return strcmp(((const struct jl_name *)a)->name, ((const struct jl_name *)b)->name);
}

void jl_init(mc_jlookup *l, const void *base, size_t stride, size_t n)
{
    memset(l, 0, sizeof(*l));
    l->base = base;
    l->stride = stride;
    l->n = n;
}

static void jl_build(mc_jlookup *l)
{
    l->sorted = malloc(l->n * sizeof(*l->sorted));
    if (!l->sorted)
        return; /* keep scanning */
    for (size_t i = 0; i < l->n; i++)
        l->sorted[i] = (struct jl_name){.name = jl_name_at(l, i), .index = i};
    qsort(l->sorted, l->n, sizeof(*l->sorted), jl_cmp);
}

size_t jl_find(mc_jlookup *l, const char *name)
{
    if (++l->lookups > JL_LINEAR && !l->sorted && l->n > JL_LINEAR)
        jl_build(l);
    if (l->sorted) {
        struct jl_name key = {.name = name};
        const struct jl_name *hit = bsearch(&key, l->sorted, l->n, sizeof(key), jl_cmp);
        return hit ? hit->index : l->n;
    }
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(jl_name_at(l, i), name))
            return i;
    return l->n;
}

void jl_free(mc_jlookup *l)
{
    free(l->sorted);
    l->sorted = NULL;
}
