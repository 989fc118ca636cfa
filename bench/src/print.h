/* Turning a finished side into figures and the lines mercury-bench prints. */
#ifndef MC_BENCH_PRINT_H
#define MC_BENCH_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "options.h"
#include "side.h"

typedef struct {
    bool ok;              /* every message arrived exactly once, in order, within the limit */
    unsigned long long delivered; /* in order (receiver), or acknowledged (sender-only view) */
    double seconds;       /* the measured interval */
    double rate;          /* delivered / seconds */
    double cpu_s;         /* CPU seconds of the measured roles (sender + receiver) */
} bench_figures;

/* Compute the figures of a side and print its lines to `out`. */
bench_figures bench_print_side(FILE *out, const bench_options *o, const bench_side *side);

#endif
