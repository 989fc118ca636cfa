/* The new home's side of a retirement (retire_internal.h): a base taken from a retiring
 * baseapp R may still have calls and cell messages on their way through R (sent before
 * their senders learned its new home). What comes for it straight here (from anyone but R)
 * waits, in arrival order, until R's stream for it has ended: RETIRE_END from R (sent once
 * every live peer answered RETIRED: nothing more comes through R), R's death, or
 * --retireHoldMs after it was taken; at most RETIRE_WAIT_MAX items in all (beyond: BUSY).
 * So calls from one sender keep their order across the switch from R to the new home. */
#include "baseapp.h"
#include "common/log.h"
#include "retire_internal.h"

#include <stdlib.h>
#include <string.h>

retire_taken *retire_taken_of(base_retire *r, int32_t id)
{
    return mc_map_get(&r->taken, (uint64_t)id, 0);
}

void retire_note_taken(mc_engine *e, int32_t id, const mc_address *from)
{
    base_retire *r = retire_of(e);
    if (!r)
        return;
    retire_taken *t = retire_taken_of(r, id);
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t || !mc_map_put(&r->taken, (uint64_t)id, 0, t)) {
            free(t);
            return;
        }
    } else if (t->open) {
        r->nheld--;
    }
    t->from = *from;
    t->open = true;
    t->since = mc_clock_now_us();
    r->nheld++;
}

bool retire_was_taken_from(mc_engine *e, int32_t id, const mc_address *from)
{
    base_retire *r = retire_of(e);
    retire_taken *t = r ? retire_taken_of(r, id) : NULL;
    return t && mc_address_equal(&t->from, from);
}

bool retire_hold_take(base_retire *r, retire_item_kind kind, uint8_t msg, const mc_origin *o,
                      const mc_call_header *h, int32_t id, const uint8_t *data, size_t len)
{
    retire_taken *t = retire_taken_of(r, id);
    if (!t || !t->open || (!o->local && mc_address_equal(&o->addr, &t->from)))
        return false; /* not held, or on R's stream itself */
    if (!t->q.n)
        t->since = mc_clock_now_us(); /* the bound counts from the first item held */
    if (!retire_enqueue(r, &t->q, kind, msg, o, h, id, data, len)) {
        r->st.refused_calls++;
        mc_engine_refuse(r->e, o, MC_REFUSE_QUEUE_FULL, MC_CALL_ERR_BUSY,
                         "entity %d waits for its old home's stream and %llu calls wait "
                         "already",
                         (int)id, (unsigned long long)r->nwaiting);
        return true;
    }
    r->st.held++;
    return true;
}

static void release(base_retire *r, int32_t id, retire_taken *t, bool expired)
{
    t->open = false;
    r->nheld--;
    if (expired && t->q.n)
        r->st.hold_expired++;
    r->st.released += t->q.n;
    retire_queue q = t->q;
    t->q = (retire_queue){0};
    (void)id;
    retire_queue_run(r, &q); /* not held again: t is closed */
}

void retire_hold_release(base_retire *r, const mc_address *from, mc_time_us now)
{
    if (!r->nheld)
        return;
    mc_time_us bound = r->hold_ms * MC_US_PER_MS;
    /* collect first: running an item may change the map */
    size_t n = 0, pos = 0, cap = (size_t)r->nheld;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids)
        return;
    uint64_t key, unused;
    retire_taken *t;
    while ((t = mc_map_next_key(&r->taken, &pos, &key, &unused)) && n < cap) {
        if (!t->open)
            continue;
        if (from ? mc_address_equal(&t->from, from) : t->q.n && now - t->since >= bound)
            ids[n++] = (int32_t)key;
    }
    for (size_t i = 0; i < n; i++) {
        t = retire_taken_of(r, ids[i]);
        if (t && t->open)
            release(r, ids[i], t, !from);
    }
    free(ids);
}

/* RETIRE_END from a retiring baseapp (request, no payload): nothing more comes through it;
 * what waited for its stream runs now, then the answer. */
void retire_on_end(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    (void)is;
    base_retire *r = retire_of(e);
    if (r && !o->local)
        retire_hold_release(r, &o->addr, mc_clock_now_us());
    mc_engine_reply_status(e, o, MC_CALL_OK, "");
}

void retire_hold_free(base_retire *r)
{
    size_t pos = 0;
    retire_taken *t;
    while ((t = mc_map_next(&r->taken, &pos))) {
        retire_queue_free(r, &t->q);
        free(t);
    }
    mc_map_free(&r->taken);
}
