/* A small cluster of real processes running the Probe game (tests/entity/game) for the
 * entity-rule tests: a manager, baseapps and cellapps on 127.0.0.1 with random free ports,
 * driven through the watcher tool. Everything started is killed by the harness at exit; a
 * test that wants to prove a clean exit stops the processes itself (rc_stop). */
#ifndef MC_TEST_RULES_CLUSTER_H
#define MC_TEST_RULES_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RC_MAX 3

typedef struct {
    char manager[32];
    char dir[512];
    pid_t mgr, base[RC_MAX], cell[RC_MAX];
    char base_addr[RC_MAX][32], cell_addr[RC_MAX][32];
    char base_name[RC_MAX][16], cell_name[RC_MAX][16];
    char log_mgr[600], log_base[RC_MAX][600], log_cell[RC_MAX][600];
    int nbase, ncell;
    char base_opt[128]; /* one more option every baseapp gets ("" none) */
} rc_cluster;

/* Start a manager, nbase baseapps and ncell cellapps (each registered and holding entity
 * ids when this returns; fails the test otherwise). */
void rc_start(rc_cluster *c, int nbase, int ncell);
/* The same, every baseapp started with one more option (e.g. "--restoreLostCells=false"). */
void rc_start_opt(rc_cluster *c, int nbase, int ncell, const char *base_opt);
/* Start one more cellapp into the running cluster (at most RC_MAX in all): registered and
 * holding entity ids when this returns; its index. */
int rc_add_cellapp(rc_cluster *c);
/* SIGTERM every process (servers first, the manager last) and check each exits 0 within
 * 30 s (an ASan leak report makes the exit code non-zero). */
void rc_stop(rc_cluster *c);

/* The watcher tool: `watcher call PROC PATH args...` / `get PROC PATH`; exit status, the
 * output (stdout and stderr) in out. */
int rc_call(rc_cluster *c, char *out, size_t outlen, const char *proc, const char *path,
            const char *a1, const char *a2, const char *a3);
int rc_get(rc_cluster *c, char *out, size_t outlen, const char *proc, const char *path);
/* The value part of `get` ("baseapp01  PATH  VALUE" -> VALUE); fails the test when the get
 * fails. */
void rc_value(rc_cluster *c, const char *proc, const char *path, char *out, size_t outlen);
long long rc_int(rc_cluster *c, const char *proc, const char *path);
/* Poll until the value contains want (true) or timeout_ms passes (false). */
bool rc_wait_value(rc_cluster *c, const char *proc, const char *path, const char *want,
                   int timeout_ms);
/* Poll until the integer value is at least min. */
bool rc_wait_int_at_least(rc_cluster *c, const char *proc, const char *path, long long min,
                          int timeout_ms);
/* The result of `watcher call ... command/call ID METHOD ARGS` ("[...]"), failing the test
 * when the call fails. */
void rc_entity_call(rc_cluster *c, const char *proc, int32_t id, const char *method,
                    const char *json_args, char *out, size_t outlen);
/* Create a Probe base on a baseapp (command/createBase) with the given label; its id. */
int32_t rc_create_probe(rc_cluster *c, const char *proc, const char *label);

#endif
