/* The manager lease and the items held while it has run out (see server/lease.h). */
#include "server/lease.h"

#include <stdlib.h>

typedef struct held_item {
    struct held_item *next;
    mc_lease_kind kind;
    size_t bytes;
    mc_time_us deadline;
    mc_lease_fn fn;
    void *arg;
} held_item;

struct mc_lease {
    size_t max_items, max_bytes;
    uint64_t term_us;        /* dead-after / 2; 0: unknown */
    mc_time_us expires_at;   /* 0: never renewed */
    bool was_valid;          /* for counting expiries */
    bool draining;           /* releasing or dropping: no re-entry */
    bool dropping;           /* dropping everything: new holds are refused */
    held_item *head, *tail;
    size_t count;
    mc_lease_stats st;
};

mc_lease *mc_lease_new(size_t max_items, size_t max_bytes)
{
    mc_lease *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->max_items = max_items ? max_items : MC_LEASE_HELD_MAX_DEFAULT;
    l->max_bytes = max_bytes ? max_bytes : MC_LEASE_HELD_BYTES_DEFAULT;
    return l;
}

void mc_lease_free(mc_lease *l)
{
    if (!l)
        return;
    mc_lease_drop_all(l);
    free(l);
}

void mc_lease_set_dead_after(mc_lease *l, uint64_t dead_after_ms)
{
    l->term_us = dead_after_ms * MC_US_PER_MS / 2;
}

static held_item *pop(mc_lease *l)
{
    held_item *it = l->head;
    if (!it)
        return NULL;
    l->head = it->next;
    if (!l->head)
        l->tail = NULL;
    l->count--;
    l->st.held_bytes -= it->bytes;
    if (it->kind == MC_LEASE_CALL)
        l->st.calls_held--;
    else
        l->st.writes_held--;
    return it;
}

bool mc_lease_valid(mc_lease *l, mc_time_us now)
{
    bool valid = l->expires_at && now < l->expires_at;
    if (l->was_valid && !valid)
        l->st.expiries++;
    l->was_valid = valid;
    return valid;
}

bool mc_lease_must_hold(mc_lease *l, mc_time_us now)
{
    return l->head || !mc_lease_valid(l, now);
}

mc_time_us mc_lease_expires_at(const mc_lease *l) { return l->expires_at; }

/* Release held items in order while the lease stays valid. An item held by a callback
 * (a message sent from inside one) goes to the tail and is released in its turn. */
static size_t release(mc_lease *l, mc_time_us now)
{
    if (l->draining)
        return 0;
    l->draining = true;
    size_t n = 0;
    while (l->head && mc_lease_valid(l, now)) {
        held_item *it = pop(l);
        l->st.released++;
        n++;
        it->fn(it->arg, MC_LEASE_RELEASE);
        free(it);
    }
    l->draining = false;
    return n;
}

size_t mc_lease_renew(mc_lease *l, mc_time_us sent_at, mc_time_us now)
{
    if (!l->term_us)
        return 0;
    mc_time_us until = sent_at + l->term_us;
    if (until > l->expires_at)
        l->expires_at = until;
    l->st.renewals++;
    return release(l, now);
}

int mc_lease_hold(mc_lease *l, mc_lease_kind kind, size_t bytes, mc_time_us deadline,
                  mc_lease_fn fn, void *arg)
{
    if (l->dropping || !fn || l->count >= l->max_items || bytes > l->max_bytes ||
        l->st.held_bytes + bytes > l->max_bytes) {
        l->st.held_refused++;
        return -1;
    }
    held_item *it = malloc(sizeof *it);
    if (!it) {
        l->st.held_refused++;
        return -1;
    }
    it->next = NULL;
    it->kind = kind;
    it->bytes = bytes;
    it->deadline = deadline;
    it->fn = fn;
    it->arg = arg;
    if (l->tail)
        l->tail->next = it;
    else
        l->head = it;
    l->tail = it;
    l->count++;
    l->st.held_bytes += bytes;
    l->st.held_total++;
    if (kind == MC_LEASE_CALL)
        l->st.calls_held++;
    else
        l->st.writes_held++;
    return 0;
}

void mc_lease_tick(mc_lease *l, mc_time_us now)
{
    if (l->draining)
        return;
    l->draining = true;
    /* Expired items leave from anywhere in the queue; the others keep their order. */
    held_item **pp = &l->head, *prev = NULL;
    while (*pp) {
        held_item *it = *pp;
        if (!it->deadline || now < it->deadline) {
            prev = it;
            pp = &it->next;
            continue;
        }
        *pp = it->next;
        if (l->tail == it)
            l->tail = prev;
        l->count--;
        l->st.held_bytes -= it->bytes;
        if (it->kind == MC_LEASE_CALL)
            l->st.calls_held--;
        else
            l->st.writes_held--;
        l->st.held_dropped++;
        /* The callback may hold new items: they go to the tail, after this walk's cursor
         * or before it; either way the walk stays on valid links (it re-reads *pp). */
        it->fn(it->arg, MC_LEASE_EXPIRED);
        free(it);
    }
    l->draining = false;
    release(l, now);
}

size_t mc_lease_drop_all(mc_lease *l)
{
    bool was_dropping = l->dropping;
    l->dropping = true;
    size_t n = 0;
    held_item *it;
    while ((it = pop(l))) {
        l->st.held_dropped++;
        n++;
        it->fn(it->arg, MC_LEASE_DROPPED);
        free(it);
    }
    l->dropping = was_dropping;
    return n;
}

const mc_lease_stats *mc_lease_stats_of(const mc_lease *l) { return &l->st; }

const char *mc_lease_state_name(mc_lease *l, mc_time_us now)
{
    if (!l->expires_at)
        return "none";
    return mc_lease_valid(l, now) ? "valid" : "holding";
}
