/* Formatting a one-line reason into a caller's error buffer. */
#include "common/error.h"

#include <stdio.h>

void mc_set_verror(char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (!err || errlen == 0)
        return;
    vsnprintf(err, errlen, fmt, ap);
}

void mc_set_error(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mc_set_verror(err, errlen, fmt, ap);
    va_end(ap);
}
