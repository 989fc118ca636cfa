/* entity-bench: entity calls between a real baseapp and cellapp against the same payloads
 * as raw mercury messages (docs/tools/entity-bench.md).
 *
 * entity_cluster.c starts and always stops the processes (manager, baseapp, cellapp) and
 * talks to them through the watcher tool; entity_raw.c runs the raw mercury baseline in two
 * forked processes; entity_bench.c runs the phases and prints the table.
 */
#ifndef MC_BENCH_ENTITY_BENCH_H
#define MC_BENCH_ENTITY_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One phase's outcome, entity or raw. */
typedef struct {
    bool ran;        /* false: not run or failed (error says why) */
    uint64_t count;  /* calls or messages completed */
    double elapsed_s;
    double cpu_s[2]; /* sender side, receiver side (base/cell, raw sender/receiver) */
    bool has_rtt;
    double p50_us, p99_us, max_us;
    char error[200];
} eb_result;

typedef struct {
    uint32_t calls, rtts, batch, window, rounds;
    unsigned time_limit_s;
    bool keep_logs;
} eb_options;

/* ---- entity_cluster.c ------------------------------------------------------------------ */

typedef struct {
    char dir[256];      /* temporary run dir: logs */
    char bindir[512];
    char manager[64];   /* IP:PORT */
    pid_t mgr, base, cell;
    int32_t entity;     /* the Bench base */
} eb_cluster;

/* Start the manager, a baseapp and a cellapp (loopback, free ports) with the bench game,
 * wait until both registered, create the Bench base and its cell. 0, or -1 with why. Every
 * process started is stopped by eb_cluster_stop (SIGTERM, SIGKILL after 3 s), and killed
 * (SIGKILL) at exit and on SIGINT/SIGTERM/SIGHUP. */
int eb_cluster_start(eb_cluster *c, char *why, size_t whylen);
/* 0 when every process exited 0 after SIGTERM, -1 otherwise (see the logs). */
int eb_cluster_stop(eb_cluster *c);
/* Run one phase (mode 1 one-way, 2 two-way) on the Bench base, waiting at most limit_s. */
int eb_cluster_phase(eb_cluster *c, const eb_options *o, int mode, uint32_t count,
                     eb_result *r);

/* CPU seconds (utime + stime) of a live process from /proc/<pid>/stat; -1 if unreadable. */
double eb_proc_cpu_s(pid_t pid);
/* The directory of this executable (build/bin). */
int eb_self_dir(char *out, size_t outlen);
/* A free UDP port on 127.0.0.1 (0 if none). */
int eb_free_port(void);

/* ---- entity_raw.c ---------------------------------------------------------------------- */

/* The raw mercury baseline: one-way messages (mode 1) or round trips (mode 2) with the
 * entity calls' payload sizes, between two forked processes. */
int eb_raw_phase(const eb_options *o, int mode, uint32_t count, eb_result *r);

#endif
