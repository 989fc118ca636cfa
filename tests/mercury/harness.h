/* Shared scaffolding for the Mercury Check suites: a test interface, a receiver that checks
 * ordered exactly-once delivery with verifiable content, and bounded event-loop pumping. */
#ifndef MC_TEST_MERCURY_HARNESS_H
#define MC_TEST_MERCURY_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "mercury/mercury.h"

enum {
    T_SEQ = 1,   /* fixed 8: u32 stream, u32 counter */
    T_VAR1 = 2,  /* variable, 1-byte length: u32 counter then pattern bytes */
    T_VAR2 = 3,  /* variable, 2-byte length */
    T_VAR4 = 4,  /* variable, 4-byte length */
    T_REQ = 5,   /* request: first byte 1 = reply with the rest echoed, 2 = reply with
                    T_REQ_BIG_REPLY pattern bytes, 0 = ignore */
    T_NOTE = 6,  /* variable, 2-byte: anything (counted) */
};

#define T_REQ_BIG_REPLY 1200

extern const mc_interface test_iface;

/* What a receiving nub has seen. */
typedef struct {
    uint64_t next;        /* next expected counter (ordered streams) */
    uint64_t received;    /* messages of the ordered streams */
    uint64_t out_of_order;
    uint64_t bad_content;
    uint64_t notes;
    uint64_t requests;
    uint32_t last_reply_id; /* of the last request handled */
    uint64_t last_length;
    uint64_t stale_seen;  /* messages with counter < base (reset test) */
    uint64_t base;
    size_t lengths_seen;
    uint32_t lengths[32];
} recv_state;

/* Fill buf[n] with the pattern of message `counter` (first 4 bytes = counter if n >= 4). */
void pattern_fill(uint8_t *buf, size_t n, uint32_t counter);
bool pattern_check(const uint8_t *buf, size_t n, uint32_t counter);

typedef struct {
    struct event_base *base;
    mc_nub *a, *b;
    recv_state ra, rb;
    mc_channel *ab; /* a's channel to b */
} pair;

/* Two nubs on one base; cfg_tweak may adjust each config (NULL = defaults). */
void pair_open(pair *p, void (*cfg_tweak)(mc_nub_config *cfg, int which));
void pair_close(pair *p);
/* Free b and open a new nub (default config) on b's address: b's process restarted. */
void pair_restart_b(pair *p);
/* Run the loop until pred(ctx) is true or seconds pass. Returns pred's final value. */
bool pump_until(struct event_base *base, bool (*pred)(void *), void *ctx, double seconds);
void pump_for(struct event_base *base, double seconds);

/* Send `count` T_SEQ-like messages of `size` bytes (size 8 uses T_SEQ, else T_VAR4) with
 * counters from `first`, sending the bundle when done. */
void send_stream(mc_channel *ch, uint32_t first, uint32_t count, size_t size);
/* Wait for the receiver to count `total` ordered messages. */
bool wait_received(pair *p, recv_state *r, uint64_t total, double seconds);

const mc_message_def *tdef(uint8_t id);

/* A reply handler's record (on_reply): calls, last status, the first 64 bytes of data. */
typedef struct {
    int calls;
    mc_reply_status status;
    int info_missing; /* MC_REPLY_OK calls without info or data */
    size_t len;
    uint8_t data[64];
} reply_rec;
void on_reply(void *ctx, mc_reply_status status, const mc_message_info *info,
              mc_istream *data);
bool reply_done(void *ctx); /* ctx: reply_rec; true once called */

/* A channel-death handler's record (on_dead): how many deaths, the last reason. */
typedef struct {
    int deaths;
    mc_channel_death reason;
} death_rec;
void on_dead(void *ctx, mc_channel *ch, mc_channel_death reason);
bool died(void *ctx); /* ctx: death_rec; true once a death was recorded */

/* A clock running `offset` ahead of the real one: mc_clock_set_source(fake_clock_now, &fc),
 * and mc_clock_set_source(NULL, NULL) to go back. */
typedef struct {
    mc_time_us offset;
} fake_clock;
mc_time_us fake_clock_now(void *ctx);

/* A clock that stands still at `at` (mc_clock_set_source(frozen_clock_now, &fz)): nothing
 * that waits on time (resend timers, keepalives) fires while it is set. */
typedef struct {
    mc_time_us at;
} frozen_clock;
mc_time_us frozen_clock_now(void *ctx);
/* Run the loop until pred(ctx) or `loops` passes of event_base_loop(EVLOOP_ONCE) (each
 * returns within a nub's 5 ms tick), for when mc_clock_now_us() is frozen. */
bool pump_loops_until(struct event_base *base, bool (*pred)(void *), void *ctx, int loops);

#endif
