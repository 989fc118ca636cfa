/* entity-bench's game module: a Bench base drives calls to its own cell and times them.
 *
 * One-way phase: hit() calls in batches, each batch followed by a two-way sync() whose
 * answer says how many hits the cell has seen; at most `window` syncs are outstanding, so
 * the calls in flight stay bounded by batch x window and the pace is whatever the path
 * (base engine, mercury, cell engine) sustains. Two-way phase: rtt() calls one at a time,
 * each timed from the send to its callback with the engine clock (mc_time).
 *
 * The bench reads the outcome with report() (watcher command/call). A module-level record
 * holds the round-trip samples: one Bench base per baseapp is expected (the bench makes one).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/entity_api.h"
#include "game.h"

enum { STATE_IDLE = 0, STATE_RUNNING = 1, STATE_DONE = 2, STATE_FAILED = 3 };
enum { MODE_ONE_WAY = 1, MODE_TWO_WAY = 2 };

static struct {
    uint32_t mode, count, batch, window, outstanding;
    double t0;      /* engine seconds at the first send */
    double t_sent;  /* two-way: when the call now outstanding was sent */
    double *samples; /* two-way: microseconds per round trip */
    uint32_t nsamples;
    uint32_t cell_errors;
} run_;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The sample at quantile q (nearest rank) of a sorted array. */
static double quantile(const double *v, uint32_t n, double q)
{
    if (n == 0)
        return 0;
    double rank = ceil(q * n);
    uint32_t i = rank < 1 ? 0 : (uint32_t)rank - 1;
    return v[i < n ? i : n - 1];
}

static void finish(const mc_call_ctx *call, Bench_base *self, int state)
{
    self->elapsedUs = (mc_time(call) - run_.t0) * 1e6;
    self->state = state;
    if (run_.mode == MODE_TWO_WAY && run_.nsamples > 0) {
        qsort(run_.samples, run_.nsamples, sizeof *run_.samples, cmp_double);
        self->p50Us = quantile(run_.samples, run_.nsamples, 0.50);
        self->p99Us = quantile(run_.samples, run_.nsamples, 0.99);
        self->maxUs = run_.samples[run_.nsamples - 1];
    }
    /* The samples are summarised: nothing stays allocated between phases. */
    free(run_.samples);
    run_.samples = NULL;
    run_.nsamples = 0;
}

static void fail(const mc_call_ctx *call, Bench_base *self, int status)
{
    self->failures++;
    self->lastError = status;
    finish(call, self, STATE_FAILED);
}

static void pump_one_way(const mc_call_ctx *call, Bench_base *self);

static void on_sync(const mc_call_ctx *call, void *ud, int status, uint32_t seen,
                    uint32_t order_errors)
{
    Bench_base *self = mc_self(call);
    if (!self || self->state != STATE_RUNNING)
        return;
    run_.outstanding--;
    if (status != MC_CALL_OK) {
        fail(call, self, status);
        return;
    }
    self->answered++;
    self->cellSeen = seen;
    run_.cell_errors = order_errors;
    if (self->sent == run_.count && run_.outstanding == 0) {
        finish(call, self, STATE_DONE);
        return;
    }
    pump_one_way(call, self);
}

static void pump_one_way(const mc_call_ctx *call, Bench_base *self)
{
    mc_mailbox_ref cell = mc_base_cell(call);
    while (self->state == STATE_RUNNING && run_.outstanding < run_.window &&
           self->sent < run_.count) {
        uint32_t n = run_.count - self->sent < run_.batch ? run_.count - self->sent : run_.batch;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t seq = self->sent + 1;
            int rc = send_Bench_cell_hit(call->sink, &cell, seq, (float)(seq & 1023) * 0.5f);
            if (rc != MC_CALL_OK) {
                fail(call, self, rc);
                return;
            }
            self->sent = seq;
        }
        int rc = send_Bench_cell_sync(call->sink, &cell, self->sent, on_sync, NULL);
        if (rc != MC_CALL_OK) {
            fail(call, self, rc);
            return;
        }
        run_.outstanding++;
    }
}

static int send_rtt(const mc_call_ctx *call, Bench_base *self);

static void on_rtt(const mc_call_ctx *call, void *ud, int status, uint32_t seq)
{
    Bench_base *self = mc_self(call);
    if (!self || self->state != STATE_RUNNING)
        return;
    double now = mc_time(call);
    run_.outstanding = 0;
    if (status != MC_CALL_OK) {
        fail(call, self, status);
        return;
    }
    if (seq != self->sent) {
        fail(call, self, MC_CALL_ERR_ARGS);
        return;
    }
    self->answered++;
    if (run_.nsamples < run_.count)
        run_.samples[run_.nsamples++] = (now - run_.t_sent) * 1e6;
    if (self->sent == run_.count) {
        finish(call, self, STATE_DONE);
        return;
    }
    int rc = send_rtt(call, self);
    if (rc != MC_CALL_OK)
        fail(call, self, rc);
}

static int send_rtt(const mc_call_ctx *call, Bench_base *self)
{
    mc_mailbox_ref cell = mc_base_cell(call);
    uint32_t seq = self->sent + 1;
    run_.t_sent = mc_time(call);
    int rc = send_Bench_cell_rtt(call->sink, &cell, seq, on_rtt, NULL);
    if (rc == MC_CALL_OK) {
        self->sent = seq;
        run_.outstanding = 1;
    }
    return rc;
}

/* ---- base ---------------------------------------------------------------------------- */

int Bench_base_makeCell(const mc_call_ctx *call, Bench_base *self)
{
    int rc = mc_createInNewSpace(call, NULL, NULL);
    if (rc != MC_CALL_OK)
        self->lastError = rc;
    return 0;
}

int Bench_base_onGetCell(const mc_call_ctx *call, Bench_base *self)
{
    self->hasCell = 1;
    return 0;
}

int Bench_base_onLoseCell(const mc_call_ctx *call, Bench_base *self)
{
    self->hasCell = 0;
    if (self->state == STATE_RUNNING)
        fail(call, self, MC_CALL_ERR_NO_ENTITY);
    return 0;
}

int Bench_base_onCreateCellFailure(const mc_call_ctx *call, Bench_base *self, const char *reason)
{
    self->lastError = MC_CALL_ERR_UNAVAILABLE;
    return 0;
}

int Bench_base_run(const mc_call_ctx *call, Bench_base *self, uint32_t mode, uint32_t count,
                   uint32_t batch, uint32_t window, int32_t *out_rc)
{
    *out_rc = MC_CALL_OK;
    if (self->state == STATE_RUNNING || !self->hasCell) {
        *out_rc = MC_CALL_ERR_STATE;
        return 0;
    }
    if ((mode != MODE_ONE_WAY && mode != MODE_TWO_WAY) || count == 0 || batch == 0 ||
        window == 0) {
        *out_rc = MC_CALL_ERR_ARGS;
        return 0;
    }
    free(run_.samples);
    memset(&run_, 0, sizeof run_);
    if (mode == MODE_TWO_WAY) {
        run_.samples = malloc((size_t)count * sizeof *run_.samples);
        if (!run_.samples) {
            *out_rc = MC_CALL_ERR_BUSY;
            return 0;
        }
    }
    run_.mode = mode;
    run_.count = count;
    run_.batch = batch;
    run_.window = window;
    self->state = STATE_RUNNING;
    self->sent = self->answered = self->failures = self->cellSeen = 0;
    self->lastError = 0;
    self->elapsedUs = self->p50Us = self->p99Us = self->maxUs = 0;
    mc_mailbox_ref cell = mc_base_cell(call);
    int rc = send_Bench_cell_reset(call->sink, &cell);
    if (rc != MC_CALL_OK) {
        self->state = STATE_IDLE;
        *out_rc = rc;
        return 0;
    }
    run_.t0 = mc_time(call);
    if (mode == MODE_ONE_WAY) {
        pump_one_way(call, self);
    } else {
        rc = send_rtt(call, self);
        if (rc != MC_CALL_OK)
            fail(call, self, rc);
    }
    return 0;
}

int Bench_base_report(const mc_call_ctx *call, Bench_base *self, int32_t *out_state,
                      uint8_t *out_hasCell, uint32_t *out_done, uint32_t *out_cellSeen,
                      uint32_t *out_orderErrors, uint32_t *out_failures, int32_t *out_lastError,
                      double *out_elapsedUs, double *out_p50Us, double *out_p99Us,
                      double *out_maxUs)
{
    *out_state = self->state;
    *out_hasCell = self->hasCell;
    *out_done = self->answered;
    *out_cellSeen = self->cellSeen;
    *out_orderErrors = run_.cell_errors;
    *out_failures = self->failures;
    *out_lastError = self->lastError;
    *out_elapsedUs = self->elapsedUs;
    *out_p50Us = self->p50Us;
    *out_p99Us = self->p99Us;
    *out_maxUs = self->maxUs;
    return 0;
}

int Bench_base_onDestroy(const mc_call_ctx *call, Bench_base *self)
{
    free(run_.samples);
    memset(&run_, 0, sizeof run_);
    return 0;
}

/* ---- cell ---------------------------------------------------------------------------- */

int Bench_cell_reset(const mc_call_ctx *call, Bench_cell *self)
{
    self->seen = self->last = self->orderErrors = 0;
    self->sum = 0;
    return 0;
}

int Bench_cell_hit(const mc_call_ctx *call, Bench_cell *self, uint32_t seq, float x)
{
    if (seq != self->last + 1)
        self->orderErrors++;
    self->last = seq;
    self->seen++;
    self->sum += x;
    return 0;
}

int Bench_cell_sync(const mc_call_ctx *call, Bench_cell *self, uint32_t upTo, uint32_t *out_seen,
                    uint32_t *out_orderErrors)
{
    if (upTo != self->last)
        self->orderErrors++;
    *out_seen = self->seen;
    *out_orderErrors = self->orderErrors;
    return 0;
}

int Bench_cell_rtt(const mc_call_ctx *call, Bench_cell *self, uint32_t seq, uint32_t *out_seq)
{
    self->seen++;
    *out_seq = seq;
    return 0;
}
