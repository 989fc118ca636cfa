/* Growing heap strings for value text, type descriptions and the digest text. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void strbuf_add(strbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *p = realloc(b->buf, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->buf = p;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *strbuf_finish(strbuf *b)
{
    strbuf_add(b, "%s", ""); /* allocates an empty string too */
    if (b->failed) {
        free(b->buf);
        b->buf = NULL;
        return NULL;
    }
    return b->buf;
}
