/* Error text for callers: functions that fail write a one-line reason into a caller-owned
 * buffer (char *err, size_t errlen). mc_set_error formats into such a buffer; a NULL buffer or
 * zero length is allowed and ignored. */
#ifndef MC_COMMON_ERROR_H
#define MC_COMMON_ERROR_H

#include <stdarg.h>
#include <stddef.h>

void mc_set_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void mc_set_verror(char *err, size_t errlen, const char *fmt, va_list ap);

#endif
