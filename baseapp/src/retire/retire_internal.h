/* Retiring's private state (baseapp/src/retire*.c only; retire.h): the phase, the bases on
 * their way (frozen) with the calls waiting for them, the new homes of those gone, the
 * counters. */
#ifndef MC_BASEAPP_RETIRE_INTERNAL_H
#define MC_BASEAPP_RETIRE_INTERNAL_H

#include "retire.h"
#include "common/map.h"

#include <event2/event.h>

#define RETIRE_WAIT_MAX 100000 /* calls waiting for bases on their way, at most */
#define RETIRE_TIMERS_MAX 1024

typedef enum { R_IDLE, R_MARKING, R_MOVING, R_LINGER, R_STOPPING } retire_phase;

typedef struct retire_call {
    struct retire_call *next;
    mc_origin origin;
    mc_call_header header;
    size_t len;
    uint8_t args[];
} retire_call;

/* A base on its way (frozen here). */
typedef struct {
    int32_t id;
    mc_address to;
    size_t bytes;
    retire_call *head, *tail;
    size_t ncalls;
    mc_timer_export *timers; /* taken out of the engine while it is away */
    size_t ntimers;
    char **names;            /* its global names (registered again if it stays) */
    size_t nnames;
    size_t names_pending;    /* deregistrations not answered yet: OFFLOAD_BASE waits */
    uint64_t gen;            /* which move of this id (stale answers are ignored) */
    unsigned tries;          /* OFFLOAD_BASE sent so far (resent while unanswered) */
    uint8_t *payload;        /* the OFFLOAD_BASE payload (the frozen state) */
    size_t len;
} retire_move;

typedef struct base_retire {
    mc_engine *e;
    retire_phase phase;
    uint64_t bytes_per_sec, in_flight_max, linger_ms;
    struct event *tick_ev;
    mc_map moving;           /* id -> retire_move */
    mc_map moved;            /* id -> mc_address (its new home) */
    mc_map taken;            /* receiving side: id -> mc_address of the baseapp it came from */
    uint64_t gen;
    uint64_t nmoving, nmoved_map, nwaiting;
    double budget;
    mc_time_us last_tick, linger_until;
    struct {
        uint64_t offloaded, failed, bytes, forwarded, waited, refused_calls, clients,
            no_target, waves, received, receive_refused, resent;
    } st;
} base_retire;

/* retire.c */
bool retire_log_allowed(uint64_t n);

/* retire_move.c: one base's move (frozen, OFFLOAD_BASE, then gone or thawed). */
/* Whether a base can leave now: not being created, destroyed, given a cell or written, and
 * no client on its way to it or within its grace time to resume here. */
bool retire_movable(base_retire *r, mc_entity *ent);
/* Freeze it and send it to its backup on the ring: the bytes it sends (0: not now). */
size_t retire_start_move(base_retire *r, mc_entity *ent);
/* Forget every move (the engine is going): no call is answered. */
void retire_moves_free(base_retire *r);

#endif
