/* Logging format, levels, sinks; and the substitutable clock. */
#include "common/clock.h"
#include "common/log.h"

#include "check_main.h"
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char lines[8][2100];
    mc_log_level levels[8];
    int n;
} captured;

static void capture(void *ctx, mc_log_level level, const char *line)
{
    captured *c = ctx;
    if (c->n < 8) {
        snprintf(c->lines[c->n], sizeof c->lines[0], "%s", line);
        c->levels[c->n] = level;
        c->n++;
    }
}

static captured cap;

static void setup(void)
{
    memset(&cap, 0, sizeof cap);
    mc_log_set_sink(capture, &cap);
    mc_log_set_process_name("baseapp01");
    mc_log_set_level(MC_LOG_INFO);
}

static void teardown(void) { mc_log_set_sink(NULL, NULL); }

static bool matches(const char *pattern, const char *text)
{
    regex_t re;
    ck_assert_int_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
    bool ok = regexec(&re, text, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

START_TEST(line_format)
{
    MC_INFO("registered with %s", "manager");
    ck_assert_int_eq(cap.n, 1);
    ck_assert_msg(matches("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "
                          "baseapp01 INFO registered with manager$",
                          cap.lines[0]),
                  "got: %s", cap.lines[0]);
}
END_TEST

START_TEST(errors_carry_file_and_line)
{
    MC_ERROR("bind failed: %d", 98);
    ck_assert_int_eq(cap.n, 1);
    ck_assert_msg(matches(" baseapp01 ERROR test_log\\.c:[0-9]+: bind failed: 98$", cap.lines[0]),
                  "got: %s", cap.lines[0]);
    MC_WARNING("no file here");
    ck_assert_ptr_null(strstr(cap.lines[1], "test_log.c"));
}
END_TEST

START_TEST(level_filters_at_run_time)
{
    MC_DEBUG("hidden");
    ck_assert_int_eq(cap.n, 0);
    mc_log_set_level(MC_LOG_DEBUG);
    MC_DEBUG("shown");
    ck_assert_int_eq(cap.n, 1);
    mc_log_set_level(MC_LOG_ERROR);
    MC_WARNING("hidden");
    MC_CRITICAL("shown %d", 2);
    ck_assert_int_eq(cap.n, 2);
    ck_assert_int_eq(cap.levels[1], MC_LOG_CRITICAL);
    mc_log_set_level((mc_log_level)99); /* ignored */
    ck_assert_int_eq(mc_log_get_level(), MC_LOG_ERROR);
}
END_TEST

START_TEST(one_event_one_line)
{
    MC_INFO("two\nlines\r");
    ck_assert_int_eq(cap.n, 1);
    ck_assert_ptr_null(strchr(cap.lines[0], '\n'));
    ck_assert_ptr_nonnull(strstr(cap.lines[0], "two lines"));
    char big[5000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    MC_INFO("%s", big); /* truncated, never overflows */
    ck_assert_int_eq(cap.n, 2);
}
END_TEST

START_TEST(level_names_parse)
{
    mc_log_level l;
    ck_assert_int_eq(mc_log_level_parse("debug", &l), 0);
    ck_assert_int_eq(l, MC_LOG_DEBUG);
    ck_assert_int_eq(mc_log_level_parse("WARN", &l), 0);
    ck_assert_int_eq(l, MC_LOG_WARNING);
    ck_assert_int_eq(mc_log_level_parse("Critical", &l), 0);
    ck_assert_int_eq(l, MC_LOG_CRITICAL);
    ck_assert_int_eq(mc_log_level_parse("loud", &l), -1);
    ck_assert_int_eq(mc_log_level_parse(NULL, &l), -1);
    ck_assert_str_eq(mc_log_level_name(MC_LOG_TRACE), "TRACE");
    ck_assert_str_eq(mc_log_level_name((mc_log_level)42), "UNKNOWN");
}
END_TEST

static mc_time_us fake_now(void *ctx) { return *(mc_time_us *)ctx; }

START_TEST(clock_is_monotonic_and_substitutable)
{
    mc_time_us a = mc_clock_now_us();
    mc_time_us b = mc_clock_now_us();
    ck_assert_uint_ge(b, a);
    mc_time_us fake = 123456789;
    mc_clock_set_source(fake_now, &fake);
    ck_assert_uint_eq(mc_clock_now_us(), 123456789);
    fake += 5 * MC_US_PER_S;
    ck_assert_uint_eq(mc_clock_now_us(), 128456789);
    mc_clock_set_source(NULL, NULL);
    ck_assert_uint_ge(mc_clock_now_us(), b);
    int64_t s;
    int32_t us;
    mc_clock_wall(&s, &us);
    ck_assert_int_gt(s, 1600000000);
    ck_assert_int_lt(us, 1000000);
}
END_TEST

static Suite *log_suite(void)
{
    Suite *s = suite_create("common_log");
    TCase *tc = tcase_create("log");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, line_format);
    tcase_add_test(tc, errors_carry_file_and_line);
    tcase_add_test(tc, level_filters_at_run_time);
    tcase_add_test(tc, one_event_one_line);
    tcase_add_test(tc, level_names_parse);
    tcase_add_test(tc, clock_is_monotonic_and_substitutable);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(log_suite)
