/* The manager's registry: every process that ever registered, its state and its load.
 *
 * Pure bookkeeping with no I/O, so it can be tested on its own. Names are assigned per
 * role in registration order ("baseapp01", "baseapp02"...) and never reused, so a
 * restarted process gets a new name. A registration whose def digest differs from the
 * cluster's is refused. A process is dead once it has been silent for dead_after_us, when
 * its channel dies, or when a new process registers at its internal address; a dead one
 * that comes back is fenced (told it was replaced; it exits).
 */
#ifndef MC_MANAGER_REGISTRY_H
#define MC_MANAGER_REGISTRY_H

#include "common/clock.h"
#include "proto/control.pb-c.h"
#include "server/role.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_REG_NAME_MAX 32
#define MC_REG_ADDR_MAX 64
#define MC_REG_DIGEST_LEN 64
/* Roles with a dead-after time of their own: the role values below this. */
#define MC_REG_ROLE_SLOTS 8
/* Bounds, so no sender can grow the registry without limit: at most this many processes
 * alive at once (more registrations are refused), and at most this many dead or stopped
 * ones remembered (mc_registry_prune forgets the oldest beyond it; names stay unused). */
#define MC_REG_MAX_ALIVE 1024
#define MC_REG_MAX_GONE 256

typedef struct {
    uint32_t id;
    char name[MC_REG_NAME_MAX];
    mc_role role;
    uint32_t pid;
    uint64_t incarnation; /* the process's own, random per start (0: not given) */
    char host[MC_REG_ADDR_MAX];
    char internal_addr[MC_REG_ADDR_MAX];
    char external_addr[MC_REG_ADDR_MAX];
    char digest[MC_REG_DIGEST_LEN + 1];
    char version[32];
    Mc__Control__ProcessState state;
    double load;
    mc_time_us registered_at;
    mc_time_us last_heartbeat;
    mc_time_us died_at;
    char reason[160]; /* why it is dead or stopped */
    bool retiring;    /* a baseapp offloading its bases before it stops (manager_ring.c):
                       * out of the backup ring, never picked as the least loaded */
} mc_reg_entry;

typedef enum {
    MC_REG_OK = 0,
    MC_REG_DIGEST_MISMATCH = 1,
    MC_REG_BAD_REQUEST = 2,
    MC_REG_NO_MEMORY = 3,
    MC_REG_REPEATED = 4,
    MC_REG_FULL = 5, /* MC_REG_MAX_ALIVE processes are alive */
} mc_reg_status;

typedef struct mc_registry mc_registry;

/* cluster_digest: the manager's own def digest (64 hex), or NULL to adopt the first
 * registration's digest. */
mc_registry *mc_registry_new(const char *cluster_digest, mc_time_us dead_after_us);
void mc_registry_free(mc_registry *r);

const char *mc_registry_digest(const mc_registry *r); /* "" until known */
mc_time_us mc_registry_dead_after(const mc_registry *r);
void mc_registry_set_dead_after(mc_registry *r, mc_time_us dead_after_us);
/* A role's own dead-after time (0: the registry's, above); a role beyond the known ones is
 * ignored. */
void mc_registry_set_role_dead_after(mc_registry *r, mc_role role, mc_time_us dead_after_us);
/* How long a process of that role may be silent before it is dead. */
mc_time_us mc_registry_dead_after_of(const mc_registry *r, mc_role role);

/* Called for each entry that becomes dead (or stopped) as a side effect. */
typedef void (*mc_reg_death_fn)(void *ctx, mc_reg_entry *e);

/* Register a process. On MC_REG_OK *out is the new entry. A repeated registration (same
 * internal address and pid as an alive entry: a retry whose first reply was lost) returns
 * that entry again with MC_REG_REPEATED. Otherwise an alive entry with the same internal
 * address is first marked dead (reported through on_death). On refusal a one-line reason
 * is in why. */
mc_reg_status mc_registry_add(mc_registry *r, const Mc__Control__RegisterRequest *req,
                              mc_time_us now, mc_reg_death_fn on_death, void *ctx,
                              mc_reg_entry **out, char *why, size_t whylen);

/* A heartbeat: false when the id is unknown or not alive. */
bool mc_registry_heartbeat(mc_registry *r, uint32_t id, double load, mc_time_us now);
/* Mark an alive process dead or stopped; returns the entry, or NULL if it was not alive. */
mc_reg_entry *mc_registry_mark(mc_registry *r, uint32_t id, Mc__Control__ProcessState state,
                               const char *reason, mc_time_us now);
/* A dead or stopped process came back (a heartbeat or a registration carrying its id): mark
 * it fenced (its reason says why it was declared dead). Returns the entry, or NULL if it
 * was neither dead nor stopped (already fenced, alive, or unknown). */
mc_reg_entry *mc_registry_fence(mc_registry *r, uint32_t id);
/* Mark dead every alive process silent for longer than its role's dead-after time; returns
 * how many. */
size_t mc_registry_expire(mc_registry *r, mc_time_us now, mc_reg_death_fn on_death, void *ctx);

/* Forget the dead and stopped processes that died longest ago while more than keep_gone
 * are remembered; on_forget (may be NULL) sees each entry just before it is freed. Call it
 * outside any iteration over the registry. Returns how many were forgotten. */
size_t mc_registry_prune(mc_registry *r, size_t keep_gone,
                         void (*on_forget)(void *ctx, mc_reg_entry *e), void *ctx);

size_t mc_registry_count(const mc_registry *r);
mc_reg_entry *mc_registry_at(const mc_registry *r, size_t index);
size_t mc_registry_count_state(const mc_registry *r, Mc__Control__ProcessState state);
mc_reg_entry *mc_registry_find_id(const mc_registry *r, uint32_t id);
mc_reg_entry *mc_registry_find_name(const mc_registry *r, const char *name);
mc_reg_entry *mc_registry_find_alive_addr(const mc_registry *r, const char *internal_addr);
/* The alive process of `role` with the lowest load (ties: lowest id), or NULL. */
mc_reg_entry *mc_registry_least_loaded(const mc_registry *r, mc_role role);

/* Fill a wire ProcessInfo (strings are heap copies; free with mc_pb_free on the parent or
 * mc_registry_info_clear). Returns false when out of memory. */
bool mc_registry_to_info(const mc_reg_entry *e, mc_time_us now, Mc__Control__ProcessInfo *out);

#endif
