/* Copies of cells on their bases (docs/WORLD.md "Cells restored"): every view-update period
 * (--aoiHz) the cellapp sends each real cell whose data changed since its last copy a
 * CELL_COPY (entity/restore_wire.h: space, position, direction, every cell property) to its
 * base, which keeps it as its cellData; when this cellapp dies the base restores its cell
 * from it on a live cellapp (baseapp/src/bases/base_restore.c).
 *
 * What changed is found by a digest of the copy's bytes (FNV-1a, 64 bits), kept per entity.
 * The bytes sent are bounded per second (--cellCopyBytesPerS, watcher copies/bytesPerS): a
 * bucket that fills at that rate up to one second's worth; a round that runs out of it stops
 * (copies/behind) and the next round starts where it stopped, so every cell gets its turn.
 * A round is a sliced job (server/sliced.h, --aoiSliceMs): no loop turn runs long. */
#include "cellapp.h"
#include "common/clock.h"
#include "common/log.h"
#include "entity/restore_wire.h"
#include "server/sliced.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cell_copies {
    mc_engine *e;
    struct event *period_ev;
    mc_sliced *job;
    int32_t *ids;               /* this round's cells, in id order from the resume point */
    size_t n, cap, at;
    int32_t resume;             /* the first id of the next round (the one a round stopped at) */
    double tokens;              /* bytes that may go now */
    mc_time_us filled_at;
    mc_ostream scratch;
    uint64_t bytes_per_s;       /* --cellCopyBytesPerS, copies/bytesPerS */
    uint64_t sent, bytes, behind, rounds, failures, unencodable;
};

static cell_state *state(mc_engine *e) { return mc_engine_role_state(e); }

static uint64_t digest(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h ? h : 1;
}

static int cmp_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void refill(cell_copies *c)
{
    mc_time_us now = mc_clock_now_us();
    double cap = (double)c->bytes_per_s;
    if (c->filled_at && now > c->filled_at)
        c->tokens += cap * (double)(now - c->filled_at) / 1e6;
    else if (!c->filled_at)
        c->tokens = cap;
    if (c->tokens > cap)
        c->tokens = cap;
    c->filled_at = now;
}

/* One cell: its copy encoded, sent when it changed and the bucket allows. False: the round
 * stops here (out of bytes). */
static bool copy_one(cell_copies *c, int32_t id)
{
    mc_engine *e = c->e;
    mc_entity *ent = mc_engine_find(e, id);
    if (!ent || ent->part != MC_PART_CELL || ent->in_reap || !ent->space || ent->move_state ||
        ent->gone_why < 0)
        return true; /* not a real cell here (moving, arriving, going) */
    mc_ostream *os = &c->scratch;
    mc_ostream_reset(os);
    mc_cell_copy_head h = {.entity_id = ent->id, .space_id = ent->space->id,
                           .position = ent->position, .direction = ent->direction};
    mc_cell_copy_encode(os, &h);
    char why[MC_REASON_MAX];
    if (ent->gt->props_encode(mc_engine_defs(e), MC_PART_CELL, ent->props, false, os, why,
                              sizeof why) != MC_CALL_OK ||
        !mc_ostream_ok(os)) {
        if (++c->unencodable <= 10)
            MC_WARNING("%s %d: cell properties do not encode (%s): no copy for its base",
                       ent->td->name, (int)ent->id, why);
        return true;
    }
    uint64_t d = digest(os->data, os->size);
    if (d == ent->copy_digest)
        return true;
    double cap = (double)c->bytes_per_s;
    if ((double)os->size > c->tokens && c->tokens < cap) {
        c->behind++;
        c->resume = id;
        return false;
    }
    mc_address base;
    mc_mailbox_address(&ent->base, &base);
    int rc = mc_engine_send(e, &base, MC_MSG_CELL_COPY, os->data, os->size);
    if (rc != MC_CALL_OK) {
        c->failures++; /* its base's process is dead: nobody to keep it */
        return true;
    }
    ent->copy_digest = d;
    c->tokens -= (double)os->size;
    c->sent++;
    c->bytes += os->size;
    return true;
}

static bool step(void *ctx)
{
    cell_copies *c = ctx;
    if (c->at >= c->n)
        return false;
    if (!copy_one(c, c->ids[c->at++]))
        return false;
    if (c->at >= c->n) {
        c->resume = 0; /* a full round: the next starts from the lowest id */
        return false;
    }
    return true;
}

static void done(void *ctx) { (void)ctx; }

static void collect(void *ctx, mc_entity *ent)
{
    cell_copies *c = ctx;
    if (c->n < c->cap)
        c->ids[c->n++] = ent->id;
}

static bool begin_round(cell_copies *c)
{
    const mc_entity_table *t = mc_engine_table(c->e);
    size_t want = t->count ? t->count : 1;
    if (want > c->cap) {
        int32_t *p = realloc(c->ids, (want + want / 4) * sizeof *p);
        if (!p) {
            MC_ERROR("out of memory listing %zu cells to copy; trying again next round", want);
            return false;
        }
        c->ids = p;
        c->cap = want + want / 4;
    }
    c->n = 0;
    c->at = 0;
    mc_entity_table_each(t, collect, c);
    qsort(c->ids, c->n, sizeof *c->ids, cmp_id);
    /* rotate: from the id the last round stopped at, then the lower ones */
    size_t from = 0;
    while (from < c->n && c->ids[from] < c->resume)
        from++;
    if (from && from < c->n) {
        int32_t *tmp = malloc(from * sizeof *tmp);
        if (tmp) {
            memcpy(tmp, c->ids, from * sizeof *tmp);
            memmove(c->ids, c->ids + from, (c->n - from) * sizeof *tmp);
            memcpy(c->ids + (c->n - from), tmp, from * sizeof *tmp);
            free(tmp);
        }
    }
    return c->n > 0;
}

static void on_period(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    cell_copies *c = ctx;
    if (mc_sliced_running(c->job))
        return; /* the last round is still going: it goes on */
    refill(c);
    mc_sliced_set_slice_us(c->job, mc_config_get_uint(mc_server_config(mc_engine_server(c->e)),
                                                      "aoiSliceMs") * MC_US_PER_MS);
    if (begin_round(c)) {
        c->rounds++;
        mc_sliced_start(c->job);
    }
}

static bool set_rate(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    cell_copies *c = ctx;
    if (v->as.u < CELL_COPY_MIN_RATE || v->as.u > CELL_COPY_MAX_RATE) {
        snprintf(why, whylen, "copies/bytesPerS must be within %u..%u", CELL_COPY_MIN_RATE,
                 CELL_COPY_MAX_RATE);
        return false;
    }
    c->bytes_per_s = v->as.u;
    if (c->tokens > (double)c->bytes_per_s)
        c->tokens = (double)c->bytes_per_s;
    return true;
}

static void get_rate(void *ctx, mc_watch_value *out)
{
    out->as.u = ((cell_copies *)ctx)->bytes_per_s;
}

int cell_copies_init(mc_engine *e, char *err, size_t errlen)
{
    mc_server *srv = mc_engine_server(e);
    const mc_config *cfg = mc_server_config(srv);
    uint64_t rate = mc_config_get_uint(cfg, "cellCopyBytesPerS");
    if (rate < CELL_COPY_MIN_RATE || rate > CELL_COPY_MAX_RATE) {
        snprintf(err, errlen, "--cellCopyBytesPerS %llu: must be within %u..%u",
                 (unsigned long long)rate, CELL_COPY_MIN_RATE, CELL_COPY_MAX_RATE);
        return -1;
    }
    cell_copies *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    state(e)->copies = c;
    c->e = e;
    c->bytes_per_s = rate;
    mc_ostream_init(&c->scratch);
    struct event_base *base = mc_server_event_base(srv);
    c->job = mc_sliced_new(base, mc_config_get_uint(cfg, "aoiSliceMs") * MC_US_PER_MS, step,
                           done, c);
    c->period_ev = event_new(base, -1, EV_PERSIST, on_period, c);
    if (!c->job || !c->period_ev) {
        snprintf(err, errlen, "cannot create the cell copy events");
        return -1;
    }
    mc_watchers *w = mc_server_watchers(srv);
    int bad = mc_watch_add(w, "copies/bytesPerS", MC_WATCH_UINT, MC_WATCH_READ_WRITE, get_rate,
                           set_rate, c);
    bad |= mc_watch_add_uint(w, "copies/sent", &c->sent, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "copies/bytes", &c->bytes, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "copies/behind", &c->behind, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "copies/rounds", &c->rounds, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "copies/failures", &c->failures, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "copies/unencodable", &c->unencodable, MC_WATCH_READ_ONLY);
    /* RESTORE_CELLs (cell_create.c) */
    bad |= mc_watch_add_uint(w, "restores/in", &state(e)->restored, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "restores/refused", &state(e)->restore_refused,
                             MC_WATCH_READ_ONLY);
    if (bad) {
        snprintf(err, errlen, "cannot publish the copies watchers");
        return -1;
    }
    uint64_t hz = mc_config_get_uint(cfg, "aoiHz");
    if (hz < 1)
        hz = 1;
    struct timeval tv = {0, (suseconds_t)(1000000u / hz)};
    if (hz == 1)
        tv = (struct timeval){1, 0};
    event_add(c->period_ev, &tv);
    return 0;
}

void cell_copies_free(mc_engine *e)
{
    cell_state *cs = state(e);
    cell_copies *c = cs ? cs->copies : NULL;
    if (!c)
        return;
    if (c->period_ev)
        event_free(c->period_ev);
    mc_sliced_free(c->job);
    mc_ostream_free(&c->scratch);
    free(c->ids);
    free(c);
    cs->copies = NULL;
}
