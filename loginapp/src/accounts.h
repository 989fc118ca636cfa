/* Accounts in Redis: one auth record per account name, reached with hiredis's asynchronous
 * API on the loginapp's loop (nothing blocks; Redis down means an error answer, never a
 * crash). docs/PERSISTENCE.md "Accounts":
 *
 *   mc:a:<name>  hash  pw    the password's crypto_pwhash_str string (Argon2id, salted)
 *                      dbid  the account entity's database id (absent or 0: not created yet)
 *                      type  the account entity's type name ("Account")
 *
 * One connection, AUTH with the password when one is given, reconnected with back-off
 * (100 ms doubling to 2 s) when it drops; a connection that has commands waiting and has
 * answered nothing for 5 s is dropped and made again (their callbacks get an error). At most
 * 4096 commands wait at once. Every callback runs exactly once (with an error when the
 * connection goes or the accounts are freed), never from inside the call that asked.
 */
#ifndef MC_LOGINAPP_ACCOUNTS_H
#define MC_LOGINAPP_ACCOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;

#define LA_ACCOUNT_NAME_MAX 64u
#define LA_ACCOUNT_HASH_MAX 128u
#define LA_ACCOUNT_TYPE_MAX 64u

typedef struct la_accounts la_accounts;

typedef struct {
    bool found;
    char hash[LA_ACCOUNT_HASH_MAX];
    uint64_t dbid;
    char type[LA_ACCOUNT_TYPE_MAX];
} la_account;

/* status 0 with the record (found or not), or -1 (Redis failed; why says why). */
typedef void (*la_account_fn)(void *ud, int status, const la_account *acc, const char *why);
/* status 0: created is true when this call made the record, false when it existed. */
typedef void (*la_create_fn)(void *ud, int status, bool created, const char *why);

/* addr "IP:PORT" (numeric), password NULL or "" for none. NULL with a reason in err. Starts
 * connecting at once. */
la_accounts *la_accounts_new(struct event_base *base, const char *addr, const char *password,
                             char *err, size_t errlen);
/* Pending callbacks are called with an error. */
void la_accounts_free(la_accounts *a);
/* Connected to Redis now. */
bool la_accounts_ready(const la_accounts *a);

/* Read the record of name (1..64 bytes). 0, or -1 (not connected, too many waiting, bad
 * name: no callback). */
int la_accounts_get(la_accounts *a, const char *name, la_account_fn fn, void *ud);
/* Make the record (pw, type) unless one exists: atomically, in Redis. 0 or -1 as above. */
int la_accounts_create(la_accounts *a, const char *name, const char *hash, const char *type,
                       la_create_fn fn, void *ud);
/* Replace the record's password hash by new_hash, only while it is still old_hash (a
 * password changed meanwhile stays); a failure is logged. 0 or -1. */
int la_accounts_set_hash(la_accounts *a, const char *name, const char *old_hash,
                         const char *new_hash);
/* Store the account entity's database id in its record (when the record exists); a failure
 * is logged. 0 or -1. */
int la_accounts_set_dbid(la_accounts *a, const char *name, uint64_t dbid);

typedef struct {
    uint64_t commands, replies, errors, reconnects, stalls;
    uint64_t waiting; /* gauge */
} la_accounts_stats;
void la_accounts_get_stats(const la_accounts *a, la_accounts_stats *out);

#endif
