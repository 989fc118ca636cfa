/* mc-login-keys makes a matching key pair with the secret readable by its owner only, keeps
 * an existing pair unless --force, and refuses bad usage with its exit codes. Runs the real
 * binary. */
#include "check_main.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int run(const char *args, char *out, size_t n)
{
    char cmd[8192];
    const char *bin = getenv("MC_BIN_DIR");
    snprintf(cmd, sizeof cmd, "%s/mc-login-keys %s 2>&1", bin ? bin : "build/bin", args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t k = fread(out, 1, n - 1, p);
    out[k] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void read_hex(const char *path, unsigned char *bin, size_t len)
{
    char text[256] = "";
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(text, sizeof text, f));
    fclose(f);
    text[strcspn(text, "\n")] = '\0';
    size_t got = 0;
    ck_assert_int_eq(sodium_hex2bin(bin, len, text, strlen(text), NULL, &got, NULL), 0);
    ck_assert_uint_eq(got, len);
}

START_TEST(makes_a_private_matching_pair_once)
{
    ck_assert_int_ge(sodium_init(), 0);
    char dir[] = "/tmp/mc-login-keys-XXXXXX", out[4096], args[256], kpath[300], ppath[300];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(args, sizeof args, "%s", dir);
    ck_assert_int_eq(run(args, out, sizeof out), 0);
    snprintf(kpath, sizeof kpath, "%s/login.key", dir);
    snprintf(ppath, sizeof ppath, "%s/login.pub", dir);
    struct stat st;
    ck_assert_int_eq(stat(kpath, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    unsigned char sk[32], pk[32], derived[32];
    read_hex(kpath, sk, 32);
    read_hex(ppath, pk, 32);
    ck_assert_int_eq(crypto_scalarmult_base(derived, sk), 0);
    ck_assert_mem_eq(derived, pk, 32);
    char pkhex[65];
    sodium_bin2hex(pkhex, sizeof pkhex, pk, 32);
    ck_assert_msg(strstr(out, pkhex), "printed %s", out);
    /* again: kept, exit 1 with a reason; --force: a new pair */
    ck_assert_int_eq(run(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "--force"), "%s", out);
    unsigned char pk2[32];
    read_hex(ppath, pk2, 32);
    ck_assert_mem_eq(pk2, pk, 32);
    snprintf(args, sizeof args, "%s --force", dir);
    ck_assert_int_eq(run(args, out, sizeof out), 0);
    read_hex(ppath, pk2, 32);
    ck_assert(memcmp(pk2, pk, 32) != 0);
    ck_assert_int_eq(stat(kpath, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    /* bad usage and a missing folder */
    ck_assert_int_eq(run("", out, sizeof out), 2);
    ck_assert_int_eq(run("--bogus", out, sizeof out), 2);
    ck_assert_int_eq(run("/nonexistent/mc-keys", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "not a folder"), "%s", out);
    unlink(kpath);
    unlink(ppath);
    rmdir(dir);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("login_keys");
    TCase *tc = tcase_create("keys");
    tcase_add_test(tc, makes_a_private_matching_pair_once);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
