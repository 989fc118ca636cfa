/* The receiving side's late senders (retire_hold.c): pairs (retiring baseapp, sender) for the
 * senders a retiring baseapp named in RETIRE_END (they did not answer RETIRED in time). What
 * such a sender sends straight to a base taken from that baseapp is held until it says the
 * sender's stream ended (RETIRE_SENDER_END) or dies. Each RETIRE_END replaces its sender's
 * whole list (a handover that started over names only the peers late that time). Bounded:
 * at most `max` pairs in all (beyond, a pair is not added: what it sends is not held). */
#ifndef MC_BASEAPP_RETIRE_LAG_H
#define MC_BASEAPP_RETIRE_LAG_H

#include "mercury/address.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    mc_address from, sender;
} retire_lag;

typedef struct {
    retire_lag *v;
    uint64_t n; /* (the watcher retire/lagSenders) */
} retire_lags;

/* Whether `sender` is named late by retiring baseapp `from`. */
bool retire_lags_has(const retire_lags *l, const mc_address *from, const mc_address *sender);
/* Forget (from, sender), or every pair of `from` when sender is NULL. */
void retire_lags_drop(retire_lags *l, const mc_address *from, const mc_address *sender);
/* RETIRE_END from `from`: its late senders are now exactly senders[0..n) (duplicates once);
 * those it named before and not now are forgotten. 0, or -1 when out of memory or `max`
 * reached (some of the new pairs were not added). */
int retire_lags_replace(retire_lags *l, const mc_address *from, const mc_address *senders,
                        size_t n, size_t max);
void retire_lags_free(retire_lags *l);

#endif
