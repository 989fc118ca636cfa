/* A retiring cellapp (docs/WORLD.md "A retiring cellapp"): on a graceful stop (SIGTERM,
 * command/shutdown) a cellapp serving cells of split spaces hands them over before it goes.
 * For each such space holding reals here it tells the manager its part went (SPACE_NOTICE
 * gone): the manager merges its cell into the neighbour and sends it the new layout, where
 * it serves no cell; from then on its reals are ghosted to the cellapps whose cells hold them
 * and offloaded there (ghosts.c), with their properties, timers, witness state and calls, as
 * any offload. The process stays registered (heartbeats go on) until none of those reals is
 * left here or --retireMs passed; then, as before, whatever is left tells its base it went
 * (CELL_GONE), and the process deregisters. A space served whole here has no neighbour to
 * merge into: the manager gives its cell, whole, to another live cellapp, and its reals
 * move there the same way; with none, it says the space is still this one's (a layout
 * with its cell) and its cells go with the process, as they always did. */
#include "cellapp.h"
#include "cell_layout.h"
#include "common/clock.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct cell_retire {
    bool retiring;       /* handing over: reals of handed spaces are still here */
    mc_time_us deadline;
    uint64_t retire_ms;  /* --retireMs */
    uint64_t handed;     /* spaces handed over (watcher retire/spaces) */
} cell_retire;

static cell_state *state(mc_engine *e) { return mc_engine_role_state(e); }

static void tell(void *ctx, mc_entity *ent)
{
    cell_tell_base_gone(ctx, ent, MC_CELL_GONE_SHUTDOWN);
}

/* Reals still here in spaces this cellapp serves no cell of (handed over, on their way). */
static size_t left(mc_engine *e)
{
    cell_state *cs = state(e);
    size_t n = 0;
    for (size_t s = 0; s < cs->n; s++) {
        const mc_space *sp = cs->spaces[s];
        if (sp->layout && sp->layout->own < 0)
            n += sp->nreal;
        else if (sp->layout && sp->layout->n > 1)
            n += sp->nreal; /* (the layout without its cell has not come yet) */
        else if (sp->handed && !sp->layout)
            n += sp->nreal; /* served whole: the manager's answer has not come yet */
    }
    return n;
}

static void finish(mc_engine *e)
{
    /* Bases hear now, while the channels are still flushed before exit. */
    mc_entity_table_each(mc_engine_table(e), tell, e);
}

/* Whether this cellapp serves the space whole (never split, or merged back to one cell). */
static bool whole(const mc_space *sp)
{
    return !sp->layout || (sp->layout->own >= 0 && sp->layout->n == 1);
}

/* Hand over every space with reals here whose cell is not handed yet (also one that gained
 * reals while retiring, offloaded here before the neighbour heard): how many. */
static size_t hand_over(mc_engine *e)
{
    cell_state *cs = state(e);
    size_t handed = 0;
    for (size_t s = 0; s < cs->n; s++) {
        mc_space *sp = cs->spaces[s];
        if (sp->handed || !sp->nreal || (!whole(sp) && (sp->layout->own < 0 ||
                                                         sp->layout->n < 2)))
            continue;
        cell_cells_notice(e, sp->id, true, false);
        sp->handed = true;
        handed++;
    }
    return handed;
}

void cell_retire_on_shutdown(mc_engine *e)
{
    cell_state *cs = state(e);
    cell_retire *r = cs->retire;
    size_t handed = 0;
    if (r && r->retire_ms) {
        cell_load_retiring(e); /* the manager gives it no cell from now on */
        handed = hand_over(e);
    }
    if (!handed) {
        finish(e);
        return;
    }
    r->retiring = true;
    r->handed += handed;
    r->deadline = mc_clock_now_us() + r->retire_ms * 1000;
    MC_INFO("retiring: %zu cells handed to their neighbours or another cellapp; their %zu reals "
            "move there first "
            "(at most %llu ms)",
            handed, left(e), (unsigned long long)r->retire_ms);
}

bool cell_retire_draining(mc_engine *e)
{
    cell_retire *r = state(e)->retire;
    if (!r || !r->retiring)
        return false;
    r->handed += hand_over(e);
    size_t n = left(e);
    bool late = mc_clock_now_us() >= r->deadline;
    if (n && !late)
        return true;
    r->retiring = false;
    if (n)
        MC_WARNING("retiring: %zu reals not handed over within %llu ms: they go with this "
                   "cellapp",
                   n, (unsigned long long)r->retire_ms);
    else
        MC_INFO("retiring: every real handed over");
    finish(e);
    return false;
}

int cell_retire_init(mc_engine *e, char *err, size_t errlen)
{
    cell_state *cs = state(e);
    cell_retire *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cs->retire = r;
    r->retire_ms = mc_config_get_uint(mc_server_config(mc_engine_server(e)), "retireMs");
    if (r->retire_ms > 600000) {
        snprintf(err, errlen, "--retireMs: %llu is not within 0..600000",
                 (unsigned long long)r->retire_ms);
        return -1;
    }
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    if (mc_watch_add_uint(w, "retire/spaces", &r->handed, MC_WATCH_READ_ONLY) != MC_WATCH_OK ||
        mc_watch_add_uint(w, "retire/ms", &r->retire_ms, MC_WATCH_READ_WRITE) != MC_WATCH_OK) {
        snprintf(err, errlen, "cannot publish the retire/ watchers");
        return -1;
    }
    return 0;
}

void cell_retire_free(mc_engine *e)
{
    cell_state *cs = state(e);
    if (cs && cs->retire) {
        free(cs->retire);
        cs->retire = NULL;
    }
}
