/* Packet authentication for internal nubs: every datagram a nub sends carries a tag made
 * with a key shared by the whole cluster (the cluster secret), and every datagram it
 * receives without a valid tag is dropped before a single byte of it is parsed (counted as
 * drops/badAuth). A process without the secret gets nothing back from an internal port.
 *
 * The tag is keyed BLAKE2b-128 (libsodium crypto_generichash) of the whole Mercury packet,
 * appended after it: a datagram is the packet (at most 1472 - MC_AUTH_TAG_BYTES bytes, the
 * nub limits its own packets accordingly) followed by the 16-byte tag. The key is derived
 * from the cluster secret with a fixed context string, so the secret itself is never used
 * directly as a MAC key. docs/PROTOCOL.md ("Authenticated internal packets") and
 * docs/SECURITY.md describe what it protects against and what it does not (replay of a
 * captured datagram is left to the channel's sequence numbers).
 */
#ifndef MC_MERCURY_AUTH_H
#define MC_MERCURY_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_AUTH_SECRET_BYTES 32u /* the cluster secret */
#define MC_AUTH_TAG_BYTES 16u    /* appended to every authenticated datagram */

/* A precomputed keyed state (the key block already absorbed): copying it is cheaper than
 * keying BLAKE2b again for every datagram. Opaque; 64-byte aligned as libsodium wants. */
typedef struct {
    _Alignas(64) unsigned char state[384];
    bool ready;
} mc_auth;

/* Derive the packet key from the cluster secret. 0, or -1 when libsodium cannot start. */
int mc_auth_init(mc_auth *a, const uint8_t secret[MC_AUTH_SECRET_BYTES]);
/* Wipe the key. */
void mc_auth_clear(mc_auth *a);
/* The tag of data[0..len) into tag. */
void mc_auth_tag(const mc_auth *a, const uint8_t *data, size_t len,
                 uint8_t tag[MC_AUTH_TAG_BYTES]);
/* Whether a datagram (packet + tag, len bytes) carries a valid tag: its packet length
 * (len - MC_AUTH_TAG_BYTES) in *packet_len when it does. Constant-time comparison. */
bool mc_auth_check(const mc_auth *a, const uint8_t *datagram, size_t len, size_t *packet_len);

/* Read a cluster secret file: 64 hexadecimal characters (an optional trailing newline). The
 * file must be a regular file not readable or writable by group or others (mode 0600 or
 * 0400), like an ssh key. 0, or -1 with a one-line reason in err. */
int mc_auth_load_secret(const char *path, uint8_t secret[MC_AUTH_SECRET_BYTES], char *err,
                        size_t errlen);

/* Wipe a secret held in memory (once the nub has derived its key). */
void mc_auth_wipe_secret(uint8_t secret[MC_AUTH_SECRET_BYTES]);

/* Write a new random secret to path (created with mode 0600; it must not exist), for tools
 * and benchmarks that start a private cluster. 0, or -1 with a reason in err. */
int mc_auth_make_secret_file(const char *path, char *err, size_t errlen);

/* Which secret file to use: `given` when it is set (an option), else the environment's
 * MC_SECRET_FILE; NULL when neither names one. */
const char *mc_auth_secret_file(const char *given);

#endif
