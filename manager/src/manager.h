/* The manager process: the registry served over the control plane.
 *
 * It answers REGISTER (refusing a def digest that differs from its own), HEARTBEAT,
 * DEREGISTER and QUERY; marks processes dead after missed heartbeats (deadAfterMs) or when
 * their channel dies; and tells every live process about each birth and death. Its
 * watchers list every process (processes/<name>/...) with its state and load. It hands
 * out entity id ranges (ID_RANGE; unique across restarts with --stateFile) and keeps the
 * cluster's globally named bases (GLOBAL_REGISTER, GLOBAL_DEREGISTER, GLOBAL_LOOKUP).
 */
#ifndef MC_MANAGER_MANAGER_H
#define MC_MANAGER_MANAGER_H

#include "registry.h"
#include "server/server.h"

typedef struct mc_manager mc_manager;

/* The role description main() hands to mc_server_main (options, callbacks). */
void mc_manager_describe(mc_manager *m, mc_server_desc *desc);
mc_manager *mc_manager_new(void);
/* Read (or create) the state file named by --stateFile, before the server runs: false with
 * a one-line reason when it is corrupt or unusable. */
bool mc_manager_open_state(mc_manager *m, const mc_config *cfg, char *why, size_t whylen);
void mc_manager_free(mc_manager *m);

#endif
