/* The id -> entity hash table. */
#include "entity/entity.h"

#include <stdlib.h>

static size_t bucket_of(size_t nbuckets, int32_t id)
{
    uint32_t h = (uint32_t)id * 2654435761u;
    return h & (nbuckets - 1);
}

int mc_entity_table_init(mc_entity_table *t)
{
    t->nbuckets = 256;
    t->count = 0;
    t->buckets = calloc(t->nbuckets, sizeof *t->buckets);
    return t->buckets ? 0 : -1;
}

void mc_entity_table_free(mc_entity_table *t)
{
    free(t->buckets);
    t->buckets = NULL;
    t->nbuckets = t->count = 0;
}

mc_entity *mc_entity_table_find(const mc_entity_table *t, int32_t id)
{
    if (!t->buckets)
        return NULL;
    for (mc_entity *e = t->buckets[bucket_of(t->nbuckets, id)]; e; e = e->next_in_bucket)
        if (e->id == id)
            return e;
    return NULL;
}

static void grow(mc_entity_table *t)
{
    size_t n = t->nbuckets * 2;
    mc_entity **b = calloc(n, sizeof *b);
    if (!b)
        return; /* longer chains, still correct */
    for (size_t i = 0; i < t->nbuckets; i++) {
        mc_entity *e = t->buckets[i];
        while (e) {
            mc_entity *next = e->next_in_bucket;
            size_t k = bucket_of(n, e->id);
            e->next_in_bucket = b[k];
            b[k] = e;
            e = next;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = n;
}

int mc_entity_table_add(mc_entity_table *t, mc_entity *e)
{
    if (!t->buckets || mc_entity_table_find(t, e->id))
        return -1;
    if (t->count >= t->nbuckets)
        grow(t);
    size_t k = bucket_of(t->nbuckets, e->id);
    e->next_in_bucket = t->buckets[k];
    t->buckets[k] = e;
    t->count++;
    return 0;
}

void mc_entity_table_remove(mc_entity_table *t, mc_entity *e)
{
    if (!t->buckets)
        return;
    mc_entity **p = &t->buckets[bucket_of(t->nbuckets, e->id)];
    for (; *p; p = &(*p)->next_in_bucket)
        if (*p == e) {
            *p = e->next_in_bucket;
            e->next_in_bucket = NULL;
            t->count--;
            return;
        }
}

void mc_entity_table_each(const mc_entity_table *t, void (*fn)(void *ctx, mc_entity *e),
                          void *ctx)
{
    for (size_t i = 0; i < t->nbuckets; i++)
        for (mc_entity *e = t->buckets[i]; e; e = e->next_in_bucket)
            fn(ctx, e);
}

mc_entity **mc_entity_table_snapshot(const mc_entity_table *t, size_t *n)
{
    *n = 0;
    if (t->count == 0)
        return NULL;
    mc_entity **all = malloc(t->count * sizeof *all);
    if (!all)
        return NULL;
    for (size_t i = 0; i < t->nbuckets; i++)
        for (mc_entity *e = t->buckets[i]; e; e = e->next_in_bucket)
            all[(*n)++] = e;
    return all;
}
