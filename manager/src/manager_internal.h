/* The manager's internals shared by its modules (not a public API): the instance, the
 * watchers it publishes, and the wire form of registry entries. */
#ifndef MC_MANAGER_INTERNAL_H
#define MC_MANAGER_INTERNAL_H

#include "manager.h"

#include <event2/event.h>

struct mc_manager {
    mc_server *server;
    mc_registry *registry;
    struct event *expire_ev;
    uint64_t dead_after_ms;
    uint64_t heartbeat_ms;
    uint64_t registrations;
    uint64_t refusals;
    uint64_t heartbeats;
    uint64_t unknown_heartbeats;
    uint64_t queries;
    uint64_t deaths;
    uint64_t forgotten;
    uint64_t malformed;
    uint64_t counts[4]; /* refreshed on read */
};

/* manager.c: do these settings leave room for two heartbeats per dead-after time? false
 * with a one-line reason ("deadAfterMs: ..." or "heartbeatMs: ..."). */
bool mc_manager_check_timing(uint64_t dead_after_ms, uint64_t heartbeat_ms, char *why,
                             size_t whylen);

/* manager_watchers.c: counts/, leastLoaded/, registry/ and processes/<name>/... */
void mc_manager_publish(mc_manager *m);
void mc_manager_publish_entry(mc_manager *m, mc_reg_entry *e);

/* manager_query.c: a registry entry (or the manager itself) as a heap ProcessInfo, and
 * QUERY requests. */
Mc__Control__ProcessInfo *mc_manager_info(const mc_reg_entry *e, mc_time_us now);
Mc__Control__ProcessInfo *mc_manager_self_info(mc_manager *m, mc_time_us now);
void mc_manager_handle_query(mc_manager *m, const uint8_t *data, size_t len,
                             mc_server_request *request);

#endif
