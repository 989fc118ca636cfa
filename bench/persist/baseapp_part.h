/* persist-bench's baseapp part: entity writes through a real baseapp process (manager and
 * baseapp started here on loopback, the bench game of bench/persist/game): N Heroes each
 * write themselves K times with writeToDB, one write in flight per Hero; the rate is read
 * from the baseapp's db/writesOk watcher. */
#ifndef MC_PERSIST_BENCH_BASEAPP_PART_H
#define MC_PERSIST_BENCH_BASEAPP_PART_H

#include <stddef.h>

typedef struct {
    const char *bin_dir;   /* manager, baseapp, watcher */
    const char *res, *game;
    const char *redis;     /* IP:PORT */
    const char *dir;       /* logs */
    unsigned heroes, writes_each;
} pb_baseapp_opts;

typedef struct {
    double writes_per_s;
    double cpu_us_per_write; /* the baseapp's CPU per write */
    unsigned long long writes, failed;
    double seconds;
} pb_baseapp_result;

/* 0, or -1 with a one-line reason (naming the log to read) in why. Stops everything it
 * started, also on failure. */
int pb_baseapp_run(const pb_baseapp_opts *o, pb_baseapp_result *res, char *why, size_t whylen);

#endif
