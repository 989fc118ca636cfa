/* Login sessions a baseapp issued: the one-time keys clients present when they connect to
 * its external interface (docs/PROTOCOL.md "External channels").
 *
 * The loginapp asks a baseapp to prepare a login; the baseapp readies the account's base and
 * issues a session for it here (a random id and key, sent back to the client through the
 * loginapp). The external interface looks the session up during the client's handshake
 * (base_sessions_lookup is an mc_secure_session_lookup) and takes it once the client is
 * connected (base_sessions_take): a session serves one connection at most, and one that is
 * not taken within its expiry is forgotten (its key wiped) and reported by the sweep
 * (base_sessions_expire), so the baseapp can tell a base whose client never came. Bounded:
 * at most `max` sessions. Time comes from mc_clock_now_us().
 */
#ifndef MC_BASEAPP_CLIENT_SESSIONS_H
#define MC_BASEAPP_CLIENT_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secure/handshake.h"

typedef struct base_sessions base_sessions;

#define BASE_SESSION_NAME_MAX 64u /* an account name (MC_LOGIN_NAME_MAX) */

typedef struct {
    uint64_t issued, taken, expired, refused_full, unknown_lookups;
} base_sessions_stats;

/* max >= 1, expiry_ms >= 1. NULL on a bad argument or out of memory. */
base_sessions *base_sessions_new(size_t max, uint32_t expiry_ms);
/* Wipes every key. NULL is ignored. */
void base_sessions_free(base_sessions *s);

/* A new session for the base with this entity id: a random session id (never 0, unique
 * among the live ones) and a random key. name: the account it is for (NULL or "": not
 * known; resumption tickets carry it), resume: issued by a RESUME. 0, or -1 when `max`
 * sessions are live. */
int base_sessions_issue(base_sessions *s, int32_t entity_id, const char *name, bool resume,
                        uint64_t *session_id, uint8_t key[MC_SECURE_KEY_BYTES]);
/* mc_secure_session_lookup (ctx: the base_sessions): 0 with the key of a live, unexpired
 * session; -1 otherwise. */
int base_sessions_lookup(void *ctx, uint64_t session_id, uint8_t key[MC_SECURE_KEY_BYTES]);
/* The client connected with this session: the entity id it was issued for (and, when not
 * NULL, its account name and whether a RESUME issued it), and the session is gone
 * (one-time). 0, or -1 when it is unknown or expired. */
int base_sessions_take(base_sessions *s, uint64_t session_id, int32_t *entity_id,
                       char name[BASE_SESSION_NAME_MAX + 1], bool *resume);
/* Forget every session issued for this entity (its base is destroyed, or a newer login
 * replaced them). Returns how many. */
size_t base_sessions_forget_entity(base_sessions *s, int32_t entity_id);
/* Drop the expired sessions, each reported to fn (may be NULL) with the entity it was issued
 * for (call it now and then; lookups and takes refuse them anyway). */
typedef void (*base_session_expired_fn)(void *ctx, int32_t entity_id);
void base_sessions_expire(base_sessions *s, base_session_expired_fn fn, void *ctx);
/* Whether a live (unexpired) session was issued for this entity. */
bool base_sessions_has_entity(const base_sessions *s, int32_t entity_id);
/* mc_secure_transport's session_known (ctx: the base_sessions): whether this baseapp issued
 * the session id, live now or gone (taken, expired, forgotten) within the last 60 s (at most
 * the last 1024 gone). A HELLO naming any other id is not answered at all. */
bool base_sessions_known(void *ctx, uint64_t session_id);
size_t base_sessions_count(const base_sessions *s);
void base_sessions_get_stats(const base_sessions *s, base_sessions_stats *out);

#endif
