/* Password hashing off the event loop. Argon2id (libsodium's crypto_pwhash) is made to be
 * slow: tens of milliseconds at the interactive cost, which would stall every other login
 * if it ran on the loginapp's loop. A pool of worker threads runs the hashing and
 * verification jobs; each job's callback runs back on the loop (an eventfd wakes it), never
 * on a worker. The queue is bounded: a job beyond it is refused at once (the loginapp
 * answers "overloaded"), and so is a job of a source (a client's address) that has
 * `per_source` jobs in the pool already (mc_pwhash_set_per_source), so a few hosts cannot
 * fill it. Passwords are copied into the job and wiped when it is done.
 *
 * The only threads in the process; they touch nothing but their jobs.
 */
#ifndef MC_LOGINAPP_PWHASH_POOL_H
#define MC_LOGINAPP_PWHASH_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;

#define MC_PWHASH_MAX_PASSWORD 1024u
#define MC_PWHASH_STR_MAX 128u /* crypto_pwhash_STRBYTES */

/* How costly a hash is: libsodium's opslimit and memlimit. */
typedef struct {
    unsigned long long opslimit;
    size_t memlimit;
} mc_pwhash_cost;

/* "dev" (libsodium's minimum: fast, for development and tests), "interactive" (libsodium's
 * interactive limits, for production) or "moderate"; false for any other name. */
bool mc_pwhash_cost_named(const char *name, mc_pwhash_cost *out);

typedef enum {
    MC_PWHASH_OK = 0,
    MC_PWHASH_BUSY = -1,      /* the queue is full: refused at once, no callback */
    MC_PWHASH_TOO_LONG = -2,  /* password longer than MC_PWHASH_MAX_PASSWORD; no callback */
    MC_PWHASH_FAILED = -3,    /* (callback) out of memory in libsodium, or a stored hash
                                 that is not a libsodium Argon2 string */
    MC_PWHASH_NO_MEMORY = -4, /* no callback */
    MC_PWHASH_SOURCE_BUSY = -5, /* the source has its share of the queue: refused at once,
                                   no callback */
} mc_pwhash_status;

/* A finished job, on the loop: status MC_PWHASH_OK or MC_PWHASH_FAILED; for a hash job the
 * new hash string (valid during the call), for a verification whether it matched. */
typedef void (*mc_pwhash_done_fn)(void *ud, int status, const char *hash, bool match);

typedef struct mc_pwhash_pool mc_pwhash_pool;

typedef struct {
    uint64_t queued;       /* jobs waiting or running now (gauge) */
    uint64_t done;         /* jobs finished */
    uint64_t refused_busy; /* jobs refused because the queue was full */
    uint64_t failed;       /* jobs that finished MC_PWHASH_FAILED */
    uint64_t refused_source; /* jobs refused because their source had its share */
} mc_pwhash_stats;

/* threads 1..16, queue_max >= 1. NULL on a bad argument or when threads cannot start.
 * A callback may submit new jobs, but must not free the pool. */
mc_pwhash_pool *mc_pwhash_pool_new(struct event_base *base, unsigned threads, size_t queue_max,
                                   mc_pwhash_cost cost);
/* Stops and joins the workers. Callbacks of jobs not yet delivered are never called. */
void mc_pwhash_pool_free(mc_pwhash_pool *p);

/* At most per_source (>= 1) jobs of one source in the pool at once (waiting, running or not
 * yet delivered); 0 or -1 (bad argument, out of memory). Without it, sources are not
 * bounded. Call before submitting jobs. */
int mc_pwhash_set_per_source(mc_pwhash_pool *p, size_t per_source);

/* The jobs below, of a source (source 0: none, not bounded). */
int mc_pwhash_hash_from(mc_pwhash_pool *p, uint64_t source, const char *password, size_t len,
                        mc_pwhash_done_fn fn, void *ud);
int mc_pwhash_verify_from(mc_pwhash_pool *p, uint64_t source, const char *stored,
                          const char *password, size_t len, mc_pwhash_done_fn fn, void *ud);

/* Hash password (len bytes) at the pool's cost. */
int mc_pwhash_hash(mc_pwhash_pool *p, const char *password, size_t len, mc_pwhash_done_fn fn,
                   void *ud);
/* Check password against a stored hash string. */
int mc_pwhash_verify(mc_pwhash_pool *p, const char *stored, const char *password, size_t len,
                     mc_pwhash_done_fn fn, void *ud);
/* Whether a stored hash was made at another cost than the pool's (rehash it on login). */
bool mc_pwhash_needs_rehash(const mc_pwhash_pool *p, const char *stored);
/* A hash of a random password at the pool's cost, made now on the calling thread (slow: at
 * start), into out (MC_PWHASH_STR_MAX): what a name without an account is checked against,
 * so that it costs what a real check costs. 0 or -1. */
int mc_pwhash_dummy(const mc_pwhash_pool *p, char out[MC_PWHASH_STR_MAX]);

void mc_pwhash_get_stats(const mc_pwhash_pool *p, mc_pwhash_stats *out);

#endif
