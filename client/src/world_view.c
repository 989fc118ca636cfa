/* The client's view of the world (world_view.h). */
#include "world_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void world_view_clear(world_view *v)
{
    v->n = 0;
    v->has_player_cell = false;
    v->newest = 0;
    memset(&v->player, 0, sizeof v->player);
}

void world_view_free(world_view *v)
{
    free(v->e);
    free(v->stamp);
    memset(v, 0, sizeof *v);
}

static size_t slot(const world_view *v, int32_t id)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->e[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const mc_client_entity *world_view_find(const world_view *v, int32_t id)
{
    size_t at = slot(v, id);
    return at < v->n && v->e[at].id == id ? &v->e[at] : NULL;
}

typedef struct {
    world_view *v;
    int32_t player_id;
    uint16_t player_type;
    uint32_t stamp;
    void (*fn)(void *ctx, const mc_world_record *r);
    void *ctx;
    bool oom;
} apply_ctx;

static int type_of(void *ctx, int32_t id)
{
    apply_ctx *a = ctx;
    if (id == a->player_id)
        return a->player_type;
    const mc_client_entity *e = world_view_find(a->v, id);
    return e ? e->type : -1;
}

/* The player's cell was made anew (restored after its cellapp died, moved to another
 * cellapp, its witness restarted): the server introduces everything in its view again, so
 * what the old cell's view held goes, each handed to fn as a LEAVE first. */
static void drop_view(apply_ctx *a)
{
    world_view *v = a->v;
    while (v->n) {
        mc_world_record leave = {.kind = MC_WORLD_LEAVE, .id = v->e[v->n - 1].id,
                                 .type = v->e[v->n - 1].type};
        if (a->fn)
            a->fn(a->ctx, &leave);
        v->n--;
    }
}

static int on_record(void *ctx, const mc_world_record *r)
{
    apply_ctx *a = ctx;
    world_view *v = a->v;
    bool own = r->id == a->player_id;
    size_t at = slot(v, r->id);
    bool known = at < v->n && v->e[at].id == r->id;
    switch (r->kind) {
    case MC_WORLD_ENTER:
        if (own) {
            if (v->has_player_cell)
                drop_view(a); /* a new cell for the player: its view starts afresh */
            v->player = (mc_client_entity){r->id, r->type, r->position, r->direction};
            v->has_player_cell = true;
            break;
        }
        if (!known) {
            if (v->n == v->cap) {
                size_t cap = v->cap ? v->cap * 2 : 32;
                mc_client_entity *p = realloc(v->e, cap * sizeof *p);
                if (p)
                    v->e = p;
                uint32_t *st = p ? realloc(v->stamp, cap * sizeof *st) : NULL;
                if (!st) {
                    a->oom = true;
                    return -1;
                }
                v->stamp = st;
                v->cap = cap;
            }
            memmove(&v->e[at + 1], &v->e[at], (v->n - at) * sizeof *v->e);
            memmove(&v->stamp[at + 1], &v->stamp[at], (v->n - at) * sizeof *v->stamp);
            v->n++;
        }
        v->e[at] = (mc_client_entity){r->id, r->type, r->position, r->direction};
        v->stamp[at] = v->newest; /* a VOLATILE sent before it entered is older */
        break;
    case MC_WORLD_VOLATILE:
        if (known && a->stamp) {
            if (v->stamp[at] && (int32_t)(a->stamp - v->stamp[at]) <= 0) {
                v->stale++; /* reordered: a newer position is already applied */
                return 0;
            }
            v->stamp[at] = a->stamp;
        }
        if (known) {
            v->e[at].position = r->position;
            v->e[at].direction = r->direction;
        }
        break;
    case MC_WORLD_CORRECTION:
        v->player.position = r->position;
        v->player.direction = r->direction;
        break;
    default:
        break;
    }
    if (a->fn)
        a->fn(a->ctx, r);
    if (r->kind == MC_WORLD_LEAVE && known && !own) {
        at = slot(v, r->id); /* the callback cannot change the view, but be exact */
        if (at < v->n && v->e[at].id == r->id) {
            memmove(&v->e[at], &v->e[at + 1], (v->n - at - 1) * sizeof *v->e);
            memmove(&v->stamp[at], &v->stamp[at + 1], (v->n - at - 1) * sizeof *v->stamp);
            v->n--;
        }
    }
    return 0;
}

int world_view_apply(world_view *v, const mc_entity_defs *defs, int32_t player_id,
                     uint16_t player_type, uint32_t stamp, const uint8_t *data, size_t len,
                     void (*fn)(void *ctx, const mc_world_record *r), void *ctx, char *why,
                     size_t whylen)
{
    if (stamp && (!v->newest || (int32_t)(stamp - v->newest) > 0))
        v->newest = stamp;
    apply_ctx a = {v, player_id, player_type, stamp, fn, ctx, false};
    int rc = mc_world_parse(defs, player_id, data, len, type_of, on_record, &a, why, whylen);
    if (a.oom)
        snprintf(why, whylen, "out of memory");
    return rc == 0 ? 0 : -1;
}
