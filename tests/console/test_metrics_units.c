/* The metrics renderer and the histograms without a network: names, types, units and
 * scaling of well-known watchers, labels (escaped), the generic gauge for other numeric
 * watchers (per-entity trees left out), cumulative histogram buckets, and the recent
 * quantile over two 10-second windows with a clock the test drives. */
#include "server/histogram.h"
#include "server/metrics.h"

#include <check.h>
#include <event2/buffer.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

static char *render(mc_watchers *w, mc_histogram *const *h, size_t nh,
                    const mc_metrics_labels *l)
{
    struct evbuffer *out = evbuffer_new();
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(mc_metrics_render(w, h, nh, l, out), 0);
    size_t n = evbuffer_get_length(out);
    char *text = malloc(n + 1);
    ck_assert_ptr_nonnull(text);
    evbuffer_remove(out, text, n);
    text[n] = '\0';
    evbuffer_free(out);
    return text;
}

START_TEST(well_known_watchers_get_conventional_names)
{
    mc_watchers *w = mc_watchers_new();
    uint64_t stalls = 7, lag = 250, sent = 1000, connected = 3, ok = 5, bad = 2, per_entity = 9;
    uint64_t other = 42;
    double load = 0.25;
    bool flag = true;
    mc_watch_add_uint(w, "loop/stalls", &stalls, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "loop/maxLagMs", &lag, MC_WATCH_READ_WRITE);
    mc_watch_add_uint(w, "nub/bytesSent", &sent, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "clients/connected", &connected, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "login/status/ok", &ok, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "login/status/badPassword", &bad, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "entities/17/props/hp", &per_entity, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "some/otherCount", &other, MC_WATCH_READ_ONLY);
    mc_watch_add_float(w, "load", &load, MC_WATCH_READ_ONLY);
    mc_watch_add_bool(w, "db/redis", &flag, MC_WATCH_READ_ONLY);
    mc_watch_add_const_string(w, "version", "1.2.3");
    mc_metrics_labels l = {"baseapp", "baseapp01", "host\"with\\quote\nline"};
    char *t = render(w, NULL, 0, &l);
    const char *labels = "role=\"baseapp\",name=\"baseapp01\",host=\"host\\\"with\\\\quote\\nline\"";
    char want[512];
    snprintf(want, sizeof want, "# TYPE mc_loop_stalls_total counter\nmc_loop_stalls_total{%s} 7\n",
             labels);
    ck_assert_msg(strstr(t, want), "%s", t);
    snprintf(want, sizeof want, "mc_loop_max_lag_seconds{%s} 0.25\n", labels);
    ck_assert_msg(strstr(t, want), "ms are scaled to seconds: %s", t);
    snprintf(want, sizeof want, "mc_internal_sent_bytes_total{%s} 1000\n", labels);
    ck_assert_msg(strstr(t, want), "%s", t);
    snprintf(want, sizeof want, "# TYPE mc_clients_connected gauge\nmc_clients_connected{%s} 3\n",
             labels);
    ck_assert_msg(strstr(t, want), "%s", t);
    snprintf(want, sizeof want, "mc_login_replies_total{%s,status=\"ok\"} 5\n", labels);
    ck_assert_msg(strstr(t, want), "%s", t);
    snprintf(want, sizeof want, "mc_login_replies_total{%s,status=\"badPassword\"} 2\n", labels);
    ck_assert_msg(strstr(t, want), "%s", t);
    snprintf(want, sizeof want, "mc_watcher_value{%s,path=\"some/otherCount\"} 42\n", labels);
    ck_assert_msg(strstr(t, want), "%s", t);
    snprintf(want, sizeof want, "mc_watcher_value{%s,path=\"db/redis\"} 1\n", labels);
    ck_assert_msg(strstr(t, want), "bools are 0/1: %s", t);
    ck_assert_msg(!strstr(t, "entities/17"), "per-entity trees are left out: %s", t);
    ck_assert_msg(!strstr(t, "version"), "strings are not metrics: %s", t);
    ck_assert_msg(!strstr(t, "mc_entities{"), "absent watchers are not served");
    /* one HELP and TYPE per family, even with many samples */
    const char *first = strstr(t, "# TYPE mc_login_replies_total");
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_null(strstr(first + 1, "# TYPE mc_login_replies_total"));
    free(t);
    mc_watchers_free(w);
}
END_TEST

START_TEST(histograms_are_cumulative_with_sum_and_count)
{
    mc_watchers *w = mc_watchers_new();
    mc_histogram h;
    mc_histogram_init(&h, "cellapp_tick_seconds", "Tick time.");
    mc_time_us now = 1000000;
    mc_histogram_observe_us(&h, 50, now);      /* 0.05 ms: first bucket */
    mc_histogram_observe_us(&h, 3000, now);    /* 3 ms: le 0.005 */
    mc_histogram_observe_us(&h, 3000, now);
    mc_histogram_observe_us(&h, 60000000, now); /* 60 s: +Inf */
    mc_histogram *hs[] = {&h};
    mc_metrics_labels l = {"cellapp", "cellapp01", "h"};
    char *t = render(w, hs, 1, &l);
    const char *lab = "role=\"cellapp\",name=\"cellapp01\",host=\"h\"";
    char want[256];
    snprintf(want, sizeof want, "# TYPE mc_cellapp_tick_seconds histogram\n");
    ck_assert(strstr(t, want));
    snprintf(want, sizeof want, "mc_cellapp_tick_seconds_bucket{%s,le=\"0.0001\"} 1\n", lab);
    ck_assert_msg(strstr(t, want), "%s", t);
    snprintf(want, sizeof want, "mc_cellapp_tick_seconds_bucket{%s,le=\"0.0025\"} 1\n", lab);
    ck_assert_msg(strstr(t, want), "%s", t);
    snprintf(want, sizeof want, "mc_cellapp_tick_seconds_bucket{%s,le=\"0.005\"} 3\n", lab);
    ck_assert_msg(strstr(t, want), "%s", t);
    snprintf(want, sizeof want, "mc_cellapp_tick_seconds_bucket{%s,le=\"30\"} 3\n", lab);
    ck_assert_msg(strstr(t, want), "%s", t);
    snprintf(want, sizeof want, "mc_cellapp_tick_seconds_bucket{%s,le=\"+Inf\"} 4\n", lab);
    ck_assert_msg(strstr(t, want), "%s", t);
    snprintf(want, sizeof want, "mc_cellapp_tick_seconds_count{%s} 4\n", lab);
    ck_assert_msg(strstr(t, want), "%s", t);
    snprintf(want, sizeof want, "mc_cellapp_tick_seconds_sum{%s} 60.00", lab);
    ck_assert_msg(strstr(t, want), "%s", t);
    free(t);
    mc_watchers_free(w);
}
END_TEST

START_TEST(recent_quantile_covers_the_last_two_windows)
{
    mc_histogram h;
    mc_histogram_init(&h, "x_seconds", "x");
    mc_time_us t0 = 5000000;
    ck_assert(mc_histogram_recent_quantile(&h, 0.99, t0) == 0);
    for (int i = 0; i < 98; i++)
        mc_histogram_observe_us(&h, 800, t0); /* 0.8 ms: le 0.001 */
    mc_histogram_observe_us(&h, 20000, t0);   /* 20 ms: le 0.025 */
    mc_histogram_observe_us(&h, 20000, t0);
    ck_assert(mc_histogram_recent_quantile(&h, 0.5, t0) == 0.001);
    ck_assert(mc_histogram_recent_quantile(&h, 0.99, t0) == 0.025);
    /* 12 s later the first window is the previous one: still counted */
    ck_assert(mc_histogram_recent_quantile(&h, 0.99, t0 + 12000000) == 0.025);
    /* 25 s later both windows are gone */
    ck_assert(mc_histogram_recent_quantile(&h, 0.99, t0 + 25000000) == 0);
    ck_assert_uint_eq(h.count, 100); /* the totals stay */
    mc_watchers *w = mc_watchers_new();
    ck_assert_int_eq(mc_histogram_publish(&h, w, "histograms/x_seconds"), 0);
    mc_watch_value v = {0};
    char err[64];
    ck_assert_int_eq(mc_watch_get(w, "histograms/x_seconds/count", &v, err, sizeof err),
                     MC_WATCH_OK);
    ck_assert_uint_eq(v.as.u, 100);
    mc_watchers_free(w);
}
END_TEST

START_TEST(label_values_are_escaped_and_bounded)
{
    char out[8];
    mc_metrics_escape_label("a\"b\\c\nd", out, sizeof out);
    ck_assert_str_eq(out, "a\\\"b\\\\"); /* never half an escape at the end */
    char big[64];
    mc_metrics_escape_label("plain", big, sizeof big);
    ck_assert_str_eq(big, "plain");
}
END_TEST

static Suite *units_suite(void)
{
    Suite *s = suite_create("metrics_units");
    TCase *tc = tcase_create("units");
    tcase_add_test(tc, well_known_watchers_get_conventional_names);
    tcase_add_test(tc, histograms_are_cumulative_with_sum_and_count);
    tcase_add_test(tc, recent_quantile_covers_the_last_two_windows);
    tcase_add_test(tc, label_values_are_escaped_and_bounded);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(units_suite)
