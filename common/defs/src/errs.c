#include "errs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mc_errs_init(mc_errs *e)
{
    memset(e, 0, sizeof(*e));
}

void mc_errs_free(mc_errs *e)
{
    free(e->buf);
    memset(e, 0, sizeof(*e));
}

static void append(mc_errs *e, const char *s, size_t n)
{
    if (e->len + n + 1 > e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 512;
        while (cap < e->len + n + 1)
            cap *= 2;
        char *b = realloc(e->buf, cap);
        if (!b)
            return;
        e->buf = b;
        e->cap = cap;
    }
    memcpy(e->buf + e->len, s, n);
    e->len += n;
    e->buf[e->len] = '\0';
}

void mc_errs_add(mc_errs *e, const char *file, int line, const char *elem, const char *fmt, ...)
{
    char head[1024];
    int n;
    if (line > 0)
        n = snprintf(head, sizeof(head), "%s:%d: ", file ? file : "?", line);
    else
        n = snprintf(head, sizeof(head), "%s: ", file ? file : "?");
    if (n > 0)
        append(e, head, (size_t)n < sizeof(head) ? (size_t)n : sizeof(head) - 1);
    if (elem) {
        n = snprintf(head, sizeof(head), "<%s>: ", elem);
        if (n > 0)
            append(e, head, (size_t)n < sizeof(head) ? (size_t)n : sizeof(head) - 1);
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n > 0)
        append(e, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
    append(e, "\n", 1);
    e->count++;
}

void mc_errs_copy(const mc_errs *e, char *err, size_t errlen)
{
    if (!err || errlen == 0)
        return;
    size_t n = e->len;
    if (n > 0 && e->buf[n - 1] == '\n')
        n--; /* no trailing newline */
    if (n < errlen) {
        if (n)
            memcpy(err, e->buf, n);
        err[n] = '\0';
        return;
    }
    memcpy(err, e->buf, errlen - 1);
    err[errlen - 1] = '\0';
    if (errlen > 4)
        memcpy(err + errlen - 4, "...", 3);
}
