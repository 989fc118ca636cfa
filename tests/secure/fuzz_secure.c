/* libFuzzer: every parser of external-socket packets on arbitrary bytes: the server's HELLO
 * and CONNECT, the client's handshake answers (in each state), DATA opening, the LOGIN (also
 * one with a good cookie whose boxed credentials are the fuzzer's bytes) and the
 * LOGIN_REPLY. Nothing may crash, read out of bounds or accept without the keys. */
#include <stdint.h>
#include <string.h>

#include "secure/handshake.h"
#include "secure/login.h"
#include "secure/session.h"

#include <sodium.h>

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
        if (mc_login_server_check(&secret, from, 5, data, size, &req) == MC_SECURE_OK ||
            mc_login_server_open(&secret, from, 5, lsk, data, size, &req) == MC_SECURE_OK)
            __builtin_trap(); /* needs a cookie by this secret */
        mc_login_request_clear(&req);
        /* A LOGIN with a good cookie whose boxed credentials are these bytes: the
         * loginapp's decoding of what is inside the box (bytes 90-91 the box length, the
         * box from 92 under the nonce BLAKE2b-192("mc-login\0" || bytes 0..91), from the
         * client's ephemeral key to the loginapp's: docs/PROTOCOL.md "Logging in"). */
        mc_secure_client fc;
        uint8_t hello[MC_SECURE_HELLO_SIZE], pkt[MC_LOGIN_SIZE];
        if (size + crypto_box_MACBYTES <= MC_LOGIN_SIZE - 92 &&
            mc_secure_client_init(&fc, 0, key) == 0) {
            mc_login_credentials cred;
            memset(&cred, 0, sizeof cred);
            cred.name[0] = 'a';
            if (mc_secure_client_packet(&fc, hello) == sizeof hello &&
                mc_secure_server_hello(&secret, from, 5, hello, sizeof hello, chal) == MC_SECURE_OK &&
                mc_secure_client_receive(&fc, chal, sizeof chal, NULL) == MC_SECURE_OK &&
                mc_login_client_request(&fc, &cred, lpk, pkt) == MC_SECURE_OK) {
                size_t boxed = size + crypto_box_MACBYTES;
                memset(pkt + 90, 0, MC_LOGIN_SIZE - 90);
                pkt[90] = (uint8_t)(boxed >> 8);
                pkt[91] = (uint8_t)boxed;
                uint8_t n[crypto_box_NONCEBYTES];
                crypto_generichash_state st;
                crypto_generichash_init(&st, NULL, 0, sizeof n);
                crypto_generichash_update(&st, (const uint8_t *)"mc-login\0", 9);
                crypto_generichash_update(&st, pkt, 92);
                crypto_generichash_final(&st, n, sizeof n);
                if (crypto_box_easy(pkt + 92, data, size, n, lpk, fc.sk) != 0)
                    __builtin_trap(); /* a good key pair always boxes */
                rc = mc_login_server_open(&secret, from, 5, lsk, pkt, sizeof pkt, &req);
                if (rc != MC_SECURE_OK && rc != MC_SECURE_AUTH && rc != MC_SECURE_MALFORMED)
                    __builtin_trap(); /* the cookie is good: the box decides */
                if (rc == MC_SECURE_MALFORMED && size + crypto_box_MACBYTES >= 53 &&
                    size <= 356)
                    __builtin_trap(); /* a box length in range is never dropped */
                size_t n2 = strnlen(req.cred.name, sizeof req.cred.name);
                if (rc == MC_SECURE_OK &&
                    (!mc_login_name_ok(req.cred.name, n2) ||
                     req.cred.password_len > MC_LOGIN_PASSWORD_MAX ||
                     (req.cred.flags & ~MC_LOGIN_FLAG_TAKEOVER)))
                    __builtin_trap(); /* accepted credentials the protocol forbids */
                mc_login_request_clear(&req);
            }
            mc_secure_client_clear(&fc);
        }
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
