/* The login exchange (secure/login.h). */
#include "secure/login.h"
#include "internal.h"

#include <sodium.h>
#include <string.h>

#define OFF_BOX_LEN 90u
#define OFF_BOX 92u
#define REPLY_PLAIN 47u /* status, ip, port, session id, session key */
#define PLAIN_MAX (1 + MC_LOGIN_NAME_MAX + 2 + MC_LOGIN_PASSWORD_MAX + MC_LOGIN_DIGEST_BYTES + 1)
#define BOX_MIN (1 + 1 + 2 + MC_LOGIN_DIGEST_BYTES + 1 + crypto_box_MACBYTES)
#define BOX_MAX (PLAIN_MAX + crypto_box_MACBYTES)

_Static_assert(OFF_BOX + BOX_MAX <= MC_LOGIN_SIZE, "the longest credentials fit a LOGIN");

static const char *const status_names[MC_LOGIN_STATUS_COUNT] = {
    "ok", "no such user", "bad password", "already logged in", "bad def digest",
    "no baseapp", "overloaded", "rate limited", "malformed", "server error", "timed out",
    "ticket expired", "ticket used", "entity gone",
};

const char *mc_login_status_name(int status)
{
    return status >= 0 && status < MC_LOGIN_STATUS_COUNT ? status_names[status]
                                                         : "unknown status";
}

bool mc_login_name_ok(const char *name, size_t len)
{
    if (!name || len < 1 || len > MC_LOGIN_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (ch < 0x20 || ch == 0x7f)
            return false;
    }
    return true;
}

/* The box nonce of a LOGIN: BLAKE2b-192 over "mc-login\0" and the packet's bytes 0..91
 * (type, version, client nonce, client key, session id, cookie, box length). The box opens
 * only in a packet with exactly these bytes. */
static void box_nonce(const uint8_t *pkt, uint8_t n[crypto_box_NONCEBYTES])
{
    static const uint8_t label[9] = "mc-login";
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, crypto_box_NONCEBYTES);
    crypto_generichash_update(&st, label, sizeof label);
    crypto_generichash_update(&st, pkt, OFF_BOX);
    crypto_generichash_final(&st, n, crypto_box_NONCEBYTES);
}

int mc_login_keypair(uint8_t pk[MC_LOGIN_PUBLIC_KEY_BYTES], uint8_t sk[MC_LOGIN_SECRET_KEY_BYTES])
{
    if (mc_secure_init() != 0)
        return -1;
    return crypto_box_keypair(pk, sk) == 0 ? 0 : -1;
}

/* The boxed plaintext: name length (1), name, password length (2), password, digest (32),
 * flags (1). */
static size_t cred_encode(const mc_login_credentials *c, uint8_t *out)
{
    size_t n = strlen(c->name), k = 0;
    out[k++] = (uint8_t)n;
    memcpy(out + k, c->name, n);
    k += n;
    out[k++] = (uint8_t)(c->password_len >> 8);
    out[k++] = (uint8_t)c->password_len;
    memcpy(out + k, c->password, c->password_len);
    k += c->password_len;
    memcpy(out + k, c->digest, MC_LOGIN_DIGEST_BYTES);
    k += MC_LOGIN_DIGEST_BYTES;
    out[k++] = c->flags;
    return k;
}

static bool cred_decode(const uint8_t *p, size_t len, mc_login_credentials *c)
{
    memset(c, 0, sizeof *c);
    size_t k = 0;
    if (len < 1)
        return false;
    size_t n = p[k++];
    if (n == 0 || n > MC_LOGIN_NAME_MAX || len - k < n + 2)
        return false;
    memcpy(c->name, p + k, n);
    k += n;
    if (!mc_login_name_ok(c->name, n))
        return false;
    size_t pl = (size_t)p[k] << 8 | p[k + 1];
    k += 2;
    if (pl > MC_LOGIN_PASSWORD_MAX || len - k != pl + MC_LOGIN_DIGEST_BYTES + 1)
        return false;
    memcpy(c->password, p + k, pl);
    c->password_len = pl;
    k += pl;
    memcpy(c->digest, p + k, MC_LOGIN_DIGEST_BYTES);
    k += MC_LOGIN_DIGEST_BYTES;
    c->flags = p[k];
    return (c->flags & ~MC_LOGIN_FLAG_TAKEOVER) == 0;
}

int mc_login_client_request(const mc_secure_client *c, const mc_login_credentials *cred,
                            const uint8_t loginapp_pk[MC_LOGIN_PUBLIC_KEY_BYTES],
                            uint8_t out[MC_LOGIN_SIZE])
{
    size_t nl = strnlen(cred->name, MC_LOGIN_NAME_MAX + 1);
    if (c->state != MC_SECURE_CLIENT_CONNECT || c->session_id != 0 ||
        !mc_login_name_ok(cred->name, nl) || cred->password_len > MC_LOGIN_PASSWORD_MAX ||
        (cred->flags & ~MC_LOGIN_FLAG_TAKEOVER))
        return MC_SECURE_MALFORMED;
    if (mc_secure_init() != 0)
        return MC_SECURE_NO_MEMORY;
    memset(out, 0, MC_LOGIN_SIZE);
    out[0] = MC_SECURE_LOGIN;
    out[1] = MC_SECURE_VERSION;
    memcpy(out + MC_SECURE_OFF_NONCE, c->nonce, 8);
    memcpy(out + MC_SECURE_OFF_PK, c->pk, 32);
    /* session id 0: bytes 42..49 stay zero, as in the HELLO the cookie was made for */
    memcpy(out + MC_SECURE_OFF_COOKIE, c->cookie, MC_SECURE_COOKIE_SIZE);
    uint8_t plain[PLAIN_MAX], nonce[crypto_box_NONCEBYTES];
    size_t pl = cred_encode(cred, plain);
    size_t boxed = pl + crypto_box_MACBYTES;
    out[OFF_BOX_LEN] = (uint8_t)(boxed >> 8);
    out[OFF_BOX_LEN + 1] = (uint8_t)boxed;
    box_nonce(out, nonce);
    int rc = crypto_box_easy(out + OFF_BOX, plain, pl, nonce, loginapp_pk, c->sk);
    sodium_memzero(plain, sizeof plain);
    if (rc != 0) {
        sodium_memzero(out, MC_LOGIN_SIZE);
        return MC_SECURE_MALFORMED;
    }
    return MC_SECURE_OK;
}

/* The box length of a well-formed LOGIN, or 0. */
static size_t well_formed(const uint8_t *pkt, size_t len)
{
    if (!pkt || len != MC_LOGIN_SIZE || pkt[0] != MC_SECURE_LOGIN ||
        pkt[1] != MC_SECURE_VERSION || !sodium_is_zero(pkt + MC_SECURE_OFF_SESSION, 8))
        return 0;
    size_t boxed = (size_t)pkt[OFF_BOX_LEN] << 8 | pkt[OFF_BOX_LEN + 1];
    if (boxed < BOX_MIN || boxed > BOX_MAX ||
        !sodium_is_zero(pkt + OFF_BOX + boxed, MC_LOGIN_SIZE - OFF_BOX - boxed))
        return 0;
    return boxed;
}

int mc_login_server_check(const mc_secure_secret *s, mc_secure_peer from, uint64_t now_ms,
                          const uint8_t *pkt, size_t len, mc_login_request *out)
{
    memset(out, 0, sizeof *out);
    if (mc_secure_init() != 0)
        return MC_SECURE_NO_MEMORY;
    if (!well_formed(pkt, len))
        return MC_SECURE_MALFORMED;
    int ck = mc_secure_cookie_check(s, from, now_ms, pkt);
    if (ck != MC_SECURE_OK)
        return ck;
    memcpy(out->client_nonce, pkt + MC_SECURE_OFF_NONCE, 8);
    memcpy(out->client_pk, pkt + MC_SECURE_OFF_PK, 32);
    return MC_SECURE_OK;
}

int mc_login_server_unbox(const uint8_t sk[MC_LOGIN_SECRET_KEY_BYTES], const uint8_t *pkt,
                          size_t len, mc_login_request *out)
{
    sodium_memzero(&out->cred, sizeof out->cred);
    out->has_box_key = false;
    size_t boxed = well_formed(pkt, len);
    if (!boxed || sodium_memcmp(out->client_pk, pkt + MC_SECURE_OFF_PK, 32) != 0 ||
        sodium_memcmp(out->client_nonce, pkt + MC_SECURE_OFF_NONCE, 8) != 0)
        return MC_SECURE_MALFORMED;
    /* The one X25519 of a LOGIN: its result opens the credentials and boxes the reply. */
    if (crypto_box_beforenm(out->box_key, out->client_pk, sk) != 0) {
        sodium_memzero(out->box_key, sizeof out->box_key);
        return MC_SECURE_MALFORMED; /* a key of small order: nothing can be answered */
    }
    out->has_box_key = true;
    uint8_t plain[BOX_MAX], nonce[crypto_box_NONCEBYTES];
    box_nonce(pkt, nonce);
    int rc = crypto_box_open_easy_afternm(plain, pkt + OFF_BOX, boxed, nonce, out->box_key) == 0 &&
                     cred_decode(plain, boxed - crypto_box_MACBYTES, &out->cred)
                 ? MC_SECURE_OK
                 : MC_SECURE_AUTH;
    sodium_memzero(plain, sizeof plain);
    if (rc != MC_SECURE_OK)
        sodium_memzero(&out->cred, sizeof out->cred);
    return rc;
}

int mc_login_server_open(const mc_secure_secret *s, mc_secure_peer from, uint64_t now_ms,
                         const uint8_t sk[MC_LOGIN_SECRET_KEY_BYTES], const uint8_t *pkt,
                         size_t len, mc_login_request *out)
{
    int rc = mc_login_server_check(s, from, now_ms, pkt, len, out);
    return rc == MC_SECURE_OK ? mc_login_server_unbox(sk, pkt, len, out) : rc;
}

void mc_login_request_clear(mc_login_request *r)
{
    sodium_memzero(r, sizeof *r);
}

int mc_login_server_reply(const mc_login_request *req, const mc_login_result *result,
                          uint8_t out[MC_LOGIN_REPLY_SIZE])
{
    if (!req->has_box_key || mc_secure_init() != 0)
        return -1;
    uint8_t plain[REPLY_PLAIN] = {0};
    plain[0] = (uint8_t)result->status;
    if (result->status == MC_LOGIN_OK) {
        for (int i = 0; i < 4; i++)
            plain[1 + i] = (uint8_t)(result->baseapp_ip >> (24 - 8 * i));
        plain[5] = (uint8_t)(result->baseapp_port >> 8);
        plain[6] = (uint8_t)result->baseapp_port;
        for (int i = 0; i < 8; i++)
            plain[7 + i] = (uint8_t)(result->session_id >> (56 - 8 * i));
        memcpy(plain + 15, result->session_key, MC_SECURE_KEY_BYTES);
    }
    out[0] = MC_SECURE_LOGIN_REPLY;
    memcpy(out + 1, req->client_nonce, 8);
    randombytes_buf(out + 9, crypto_box_NONCEBYTES);
    int rc = crypto_box_easy_afternm(out + 9 + crypto_box_NONCEBYTES, plain, sizeof plain,
                                     out + 9, req->box_key);
    sodium_memzero(plain, sizeof plain);
    return rc == 0 ? 0 : -1;
}

int mc_login_client_reply(const mc_secure_client *c,
                          const uint8_t loginapp_pk[MC_LOGIN_PUBLIC_KEY_BYTES],
                          const uint8_t *pkt, size_t len, mc_login_result *out)
{
    memset(out, 0, sizeof *out);
    if (!pkt || len != MC_LOGIN_REPLY_SIZE || pkt[0] != MC_SECURE_LOGIN_REPLY)
        return MC_SECURE_MALFORMED;
    if (sodium_memcmp(pkt + 1, c->nonce, 8) != 0)
        return MC_SECURE_UNEXPECTED;
    uint8_t plain[REPLY_PLAIN];
    if (crypto_box_open_easy(plain, pkt + 9 + crypto_box_NONCEBYTES,
                             REPLY_PLAIN + crypto_box_MACBYTES, pkt + 9, loginapp_pk,
                             c->sk) != 0)
        return MC_SECURE_AUTH;
    out->status = plain[0];
    if (out->status == MC_LOGIN_OK) {
        for (int i = 0; i < 4; i++)
            out->baseapp_ip = out->baseapp_ip << 8 | plain[1 + i];
        out->baseapp_port = (uint16_t)(plain[5] << 8 | plain[6]);
        for (int i = 0; i < 8; i++)
            out->session_id = out->session_id << 8 | plain[7 + i];
        memcpy(out->session_key, plain + 15, MC_SECURE_KEY_BYTES);
    }
    sodium_memzero(plain, sizeof plain);
    return out->status < MC_LOGIN_STATUS_COUNT ? MC_SECURE_OK : MC_SECURE_MALFORMED;
}
