/* Base backups: options, the tick, the watchers and the glue to the baseapp's role
 * (backup.h). */
#include "backup.h"
#include "db/db.h"
#include "common/log.h"
#include "entity/backup_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BACKUP_TICK_MS 50

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    base_backup *b = ctx;
    mc_time_us now = mc_clock_now_us();
    backup_send_tick(b, now);
    backup_expire_calls(b, now);
    /* deaths past their grace: what no restorer took over is released */
    while (b->ndeaths && now - b->deaths[0].at >= b->grace_ms * MC_US_PER_MS) {
        backup_death d = b->deaths[0];
        memmove(&b->deaths[0], &b->deaths[1], (b->ndeaths - 1) * sizeof d);
        b->ndeaths--;
        db_on_process_death(b->e, d.name, 0, "", d.incarnation, d.addr, false);
    }
}

bool backup_owner_in_grace(mc_engine *e, const char *owner_name, uint64_t incarnation)
{
    base_backup *b = backup_of(e);
    for (size_t i = 0; b && owner_name && i < b->ndeaths; i++)
        if (strcmp(b->deaths[i].name, owner_name) == 0 &&
            (!incarnation || b->deaths[i].incarnation == incarnation))
            return true;
    return false;
}

static void get_pending(void *ctx, mc_watch_value *out)
{
    base_backup *b = ctx;
    out->as.u = b->nsweep > b->sweep_pos ? b->nsweep - b->sweep_pos : 0;
}

#define HELD_MAX_LO 1024ULL
#define HELD_MAX_HI 17179869184ULL

static void get_held_max(void *ctx, mc_watch_value *out)
{
    out->as.u = ((base_backup *)ctx)->held_max_bytes;
}

/* Lowering it forgets nothing already held: only new backups are refused beyond it. */
static bool set_held_max(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    if (v->as.u < HELD_MAX_LO || v->as.u > HELD_MAX_HI) {
        snprintf(why, whylen, "%llu is not within %llu..%llu", (unsigned long long)v->as.u,
                 HELD_MAX_LO, HELD_MAX_HI);
        return false;
    }
    ((base_backup *)ctx)->held_max_bytes = v->as.u;
    return true;
}

static int add_watchers(base_backup *b)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(b->e));
    struct {
        const char *path;
        uint64_t *v;
    } counters[] = {
        {"backups/sent", &b->st.sent},
        {"backups/bytesSent", &b->st.bytes_sent},
        {"backups/dropsSent", &b->st.drops_sent},
        {"backups/unchanged", &b->st.unchanged},
        {"backups/noBackupBaseapp", &b->st.no_backup_app},
        {"backups/encodeFailed", &b->st.encode_failed},
        {"backups/received", &b->st.received},
        {"backups/refused", &b->st.refused},
        {"backups/dropped", &b->st.dropped},
        {"backups/heldFull", &b->st.held_full},
        {"backups/refusalsSent", &b->st.refusals_sent},
        {"backups/notFromLiveBaseapp", &b->st.not_live},
        {"backups/liveHere", &b->st.live_here},
        {"backups/refusals", &b->st.refusals},
        {"backups/held", &b->nheld},
        {"backups/heldBytes", &b->held_bytes},
        {"backups/restored", &b->st.restored},
        {"backups/lostBases", &b->st.lost_bases},
        {"backups/notOurs", &b->st.not_ours},
        {"backups/restoreFailed", &b->st.restore_failed},
        {"backups/takeovers", &b->st.takeovers},
        {"backups/takeoversFailed", &b->st.takeovers_failed},
        {"backups/calls/waiting", &b->nwaiting},
        {"backups/calls/waited", &b->st.calls_waited},
        {"backups/calls/released", &b->st.calls_released},
        {"backups/calls/expired", &b->st.calls_expired},
        {"backups/calls/refused", &b->st.calls_refused},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        bad |= mc_watch_add_uint(w, counters[i].path, counters[i].v, MC_WATCH_READ_ONLY) !=
               MC_WATCH_OK;
    bad |= mc_watch_add(w, "backups/heldMaxBytes", MC_WATCH_UINT, MC_WATCH_READ_WRITE,
                        get_held_max, set_held_max, b) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "backups/pending", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_pending,
                        NULL, b) != MC_WATCH_OK;
    return bad ? -1 : 0;
}

static bool in_range(const mc_config *cfg, const char *name, uint64_t lo, uint64_t hi,
                     uint64_t *out, char *err, size_t errlen)
{
    *out = mc_config_get_uint(cfg, name);
    if (*out < lo || *out > hi) {
        snprintf(err, errlen, "--%s: %llu is not within %llu..%llu", name,
                 (unsigned long long)*out, (unsigned long long)lo, (unsigned long long)hi);
        return false;
    }
    return true;
}

int backup_init(mc_engine *e, char *err, size_t errlen)
{
    base_backup *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    b->e = e;
    baseapp_of(e)->backup = b;
    const mc_config *cfg = mc_server_config(mc_engine_server(e));
    b->period_ms = mc_config_get_uint(cfg, "backupPeriodMs");
    if ((b->period_ms && !in_range(cfg, "backupPeriodMs", 100, 600000, &b->period_ms, err,
                                   errlen)) ||
        !in_range(cfg, "backupBytesPerSec", 1000, 1000000000, &b->bytes_per_sec, err,
                  errlen) ||
        !in_range(cfg, "backupHeldMaxBytes", HELD_MAX_LO, HELD_MAX_HI, &b->held_max_bytes, err,
                  errlen) ||
        !in_range(cfg, "restoreWaitMax", 1, 1000000, &b->wait_max, err, errlen) ||
        !in_range(cfg, "restoreWaitMs", 100, 600000, &b->wait_ms, err, errlen) ||
        !in_range(cfg, "restoreGraceMs", 100, 600000, &b->grace_ms, err, errlen))
        return -1;
    b->tick_ev = event_new(mc_server_event_base(mc_engine_server(e)), -1, EV_PERSIST, on_tick,
                           b);
    if (!b->tick_ev || add_watchers(b) != 0) {
        snprintf(err, errlen, "cannot set up the backups (out of memory)");
        return -1;
    }
    struct timeval tv = {0, BACKUP_TICK_MS * 1000};
    event_add(b->tick_ev, &tv);
    return 0;
}

void backup_free(mc_engine *e)
{
    base_backup *b = backup_of(e);
    if (!b)
        return;
    if (b->tick_ev)
        event_free(b->tick_ev);
    backup_send_free(b);
    backup_hold_free(b);
    free(b);
    baseapp_of(e)->backup = NULL;
}

void backup_count_takeover(mc_engine *e, bool ok)
{
    base_backup *b = backup_of(e);
    if (b && ok)
        b->st.takeovers++;
    else if (b)
        b->st.takeovers_failed++;
}

void backup_count_lost(mc_engine *e, const char *name, uint64_t n)
{
    base_backup *b = backup_of(e);
    if (!b)
        return;
    b->st.lost_bases += n;
    MC_WARNING("%llu persistent bases of %s were not restored from a backup "
               "(backups/lostBases): their check-outs are released, they can be "
               "loaded again with what they had at their last write",
               (unsigned long long)n, name);
}

/* The backups' state, or NULL after refusing the message. */
static base_backup *backup_for_message(mc_engine *e, const mc_origin *o)
{
    base_backup *b = backup_of(e);
    if (!b)
        mc_engine_refuse(e, o, MC_REFUSE_WRONG_PART, MC_CALL_ERR_UNAVAILABLE,
                         "backups are not set up");
    return b;
}

void backup_on_backup_base(mc_engine *e, const mc_origin *o, mc_istream *data)
{
    base_backup *b = backup_for_message(e, o);
    if (b)
        backup_on_backup(b, o, data);
}

void backup_on_backup_drop(mc_engine *e, const mc_origin *o, mc_istream *data)
{
    base_backup *b = backup_for_message(e, o);
    if (b)
        backup_on_drop(b, o, data);
}

void backup_on_backup_refused(mc_engine *e, const mc_origin *o, mc_istream *data)
{
    base_backup *b = backup_for_message(e, o);
    if (b)
        backup_on_refused(b, o, data);
}

void backup_on_process_death(mc_engine *e, const char *addr, uint64_t incarnation,
                             const char *owner_name, bool stopped)
{
    base_backup *b = backup_of(e);
    mc_address dead;
    if (!b || mc_address_parse(addr, &dead) != MC_OK)
        return;
    if (stopped) {
        /* a graceful shutdown wrote and released its bases: nothing to restore */
        size_t n = 0;
        int32_t *ids = backup_held_ids(b, &dead, &n);
        for (size_t i = 0; i < n; i++) {
            backup_held *h = mc_map_get(&b->held, (uint64_t)ids[i], 0);
            if (h) {
                backup_release_calls(b, h->id, false);
                backup_forget(b, h);
            }
        }
        free(ids);
        if (n)
            MC_INFO("dropped %zu backups of %s: it shut down", n, owner_name);
        return;
    }
    if (b->ndeaths == BACKUP_DEATHS_MAX) { /* the oldest goes now */
        backup_death d = b->deaths[0];
        memmove(&b->deaths[0], &b->deaths[1], (b->ndeaths - 1) * sizeof d);
        b->ndeaths--;
        db_on_process_death(e, d.name, 0, "", d.incarnation, d.addr, false);
    }
    backup_death *d = &b->deaths[b->ndeaths++];
    snprintf(d->name, sizeof d->name, "%s", owner_name);
    snprintf(d->addr, sizeof d->addr, "%s", addr);
    d->incarnation = incarnation;
    d->at = mc_clock_now_us();
    backup_restore_from(b, &dead, owner_name, incarnation);
}
