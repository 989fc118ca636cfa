/* Logging in from a game client: the client side of the loginapp exchange
 * (secure/login.h, docs/PROTOCOL.md "Logging in") over its own UDP socket, without threads
 * and without blocking, so a game engine can drive it from its own loop: poll
 * mc_login_fd() for reading, and call mc_login_tick() when it is readable or when
 * mc_login_next_ms() has come. Packets are resent until answered; the attempt ends with a
 * login status (MC_LOGIN_OK and the baseapp's address and session, or why not), at the
 * latest after its timeout (MC_LOGIN_TIMED_OUT).
 */
#ifndef MC_CLIENT_LOGIN_H
#define MC_CLIENT_LOGIN_H

#include <stddef.h>
#include <stdint.h>

#include "secure/login.h"
#include "secure/resume.h"

#define MC_LOGIN_PENDING (-1) /* mc_login_tick: not finished yet */

typedef struct {
    const char *loginapp;                          /* "a.b.c.d:port" */
    uint8_t loginapp_pk[MC_LOGIN_PUBLIC_KEY_BYTES]; /* the cluster's login public key */
    uint8_t digest[MC_LOGIN_DIGEST_BYTES];         /* the client's defs digest */
    uint32_t resend_ms;                            /* 0: 250 */
    uint32_t timeout_ms;                           /* 0: 10000 */
    const char *bind_ip; /* optional source address "a.b.c.d" (NULL: the system's choice);
                          * bots spread many logins over loopback addresses with it */
} mc_login_config;

typedef struct mc_login_attempt mc_login_attempt;

/* Start logging in `name` with `password` (flags: MC_LOGIN_FLAG_TAKEOVER or 0) at now_ms
 * (the host's monotonic milliseconds): sends the first packet. NULL with a reason in err
 * (bad address, name or password, no socket). */
mc_login_attempt *mc_login_start(const mc_login_config *cfg, const char *name,
                                 const char *password, uint8_t flags, uint64_t now_ms,
                                 char *err, size_t errlen);
/* Resume instead (secure/resume.h, docs/CLIENT.md "Resuming"): a RESUME with the ticket the
 * baseapp gave and its resume key (cfg->loginapp_pk and digest are not used). The attempt
 * runs as a login's does and ends with MC_LOGIN_OK and a new session, or why not
 * (MC_LOGIN_TICKET_EXPIRED, _TICKET_USED, _ENTITY_GONE, _RATE_LIMITED, _OVERLOADED,
 * _SERVER_ERROR, _TIMED_OUT: a forged or foreign ticket is never answered). */
mc_login_attempt *mc_resume_start(const mc_login_config *cfg,
                                  const uint8_t ticket[MC_RESUME_TICKET_SIZE],
                                  const uint8_t resume_key[MC_RESUME_KEY_BYTES], uint64_t now_ms,
                                  char *err, size_t errlen);
/* The socket to poll for reading. */
int mc_login_fd(const mc_login_attempt *a);
/* When mc_login_tick must run at the latest (a resend or the timeout). */
uint64_t mc_login_next_ms(const mc_login_attempt *a);
/* Read what arrived, resend when due: MC_LOGIN_PENDING, or the final mc_login_status (it
 * stays final; the socket is closed then). */
int mc_login_tick(mc_login_attempt *a, uint64_t now_ms);
/* The answer once final (status, and with MC_LOGIN_OK the baseapp and session). */
const mc_login_result *mc_login_result_of(const mc_login_attempt *a);
/* Packets sent and received (for a client's own diagnostics). */
void mc_login_counts(const mc_login_attempt *a, uint32_t *sent, uint32_t *received,
                     uint32_t *ignored);
/* Close and wipe (the session key included). */
void mc_login_free(mc_login_attempt *a);

#endif
