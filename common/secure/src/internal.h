/* What handshake.c and login.c share: the HELLO/CONNECT/LOGIN field offsets and the cookie
 * check. */
#ifndef MC_SECURE_INTERNAL_H
#define MC_SECURE_INTERNAL_H

#include "secure/handshake.h"

#define MC_SECURE_OFF_NONCE 2u
#define MC_SECURE_OFF_PK 10u
#define MC_SECURE_OFF_SESSION 42u
#define MC_SECURE_OFF_COOKIE 50u

/* The cookie at MC_SECURE_OFF_COOKIE of pkt, against the nonce, key and session id fields of
 * pkt and the source: MC_SECURE_OK, MC_SECURE_BAD_COOKIE or MC_SECURE_EXPIRED. */
int mc_secure_cookie_check(const mc_secure_secret *s, mc_secure_peer from, uint64_t now_ms,
                           const uint8_t *pkt);

#endif
