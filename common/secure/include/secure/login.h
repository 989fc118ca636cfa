/* The login exchange between a client and a loginapp, on the loginapp's external socket.
 * Pure functions on buffers, like secure/handshake.h, whose HELLO/CHALLENGE it reuses: the
 * client first gets a cookie (HELLO with session id 0), so a LOGIN proves its source
 * address and can be replayed only from that address and only while the cookie lives.
 *
 *   LOGIN (512 bytes, padded) client -> loginapp: the HELLO fields, the cookie, and the
 *     credentials boxed (crypto_box_easy) from the client's ephemeral key (the one in the
 *     packet) to the loginapp's public key, under a box nonce derived from the packet's own
 *     header (type, version, client nonce, client key, session id, cookie, box length):
 *     account name, password, the digest of the client's defs, flags. The box opens only
 *     inside the very packet it was made for: copied into another LOGIN (another key,
 *     nonce or cookie, so another address or a later time) it does not open, so a
 *     captured LOGIN gives nothing to whoever captured it.
 *   LOGIN_REPLY (96 bytes) loginapp -> client: a status and, on success, the baseapp's
 *     external address and the session (id and one-time key), boxed from the loginapp's
 *     key pair to the client's ephemeral key: only that client can read it, and only the
 *     loginapp can have written it.
 *
 * docs/PROTOCOL.md ("Logging in") has every byte.
 */
#ifndef MC_SECURE_LOGIN_H
#define MC_SECURE_LOGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secure/handshake.h"

enum {
    MC_SECURE_LOGIN = 0xB1,
    MC_SECURE_LOGIN_REPLY = 0xB2,
};

#define MC_LOGIN_SIZE 512u
#define MC_LOGIN_REPLY_SIZE 96u
#define MC_LOGIN_NAME_MAX 64u
#define MC_LOGIN_PASSWORD_MAX 256u
#define MC_LOGIN_DIGEST_BYTES 32u
#define MC_LOGIN_PUBLIC_KEY_BYTES 32u
#define MC_LOGIN_SECRET_KEY_BYTES 32u

/* Flags of a LOGIN. */
#define MC_LOGIN_FLAG_TAKEOVER 0x01u /* the client asks to take over a live session: a
                                        takeover happens only when the loginapp's
                                        --onlineLogin=takeover allows it and this is set */

/* What a client is told (the status byte of LOGIN_REPLY). */
typedef enum {
    MC_LOGIN_OK = 0,
    MC_LOGIN_NO_SUCH_USER = 1,
    MC_LOGIN_BAD_PASSWORD = 2,
    MC_LOGIN_ALREADY_LOGGED_IN = 3,
    MC_LOGIN_BAD_DIGEST = 4,
    MC_LOGIN_NO_BASEAPP = 5,
    MC_LOGIN_OVERLOADED = 6,
    MC_LOGIN_RATE_LIMITED = 7,
    MC_LOGIN_MALFORMED = 8,
    MC_LOGIN_SERVER_ERROR = 9,
    MC_LOGIN_TIMED_OUT = 10, /* the client's own verdict: no reply in time */
    /* answers to a RESUME (secure/resume.h): log in again */
    MC_LOGIN_TICKET_EXPIRED = 11, /* the resumption ticket is past its expiry */
    MC_LOGIN_TICKET_USED = 12,    /* it was used already (or a newer one replaced it) */
    MC_LOGIN_ENTITY_GONE = 13,    /* no live baseapp holds its proxy (destroyed, or lost) */
    MC_LOGIN_STATUS_COUNT
} mc_login_status;

const char *mc_login_status_name(int status);

/* Whether name (len bytes) may name an account: 1..MC_LOGIN_NAME_MAX bytes, none of them
 * a control character (below 0x20, or 0x7f) or NUL: names reach logs and Redis keys. */
bool mc_login_name_ok(const char *name, size_t len);

/* The loginapp's long-term key pair (deploy/cluster makes one per cluster; clients are
 * given the public key). */
int mc_login_keypair(uint8_t pk[MC_LOGIN_PUBLIC_KEY_BYTES], uint8_t sk[MC_LOGIN_SECRET_KEY_BYTES]);

typedef struct {
    char name[MC_LOGIN_NAME_MAX + 1];
    char password[MC_LOGIN_PASSWORD_MAX + 1];
    size_t password_len;
    uint8_t digest[MC_LOGIN_DIGEST_BYTES];
    uint8_t flags;
} mc_login_credentials;

/* ---- client ------------------------------------------------------------------------- */

/* The LOGIN for a client attempt that got its CHALLENGE (c->state is
 * MC_SECURE_CLIENT_CONNECT, created with session id 0): MC_LOGIN_SIZE bytes into out.
 * The credentials are boxed from c's ephemeral secret key to loginapp_pk.
 * MC_SECURE_OK, or MC_SECURE_MALFORMED (a name mc_login_name_ok refuses, password too long,
 * unknown flags, wrong state). */
int mc_login_client_request(const mc_secure_client *c, const mc_login_credentials *cred,
                            const uint8_t loginapp_pk[MC_LOGIN_PUBLIC_KEY_BYTES],
                            uint8_t out[MC_LOGIN_SIZE]);

/* What the loginapp answered. */
typedef struct {
    int status;                      /* mc_login_status */
    uint32_t baseapp_ip;             /* OK: the baseapp's external address */
    uint16_t baseapp_port;
    uint64_t session_id;
    uint8_t session_key[MC_SECURE_KEY_BYTES];
} mc_login_result;

/* A LOGIN_REPLY for this attempt: MC_SECURE_OK with the result; MC_SECURE_MALFORMED /
 * MC_SECURE_UNEXPECTED (another attempt's) / MC_SECURE_AUTH (not by the loginapp's key). */
int mc_login_client_reply(const mc_secure_client *c,
                          const uint8_t loginapp_pk[MC_LOGIN_PUBLIC_KEY_BYTES],
                          const uint8_t *pkt, size_t len, mc_login_result *out);

/* ---- loginapp ----------------------------------------------------------------------- */

/* An opened LOGIN: who asked (for the reply), the key the reply is boxed with, and what. */
typedef struct {
    uint8_t client_nonce[8];
    uint8_t client_pk[32];
    uint8_t box_key[32];   /* crypto_box_beforenm(client_pk, the loginapp's secret key) */
    bool has_box_key;      /* box_key is set: a reply can be made */
    mc_login_credentials cred;
} mc_login_request;

/* Step 1, no public-key operation: a LOGIN from `from` of the right size, type, version,
 * session field, box length and padding, whose cookie this server made for that source,
 * nonce and key and is fresh. MC_SECURE_OK with out's client nonce and key set; otherwise
 * drop: MC_SECURE_MALFORMED / BAD_COOKIE / EXPIRED. */
int mc_login_server_check(const mc_secure_secret *s, mc_secure_peer from, uint64_t now_ms,
                          const uint8_t *pkt, size_t len, mc_login_request *out);

/* Step 2, exactly one X25519 (crypto_box_beforenm): open the credentials of a LOGIN that
 * passed step 1 into out. MC_SECURE_OK with the credentials; MC_SECURE_AUTH when the box
 * does not open in this packet (another packet's box, changed, or boxed to another key)
 * or its contents are malformed: out->has_box_key is set, answer MC_LOGIN_MALFORMED;
 * MC_SECURE_MALFORMED when no key can be agreed with the client's key (drop). */
int mc_login_server_unbox(const uint8_t sk[MC_LOGIN_SECRET_KEY_BYTES], const uint8_t *pkt,
                          size_t len, mc_login_request *out);

/* Both steps. */
int mc_login_server_open(const mc_secure_secret *s, mc_secure_peer from, uint64_t now_ms,
                         const uint8_t sk[MC_LOGIN_SECRET_KEY_BYTES], const uint8_t *pkt,
                         size_t len, mc_login_request *out);
/* Wipe a request (its credentials and box key). */
void mc_login_request_clear(mc_login_request *r);

/* The LOGIN_REPLY to a request (result->status and, when MC_LOGIN_OK, the rest), boxed with
 * req->box_key (no public-key operation): MC_LOGIN_REPLY_SIZE bytes into out. 0, or -1
 * (the request has no box key). */
int mc_login_server_reply(const mc_login_request *req, const mc_login_result *result,
                          uint8_t out[MC_LOGIN_REPLY_SIZE]);

#endif
