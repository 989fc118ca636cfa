/* The load of each cell this cellapp serves (cellapp.h "cell_work.c"; docs/WORLD.md "Load
 * balancing"): the work done for each space, folded at the end of every view update into a
 * load smoothed as the tick load is (a sample is the work since the last fold over the time
 * since it, at least one period). What counts: the view update's units of the space's
 * witnesses and entities (aoi_tick.c), the ghost upkeep of its reals (ghosts.c) and its
 * entities' timers (the engine's on_timer_work hook). */
#include "cellapp.h"
#include "common/clock.h"

#include <math.h>
#include <stdio.h>

static cell_state *state(mc_engine *e) { return mc_engine_role_state(e); }

void cell_work_add(mc_space *sp, uint64_t work_us)
{
    if (sp && work_us <= UINT64_MAX - sp->work_us)
        sp->work_us += work_us;
}

void cell_work_of_entity(mc_engine *e, int32_t id, uint64_t work_us)
{
    mc_entity *ent = mc_engine_find(e, id);
    if (ent && ent->space)
        cell_work_add(ent->space, work_us);
}

void cell_work_on_timer(mc_engine *e, int32_t entity, uint64_t work_us)
{
    cell_work_of_entity(e, entity, work_us);
}

void cell_work_fold(mc_engine *e)
{
    cell_state *cs = state(e);
    mc_time_us now = mc_clock_now_us();
    double period_us = 1e6 / (cs->aoi.hz ? cs->aoi.hz : 10);
    double took = cs->work_folded_at && now > cs->work_folded_at
                      ? (double)(now - cs->work_folded_at)
                      : period_us;
    if (took < period_us)
        took = period_us;
    cs->work_folded_at = now;
    for (size_t i = 0; i < cs->n; i++) {
        mc_space *sp = cs->spaces[i];
        double sample = (double)sp->work_us / took;
        sp->load = 0.8 * sp->load + 0.2 * sample;
        if (!isfinite(sp->load) || sp->load < 0)
            sp->load = 0;
        sp->work_us = 0;
    }
}

double cell_work_load(const mc_space *sp)
{
    double l = sp->load + sp->load_boost;
    if (!(l >= 0))
        return 0;
    return l > CELL_WORK_LOAD_MAX ? CELL_WORK_LOAD_MAX : l;
}

static void get_load(void *ctx, mc_watch_value *out) { out->as.f = cell_work_load(ctx); }

static void get_boost(void *ctx, mc_watch_value *out)
{
    out->as.f = ((mc_space *)ctx)->load_boost;
}

static bool set_boost(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    if (!(v->as.f >= 0 && v->as.f <= 100)) {
        snprintf(why, whylen, "not within 0..100");
        return false;
    }
    ((mc_space *)ctx)->load_boost = v->as.f;
    return true;
}

void cell_work_watchers(mc_engine *e, mc_space *sp)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    char p[MC_WATCH_MAX_PATH];
    snprintf(p, sizeof p, "spaces/%d/load", (int)sp->id);
    mc_watch_add(w, p, MC_WATCH_FLOAT, MC_WATCH_READ_ONLY, get_load, NULL, sp);
    snprintf(p, sizeof p, "spaces/%d/loadBoost", (int)sp->id);
    mc_watch_add(w, p, MC_WATCH_FLOAT, MC_WATCH_READ_WRITE, get_boost, set_boost, sp);
}
