/* Globally named bases: a chained hash table keyed by name, bounded in size. */
#include "globals.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gentry gentry;
struct gentry {
    gentry *next;
    uint32_t hash;
    uint32_t owner;
    mc_mailbox_ref mb;
    char name[MC_GLOBAL_NAME_MAX + 1];
};

struct mc_globals {
    gentry **buckets;
    size_t nbuckets; /* a power of two */
    size_t count;
    size_t max;
};

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

mc_globals *mc_globals_new(size_t max_entries)
{
    mc_globals *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->nbuckets = 256;
    g->buckets = calloc(g->nbuckets, sizeof *g->buckets);
    if (!g->buckets) {
        free(g);
        return NULL;
    }
    g->max = max_entries;
    return g;
}

void mc_globals_free(mc_globals *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->nbuckets; i++)
        for (gentry *e = g->buckets[i], *n; e; e = n) {
            n = e->next;
            free(e);
        }
    free(g->buckets);
    free(g);
}

bool mc_globals_name_ok(const char *name, size_t len)
{
    if (!name || len < 1 || len > MC_GLOBAL_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (name[i] <= ' ' || name[i] > '~')
            return false;
    return true;
}

static gentry **find(const mc_globals *g, const char *name, uint32_t h)
{
    gentry **p = &g->buckets[h & (g->nbuckets - 1)];
    while (*p && ((*p)->hash != h || strcmp((*p)->name, name) != 0))
        p = &(*p)->next;
    return p;
}

/* Double the table when it is fuller than one entry per bucket (best effort). */
static void grow(mc_globals *g)
{
    if (g->count < g->nbuckets)
        return;
    size_t n = g->nbuckets * 2;
    gentry **b = calloc(n, sizeof *b);
    if (!b)
        return; /* longer chains, still correct */
    for (size_t i = 0; i < g->nbuckets; i++)
        for (gentry *e = g->buckets[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    free(g->buckets);
    g->buckets = b;
    g->nbuckets = n;
}

mc_globals_status mc_globals_register(mc_globals *g, const char *name,
                                      const mc_mailbox_ref *mb, uint32_t owner)
{
    if (!mc_globals_name_ok(name, name ? strlen(name) : 0) || mc_mailbox_ref_is_none(mb))
        return MC_GLOBALS_BAD;
    uint32_t h = hash_name(name);
    gentry **p = find(g, name, h);
    if (*p)
        return MC_GLOBALS_TAKEN;
    if (g->count >= g->max)
        return MC_GLOBALS_FULL;
    gentry *e = calloc(1, sizeof *e);
    if (!e)
        return MC_GLOBALS_NO_MEMORY;
    e->hash = h;
    e->owner = owner;
    e->mb = *mb;
    snprintf(e->name, sizeof e->name, "%s", name);
    *p = e;
    g->count++;
    grow(g);
    return MC_GLOBALS_OK;
}

static bool same_mailbox(const mc_mailbox_ref *a, const mc_mailbox_ref *b)
{
    return a->id == b->id && a->ip == b->ip && a->port == b->port && a->salt == b->salt;
}

mc_globals_status mc_globals_deregister(mc_globals *g, const char *name,
                                        const mc_mailbox_ref *mb)
{
    if (!mc_globals_name_ok(name, name ? strlen(name) : 0))
        return MC_GLOBALS_BAD;
    gentry **p = find(g, name, hash_name(name));
    if (!*p || !same_mailbox(&(*p)->mb, mb))
        return MC_GLOBALS_NOT_FOUND;
    gentry *e = *p;
    *p = e->next;
    free(e);
    g->count--;
    return MC_GLOBALS_OK;
}

mc_globals_status mc_globals_lookup(const mc_globals *g, const char *name, mc_mailbox_ref *mb,
                                    uint32_t *owner)
{
    if (!mc_globals_name_ok(name, name ? strlen(name) : 0))
        return MC_GLOBALS_BAD;
    gentry **p = find(g, name, hash_name(name));
    if (!*p)
        return MC_GLOBALS_NOT_FOUND;
    *mb = (*p)->mb;
    if (owner)
        *owner = (*p)->owner;
    return MC_GLOBALS_OK;
}

size_t mc_globals_drop_owner(mc_globals *g, uint32_t owner)
{
    size_t dropped = 0;
    for (size_t i = 0; i < g->nbuckets; i++) {
        gentry **p = &g->buckets[i];
        while (*p) {
            if ((*p)->owner == owner) {
                gentry *e = *p;
                *p = e->next;
                free(e);
                dropped++;
            } else {
                p = &(*p)->next;
            }
        }
    }
    g->count -= dropped;
    return dropped;
}

size_t mc_globals_count(const mc_globals *g) { return g->count; }
