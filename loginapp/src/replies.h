/* Logins the loginapp answered (or is answering), remembered while the client's cookie
 * lives: a LOGIN resent from the same address with the same client nonce (its reply was
 * lost) gets the same LOGIN_REPLY again instead of a second login, and one resent while its
 * login still runs is dropped (the client resends). Keyed by source address and client
 * nonce; an entry lives `keep_ms`; at most `capacity` entries (the oldest goes first), so
 * memory is bounded whatever arrives. Time is the caller's (mc_clock_now_us).
 */
#ifndef MC_LOGINAPP_REPLIES_H
#define MC_LOGINAPP_REPLIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secure/login.h"

typedef struct la_replies la_replies;

typedef struct {
    uint32_t ip;
    uint16_t port;
    uint8_t nonce[8];
} la_reply_key;

typedef enum { LA_REPLY_NONE, LA_REPLY_PENDING, LA_REPLY_ANSWERED } la_reply_state;

/* capacity >= 1, keep_ms >= 1; NULL when out of memory or on a bad argument. */
la_replies *la_replies_new(size_t capacity, uint64_t keep_ms);
void la_replies_free(la_replies *r);

/* What is known of key at now_us; with LA_REPLY_ANSWERED the reply is copied to out. */
la_reply_state la_replies_lookup(la_replies *r, const la_reply_key *key, uint64_t now_us,
                                 uint8_t out[MC_LOGIN_REPLY_SIZE]);
/* A login for key has started (0, or -1 when out of memory). */
int la_replies_pending(la_replies *r, const la_reply_key *key, uint64_t now_us);
/* Its answer (replaces the pending entry, or adds one). 0 or -1 (out of memory). */
int la_replies_answered(la_replies *r, const la_reply_key *key, uint64_t now_us,
                        const uint8_t reply[MC_LOGIN_REPLY_SIZE]);
size_t la_replies_count(const la_replies *r);

#endif
