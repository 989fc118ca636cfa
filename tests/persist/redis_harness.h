/* Private redis-server instances for tests: one Redis (optionally with a password or an ACL
 * user, optionally with an fsync'd append-only file) or a local Redis Cluster of three
 * masters, on free ports of 127.0.0.1, each in its own directory under the test's temp dir.
 *
 * Processes are started with the integration harness (tests/integration/harness.h), so they
 * die with the test process whatever happens (PR_SET_PDEATHSIG) and are killed at exit;
 * rh_stop / rh_cluster_stop stop them earlier. Every wait is bounded (seconds). These calls
 * block: they are for test code, never for a server process.
 */
#ifndef MC_TESTS_REDIS_HARNESS_H
#define MC_TESTS_REDIS_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct {
    bool password;      /* requirepass with a random password (written to a 0600 file) */
    const char *user;   /* also an ACL user of that name with the password (needs password) */
    bool aof;           /* appendonly yes, appendfsync always (survives kill -9) */
} rh_options;

typedef struct rh_redis rh_redis;

/* Start one redis-server and wait (10 s) until it answers PING. NULL on failure (logged to
 * stderr with the log file's path). */
rh_redis *rh_start(const rh_options *opt);
/* "127.0.0.1:PORT" */
const char *rh_addr(const rh_redis *r);
int rh_port(const rh_redis *r);
pid_t rh_pid(const rh_redis *r);
/* The password file's path (NULL without a password) and the password itself. */
const char *rh_password_file(const rh_redis *r);
const char *rh_password(const rh_redis *r);
/* The instance's directory (its log is redis.log there). */
const char *rh_dir(const rh_redis *r);
/* Kill with sig and wait (10 s) for the exit. 0 or -1. */
int rh_kill(rh_redis *r, int sig);
/* Start again on the same port and directory (after rh_kill) and wait until it answers. */
int rh_restart(rh_redis *r);
/* Stop (SIGTERM, then SIGKILL after 5 s) and free. NULL is accepted. */
void rh_stop(rh_redis *r);
/* Run redis-cli against the instance with the given arguments (a NULL-ended list), with the
 * credentials, capturing its output in out. Returns its exit status, -1 on timeout (10 s). */
int rh_cli(const rh_redis *r, char *out, size_t outlen, ...);

/* A local Redis Cluster of three masters (no replicas), every slot assigned, state ok on
 * every node before it returns. */
typedef struct rh_cluster rh_cluster;
#define RH_CLUSTER_NODES 3
rh_cluster *rh_cluster_start(const rh_options *opt);
/* Node i (0..2). */
rh_redis *rh_cluster_node(rh_cluster *c, int i);
void rh_cluster_stop(rh_cluster *c);

#endif
