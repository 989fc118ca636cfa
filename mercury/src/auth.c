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

_Static_assert(sizeof(crypto_generichash_state) <= sizeof(((mc_auth *)0)->state),
               "mc_auth must hold a BLAKE2b state");

/* What the packet key is derived with: the secret may one day key other things too. */
static const char kdf_context[] = "mercury internal packet auth v1";

int mc_auth_init(mc_auth *a, const uint8_t secret[MC_AUTH_SECRET_BYTES])
{
    memset(a, 0, sizeof *a);
    if (sodium_init() < 0)
        return -1;
    uint8_t key[crypto_generichash_KEYBYTES];
    crypto_generichash(key, sizeof key, (const unsigned char *)kdf_context,
                       sizeof kdf_context - 1, secret, MC_AUTH_SECRET_BYTES);
    crypto_generichash_state *st = (crypto_generichash_state *)(void *)a->state;
    int rc = crypto_generichash_init(st, key, sizeof key, MC_AUTH_TAG_BYTES);
    sodium_memzero(key, sizeof key);
    if (rc != 0)
        return -1;
    a->ready = true;
    return 0;
}

void mc_auth_clear(mc_auth *a)
{
    sodium_memzero(a, sizeof *a);
}

void mc_auth_tag(const mc_auth *a, const uint8_t *data, size_t len,
                 uint8_t tag[MC_AUTH_TAG_BYTES])
{
    crypto_generichash_state st;
    memcpy(&st, a->state, sizeof st);
    crypto_generichash_update(&st, data, len);
    crypto_generichash_final(&st, tag, MC_AUTH_TAG_BYTES);
}

bool mc_auth_check(const mc_auth *a, const uint8_t *datagram, size_t len, size_t *packet_len)
{
    if (len < MC_AUTH_TAG_BYTES)
        return false;
    size_t n = len - MC_AUTH_TAG_BYTES;
    uint8_t tag[MC_AUTH_TAG_BYTES];
    mc_auth_tag(a, datagram, n, tag);
    if (crypto_verify_16(tag, datagram + n) != 0)
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
