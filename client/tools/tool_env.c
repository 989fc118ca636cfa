/* Finding the cluster, the defs and the clock for mc-client and bots (tool_env.h). */
#define _POSIX_C_SOURCE 200809L
#include "tool_env.h"

#include "common/cluster_file.h"

#include <errno.h>
#include <libgen.h>
#include <sys/stat.h>
#include <limits.h>
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t tool_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int tool_parse_double(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int copy(char *dst, size_t cap, const char *src, const char *what, char *err,
                size_t errlen)
{
    if (strlen(src) >= cap) {
        snprintf(err, errlen, "%s '%.60s...' is too long", what, src);
        return -1;
    }
    snprintf(dst, cap, "%s", src);
    return 0;
}

/* <repo>/defs of the checkout the binary was built in (<repo>/<build>/bin/<tool>). */
static void default_res(char *out, size_t outlen)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(out, outlen, "defs");
        return;
    }
    exe[n] = '\0';
    snprintf(out, outlen, "%s/../../defs", dirname(exe));
    struct stat sb;
    if (stat(out, &sb) != 0 || !S_ISDIR(sb.st_mode))
        snprintf(out, outlen, "%s/defs", MC_SOURCE_ROOT); /* built outside the checkout */
}

int tool_cluster_find(tool_cluster *c, const char *loginapp, const char *public_key_hex,
                      const char *manager, const char *res, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    char path[PATH_MAX] = "", key[200] = "";
    bool have_file = mc_cluster_file_find(path, sizeof path);
    if (loginapp) {
        if (copy(c->loginapp, sizeof c->loginapp, loginapp, "--loginapp", err, errlen) != 0)
            return -1;
        snprintf(c->source, sizeof c->source, "--loginapp");
    } else if (have_file) {
        int r = mc_cluster_file_get(path, "loginapp", c->loginapp, sizeof c->loginapp, err,
                                    errlen);
        if (r < 0)
            return -1;
        if (r == 0) {
            snprintf(err, errlen, "the cluster file %s names no loginapp (give --loginapp)",
                     path);
            return -1;
        }
        snprintf(c->source, sizeof c->source, "the cluster file %s", path);
    } else {
        snprintf(err, errlen, "no cluster file ($MC_RUN_DIR/cluster.conf or <repo>/run/"
                              "cluster.conf: is a cluster up?) and no --loginapp");
        return -1;
    }
    if (public_key_hex) {
        if (copy(key, sizeof key, public_key_hex, "--public-key", err, errlen) != 0)
            return -1;
    } else if (have_file) {
        int r = mc_cluster_file_get(path, "loginPublicKey", key, sizeof key, err, errlen);
        if (r < 0)
            return -1;
        if (r == 0) {
            snprintf(err, errlen, "the cluster file %s has no loginPublicKey (give "
                                  "--public-key)", path);
            return -1;
        }
    } else {
        snprintf(err, errlen, "no login public key: give --public-key HEX (the cluster file "
                              "has it as loginPublicKey)");
        return -1;
    }
    size_t got = 0;
    if (strlen(key) != 2 * MC_LOGIN_PUBLIC_KEY_BYTES ||
        sodium_hex2bin(c->public_key, sizeof c->public_key, key, strlen(key), NULL, &got,
                       NULL) != 0 ||
        got != MC_LOGIN_PUBLIC_KEY_BYTES) {
        snprintf(err, errlen, "the login public key must be %d hex digits",
                 2 * MC_LOGIN_PUBLIC_KEY_BYTES);
        return -1;
    }
    if (manager) {
        if (copy(c->manager, sizeof c->manager, manager, "--manager", err, errlen) != 0)
            return -1;
    } else if (getenv("MC_MANAGER") && *getenv("MC_MANAGER")) {
        if (copy(c->manager, sizeof c->manager, getenv("MC_MANAGER"), "MC_MANAGER", err,
                 errlen) != 0)
            return -1;
    } else if (have_file &&
               mc_cluster_file_get(path, "manager", c->manager, sizeof c->manager, err, errlen) <
                   0) {
        return -1;
    }
    if (res)
        return copy(c->res, sizeof c->res, res, "--res", err, errlen);
    /* the defs the cluster runs (deploy/cluster writes them as `res`), else the checkout's */
    if (have_file) {
        int r = mc_cluster_file_get(path, "res", c->res, sizeof c->res, err, errlen);
        if (r < 0)
            return -1;
        if (r > 0)
            return 0;
    }
    default_res(c->res, sizeof c->res);
    return 0;
}

mc_entity_defs *tool_defs_load(const tool_cluster *c, uint8_t digest[MC_LOGIN_DIGEST_BYTES],
                               char *err, size_t errlen)
{
    char why[2048];
    mc_entity_defs *d = mc_defs_load(c->res, why, sizeof why);
    if (!d) {
        snprintf(err, errlen, "cannot load the defs of %s (--res): %s", c->res, why);
        return NULL;
    }
    const char *hex = mc_defs_digest_hex(d);
    size_t got = 0;
    if (sodium_hex2bin(digest, MC_LOGIN_DIGEST_BYTES, hex, strlen(hex), NULL, &got, NULL) != 0 ||
        got != MC_LOGIN_DIGEST_BYTES) {
        snprintf(err, errlen, "the defs digest '%s' is not %d bytes of hex", hex,
                 MC_LOGIN_DIGEST_BYTES);
        mc_defs_free(d);
        return NULL;
    }
    return d;
}

int tool_read_password(const char *path, char *out, size_t outlen, char *err, size_t errlen)
{
    if (outlen < 2)
        return -1;
    if (strcmp(path, "-") == 0) {
        /* byte by byte: what follows the first line stays unread for the commands */
        size_t n = 0;
        char ch;
        ssize_t r;
        while ((r = read(0, &ch, 1)) == 1 && ch != '\n') {
            if (n + 1 >= outlen) {
                snprintf(err, errlen, "the password on standard input is too long");
                return -1;
            }
            out[n++] = ch;
        }
        out[n] = '\0';
        if (r < 0 || (r == 0 && n == 0)) {
            snprintf(err, errlen, "no password on standard input");
            return -1;
        }
        out[strcspn(out, "\r")] = '\0';
        return 0;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read the password file %s: %s", path, strerror(errno));
        return -1;
    }
    bool ok = fgets(out, (int)outlen, f) != NULL;
    fclose(f);
    if (!ok) {
        snprintf(err, errlen, "no password in %s", path);
        return -1;
    }
    out[strcspn(out, "\r\n")] = '\0';
    return 0;
}
