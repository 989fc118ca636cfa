/* bots' counters and summary (bots_stats.h). */
#include "bots_stats.h"

#include "mcclient/client.h"

#include <stdlib.h>
#include <string.h>

int bots_stats_init(bots_stats *s)
{
    memset(s, 0, sizeof *s);
    s->rtt_buckets = calloc(BOTS_RTT_BUCKETS, sizeof *s->rtt_buckets);
    s->update = malloc(sizeof *s->update);
    if (!s->rtt_buckets || !s->update) {
        bots_stats_free(s);
        return -1;
    }
    lat_hist_init(s->update);
    return 0;
}

void bots_stats_free(bots_stats *s)
{
    free(s->rtt_buckets);
    s->rtt_buckets = NULL;
    free(s->update);
    s->update = NULL;
    fault_watch_free(&s->faults);
}

void bots_stats_update(bots_stats *s, uint64_t us)
{
    if (s->steady)
        lat_hist_add(s->update, us);
}

double bots_stats_steady_s(const bots_stats *s)
{
    if (!s->steady_start_ms || s->steady_end_ms < s->steady_start_ms)
        return 0;
    return (double)(s->steady_end_ms - s->steady_start_ms) / 1000.0;
}

double bots_stats_view_avg(const bots_stats *s)
{
    return s->view_samples ? (double)s->view_sum / (double)s->view_samples : 0;
}

void bots_stats_rtt(bots_stats *s, uint64_t us)
{
    uint64_t b = us / BOTS_RTT_BUCKET_US;
    s->rtt_buckets[b < BOTS_RTT_BUCKETS ? b : BOTS_RTT_BUCKETS - 1]++;
    s->rtt_n++;
    if (us > s->rtt_max_us)
        s->rtt_max_us = us;
}

bots_baseapp *bots_stats_baseapp(bots_stats *s, const char *addr)
{
    for (size_t i = 0; i < s->nbaseapps; i++)
        if (!strcmp(s->baseapps[i].addr, addr))
            return &s->baseapps[i];
    if (s->nbaseapps == BOTS_MAX_BASEAPPS)
        return NULL;
    bots_baseapp *b = &s->baseapps[s->nbaseapps++];
    snprintf(b->addr, sizeof b->addr, "%s", addr);
    return b;
}

double bots_stats_rtt_ms(const bots_stats *s, double q)
{
    if (!s->rtt_n)
        return 0;
    uint64_t want = (uint64_t)(q * (double)s->rtt_n);
    if (want >= s->rtt_n)
        want = s->rtt_n - 1;
    uint64_t seen = 0;
    for (uint32_t b = 0; b < BOTS_RTT_BUCKETS; b++) {
        seen += s->rtt_buckets[b];
        if (seen > want) /* the bucket's upper edge, never above the maximum */
        {
            double ms = (double)(b + 1) * BOTS_RTT_BUCKET_US / 1000.0;
            double max = (double)s->rtt_max_us / 1000.0;
            return ms < max ? ms : max;
        }
    }
    return (double)s->rtt_max_us / 1000.0;
}

double bots_stats_login_rate(const bots_stats *s)
{
    if (!s->logged_in || s->last_login_ok_ms <= s->first_login_start_ms)
        return 0;
    return (double)s->logged_in * 1000.0 / (double)(s->last_login_ok_ms - s->first_login_start_ms);
}

void bots_stats_print_table(const bots_stats *s, FILE *f)
{
    fprintf(f, "bots: %u bots, %g logins/s, %g s\n", s->count, s->rate, s->duration);
    fprintf(f, "  logged in        %llu (%.0f logins/s)\n", (unsigned long long)s->logged_in,
            bots_stats_login_rate(s));
    fprintf(f, "  playing          %llu (an avatar with a cell)\n",
            (unsigned long long)s->playing);
    fprintf(f, "  failed           %llu\n", (unsigned long long)s->failed);
    fprintf(f, "  logins retried   %llu\n", (unsigned long long)s->login_retries);
    for (int st = 1; st <= MC_LOGIN_TIMED_OUT; st++)
        if (s->failed_by_status[st])
            fprintf(f, "    %-16s %llu\n", mc_login_status_name(st),
                    (unsigned long long)s->failed_by_status[st]);
    fprintf(f, "  ended early      %llu\n", (unsigned long long)s->ended_early);
    for (int h = 1; h < BOTS_END_KINDS; h++)
        if (s->ended_by_how[h])
            fprintf(f, "    %-16s %llu\n", mc_client_end_name(h),
                    (unsigned long long)s->ended_by_how[h]);
    fprintf(f, "  resumed          %llu\n", (unsigned long long)s->resumes);
    fprintf(f, "  resume failed    %llu\n", (unsigned long long)s->resume_failed);
    for (int st = 1; st < MC_LOGIN_STATUS_COUNT; st++)
        if (s->resume_failed_by_status[st])
            fprintf(f, "    %-16s %llu\n", mc_login_status_name(st),
                    (unsigned long long)s->resume_failed_by_status[st]);
    fprintf(f, "  calls sent       %llu\n", (unsigned long long)s->calls_sent);
    fprintf(f, "  calls answered   %llu\n", (unsigned long long)s->calls_answered);
    fprintf(f, "  chats heard      %llu\n", (unsigned long long)s->chats_heard);
    fprintf(f, "  moves sent       %llu (%llu corrected)\n", (unsigned long long)s->moves_sent,
            (unsigned long long)s->corrections);
    fprintf(f, "  round trip ms    p50 %.2f  p99 %.2f  max %.2f\n", bots_stats_rtt_ms(s, 0.5),
            bots_stats_rtt_ms(s, 0.99), (double)s->rtt_max_us / 1000.0);
    fprintf(f, "  update ms        p50 %.2f  p99 %.2f  max %.2f (%llu samples in %.1f s, %llu "
               "unmatched)\n",
            lat_hist_ms(s->update, 0.5), lat_hist_ms(s->update, 0.99),
            lat_hist_max_ms(s->update), (unsigned long long)s->update->n,
            bots_stats_steady_s(s), (unsigned long long)s->update_unmatched);
    fprintf(f, "  in view          %.1f entities on average\n", bots_stats_view_avg(s));
    fprintf(f, "  bytes sent       %llu (%llu packets)\n", (unsigned long long)s->bytes_sent,
            (unsigned long long)s->packets_sent);
    fprintf(f, "  bytes received   %llu (%llu packets)\n", (unsigned long long)s->bytes_received,
            (unsigned long long)s->packets_received);
    for (size_t i = 0; i < s->nbaseapps; i++) {
        const bots_baseapp *b = &s->baseapps[i];
        fprintf(f, "  baseapp %-21s %llu logged in, %llu ended early, %llu/%llu calls "
                   "answered\n",
                b->addr, (unsigned long long)b->logged_in, (unsigned long long)b->ended_early,
                (unsigned long long)b->calls_answered, (unsigned long long)b->calls_sent);
    }
    if (s->view_checked || s->view_unknown)
        fprintf(f, "  view checks      %llu bots (%llu by ids), %llu mismatches (%llu compared "
                   "again), %llu not known to the cellapps\n",
                (unsigned long long)s->view_checked, (unsigned long long)s->view_ids_compared,
                (unsigned long long)s->view_mismatches, (unsigned long long)s->view_rechecked,
                (unsigned long long)s->view_unknown);
    fault_watch_print_table(&s->faults, s->faults_until_ms, f);
}

void bots_stats_print_json(const bots_stats *s, FILE *f)
{
    fprintf(f, "{\"bots\":%u,\"rate\":%g,\"duration\":%g,\"logged_in\":%llu,\"playing\":%llu,"
               "\"failed\":%llu,\"failed_by_status\":{",
            s->count, s->rate, s->duration, (unsigned long long)s->logged_in,
            (unsigned long long)s->playing, (unsigned long long)s->failed);
    int n = 0;
    for (int st = 1; st <= MC_LOGIN_TIMED_OUT; st++)
        if (s->failed_by_status[st])
            fprintf(f, "%s\"%s\":%llu", n++ ? "," : "", mc_login_status_name(st),
                    (unsigned long long)s->failed_by_status[st]);
    fprintf(f, "},\"login_retries\":%llu,\"ended_early\":%llu,\"ended_by\":{",
            (unsigned long long)s->login_retries, (unsigned long long)s->ended_early);
    n = 0;
    for (int h = 1; h < BOTS_END_KINDS; h++)
        if (s->ended_by_how[h])
            fprintf(f, "%s\"%s\":%llu", n++ ? "," : "", mc_client_end_name(h),
                    (unsigned long long)s->ended_by_how[h]);
    fprintf(f, "},\"resumes\":%llu,\"resume_failed\":%llu,\"resume_failed_by\":{",
            (unsigned long long)s->resumes, (unsigned long long)s->resume_failed);
    n = 0;
    for (int st = 1; st < MC_LOGIN_STATUS_COUNT; st++)
        if (s->resume_failed_by_status[st])
            fprintf(f, "%s\"%s\":%llu", n++ ? "," : "", mc_login_status_name(st),
                    (unsigned long long)s->resume_failed_by_status[st]);
    fprintf(f, "},\"calls_sent\":%llu,\"calls_answered\":%llu,\"chats_heard\":%llu,"
               "\"moves_sent\":%llu,\"corrections\":%llu,\"rtt_p50_ms\":%.3f,"
               "\"rtt_p99_ms\":%.3f,\"rtt_max_ms\":%.3f,\"bytes_sent\":%llu,"
               "\"bytes_received\":%llu,\"packets_sent\":%llu,\"packets_received\":%llu,"
               "\"logins_per_s\":%.1f,\"view_checked\":%llu,\"view_mismatches\":%llu,"
               "\"view_unknown\":%llu,\"view_ids_compared\":%llu,\"view_rechecked\":%llu,",
            (unsigned long long)s->calls_sent, (unsigned long long)s->calls_answered,
            (unsigned long long)s->chats_heard, (unsigned long long)s->moves_sent,
            (unsigned long long)s->corrections, bots_stats_rtt_ms(s, 0.5),
            bots_stats_rtt_ms(s, 0.99), (double)s->rtt_max_us / 1000.0,
            (unsigned long long)s->bytes_sent, (unsigned long long)s->bytes_received,
            (unsigned long long)s->packets_sent, (unsigned long long)s->packets_received,
            bots_stats_login_rate(s), (unsigned long long)s->view_checked,
            (unsigned long long)s->view_mismatches, (unsigned long long)s->view_unknown,
            (unsigned long long)s->view_ids_compared, (unsigned long long)s->view_rechecked);
    fprintf(f, "\"update_samples\":%llu,\"update_p50_ms\":%.3f,\"update_p99_ms\":%.3f,"
               "\"update_max_ms\":%.3f,\"update_mean_ms\":%.3f,\"update_unmatched\":%llu,"
               "\"steady_s\":%.1f,\"view_avg\":%.1f,\"faults\":",
            (unsigned long long)s->update->n, lat_hist_ms(s->update, 0.5),
            lat_hist_ms(s->update, 0.99), lat_hist_max_ms(s->update),
            lat_hist_mean_ms(s->update), (unsigned long long)s->update_unmatched,
            bots_stats_steady_s(s), bots_stats_view_avg(s));
    fault_watch_print_json(&s->faults, s->faults_until_ms, f);
    fputs(",\"baseapps\":[", f);
    for (size_t i = 0; i < s->nbaseapps; i++) {
        const bots_baseapp *b = &s->baseapps[i];
        fprintf(f, "%s{\"addr\":\"%s\",\"logged_in\":%llu,\"ended_early\":%llu,"
                   "\"calls_sent\":%llu,\"calls_answered\":%llu}",
                i ? "," : "", b->addr, (unsigned long long)b->logged_in,
                (unsigned long long)b->ended_early, (unsigned long long)b->calls_sent,
                (unsigned long long)b->calls_answered);
    }
    fputs("]}\n", f);
}
