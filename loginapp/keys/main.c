/* mc-login-keys: make a cluster's login key pair (docs/tools/mc-login-keys.md).
 *
 *   mc-login-keys DIR [--force]
 *
 * Writes DIR/login.key (the secret key, 64 hex digits, mode 0600, created exclusively) and
 * DIR/login.pub (the public key, 64 hex digits, mode 0644) and prints the public key. An
 * existing pair is kept unless --force. Exit 0 done, 1 failure (one line why), 2 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_file(const char *path, const char *text, mode_t mode, bool force)
{
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);
    int fd = open(path, flags, mode);
    if (fd < 0) {
        fprintf(stderr, "mc-login-keys: cannot create %s: %s%s\n", path, strerror(errno),
                errno == EEXIST ? " (use --force to replace the pair)" : "");
        return -1;
    }
    size_t n = strlen(text);
    bool ok = write(fd, text, n) == (ssize_t)n && fchmod(fd, mode) == 0 && fsync(fd) == 0;
    if (close(fd) != 0)
        ok = false;
    if (!ok) {
        fprintf(stderr, "mc-login-keys: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    bool force = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: mc-login-keys DIR [--force]\n"
                   "Makes the cluster's login key pair: DIR/login.key (secret, mode 0600) and\n"
                   "DIR/login.pub (public); prints the public key (64 hex digits) that clients\n"
                   "are given. An existing pair is kept unless --force.\n");
            return 0;
        } else if (!strcmp(argv[i], "--force")) {
            force = true;
        } else if (argv[i][0] == '-' || dir) {
            fprintf(stderr, "mc-login-keys: unexpected argument '%s' (see --help)\n", argv[i]);
            return 2;
        } else {
            dir = argv[i];
        }
    }
    if (!dir) {
        fprintf(stderr, "mc-login-keys: which folder? (usage: mc-login-keys DIR [--force])\n");
        return 2;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "mc-login-keys: %s is not a folder\n", dir);
        return 1;
    }
    if (sodium_init() < 0) {
        fprintf(stderr, "mc-login-keys: libsodium cannot start\n");
        return 1;
    }
    char kpath[4096], ppath[4096];
    snprintf(kpath, sizeof kpath, "%s/login.key", dir);
    snprintf(ppath, sizeof ppath, "%s/login.pub", dir);
    if (!force && (access(kpath, F_OK) == 0 || access(ppath, F_OK) == 0)) {
        fprintf(stderr, "mc-login-keys: %s already holds a key pair (use --force to replace "
                        "it)\n", dir);
        return 1;
    }
    unsigned char pk[crypto_box_PUBLICKEYBYTES], sk[crypto_box_SECRETKEYBYTES];
    crypto_box_keypair(pk, sk);
    char skhex[2 * sizeof sk + 2], pkhex[2 * sizeof pk + 2];
    sodium_bin2hex(skhex, sizeof skhex - 1, sk, sizeof sk);
    sodium_bin2hex(pkhex, sizeof pkhex - 1, pk, sizeof pk);
    strcat(skhex, "\n");
    strcat(pkhex, "\n");
    sodium_memzero(sk, sizeof sk);
    if (force) {
        unlink(kpath); /* created anew with mode 0600, never reusing a looser file */
    }
    int rc = write_file(kpath, skhex, 0600, false);
    sodium_memzero(skhex, sizeof skhex);
    if (rc != 0 || write_file(ppath, pkhex, 0644, force) != 0)
        return 1;
    fputs(pkhex, stdout);
    return 0;
}
