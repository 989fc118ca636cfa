/* An established secure channel (after secure/handshake.h): every packet is encrypted and
 * authenticated (ChaCha20-Poly1305 IETF), numbered per direction (the 64-bit number is the
 * nonce and travels in clear), and accepted at most once (a sliding window of the last 1024
 * numbers); a packet that fails authentication is counted and never looked at further.
 *
 *   DATA: type (1, 0xA5) | number (8, big-endian) | ciphertext (n) | tag (16)
 *
 * The type and number are authenticated as associated data. Nothing here allocates.
 */
#ifndef MC_SECURE_SESSION_H
#define MC_SECURE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secure/handshake.h"

#define MC_SECURE_DATA_OVERHEAD 25u   /* type + number + tag */
#define MC_SECURE_REPLAY_WINDOW 1024u
/* The largest DATA packet: a largest Mercury packet (1472 bytes) with the overhead. */
#define MC_SECURE_LARGEST_DATA (1472u + MC_SECURE_DATA_OVERHEAD)

/* Statuses of opening a DATA packet (MC_SECURE_OK = 0 when accepted). */
enum {
    MC_SECURE_OPEN_MALFORMED = -20, /* too short, not DATA, or bigger than the output */
    MC_SECURE_OPEN_AUTH = -21,      /* did not authenticate: forged, corrupted, other key */
    MC_SECURE_OPEN_REPLAY = -22,    /* that number was accepted already */
    MC_SECURE_OPEN_TOO_OLD = -23,   /* older than the window */
    MC_SECURE_SEAL_EXHAUSTED = -24, /* 2^64 - 1 packets sent: the channel must be renewed */
};

/* Numbers received so far: the highest, and which of the 1024 below it were seen. */
typedef struct {
    uint64_t highest;   /* 0: none yet (numbers start at 1) */
    uint64_t bits[MC_SECURE_REPLAY_WINDOW / 64]; /* bit (highest - n) for n in the window */
} mc_secure_replay;

/* Whether n would be accepted (not seen, not too old); MC_SECURE_OK or an OPEN status. */
int mc_secure_replay_check(const mc_secure_replay *r, uint64_t n);
/* Record n as accepted (call only after it authenticated and passed the check). */
void mc_secure_replay_mark(mc_secure_replay *r, uint64_t n);

typedef struct {
    uint8_t tx_key[MC_SECURE_KEY_BYTES], rx_key[MC_SECURE_KEY_BYTES];
    uint64_t next_out;  /* number of the next packet sent (from 1) */
    mc_secure_replay rx;
    uint64_t sealed, opened, auth_failures, replays, too_old, malformed;
} mc_secure_session;

/* From agreed keys: the server sends with s2c and receives c2s; the client the reverse. */
void mc_secure_session_init(mc_secure_session *s, const mc_secure_keys *keys, bool server);
void mc_secure_session_clear(mc_secure_session *s);

/* Encrypt plain (len bytes) into out (room for len + MC_SECURE_DATA_OVERHEAD); the packet's
 * size in *outlen. MC_SECURE_OK, MC_SECURE_OPEN_MALFORMED (no room) or
 * MC_SECURE_SEAL_EXHAUSTED. */
int mc_secure_seal(mc_secure_session *s, const uint8_t *plain, size_t len, uint8_t *out,
                   size_t outcap, size_t *outlen);
/* Authenticate and decrypt a DATA packet into plain (room for len - overhead); its size in
 * *plainlen. Only an accepted packet changes the session (its number is marked). */
int mc_secure_open(mc_secure_session *s, const uint8_t *pkt, size_t len, uint8_t *plain,
                   size_t plaincap, size_t *plainlen);

#endif
