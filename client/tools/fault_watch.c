/* Bots' recovery after a fault: fault_watch.h. */
#include "fault_watch.h"

#include <stdlib.h>
#include <string.h>

void fault_watch_init(fault_watch *w, uint32_t bots)
{
    memset(w, 0, sizeof *w);
    w->bots = bots;
}

void fault_watch_free(fault_watch *w)
{
    for (uint32_t k = 0; k < w->nmarks; k++) {
        free(w->marks[k].recovered_ms);
        free(w->marks[k].last_ms);
        free(w->marks[k].state);
        free(w->marks[k].alone);
    }
    memset(w, 0, sizeof *w);
}

int fault_watch_mark(fault_watch *w, uint64_t now_ms, bool (*playing)(void *ud, uint32_t i),
                     void *ud)
{
    if (w->nmarks >= FAULT_WATCH_MARKS) {
        w->refused++;
        return -1;
    }
    fault_mark *m = &w->marks[w->nmarks];
    size_t n = w->bots ? w->bots : 1;
    m->recovered_ms = calloc(n, sizeof *m->recovered_ms);
    m->last_ms = calloc(n, sizeof *m->last_ms);
    m->state = calloc(n, 1);
    m->alone = calloc(n, 1);
    if (!m->recovered_ms || !m->last_ms || !m->state || !m->alone) {
        free(m->recovered_ms);
        free(m->last_ms);
        free(m->state);
        free(m->alone);
        memset(m, 0, sizeof *m);
        w->refused++;
        return -1;
    }
    m->at_ms = now_ms;
    for (uint32_t i = 0; i < w->bots; i++)
        if (playing(ud, i)) {
            m->state[i] = 1;
            m->watched++;
        }
    w->nmarks++;
    return 0;
}

/* Mark k watches until FAULT_WATCH_SPAN_MS after it, or the next mark (whose fault is not
 * its own), whichever comes first. */
static uint64_t span_end(const fault_watch *w, uint32_t k)
{
    uint64_t end = w->marks[k].at_ms + FAULT_WATCH_SPAN_MS;
    if (k + 1 < w->nmarks && w->marks[k + 1].at_ms < end)
        end = w->marks[k + 1].at_ms;
    return end;
}

void fault_watch_world(fault_watch *w, uint32_t i, uint64_t now_ms)
{
    if (i >= w->bots)
        return;
    for (uint32_t k = 0; k < w->nmarks; k++) {
        fault_mark *m = &w->marks[k];
        if (m->state[i] != 1 || now_ms < m->at_ms || now_ms >= span_end(w, k))
            continue;
        if (!m->recovered_ms[i] || now_ms - m->last_ms[i] >= FAULT_WATCH_GAP_MS)
            m->recovered_ms[i] = now_ms;
        m->last_ms[i] = now_ms;
    }
}

void fault_watch_alone(fault_watch *w, uint32_t i, uint64_t now_ms)
{
    if (i >= w->bots)
        return;
    for (uint32_t k = 0; k < w->nmarks; k++) {
        fault_mark *m = &w->marks[k];
        if (m->state[i] != 1 || now_ms < m->at_ms || now_ms >= span_end(w, k))
            continue;
        if (!m->recovered_ms[i])
            m->alone[i] = 1; /* its recovery, whenever it comes, is not the fault's alone */
        if (now_ms > m->last_ms[i])
            m->last_ms[i] = now_ms; /* nothing to hear: no silence */
    }
}

void fault_watch_ended(fault_watch *w, uint32_t i, uint64_t now_ms)
{
    if (i >= w->bots)
        return;
    for (uint32_t k = 0; k < w->nmarks; k++)
        if (w->marks[k].state[i] == 1 && now_ms >= w->marks[k].at_ms && now_ms < span_end(w, k))
            w->marks[k].state[i] = 2;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest sample with at least q of them at or below it. */
static double quantile_ms(const uint64_t *v, uint32_t n, double q)
{
    if (!n)
        return 0;
    double r = q * (double)n;
    uint32_t rank = (uint32_t)r;
    if ((double)rank < r)
        rank++;
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return (double)v[rank - 1];
}

/* Mark k's bot i (watched, not ended) heard nothing for a second or more, while it had
 * company, up to now_ms or the span's end (last_ms: its last update, or the last time it was
 * alone), or neither heard anything nor was alone since the mark. */
static bool quiet_at(const fault_watch *w, uint32_t k, uint32_t i, uint64_t now_ms)
{
    const fault_mark *m = &w->marks[k];
    uint64_t end = span_end(w, k);
    uint64_t horizon = now_ms < end ? now_ms : end;
    if (!m->last_ms[i])
        return true; /* nothing heard since the mark, and never alone */
    return horizon > m->last_ms[i] && horizon - m->last_ms[i] >= FAULT_WATCH_GAP_MS;
}

bool fault_watch_silent(const fault_watch *w, uint32_t k, uint32_t i, uint64_t now_ms,
                        uint64_t *last_ms)
{
    if (k >= w->nmarks || i >= w->bots || w->marks[k].state[i] != 1)
        return false;
    if (last_ms)
        *last_ms = w->marks[k].last_ms[i];
    return quiet_at(w, k, i, now_ms);
}

fault_result fault_watch_result(const fault_watch *w, uint32_t k, uint64_t now_ms)
{
    fault_result r = {0};
    if (k >= w->nmarks)
        return r;
    const fault_mark *m = &w->marks[k];
    r.at_ms = m->at_ms;
    r.watched = m->watched;
    uint64_t *rec = m->watched ? malloc(m->watched * sizeof *rec) : NULL;
    for (uint32_t i = 0; i < w->bots; i++) {
        if (m->state[i] == 2) {
            r.ended++;
        } else if (m->state[i] == 1) {
            /* kept: it recovered, and has not fallen silent since (within the span) */
            if (quiet_at(w, k, i, now_ms)) {
                r.silent++;
            } else {
                if (m->alone[i] || !m->recovered_ms[i])
                    r.alone++; /* (never recovered yet kept: alone all along) */
                else if (rec)
                    rec[r.kept - r.alone] = m->recovered_ms[i] - m->at_ms;
                r.kept++;
            }
        }
    }
    uint32_t timed = r.kept - r.alone;
    if (rec && timed) {
        qsort(rec, timed, sizeof *rec, cmp_u64);
        r.recovery_p50_ms = quantile_ms(rec, timed, 0.5);
        r.recovery_p99_ms = quantile_ms(rec, timed, 0.99);
        r.recovery_max_ms = (double)rec[timed - 1];
    }
    free(rec);
    return r;
}

void fault_watch_print_json(const fault_watch *w, uint64_t now_ms, FILE *f)
{
    fputc('[', f);
    for (uint32_t k = 0; k < w->nmarks; k++) {
        fault_result r = fault_watch_result(w, k, now_ms);
        fprintf(f,
                "%s{\"at_ms\":%llu,\"watched\":%u,\"kept\":%u,\"ended\":%u,\"silent\":%u,"
                "\"recovery_p50_ms\":%.0f,\"recovery_p99_ms\":%.0f,\"recovery_max_ms\":%.0f,"
                "\"alone\":%u}",
                k ? "," : "", (unsigned long long)r.at_ms, r.watched, r.kept, r.ended, r.silent,
                r.recovery_p50_ms, r.recovery_p99_ms, r.recovery_max_ms, r.alone);
    }
    fputc(']', f);
}

void fault_watch_print_table(const fault_watch *w, uint64_t now_ms, FILE *f)
{
    for (uint32_t k = 0; k < w->nmarks; k++) {
        fault_result r = fault_watch_result(w, k, now_ms);
        fprintf(f,
                "  fault mark %u     %u/%u kept (%u ended, %u silent), recovery ms p50 %.0f  "
                "p99 %.0f  max %.0f (%u kept alone, not timed)\n",
                k + 1, r.kept, r.watched, r.ended, r.silent, r.recovery_p50_ms,
                r.recovery_p99_ms, r.recovery_max_ms, r.alone);
    }
}
