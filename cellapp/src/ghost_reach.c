/* The reach of a cell (docs/WORLD.md "Witnesses that see far"): a witness may see farther
 * than the cellapp's --aoiRadius (mc_setAoIRadius, up to --aoiMaxRadius), farther than the
 * ghost distance the other cellapps ghost their reals within. So each cellapp tells the
 * cellapps serving the other cells of a split space how far the witnesses of its cell see
 * (GHOST_REACH: the largest radius + hysteresis among them, 0 when none is beyond the
 * cellapp's own), and each ghosts its reals to a cell within that cell's reach +
 * --ghostMargin as well as within its own ghost distance.
 *
 * Growth is told at once, a shrink only once the witnesses have needed less for REACH_HOLD_US
 * (a witness switching its radius back and forth does not make ghosts come and go), at most
 * one GHOST_REACH per space and neighbour per REACH_GAP_US, and again every REACH_REFRESH_US
 * while beyond (a cellapp given a cell later hears it; a lost word is made good). A reach not
 * heard for REACH_STALE_US (its cellapp died, or stopped serving the cell) counts no more. */
#include "cell_layout.h"
#include "cellapp.h"
#include "common/log.h"
#include "entity/ghost_wire.h"
#include "server/server.h"

#include <stdio.h>
#include <stdlib.h>

#define REACH_HOLD_US (3 * MC_US_PER_S)
#define REACH_GAP_US (MC_US_PER_S / 4)
#define REACH_REFRESH_US (1 * MC_US_PER_S)
#define REACH_STALE_US (5 * MC_US_PER_S)

typedef struct cell_reach {
    uint64_t sent, changes, send_failures;   /* as the witnesses' cellapp */
    uint64_t taken, refused, stale;          /* as the reals' */
    uint64_t clamped; /* reaches beyond this cellapp's --aoiMaxRadius, taken as that */
} cell_reach;

static cell_state *state(mc_engine *e) { return mc_engine_role_state(e); }

static bool log_ok(uint64_t n) { return n <= 10 || n % 1000 == 0; }

double cell_reach_distance(const struct cell_layout *l, size_t i, double base, double margin,
                           mc_time_us now)
{
    const cell_rect *c = &l->cells[i];
    if (c->reach > 0 && now - c->reach_at < REACH_STALE_US && c->reach + margin > base)
        return c->reach + margin;
    return base;
}

/* Reaches not heard for REACH_STALE_US count no more (also in the watchers). */
static void expire(cell_layout *l, mc_time_us now)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->cells[i].reach > 0 && now - l->cells[i].reach_at >= REACH_STALE_US)
            l->cells[i].reach = 0;
}

static void send_reach(mc_engine *e, const cell_layout *l, float reach)
{
    cell_reach *r = state(e)->reach;
    mc_ostream os;
    mc_ostream_init(&os);
    mc_ghost_reach_encode(&os, l->space, reach);
    for (size_t i = 0; mc_ostream_ok(&os) && i < l->n; i++) {
        if ((int)i == l->own)
            continue;
        if (mc_engine_send(e, &l->cells[i].addr, MC_MSG_GHOST_REACH, os.data, os.size) ==
            MC_CALL_OK)
            r->sent++;
        else
            r->send_failures++;
    }
    mc_ostream_free(&os);
}

void cell_reach_tell(mc_engine *e, mc_space *sp, float need, mc_time_us now)
{
    cell_state *cs = state(e);
    cell_layout *l = sp->layout;
    if (!cs->reach || !l)
        return;
    expire(l, now);
    if (l->own < 0 || l->n < 2)
        return;
    if (!(need > cs->aoi.radius + cs->aoi.hysteresis))
        need = 0; /* the cellapp's own ghost distance covers it */
    float told = sp->reach_told, next = told;
    if (need > told) {
        next = need;
    } else if (need < told) {
        if (!sp->reach_low_since)
            sp->reach_low_since = now;
        if (now - sp->reach_low_since >= REACH_HOLD_US)
            next = need;
    } else {
        sp->reach_low_since = 0;
    }
    bool due = next != told || (told > 0 && now - sp->reach_told_at >= REACH_REFRESH_US);
    if (!due || (sp->reach_told_at && now - sp->reach_told_at < REACH_GAP_US))
        return;
    if (next != told) {
        cs->reach->changes++;
        MC_INFO("space %d: the reach of this cell is %g m now (was %g; 0: the ghost distance)",
                (int)sp->id, (double)next, (double)told);
    }
    send_reach(e, l, next);
    sp->reach_told = next;
    sp->reach_told_at = now;
    if (next <= need)
        sp->reach_low_since = 0;
}

void cell_on_ghost_reach(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    cell_state *cs = state(e);
    cell_reach *r = cs->reach;
    char why[MC_REASON_MAX] = "", a[MC_ADDRESS_STRLEN];
    int32_t space;
    float reach;
    if (!r)
        return;
    if (o->local || !mc_server_peer_is_live(mc_engine_server(e), &o->addr, MC_ROLE_CELLAPP))
        snprintf(why, sizeof why, "not from a live cellapp");
    else
        (void)mc_ghost_reach_decode(is, &space, &reach, why, sizeof why);
    if (why[0]) {
        if (log_ok(++r->refused))
            MC_WARNING("GHOST_REACH from %s refused: %s (%llu so far)",
                       mc_address_format(&o->addr, a, sizeof a), why,
                       (unsigned long long)r->refused);
        return;
    }
    if (reach > cs->aoi.max_radius) {
        /* the sender's limit is higher: its far witnesses get what this cellapp's own
         * would (never more: this cellapp bounds the ghosts it sends) */
        if (log_ok(++r->clamped))
            MC_WARNING("GHOST_REACH from %s: %g m is beyond --aoiMaxRadius %g here: taken as "
                       "%g (%llu so far)",
                       mc_address_format(&o->addr, a, sizeof a), (double)reach,
                       (double)cs->aoi.max_radius, (double)cs->aoi.max_radius,
                       (unsigned long long)r->clamped);
        reach = cs->aoi.max_radius;
    }
    mc_space *sp = space_find(e, space);
    cell_layout *l = sp ? sp->layout : NULL;
    for (size_t i = 0; l && i < l->n; i++)
        if ((int)i != l->own && mc_address_equal(&l->cells[i].addr, &o->addr)) {
            l->cells[i].reach = reach;
            l->cells[i].reach_at = mc_clock_now_us();
            r->taken++;
            return;
        }
    r->stale++; /* no such space here, or the sender serves no cell of it (any more) */
}

int cell_reach_init(mc_engine *e, char *err, size_t errlen)
{
    cell_state *cs = state(e);
    cell_reach *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cs->reach = r;
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    struct {
        const char *path;
        uint64_t *v;
    } c[] = {{"ghosts/reachSent", &r->sent},       {"ghosts/reachChanges", &r->changes},
             {"ghosts/reachSendFailures", &r->send_failures},
             {"ghosts/reachTaken", &r->taken},     {"ghosts/reachRefused", &r->refused},
             {"ghosts/reachStale", &r->stale},
             {"ghosts/reachClamped", &r->clamped}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (mc_watch_add_uint(w, c[i].path, c[i].v, MC_WATCH_READ_ONLY) != MC_WATCH_OK) {
            snprintf(err, errlen, "cannot publish %s", c[i].path);
            return -1;
        }
    return 0;
}

void cell_reach_free(mc_engine *e)
{
    cell_state *cs = state(e);
    if (!cs)
        return;
    free(cs->reach);
    cs->reach = NULL;
}
