/* What a fault costs the players, as bots see it: a *mark* (SIGUSR1 to bots, sent by
 * world-bench right after it kills a process) starts watching every bot playing then; a bot
 * has *recovered* once world updates reach its client again after the mark, and is *kept* when
 * it recovered and is still playing at the end. A silence of FAULT_WATCH_GAP_MS or more
 * within FAULT_WATCH_SPAN_MS of the mark (or until the next mark, whose fault is another)
 * belongs to the fault: recovery is counted from the
 * mark to the first update after the last such silence (so an update already in flight when
 * the process died does not count as a recovery). A bot with nobody in its view has nothing
 * to hear, fault or not: while it is *alone* (no other playing bot within its view radius,
 * as the host finds it: fault_watch_alone) its silence does not count, and a bot alone
 * before it recovered (or alone all along) is kept without a recovery time (counted as
 * `alone`): what the fault cost it could not be seen. docs/tools/bots.md, world-bench.md.
 */
#ifndef MC_CLIENT_FAULT_WATCH_H
#define MC_CLIENT_FAULT_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define FAULT_WATCH_MARKS 8u
#define FAULT_WATCH_GAP_MS 1000u
#define FAULT_WATCH_SPAN_MS 60000u

typedef struct {
    uint64_t at_ms;
    uint32_t watched;       /* bots playing at the mark */
    uint64_t *recovered_ms; /* per bot: the first update after the last silence; 0: none */
    uint64_t *last_ms;      /* per bot: its last update since the mark, or the last time it
                             * was alone if later */
    uint8_t *state;         /* per bot: 0 not watched, 1 watched, 2 ended after the mark */
    uint8_t *alone;         /* per bot: 1 alone before it recovered (no recovery time) */
} fault_mark;

/* What a mark came to (fault_watch_result). */
typedef struct {
    uint64_t at_ms;
    uint32_t watched, kept, ended, silent;  /* kept + ended + silent = watched */
    uint32_t alone; /* of the kept: alone before they recovered, so not timed */
    double recovery_p50_ms, recovery_p99_ms, recovery_max_ms; /* over the kept, timed bots */
} fault_result;

typedef struct {
    uint32_t bots;
    uint32_t nmarks;
    uint32_t refused;  /* marks beyond FAULT_WATCH_MARKS or out of memory */
    fault_mark marks[FAULT_WATCH_MARKS];
} fault_watch;

void fault_watch_init(fault_watch *w, uint32_t bots);
void fault_watch_free(fault_watch *w);
/* A mark at now_ms; playing(i) says whether bot i plays now. 0, or -1 when refused. */
int fault_watch_mark(fault_watch *w, uint64_t now_ms, bool (*playing)(void *ud, uint32_t i),
                     void *ud);
/* Bot i's client was sent world updates at now_ms. */
void fault_watch_world(fault_watch *w, uint32_t i, uint64_t now_ms);
/* Bot i had nobody in its view at now_ms (no other playing bot within its view radius):
 * nothing to hear, so the silence up to now does not count against it. */
void fault_watch_alone(fault_watch *w, uint32_t i, uint64_t now_ms);
/* Bot i's channel ended for good (not a logout) at now_ms: lost to the marks watching then. */
void fault_watch_ended(fault_watch *w, uint32_t i, uint64_t now_ms);
/* Mark k as it stands at now_ms (a bot silent since before now_ms - FAULT_WATCH_GAP_MS, or
 * that never recovered, is silent). */
fault_result fault_watch_result(const fault_watch *w, uint32_t k, uint64_t now_ms);
/* Whether bot i counts as silent for mark k at now_ms (as in fault_watch_result); *last_ms
 * (may be NULL): its last update in the mark's span, 0 when none. */
bool fault_watch_silent(const fault_watch *w, uint32_t k, uint32_t i, uint64_t now_ms,
                        uint64_t *last_ms);
/* The results as a JSON array (`[{"at_ms":...},...]`), or table lines. */
void fault_watch_print_json(const fault_watch *w, uint64_t now_ms, FILE *f);
void fault_watch_print_table(const fault_watch *w, uint64_t now_ms, FILE *f);

#endif
