/* The manager's registry of globally named bases (BigWorld's registerGlobally and
 * lookUpBaseByName): name -> mailbox, and which process registered it.
 *
 * Pure bookkeeping (no I/O): a hash table of at most MC_GLOBALS_MAX names. Names are
 * 1..MC_GLOBAL_NAME_MAX bytes of printable ASCII without spaces. A process's names are
 * dropped when it dies or stops (mc_globals_drop_owner).
 */
#ifndef MC_MANAGER_GLOBALS_H
#define MC_MANAGER_GLOBALS_H

#include "common/mailbox_ref.h"
#include "server/control.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_GLOBALS_MAX 100000u

typedef enum {
    MC_GLOBALS_OK = 0,
    MC_GLOBALS_TAKEN = 1,
    MC_GLOBALS_NOT_FOUND = 2,
    MC_GLOBALS_BAD = 3,
    MC_GLOBALS_FULL = 4,
    MC_GLOBALS_NO_MEMORY = 5,
} mc_globals_status;

typedef struct mc_globals mc_globals;

mc_globals *mc_globals_new(size_t max_entries);
void mc_globals_free(mc_globals *g);

/* Is this a valid global name (len bytes, not NUL-terminated necessarily)? */
bool mc_globals_name_ok(const char *name, size_t len);

mc_globals_status mc_globals_register(mc_globals *g, const char *name,
                                      const mc_mailbox_ref *mb, uint32_t owner);
/* Remove name if it is registered with exactly this mailbox. */
mc_globals_status mc_globals_deregister(mc_globals *g, const char *name,
                                        const mc_mailbox_ref *mb);
/* OK with *mb (and *owner when not NULL), or NOT_FOUND. */
mc_globals_status mc_globals_lookup(const mc_globals *g, const char *name, mc_mailbox_ref *mb,
                                    uint32_t *owner);
/* Drop every name the owner registered; returns how many. */
size_t mc_globals_drop_owner(mc_globals *g, uint32_t owner);
size_t mc_globals_count(const mc_globals *g);

#endif
