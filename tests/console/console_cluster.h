/* Helpers for the metrics and console tests: a small cluster launched with deploy/cluster on
 * free ports (redis, manager, loginapp, baseapp, cellapp; every process with its HTTP port),
 * and a blocking HTTP/1.1 client for 127.0.0.1 with a time limit. Every pid the cluster
 * starts is tracked by the harness (killed at exit, also on failure). */
#ifndef MC_TESTS_CONSOLE_CLUSTER_H
#define MC_TESTS_CONSOLE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct {
    char script[600], layout[600], run[600], build[600];
    char manager[64];   /* "127.0.0.1:PORT": internal (UDP) and HTTP (TCP) */
    char loginapp[64], baseapp[64], cellapp[64]; /* their HTTP addresses */
    char login_ext[64];
    int redis_port;
} cc_cluster;

/* deploy/cluster up in a run dir under the test's tmpdir; asserts it came up. Sets
 * MC_SECRET_FILE to the cluster's secret (for h_watcher). */
void cc_up(cc_cluster *c, const char *name);
/* deploy/cluster down; asserts it went down. */
void cc_down(cc_cluster *c);
/* Run deploy/cluster VERB with the cluster's run and build dirs. */
int cc_cmd(cc_cluster *c, const char *verb, const char *arg, char *out, size_t outlen);
/* A file in the run dir. */
const char *cc_run_file(const cc_cluster *c, const char *name, char *buf, size_t buflen);

/* Send req (len bytes) to addr and read the whole answer (until the server closes or
 * Content-Length is satisfied) into out (NUL-terminated). Returns the status code, or -1
 * (no connection, no answer within timeout_ms). */
int cc_http(const char *addr, const char *req, size_t len, char *out, size_t outlen,
            int timeout_ms);
/* GET path with an optional Cookie header value. */
int cc_get(const char *addr, const char *path, const char *cookie, char *out, size_t outlen);
/* POST a form body with optional cookie and CSRF token. */
int cc_post(const char *addr, const char *path, const char *cookie, const char *csrf,
            const char *body, char *out, size_t outlen);
/* The body of an HTTP answer (after the blank line), or "". */
const char *cc_body(const char *answer);

#endif
