/* The secure handshake of external (client) channels: how a client that holds a one-time
 * session key (given by the loginapp) and a server that issued it agree on the keys of an
 * encrypted channel over UDP, without the server keeping any state for an address that has
 * not proven it receives what is sent to it, and without ever answering more bytes than it
 * was sent. Pure functions on byte buffers (no sockets, no clock of their own); libsodium for
 * the primitives. docs/PROTOCOL.md ("External channels") has every byte.
 *
 *   client                                      server
 *   HELLO     (256 bytes, padded) ----------->  stateless: answer a cookie bound to the
 *                                               source address, the client's nonce and key
 *             <----------- CHALLENGE (49 bytes)
 *   CONNECT   (256 bytes: the cookie, the  ->   cookie valid and fresh: the address is
 *             session id, a MAC by the          proven. Session key found and the MAC right:
 *             session key)                      an ephemeral key pair, the channel keys
 *             <----------- ACCEPT (65 bytes)    (X25519 exchange bound to the session key)
 *                          or REJECT (10 bytes, with a status)
 *   DATA both ways (secure/session.h)
 *
 * Keys: both sides make an ephemeral X25519 key pair (crypto_kx); the exchange's two keys
 * are each bound to the session key and both nonces with keyed BLAKE2b, so the channel needs
 * both the session key (authentication) and the ephemeral secrets (forward secrecy).
 */
#ifndef MC_SECURE_HANDSHAKE_H
#define MC_SECURE_HANDSHAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_SECURE_VERSION 1u

/* First byte of every packet on an external socket. */
enum {
    MC_SECURE_HELLO = 0xA1,
    MC_SECURE_CHALLENGE = 0xA2,
    MC_SECURE_CONNECT = 0xA3,
    MC_SECURE_ACCEPT = 0xA4,
    MC_SECURE_DATA = 0xA5,
    MC_SECURE_REJECT = 0xA6,
};

#define MC_SECURE_KEY_BYTES 32u
#define MC_SECURE_HELLO_SIZE 256u     /* HELLO and CONNECT are padded to exactly this */
#define MC_SECURE_CHALLENGE_SIZE 49u
#define MC_SECURE_ACCEPT_SIZE 65u
#define MC_SECURE_REJECT_SIZE 10u
#define MC_SECURE_COOKIE_SIZE 40u      /* expiry (8) + MAC (32) */
#define MC_SECURE_COOKIE_MS 10000u     /* a cookie is good for this long */

/* Outcomes. Those marked "drop" must not be answered at all. */
typedef enum {
    MC_SECURE_OK = 0,
    MC_SECURE_MALFORMED = -1,   /* drop: wrong size, type, version or padding */
    MC_SECURE_BAD_COOKIE = -2,  /* drop: not made by this server for this address and key */
    MC_SECURE_EXPIRED = -3,     /* drop: the cookie is too old (the client starts again) */
    MC_SECURE_NO_SESSION = -4,  /* answer REJECT: no such session id, or used, or expired */
    MC_SECURE_BAD_PROOF = -5,   /* answer REJECT: the MAC is not by the session key */
    MC_SECURE_UNEXPECTED = -6,  /* drop: a packet the client is not waiting for (or not
                                   for this attempt: another nonce) */
    MC_SECURE_AUTH = -7,        /* drop: the server's confirmation does not verify */
    MC_SECURE_REJECTED = -8,    /* the server refused: see the status */
    MC_SECURE_NO_MEMORY = -9,
} mc_secure_status;

const char *mc_secure_status_name(int status);

/* libsodium's initialisation (idempotent, thread-safe); 0 or -1. Every entry point below
 * also calls it. */
int mc_secure_init(void);

/* The keys of an established channel, per direction. */
typedef struct {
    uint8_t c2s[MC_SECURE_KEY_BYTES]; /* client to server */
    uint8_t s2c[MC_SECURE_KEY_BYTES];
} mc_secure_keys;

/* ---- server ------------------------------------------------------------------------- */

/* The server's cookie secret: random, replaced by mc_secure_secret_rotate (the previous one
 * is still accepted, so a rotation never breaks a handshake in progress). */
typedef struct {
    uint8_t current[MC_SECURE_KEY_BYTES];
    uint8_t previous[MC_SECURE_KEY_BYTES];
} mc_secure_secret;

int mc_secure_secret_init(mc_secure_secret *s);
void mc_secure_secret_rotate(mc_secure_secret *s);

/* The source of a packet (IPv4, host byte order, as mercury's mc_address holds it). */
typedef struct {
    uint32_t ip;
    uint16_t port;
} mc_secure_peer;

/* A HELLO from `from` at now_ms: writes the CHALLENGE into out (MC_SECURE_CHALLENGE_SIZE
 * bytes). Keeps no state. MC_SECURE_OK, or MC_SECURE_MALFORMED (drop). */
int mc_secure_server_hello(const mc_secure_secret *s, mc_secure_peer from, uint64_t now_ms,
                           const uint8_t *pkt, size_t len, uint8_t out[MC_SECURE_CHALLENGE_SIZE]);

/* What the server knows of a session id it issued: 0 with its key in key_out when it exists
 * and may be used now, -1 otherwise. */
typedef int (*mc_secure_session_lookup)(void *ctx, uint64_t session_id,
                                        uint8_t key_out[MC_SECURE_KEY_BYTES]);

/* What a CONNECT led to. */
typedef struct {
    uint64_t session_id;
    uint8_t client_nonce[8];
    mc_secure_keys keys;           /* when MC_SECURE_OK */
    uint8_t reply[MC_SECURE_ACCEPT_SIZE]; /* ACCEPT (OK) or REJECT (NO_SESSION/BAD_PROOF) */
    size_t reply_len;              /* 0: answer nothing */
} mc_secure_accepted;

/* A CONNECT from `from`: checks the cookie (made by s for this address, nonce and key, and
 * fresh), then the session (lookup) and the MAC; on success derives the channel keys and
 * writes the ACCEPT. The caller keeps the result per address (a repeated CONNECT of the
 * same attempt should be answered with the same ACCEPT, not a new exchange) and marks the
 * session used. */
int mc_secure_server_connect(const mc_secure_secret *s, mc_secure_peer from, uint64_t now_ms,
                             const uint8_t *pkt, size_t len, mc_secure_session_lookup lookup,
                             void *lookup_ctx, mc_secure_accepted *out);

/* ---- client ------------------------------------------------------------------------- */

typedef enum {
    MC_SECURE_CLIENT_HELLO,     /* sending HELLO, waiting for CHALLENGE */
    MC_SECURE_CLIENT_CONNECT,   /* sending CONNECT, waiting for ACCEPT */
    MC_SECURE_CLIENT_DONE,      /* keys agreed */
    MC_SECURE_CLIENT_REFUSED,   /* the server said REJECT */
} mc_secure_client_state;

typedef struct {
    mc_secure_client_state state;
    uint64_t session_id;
    uint8_t session_key[MC_SECURE_KEY_BYTES];
    uint8_t nonce[8];
    uint8_t pk[32], sk[32];     /* ephemeral */
    uint8_t cookie[MC_SECURE_COOKIE_SIZE];
    uint8_t reject_status;      /* when REFUSED */
} mc_secure_client;

/* A new attempt (fresh nonce and key pair). 0, or -1 when libsodium cannot start. */
int mc_secure_client_init(mc_secure_client *c, uint64_t session_id,
                          const uint8_t session_key[MC_SECURE_KEY_BYTES]);
/* Wipe the secrets. */
void mc_secure_client_clear(mc_secure_client *c);
/* The packet to (re)send in the current state (HELLO or CONNECT, MC_SECURE_HELLO_SIZE
 * bytes into out); 0 when there is nothing to send (done or refused). */
size_t mc_secure_client_packet(const mc_secure_client *c, uint8_t out[MC_SECURE_HELLO_SIZE]);
/* A packet from the server during the handshake: CHALLENGE (moves to CONNECT), ACCEPT
 * (keys into *keys, DONE), REJECT (REFUSED, MC_SECURE_REJECTED, the server's status byte in
 * c->reject_status). Anything else, or for another attempt: an error, state unchanged. */
int mc_secure_client_receive(mc_secure_client *c, const uint8_t *pkt, size_t len,
                             mc_secure_keys *keys);

#endif
