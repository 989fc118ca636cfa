/* The loginapp's options (docs/tools/loginapp.md), their checks, and reading them (the
 * login key, the digest clients must match). */
#include "loginapp.h"
#include "mercury/address.h"
#include "mercury/auth.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

const mc_option la_options[] = {
    {"loginKey", MC_OPT_STRING, "",
     "the login secret key file made by mc-login-keys (DIR/login.key: 64 hex digits); the "
     "public key clients are given is derived from it (none: every LOGIN is dropped)"},
    {"redis", MC_OPT_STRING, "",
     "IP:PORT of the Redis that keeps the accounts (none: every login is a server error)"},
    {"redisPasswordFile", MC_OPT_STRING, "",
     "file whose first line is the Redis password (none: no AUTH)"},
    {"pwhashCost", MC_OPT_STRING, "interactive",
     "the cost of new password hashes: dev (fast, for development and tests) or interactive"},
    {"pwhashThreads", MC_OPT_UINT, "2", "password hashing threads (1..16)"},
    {"pwhashQueue", MC_OPT_UINT, "256",
     "password jobs waiting at most; beyond, a login is answered 'overloaded' (1..100000)"},
    {"pwhashPerAddress", MC_OPT_UINT, "4",
     "password jobs of one source address in the queue at most; beyond, its login is "
     "answered 'rate limited' (1..100000)"},
    {"autoCreateAccounts", MC_OPT_BOOL, "false",
     "development: an unknown account name gets an account (its password hashed) instead "
     "of 'no such user'"},
    {"accountType", MC_OPT_STRING, "Account",
     "the entity type of a new account (from the defs; its base is the player's first proxy)"},
    {"onlineLogin", MC_OPT_STRING, "refuse",
     "what a login of an account whose base is live does: refuse ('already logged in', "
     "always) or takeover (the new client gets the live base when it sets its takeover flag; "
     "else 'already logged in')"},
    {"maxLoginsInFlight", MC_OPT_UINT, "1000",
     "logins being processed at most; beyond, 'overloaded' (1..1000000)"},
    {"loginTimeoutMs", MC_OPT_UINT, "8000",
     "a login not finished in this time is answered 'server error' (1000..60000; below the "
     "clients' own timeout, 10 s by default)"},
    {"addressRate", MC_OPT_FLOAT, "5",
     "logins a second a source address may start (its bucket refills at this rate; > 0)"},
    {"addressBurst", MC_OPT_FLOAT, "20", "logins a source address may start at once (>= 1)"},
    {"addressRefusals", MC_OPT_FLOAT, "3",
     "'rate limited' answers an address over its bucket gets at once (refilled at "
     "--addressRate); beyond, its LOGINs are dropped unanswered before any public-key work "
     "(>= 1)"},
    {"accountFailRate", MC_OPT_FLOAT, "0.1",
     "failed password checks a second per account name from all sources together (its "
     "bucket refills at this rate; > 0); an empty bucket makes every login of the name "
     "'rate limited' (only failures take from it)"},
    {"accountFailBurst", MC_OPT_FLOAT, "30",
     "failed password checks at once per account name from all sources (>= 1)"},
    {"failedBackoffMs", MC_OPT_UINT, "1000",
     "after k failed password checks in a row from one source address on one account name, "
     "that address waits this x 2^(k-1) before its next try on that name (1..600000)"},
    {"failedBackoffMaxMs", MC_OPT_UINT, "60000",
     "the longest such wait (>= --failedBackoffMs, at most 3600000)"},
    {"resumeFanOut", MC_OPT_UINT, "16",
     "RESUME_PREPARE requests one resumption sends at once to find the baseapp holding the "
     "proxy (in waves of this many until one has it; 1..256)"},
    {"limitKeys", MC_OPT_UINT, "100000",
     "source addresses and account names the limits remember each (1..10000000)"},
};
const size_t la_option_count = sizeof la_options / sizeof la_options[0];

static bool range(const mc_config *cfg, const char *name, uint64_t lo, uint64_t hi, char *err,
                  size_t errlen)
{
    uint64_t v = mc_config_get_uint(cfg, name);
    if (v < lo || v > hi) {
        snprintf(err, errlen, "--%s: %llu is not within %llu..%llu", name,
                 (unsigned long long)v, (unsigned long long)lo, (unsigned long long)hi);
        return false;
    }
    return true;
}

bool la_check_config(const mc_config *cfg, char *err, size_t errlen)
{
    const char *key = mc_config_get_string(cfg, "loginKey");
    const char *redis = mc_config_get_string(cfg, "redis");
    mc_address a;
    mc_pwhash_cost cost;
    const char *online = mc_config_get_string(cfg, "onlineLogin");
    (void)key;
    if (redis && *redis && (mc_address_parse(redis, &a) != 0 || a.port == 0)) {
        snprintf(err, errlen, "--redis: '%s' is not IP:PORT (a numeric IPv4 address and a port)",
                 redis);
        return false;
    }
    if (!mc_pwhash_cost_named(mc_config_get_string(cfg, "pwhashCost"), &cost) ||
        strcmp(mc_config_get_string(cfg, "pwhashCost"), "moderate") == 0) {
        snprintf(err, errlen, "--pwhashCost: '%s' is neither dev nor interactive",
                 mc_config_get_string(cfg, "pwhashCost"));
        return false;
    }
    if (strcmp(online, "refuse") != 0 && strcmp(online, "takeover") != 0) {
        snprintf(err, errlen, "--onlineLogin: '%s' is neither takeover nor refuse", online);
        return false;
    }
    const char *type = mc_config_get_string(cfg, "accountType");
    if (!type || !*type || strlen(type) >= LA_ACCOUNT_TYPE_MAX) {
        snprintf(err, errlen, "--accountType: give an entity type name (1..63 bytes)");
        return false;
    }
    if (!range(cfg, "pwhashThreads", 1, 16, err, errlen) ||
        !range(cfg, "pwhashQueue", 1, 100000, err, errlen) ||
        !range(cfg, "pwhashPerAddress", 1, 100000, err, errlen) ||
        !range(cfg, "maxLoginsInFlight", 1, 1000000, err, errlen) ||
        !range(cfg, "loginTimeoutMs", 1000, 60000, err, errlen) ||
        !range(cfg, "failedBackoffMs", 1, 600000, err, errlen) ||
        !range(cfg, "failedBackoffMaxMs", mc_config_get_uint(cfg, "failedBackoffMs"), 3600000,
               err, errlen) ||
        !range(cfg, "limitKeys", 1, 10000000, err, errlen) ||
        !range(cfg, "resumeFanOut", 1, 256, err, errlen))
        return false;
    if (!(mc_config_get_float(cfg, "addressRefusals") >= 1)) {
        snprintf(err, errlen, "--addressRefusals: must be at least 1");
        return false;
    }
    const char *rates[] = {"addressRate", "accountFailRate"};
    const char *bursts[] = {"addressBurst", "accountFailBurst"};
    for (int i = 0; i < 2; i++) {
        if (!(mc_config_get_float(cfg, rates[i]) > 0)) {
            snprintf(err, errlen, "--%s: must be above 0", rates[i]);
            return false;
        }
        if (!(mc_config_get_float(cfg, bursts[i]) >= 1)) {
            snprintf(err, errlen, "--%s: must be at least 1", bursts[i]);
            return false;
        }
    }
    return true;
}

/* The secret key file: 64 hex digits (and a newline). */
static int read_key(const char *path, uint8_t sk[MC_LOGIN_SECRET_KEY_BYTES], char *err,
                    size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "--loginKey: cannot read '%s'", path);
        return -1;
    }
    char text[130] = "";
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
        text[--n] = '\0';
    size_t bin_len = 0;
    int rc = n == 64 ? sodium_hex2bin(sk, MC_LOGIN_SECRET_KEY_BYTES, text, n, NULL, &bin_len, NULL)
                     : -1;
    sodium_memzero(text, sizeof text);
    if (rc != 0 || bin_len != MC_LOGIN_SECRET_KEY_BYTES) {
        snprintf(err, errlen, "--loginKey: '%s' does not hold a key (64 hex digits)", path);
        return -1;
    }
    return 0;
}

int la_configure(loginapp *la, const mc_config *cfg, char *err, size_t errlen)
{
    if (sodium_init() < 0) {
        snprintf(err, errlen, "libsodium cannot start");
        return -1;
    }
    const char *key = mc_config_get_string(cfg, "loginKey");
    la->has_key = key && *key;
    if (la->has_key) {
        if (read_key(key, la->sk, err, errlen) != 0)
            return -1;
        crypto_scalarmult_base(la->pk, la->sk);
        sodium_bin2hex(la->pk_hex, sizeof la->pk_hex, la->pk, sizeof la->pk);
    }
    const char *hex = mc_server_digest(la->server);
    size_t bin_len = 0;
    if (sodium_hex2bin(la->digest, sizeof la->digest, hex, strlen(hex), NULL, &bin_len, NULL) !=
            0 ||
        bin_len != sizeof la->digest) {
        snprintf(err, errlen, "the defs digest '%s' is not 64 hex digits", hex);
        return -1;
    }
    la->auto_create = mc_config_get_bool(cfg, "autoCreateAccounts");
    la->online = strcmp(mc_config_get_string(cfg, "onlineLogin"), "takeover") == 0
                     ? LA_ONLINE_TAKEOVER
                     : LA_ONLINE_REFUSE;
    snprintf(la->account_type, sizeof la->account_type, "%s",
             mc_config_get_string(cfg, "accountType"));
    la->max_in_flight = mc_config_get_uint(cfg, "maxLoginsInFlight");
    la->login_timeout_ms = mc_config_get_uint(cfg, "loginTimeoutMs");
    la->prepare_timeout_ms = la->login_timeout_ms / 2;
    la->resume_fan_out = mc_config_get_uint(cfg, "resumeFanOut");
    /* resumption tickets: sealed by the baseapps with a key from the cluster secret */
    uint8_t secret[MC_AUTH_SECRET_BYTES];
    if (mc_server_load_secret(la->server, secret, err, errlen) != 0)
        return -1;
    int rc = mc_resume_ticket_key(secret, la->ticket_key);
    mc_auth_wipe_secret(secret);
    if (rc != 0) {
        snprintf(err, errlen, "cannot derive the resumption ticket key");
        return -1;
    }
    return 0;
}
