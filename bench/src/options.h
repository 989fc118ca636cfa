/* mercury-bench command line: the option table, parsing and validation. */
#ifndef MC_BENCH_OPTIONS_H
#define MC_BENCH_OPTIONS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    BENCH_MODE_LOCAL,   /* both roles (and the relay) as children of this process */
    BENCH_MODE_LISTEN,  /* receivers only, on --listen */
    BENCH_MODE_CONNECT, /* senders only (and the relay), to --connect */
} bench_mode;

typedef struct {
    uint64_t messages;
    size_t size;
    double loss, dup, reorder;
    double time_limit_s;
    uint64_t seed;
    bench_mode mode;
    struct sockaddr_in addr; /* --listen / --connect address */
    bool run_mercury, run_mercury_auth, run_enet;
    /* latency mode (--latency) */
    bool latency;
    uint32_t channels, rate, delay_ms;
    double duration_s;
} bench_options;

#define BENCH_LATENCY_MIN_SIZE 16u /* channel, sequence, send time */

/* Returns 0 (options filled), 1 (--help printed: exit 0) or -1 (one-line reason in err). */
int bench_options_parse(int argc, char **argv, bench_options *o, char *err, size_t errlen);

/* True when a relay is needed (some loss, duplication or reordering). */
bool bench_options_impaired(const bench_options *o);

/* Parse "A.B.C.D:PORT" (IPv4, port 1-65535). Returns 0 or -1. */
int bench_parse_addr(const char *text, struct sockaddr_in *out);

#endif
