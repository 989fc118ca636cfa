/* The defc binary: --check on the example game and on bad definitions, generation, usage. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/defs.h"
#include "defs_test_util.h"

/* Run a shell command, collect stdout+stderr, return the exit status (-1 if abnormal). */
static int run(const char *cmd, char *out, size_t outlen)
{
    char full[8192];
    snprintf(full, sizeof(full), "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *bin(void)
{
    const char *b = getenv("MC_BIN_DIR");
    return b ? b : "build/bin";
}

START_TEST(check_example)
{
    char res[4096], cmd[8192], err[4096];
    char out[1 << 14];
    snprintf(cmd, sizeof(cmd), "%s/defc --check --res %s", bin(), tu_example_res(res, sizeof(res)));
    ck_assert_int_eq(run(cmd, out, sizeof(out)), 0);
    mc_entity_defs *d = mc_defs_load(res, err, sizeof(err));
    ck_assert_ptr_nonnull(d);
    char want[128];
    snprintf(want, sizeof(want), "digest: %s\n", mc_defs_digest_hex(d));
    ck_assert_msg(strstr(out, want) != NULL, "no digest line in:\n%s", out);
    ck_assert_ptr_nonnull(strstr(out, "entity types: 3"));
    ck_assert_ptr_nonnull(strstr(out, "type 1 Avatar (client-server) implements Timed, Tagged"));
    ck_assert_ptr_nonnull(strstr(out, "cell methods: 5 (exposed 2)"));
    ck_assert_ptr_nonnull(strstr(out, "chat(text: UNICODE_STRING) exposed ALL_CLIENTS #0"));
    mc_defs_free(d);
}
END_TEST

START_TEST(check_bad_defs)
{
    char *dir = tu_mkdtemp();
    tu_write(dir, "entities.xml", "<root>\n<E/>\n</root>\n");
    tu_write(dir, "entity_defs/E.def",
             "<root>\n<Properties>\n<a> <Type> PYTHON </Type> <Flags> BASE </Flags> </a>\n"
             "<b> <Type> INT8 </Type> </b>\n</Properties>\n</root>\n");
    char cmd[8192];
    char out[1 << 14];
    snprintf(cmd, sizeof(cmd), "%s/defc --check --res %s", bin(), dir);
    ck_assert_int_eq(run(cmd, out, sizeof(out)), 2);
    ck_assert_ptr_nonnull(strstr(out, "E.def:3: <Type>: type PYTHON is not supported"));
    ck_assert_ptr_nonnull(strstr(out, "E.def:4: <b>: property needs <Flags>"));
    ck_assert_ptr_nonnull(strstr(out, "definitions refused"));
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(generate_and_usage)
{
    char res[4096], cmd[8192], path[8192];
    char out[1 << 14];
    char *dir = tu_mkdtemp();
    snprintf(cmd, sizeof(cmd), "%s/defc --res %s --out %s/gen --module demo", bin(),
             tu_example_res(res, sizeof(res)), dir);
    ck_assert_int_eq(run(cmd, out, sizeof(out)), 0);
    static const char *const files[] = {"Account.h", "Account.c", "Avatar.h", "Avatar.c",
                                        "Space.h",   "Space.c",   "game.h",   "game_module.c",
                                        "game_types.c"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/gen/%s", dir, files[i]);
        char *text = tu_read(path);
        ck_assert_msg(text != NULL, "missing %s", files[i]);
        free(text);
    }
    snprintf(path, sizeof(path), "%s/gen/Avatar.h", dir);
    char *h = tu_read(path);
    ck_assert_ptr_nonnull(strstr(h, "int send_Avatar_cell_chat(const mc_call_sink *defc_sink, "
                                    "const mc_mailbox_ref *defc_to, const char *text);"));
    ck_assert_ptr_nonnull(strstr(h, "int Avatar_base_setAccount(const mc_call_ctx *call, "
                                    "Avatar_base *self, mc_mailbox_ref account);"));
    ck_assert_ptr_nonnull(strstr(h, "    int32_t health; /* INT32 OWN_CLIENT */"));
    free(h);
    snprintf(path, sizeof(path), "%s/gen/game_module.c", dir);
    char *m = tu_read(path);
    ck_assert_ptr_nonnull(strstr(m, ".name = \"demo\""));
    free(m);
    tu_rmtree(dir);
    free(dir);
    snprintf(cmd, sizeof(cmd), "%s/defc --check", bin());
    ck_assert_int_eq(run(cmd, out, sizeof(out)), 1);
    ck_assert_ptr_nonnull(strstr(out, "need --res DIR"));
    snprintf(cmd, sizeof(cmd), "%s/defc --help", bin());
    ck_assert_int_eq(run(cmd, out, sizeof(out)), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: defc"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("defc");
    TCase *tc = tcase_create("defc");
    tcase_add_test(tc, check_example);
    tcase_add_test(tc, check_bad_defs);
    tcase_add_test(tc, generate_and_usage);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
