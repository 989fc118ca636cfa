/* Entity timers: one min-heap per engine, checked on the engine's tick against the one
 * clock (mc_clock_now_us). A timer fires the part's onTimer callback; cancelled timers and
 * timers of destroyed entities are skipped when they come up. */
#include "engine_internal.h"
#include "common/log.h"

#include <math.h>
#include <stdlib.h>

static void swap(engine_timer *a, engine_timer *b)
{
    engine_timer t = *a;
    *a = *b;
    *b = t;
}

static int heap_push(mc_engine *e, engine_timer t)
{
    if (e->ntimers == e->timers_cap) {
        size_t cap = e->timers_cap ? e->timers_cap * 2 : 64;
        engine_timer *n = realloc(e->timers, cap * sizeof *n);
        if (!n)
            return -1;
        e->timers = n;
        e->timers_cap = cap;
    }
    size_t i = e->ntimers++;
    e->timers[i] = t;
    while (i > 0 && e->timers[(i - 1) / 2].due > e->timers[i].due) {
        swap(&e->timers[(i - 1) / 2], &e->timers[i]);
        i = (i - 1) / 2;
    }
    return 0;
}

static engine_timer heap_pop(mc_engine *e)
{
    engine_timer top = e->timers[0];
    e->timers[0] = e->timers[--e->ntimers];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < e->ntimers && e->timers[l].due < e->timers[m].due)
            m = l;
        if (r < e->ntimers && e->timers[r].due < e->timers[m].due)
            m = r;
        if (m == i)
            break;
        swap(&e->timers[i], &e->timers[m]);
        i = m;
    }
    return top;
}

static bool entity_has_timer(const mc_entity *ent, uint32_t id, size_t *at)
{
    for (size_t i = 0; i < ent->ntimers; i++)
        if (ent->timers[i] == id) {
            if (at)
                *at = i;
            return true;
        }
    return false;
}

static void entity_forget_timer(mc_entity *ent, size_t at)
{
    ent->timers[at] = ent->timers[--ent->ntimers];
}

int mc_engine_op_add_timer(const mc_call_ctx *call, double initial_s, double repeat_s,
                           int64_t user_arg, uint32_t *out_id)
{
    mc_engine *e = mc_engine_of(call);
    mc_entity *ent = e ? mc_engine_find(e, call->self.id) : NULL;
    if (!ent || ent->in_reap || ent->destroying)
        return MC_CALL_ERR_STATE;
    if (!isfinite(initial_s) || !isfinite(repeat_s) || initial_s < 0 || repeat_s < 0 ||
        initial_s > 1e7 || repeat_s > 1e7)
        return MC_CALL_ERR_ARGS;
    if (ent->ntimers == ent->timers_cap) {
        size_t cap = ent->timers_cap ? ent->timers_cap * 2 : 4;
        uint32_t *t = realloc(ent->timers, cap * sizeof *t);
        if (!t)
            return MC_CALL_ERR_BUSY;
        ent->timers = t;
        ent->timers_cap = cap;
    }
    uint32_t id = e->next_timer_id++;
    if (e->next_timer_id == 0)
        e->next_timer_id = 1;
    engine_timer t = {.due = mc_clock_now_us() + (mc_time_us)(initial_s * 1e6),
                      .repeat = repeat_s > 0 && repeat_s < 0.001 ? 1000
                                                                 : (mc_time_us)(repeat_s * 1e6),
                      .entity = ent->id,
                      .id = id,
                      .user_arg = user_arg};
    if (heap_push(e, t) != 0)
        return MC_CALL_ERR_BUSY;
    ent->timers[ent->ntimers++] = id;
    if (out_id)
        *out_id = id;
    return MC_CALL_OK;
}

int mc_engine_op_del_timer(const mc_call_ctx *call, uint32_t timer_id)
{
    mc_engine *e = mc_engine_of(call);
    mc_entity *ent = e ? mc_engine_find(e, call->self.id) : NULL;
    size_t at;
    if (!ent || !entity_has_timer(ent, timer_id, &at))
        return MC_CALL_ERR_NOT_FOUND;
    entity_forget_timer(ent, at);
    return MC_CALL_OK;
}

void mc_engine_drop_timers(mc_engine *e, mc_entity *ent)
{
    (void)e;
    ent->ntimers = 0; /* their heap entries find no owner and are skipped */
}

/* Restore the heap order after arbitrary removals (Floyd's bottom-up build). */
static void heapify(mc_engine *e)
{
    for (size_t k = e->ntimers / 2; k-- > 0;) {
        size_t i = k;
        for (;;) {
            size_t l = 2 * i + 1, r = l + 1, m = i;
            if (l < e->ntimers && e->timers[l].due < e->timers[m].due)
                m = l;
            if (r < e->ntimers && e->timers[r].due < e->timers[m].due)
                m = r;
            if (m == i)
                break;
            swap(&e->timers[i], &e->timers[m]);
            i = m;
        }
    }
}

size_t mc_engine_export_timers(mc_engine *e, mc_entity *ent, mc_timer_export *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < e->ntimers && n < max; i++) {
        const engine_timer *t = &e->timers[i];
        size_t at;
        if (t->entity != ent->id || !entity_has_timer(ent, t->id, &at))
            continue;
        out[n++] = (mc_timer_export){.id = t->id, .due = t->due, .repeat = t->repeat,
                                     .user_arg = t->user_arg};
        entity_forget_timer(ent, at); /* its heap entry finds no owner from now on */
    }
    return n;
}

size_t mc_engine_peek_timers(mc_engine *e, const mc_entity *ent, mc_timer_export *out,
                             size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < e->ntimers && n < max && ent->ntimers; i++) {
        const engine_timer *t = &e->timers[i];
        if (t->entity == ent->id && entity_has_timer(ent, t->id, NULL))
            out[n++] = (mc_timer_export){.id = t->id, .due = t->due, .repeat = t->repeat,
                                         .user_arg = t->user_arg};
    }
    return n;
}

int mc_engine_import_timer(mc_engine *e, mc_entity *ent, const mc_timer_export *t)
{
    if (t->id == 0 || entity_has_timer(ent, t->id, NULL))
        return MC_CALL_ERR_ARGS;
    if (ent->ntimers == ent->timers_cap) {
        size_t cap = ent->timers_cap ? ent->timers_cap * 2 : 4;
        uint32_t *l = realloc(ent->timers, cap * sizeof *l);
        if (!l)
            return MC_CALL_ERR_BUSY;
        ent->timers = l;
        ent->timers_cap = cap;
    }
    /* A stale entry of the same entity and id (a timer it had here before it last left, or
     * one deleted) would fire this one early: out of the heap with it. */
    bool removed = false;
    for (size_t i = 0; i < e->ntimers;)
        if (e->timers[i].entity == ent->id && e->timers[i].id == t->id) {
            e->timers[i] = e->timers[--e->ntimers];
            removed = true;
        } else {
            i++;
        }
    if (removed)
        heapify(e);
    engine_timer et = {.due = t->due, .repeat = t->repeat, .entity = ent->id, .id = t->id,
                       .user_arg = t->user_arg};
    if (heap_push(e, et) != 0)
        return MC_CALL_ERR_BUSY;
    ent->timers[ent->ntimers++] = t->id;
    if (e->next_timer_id <= t->id) {
        e->next_timer_id = t->id + 1;
        if (e->next_timer_id == 0)
            e->next_timer_id = 1;
    }
    return MC_CALL_OK;
}

static void fire(mc_engine *e, engine_timer t)
{
    mc_entity *ent = mc_engine_find(e, t.entity);
    size_t at;
    if (!ent || ent->in_reap || !entity_has_timer(ent, t.id, &at))
        return;
    if (t.repeat) {
        mc_time_us now = mc_clock_now_us();
        t.due += t.repeat;
        if (t.due < now) /* fell behind: no burst of catch-up calls */
            t.due = now;
        if (heap_push(e, t) != 0)
            entity_forget_timer(ent, at);
    } else {
        entity_forget_timer(ent, at);
    }
    const mc_game_hooks *h = &ent->gt->hooks[ent->part];
    e->st.timers_fired++;
    if (!h->on_timer)
        return;
    mc_call_frame f;
    mc_engine_frame(e, &f, ent);
    mc_time_us began = e->part->on_timer_work ? mc_clock_now_us() : 0;
    int rc = h->on_timer(&f.ctx, ent->props, t.id, t.user_arg);
    if (e->part->on_timer_work) {
        mc_time_us end = mc_clock_now_us();
        e->part->on_timer_work(e, t.entity, end > began ? end - began : 0);
    }
    if (rc != 0) {
        e->st.hook_failures++;
        if (engine_log_allowed(e->st.hook_failures))
            MC_WARNING("%s %d: onTimer failed (%d)", ent->td->name, (int)ent->id, rc);
    }
}

void engine_timers_tick(mc_engine *e, mc_time_us now)
{
    /* Bounded per tick so a flood of due timers cannot starve the loop. */
    for (int n = 0; n < 10000 && e->ntimers && e->timers[0].due <= now; n++)
        fire(e, heap_pop(e));
}

void engine_timers_free(mc_engine *e)
{
    free(e->timers);
    e->timers = NULL;
    e->ntimers = e->timers_cap = 0;
}
