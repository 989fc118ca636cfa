/* libFuzzer: every parser of external-socket packets on arbitrary bytes: the server's HELLO
 * and CONNECT, the client's handshake answers (in each state) and DATA opening. Nothing may
 * crash, read out of bounds or accept without the keys. */
#include <stdint.h>
#include <string.h>

#include "secure/handshake.h"
#include "secure/login.h"
#include "secure/session.h"

static int lookup(void *ctx, uint64_t id, uint8_t key[32])
{
    (void)ctx;
    memset(key, (int)(id & 0xff), 32);
    return id % 3 == 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mc_secure_secret secret;
    static int ready;
    if (!ready) {
        if (mc_secure_secret_init(&secret) != 0)
            return 0;
        ready = 1;
    }
    mc_secure_peer from = {0x7f000001u, 1234};
    uint8_t chal[MC_SECURE_CHALLENGE_SIZE];
    (void)mc_secure_server_hello(&secret, from, 5, data, size, chal);
    mc_secure_accepted acc;
    int rc = mc_secure_server_connect(&secret, from, 5, data, size, lookup, NULL, &acc);
    if (rc == MC_SECURE_OK)
        __builtin_trap(); /* a cookie made by a random secret cannot be guessed */

    uint8_t key[32] = {0};
    mc_secure_client c;
    if (mc_secure_client_init(&c, 1, key) == 0) {
        mc_secure_keys k;
        (void)mc_secure_client_receive(&c, data, size, &k);
        c.state = MC_SECURE_CLIENT_CONNECT;
        if (mc_secure_client_receive(&c, data, size, &k) == MC_SECURE_OK &&
            c.state == MC_SECURE_CLIENT_DONE)
            __builtin_trap(); /* an ACCEPT needs the server's confirmation by the key */
        mc_secure_client_clear(&c);
    }
    /* the loginapp's side of a LOGIN, and a client reading a LOGIN_REPLY */
    static uint8_t lpk[32], lsk[32];
    static int have_keys;
    if (!have_keys && mc_login_keypair(lpk, lsk) == 0)
        have_keys = 1;
    if (have_keys) {
        mc_login_request req;
        if (mc_login_server_open(&secret, from, 5, lpk, lsk, data, size, &req) == MC_SECURE_OK)
            __builtin_trap(); /* needs a cookie by this secret */
        mc_login_request_clear(&req);
        mc_secure_client lc;
        if (mc_secure_client_init(&lc, 0, key) == 0) {
            mc_login_result res;
            if (mc_login_client_reply(&lc, lpk, data, size, &res) == MC_SECURE_OK)
                __builtin_trap(); /* needs the loginapp's key and this attempt's nonce */
            mc_secure_client_clear(&lc);
        }
    }
    mc_secure_keys keys;
    memset(&keys, 7, sizeof keys);
    mc_secure_session s;
    mc_secure_session_init(&s, &keys, true);
    uint8_t plain[2048];
    size_t n;
    (void)mc_secure_open(&s, data, size, plain, sizeof plain, &n);
    return 0;
}
