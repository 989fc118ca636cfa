/* Resuming a player's session without logging in again: the resumption ticket and the
 * RESUME exchange on the loginapp's external socket. Pure functions on buffers, like
 * secure/login.h, whose cookie (HELLO/CHALLENGE) it reuses.
 *
 *   TICKET: issued by the baseapp holding a proxy, sent to its client inside the encrypted
 *     channel (entity/client_wire.h MC_CW_TICKET) with a random *resume key* only that client
 *     learns. Sealed (XChaCha20-Poly1305) with a key derived from the cluster secret under
 *     its own context ("mc-resume-ticket"), so any loginapp or baseapp of the cluster opens
 *     it and nobody else reads or makes one: the entity id, the proxy's ticket serial (single
 *     use: the proxy keeps the serial of the one ticket it will honour), the expiry (wall-
 *     clock milliseconds), the resume key and the account name.
 *   RESUME (512 bytes, padded) client -> loginapp: the HELLO fields, the cookie, the ticket
 *     and a proof: BLAKE2b-128 keyed by the resume key over the packet up to the proof. A
 *     ticket without its resume key is worth nothing: whoever copied it cannot make a proof.
 *   RESUME_REPLY (96 bytes) loginapp -> client: a status and, when it is ok, the baseapp's
 *     external address and a one-time session, sealed with a key derived from the resume
 *     key, the client's nonce and ephemeral key: only the ticket's holder reads it.
 *
 * No public-key operation anywhere: a RESUME costs the loginapp two BLAKE2b and one AEAD
 * opening, after its cookie and the source address's bucket. docs/PROTOCOL.md ("Resuming")
 * has every byte; docs/SECURITY.md the threat model.
 */
#ifndef MC_SECURE_RESUME_H
#define MC_SECURE_RESUME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secure/handshake.h"
#include "secure/login.h"

enum {
    MC_SECURE_RESUME = 0xB3,
    MC_SECURE_RESUME_REPLY = 0xB4,
};

#define MC_RESUME_TICKET_VERSION 1u
#define MC_RESUME_TICKET_SIZE 154u   /* version 1, nonce 24, sealed 113 + tag 16 */
#define MC_RESUME_KEY_BYTES 32u
#define MC_RESUME_SIZE 512u
#define MC_RESUME_REPLY_SIZE 96u
#define MC_RESUME_PROOF_BYTES 16u

/* What a ticket says. */
typedef struct {
    int32_t entity_id;                 /* the proxy's base entity (> 0) */
    uint32_t serial;                   /* the proxy's ticket serial (never 0) */
    uint64_t expires_ms;               /* wall-clock ms since the Unix epoch */
    uint8_t resume_key[MC_RESUME_KEY_BYTES];
    char name[MC_LOGIN_NAME_MAX + 1];  /* the account name (mc_login_name_ok) */
} mc_resume_ticket_info;

/* The ticket key from the cluster secret (mercury/auth.h): BLAKE2b-256 keyed by the secret
 * over "mc-resume-ticket" (a context of its own: never a key the internal packets use). */
int mc_resume_ticket_key(const uint8_t secret[32], uint8_t key[32]);

/* Seal a ticket: MC_RESUME_TICKET_SIZE bytes into out. MC_SECURE_OK, or MC_SECURE_MALFORMED
 * (an id <= 0, serial 0, a name mc_login_name_ok refuses). */
int mc_resume_ticket_seal(const uint8_t key[32], const mc_resume_ticket_info *info,
                          uint8_t out[MC_RESUME_TICKET_SIZE]);
/* Open one: MC_SECURE_OK with info; MC_SECURE_AUTH when it was not sealed with this key (or
 * was changed); MC_SECURE_MALFORMED when its contents are not a ticket's. */
int mc_resume_ticket_open(const uint8_t key[32], const uint8_t ticket[MC_RESUME_TICKET_SIZE],
                          mc_resume_ticket_info *info);

/* ---- client ------------------------------------------------------------------------- */

/* The RESUME for an attempt that got its CHALLENGE (c->state MC_SECURE_CLIENT_CONNECT,
 * session id 0): MC_RESUME_SIZE bytes into out. MC_SECURE_OK or MC_SECURE_MALFORMED. */
int mc_resume_client_request(const mc_secure_client *c, const uint8_t ticket[MC_RESUME_TICKET_SIZE],
                             const uint8_t resume_key[MC_RESUME_KEY_BYTES],
                             uint8_t out[MC_RESUME_SIZE]);
/* A RESUME_REPLY for this attempt: MC_SECURE_OK with the result (its status an
 * mc_login_status); MC_SECURE_MALFORMED / MC_SECURE_UNEXPECTED (another attempt's) /
 * MC_SECURE_AUTH (not sealed for this resume key). */
int mc_resume_client_reply(const mc_secure_client *c,
                           const uint8_t resume_key[MC_RESUME_KEY_BYTES], const uint8_t *pkt,
                           size_t len, mc_login_result *out);

/* ---- loginapp ----------------------------------------------------------------------- */

/* An opened RESUME. */
typedef struct {
    uint8_t client_nonce[8];
    uint8_t client_pk[32];
    mc_resume_ticket_info ticket; /* once opened */
    bool opened;                  /* the ticket opened and the proof is its key's */
} mc_resume_request;

/* Step 1, no key work: a RESUME of the right size, type, version, session field and
 * padding whose cookie this server made for that source, nonce and key and is fresh.
 * MC_SECURE_OK (out's nonce and key set), else drop: MALFORMED / BAD_COOKIE / EXPIRED. */
int mc_resume_server_check(const mc_secure_secret *s, mc_secure_peer from, uint64_t now_ms,
                           const uint8_t *pkt, size_t len, mc_resume_request *out);
/* Step 2: open the ticket with the ticket key and check the proof with its resume key.
 * MC_SECURE_OK (out->ticket set, out->opened); MC_SECURE_AUTH: a ticket not sealed by the
 * cluster (forged, changed) or malformed inside; MC_SECURE_BAD_PROOF: a real ticket whose
 * proof is not by its resume key (copied by someone without the key). Expiry is the
 * caller's to check (out->ticket.expires_ms). */
int mc_resume_server_open(const uint8_t ticket_key[32], const uint8_t *pkt, size_t len,
                          mc_resume_request *out);
/* The RESUME_REPLY to an opened request: MC_RESUME_REPLY_SIZE bytes into out. 0, or -1
 * (the request was not opened). */
int mc_resume_server_reply(const mc_resume_request *req, const mc_login_result *result,
                           uint8_t out[MC_RESUME_REPLY_SIZE]);
/* Wipe a request (its resume key). */
void mc_resume_request_clear(mc_resume_request *r);

#endif
