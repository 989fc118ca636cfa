/* The new home's side of a retirement (retire_internal.h): a base taken from a retiring
 * baseapp R may still have calls and cell messages on their way through R (sent before
 * their senders learned its new home). What comes for it straight here (from anyone but R)
 * waits, in arrival order, until R's stream for it has ended: RETIRE_END from R (sent once
 * every live peer answered RETIRED, or its answer timed out) or R's death. RETIRE_END names
 * the senders whose answer did not come in time (laggards): what they send straight here
 * for such a base still waits, until R says their stream through it ended
 * (RETIRE_SENDER_END: R heard their RETIRED_NOTED, or they died) or R dies. No time bound:
 * a base holds at most --retireHoldMax items and --retireHoldBytes bytes (beyond: BUSY,
 * retire/holdFull), all bases RETIRE_WAIT_MAX items. So calls from one sender keep their
 * order across the switch from R to the new home. */
#include "bases/bases.h"
#include "common/log.h"
#include "entity/retire_wire.h"
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
    r->nheld++;
}

bool retire_was_taken_from(mc_engine *e, int32_t id, const mc_address *from)
{
    base_retire *r = retire_of(e);
    retire_taken *t = r ? retire_taken_of(r, id) : NULL;
    return t && mc_address_equal(&t->from, from);
}

/* ---- laggards ------------------------------------------------------------------------ */

static const mc_address *sender_of(base_retire *r, const mc_origin *o)
{
    return o->local ? mc_engine_address(r->e) : &o->addr;
}

static bool lagging(const base_retire *r, const mc_address *from, const mc_address *sender)
{
    return r->lags.n && retire_lags_has(&r->lags, from, sender);
}

/* ---- holding ------------------------------------------------------------------------- */

static size_t item_bytes(size_t len) { return sizeof(retire_call) + len; }

bool retire_hold_take(base_retire *r, retire_item_kind kind, uint8_t msg, const mc_origin *o,
                      const mc_call_header *h, int32_t id, const uint8_t *data, size_t len)
{
    retire_taken *t = retire_taken_of(r, id);
    if (!t || (!o->local && mc_address_equal(&o->addr, &t->from)))
        return false; /* not taken, or on R's stream itself */
    if (!t->open && !(lagging(r, &t->from, sender_of(r, o))))
        return false; /* R's stream ended (for this sender) */
    const char *why = NULL;
    if (t->q.n >= r->hold_max || t->bytes + item_bytes(len) > r->hold_bytes) {
        r->st.hold_full++;
        why = "its bound (--retireHoldMax, --retireHoldBytes)";
    } else if (!retire_enqueue(r, &t->q, kind, msg, o, h, id, data, len)) {
        why = "the bound of all bases";
    }
    if (why) {
        r->st.refused_calls++;
        if (retire_log_allowed(r->st.refused_calls))
            MC_WARNING("entity %d: a call held for its old home's stream refused: %s "
                       "(%zu held for it)", (int)id, why, t->q.n);
        mc_engine_refuse(r->e, o, MC_REFUSE_QUEUE_FULL, MC_CALL_ERR_BUSY,
                         "entity %d waits for its old home's stream and %zu calls wait "
                         "for it already",
                         (int)id, t->q.n);
        return true;
    }
    t->bytes += item_bytes(len);
    r->st.held++;
    if (!t->open)
        r->st.lag_held++;
    return true;
}

/* Run what t holds but what a laggard of its old home sent (kept, in order). */
static void release_some(base_retire *r, retire_taken *t)
{
    retire_queue keep = {0}, run = {0};
    retire_call *c = t->q.head;
    while (c) {
        retire_call *next = c->next;
        c->next = NULL;
        const mc_address *sender = c->origin.local ? mc_engine_address(r->e) : &c->origin.addr;
        bool hold = c->kind != RI_CLIENT_CALL && lagging(r, &t->from, sender);
        retire_queue *q = hold ? &keep : &run;
        if (q->tail)
            q->tail->next = c;
        else
            q->head = c;
        q->tail = c;
        q->n++;
        c = next;
    }
    t->q = keep;
    t->bytes = 0;
    for (c = keep.head; c; c = c->next)
        t->bytes += item_bytes(c->len);
    r->st.released += run.n;
    retire_queue_run(r, &run); /* not held again: t is closed, or not for these senders */
}

/* Every base taken from `from` that holds something: release what may run now. */
static void release_from(base_retire *r, const mc_address *from)
{
    /* collect first: running an item may change the map */
    size_t n = 0, pos = 0, cap = r->taken.count;
    int32_t *ids = cap ? malloc(cap * sizeof *ids) : NULL;
    if (!ids)
        return;
    uint64_t key, unused;
    retire_taken *t;
    while ((t = mc_map_next_key(&r->taken, &pos, &key, &unused)) && n < cap)
        if (mc_address_equal(&t->from, from) && (t->open || t->q.n))
            ids[n++] = (int32_t)key;
    for (size_t i = 0; i < n; i++) {
        t = retire_taken_of(r, ids[i]);
        if (!t || !mc_address_equal(&t->from, from))
            continue;
        if (t->open) {
            t->open = false;
            r->nheld--;
        }
        release_some(r, t);
    }
    free(ids);
}

void retire_hold_release(base_retire *r, const mc_address *from)
{
    retire_lags_drop(&r->lags, from, NULL);
    release_from(r, from);
}

static bool from_retiring_peer(mc_engine *e, const mc_origin *o)
{
    return !o->local && mc_server_peer_is_live(mc_engine_server(e), &o->addr, MC_ROLE_BASEAPP);
}

/* RETIRE_END from a retiring baseapp (request; the senders that did not answer RETIRED in
 * time): nothing more comes through it but from those; what waited for its stream and is
 * not theirs runs now, then the answer. Each RETIRE_END replaces the list its sender gave
 * before (a handover started over after a new home died asks RETIRED again and names only
 * the peers late this time): a sender named before and not now is released too. */
void retire_on_end(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    base_retire *r = retire_of(e);
    mc_address *late = malloc(MC_RETIRE_LAGGARDS_MAX * sizeof *late);
    size_t n = 0;
    if (!r || !late || !from_retiring_peer(e, o) || !mc_retire_senders_decode(is, late, &n)) {
        free(late);
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        mc_engine_reply_status(e, o, MC_CALL_ERR_ARGS,
                               "RETIRE_END is taken from a live baseapp, well formed");
        return;
    }
    retire_lags_replace(&r->lags, &o->addr, late, n, MC_RETIRE_LAGGARDS_MAX);
    free(late);
    release_from(r, &o->addr);
    mc_engine_reply_status(e, o, MC_CALL_OK, "");
}

/* RETIRE_SENDER_END from a retiring baseapp (request; one address): that sender's stream
 * through it ended; what it sent straight here runs now. */
void retire_on_sender_end(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    base_retire *r = retire_of(e);
    mc_address sender;
    if (!r || !from_retiring_peer(e, o) || !mc_retire_sender_decode(is, &sender)) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        mc_engine_reply_status(e, o, MC_CALL_ERR_ARGS,
                               "RETIRE_SENDER_END is taken from a live baseapp, well formed");
        return;
    }
    if (lagging(r, &o->addr, &sender)) {
        retire_lags_drop(&r->lags, &o->addr, &sender);
        release_from(r, &o->addr);
    }
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
    retire_lags_free(&r->lags);
}
