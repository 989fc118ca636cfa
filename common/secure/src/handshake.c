/* The secure handshake (secure/handshake.h): packet layouts, cookies, key derivation. */
#include "secure/handshake.h"
#include "internal.h"

#include <sodium.h>
#include <string.h>

/* Offsets in HELLO / CONNECT (both MC_SECURE_HELLO_SIZE bytes). */
#define OFF_NONCE MC_SECURE_OFF_NONCE
#define OFF_PK MC_SECURE_OFF_PK
#define OFF_SESSION MC_SECURE_OFF_SESSION
#define HELLO_BODY 50u             /* HELLO: padding from here */
#define OFF_COOKIE MC_SECURE_OFF_COOKIE
#define OFF_PROOF 90u
#define CONNECT_BODY 106u          /* CONNECT: padding from here */
#define PROOF_BYTES 16u
#define CONFIRM_BYTES 16u

static const char COOKIE_TAG[] = "mc-cookie";
static const char CONNECT_TAG[] = "mc-connect";
static const char ACCEPT_TAG[] = "mc-accept";
static const char C2S_TAG[] = "mc-c2s";
static const char S2C_TAG[] = "mc-s2c";

const char *mc_secure_status_name(int status)
{
    switch (status) {
    case MC_SECURE_OK: return "ok";
    case MC_SECURE_MALFORMED: return "malformed";
    case MC_SECURE_BAD_COOKIE: return "bad cookie";
    case MC_SECURE_EXPIRED: return "cookie expired";
    case MC_SECURE_NO_SESSION: return "no such session";
    case MC_SECURE_BAD_PROOF: return "bad session proof";
    case MC_SECURE_UNEXPECTED: return "unexpected packet";
    case MC_SECURE_AUTH: return "authentication failed";
    case MC_SECURE_REJECTED: return "rejected";
    case MC_SECURE_NO_MEMORY: return "out of memory";
    default: return "unknown status";
    }
}

int mc_secure_init(void)
{
    return sodium_init() < 0 ? -1 : 0;
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

int mc_secure_secret_init(mc_secure_secret *s)
{
    if (mc_secure_init() != 0)
        return -1;
    randombytes_buf(s->current, sizeof s->current);
    randombytes_buf(s->previous, sizeof s->previous);
    return 0;
}

void mc_secure_secret_rotate(mc_secure_secret *s)
{
    memcpy(s->previous, s->current, sizeof s->previous);
    randombytes_buf(s->current, sizeof s->current);
}

/* The cookie's MAC over what it binds. */
static void cookie_mac(const uint8_t key[MC_SECURE_KEY_BYTES], mc_secure_peer from,
                       const uint8_t *nonce, const uint8_t *pk, const uint8_t *session,
                       const uint8_t *expires, uint8_t mac[32])
{
    crypto_generichash_state st;
    uint8_t addr[6] = {(uint8_t)(from.ip >> 24), (uint8_t)(from.ip >> 16),
                       (uint8_t)(from.ip >> 8), (uint8_t)from.ip, (uint8_t)(from.port >> 8),
                       (uint8_t)from.port};
    crypto_generichash_init(&st, key, MC_SECURE_KEY_BYTES, 32);
    crypto_generichash_update(&st, (const uint8_t *)COOKIE_TAG, sizeof COOKIE_TAG);
    crypto_generichash_update(&st, addr, sizeof addr);
    crypto_generichash_update(&st, nonce, 8);
    crypto_generichash_update(&st, pk, 32);
    crypto_generichash_update(&st, session, 8);
    crypto_generichash_update(&st, expires, 8);
    crypto_generichash_final(&st, mac, 32);
}

/* A HELLO or CONNECT of the right size, type, version and zero padding. */
static bool well_formed(const uint8_t *pkt, size_t len, uint8_t type, size_t body)
{
    return pkt && len == MC_SECURE_HELLO_SIZE && pkt[0] == type &&
           pkt[1] == MC_SECURE_VERSION && sodium_is_zero(pkt + body, len - body);
}

int mc_secure_server_hello(const mc_secure_secret *s, mc_secure_peer from, uint64_t now_ms,
                           const uint8_t *pkt, size_t len, uint8_t out[MC_SECURE_CHALLENGE_SIZE])
{
    if (mc_secure_init() != 0)
        return MC_SECURE_NO_MEMORY;
    if (!well_formed(pkt, len, MC_SECURE_HELLO, HELLO_BODY))
        return MC_SECURE_MALFORMED;
    out[0] = MC_SECURE_CHALLENGE;
    memcpy(out + 1, pkt + OFF_NONCE, 8);
    uint8_t *cookie = out + 9;
    put_u64(cookie, now_ms + MC_SECURE_COOKIE_MS);
    cookie_mac(s->current, from, pkt + OFF_NONCE, pkt + OFF_PK, pkt + OFF_SESSION, cookie,
               cookie + 8);
    return MC_SECURE_OK;
}

/* The CONNECT proof: a MAC by the session key over everything before it. */
static void connect_proof(const uint8_t session_key[MC_SECURE_KEY_BYTES], const uint8_t *pkt,
                          uint8_t proof[PROOF_BYTES])
{
    crypto_generichash_state st;
    crypto_generichash_init(&st, session_key, MC_SECURE_KEY_BYTES, PROOF_BYTES);
    crypto_generichash_update(&st, (const uint8_t *)CONNECT_TAG, sizeof CONNECT_TAG);
    crypto_generichash_update(&st, pkt, OFF_PROOF);
    crypto_generichash_final(&st, proof, PROOF_BYTES);
}

/* One direction's key: the exchange's key bound to the session key and the transcript. */
static void bind_key(const char *tag, size_t taglen, const uint8_t session_key[32],
                     const uint8_t raw[32], const uint8_t *client_nonce,
                     const uint8_t *server_nonce, const uint8_t *client_pk,
                     const uint8_t *server_pk, uint8_t out[32])
{
    crypto_generichash_state st;
    crypto_generichash_init(&st, session_key, MC_SECURE_KEY_BYTES, 32);
    crypto_generichash_update(&st, (const uint8_t *)tag, taglen);
    crypto_generichash_update(&st, raw, 32);
    crypto_generichash_update(&st, client_nonce, 8);
    crypto_generichash_update(&st, server_nonce, 8);
    crypto_generichash_update(&st, client_pk, 32);
    crypto_generichash_update(&st, server_pk, 32);
    crypto_generichash_final(&st, out, 32);
}

static void derive(const uint8_t session_key[32], const uint8_t raw_c2s[32],
                   const uint8_t raw_s2c[32], const uint8_t *client_nonce,
                   const uint8_t *server_nonce, const uint8_t *client_pk,
                   const uint8_t *server_pk, mc_secure_keys *keys)
{
    bind_key(C2S_TAG, sizeof C2S_TAG, session_key, raw_c2s, client_nonce, server_nonce,
             client_pk, server_pk, keys->c2s);
    bind_key(S2C_TAG, sizeof S2C_TAG, session_key, raw_s2c, client_nonce, server_nonce,
             client_pk, server_pk, keys->s2c);
}

static void accept_confirm(const uint8_t s2c[32], const uint8_t *accept, uint8_t out[16])
{
    crypto_generichash_state st;
    crypto_generichash_init(&st, s2c, 32, CONFIRM_BYTES);
    crypto_generichash_update(&st, (const uint8_t *)ACCEPT_TAG, sizeof ACCEPT_TAG);
    crypto_generichash_update(&st, accept, MC_SECURE_ACCEPT_SIZE - CONFIRM_BYTES);
    crypto_generichash_final(&st, out, CONFIRM_BYTES);
}

static void write_reject(mc_secure_accepted *out, const uint8_t *nonce, int status)
{
    out->reply[0] = MC_SECURE_REJECT;
    memcpy(out->reply + 1, nonce, 8);
    out->reply[9] = (uint8_t)-status;
    out->reply_len = MC_SECURE_REJECT_SIZE;
}

int mc_secure_cookie_check(const mc_secure_secret *s, mc_secure_peer from, uint64_t now_ms,
                           const uint8_t *pkt)
{
    const uint8_t *cookie = pkt + OFF_COOKIE;
    uint8_t mac[32];
    const uint8_t *keys[2] = {s->current, s->previous};
    bool ok = false;
    for (int i = 0; i < 2 && !ok; i++) {
        cookie_mac(keys[i], from, pkt + OFF_NONCE, pkt + OFF_PK, pkt + OFF_SESSION, cookie,
                   mac);
        ok = sodium_memcmp(mac, cookie + 8, 32) == 0;
    }
    if (!ok)
        return MC_SECURE_BAD_COOKIE;
    uint64_t expires = get_u64(cookie);
    return now_ms <= expires && expires - now_ms <= MC_SECURE_COOKIE_MS ? MC_SECURE_OK
                                                                         : MC_SECURE_EXPIRED;
}

int mc_secure_server_connect(const mc_secure_secret *s, mc_secure_peer from, uint64_t now_ms,
                             const uint8_t *pkt, size_t len, mc_secure_session_lookup lookup,
                             void *lookup_ctx, mc_secure_accepted *out)
{
    memset(out, 0, sizeof *out);
    if (mc_secure_init() != 0)
        return MC_SECURE_NO_MEMORY;
    if (!well_formed(pkt, len, MC_SECURE_CONNECT, CONNECT_BODY))
        return MC_SECURE_MALFORMED;
    int ck = mc_secure_cookie_check(s, from, now_ms, pkt);
    if (ck != MC_SECURE_OK)
        return ck;
    /* From here the address is proven: refusals are answered. */
    const uint8_t *nonce = pkt + OFF_NONCE, *client_pk = pkt + OFF_PK;
    out->session_id = get_u64(pkt + OFF_SESSION);
    memcpy(out->client_nonce, nonce, 8);
    uint8_t session_key[MC_SECURE_KEY_BYTES];
    if (!lookup || lookup(lookup_ctx, out->session_id, session_key) != 0) {
        write_reject(out, nonce, MC_SECURE_NO_SESSION);
        return MC_SECURE_NO_SESSION;
    }
    uint8_t proof[PROOF_BYTES];
    connect_proof(session_key, pkt, proof);
    if (sodium_memcmp(proof, pkt + OFF_PROOF, PROOF_BYTES) != 0) {
        sodium_memzero(session_key, sizeof session_key);
        write_reject(out, nonce, MC_SECURE_BAD_PROOF);
        return MC_SECURE_BAD_PROOF;
    }
    uint8_t spk[crypto_kx_PUBLICKEYBYTES], ssk[crypto_kx_SECRETKEYBYTES];
    uint8_t raw_c2s[crypto_kx_SESSIONKEYBYTES], raw_s2c[crypto_kx_SESSIONKEYBYTES];
    uint8_t server_nonce[8];
    crypto_kx_keypair(spk, ssk);
    randombytes_buf(server_nonce, sizeof server_nonce);
    /* the server's rx is what the client sends */
    int bad = crypto_kx_server_session_keys(raw_c2s, raw_s2c, spk, ssk, client_pk);
    sodium_memzero(ssk, sizeof ssk);
    if (bad) {
        /* a client public key of small order: no exchange is possible */
        sodium_memzero(session_key, sizeof session_key);
        write_reject(out, nonce, MC_SECURE_BAD_PROOF);
        return MC_SECURE_BAD_PROOF;
    }
    derive(session_key, raw_c2s, raw_s2c, nonce, server_nonce, client_pk, spk, &out->keys);
    sodium_memzero(session_key, sizeof session_key);
    sodium_memzero(raw_c2s, sizeof raw_c2s);
    sodium_memzero(raw_s2c, sizeof raw_s2c);
    uint8_t *a = out->reply;
    a[0] = MC_SECURE_ACCEPT;
    memcpy(a + 1, nonce, 8);
    memcpy(a + 9, server_nonce, 8);
    memcpy(a + 17, spk, 32);
    accept_confirm(out->keys.s2c, a, a + 49);
    out->reply_len = MC_SECURE_ACCEPT_SIZE;
    return MC_SECURE_OK;
}

/* ---- client ------------------------------------------------------------------------- */

int mc_secure_client_init(mc_secure_client *c, uint64_t session_id,
                          const uint8_t session_key[MC_SECURE_KEY_BYTES])
{
    memset(c, 0, sizeof *c);
    if (mc_secure_init() != 0)
        return -1;
    c->state = MC_SECURE_CLIENT_HELLO;
    c->session_id = session_id;
    memcpy(c->session_key, session_key, MC_SECURE_KEY_BYTES);
    randombytes_buf(c->nonce, sizeof c->nonce);
    crypto_kx_keypair(c->pk, c->sk);
    return 0;
}

void mc_secure_client_clear(mc_secure_client *c)
{
    sodium_memzero(c, sizeof *c);
}

size_t mc_secure_client_packet(const mc_secure_client *c, uint8_t out[MC_SECURE_HELLO_SIZE])
{
    if (c->state != MC_SECURE_CLIENT_HELLO && c->state != MC_SECURE_CLIENT_CONNECT)
        return 0;
    memset(out, 0, MC_SECURE_HELLO_SIZE);
    out[0] = c->state == MC_SECURE_CLIENT_HELLO ? MC_SECURE_HELLO : MC_SECURE_CONNECT;
    out[1] = MC_SECURE_VERSION;
    memcpy(out + OFF_NONCE, c->nonce, 8);
    memcpy(out + OFF_PK, c->pk, 32);
    put_u64(out + OFF_SESSION, c->session_id);
    if (c->state == MC_SECURE_CLIENT_CONNECT) {
        memcpy(out + OFF_COOKIE, c->cookie, MC_SECURE_COOKIE_SIZE);
        connect_proof(c->session_key, out, out + OFF_PROOF);
    }
    return MC_SECURE_HELLO_SIZE;
}

int mc_secure_client_receive(mc_secure_client *c, const uint8_t *pkt, size_t len,
                             mc_secure_keys *keys)
{
    if (!pkt || len < 9)
        return MC_SECURE_MALFORMED;
    if (sodium_memcmp(pkt + 1, c->nonce, 8) != 0)
        return MC_SECURE_UNEXPECTED; /* another attempt's, or forged */
    switch (pkt[0]) {
    case MC_SECURE_CHALLENGE:
        if (len != MC_SECURE_CHALLENGE_SIZE)
            return MC_SECURE_MALFORMED;
        if (c->state != MC_SECURE_CLIENT_HELLO && c->state != MC_SECURE_CLIENT_CONNECT)
            return MC_SECURE_UNEXPECTED;
        memcpy(c->cookie, pkt + 9, MC_SECURE_COOKIE_SIZE); /* a newer cookie replaces it */
        c->state = MC_SECURE_CLIENT_CONNECT;
        return MC_SECURE_OK;
    case MC_SECURE_ACCEPT: {
        if (len != MC_SECURE_ACCEPT_SIZE)
            return MC_SECURE_MALFORMED;
        if (c->state != MC_SECURE_CLIENT_CONNECT)
            return MC_SECURE_UNEXPECTED;
        const uint8_t *server_nonce = pkt + 9, *spk = pkt + 17;
        uint8_t raw_c2s[crypto_kx_SESSIONKEYBYTES], raw_s2c[crypto_kx_SESSIONKEYBYTES];
        /* the client's rx is what the server sends */
        if (crypto_kx_client_session_keys(raw_s2c, raw_c2s, c->pk, c->sk, spk) != 0)
            return MC_SECURE_AUTH;
        mc_secure_keys k;
        derive(c->session_key, raw_c2s, raw_s2c, c->nonce, server_nonce, c->pk, spk, &k);
        sodium_memzero(raw_c2s, sizeof raw_c2s);
        sodium_memzero(raw_s2c, sizeof raw_s2c);
        uint8_t confirm[CONFIRM_BYTES];
        accept_confirm(k.s2c, pkt, confirm);
        if (sodium_memcmp(confirm, pkt + 49, CONFIRM_BYTES) != 0) {
            sodium_memzero(&k, sizeof k);
            return MC_SECURE_AUTH;
        }
        *keys = k;
        sodium_memzero(&k, sizeof k);
        sodium_memzero(c->sk, sizeof c->sk);
        sodium_memzero(c->session_key, sizeof c->session_key);
        c->state = MC_SECURE_CLIENT_DONE;
        return MC_SECURE_OK;
    }
    case MC_SECURE_REJECT:
        if (len != MC_SECURE_REJECT_SIZE)
            return MC_SECURE_MALFORMED;
        if (c->state != MC_SECURE_CLIENT_CONNECT)
            return MC_SECURE_UNEXPECTED;
        /* Unauthenticated (the server may not know the session key): it only ends this
         * attempt, which a forger who saw the nonce could do anyway by dropping packets. */
        c->reject_status = pkt[9];
        c->state = MC_SECURE_CLIENT_REFUSED;
        return MC_SECURE_REJECTED;
    default:
        return MC_SECURE_UNEXPECTED;
    }
}
