/* Key names of the layout (docs/PERSISTENCE.md). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static char *fmt_key(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *fmt_key(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *out = NULL;
    int n = vasprintf(&out, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : out;
}

char *mc_key_entity(const mc_persist_store *s, const char *type, uint64_t dbid)
{
    return fmt_key("%s:e:{%s:%llu}", s->prefix, type, (unsigned long long)dbid);
}

char *mc_key_owner(const mc_persist_store *s, const char *type, uint64_t dbid)
{
    return fmt_key("%s:o:{%s:%llu}", s->prefix, type, (unsigned long long)dbid);
}

char *mc_key_ident(const mc_persist_store *s, const char *type, const char *value)
{
    return fmt_key("%s:id:{%s:%s}", s->prefix, type, value);
}

char *mc_key_type_set(const mc_persist_store *s, const char *type)
{
    return fmt_key("%s:t:{%s}", s->prefix, type);
}

char *mc_key_schema(const mc_persist_store *s, const char *type)
{
    return fmt_key("%s:s:{%s}", s->prefix, type);
}

char *mc_key_owned(const mc_persist_store *s, const char *owner, uint64_t inc)
{
    (void)inc;
    return fmt_key("%s:owned:{%s}", s->prefix, owner);
}

char *mc_key_plain(const mc_persist_store *s, const char *name)
{
    return fmt_key("%s:%s", s->prefix, name);
}

int mc_parse_u64(const char *s, size_t len, uint64_t *out)
{
    if (!s || len == 0 || len > 20)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}
