/* The processes the client tests play against: a manager, a baseapp with its external
 * interface and (optionally) a cellapp with the example game, on loopback with free ports,
 * logs in the test's temporary folder, and the example game's defs; the watcher tool on them.
 * Check assertions fail the test when a process does not come up or does not exit cleanly.
 */
#ifndef MC_TESTS_CLIENT_CLUSTER_H
#define MC_TESTS_CLIENT_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/defs.h"
#include "mcclient/client.h"

typedef struct {
    char mgr[32];                      /* the manager's address */
    pid_t mpid, bpid, cpid;            /* cpid 0: no cellapp */
    char blog[600], clog[600], mlog[600];
    mc_entity_defs *defs;              /* the example game's */
} client_cluster;

/* Start the manager, the baseapp (baseapp01) with the extra options base_opts and, when
 * with_cell, the cellapp (cellapp01) with cell_opts (each a NULL-terminated list, at most
 * four, or NULL), and wait until they are registered. */
void client_cluster_start(client_cluster *c, const char *const *base_opts, bool with_cell,
                          const char *const *cell_opts);
/* SIGTERM to each (baseapp, cellapp, manager) and exit status 0 asserted; frees the defs. */
void client_cluster_stop(client_cluster *c);

/* `watcher VERB PROC PATH [a1 [a2 [a3]]]`: true with the value after the path in val, or
 * false with the watcher's exit status and output in val. */
bool client_cluster_watch(const client_cluster *c, const char *proc, const char *verb,
                          const char *path, const char *a1, const char *a2, const char *a3,
                          char *val, size_t n);
/* A number watcher's value, -1 when it cannot be read. */
long long client_cluster_counter(const client_cluster *c, const char *proc, const char *path);

/* command/createBase TYPE PROPS on baseapp01 (props JSON), retried for up to 15 s while the
 * cluster settles: the new base's id (fails the test when it never answers). */
int32_t client_cluster_create(const client_cluster *c, const char *type, const char *props);
/* A client of the library logged in to the base `account` (command/issueSession on
 * baseapp01, then a connect with the session's id and key), with these callbacks and ud;
 * fails the test when it cannot connect. */
mc_client *client_cluster_connect(const client_cluster *c, int32_t account,
                                  const mc_client_callbacks *cb, void *ud);

/* Call an exposed method of the client's player (an entity of `type`) with arguments given as
 * JSON, checked against the defs; asserts that the call was sent. */
void client_cluster_call_json(const client_cluster *c, mc_client *client, uint16_t type,
                              mc_part part, const char *method, const char *json);

/* The monotonic clock in milliseconds. */
long client_cluster_now_ms(void);

#endif
