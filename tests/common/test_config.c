/* Configuration: defaults, file, command line, help, and every refusal. */
#include "common/config.h"
#include "common/log.h"

#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const mc_option OPTIONS[] = {
    {"port", MC_OPT_UINT, "20013", "UDP port to bind"},
    {"name", MC_OPT_STRING, "baseapp", "process name"},
    {"offset", MC_OPT_INT, "-5", "signed value"},
    {"tick-rate", MC_OPT_FLOAT, "10", "ticks per second"},
    {"verbose", MC_OPT_BOOL, NULL, "log more"},
    {"dir", MC_OPT_STRING, NULL, "a directory"},
};
#define NOPT (sizeof OPTIONS / sizeof OPTIONS[0])

static mc_config *cfg;
static char err[512];

static void setup(void)
{
    cfg = mc_config_new("testprog", "A test program.", OPTIONS, NOPT);
    ck_assert_ptr_nonnull(cfg);
    err[0] = '\0';
}

static void teardown(void) { mc_config_free(cfg); }

static mc_config_status parse(int argc, const char **argv)
{
    return mc_config_parse_args(cfg, argc, (char **)argv, err, sizeof err);
}

static char *write_temp(const char *content)
{
    char *path = strdup("/tmp/mc_config_test_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
    close(fd);
    return path;
}

START_TEST(defaults_apply)
{
    const char *argv[] = {"prog"};
    ck_assert_int_eq(parse(1, argv), MC_CONFIG_OK);
    ck_assert_uint_eq(mc_config_get_uint(cfg, "port"), 20013);
    ck_assert_str_eq(mc_config_get_string(cfg, "name"), "baseapp");
    ck_assert_int_eq(mc_config_get_int(cfg, "offset"), -5);
    ck_assert_double_eq(mc_config_get_float(cfg, "tick-rate"), 10.0);
    ck_assert(!mc_config_get_bool(cfg, "verbose"));
    ck_assert_str_eq(mc_config_get_string(cfg, "dir"), "");
    ck_assert_str_eq(mc_config_get_text(cfg, "verbose"), "false");
    ck_assert_uint_eq(mc_config_option_count(cfg), NOPT);
    ck_assert_str_eq(mc_config_option_at(cfg, 0)->name, "port");
    ck_assert_ptr_null(mc_config_option_at(cfg, NOPT));
}
END_TEST

START_TEST(command_line_forms)
{
    const char *argv[] = {"prog", "--port", "9000", "--name=cellapp02", "--verbose",
                          "--offset", "-12", "--tick-rate=2.5", "pos1", "--", "--not-an-option"};
    ck_assert_int_eq(parse(11, argv), MC_CONFIG_OK);
    ck_assert_uint_eq(mc_config_get_uint(cfg, "port"), 9000);
    ck_assert_str_eq(mc_config_get_string(cfg, "name"), "cellapp02");
    ck_assert(mc_config_get_bool(cfg, "verbose"));
    ck_assert_int_eq(mc_config_get_int(cfg, "offset"), -12);
    ck_assert_double_eq(mc_config_get_float(cfg, "tick-rate"), 2.5);
    ck_assert_uint_eq(mc_config_positional_count(cfg), 2);
    ck_assert_str_eq(mc_config_positional(cfg, 0), "pos1");
    ck_assert_str_eq(mc_config_positional(cfg, 1), "--not-an-option");
    ck_assert_ptr_null(mc_config_positional(cfg, 2));
}
END_TEST

START_TEST(bool_negation_and_explicit)
{
    const char *argv[] = {"prog", "--verbose", "--no-verbose"};
    ck_assert_int_eq(parse(3, argv), MC_CONFIG_OK);
    ck_assert(!mc_config_get_bool(cfg, "verbose"));
    const char *argv2[] = {"prog", "--verbose=yes"};
    ck_assert_int_eq(parse(2, argv2), MC_CONFIG_OK);
    ck_assert(mc_config_get_bool(cfg, "verbose"));
    const char *argv3[] = {"prog", "--verbose=maybe"};
    ck_assert_int_eq(parse(2, argv3), MC_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "--verbose"));
}
END_TEST

START_TEST(command_line_refusals)
{
    const char *unknown[] = {"prog", "--colour", "red"};
    ck_assert_int_eq(parse(3, unknown), MC_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "unknown option --colour"));
    const char *missing[] = {"prog", "--port"};
    ck_assert_int_eq(parse(2, missing), MC_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "needs a value"));
    const char *bad_uint[] = {"prog", "--port", "-1"};
    ck_assert_int_eq(parse(3, bad_uint), MC_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "--port"));
    const char *junk[] = {"prog", "--port=12x"};
    ck_assert_int_eq(parse(2, junk), MC_CONFIG_ERROR);
    const char *bad_int[] = {"prog", "--offset", "1.5"};
    ck_assert_int_eq(parse(3, bad_int), MC_CONFIG_ERROR);
    const char *bad_float[] = {"prog", "--tick-rate", "nan"};
    ck_assert_int_eq(parse(3, bad_float), MC_CONFIG_ERROR);
    const char *overflow[] = {"prog", "--port", "99999999999999999999999"};
    ck_assert_int_eq(parse(3, overflow), MC_CONFIG_ERROR);
    const char *single_dash[] = {"prog", "-x"};
    ck_assert_int_eq(parse(2, single_dash), MC_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "-x"));
    const char *no_neg_string[] = {"prog", "--no-name"};
    ck_assert_int_eq(parse(2, no_neg_string), MC_CONFIG_ERROR);
    const char *config_missing[] = {"prog", "--config"};
    ck_assert_int_eq(parse(2, config_missing), MC_CONFIG_ERROR);
    const char *config_absent[] = {"prog", "--config", "/nonexistent/mc.conf"};
    ck_assert_int_eq(parse(3, config_absent), MC_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/mc.conf"));
    /* A refused value leaves the previous one. */
    ck_assert_uint_eq(mc_config_get_uint(cfg, "port"), 20013);
}
END_TEST

START_TEST(file_then_command_line)
{
    char *path = write_temp("# a comment\n\n  port = 7000  \nname=fromfile\n"
                            "verbose = on\ndir = /var/lib/x y\n");
    const char *argv[] = {"prog", "--port", "7100", "--config", path};
    ck_assert_int_eq(parse(5, argv), MC_CONFIG_OK);
    ck_assert_uint_eq(mc_config_get_uint(cfg, "port"), 7100); /* command line wins */
    ck_assert_str_eq(mc_config_get_string(cfg, "name"), "fromfile");
    ck_assert(mc_config_get_bool(cfg, "verbose"));
    ck_assert_str_eq(mc_config_get_string(cfg, "dir"), "/var/lib/x y");
    unlink(path);
    free(path);
}
END_TEST

START_TEST(file_refusals_name_the_line)
{
    char *p1 = write_temp("port = 1\ncolour = red\n");
    ck_assert_int_eq(mc_config_load_file(cfg, p1, err, sizeof err), MC_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, ":2:"));
    ck_assert_ptr_nonnull(strstr(err, "colour"));
    char *p2 = write_temp("port 1\n");
    ck_assert_int_eq(mc_config_load_file(cfg, p2, err, sizeof err), MC_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, ":1:"));
    char *p3 = write_temp("tick-rate = quick\n");
    ck_assert_int_eq(mc_config_load_file(cfg, p3, err, sizeof err), MC_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "tick-rate"));
    char *long_line = malloc(9000);
    memset(long_line, 'a', 8998);
    long_line[8998] = '\n';
    long_line[8999] = '\0';
    char *p4 = write_temp(long_line);
    ck_assert_int_eq(mc_config_load_file(cfg, p4, err, sizeof err), MC_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "too long"));
    unlink(p1), unlink(p2), unlink(p3), unlink(p4);
    free(p1), free(p2), free(p3), free(p4), free(long_line);
}
END_TEST

START_TEST(help_lists_every_option)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    mc_config_set_help_output(cfg, out);
    const char *argv[] = {"prog", "--port", "bad", "--help"};
    ck_assert_int_eq(parse(4, argv), MC_CONFIG_HELP);
    fclose(out);
    ck_assert_ptr_nonnull(strstr(buf, "usage: testprog"));
    for (size_t i = 0; i < NOPT; i++)
        ck_assert_ptr_nonnull(strstr(buf, OPTIONS[i].name));
    ck_assert_ptr_nonnull(strstr(buf, "default: 20013"));
    ck_assert_ptr_nonnull(strstr(buf, "--config"));
    free(buf);
}
END_TEST

START_TEST(set_and_getters_of_wrong_type)
{
    ck_assert_int_eq(mc_config_set(cfg, "port", "123", err, sizeof err), MC_CONFIG_OK);
    ck_assert_str_eq(mc_config_get_text(cfg, "port"), "123");
    ck_assert_int_eq(mc_config_set(cfg, "nope", "1", err, sizeof err), MC_CONFIG_ERROR);
    ck_assert_int_eq(mc_config_set(cfg, "port", NULL, err, sizeof err), MC_CONFIG_ERROR);
    mc_log_level old = mc_log_get_level();
    mc_log_set_level(MC_LOG_CRITICAL); /* the misuse is logged; keep the output quiet */
    ck_assert_int_eq(mc_config_get_int(cfg, "port"), 0);
    ck_assert_str_eq(mc_config_get_string(cfg, "missing"), "");
    mc_log_set_level(old);
    ck_assert(mc_config_has(cfg, "dir"));
    ck_assert(!mc_config_has(cfg, "missing"));
}
END_TEST

START_TEST(invalid_tables_are_refused)
{
    mc_log_level old = mc_log_get_level();
    mc_log_set_level(MC_LOG_CRITICAL);
    const mc_option dup[] = {{"a", MC_OPT_INT, "1", ""}, {"a", MC_OPT_INT, "2", ""}};
    ck_assert_ptr_null(mc_config_new("p", "", dup, 2));
    const mc_option bad_default[] = {{"a", MC_OPT_INT, "x", ""}};
    ck_assert_ptr_null(mc_config_new("p", "", bad_default, 1));
    const mc_option reserved[] = {{"help", MC_OPT_BOOL, NULL, ""}};
    ck_assert_ptr_null(mc_config_new("p", "", reserved, 1));
    mc_log_set_level(old);
}
END_TEST

START_TEST(parse_helpers)
{
    int64_t i;
    uint64_t u;
    double f;
    bool b;
    ck_assert(mc_parse_int("0x10", &i) && i == 16);
    ck_assert(!mc_parse_int(" 1", &i));
    ck_assert(!mc_parse_int("", &i));
    ck_assert(!mc_parse_int(NULL, &i));
    ck_assert(mc_parse_uint("18446744073709551615", &u) && u == UINT64_MAX);
    ck_assert(!mc_parse_uint("18446744073709551616", &u));
    ck_assert(!mc_parse_uint("+1", &u));
    ck_assert(mc_parse_float("-1e-3", &f) && f == -1e-3);
    ck_assert(!mc_parse_float("inf", &f));
    ck_assert(mc_parse_bool("YES", &b) && b);
    ck_assert(mc_parse_bool("0", &b) && !b);
    ck_assert(!mc_parse_bool("2", &b));
}
END_TEST

static Suite *config_suite(void)
{
    Suite *s = suite_create("common_config");
    TCase *tc = tcase_create("options");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, defaults_apply);
    tcase_add_test(tc, command_line_forms);
    tcase_add_test(tc, bool_negation_and_explicit);
    tcase_add_test(tc, command_line_refusals);
    tcase_add_test(tc, file_then_command_line);
    tcase_add_test(tc, file_refusals_name_the_line);
    tcase_add_test(tc, help_lists_every_option);
    tcase_add_test(tc, set_and_getters_of_wrong_type);
    tcase_add_test(tc, invalid_tables_are_refused);
    tcase_add_test(tc, parse_helpers);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(config_suite)
