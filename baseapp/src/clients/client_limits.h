/* Per-client rate limits at the baseapp's external interface (docs/CLIENT.md "Limits"):
 * token buckets on the MOVEs a client sends and on its exposed calls (BASE_CALL, CELL_CALL),
 * and the hard limit beyond which a client that keeps calling is disconnected. Pure (no
 * engine, no clock of its own): the proxy hands in the time. */
#ifndef MC_BASEAPP_CLIENT_LIMITS_H
#define MC_BASEAPP_CLIENT_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/clock.h"

/* A token bucket: refilled at a rate a second up to its burst; a new one starts full. */
typedef struct {
    double tokens;
    mc_time_us at;   /* when it was last refilled (0: never used) */
} client_bucket;

/* Refill b up to now, then take one token: true when there was one. */
bool client_bucket_take(client_bucket *b, double rate, double burst, mc_time_us now);

/* The limits (the baseapp's options). */
typedef struct {
    double moves_per_s;           /* --clientMovesPerS (burst: one second's worth) */
    double calls_per_s;           /* --clientCallsPerS */
    double call_burst;            /* --clientCallBurst */
    uint64_t call_drops_to_kick;  /* --clientCallDropsToKick: dropped calls in one second */
} client_limits;

/* One client's state. */
typedef struct {
    client_bucket moves, calls;
    mc_time_us drops_since;       /* start of the current one-second window of drops */
    uint64_t drops;               /* calls dropped in that window */
} client_limit_state;

typedef enum {
    CLIENT_LIMIT_OK = 0,   /* take it */
    CLIENT_LIMIT_DROP = 1, /* over the rate: drop it (count it) */
    CLIENT_LIMIT_KICK = 2, /* over the hard limit: drop it and disconnect the client */
} client_limit_verdict;

/* A MOVE from the client: CLIENT_LIMIT_OK or CLIENT_LIMIT_DROP. */
client_limit_verdict client_limit_move(const client_limits *l, client_limit_state *s,
                                       mc_time_us now);
/* An exposed call from the client: OK, DROP, or KICK once more than call_drops_to_kick
 * calls were dropped within one second. */
client_limit_verdict client_limit_call(const client_limits *l, client_limit_state *s,
                                       mc_time_us now);

#endif
