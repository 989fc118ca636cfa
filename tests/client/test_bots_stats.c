/* bots' update-latency bookkeeping without a cluster (docs/tools/bots.md): the fixed
 * log-linear histogram (bucket edges, quantiles within a bucket's width, the maximum, samples
 * beyond its range), the entity id -> bot table, a bot finding which of its recent moves put
 * it somewhere, and the summary's update_* keys (recorded only in the steady state). The
 * same through real processes: the world-bench smoke test (bench/world/). */
#include "check_main.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot.h"
#include "bot_ids.h"
#include "bots_stats.h"
#include "bot_company.h"
#include "fault_watch.h"
#include "lat_hist.h"

START_TEST(buckets_cover_every_value_in_order)
{
    /* every sample falls below its bucket's upper edge and at or above the one before */
    uint32_t last = 0;
    for (uint64_t us = 0; us < 90000000u; us = us < 20000 ? us + 1 : us + us / 997) {
        uint32_t b = lat_hist_bucket(us);
        ck_assert_uint_lt(b, LAT_HIST_BUCKETS);
        ck_assert_uint_ge(b, last);
        last = b;
        if (b == LAT_HIST_BUCKETS - 1 && us >= LAT_HIST_MAX_US)
            continue; /* beyond the range: the last bucket */
        ck_assert_uint_lt(us, lat_hist_upper_us(b));
        if (b > 0)
            ck_assert_uint_ge(us, lat_hist_upper_us(b - 1));
        /* a bucket is at most 0.2% of its values wide (10 us in the linear part) */
        uint64_t width = lat_hist_upper_us(b) - (b ? lat_hist_upper_us(b - 1) : 0);
        ck_assert(width <= LAT_HIST_UNIT_US || (double)width <= 0.002 * (double)us + 1e-9);
    }
    ck_assert_uint_eq(lat_hist_bucket(0), 0);
    ck_assert_uint_eq(lat_hist_bucket(9), 0);
    ck_assert_uint_eq(lat_hist_bucket(10), 1);
    ck_assert_uint_eq(lat_hist_bucket(10239), LAT_HIST_LINEAR - 1);
    ck_assert_uint_eq(lat_hist_bucket(10240), LAT_HIST_LINEAR);
    ck_assert_uint_eq(lat_hist_upper_us(LAT_HIST_LINEAR), 10260);
    ck_assert_uint_eq(lat_hist_bucket(UINT64_MAX), LAT_HIST_BUCKETS - 1);
}
END_TEST

START_TEST(quantiles_are_within_a_bucket)
{
    lat_hist *h = malloc(sizeof *h);
    ck_assert_ptr_nonnull(h);
    lat_hist_init(h);
    ck_assert(lat_hist_ms(h, 0.5) == 0 && lat_hist_ms(h, 0.99) == 0 && lat_hist_max_ms(h) == 0);
    /* 1 .. 1000 ms, one each: the nearest-rank p50 is 500 ms, p99 990 ms */
    for (uint64_t ms = 1000; ms >= 1; ms--)
        lat_hist_add(h, ms * 1000);
    ck_assert_uint_eq(h->n, 1000);
    double p50 = lat_hist_ms(h, 0.5), p99 = lat_hist_ms(h, 0.99);
    ck_assert_msg(p50 >= 500 && p50 <= 500 * 1.002, "p50 %f", p50);
    ck_assert_msg(p99 >= 990 && p99 <= 990 * 1.002, "p99 %f", p99);
    ck_assert(lat_hist_max_ms(h) == 1000.0);
    ck_assert(lat_hist_ms(h, 1.0) == 1000.0); /* never above the largest sample */
    ck_assert_msg(fabs(lat_hist_mean_ms(h) - 500.5) < 1e-9, "mean %f", lat_hist_mean_ms(h));
    /* small values: 10 us resolution */
    lat_hist_init(h);
    for (int i = 0; i < 99; i++)
        lat_hist_add(h, 1234);
    lat_hist_add(h, 250000);
    ck_assert_msg(fabs(lat_hist_ms(h, 0.5) - 1.24) < 1e-9, "p50 %f", lat_hist_ms(h, 0.5));
    ck_assert_msg(fabs(lat_hist_ms(h, 0.99) - 1.24) < 1e-9, "p99 %f", lat_hist_ms(h, 0.99));
    ck_assert(lat_hist_ms(h, 1.0) == 250.0);
    /* a sample beyond the range: counted in the last bucket, the maximum exact */
    lat_hist_add(h, 200000000u);
    ck_assert_uint_eq(h->buckets[LAT_HIST_BUCKETS - 1], 1);
    ck_assert(lat_hist_max_ms(h) == 200000.0);
    ck_assert(lat_hist_ms(h, 1.0) <= 200000.0);
    free(h);
}
END_TEST

START_TEST(id_table_finds_every_bot)
{
    bot_ids m;
    ck_assert_int_eq(bot_ids_init(&m, 1000), 0);
    static int vals[1500];
    for (int i = 0; i < 1500; i++)
        ck_assert_int_eq(bot_ids_put(&m, 100000 + 7919 * i, &vals[i]), 0);
    for (int i = 0; i < 1500; i++)
        ck_assert_ptr_eq(bot_ids_get(&m, 100000 + 7919 * i), &vals[i]);
    ck_assert_ptr_null(bot_ids_get(&m, 99999));
    ck_assert_ptr_null(bot_ids_get(&m, 0));
    ck_assert_int_eq(bot_ids_put(&m, 0, &vals[0]), -1);
    ck_assert_int_eq(bot_ids_put(&m, -5, &vals[0]), -1);
    ck_assert_int_eq(bot_ids_put(&m, 100000, &vals[3]), 0); /* replaced */
    ck_assert_ptr_eq(bot_ids_get(&m, 100000), &vals[3]);
    /* it grows past the count it was made for */
    for (int i = 0; i < 3000; i++)
        ck_assert_int_eq(bot_ids_put(&m, 5000000 + i, &vals[i % 1500]), 0);
    for (int i = 0; i < 3000; i++)
        ck_assert_ptr_eq(bot_ids_get(&m, 5000000 + i), &vals[i % 1500]);
    ck_assert_ptr_null(bot_ids_get(&m, 123));
    bot_ids_free(&m);
    ck_assert_ptr_null(bot_ids_get(&m, 100000));
}
END_TEST

START_TEST(a_bot_knows_when_it_sent_a_position)
{
    bot_shared sh = {0};
    bot *b = calloc(1, sizeof *b);
    ck_assert_ptr_nonnull(b);
    bot_init(b, &sh, 0, "bot", NULL);
    uint64_t sent = 0;
    ck_assert_int_eq(bot_move_sent(b, (mc_vector3){1, 0, 2}, &sent), -1);
    /* 40 moves into the ring of 32: the oldest 8 are forgotten */
    for (uint32_t i = 0; i < 40; i++) {
        b->moves[b->moves_head] = (bot_move){.pos = {(float)i * 0.5f, 0, 7.25f},
                                             .sent_us = 1000 + i};
        b->moves_head = (b->moves_head + 1) % BOT_MOVE_HISTORY;
        if (b->moves_n < BOT_MOVE_HISTORY)
            b->moves_n++;
    }
    ck_assert_int_eq(bot_move_sent(b, (mc_vector3){39 * 0.5f, 0, 7.25f}, &sent), 0);
    ck_assert_uint_eq(sent, 1039);
    ck_assert_int_eq(bot_move_sent(b, (mc_vector3){8 * 0.5f, 0, 7.25f}, &sent), 0);
    ck_assert_uint_eq(sent, 1008);
    ck_assert_int_eq(bot_move_sent(b, (mc_vector3){7 * 0.5f, 0, 7.25f}, &sent), -1);
    /* within a millimetre matches, farther does not */
    ck_assert_int_eq(bot_move_sent(b, (mc_vector3){10.0005f, 0, 7.2505f}, &sent), 0);
    ck_assert_uint_eq(sent, 1020);
    ck_assert_int_eq(bot_move_sent(b, (mc_vector3){10.01f, 0, 7.25f}, &sent), -1);
    bot_free(b);
    free(b);
}
END_TEST

START_TEST(summary_reports_update_latency)
{
    bots_stats st;
    ck_assert_int_eq(bots_stats_init(&st), 0);
    st.count = 3;
    bots_stats_update(&st, 5000); /* before the steady state: not recorded */
    ck_assert_uint_eq(st.update->n, 0);
    st.steady = true;
    st.steady_start_ms = 1000;
    for (int i = 1; i <= 100; i++)
        bots_stats_update(&st, (uint64_t)i * 1000);
    st.steady = false;
    st.steady_end_ms = 11000;
    bots_stats_update(&st, 999999);
    st.update_unmatched = 4;
    st.view_sum = 150;
    st.view_samples = 3;
    ck_assert_uint_eq(st.update->n, 100);
    ck_assert(bots_stats_steady_s(&st) == 10.0);
    ck_assert(bots_stats_view_avg(&st) == 50.0);
    char *json = NULL, *table = NULL;
    size_t jl = 0, tl = 0;
    FILE *f = open_memstream(&json, &jl);
    bots_stats_print_json(&st, f);
    fclose(f);
    f = open_memstream(&table, &tl);
    bots_stats_print_table(&st, f);
    fclose(f);
    ck_assert_msg(strstr(json, "\"update_samples\":100,") != NULL, "%s", json);
    ck_assert_msg(strstr(json, "\"update_p50_ms\":50.0") != NULL, "%s", json);
    ck_assert_msg(strstr(json, "\"update_p99_ms\":99.") != NULL, "%s", json);
    ck_assert_msg(strstr(json, "\"update_max_ms\":100.000,") != NULL, "%s", json);
    ck_assert_msg(strstr(json, "\"update_unmatched\":4,") != NULL, "%s", json);
    ck_assert_msg(strstr(json, "\"view_avg\":50.0,") != NULL, "%s", json);
    ck_assert_msg(strstr(json, "\"steady_s\":10.0,") != NULL, "%s", json);
    /* the keys that were there before are all still there */
    const char *keys[] = {"bots", "rate", "duration", "logged_in", "playing", "failed",
                          "failed_by_status", "login_retries", "ended_early", "ended_by", "calls_sent",
                          "calls_answered", "chats_heard", "moves_sent", "corrections",
                          "rtt_p50_ms", "rtt_p99_ms", "rtt_max_ms", "bytes_sent",
                          "bytes_received", "packets_sent", "packets_received",
                          "logins_per_s", "view_checked", "view_mismatches", "view_unknown",
                          "view_ids_compared", "view_rechecked", "baseapps"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        char k[64];
        snprintf(k, sizeof k, "\"%s\":", keys[i]);
        ck_assert_msg(strstr(json, k) != NULL, "%s missing in %s", k, json);
    }
    ck_assert_msg(json[0] == '{' && json[jl - 2] == '}' && json[jl - 1] == '\n', "%s", json);
    ck_assert_msg(strstr(table, "update ms        p50 50.0") != NULL, "%s", table);
    ck_assert_msg(strstr(table, "100 samples in 10.0 s, 4 unmatched") != NULL, "%s", table);
    free(json);
    free(table);
    bots_stats_free(&st);
}
END_TEST

static bool even_bots_play(void *ud, uint32_t i)
{
    (void)ud;
    return i % 2 == 0;
}

/* A fault mark watches the bots playing at it; an update in flight right after it does not
 * count as a recovery when a long silence follows; a bot that ended or stayed silent is not
 * kept. */
START_TEST(a_fault_mark_counts_who_saw_the_world_again)
{
    fault_watch w;
    fault_watch_init(&w, 6);
    ck_assert_int_eq(fault_watch_mark(&w, 10000, even_bots_play, NULL), 0);
    ck_assert_uint_eq(w.marks[0].watched, 3); /* bots 0, 2, 4 */
    /* bot 0: an update 5 ms after the mark (in flight), then 3 s of silence, then updates */
    fault_watch_world(&w, 0, 10005);
    fault_watch_world(&w, 0, 13005);
    fault_watch_world(&w, 0, 13100);
    fault_watch_world(&w, 0, 14000);
    /* bot 2: never silent: updates every 100 ms */
    for (uint64_t t = 10050; t <= 14000; t += 100)
        fault_watch_world(&w, 2, t);
    /* bot 4: one update, then its channel ends */
    fault_watch_world(&w, 4, 10020);
    fault_watch_ended(&w, 4, 10030);
    /* bot 1 was not playing at the mark: ignored */
    fault_watch_world(&w, 1, 10500);
    fault_result r = fault_watch_result(&w, 0, 14050);
    ck_assert_uint_eq(r.watched, 3);
    ck_assert_uint_eq(r.kept, 2);
    ck_assert_uint_eq(r.ended, 1);
    ck_assert_uint_eq(r.silent, 0);
    ck_assert(r.recovery_max_ms == 3005.0);
    ck_assert(r.recovery_p99_ms == 3005.0);
    ck_assert(r.recovery_p50_ms == 50.0);
    /* judged later, with bot 2 silent since 13950 (over a second): not kept */
    r = fault_watch_result(&w, 0, 14990);
    ck_assert_uint_eq(r.kept, 1);
    ck_assert_uint_eq(r.silent, 1);
    /* the JSON */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fault_watch_print_json(&w, 14050, f);
    fclose(f);
    ck_assert_msg(strstr(buf, "\"watched\":3,\"kept\":2,\"ended\":1,\"silent\":0,"
                              "\"recovery_p50_ms\":50,\"recovery_p99_ms\":3005") != NULL,
                  "%s", buf);
    free(buf);
    /* a second mark ends the first's watch: what happens after it is the second's */
    ck_assert_int_eq(fault_watch_mark(&w, 20000, even_bots_play, NULL), 0);
    fault_watch_ended(&w, 0, 20500);
    ck_assert_uint_eq(w.marks[0].state[0], 1);
    ck_assert_uint_eq(w.marks[1].state[0], 2);
    fault_watch_world(&w, 2, 20100); /* not a recovery for the first mark */
    ck_assert_uint_eq(w.marks[0].last_ms[2], 13950);
    /* at most FAULT_WATCH_MARKS marks */
    for (uint32_t k = 2; k < FAULT_WATCH_MARKS; k++)
        ck_assert_int_eq(fault_watch_mark(&w, 20000 + k, even_bots_play, NULL), 0);
    ck_assert_int_eq(fault_watch_mark(&w, 40000, even_bots_play, NULL), -1);
    ck_assert_uint_eq(w.refused, 1);
    fault_watch_free(&w);
}
END_TEST

/* A bot with nobody in view hears nothing, fault or not (issue 20: one bot of 1,000 counted
 * not kept after a cellapp's kill): its silence while alone does not count; alone before it
 * recovered, it is kept but not timed; a bot with company that hears nothing is silent. */
START_TEST(a_bot_alone_is_not_silent)
{
    fault_watch w;
    fault_watch_init(&w, 4);
    ck_assert_int_eq(fault_watch_mark(&w, 10000, even_bots_play, NULL), 0);
    /* bot 0: recovers at 12000, then walks alone from 12100 (nothing heard) to the end */
    fault_watch_world(&w, 0, 12000);
    fault_watch_world(&w, 0, 12100);
    for (uint64_t t = 12400; t <= 20000; t += 100)
        fault_watch_alone(&w, 0, t);
    /* bot 2: alone at the mark, meets others at 14000 and hears them from 15000 */
    for (uint64_t t = 10300; t < 14000; t += 100)
        fault_watch_alone(&w, 2, t);
    for (uint64_t t = 15000; t <= 21200; t += 100)
        fault_watch_world(&w, 2, t);
    fault_result r = fault_watch_result(&w, 0, 20050);
    ck_assert_uint_eq(r.kept, 2);
    ck_assert_uint_eq(r.silent, 0);
    ck_assert_uint_eq(r.alone, 1);
    ck_assert(r.recovery_max_ms == 2000.0); /* bot 0's alone; bot 2 not timed */
    /* bot 0 has company from 20100 (no longer alone) and hears nothing: silent once a
     * second has passed */
    r = fault_watch_result(&w, 0, 21200);
    ck_assert_uint_eq(r.kept, 1);
    ck_assert_uint_eq(r.silent, 1);
    /* alone before a mark is not that mark's; alone after the next mark is not the first's */
    ck_assert_int_eq(fault_watch_mark(&w, 30000, even_bots_play, NULL), 0);
    fault_watch_alone(&w, 0, 25000);
    ck_assert_uint_eq(w.marks[0].last_ms[0], 25000);
    ck_assert_uint_eq(w.marks[1].last_ms[0], 0);
    ck_assert_uint_eq(w.marks[1].alone[0], 0);
    fault_watch_alone(&w, 0, 30500);
    ck_assert_uint_eq(w.marks[0].last_ms[0], 25000);
    ck_assert_uint_eq(w.marks[1].alone[0], 1);
    ck_assert_uint_eq(w.marks[1].last_ms[0], 30500);
    /* bot 2 of the second mark hears nothing and has company: silent; bot 0, alone all
     * along, is kept (not timed) until it has company for a second */
    fault_result r2 = fault_watch_result(&w, 1, 31200);
    ck_assert_uint_eq(r2.kept, 1);
    ck_assert_uint_eq(r2.alone, 1);
    ck_assert_uint_eq(r2.silent, 1);
    ck_assert(fault_watch_silent(&w, 1, 2, 31200, NULL));
    ck_assert(!fault_watch_silent(&w, 1, 0, 31200, NULL));
    r2 = fault_watch_result(&w, 1, 31600);
    ck_assert_uint_eq(r2.kept, 0);
    ck_assert_uint_eq(r2.silent, 2);
    uint64_t last = 0;
    ck_assert(fault_watch_silent(&w, 1, 0, 31600, &last));
    ck_assert_uint_eq(last, 30500);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fault_watch_print_json(&w, 20050, f);
    fclose(f);
    ck_assert_msg(strstr(buf, "\"kept\":2,\"ended\":0,\"silent\":0,") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "\"recovery_max_ms\":2000,\"alone\":1}") != NULL, "%s", buf);
    free(buf);
    fault_watch_free(&w);
}
END_TEST

/* Company: another walking bot within the view radius less the margin. */
START_TEST(a_bot_has_company_within_its_view)
{
    bot bots[3];
    memset(bots, 0, sizeof bots);
    for (int i = 0; i < 3; i++) {
        bots[i].state = BOT_PLAY;
        bots[i].have_pos = true;
    }
    bots[0].pos = (mc_vector3){0, 0, 0};
    bots[1].pos = (mc_vector3){30, 0, 30}; /* 42.4 m: within 50 - 2 */
    bots[2].pos = (mc_vector3){200, 0, 0};
    ck_assert(!bot_alone(bots, 3, 0, 50));
    ck_assert(!bot_alone(bots, 3, 1, 50));
    ck_assert(bot_alone(bots, 3, 2, 50));
    ck_assert(bot_alone(bots, 3, 0, 40)); /* 42.4 m is beyond 40 - 2 */
    bots[1].pos = (mc_vector3){0, 0, 48.5f}; /* within the radius, not within the margin */
    ck_assert(bot_alone(bots, 3, 0, 50));
    bots[1].pos = (mc_vector3){0, 50, 10}; /* height does not count */
    ck_assert(!bot_alone(bots, 3, 0, 50));
    bots[1].state = BOT_QUIET; /* standing still: nothing to hear from it */
    ck_assert(bot_alone(bots, 3, 0, 50));
    bots[1].state = BOT_PLAY;
    bots[1].have_pos = false;
    ck_assert(bot_alone(bots, 3, 0, 50));
    /* a bot not walking is never alone (it is not watched), nor one out of range */
    bots[2].state = BOT_CONNECT;
    ck_assert(!bot_alone(bots, 3, 2, 50));
    ck_assert(!bot_alone(bots, 3, 3, 50));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("bots_stats");
    TCase *tc = tcase_create("stats");
    tcase_add_test(tc, buckets_cover_every_value_in_order);
    tcase_add_test(tc, quantiles_are_within_a_bucket);
    tcase_add_test(tc, id_table_finds_every_bot);
    tcase_add_test(tc, a_bot_knows_when_it_sent_a_position);
    tcase_add_test(tc, summary_reports_update_latency);
    tcase_add_test(tc, a_fault_mark_counts_who_saw_the_world_again);
    tcase_add_test(tc, a_bot_alone_is_not_silent);
    tcase_add_test(tc, a_bot_has_company_within_its_view);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
