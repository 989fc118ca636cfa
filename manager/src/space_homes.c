/* Homes of lost spaces (space_homes.h): a ring of entries in the order they were noted, and
 * an open-addressing index space id -> slot. */
#include "space_homes.h"

#include <stdlib.h>

typedef struct {
    int32_t space;   /* 0: free */
    uint32_t process_id;
} home;

struct mc_space_homes {
    home *ring;        /* max entries, oldest at `head` once full */
    size_t max, count, head;
    size_t *index;     /* nidx slots: ring position + 1, 0 free (linear probing) */
    size_t nidx;
    uint64_t evicted;
};

static size_t hash(int32_t space, size_t n)
{
    uint32_t x = (uint32_t)space * 2654435761u;
    return (size_t)x % n;
}

mc_space_homes *mc_space_homes_new(size_t max)
{
    if (max < MC_SPACE_HOMES_MIN)
        max = MC_SPACE_HOMES_MIN;
    if (max > MC_SPACE_HOMES_MAX)
        max = MC_SPACE_HOMES_MAX;
    mc_space_homes *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->max = max;
    h->nidx = max * 2 + 1;
    h->ring = calloc(max, sizeof *h->ring);
    h->index = calloc(h->nidx, sizeof *h->index);
    if (!h->ring || !h->index) {
        mc_space_homes_free(h);
        return NULL;
    }
    return h;
}

void mc_space_homes_free(mc_space_homes *h)
{
    if (!h)
        return;
    free(h->ring);
    free(h->index);
    free(h);
}

/* The index slot holding space, or the free slot where it would go. */
static size_t find_slot(const mc_space_homes *h, int32_t space)
{
    size_t i = hash(space, h->nidx);
    while (h->index[i] && h->ring[h->index[i] - 1].space != space)
        i = (i + 1) % h->nidx;
    return i;
}

bool mc_space_homes_get(const mc_space_homes *h, int32_t space, uint32_t *process_id)
{
    if (space <= 0)
        return false;
    size_t i = find_slot(h, space);
    if (!h->index[i])
        return false;
    *process_id = h->ring[h->index[i] - 1].process_id;
    return true;
}

/* Take space out of the index (linear probing: the run after it is put back). */
static void unindex(mc_space_homes *h, int32_t space)
{
    size_t i = find_slot(h, space);
    if (!h->index[i])
        return;
    h->index[i] = 0;
    for (size_t j = (i + 1) % h->nidx; h->index[j]; j = (j + 1) % h->nidx) {
        size_t pos = h->index[j];
        h->index[j] = 0;
        h->index[find_slot(h, h->ring[pos - 1].space)] = pos;
    }
}

void mc_space_homes_put(mc_space_homes *h, int32_t space, uint32_t process_id)
{
    if (space <= 0)
        return;
    size_t i = find_slot(h, space);
    if (h->index[i]) {
        h->ring[h->index[i] - 1].process_id = process_id;
        return;
    }
    size_t pos;
    if (h->count < h->max) {
        pos = h->count++;
    } else {
        pos = h->head; /* the oldest goes */
        h->head = (h->head + 1) % h->max;
        unindex(h, h->ring[pos].space);
        h->evicted++;
        i = find_slot(h, space);
    }
    h->ring[pos] = (home){space, process_id};
    h->index[i] = pos + 1;
}

size_t mc_space_homes_count(const mc_space_homes *h) { return h->count; }
uint64_t mc_space_homes_evicted(const mc_space_homes *h) { return h->evicted; }
