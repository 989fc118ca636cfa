/* Packet authentication for internal nubs: every datagram a nub sends carries a tag made
 * with a key shared by the whole cluster (the cluster secret), and every datagram it
 * receives without a valid tag is dropped before a single byte of it is parsed (counted as
 * drops/badAuth). A process without the secret gets nothing back from an internal port.
 *
 * A datagram is the Mercury packet (at most 1472 - MC_AUTH_OVERHEAD bytes: the nub limits
 * its own packets accordingly) followed by a 12-byte nonce and a 16-byte tag: the packet is
 * authenticated (not encrypted) as the associated data of an AEAD with an empty message,
 * AES-256-GCM (GMAC) where the CPU has AES-NI, else ChaCha20-Poly1305 (IETF); the nonce's
 * top bit says which, and a receiver verifies either (ChaCha20-Poly1305 everywhere, AES-GCM
 * where its CPU has AES-NI). Each nub numbers its datagrams from a random point under a
 * random salt, so a nonce never repeats under the key. Both keys are derived from the
 * cluster secret with fixed context strings, so the secret itself is never a cipher key.
 * docs/PROTOCOL.md ("Authenticated internal packets") and docs/SECURITY.md describe what it
 * protects against and what it does not (replay of a captured datagram is left to the
 * channel's sequence numbers).
 */
#ifndef MC_MERCURY_AUTH_H
#define MC_MERCURY_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_AUTH_SECRET_BYTES 32u /* the cluster secret */
#define MC_AUTH_NONCE_BYTES 12u
#define MC_AUTH_TAG_BYTES 16u
#define MC_AUTH_OVERHEAD (MC_AUTH_NONCE_BYTES + MC_AUTH_TAG_BYTES) /* after every packet */

/* Derived keys (the AES-GCM key schedule precomputed) and the nub's nonce sequence.
 * Opaque. */
typedef struct {
    _Alignas(16) unsigned char aes[512]; /* crypto_aead_aes256gcm_state */
    unsigned char chacha[32];
    bool aes_available; /* this CPU can do AES-GCM (AES-NI and PCLMUL) */
    bool send_aes;      /* what this side tags with */
    uint8_t salt[4];    /* nonce bytes 0..3 (top bit: 1 AES-GCM, 0 ChaCha20-Poly1305) */
    uint64_t counter;   /* nonce bytes 4..11, the next datagram's */
    bool ready;
} mc_auth;

/* Derive the keys from the cluster secret and start a nonce sequence. The tags are AES-GCM
 * when this CPU has AES-NI unless `portable` (then ChaCha20-Poly1305, which every host can
 * verify: for a cluster with hosts without AES-NI). 0, or -1 when libsodium cannot start. */
int mc_auth_init(mc_auth *a, const uint8_t secret[MC_AUTH_SECRET_BYTES], bool portable);
/* Wipe the keys. */
void mc_auth_clear(mc_auth *a);
/* The trailer (nonce and tag, MC_AUTH_OVERHEAD bytes) of the packet data[0..len), with the
 * next nonce of the sequence. */
void mc_auth_seal(mc_auth *a, const uint8_t *data, size_t len,
                  uint8_t trailer[MC_AUTH_OVERHEAD]);
/* Whether a datagram (packet + trailer, len bytes) carries a valid tag: its packet length
 * (len - MC_AUTH_OVERHEAD) in *packet_len when it does. */
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
