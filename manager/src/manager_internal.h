/* The manager's internals shared by its modules (not a public API): the instance, the
 * watchers it publishes, and the wire form of registry entries. */
#ifndef MC_MANAGER_INTERNAL_H
#define MC_MANAGER_INTERNAL_H

#include "globals.h"
#include "id_ranges.h"
#include "manager.h"
#include "manager_cells.h"
#include "space_homes.h"

#include <event2/event.h>

/* The roles with a dead-after time of their own (mc_manager_role_timeouts). */
#define MC_MANAGER_ROLE_TIMEOUTS 3

/* What a registry/deadAfterMs<Role> watcher points at. */
typedef struct {
    struct mc_manager *m;
    mc_role role;
    const char *option;
} mc_manager_role_ref;

struct mc_manager {
    mc_server *server;
    mc_registry *registry;
    struct event *expire_ev;
    uint64_t dead_after_ms;       /* --deadAfterMs: every role's unless it has its own */
    uint64_t role_dead_after_ms[MC_REG_ROLE_SLOTS]; /* --deadAfterMs<Role> by role; 0: none */
    mc_manager_role_ref role_refs[MC_MANAGER_ROLE_TIMEOUTS]; /* the registry/deadAfterMs<Role> watchers' */
    uint64_t heartbeat_ms;
    uint64_t registrations;
    uint64_t refusals;
    uint64_t heartbeats;
    uint64_t unknown_heartbeats;
    uint64_t queries;
    uint64_t deaths;
    uint64_t forgotten;
    uint64_t malformed;
    uint64_t instance;   /* random, never 0: which manager gave an id (fencing) */
    uint64_t fenced;     /* processes told they were replaced */
    uint64_t counts[4]; /* refreshed on read */
    mc_id_ranges ids;   /* entity id ranges (manager_ids.c) */
    uint64_t id_refusals;
    mc_globals *globals; /* globally registered bases (manager_globals.c) */
    uint64_t global_lookups;
    mc_space_homes *space_homes; /* where lost spaces are restored (manager_query.c) */
    uint64_t space_home_asks, space_home_picks;
    mc_manager_cells *cells;     /* spaces' partitions into cells (manager_cells.c) */
    struct mc_cells_auto *cells_auto; /* automatic splits and merges (cells_auto.c) */
    /* Test fault knob (--faultKnobs): heartbeats from the process of this name are ignored,
     * neither answered nor counted as signs of life (a partition between it and us). */
    char ignore_heartbeats_from[64];
    uint64_t ignored_heartbeats;
    struct mc_console *console; /* the web console (console.h), NULL when off */
    uint32_t ring_version; /* the backup ring's (manager_ring.c) */
    uint64_t retiring_marked; /* baseapps marked retiring (command/retireBaseapp) */
};

/* ---- manager_core.c: below every other file of the manager ---------------------------- */

/* The backup ring (server/backup_ring.h) every process is told. A baseapp was born, died or
 * stopped: the ring has a new version. */
void mc_manager_ring_changed(mc_manager *m, const mc_reg_entry *e);
/* The current ring (live baseapps in registry order) into out; its strings point into the
 * registry (valid until it changes). False when out of memory; free with
 * mc_manager_ring_clear. */
bool mc_manager_ring_fill(mc_manager *m, Mc__Control__BackupRing *out);
void mc_manager_ring_clear(Mc__Control__BackupRing *r);

/* Tell every live process (but about) about `about` with the current ring, in a
 * ProcessEvent of that kind (birth, death, stop) and reason. */
void mc_manager_broadcast(mc_manager *m, Mc__Control__EventKind kind, const mc_reg_entry *about,
                          const char *reason);
/* The same of kind EVENT_UNKNOWN (a retiring baseapp: the ring changed, nobody was born or
 * died). */
void mc_manager_announce(mc_manager *m, const mc_reg_entry *e, const char *reason);

/* Whether to log the count-th occurrence of something a sender can repeat at will: the
 * first ten, then one in a thousand (the counters watch every one). */
bool mc_manager_worth_logging(uint64_t count);
/* Count (and, rate-limited, log) a control message the manager cannot use. */
void mc_manager_unusable(mc_manager *m, const char *what, const char *src);

/* manager_ids.c: ID_RANGE requests; the ids/ watchers. */
void mc_manager_handle_id_range(mc_manager *m, const char *src, const uint8_t *data, size_t len,
                                mc_server_request *request);
void mc_manager_publish_ids(mc_manager *m);

/* manager_globals.c: GLOBAL_REGISTER / GLOBAL_DEREGISTER / GLOBAL_LOOKUP; dropping a dead or
 * stopped process's names; the globals/ watchers. */
void mc_manager_handle_global(mc_manager *m, uint8_t msg_id, const char *src,
                              const uint8_t *data, size_t len, mc_server_request *request);
void mc_manager_drop_globals(mc_manager *m, const mc_reg_entry *e);
void mc_manager_publish_globals(mc_manager *m);

/* The dead-after time of a process of that role: its own, or deadAfterMs. */
uint64_t mc_manager_dead_after_ms(const mc_manager *m, mc_role role);
/* The roles with a dead-after option of their own, and the option's name. */
extern const struct mc_manager_role_timeout {
    mc_role role;
    const char *option; /* "deadAfterMsCellapp"... (also the watcher registry/<option>) */
} mc_manager_role_timeouts[MC_MANAGER_ROLE_TIMEOUTS];
/* Do these settings leave room for two heartbeats per dead-after time? false with a
 * one-line reason ("deadAfterMs: ..." or "heartbeatMs: ..."). */
bool mc_manager_check_timing(uint64_t dead_after_ms, uint64_t heartbeat_ms, char *why,
                             size_t whylen);

/* ---- the parts, on the core; manager.c (registration, heartbeats, deaths) on them ------ */

/* manager_ring.c: the ring's watchers and command/retireBaseapp. */
int mc_manager_publish_ring(mc_manager *m);

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
