/* mc-account: an operator's tool for the loginapp's accounts in Redis (docs/tools/mc-account.md):
 * create an account, change its password, show or delete its auth record
 * (mc:a:<name>, docs/PERSISTENCE.md "Accounts"). The password is read from standard input
 * (its first line), never from the command line. A tool, not a server: it blocks on Redis.
 *
 *   mc-account --redis IP:PORT [--redisPasswordFile F] [--pwhashCost dev|interactive]
 *              [--type Account] create|passwd|show|delete NAME
 *
 * Exit status: 0 done, 1 a failure with one line why (no such account, one already there,
 * Redis unreachable or refusing), 2 bad usage.
 */
#include "pwhash_pool.h"
#include "secure/login.h"

#include <hiredis/hiredis.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(const char *why)
{
    if (why)
        fprintf(stderr, "mc-account: %s (see --help)\n", why);
    return 2;
}

static void help(void)
{
    printf("usage: mc-account --redis IP:PORT [--redisPasswordFile FILE] [--pwhashCost dev|interactive]\n"
           "                  [--type TYPE] create|passwd|show|delete NAME\n"
           "The loginapp's accounts in Redis (mc:a:NAME). create and passwd read the password\n"
           "from the first line of standard input. --pwhashCost: the cost of the new hash\n"
           "(default interactive); --type: the account entity's type (default Account).\n");
}

static int fail(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "mc-account: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    return 1;
}

static redisContext *connect_redis(const char *addr, const char *pwfile)
{
    char host[64];
    const char *colon = strrchr(addr, ':');
    if (!colon || (size_t)(colon - addr) >= sizeof host || atoi(colon + 1) <= 0) {
        fail("--redis: '%s' is not IP:PORT%s", addr, "");
        return NULL;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout(host, atoi(colon + 1), tv);
    if (!c || c->err) {
        fail("cannot reach redis %s: %s", addr, c ? c->errstr : "out of memory");
        if (c)
            redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    if (pwfile && *pwfile) {
        char pw[512] = "";
        FILE *f = fopen(pwfile, "r");
        if (!f || !fgets(pw, sizeof pw, f)) {
            if (f)
                fclose(f);
            fail("--redisPasswordFile: cannot read '%s'%s", pwfile, "");
            redisFree(c);
            return NULL;
        }
        fclose(f);
        pw[strcspn(pw, "\r\n")] = '\0';
        redisReply *r = redisCommand(c, "AUTH %s", pw);
        sodium_memzero(pw, sizeof pw);
        bool ok = r && r->type != REDIS_REPLY_ERROR;
        if (!ok)
            fail("redis %s refused AUTH: %s", addr, r && r->str ? r->str : c->errstr);
        freeReplyObject(r);
        if (!ok) {
            redisFree(c);
            return NULL;
        }
    }
    return c;
}

/* The password from the first line of standard input. */
static int read_password(char *out, size_t outlen)
{
    if (!fgets(out, (int)outlen, stdin))
        return -1;
    out[strcspn(out, "\r\n")] = '\0';
    return 0;
}

int main(int argc, char **argv)
{
    const char *redis = NULL, *pwfile = NULL, *cost_name = "interactive", *type = "Account";
    const char *cmd = NULL, *name = NULL;
    struct {
        const char *name;
        const char **var;
    } opts[] = {{"--redis", &redis}, {"--redisPasswordFile", &pwfile},
                {"--pwhashCost", &cost_name}, {"--type", &type}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            help();
            return 0;
        }
        if (strncmp(a, "--", 2) == 0) {
            bool known = false;
            for (size_t k = 0; k < sizeof opts / sizeof opts[0] && !known; k++) {
                size_t n = strlen(opts[k].name);
                if (strncmp(a, opts[k].name, n) != 0)
                    continue;
                if (a[n] == '=') { /* --opt=value */
                    *opts[k].var = a + n + 1;
                    known = true;
                } else if (a[n] == '\0' && i + 1 < argc) { /* --opt value */
                    *opts[k].var = argv[++i];
                    known = true;
                }
            }
            if (!known)
                return usage("unknown option, or an option without its value");
        } else if (!cmd) {
            cmd = a;
        } else if (!name) {
            name = a;
        } else {
            return usage("too many arguments");
        }
    }
    if (!redis)
        return usage("--redis=IP:PORT is required");
    if (!cmd || !name)
        return usage("which command and account name?");
    bool create = strcmp(cmd, "create") == 0, passwd = strcmp(cmd, "passwd") == 0;
    bool show = strcmp(cmd, "show") == 0, del = strcmp(cmd, "delete") == 0;
    if (!create && !passwd && !show && !del)
        return usage("the command is create, passwd, show or delete");
    size_t nlen = strlen(name);
    if (nlen < 1 || nlen > 64)
        return usage("an account name is 1..64 bytes");
    /* names reach logs and clients: no control characters in new ones (an old account with
     * one can still be shown, re-passworded or deleted) */
    if (create && !mc_login_name_ok(name, nlen))
        return usage("an account name has no control characters (bytes below 0x20, 0x7f)");
    mc_pwhash_cost cost;
    if (!mc_pwhash_cost_named(cost_name, &cost) || strcmp(cost_name, "moderate") == 0)
        return usage("--pwhashCost is dev or interactive");
    if (!*type || strlen(type) > 63)
        return usage("--type: an entity type name (1..63 bytes)");
    if (sodium_init() < 0)
        return fail("libsodium cannot start%s%s", "", "");
    char hash[crypto_pwhash_STRBYTES];
    if (create || passwd) {
        char pw[1024];
        if (read_password(pw, sizeof pw) != 0)
            return fail("no password on standard input%s%s", "", "");
        if (strlen(pw) > 256)
            return fail("a password is at most 256 bytes%s%s", "", "");
        int rc = crypto_pwhash_str(hash, pw, strlen(pw), cost.opslimit, cost.memlimit);
        sodium_memzero(pw, sizeof pw);
        if (rc != 0)
            return fail("cannot hash the password (out of memory)%s%s", "", "");
    }
    redisContext *c = connect_redis(redis, pwfile);
    if (!c)
        return 1;
    char key[80];
    snprintf(key, sizeof key, "mc:a:%s", name);
    redisReply *r = NULL;
    int code = 0;
    if (create) {
        r = redisCommand(c,
                         "EVAL %s 1 %b %s %s",
                         "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end "
                         "redis.call('HSET', KEYS[1], 'pw', ARGV[1], 'type', ARGV[2]) return 1",
                         key, strlen(key), hash, type);
        if (r && r->type == REDIS_REPLY_INTEGER && r->integer == 0)
            code = fail("account '%s' exists already%s", name, "");
        else if (r && r->type == REDIS_REPLY_INTEGER)
            printf("account '%s' created (type %s)\n", name, type);
    } else if (passwd) {
        r = redisCommand(c,
                         "EVAL %s 1 %b %s",
                         "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end "
                         "redis.call('HSET', KEYS[1], 'pw', ARGV[1]) return 1",
                         key, strlen(key), hash);
        if (r && r->type == REDIS_REPLY_INTEGER && r->integer == 0)
            code = fail("no account '%s'%s", name, "");
        else if (r && r->type == REDIS_REPLY_INTEGER)
            printf("account '%s': password changed\n", name);
    } else if (show) {
        r = redisCommand(c, "HMGET %b pw dbid type", key, strlen(key));
        if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 3) {
            if (r->element[0]->type != REDIS_REPLY_STRING)
                code = fail("no account '%s'%s", name, "");
            else
                printf("account %s type %s dbid %s password %.*s\n", name,
                       r->element[2]->type == REDIS_REPLY_STRING ? r->element[2]->str : "-",
                       r->element[1]->type == REDIS_REPLY_STRING ? r->element[1]->str : "0",
                       (int)strcspn(r->element[0]->str + 1, "$") + 1, r->element[0]->str);
        }
    } else {
        r = redisCommand(c, "DEL %b", key, strlen(key));
        if (r && r->type == REDIS_REPLY_INTEGER && r->integer == 0)
            code = fail("no account '%s'%s", name, "");
        else if (r && r->type == REDIS_REPLY_INTEGER)
            printf("account '%s' deleted (its entity stays: mc-db delete removes it)\n", name);
    }
    if (!r || r->type == REDIS_REPLY_ERROR)
        code = fail("redis: %s%s", r && r->str ? r->str : c->errstr, "");
    freeReplyObject(r);
    redisFree(c);
    sodium_memzero(hash, sizeof hash);
    return code;
}
