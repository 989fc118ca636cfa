/* The manager's entity id allocator: consecutive ranges from a high-water mark, never an
 * id twice while the cluster lives, also across a manager restart.
 *
 * With a state file, the manager persists a *reservation* R: ids below R may have been
 * handed out, ids at or above R never were. Before handing out any id at or above R it
 * writes a new reservation (the range's end plus MC_ID_RESERVE_STEP, capped at 2^31) to
 * the file atomically (temp file, fsync, rename, fsync of the directory), and only then
 * gives the range; a restarted manager continues from the reservation it reads. The write
 * blocks the loop, rarely (once per MC_ID_RESERVE_STEP ids). Without a state file ids start
 * at 1 again after a restart.
 *
 * The state file is text: "mercury-cluster manager state 1\nidReserved N\n" with N in
 * 1..2^31.
 */
#ifndef MC_MANAGER_ID_RANGES_H
#define MC_MANAGER_ID_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_ID_RESERVE_STEP 1000000u
/* One past the largest id. */
#define MC_ID_END 0x80000000u

typedef enum {
    MC_IDS_OK = 0,
    MC_IDS_BAD_COUNT = 1,   /* count outside 1..MC_ID_RANGE_MAX_COUNT */
    MC_IDS_EXHAUSTED = 2,   /* every id has been handed out */
    MC_IDS_WRITE_FAILED = 3 /* the new reservation could not be persisted */
} mc_ids_status;

typedef struct {
    char path[4096];   /* the state file, "" for none */
    uint64_t next;     /* the next id to hand out (1 .. MC_ID_END) */
    uint64_t reserved; /* persisted: ids below it may have been handed out */
    uint64_t ranges;   /* ranges handed out since start */
    uint64_t writes;   /* reservations written since start */
} mc_id_ranges;

/* Start: with path NULL or "", ids start at 1 and nothing is persisted. Otherwise read the
 * state file (a missing one is created with nothing reserved); false with a one-line reason
 * when it cannot be read, is corrupt, or cannot be created. */
bool mc_id_ranges_open(mc_id_ranges *r, const char *path, char *why, size_t whylen);

/* Check the state file without changing anything (before the process sets up): false with
 * a one-line reason when it exists but cannot be read or is corrupt, or does not exist and
 * its directory is not writable. */
bool mc_id_ranges_check(const char *path, char *why, size_t whylen);

/* Hand out up to count ids (fewer only at the end of the id space): *first and *got. */
mc_ids_status mc_id_ranges_take(mc_id_ranges *r, uint32_t count, uint32_t *first, uint32_t *got,
                                char *why, size_t whylen);

/* Write a state file atomically with this reservation. false with a reason. */
bool mc_id_ranges_write_state(const char *path, uint64_t reserved, char *why, size_t whylen);

#endif
