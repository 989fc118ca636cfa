/* Packet authentication with the cluster secret (mercury/auth.h). */
#include "mercury/auth.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(crypto_aead_aes256gcm_state) <= sizeof(((mc_auth *)0)->aes),
               "mc_auth must hold an AES-GCM state");
_Static_assert(crypto_aead_aes256gcm_NPUBBYTES == MC_AUTH_NONCE_BYTES &&
                   crypto_aead_chacha20poly1305_IETF_NPUBBYTES == MC_AUTH_NONCE_BYTES,
               "12-byte nonces");
_Static_assert(crypto_aead_aes256gcm_ABYTES == MC_AUTH_TAG_BYTES &&
                   crypto_aead_chacha20poly1305_IETF_ABYTES == MC_AUTH_TAG_BYTES,
               "16-byte tags");

#define AES_BIT 0x80u /* in nonce byte 0 */

/* What each key is derived with: the secret may one day key other things too. */
static void derive(uint8_t out[32], const char *context, const uint8_t secret[MC_AUTH_SECRET_BYTES])
{
    crypto_generichash(out, 32, (const unsigned char *)context, strlen(context), secret,
                       MC_AUTH_SECRET_BYTES);
}

int mc_auth_init(mc_auth *a, const uint8_t secret[MC_AUTH_SECRET_BYTES], bool portable)
{
    memset(a, 0, sizeof *a);
    if (sodium_init() < 0)
        return -1;
    uint8_t key[32];
    derive(a->chacha, "mercury internal packet auth v1 chacha20poly1305", secret);
    a->aes_available = crypto_aead_aes256gcm_is_available() != 0;
    if (a->aes_available) {
        derive(key, "mercury internal packet auth v1 aes256gcm", secret);
        crypto_aead_aes256gcm_beforenm((crypto_aead_aes256gcm_state *)(void *)a->aes, key);
        sodium_memzero(key, sizeof key);
    }
    a->send_aes = a->aes_available && !portable;
    randombytes_buf(a->salt, sizeof a->salt);
    a->salt[0] = (uint8_t)(a->send_aes ? a->salt[0] | AES_BIT : a->salt[0] & ~AES_BIT);
    randombytes_buf(&a->counter, sizeof a->counter);
    a->ready = true;
    return 0;
}

void mc_auth_clear(mc_auth *a)
{
    sodium_memzero(a, sizeof *a);
}

void mc_auth_seal(mc_auth *a, const uint8_t *data, size_t len,
                  uint8_t trailer[MC_AUTH_OVERHEAD])
{
    uint8_t *nonce = trailer, *tag = trailer + MC_AUTH_NONCE_BYTES;
    memcpy(nonce, a->salt, 4);
    uint64_t c = a->counter++;
    for (int i = 0; i < 8; i++)
        nonce[4 + i] = (uint8_t)(c >> (56 - 8 * i));
    unsigned long long taglen = 0;
    unsigned char none[1] = {0}; /* the empty message (and ciphertext): the packet is the AD */
    if (a->send_aes)
        crypto_aead_aes256gcm_encrypt_detached_afternm(
            none, tag, &taglen, none, 0, data, len, NULL, nonce,
            (const crypto_aead_aes256gcm_state *)(const void *)a->aes);
    else
        crypto_aead_chacha20poly1305_ietf_encrypt_detached(none, tag, &taglen, none, 0, data,
                                                           len, NULL, nonce, a->chacha);
}

bool mc_auth_check(const mc_auth *a, const uint8_t *datagram, size_t len, size_t *packet_len)
{
    if (len < MC_AUTH_OVERHEAD)
        return false;
    size_t n = len - MC_AUTH_OVERHEAD;
    const uint8_t *nonce = datagram + n, *tag = nonce + MC_AUTH_NONCE_BYTES;
    int rc;
    unsigned char none[1] = {0};
    if (nonce[0] & AES_BIT) {
        if (!a->aes_available)
            return false; /* this CPU cannot verify it: the sender should be portable */
        rc = crypto_aead_aes256gcm_decrypt_detached_afternm(
            none, NULL, none, 0, tag, datagram, n, nonce,
            (const crypto_aead_aes256gcm_state *)(const void *)a->aes);
    } else {
        rc = crypto_aead_chacha20poly1305_ietf_decrypt_detached(none, NULL, none, 0, tag,
                                                                datagram, n, nonce, a->chacha);
    }
    if (rc != 0)
        return false;
    *packet_len = n;
    return true;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int mc_auth_load_secret(const char *path, uint8_t secret[MC_AUTH_SECRET_BYTES], char *err,
                        size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open the cluster secret file %s: %s", path,
                 strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "the cluster secret file %s is not a regular file", path);
        close(fd);
        return -1;
    }
    if (sb.st_mode & (S_IRWXG | S_IRWXO)) {
        snprintf(err, errlen,
                 "the cluster secret file %s is readable or writable by others (mode %03o): "
                 "chmod 600 it",
                 path, (unsigned)(sb.st_mode & 0777));
        close(fd);
        return -1;
    }
    char buf[2 * MC_AUTH_SECRET_BYTES + 3];
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    int rc = 0;
    if (n != 2 * MC_AUTH_SECRET_BYTES) {
        rc = -1;
    } else {
        for (size_t i = 0; i < MC_AUTH_SECRET_BYTES; i++) {
            int hi = hexval((unsigned char)buf[2 * i]), lo = hexval((unsigned char)buf[2 * i + 1]);
            if (hi < 0 || lo < 0) {
                rc = -1;
                break;
            }
            secret[i] = (uint8_t)(hi << 4 | lo);
        }
    }
    sodium_memzero(buf, sizeof buf);
    if (rc != 0) {
        sodium_memzero(secret, MC_AUTH_SECRET_BYTES);
        snprintf(err, errlen,
                 "the cluster secret file %s must hold exactly %u hexadecimal characters",
                 path, 2 * MC_AUTH_SECRET_BYTES);
    }
    return rc;
}

const char *mc_auth_secret_file(const char *given)
{
    if (given && *given)
        return given;
    const char *env = getenv("MC_SECRET_FILE");
    return env && *env ? env : NULL;
}

void mc_auth_wipe_secret(uint8_t secret[MC_AUTH_SECRET_BYTES])
{
    sodium_memzero(secret, MC_AUTH_SECRET_BYTES);
}

int mc_auth_make_secret_file(const char *path, char *err, size_t errlen)
{
    if (sodium_init() < 0) {
        snprintf(err, errlen, "libsodium did not start");
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    uint8_t secret[MC_AUTH_SECRET_BYTES];
    char hex[2 * MC_AUTH_SECRET_BYTES + 2];
    randombytes_buf(secret, sizeof secret);
    sodium_bin2hex(hex, sizeof hex - 1, secret, sizeof secret);
    size_t n = strlen(hex);
    hex[n++] = '\n';
    bool ok = write(fd, hex, n) == (ssize_t)n;
    sodium_memzero(secret, sizeof secret);
    sodium_memzero(hex, sizeof hex);
    if (close(fd) != 0 || !ok) {
        snprintf(err, errlen, "cannot write %s", path);
        unlink(path);
        return -1;
    }
    return 0;
}
