/* The resumption ticket and the RESUME exchange (secure/resume.h). */
#include "secure/resume.h"
#include "internal.h"

#include <sodium.h>
#include <string.h>

#define T_NONCE 24u
#define T_PLAIN 113u /* id 4, serial 4, expiry 8, resume key 32, name length 1, name 64 */
#define T_TAG 16u
#define OFF_TICKET 90u
#define OFF_PROOF (OFF_TICKET + MC_RESUME_TICKET_SIZE) /* 244 */
#define R_PLAIN 47u  /* status, ip, port, session id, session key */

_Static_assert(1 + T_NONCE + T_PLAIN + T_TAG == MC_RESUME_TICKET_SIZE, "ticket layout");
_Static_assert(OFF_PROOF + MC_RESUME_PROOF_BYTES <= MC_RESUME_SIZE, "RESUME layout");
_Static_assert(1 + 8 + 24 + R_PLAIN + 16 == MC_RESUME_REPLY_SIZE, "RESUME_REPLY layout");

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}
static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
}
static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

int mc_resume_ticket_key(const uint8_t secret[32], uint8_t key[32])
{
    static const uint8_t ctx[] = "mc-resume-ticket";
    if (mc_secure_init() != 0)
        return -1;
    return crypto_generichash(key, 32, ctx, sizeof ctx - 1, secret, 32) == 0 ? 0 : -1;
}

int mc_resume_ticket_seal(const uint8_t key[32], const mc_resume_ticket_info *info,
                          uint8_t out[MC_RESUME_TICKET_SIZE])
{
    size_t nl = strnlen(info->name, MC_LOGIN_NAME_MAX + 1);
    if (info->entity_id <= 0 || info->serial == 0 || !mc_login_name_ok(info->name, nl))
        return MC_SECURE_MALFORMED;
    if (mc_secure_init() != 0)
        return MC_SECURE_NO_MEMORY;
    uint8_t plain[T_PLAIN] = {0};
    put_u32(plain, (uint32_t)info->entity_id);
    put_u32(plain + 4, info->serial);
    put_u64(plain + 8, info->expires_ms);
    memcpy(plain + 16, info->resume_key, MC_RESUME_KEY_BYTES);
    plain[48] = (uint8_t)nl;
    memcpy(plain + 49, info->name, nl);
    out[0] = MC_RESUME_TICKET_VERSION;
    randombytes_buf(out + 1, T_NONCE);
    unsigned long long clen = 0;
    int rc = crypto_aead_xchacha20poly1305_ietf_encrypt(out + 1 + T_NONCE, &clen, plain,
                                                        sizeof plain, out, 1, NULL, out + 1, key);
    sodium_memzero(plain, sizeof plain);
    return rc == 0 && clen == T_PLAIN + T_TAG ? MC_SECURE_OK : MC_SECURE_MALFORMED;
}

int mc_resume_ticket_open(const uint8_t key[32], const uint8_t ticket[MC_RESUME_TICKET_SIZE],
                          mc_resume_ticket_info *info)
{
    memset(info, 0, sizeof *info);
    if (mc_secure_init() != 0)
        return MC_SECURE_NO_MEMORY;
    if (ticket[0] != MC_RESUME_TICKET_VERSION)
        return MC_SECURE_AUTH;
    uint8_t plain[T_PLAIN];
    unsigned long long plen = 0;
    if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &plen, NULL, ticket + 1 + T_NONCE,
                                                   T_PLAIN + T_TAG, ticket, 1, ticket + 1,
                                                   key) != 0 ||
        plen != T_PLAIN)
        return MC_SECURE_AUTH;
    int rc = MC_SECURE_OK;
    size_t nl = plain[48];
    info->entity_id = (int32_t)get_u32(plain);
    info->serial = get_u32(plain + 4);
    info->expires_ms = get_u64(plain + 8);
    memcpy(info->resume_key, plain + 16, MC_RESUME_KEY_BYTES);
    if (nl < 1 || nl > MC_LOGIN_NAME_MAX || info->entity_id <= 0 || info->serial == 0 ||
        !sodium_is_zero(plain + 49 + nl, MC_LOGIN_NAME_MAX - nl))
        rc = MC_SECURE_MALFORMED;
    else {
        memcpy(info->name, plain + 49, nl);
        info->name[nl] = '\0';
        if (!mc_login_name_ok(info->name, nl))
            rc = MC_SECURE_MALFORMED;
    }
    sodium_memzero(plain, sizeof plain);
    if (rc != MC_SECURE_OK)
        sodium_memzero(info, sizeof *info);
    return rc;
}

/* The proof of a RESUME: BLAKE2b-128 keyed by the resume key over "mc-resume\0" and bytes
 * 0..243 (everything before the proof: type, version, nonce, key, session id, cookie,
 * ticket). */
static void proof_of(const uint8_t key[MC_RESUME_KEY_BYTES], const uint8_t *pkt,
                     uint8_t out[MC_RESUME_PROOF_BYTES])
{
    static const uint8_t label[10] = "mc-resume";
    crypto_generichash_state st;
    crypto_generichash_init(&st, key, MC_RESUME_KEY_BYTES, MC_RESUME_PROOF_BYTES);
    crypto_generichash_update(&st, label, sizeof label);
    crypto_generichash_update(&st, pkt, OFF_PROOF);
    crypto_generichash_final(&st, out, MC_RESUME_PROOF_BYTES);
}

/* The key a RESUME_REPLY is sealed with: BLAKE2b-256 keyed by the resume key over
 * "mc-resume-reply\0", the client nonce and the client's ephemeral key. */
static void reply_key(const uint8_t key[MC_RESUME_KEY_BYTES], const uint8_t nonce[8],
                      const uint8_t pk[32], uint8_t out[32])
{
    static const uint8_t label[16] = "mc-resume-reply";
    crypto_generichash_state st;
    crypto_generichash_init(&st, key, MC_RESUME_KEY_BYTES, 32);
    crypto_generichash_update(&st, label, sizeof label);
    crypto_generichash_update(&st, nonce, 8);
    crypto_generichash_update(&st, pk, 32);
    crypto_generichash_final(&st, out, 32);
}

int mc_resume_client_request(const mc_secure_client *c, const uint8_t ticket[MC_RESUME_TICKET_SIZE],
                             const uint8_t resume_key[MC_RESUME_KEY_BYTES],
                             uint8_t out[MC_RESUME_SIZE])
{
    if (c->state != MC_SECURE_CLIENT_CONNECT || c->session_id != 0)
        return MC_SECURE_MALFORMED;
    if (mc_secure_init() != 0)
        return MC_SECURE_NO_MEMORY;
    memset(out, 0, MC_RESUME_SIZE);
    out[0] = MC_SECURE_RESUME;
    out[1] = MC_SECURE_VERSION;
    memcpy(out + MC_SECURE_OFF_NONCE, c->nonce, 8);
    memcpy(out + MC_SECURE_OFF_PK, c->pk, 32);
    memcpy(out + MC_SECURE_OFF_COOKIE, c->cookie, MC_SECURE_COOKIE_SIZE);
    memcpy(out + OFF_TICKET, ticket, MC_RESUME_TICKET_SIZE);
    proof_of(resume_key, out, out + OFF_PROOF);
    return MC_SECURE_OK;
}

int mc_resume_server_check(const mc_secure_secret *s, mc_secure_peer from, uint64_t now_ms,
                           const uint8_t *pkt, size_t len, mc_resume_request *out)
{
    memset(out, 0, sizeof *out);
    if (mc_secure_init() != 0)
        return MC_SECURE_NO_MEMORY;
    if (!pkt || len != MC_RESUME_SIZE || pkt[0] != MC_SECURE_RESUME ||
        pkt[1] != MC_SECURE_VERSION || !sodium_is_zero(pkt + MC_SECURE_OFF_SESSION, 8) ||
        !sodium_is_zero(pkt + OFF_PROOF + MC_RESUME_PROOF_BYTES,
                        MC_RESUME_SIZE - OFF_PROOF - MC_RESUME_PROOF_BYTES))
        return MC_SECURE_MALFORMED;
    int ck = mc_secure_cookie_check(s, from, now_ms, pkt);
    if (ck != MC_SECURE_OK)
        return ck;
    memcpy(out->client_nonce, pkt + MC_SECURE_OFF_NONCE, 8);
    memcpy(out->client_pk, pkt + MC_SECURE_OFF_PK, 32);
    return MC_SECURE_OK;
}

int mc_resume_server_open(const uint8_t ticket_key[32], const uint8_t *pkt, size_t len,
                          mc_resume_request *out)
{
    out->opened = false;
    if (!pkt || len != MC_RESUME_SIZE || pkt[0] != MC_SECURE_RESUME)
        return MC_SECURE_MALFORMED;
    int rc = mc_resume_ticket_open(ticket_key, pkt + OFF_TICKET, &out->ticket);
    if (rc != MC_SECURE_OK)
        return MC_SECURE_AUTH;
    uint8_t proof[MC_RESUME_PROOF_BYTES];
    proof_of(out->ticket.resume_key, pkt, proof);
    if (sodium_memcmp(proof, pkt + OFF_PROOF, sizeof proof) != 0) {
        sodium_memzero(&out->ticket, sizeof out->ticket);
        return MC_SECURE_BAD_PROOF;
    }
    out->opened = true;
    return MC_SECURE_OK;
}

int mc_resume_server_reply(const mc_resume_request *req, const mc_login_result *result,
                           uint8_t out[MC_RESUME_REPLY_SIZE])
{
    if (!req->opened || mc_secure_init() != 0)
        return -1;
    uint8_t plain[R_PLAIN] = {0}, key[32];
    plain[0] = (uint8_t)result->status;
    if (result->status == MC_LOGIN_OK) {
        put_u32(plain + 1, result->baseapp_ip);
        plain[5] = (uint8_t)(result->baseapp_port >> 8);
        plain[6] = (uint8_t)result->baseapp_port;
        put_u64(plain + 7, result->session_id);
        memcpy(plain + 15, result->session_key, MC_SECURE_KEY_BYTES);
    }
    out[0] = MC_SECURE_RESUME_REPLY;
    memcpy(out + 1, req->client_nonce, 8);
    randombytes_buf(out + 9, 24);
    reply_key(req->ticket.resume_key, req->client_nonce, req->client_pk, key);
    unsigned long long clen = 0;
    int rc = crypto_aead_xchacha20poly1305_ietf_encrypt(out + 33, &clen, plain, sizeof plain,
                                                        out, 9, NULL, out + 9, key);
    sodium_memzero(plain, sizeof plain);
    sodium_memzero(key, sizeof key);
    return rc == 0 ? 0 : -1;
}

int mc_resume_client_reply(const mc_secure_client *c,
                           const uint8_t resume_key[MC_RESUME_KEY_BYTES], const uint8_t *pkt,
                           size_t len, mc_login_result *out)
{
    memset(out, 0, sizeof *out);
    if (!pkt || len != MC_RESUME_REPLY_SIZE || pkt[0] != MC_SECURE_RESUME_REPLY)
        return MC_SECURE_MALFORMED;
    if (sodium_memcmp(pkt + 1, c->nonce, 8) != 0)
        return MC_SECURE_UNEXPECTED;
    uint8_t plain[R_PLAIN], key[32];
    reply_key(resume_key, c->nonce, c->pk, key);
    unsigned long long plen = 0;
    int ok = crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &plen, NULL, pkt + 33,
                                                        R_PLAIN + 16, pkt, 9, pkt + 9, key) == 0;
    sodium_memzero(key, sizeof key);
    if (!ok || plen != R_PLAIN)
        return MC_SECURE_AUTH;
    out->status = plain[0];
    if (out->status == MC_LOGIN_OK) {
        out->baseapp_ip = get_u32(plain + 1);
        out->baseapp_port = (uint16_t)(plain[5] << 8 | plain[6]);
        out->session_id = get_u64(plain + 7);
        memcpy(out->session_key, plain + 15, MC_SECURE_KEY_BYTES);
    }
    sodium_memzero(plain, sizeof plain);
    return out->status < MC_LOGIN_STATUS_COUNT ? MC_SECURE_OK : MC_SECURE_MALFORMED;
}

void mc_resume_request_clear(mc_resume_request *r) { sodium_memzero(r, sizeof *r); }
