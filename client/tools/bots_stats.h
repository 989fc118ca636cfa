/* bots' counters, the chats' round-trip histogram (bounded: 50 us buckets up to 30 s), the
 * update-latency histogram (lat_hist.h: a move sent by one bot, seen by another bot's
 * client), and the closing summary as a table or one JSON object (docs/tools/bots.md). */
#ifndef MC_CLIENT_BOTS_STATS_H
#define MC_CLIENT_BOTS_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fault_watch.h"
#include "lat_hist.h"
#include "secure/login.h"

#define BOTS_RTT_BUCKET_US 50u
#define BOTS_RTT_BUCKETS 600000u /* 30 s */
#define BOTS_END_KINDS 8
#define BOTS_MAX_BASEAPPS 32

/* What the bots on one baseapp saw. */
typedef struct {
    char addr[32];
    uint64_t logged_in, ended_early, calls_sent, calls_answered;
} bots_baseapp;

typedef struct {
    uint32_t count;
    double rate, duration;
    uint64_t started, logged_in, playing;
    uint64_t failed;                             /* logins that did not end ok */
    uint64_t failed_by_status[MC_LOGIN_TIMED_OUT + 1];
    uint64_t login_retries;                      /* logins tried again (a passing refusal) */
    uint64_t ended_early;                        /* channels that ended before the logout */
    uint64_t ended_by_how[BOTS_END_KINDS];
    /* resumptions: channels that died and came back with their ticket (no login), and
     * those that could not (the bot then ends: lost), by status */
    uint64_t resumes, resume_failed;
    uint64_t resume_failed_by_status[MC_LOGIN_STATUS_COUNT];
    uint64_t calls_sent, calls_answered, chats_heard, moves_sent, corrections;
    uint64_t bytes_sent, bytes_received, packets_sent, packets_received;
    uint64_t view_checked, view_mismatches, view_unknown, view_ids_compared;
    uint64_t view_rechecked; /* views that differed at first and were compared again */
    uint64_t first_login_start_ms, last_login_ok_ms;
    uint64_t rtt_n, rtt_max_us;
    uint32_t *rtt_buckets; /* BOTS_RTT_BUCKETS */
    /* update latency: recorded from the moment every bot has played (or failed or ended)
     * until the logout (the steady state); moves seen that matched none of the mover's
     * recent moves are counted apart */
    bool steady;
    uint64_t steady_start_ms, steady_end_ms;
    uint64_t update_unmatched;
    lat_hist *update;
    /* entities in the views of the bots playing, sampled about once a second in the steady
     * state */
    uint64_t view_sum, view_samples;
    size_t nbaseapps;
    bots_baseapp baseapps[BOTS_MAX_BASEAPPS];
    /* fault marks (SIGUSR1): what each cost the bots, judged at faults_until_ms (the start
     * of the logout) */
    fault_watch faults;
    uint64_t faults_until_ms;
} bots_stats;

int bots_stats_init(bots_stats *s);
void bots_stats_free(bots_stats *s);
void bots_stats_rtt(bots_stats *s, uint64_t us);
/* One update-latency sample (only in the steady state). */
void bots_stats_update(bots_stats *s, uint64_t us);
/* Seconds of steady state (0 when it never began). */
double bots_stats_steady_s(const bots_stats *s);
/* Entities in a bot's view on average (0 without samples). */
double bots_stats_view_avg(const bots_stats *s);
/* The baseapp at addr ("a.b.c.d:port"), added when new; NULL past BOTS_MAX_BASEAPPS. */
bots_baseapp *bots_stats_baseapp(bots_stats *s, const char *addr);
/* The round-trip time at quantile q (0..1) in ms (0 without samples). */
double bots_stats_rtt_ms(const bots_stats *s, double q);
/* Logins per second between the first start and the last ok. */
double bots_stats_login_rate(const bots_stats *s);
void bots_stats_print_table(const bots_stats *s, FILE *f);
void bots_stats_print_json(const bots_stats *s, FILE *f);

#endif
