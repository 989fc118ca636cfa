/* What a witness's client is sent each tick, within its budget (witness.h): the entries,
 * the priorities and the records; no engine here (witness_send.c sends them). */
#include "witness.h"

#include "client_shadow.h"
#include "common/log.h"
#include "entity/world_wire.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t id;
    bool entered;          /* its ENTER was sent */
    uint32_t seq_sent;     /* the shadow's change number as last sent */
    mc_vector3 pos_sent, dir_sent;
    double priority;       /* lower goes first */
    uint32_t idle;         /* ticks since its last VOLATILE (counted while refresh_gap) */
    uint32_t refresh_gap;  /* re-send its position after this many idle ticks (0: no need:
                              nothing volatile was sent since its reliable ENTER) */
    bool full;             /* handed over: every value and its position go once */
} witness_entry;

struct witness {
    witness_entry *e;      /* sorted by id */
    size_t n, cap;
    int32_t *leaving;      /* introduced entities that left: LEAVE at the next send */
    size_t nleaving, leaving_cap;
    uint32_t own_seq_sent; /* own-client properties of the witness itself */
    bool own_introduced;   /* the ENTER of the witness itself was sent */
    bool own_full;         /* handed over: its own-client values go once, every one */
    double floor;          /* the priority of the last entry sent */
    mc_ostream calls;      /* CALL records waiting for the next send */
    uint16_t *ctype;       /* each queued call's caller type, */
    uint32_t *coff;        /* and where its record starts in calls (for a handover) */
    size_t nc, ccap;
    mc_ostream rel, vol;   /* this tick's records (kept for their buffers) */
};

witness *witness_new(void)
{
    witness *w = calloc(1, sizeof *w);
    if (w) {
        mc_ostream_init(&w->calls);
        mc_ostream_init(&w->rel);
        mc_ostream_init(&w->vol);
    }
    return w;
}

void witness_free(witness *w)
{
    if (!w)
        return;
    free(w->e);
    free(w->leaving);
    mc_ostream_free(&w->calls);
    free(w->ctype);
    free(w->coff);
    mc_ostream_free(&w->rel);
    mc_ostream_free(&w->vol);
    free(w);
}

/* The slot of id, or where it would go. */
static size_t find(const witness *w, int32_t id)
{
    size_t lo = 0, hi = w->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->e[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int witness_entered(witness *w, int32_t id)
{
    size_t at = find(w, id);
    if (at < w->n && w->e[at].id == id)
        return 0;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        witness_entry *p = realloc(w->e, cap * sizeof *p);
        if (!p)
            return -1;
        w->e = p;
        w->cap = cap;
    }
    memmove(&w->e[at + 1], &w->e[at], (w->n - at) * sizeof *w->e);
    memset(&w->e[at], 0, sizeof *w->e);
    w->e[at].id = id;
    w->e[at].priority = w->floor; /* soon, behind nobody who waited longer */
    w->n++;
    return 0;
}

static void push_leaving(witness *w, int32_t id)
{
    if (w->nleaving == w->leaving_cap) {
        size_t cap = w->leaving_cap ? w->leaving_cap * 2 : 16;
        int32_t *p = realloc(w->leaving, cap * sizeof *p);
        if (!p) {
            MC_ERROR("out of memory: the client of a witness is not told entity %d left",
                     (int)id);
            return;
        }
        w->leaving = p;
        w->leaving_cap = cap;
    }
    w->leaving[w->nleaving++] = id;
}

void witness_left(witness *w, int32_t id)
{
    size_t at = find(w, id);
    if (at == w->n || w->e[at].id != id)
        return;
    if (w->e[at].entered)
        push_leaving(w, id);
    memmove(&w->e[at], &w->e[at + 1], (w->n - at - 1) * sizeof *w->e);
    w->n--;
}

size_t witness_ids(const witness *w, int32_t *out, size_t max)
{
    size_t n = 0;
    for (; n < w->n && n < max; n++)
        out[n] = w->e[n].id;
    return n;
}

size_t witness_count(const witness *w) { return w->n; }

void witness_reset(witness *w)
{
    for (size_t i = 0; i < w->n; i++) {
        w->e[i].entered = false;
        w->e[i].priority = w->floor;
    }
    w->nleaving = 0;
    mc_ostream_reset(&w->calls);
    w->nc = 0;
    w->own_introduced = false;
    w->own_seq_sent = 0;
}

int witness_handover(witness *w, const int32_t *told, size_t n)
{
    w->own_introduced = true;
    w->own_full = true;
    for (size_t i = 0; i < n; i++) {
        if (witness_entered(w, told[i]) != 0)
            return -1;
        size_t at = find(w, told[i]);
        w->e[at].entered = true;
        w->e[at].full = true;
    }
    return 0;
}

bool witness_own_introduced(const witness *w) { return w->own_introduced; }

size_t witness_told_ids(const witness *w, int32_t *out, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < w->n && k < max; i++)
        if (w->e[i].entered)
            out[k++] = w->e[i].id;
    for (size_t i = 0; i < w->nleaving && k < max; i++)
        out[k++] = w->leaving[i];
    return k;
}

int witness_put_call(witness *w, int32_t id, uint16_t type, uint16_t method,
                     const uint8_t *args, size_t len)
{
    if (w->calls.size + MC_WORLD_CALL_HEAD + len > WITNESS_CALLS_MAX)
        return -1;
    if (w->nc == w->ccap) {
        size_t cap = w->ccap ? w->ccap * 2 : 16;
        uint16_t *t = realloc(w->ctype, cap * sizeof *t);
        if (!t)
            return -1;
        w->ctype = t;
        uint32_t *o = realloc(w->coff, cap * sizeof *o);
        if (!o)
            return -1;
        w->coff = o;
        w->ccap = cap;
    }
    size_t at = w->calls.size;
    mc_world_write_call(&w->calls, id, method, args, len);
    if (!mc_ostream_ok(&w->calls))
        return -1;
    w->ctype[w->nc] = type;
    w->coff[w->nc++] = (uint32_t)at;
    return 0;
}

int witness_call(witness *w, int32_t id, uint16_t type, uint16_t method, const uint8_t *args,
                 size_t len)
{
    size_t at = find(w, id);
    if (at == w->n || w->e[at].id != id || !w->e[at].entered)
        return 1;
    return witness_put_call(w, id, type, method, args, len);
}

size_t witness_take_calls(witness *w, witness_call_fn fn, void *ctx)
{
    size_t n = w->nc;
    for (size_t i = 0; i < w->nc; i++) {
        const uint8_t *p = w->calls.data + w->coff[i];
        size_t end = i + 1 < w->nc ? w->coff[i + 1] : w->calls.size;
        size_t len = end - w->coff[i] - MC_WORLD_CALL_HEAD;
        fn(ctx, (int32_t)mc_load_u32(p + 1), w->ctype[i], mc_load_u16(p + 5),
           p + MC_WORLD_CALL_HEAD, len);
    }
    mc_ostream_reset(&w->calls);
    w->nc = 0;
    return n;
}

/* The queued calls, then the departures, into the reliable run. */
static void write_calls_and_leaves(const witness_env *env, witness *w)
{
    if (w->calls.size) {
        mc_write_bytes(&w->rel, w->calls.data, w->calls.size);
        mc_ostream_reset(&w->calls);
        w->nc = 0;
    }
    for (size_t i = 0; i < w->nleaving; i++)
        mc_world_write_leave(&w->rel, w->leaving[i]);
    *env->leaves += w->nleaving;
    w->nleaving = 0;
}

/* ---- building a tick's records -------------------------------------------------------- */

/* PROPS of `id` with the properties of sh changed after `since` that pass the filter
 * (other: to other clients; else own). Returns how many. */
static size_t write_props(mc_ostream *os, int32_t id, const client_shadow *sh,
                          uint32_t since, bool other, bool all)
{
    size_t n_at, n = 0;
    for (size_t i = 0; i < sh->n; i++) {
        const client_shadow_prop *p = &sh->props[i];
        if ((!all && p->changed <= since) || !(other ? p->other : p->own))
            continue;
        if (!n)
            mc_world_write_props(os, id, 0, &n_at);
        mc_world_write_prop_index(os, p->index);
        mc_write_bytes(os, p->bytes, p->len);
        n++;
    }
    if (n)
        mc_store_u16(os->data + n_at, (uint16_t)n);
    return n;
}

static size_t write_changed(mc_ostream *os, int32_t id, const client_shadow *sh,
                            uint32_t since, bool other)
{
    return write_props(os, id, sh, since, other, false);
}

/* ENTER of `ent` with every property of its shadow that goes to other clients (other) or to
 * its own client (!other), as last encoded. */
static void write_enter(mc_ostream *os, const mc_entity *ent, const client_shadow *sh,
                        bool other)
{
    size_t n_at, n = 0;
    mc_world_write_enter(os, ent->id, ent->type, ent->position, ent->direction, 0, &n_at);
    for (size_t p = 0; p < sh->n; p++) {
        if (!(other ? sh->props[p].other : sh->props[p].own))
            continue;
        mc_world_write_prop_index(os, sh->props[p].index);
        mc_write_bytes(os, sh->props[p].bytes, sh->props[p].len);
        n++;
    }
    if (mc_ostream_ok(os))
        mc_store_u16(os->data + n_at, (uint16_t)n);
}

static size_t changed_size(const client_shadow *sh, uint32_t since)
{
    size_t bytes = 0;
    for (size_t i = 0; i < sh->n; i++)
        if (sh->props[i].other && sh->props[i].changed > since)
            bytes += 2 + sh->props[i].len;
    return bytes ? MC_WORLD_PROPS_HEAD + bytes : 0;
}

static bool beyond(float a, float b, bool member, float dist)
{
    if (!member)
        return false;
    float d = fabsf(a - b);
    return dist > 0 ? d > dist : d > 0;
}

/* Whether `x` moved or turned beyond its volatile thresholds since e was sent. */
static bool volatile_due(const mc_entity *x, const witness_entry *we)
{
    const mc_def_volatile *v = &x->td->volatile_info;
    if (v->position) {
        float dx = x->position.x - we->pos_sent.x, dy = x->position.y - we->pos_sent.y,
              dz = x->position.z - we->pos_sent.z;
        float d2 = dx * dx + dy * dy + dz * dz;
        if (v->position_dist > 0 ? d2 > v->position_dist * v->position_dist : d2 > 0)
            return true;
    }
    /* direction: x roll, y pitch, z yaw (BigWorld's Direction3D order) */
    return beyond(x->direction.z, we->dir_sent.z, v->yaw, v->yaw_dist) ||
           beyond(x->direction.y, we->dir_sent.y, v->pitch, v->pitch_dist) ||
           beyond(x->direction.x, we->dir_sent.x, v->roll, v->roll_dist);
}

typedef struct {
    size_t slot;
    double priority;
    float dist;
    size_t bytes;
    bool enter, props, vol, moved;
} candidate;

/* A stationary entity's last VOLATILE may have been lost (they are never resent): its
 * position goes again after env->refresh_ticks idle ticks, then after twice as many each
 * time, at most WITNESS_REFRESH_MAX_FACTOR times as many, for as long as it stands still. */
static bool refresh_due(const witness_env *env, witness_entry *we)
{
    if (!env->refresh_ticks || !we->refresh_gap)
        return false;
    if (we->idle < UINT32_MAX)
        we->idle++;
    return we->idle >= we->refresh_gap;
}

static int by_priority(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority < y->priority ? -1 : 1;
    return (x->slot > y->slot) - (x->slot < y->slot);
}

int witness_build(witness *w, const witness_env *env, mc_entity *ent, const mc_ostream **rel,
                  const mc_ostream **vol)
{
    mc_ostream_reset(&w->rel);
    mc_ostream_reset(&w->vol);
    *rel = &w->rel;
    *vol = &w->vol;
    write_calls_and_leaves(env, w);
    client_shadow *own = env->shadow(env->ctx, ent);
    if (own && w->own_full) {
        /* handed over: its own values as they are here, once */
        if (write_props(&w->rel, ent->id, own, 0, false, true))
            (*env->props)++;
        w->own_full = false;
        w->own_seq_sent = own->seq;
    } else if (own && !w->own_introduced) {
        /* the player's own cell entity: where it is and its own-client properties */
        write_enter(&w->rel, ent, own, false);
        w->own_introduced = true;
        w->own_seq_sent = own->seq;
        (*env->enters)++;
    } else if (own && own->seq > w->own_seq_sent) {
        if (write_changed(&w->rel, ent->id, own, w->own_seq_sent, false))
            (*env->props)++;
        w->own_seq_sent = own->seq;
    }
    candidate *c = w->n ? malloc(w->n * sizeof *c) : NULL;
    size_t nc = 0;
    if (w->n && !c)
        return -1;
    for (size_t i = 0; c && i < w->n; i++) {
        witness_entry *we = &w->e[i];
        mc_entity *x = env->find(env->ctx, we->id);
        client_shadow *sh = x && !x->in_reap ? env->shadow(env->ctx, x) : NULL;
        if (!sh)
            continue; /* gone: it leaves the view at the next update */
        candidate k = {.slot = i};
        if (!we->entered) {
            k.enter = true;
            k.bytes = MC_WORLD_ENTER_HEAD + 2 * sh->n_other + sh->other_bytes;
        } else if (we->full) {
            k.props = sh->n_other > 0;
            k.vol = k.moved = true;
            k.bytes = (k.props ? MC_WORLD_PROPS_HEAD + 2 * sh->n_other + sh->other_bytes : 0) +
                      MC_WORLD_VOLATILE_SIZE;
        } else {
            size_t pb = changed_size(sh, we->seq_sent);
            k.props = pb > 0;
            k.moved = volatile_due(x, we);
            k.vol = refresh_due(env, we) || k.moved;
            k.bytes = pb + (k.vol ? MC_WORLD_VOLATILE_SIZE : 0);
            if (!k.props && !k.vol)
                continue;
        }
        float dx = x->position.x - ent->position.x, dz = x->position.z - ent->position.z;
        k.dist = sqrtf(dx * dx + dz * dz);
        k.priority = we->priority > w->floor ? we->priority : w->floor;
        c[nc++] = k;
    }
    if (nc > 1)
        qsort(c, nc, sizeof *c, by_priority);
    size_t spent = w->rel.size, budget = env->budget;
    for (size_t i = 0; i < nc; i++) {
        if (i > 0 && spent + c[i].bytes > budget) {
            *env->deferred += nc - i;
            break;
        }
        witness_entry *we = &w->e[c[i].slot];
        mc_entity *x = env->find(env->ctx, we->id);
        client_shadow *sh = env->shadow(env->ctx, x);
        if (c[i].enter) {
            write_enter(&w->rel, x, sh, true);
            we->entered = true;
            we->pos_sent = x->position;
            we->dir_sent = x->direction;
            we->refresh_gap = 0; /* an ENTER is reliable */
            we->idle = 0;
            (*env->enters)++;
        } else {
            if (c[i].props &&
                write_props(&w->rel, x->id, sh, we->seq_sent, true, we->full))
                (*env->props)++;
            we->full = false;
            if (c[i].vol) {
                mc_world_write_volatile(&w->vol, x->id, x->position, x->direction);
                we->pos_sent = x->position;
                we->dir_sent = x->direction;
                (*env->volatiles)++;
                uint32_t most = env->refresh_ticks * WITNESS_REFRESH_MAX_FACTOR;
                if (c[i].moved || !we->refresh_gap)
                    we->refresh_gap = env->refresh_ticks;
                else
                    we->refresh_gap = we->refresh_gap > most / 2 ? most : we->refresh_gap * 2;
                we->idle = 0;
                if (!c[i].moved && env->refreshes)
                    (*env->refreshes)++;
            }
        }
        we->seq_sent = sh->seq;
        spent += c[i].bytes;
        w->floor = c[i].priority;
        we->priority = c[i].priority + 1.0 + c[i].dist;
    }
    free(c);
    return mc_ostream_ok(&w->rel) && mc_ostream_ok(&w->vol) ? 0 : -1;
}

int witness_build_leave_all(witness *w, const witness_env *env, const mc_ostream **rel)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->e[i].entered)
            push_leaving(w, w->e[i].id);
    w->n = 0;
    mc_ostream_reset(&w->rel);
    *rel = &w->rel;
    write_calls_and_leaves(env, w);
    return mc_ostream_ok(&w->rel) ? 0 : -1;
}
