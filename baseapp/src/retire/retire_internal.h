/* Retiring's private state (baseapp/src/retire*.c only; retire.h): the phase, the bases on
 * their way (frozen) with the calls waiting for them, the new homes of those gone, the
 * counters. */
#ifndef MC_BASEAPP_RETIRE_INTERNAL_H
#define MC_BASEAPP_RETIRE_INTERNAL_H

#include "retire.h"
#include "retire_lag.h"
#include "common/map.h"

#include <event2/event.h>

#define RETIRE_WAIT_MAX 100000 /* calls waiting for bases on their way, at most */
#define RETIRE_TIMERS_MAX 1024
#define RETIRE_HOMES_MAX 1000000 /* bases of retired baseapps living elsewhere, at most */

typedef enum { R_IDLE, R_MARKING, R_MOVING, R_LINGER, R_HANDOVER, R_STOPPING } retire_phase;

/* What waits for a base (in arrival order): a call, a message from its cell, or a call from
 * its client. */
typedef enum { RI_CALL, RI_CELL_MSG, RI_CLIENT_CALL } retire_item_kind;

typedef struct retire_call {
    struct retire_call *next;
    retire_item_kind kind;
    uint8_t msg;              /* RI_CELL_MSG: its message id; RI_CLIENT_CALL: its mc_part */
    mc_time_us at;            /* when it arrived (a hold's bound, retire_hold.c) */
    mc_origin origin;         /* RI_CALL, RI_CELL_MSG: who sent it */
    mc_call_header header;    /* RI_CALL; entity_id for every kind */
    size_t len;
    uint8_t args[];
} retire_call;

typedef struct {
    retire_call *head, *tail;
    size_t n;
} retire_queue;

/* A base on its way (frozen here). */
typedef struct {
    int32_t id;
    mc_address to;
    size_t bytes;
    retire_queue q;          /* what arrived for it meanwhile, in order */
    mc_timer_export *timers; /* taken out of the engine while it is away */
    size_t ntimers;
    char **names;            /* its global names (registered again if it stays) */
    size_t nnames;
    size_t names_pending;    /* deregistrations not answered yet: OFFLOAD_BASE waits */
    uint64_t gen;            /* which move of this id (stale answers are ignored) */
    unsigned tries;          /* OFFLOAD_BASE sent so far (resent while unanswered) */
    uint8_t *payload;        /* the OFFLOAD_BASE payload (the frozen state) */
    size_t len;
    bool retarget;           /* sent again from its kept state: its new home died */
    unsigned attempts;       /* re-targets so far */
} retire_move;

/* A base gone to its new home: kept until we stop, with the state it went with, so that a
 * new home that dies before it could back it up does not lose it (it is sent again). */
typedef struct {
    mc_address home;         /* first: calls go there */
    uint8_t *payload;
    size_t len;
    bool retarget;           /* its home died: sent again at the next wave */
    unsigned attempts;
    retire_queue q;          /* while it waits to be sent again: what came for it */
} retire_gone;

/* Baseapps the manager declared dead (killed, silent, fenced: not a graceful stop) that are
 * remembered (the oldest forgotten beyond): only bases gone to one of these are sent again. */
#define RETIRE_KILLED_MAX 64

#define RETIRE_RETARGET_MAX 200 /* waves (50 ms each) a base is sent again before it is lost */

/* The retiring side: a peer asked RETIRED. */
typedef struct {
    mc_address addr;
    bool ended;  /* answered, RETIRED_NOTED heard, or dead: its stream through us ended */
    bool named;  /* named in RETIRE_END (a laggard): RETIRE_SENDER_END goes once it ended */
} retire_asked;

typedef struct base_retire {
    mc_engine *e;
    retire_phase phase;
    uint64_t bytes_per_sec, in_flight_max, linger_ms;
    struct event *tick_ev;
    mc_map moving;           /* id -> retire_move */
    mc_map moved;            /* id -> retire_gone (its new home, its state) */
    uint64_t nretarget;      /* gone bases whose home died: sent again at the next wave */
    mc_address killed[RETIRE_KILLED_MAX]; /* peers declared dead, not stopped (a ring) */
    size_t nkilled, killed_next;
    mc_map taken;            /* receiving side: id -> retire_taken (retire_hold.c) */
    mc_map homes;            /* bases of a retired baseapp living elsewhere than their ring
                              * pick here (RETIRE_HOMES): id -> mc_address */
    uint64_t nheld, nhomes;
    uint64_t hold_max, hold_bytes; /* --retireHoldMax, --retireHoldBytes: per base */
    /* receiving side: senders a retiring baseapp named in RETIRE_END (they did not answer
     * RETIRED in time): what they send straight to a base taken from it is held until it
     * says their stream ended (RETIRE_SENDER_END) or dies */
    retire_lags lags;        /* (retire_lag.h) */
    /* the handover (R_HANDOVER): RETIRED asked of every live peer, answers awaited */
    int handover_step;
    size_t handover_waiting;
    uint64_t handover_gen;   /* handovers started (one starts over when a new home died) */
    retire_asked *asked;     /* the peers asked RETIRED, and whether their stream ended */
    size_t nasked;
    uint64_t nlaggards;      /* asked, named in RETIRE_END, not ended yet */
    mc_time_us reask_at;     /* RETIRED asked again of those then */
    /* retire_tell.c: the ring as last seen, and baseapps born on it still to be told */
    uint32_t ring_version;
    uint64_t ring_instance;
    mc_address *ring_prev;
    size_t nring_prev;
    struct retire_tell *tells;
    size_t ntells;
    uint64_t tell_gen;
    uint64_t gen;
    uint64_t nmoving, nmoved_map, nwaiting;
    double budget;
    mc_time_us last_tick, linger_until;
    struct {
        uint64_t offloaded, failed, bytes, forwarded, waited, refused_calls, clients,
            no_target, waves, received, receive_refused, resent, passed, client_calls,
            held, released, hold_full, late, told, homes_sent, homes_forwarded, retargeted,
            laggards, laggards_ended, lag_held, homes_told, handovers_restarted;
    } st;
} base_retire;

/* retire.c */
bool retire_log_allowed(uint64_t n);
/* Whether the manager declared `home` dead (killed, fenced) and it was not born again:
 * the bases we sent it are sent again. A home that stopped gracefully is not. */
bool retire_home_killed(const base_retire *r, const mc_address *home);

/* retire_move.c: one base's move (frozen, OFFLOAD_BASE, then gone or thawed). */
/* Whether a base can leave now: not being created, destroyed, given a cell or written, and
 * no client on its way to it or within its grace time to resume here. */
bool retire_movable(base_retire *r, mc_entity *ent);
/* Freeze it and send it to its backup on the ring: the bytes it sends (0: not now). */
size_t retire_start_move(base_retire *r, mc_entity *ent);
/* Forget every move (the engine is going): no call is answered. */
void retire_moves_free(base_retire *r);
/* A new home died: the bases that went there are sent again from their kept state. */
void retire_home_died(base_retire *r, const mc_address *home);
/* Send again the bases marked so (at most in_flight at once): how many were started. */
size_t retire_retarget_wave(base_retire *r);

/* retire_queue.c: items waiting for a base. */
bool retire_enqueue(base_retire *r, retire_queue *q, retire_item_kind kind, uint8_t msg,
                    const mc_origin *o, const mc_call_header *h, int32_t id,
                    const uint8_t *data, size_t len);
/* Send every item on to base id's new home `to`, in order (the queue is emptied). */
void retire_queue_send(base_retire *r, retire_queue *q, const mc_address *to);
/* Run every item here, in order (the base stays or lives here). */
void retire_queue_run(base_retire *r, retire_queue *q);
void retire_queue_free(base_retire *r, retire_queue *q);

/* retire_pass.c: one item sent on to the base's new home. */
void retire_pass_item(base_retire *r, const mc_address *to, retire_call *c);
/* Run a cell's message for a base here (as if it came from the cell). */
void retire_run_cell_msg(mc_engine *e, const mc_origin *o, uint8_t msg, const uint8_t *data,
                         size_t len);

/* retire_hold.c: the receiving side holds what comes straight to a base it took from a
 * retiring baseapp until that one's stream for it ended (RETIRE_END, its death), and after
 * RETIRE_END what the senders it named send, until RETIRE_SENDER_END for each; at most
 * --retireHoldMax items and --retireHoldBytes bytes a base (beyond: BUSY). */
typedef struct {
    mc_address from;
    bool open;
    size_t bytes;
    retire_queue q;
} retire_taken;
bool retire_hold_take(base_retire *r, retire_item_kind kind, uint8_t msg, const mc_origin *o,
                      const mc_call_header *h, int32_t id, const uint8_t *data, size_t len);
/* Retiring baseapp `from` died: whatever waits for its streams runs now. */
void retire_hold_release(base_retire *r, const mc_address *from);
void retire_hold_free(base_retire *r);
/* A base taken from a retiring baseapp and still held (its stream open). */
retire_taken *retire_taken_of(base_retire *r, int32_t id);

/* retire_handover.c: RETIRED to every live peer, RETIRE_HOMES, RETIRE_END, the stop. */
void retire_handover_start(base_retire *r);
/* A new home died during the handover: its bases go again, the handover starts over
 * later (true when so). */
bool retire_handover_check(base_retire *r);
/* A peer's stream through us ended (RETIRED_NOTED, its death); the tick's re-asks. */
void retire_handover_ended(base_retire *r, const mc_address *peer);
void retire_handover_tick(base_retire *r, mc_time_us now);
/* retire_tell.c: a baseapp born on the ring is told where the bases we took from a retired
 * (stopped) baseapp live (RETIRED_HOMES); the tick watches the ring. Where bases of a
 * retired baseapp live (RETIRE_HOMES, RETIRED_HOMES) is kept here too. */
void retire_homes_keep(base_retire *r, const int32_t *ids, const mc_address *homes, size_t n);
void retire_tell_tick(base_retire *r, mc_time_us now);
void retire_tell_free(base_retire *r);
/* retire_move.c */
void retire_relay_to(mc_engine *e, const mc_address *home, const mc_origin *o,
                     const mc_call_header *h, const uint8_t *args, size_t len);

#endif
