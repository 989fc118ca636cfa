/* The state of cells moving between cellapps, in layers: cell_move_records.c (records,
 * queues, deadlines) at the bottom; cell_move_out.c (the old cellapp's side) and
 * cell_move_in.c (the new cellapp's) on it, neither calling the other; cell_move.c (the
 * routing of messages for a moving cell, the sweep, peer deaths, set-up) on top. Private to
 * those four files; the rest of the cellapp uses the functions in cellapp.h.
 * docs/WORLD.md "Teleports". */
#ifndef MC_CELLAPP_CELL_MOVE_H
#define MC_CELLAPP_CELL_MOVE_H

#include "cellapp.h"
#include "entity/move_wire.h"

#include <event2/event.h>

typedef struct move_msg {
    struct move_msg *next;
    uint8_t id;
    mc_origin o;
    size_t len;
    uint8_t data[];
} move_msg;

typedef enum {
    MV_OUT_PREPARE, /* A: asked, CELL_MIGRATE not sent yet (the handler is still running) */
    MV_OUT_WAIT,    /* A: CELL_MIGRATE sent */
    MV_OUT_MOVED,   /* A: it left; what arrives is forwarded until `expires` */
    MV_IN_DORMANT,  /* B: made, waiting for commit or abort */
    MV_IN_LIVE,     /* B: committed (timers run), holding others' calls until flushed */
    MV_IN_DONE,     /* B: flushed; A's forwards of DESTROY_CELL / FETCH_CELL accepted */
} move_kind;

typedef struct {
    int32_t id;
    uint16_t type;
    move_kind kind;
    mc_address peer;          /* OUT: the new cellapp; IN: the old one */
    mc_mailbox_ref base;
    int32_t near_id;
    mc_vector3 position, direction;
    mc_time_us expires;       /* MOVED, DONE: forgotten then; DORMANT, LIVE: the deadline */
    move_msg *head, *tail;
    size_t nq;
    mc_timer_export *timers;  /* OUT: taken out (restored on failure); IN: to start */
    size_t ntimers;
    bool hold_all;            /* IN: a DESTROY_CELL is held: everything after it waits too */
    bool asking;              /* IN: CELL_MOVED sent to the base (the old cellapp is silent) */
    uint8_t *gone;            /* IN: CELL_GONE of a cell that went while arriving */
    size_t gone_len;
    bool witness;
    float radius, hysteresis;
    bool offload;             /* OUT: a real crossing into a neighbour's cell (ghosts.c): it
                               * stays here as a ghost of the real there */
    bool handover;            /* a witness's view handed over with it (an offload) */
    bool handed_ghosts;       /* OUT: its ghosts' holders handed over with it (an offload) */
    int32_t *told;            /* IN: the ids its client knows (handover) */
    size_t ntold;
} move_rec;

#define MOVES_MAX 65536u

typedef struct cell_moves {
    move_rec **recs;
    size_t n, cap;
    struct event *kick_ev, *sweep_ev;
    uint64_t started, moved, failed, arrived, refused, queued, held, forwarded, aborted,
        discarded, dropped, records, asked, restored_passed;
} cell_moves;

#define MOVES_SWEEP_MS 250

/* records and queues (cell_move_records.c) */
cell_moves *mv_moves(mc_engine *e);
/* How long the old cellapp forwards what arrives for a cell that left: six call timeouts. */
mc_time_us mv_forward_period(mc_engine *e);
/* How long a new cellapp waits for each word of the old one: three call timeouts. */
mc_time_us mv_arrival_deadline(mc_engine *e);
/* Rate-limited logging: the first ten, then one in a thousand. */
bool mv_log_ok(uint64_t n);
/* The record of entity id leaving (out) or arriving (!out), or NULL. */
move_rec *mv_find(cell_moves *m, int32_t id, bool out);
/* A new record (an older one of that entity and direction goes; when the table is full the
 * forwarding entry nearest its expiry goes), or NULL. */
move_rec *mv_rec_new(mc_engine *e, cell_moves *m, int32_t id, move_kind kind);
void mv_rec_remove(cell_moves *m, move_rec *r);
/* Free a record taken out of the table (its queue, timers, view). */
void mv_rec_free(move_rec *r);
/* The record's queue, taken out of it (the caller delivers or frees it). */
move_msg *mv_take_queue(move_rec *r);
void mv_free_queue(move_msg *q);
/* Queue a message (bounded by --cellQueueMax: beyond, refused busy); always true (taken). */
bool mv_enqueue(mc_engine *e, move_rec *r, uint8_t msg_id, const mc_origin *o,
                const uint8_t *data, size_t len);
/* Deliver queued messages here, in order, and free them (handlers may start other moves). */
void mv_deliver_all(mc_engine *e, move_msg *q);

/* the old cellapp (cell_move_out.c) */
/* Forward one message for a cell that left to its new cellapp. */
void mv_forward_one(mc_engine *e, move_rec *r, uint8_t msg_id, const mc_origin *o,
                    const uint8_t *data, size_t len);
/* Send CELL_MIGRATE for the moves asked since (the handlers that asked have returned). */
void mv_on_kick(evutil_socket_t fd, short what, void *ctx);

/* the new cellapp (cell_move_in.c) */
/* Drop a dormant copy (abort, or no word from a dead or silent old cellapp). */
void mv_drop_arrival(mc_engine *e, move_rec *r, bool tell_base);
/* The base knows the new address (or never will): deliver what was held, start the witness. */
void mv_settle(mc_engine *e, move_rec *r);
/* The old cellapp died or went silent before it said "flushed": ask the base whether it
 * knows this cellapp as the cell's (CELL_MOVED from here: it accepts only from the address
 * it knows). Yes: the old copy is gone, the cell lives here; no: dropped here; no answer:
 * a dormant copy is dropped, a committed one goes on. */
void mv_ask_base(mc_engine *e, move_rec *r);

#endif
