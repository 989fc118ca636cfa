/* The cluster file: how tools find the cluster an operator started.
 *
 * `deploy/cluster up` writes <run dir>/cluster.conf: lines of `KEY VALUE` (`manager
 * IP:PORT`, `secretFile PATH`, `loginapp IP:PORT` once per loginapp, `loginPublicKey`,
 * `redis`, `redisCluster`, `redisUser`, `redisPasswordFile`, `version 1`); `#` starts a
 * comment; unknown keys are ignored, so later versions may add keys. Format:
 * docs/tools/cluster.md. Every tool that must find the running cluster (watcher, mc-db,
 * mc-client, bots) reads it through here, in common, the layer they all sit on.
 */
#ifndef MC_COMMON_CLUSTER_FILE_H
#define MC_COMMON_CLUSTER_FILE_H

#include <stdbool.h>
#include <stddef.h>

#define MC_CLUSTER_FILE_NAME "cluster.conf"

/* The cluster file tools read by default: $MC_RUN_DIR/cluster.conf when MC_RUN_DIR is set
 * and the file exists, else <repo>/run/cluster.conf (the repository the running binary was
 * built in: <repo>/<build>/bin/<tool>) when it exists. false when there is none. */
bool mc_cluster_file_find(char *path, size_t pathlen);

/* The value of the first `KEY VALUE` line for key in the file at path. Returns 1 and the
 * value (trimmed) in out, 0 when the file has no such key, -1 when the file cannot be read
 * or the value does not fit (a one-line reason in err). */
int mc_cluster_file_get(const char *path, const char *key, char *out, size_t outlen, char *err,
                        size_t errlen);

#endif
