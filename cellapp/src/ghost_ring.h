/* A ghost's recent client calls (docs/WORLD.md "Offloading", "Calls of a third cellapp"):
 * the numbered allClients / otherClients calls (GHOST_CLIENT_CALL_SEQ) that reached a ghost,
 * the newest kept, bounded by count, bytes and age, so that a witness offloaded here hears
 * those the cellapp it left did not give its client, and none it did. The entries held are
 * always consecutive numbers ending at the newest kept: a call that cannot be kept (larger
 * than the byte bound, out of memory) empties the ring, so a hole is never hidden.
 * Pure: no engine. */
#ifndef MC_CELLAPP_GHOST_RING_H
#define MC_CELLAPP_GHOST_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t calls;   /* entries at most (0: none kept) */
    uint32_t bytes;   /* argument bytes at most, over the entries */
    uint64_t age_us;  /* an entry older than this goes */
} ghost_ring_limits;

typedef struct {
    uint32_t seq;
    uint16_t method;
    uint8_t *args;
    size_t len;
    uint64_t at_us;
} ghost_ring_entry;

typedef struct {
    ghost_ring_entry *e; /* a circular buffer of cap entries */
    size_t head, n, cap;
    size_t bytes;
} ghost_ring;

void ghost_ring_free(ghost_ring *r); /* (a zeroed ring is an empty one) */
/* Keep call seq (the one after the newest held, or any when empty; otherwise the ring is
 * emptied first) at now_us, the oldest going beyond the limits. 0 kept, -1 not kept (the
 * ring is empty then). */
int ghost_ring_push(ghost_ring *r, const ghost_ring_limits *l, uint32_t seq, uint16_t method,
                    const uint8_t *args, size_t len, uint64_t now_us);
/* Entries older than the age bound go (an emptied ring frees its buffer too). Returns how
 * many went. */
size_t ghost_ring_expire(ghost_ring *r, const ghost_ring_limits *l, uint64_t now_us);
/* The oldest entries go until at most `bytes` of arguments are held (the buffer freed when
 * none is left). Returns how many went. */
size_t ghost_ring_trim(ghost_ring *r, size_t bytes);
/* The oldest number held (0: empty). */
uint32_t ghost_ring_first(const ghost_ring *r);
/* Each entry numbered above `after`, oldest first. Returns how many. */
typedef void (*ghost_ring_fn)(void *ctx, const ghost_ring_entry *entry);
size_t ghost_ring_since(const ghost_ring *r, uint32_t after, ghost_ring_fn fn, void *ctx);

#endif
