/* Internal: a growing heap string built by printf-style appends. An allocation failure is
 * remembered and reported once, when the string is finished. */
#ifndef MC_DEFS_STRBUF_H
#define MC_DEFS_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *buf;
    size_t len, cap;
    bool failed;
} strbuf;

void strbuf_add(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The NUL-terminated string (heap, free(); its length stays in b->len), or NULL when any
 * append failed (the buffer is freed then). */
char *strbuf_finish(strbuf *b);

#endif
