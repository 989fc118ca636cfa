/* The loginapp process: the door clients log in through (docs/tools/loginapp.md).
 *
 * Its external socket (a plain UDP socket: login packets are not Mercury, secure/login.h)
 * answers HELLO with a stateless CHALLENGE and opens each LOGIN; a login then runs as an
 * asynchronous job on the loop (login_flow.c): rate limits per source address and per
 * account (limits.h), the account's auth record in Redis (accounts.h), the password checked
 * on the hashing pool's threads (pwhash_pool.h), the least-loaded baseapp asked of the
 * manager, PREPARE_LOGIN to that baseapp (proto/login.h), and the LOGIN_REPLY with its
 * external address and the session, or the status saying why not. Answers are remembered
 * while the client's cookie lives (replies.h), so a resent LOGIN gets the same reply. A
 * RESUME (a client whose channel died, with its resumption ticket) is checked the same way
 * and answered after the live baseapps were asked which holds its proxy (resume_flow.c).
 *
 * This header is the loginapp's state, shared by its modules (one concept per file).
 */
#ifndef MC_LOGINAPP_LOGINAPP_H
#define MC_LOGINAPP_LOGINAPP_H

#include "accounts.h"
#include "limits.h"
#include "pwhash_pool.h"
#include "replies.h"
#include "secure/login.h"
#include "secure/resume.h"
#include "server/server.h"

#include <stdbool.h>
#include <stdint.h>

struct event;
typedef struct login_op login_op;
typedef struct la_rehash la_rehash;
typedef struct la_resume_op la_resume_op;

/* Why a packet on the external socket was dropped unanswered. */
typedef enum {
    LA_DROP_MALFORMED = 0, /* wrong size, type, version or padding */
    LA_DROP_BAD_COOKIE,    /* not our cookie for this source (a replay from elsewhere) */
    LA_DROP_EXPIRED,       /* the cookie is too old */
    LA_DROP_PENDING,       /* a resent LOGIN whose login is still running */
    LA_DROP_SHUTDOWN,      /* shutting down */
    LA_DROP_NO_KEY,        /* no --loginKey: credentials cannot be opened */
    LA_DROP_RATE_LIMITED,  /* the source address is over its bucket and its rate-limited
                              answers (dropped before any public-key work) */
    LA_DROP_COUNT
} la_drop_reason;

typedef struct {
    uint64_t datagrams, hellos, logins, repeated, created, takeovers, redirects,
        send_errors, redis_errors, rehashed;
    uint64_t status[MC_LOGIN_STATUS_COUNT]; /* answers by mc_login_status */
    /* resumptions (resume_flow.c): RESUMEs whose cookie was good, tickets that did not
     * open (forged, changed, another cluster's), real tickets without their key's proof
     * (copied), resumptions that got a session, waves of RESUME_PREPARE and baseapps
     * asked, answers by status */
    uint64_t resumes, resume_forged, resume_bad_proof, resumed, resume_waves, resume_asked;
    uint64_t resume_status[MC_LOGIN_STATUS_COUNT];
    uint64_t dropped[LA_DROP_COUNT];
} la_stats;

/* Values of the parts, refreshed every tick for the watchers. */
typedef struct {
    uint64_t replies_kept, limit_addresses, limit_accounts, backoff_accounts;
    uint64_t pw_queued, pw_done, pw_busy, pw_failed, pw_source_busy;
    uint64_t redis_commands, redis_errors, redis_reconnects, redis_stalls, redis_waiting;
    bool redis_connected;
} la_gauges;

/* The login time histogram (served on /metrics): from the LOGIN opened to the reply. */
#define LA_LOGIN_HISTOGRAM "login_duration_seconds"
#define LA_LOGIN_HISTOGRAM_HELP "Time from a LOGIN opened to its reply (any status)."

typedef enum { LA_ONLINE_REFUSE, LA_ONLINE_TAKEOVER } la_online_policy;

typedef struct loginapp {
    mc_server *server;
    struct event_base *base;
    /* configuration (options.c) */
    uint8_t pk[MC_LOGIN_PUBLIC_KEY_BYTES], sk[MC_LOGIN_SECRET_KEY_BYTES];
    char pk_hex[2 * MC_LOGIN_PUBLIC_KEY_BYTES + 1]; /* what clients are given */
    bool has_key; /* --loginKey given (without it every LOGIN is dropped) */
    uint8_t digest[MC_LOGIN_DIGEST_BYTES]; /* the defs digest clients must match */
    bool auto_create;
    la_online_policy online;
    char account_type[64];
    uint64_t max_in_flight;
    uint64_t login_timeout_ms;
    uint64_t prepare_timeout_ms;
    uint64_t resume_fan_out;   /* RESUME_PREPAREs in flight per resumption at most */
    uint8_t ticket_key[32];    /* opens resumption tickets (from the cluster secret) */
    uint64_t error_log_us; /* server errors are logged at most once a second */
    uint64_t errors_unlogged;
    /* the external socket (external.c) */
    int fd;
    struct event *read_ev;
    mc_secure_secret secret;
    uint64_t secret_rotated_ms;
    /* the parts */
    mc_limits *addr_limits;    /* buckets per source address */
    mc_limits *addr_refusals;  /* rate-limited answers per source address */
    mc_limits *account_limits; /* failed checks per account name, from all sources (a ceiling) */
    mc_limits *backoff;        /* failed checks per (source address, account name) */
    mc_pwhash_pool *pool;
    char dummy_hash[MC_PWHASH_STR_MAX]; /* what names without an account are checked against */
    la_rehash *rehashes;       /* stored hashes being upgraded (login_flow.c) */
    la_accounts *accounts;
    la_replies *replies;
    struct event *tick_ev;
    /* logins in progress (login_flow.c) */
    login_op *ops;
    la_resume_op *resumes;     /* resumptions in progress (resume_flow.c) */
    uint64_t in_flight;        /* logins and resumptions */
    bool shutting_down; /* graceful shutdown: new LOGINs are dropped */
    bool freeing;
    la_stats st;
    la_gauges g;
} loginapp;

/* options.c: the loginapp's options, checked before anything starts. */
extern const mc_option la_options[];
extern const size_t la_option_count;
bool la_check_config(const mc_config *cfg, char *err, size_t errlen);
/* Read the options into la (keys from --loginKey, the digest): 0 or -1 with a reason. */
int la_configure(loginapp *la, const mc_config *cfg, char *err, size_t errlen);

/* external.c: the raw external socket, bound on mc_server_external_addr in place of the
 * framework's. 0 or -1 with a reason. */
int la_open_external(loginapp *la, char *err, size_t errlen);
/* Start reading it (once the loginapp is set up). 0 or -1. */
int la_external_start(loginapp *la);
void la_external_close(loginapp *la);
/* Send a datagram to a client (counted on failure). */
void la_send(loginapp *la, mc_secure_peer to, const uint8_t *data, size_t len);

/* login_flow.c: one login from an opened LOGIN (its address within its bucket) to its
 * answer. */
void la_login_start(loginapp *la, mc_secure_peer from, const mc_login_request *req);
/* Answer a LOGIN at once with status, without remembering the answer (a LOGIN over its
 * address's bucket, or whose credentials did not open: neither may take the room of real
 * logins' remembered answers). */
void la_login_refuse(loginapp *la, mc_secure_peer from, const mc_login_request *req, int status);
/* Answer every login past its deadline (server error). */
void la_logins_tick(loginapp *la);
/* Free every login left (after the server and its callbacks are gone). */
void la_logins_free(loginapp *la);

/* resume_flow.c: one resumption from an opened RESUME (its address within its bucket) to
 * its answer. */
void la_resume_start(loginapp *la, mc_secure_peer from, const mc_resume_request *req);
/* Answer an opened RESUME at once with status, not remembered (over its address's bucket). */
void la_resume_refuse(loginapp *la, mc_secure_peer from, const mc_resume_request *req,
                      int status);
void la_resumes_tick(loginapp *la);
void la_resumes_free(loginapp *la);

/* watchers.c: login/... */
int la_add_watchers(loginapp *la);
/* Refresh la->g (each tick). */
void la_refresh_gauges(loginapp *la);

#endif
