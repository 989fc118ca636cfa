/* Internal: the list of load errors, one "file:line: <element>: reason" line each. */
#ifndef MC_DEFS_ERRS_H
#define MC_DEFS_ERRS_H

#include <stddef.h>

typedef struct {
    char *buf;
    size_t len;
    size_t cap;
    unsigned count;
} mc_errs;

void mc_errs_init(mc_errs *e);
void mc_errs_free(mc_errs *e);
/* elem may be NULL (no "<elem>: " part); line <= 0 leaves out the line. */
void mc_errs_add(mc_errs *e, const char *file, int line, const char *elem, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Copy into err[errlen], truncating with "..." when it does not fit. */
void mc_errs_copy(const mc_errs *e, char *err, size_t errlen);

#endif
