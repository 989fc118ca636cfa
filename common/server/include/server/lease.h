/* The manager lease: a process acts as the live owner of its entities and check-outs only
 * while it is in touch with the manager.
 *
 * The manager declares a process dead after dead-after ms without a heartbeat. A process
 * holds a lease of half that time, counted from when it SENT the last request the manager
 * answered as "alive" (a heartbeat, or its registration): the manager received that request
 * after it was sent, so the lease ends at least half the dead-after time before the manager
 * can declare the process dead. While the lease has run out the process holds what would act
 * on others: its entity messages to other processes and its persistence writes. Held entity
 * messages wait here, in order, bounded in count and bytes; they are released in order when
 * the lease is renewed (the manager answered again: the process is alive there, or a
 * restarted manager registered it), dropped (their callback told so) when the process is
 * fenced or freed, or when a held item's own deadline passes (a request whose caller stops
 * waiting). Persistence writes are gated in the store (mc_persist_set_write_gate).
 *
 * The module is plain logic with no I/O: the framework renews it (registration.c) and ticks
 * it; the entity engine holds through it. The manager itself has no lease. */
#ifndef MC_SERVER_LEASE_H
#define MC_SERVER_LEASE_H

#include "common/clock.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mc_lease mc_lease;

/* What happens to a held item: sent now (the lease was renewed), or dropped. */
typedef enum {
    MC_LEASE_RELEASE = 0, /* the lease is valid again: send it now */
    MC_LEASE_DROPPED,     /* fenced, or the process is being freed: never sent */
    MC_LEASE_EXPIRED,     /* its own deadline passed while held: never sent */
} mc_lease_outcome;

/* Kinds of held items (for the counters). */
typedef enum {
    MC_LEASE_CALL = 0, /* an entity message to another process */
    MC_LEASE_WRITE,    /* a persistence write (when one is held here) */
} mc_lease_kind;

/* Called exactly once per held item: to send it (RELEASE) or to tell its owner it will not
 * be (DROPPED, EXPIRED); either way the callback owns arg again. */
typedef void (*mc_lease_fn)(void *arg, mc_lease_outcome outcome);

/* Defaults of the bounds (options leaseHeldMax, leaseHeldBytes). */
#define MC_LEASE_HELD_MAX_DEFAULT 10000u
#define MC_LEASE_HELD_BYTES_DEFAULT (16u * 1024u * 1024u)

typedef struct {
    uint64_t renewals;       /* answers that renewed the lease */
    uint64_t expiries;       /* times it ran out (valid -> expired, seen by a check) */
    uint64_t calls_held;     /* items held now, by kind */
    uint64_t writes_held;
    uint64_t held_bytes;     /* bytes held now */
    uint64_t held_total;     /* items ever held */
    uint64_t released;       /* items released (sent) */
    uint64_t held_dropped;   /* items dropped: fenced, freed or expired */
    uint64_t held_refused;   /* holds refused: over the bound */
} mc_lease_stats;

/* A lease holding at most max_items items and max_bytes bytes (0: the defaults). No term is
 * known yet: the lease is not valid until the first renewal after a term is set. */
mc_lease *mc_lease_new(size_t max_items, size_t max_bytes);
/* Drops every held item (MC_LEASE_DROPPED), then frees. NULL is fine. */
void mc_lease_free(mc_lease *l);

/* The manager's dead-after time: the lease lasts half of it. */
void mc_lease_set_dead_after(mc_lease *l, uint64_t dead_after_ms);
/* The manager answered a request sent at sent_at saying we are alive: valid until
 * sent_at + dead_after/2 (an answer to an older request never shortens it). Releases the
 * held items, in order, when the lease is valid at `now`. Returns the number released. */
size_t mc_lease_renew(mc_lease *l, mc_time_us sent_at, mc_time_us now);
/* Valid at now (false before the first renewal). */
bool mc_lease_valid(mc_lease *l, mc_time_us now);
/* A new item must wait: the lease is not valid, or items are held already (order). */
bool mc_lease_must_hold(mc_lease *l, mc_time_us now);
/* When the lease runs out (0 before the first renewal). */
mc_time_us mc_lease_expires_at(const mc_lease *l);

/* Hold an item of `bytes` bytes. deadline (0: none) drops it with MC_LEASE_EXPIRED when it
 * is still held then (mc_lease_tick). Returns 0, or -1 when it would exceed the bounds (or
 * out of memory): then fn is not called and the caller fails the item itself. */
int mc_lease_hold(mc_lease *l, mc_lease_kind kind, size_t bytes, mc_time_us deadline,
                  mc_lease_fn fn, void *arg);
/* Drop held items past their deadline; release the held items if the lease is valid (not
 * normally needed: renew releases). */
void mc_lease_tick(mc_lease *l, mc_time_us now);
/* Drop every held item (fenced: the process must not act). Returns the number dropped. */
size_t mc_lease_drop_all(mc_lease *l);

const mc_lease_stats *mc_lease_stats_of(const mc_lease *l);
/* "none" (no renewal yet), "valid" or "holding" (ran out). */
const char *mc_lease_state_name(mc_lease *l, mc_time_us now);

#endif
