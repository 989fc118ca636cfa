/* Established secure channels: DATA packets and the replay window (secure/session.h). */
#include "secure/session.h"

#include <sodium.h>
#include <string.h>

#define WORDS (MC_SECURE_REPLAY_WINDOW / 64u)

int mc_secure_replay_check(const mc_secure_replay *r, uint64_t n)
{
    if (n == 0)
        return MC_SECURE_OPEN_MALFORMED; /* numbers start at 1 */
    if (n > r->highest)
        return MC_SECURE_OK;
    uint64_t back = r->highest - n;
    if (back >= MC_SECURE_REPLAY_WINDOW)
        return MC_SECURE_OPEN_TOO_OLD;
    return r->bits[back / 64] >> (back % 64) & 1u ? MC_SECURE_OPEN_REPLAY : MC_SECURE_OK;
}

/* Shift the window up by `by` numbers (bit k moves to k + by). */
static void shift(mc_secure_replay *r, uint64_t by)
{
    if (by >= MC_SECURE_REPLAY_WINDOW) {
        memset(r->bits, 0, sizeof r->bits);
        return;
    }
    unsigned words = (unsigned)(by / 64), bits = (unsigned)(by % 64);
    for (int i = (int)WORDS - 1; i >= 0; i--) {
        uint64_t v = 0;
        int src = i - (int)words;
        if (src >= 0) {
            v = r->bits[src] << bits;
            if (bits && src > 0)
                v |= r->bits[src - 1] >> (64 - bits);
        }
        r->bits[i] = v;
    }
}

void mc_secure_replay_mark(mc_secure_replay *r, uint64_t n)
{
    if (n > r->highest) {
        shift(r, n - r->highest);
        r->highest = n;
    }
    uint64_t back = r->highest - n;
    if (back < MC_SECURE_REPLAY_WINDOW)
        r->bits[back / 64] |= (uint64_t)1 << (back % 64);
}

void mc_secure_session_init(mc_secure_session *s, const mc_secure_keys *keys, bool server)
{
    memset(s, 0, sizeof *s);
    memcpy(s->tx_key, server ? keys->s2c : keys->c2s, MC_SECURE_KEY_BYTES);
    memcpy(s->rx_key, server ? keys->c2s : keys->s2c, MC_SECURE_KEY_BYTES);
    s->next_out = 1;
}

void mc_secure_session_clear(mc_secure_session *s)
{
    sodium_memzero(s, sizeof *s);
}

static void nonce_of(uint64_t n, uint8_t nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES])
{
    memset(nonce, 0, crypto_aead_chacha20poly1305_IETF_NPUBBYTES);
    for (int i = 0; i < 8; i++)
        nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES - 1 - i] = (uint8_t)(n >> (8 * i));
}

int mc_secure_seal(mc_secure_session *s, const uint8_t *plain, size_t len, uint8_t *out,
                   size_t outcap, size_t *outlen)
{
    if (outcap < MC_SECURE_DATA_OVERHEAD || len > outcap - MC_SECURE_DATA_OVERHEAD)
        return MC_SECURE_OPEN_MALFORMED;
    if (s->next_out == UINT64_MAX)
        return MC_SECURE_SEAL_EXHAUSTED;
    uint64_t n = s->next_out++;
    out[0] = MC_SECURE_DATA;
    for (int i = 0; i < 8; i++)
        out[1 + i] = (uint8_t)(n >> (56 - 8 * i));
    uint8_t nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];
    nonce_of(n, nonce);
    unsigned long long clen = 0;
    crypto_aead_chacha20poly1305_ietf_encrypt(out + 9, &clen, len ? plain : (const uint8_t *)"",
                                              len, out, 9, NULL, nonce, s->tx_key);
    *outlen = 9 + (size_t)clen;
    s->sealed++;
    return MC_SECURE_OK;
}

int mc_secure_open(mc_secure_session *s, const uint8_t *pkt, size_t len, uint8_t *plain,
                   size_t plaincap, size_t *plainlen)
{
    if (!pkt || len < MC_SECURE_DATA_OVERHEAD || pkt[0] != MC_SECURE_DATA ||
        len - MC_SECURE_DATA_OVERHEAD > plaincap) {
        s->malformed++;
        return MC_SECURE_OPEN_MALFORMED;
    }
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n = n << 8 | pkt[1 + i];
    int rc = mc_secure_replay_check(&s->rx, n);
    if (rc != MC_SECURE_OK) {
        /* cheap refusals first; a forged number is refused here or by the tag below, and
         * nothing is marked until the tag verified */
        if (rc == MC_SECURE_OPEN_REPLAY)
            s->replays++;
        else if (rc == MC_SECURE_OPEN_TOO_OLD)
            s->too_old++;
        else
            s->malformed++;
        return rc;
    }
    uint8_t nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];
    nonce_of(n, nonce);
    unsigned long long mlen = 0;
    if (crypto_aead_chacha20poly1305_ietf_decrypt(plain, &mlen, NULL, pkt + 9, len - 9, pkt, 9,
                                                  nonce, s->rx_key) != 0) {
        s->auth_failures++;
        return MC_SECURE_OPEN_AUTH;
    }
    mc_secure_replay_mark(&s->rx, n);
    *plainlen = (size_t)mlen;
    s->opened++;
    return MC_SECURE_OK;
}
