/* Reals and ghosts (docs/WORLD.md "Reals and ghosts", BigWorld's real and ghost entities):
 * every cell entity is real on one cellapp; each cellapp whose cell of the space lies within
 * the ghost distance (aoiRadius + aoiHysteresis + --ghostMargin, or the cell's reach +
 * --ghostMargin when its witnesses see farther: ghost_reach.c) of it holds a ghost of it:
 * its type, position, direction and ghosted properties, kept current by the real's cellapp
 * every view-update period (GHOST_DATA when something changed, GHOST_DELETE when it went
 * out of range or left). Ghosts sit in their space's grid like reals, so witnesses see them
 * the same; they run no timers and no hooks, have no base, and a call reaching one is sent
 * on to its real. */
#include "cell_layout.h"
#include "cellapp.h"
#include "ghost_ring.h"
#include "common/log.h"
#include "entity/ghost_wire.h"
#include "entity/wire.h"
#include "server/control.h"

#include <event2/event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A real's ghosts: the cellapps holding one, and the digest of what they were last sent. */
typedef struct {
    mc_address *at;
    size_t n, cap;
    uint64_t digest;
    mc_time_us refreshed_at; /* when its ghosts were last sent whole, changed or not */
    bool seeded;             /* handed over with an offload, nothing sent from here yet */
    uint32_t seq;            /* its client calls numbered so far (kept across offloads) */
} ghost_out;

/* Every ghost is sent again this often even when nothing changed: a GHOST_DATA that reached
 * a cellapp before that cellapp knew the space's layout or its sender (it is dropped there)
 * is made good, also for a real that stands still. */
#define GHOST_REFRESH_US (1 * MC_US_PER_S)

/* A ghost that hears nothing from its real for this long goes (its real's cellapp sends it
 * at least every GHOST_REFRESH_US): one no real keeps any more, which a late GHOST_DATA of
 * an offloaded real's old cellapp can leave behind, does not stay in views for ever. */
#define GHOST_SILENT_US (10 * MC_US_PER_S)

/* A ghost: where its real is, and when it last heard from it; the number of the last client
 * call of its real it took (or that came before it was made), and the recent ones. */
typedef struct {
    mc_address real;
    mc_time_us heard_at;
    uint32_t seq;
    ghost_ring ring;
} ghost_in;

/* A GHOST_* message held by the test knob ghosts/testCallDelayMs. */
typedef struct held_call {
    struct held_call *next;
    mc_address from;
    uint16_t msg;
    mc_time_us due;
    size_t len;
    uint8_t bytes[];
} held_call;

typedef struct cell_ghosts {
    mc_engine *e;
    struct event *tick_ev;
    double margin;          /* --ghostMargin */
    double offload_hysteresis; /* --offloadHysteresis */
    uint64_t offloads, offload_failures;
    cell_offload_fn offload; /* the moves' (cell_move_out.c); NULL: reals are not offloaded */
    mc_ostream scratch;
    uint64_t made, updates, deletes, bytes_out, send_failures; /* as the real's cellapp */
    uint64_t refreshes; /* unchanged ghosts sent again (GHOST_REFRESH_US) */
    uint64_t held, created, updated, deleted, refused, stale, forwarded; /* as the ghosts' */
    uint64_t calls_out, calls_in; /* GHOST_CLIENT_CALLs sent (per ghost) and taken */
    uint64_t handed, silent; /* holders handed over with offloads; ghosts gone silent */
    ghost_ring_limits ring;  /* --ghostCallRing, --ghostCallRingBytes, --ghostCallRingMs */
    uint64_t ring_calls, ring_bytes, ring_ms; /* (their watchers) */
    uint64_t ring_total_max; /* --ghostCallRingTotalBytes: all the rings' arguments at most */
    uint64_t ring_total;     /* the arguments all the rings hold now */
    uint64_t ring_expired, ring_trimmed; /* entries gone by age; gone for the total's bound */
    uint64_t seq_resets;     /* ghosts whose new real numbered lower: ring and number reset */
    uint64_t calls_behind;   /* numbered calls taken that were not the next (a hole) */
    uint64_t delay_ms;       /* --testGhostCallDelayMs: a test knob only */
    held_call *held_head, *held_tail;
    struct event *held_ev;
} cell_ghosts;

static cell_state *state(mc_engine *e) { return mc_engine_role_state(e); }
static cell_ghosts *gh(mc_engine *e) { return state(e)->ghosts; }

static bool log_ok(uint64_t n) { return n <= 10 || n % 1000 == 0; }

/* --- the rings of the ghosts' recent calls, and the bytes they hold together ------------ */

static void ring_free(cell_ghosts *g, ghost_ring *r)
{
    g->ring_total -= r->bytes;
    ghost_ring_free(r);
}

static void ring_expire(cell_ghosts *g, ghost_ring *r, const ghost_ring_limits *l,
                        mc_time_us now)
{
    size_t before = r->bytes;
    size_t k = ghost_ring_expire(r, l, now);
    g->ring_total -= before - r->bytes;
    if (l == &g->ring)
        g->ring_expired += k;
    else
        g->ring_trimmed += k; /* a shorter age: for the total's bound */
}

/* Keep a call in a ghost's ring within the cellapp's total: what does not fit beside the
 * others' goes from this ring's oldest, and when even the call alone does not fit the ring
 * is emptied (a witness that needed them counts a gap); the tick then drops the oldest
 * entries of all the rings (trim_rings), so the busy keep theirs. */
static void ring_push(cell_ghosts *g, ghost_ring *r, uint32_t seq, uint16_t method,
                      const uint8_t *args, size_t len, mc_time_us now)
{
    size_t before = r->bytes;
    if (g->ring_total + len > g->ring_total_max) {
        size_t others = g->ring_total - r->bytes;
        size_t room = others < g->ring_total_max ? g->ring_total_max - others : 0;
        g->ring_trimmed += ghost_ring_trim(r, room > len ? room - len : 0);
        if (others + len > g->ring_total_max) {
            g->ring_trimmed += r->n + 1;
            g->ring_total -= before;
            ghost_ring_free(r);
            return;
        }
        g->ring_total -= before - r->bytes;
        before = r->bytes;
    }
    (void)ghost_ring_push(r, &g->ring, seq, method, args, len, now);
    g->ring_total = g->ring_total - before + r->bytes;
}

/* --- the real's side -------------------------------------------------------------------- */

static double ghost_distance(mc_engine *e)
{
    cell_state *cs = state(e);
    return (double)cs->aoi.radius + (double)cs->aoi.hysteresis + gh(e)->margin;
}

/* Distance on the x/z plane from (x, z) to a cell's rectangle (0 inside). */
static double rect_distance(const cell_rect *r, double x, double z)
{
    double dx = x < r->x_min ? r->x_min - x : x >= r->x_max ? x - r->x_max : 0;
    double dz = z < r->z_min ? r->z_min - z : z >= r->z_max ? z - r->z_max : 0;
    return sqrt(dx * dx + dz * dz);
}

static uint64_t digest(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h ? h : 1;
}

static bool out_has(const ghost_out *g, const mc_address *a, size_t *at)
{
    for (size_t i = 0; g && i < g->n; i++)
        if (mc_address_equal(&g->at[i], a)) {
            if (at)
                *at = i;
            return true;
        }
    return false;
}

static void send_delete(mc_engine *e, const mc_address *to, int32_t id)
{
    cell_ghosts *g = gh(e);
    uint8_t buf[4];
    mc_ostream os;
    mc_ostream_init(&os);
    mc_ghost_delete_encode(&os, id);
    memcpy(buf, os.data, 4);
    mc_ostream_free(&os);
    if (mc_engine_send(e, to, MC_MSG_GHOST_DELETE, buf, sizeof buf) == MC_CALL_OK)
        g->deletes++;
    else
        g->send_failures++;
}

/* The real's GHOST_DATA into os (false: its properties do not encode). */
static bool encode_data_into(mc_engine *e, mc_entity *ent, mc_ostream *os)
{
    mc_ostream_reset(os);
    uint16_t n = 0;
    for (size_t i = 0; i < ent->td->nprops; i++)
        if (ent->td->props[i].ghosted && ent->td->props[i].part_index[MC_PART_CELL] >= 0)
            n++;
    mc_ghost_head h = {.entity_id = ent->id, .type = ent->type, .space_id = ent->space->id,
                       .position = ent->position, .direction = ent->direction, .nprops = n};
    mc_ghost_head_encode(os, &h);
    char why[MC_REASON_MAX];
    for (size_t i = 0; i < ent->td->nprops; i++) {
        const mc_def_property *p = &ent->td->props[i];
        if (!p->ghosted || p->part_index[MC_PART_CELL] < 0)
            continue;
        mc_write_u16(os, p->index);
        if (ent->gt->props_encode_one(mc_engine_defs(e), MC_PART_CELL, ent->props, p->index, os,
                                      why, sizeof why) != MC_CALL_OK)
            return false;
    }
    /* the number of its last client call: the ghost knows which came before it */
    const ghost_out *go = ent->is_ghost ? NULL : ent->ghost_data;
    mc_write_u32(os, go ? go->seq : 0);
    return mc_ostream_ok(os);
}

/* The real's GHOST_DATA into g->scratch. */
static bool encode_data(mc_engine *e, mc_entity *ent)
{
    return encode_data_into(e, ent, &gh(e)->scratch);
}

/* One real of a split space: its ghosts made, updated, deleted. */
static void real_tick(mc_engine *e, mc_space *sp, mc_entity *ent, double base, mc_time_us now)
{
    cell_ghosts *g = gh(e);
    double hyst = state(e)->aoi.hysteresis;
    ghost_out *go = ent->ghost_data;
    const cell_layout *l = sp->layout;
    mc_address want[MC_CELLS_PER_SPACE_MAX];
    bool is_new[MC_CELLS_PER_SPACE_MAX];
    size_t nw = 0;
    /* (a cellapp that serves no cell of the space any more, its cell merged away, ghosts
     * its reals too: where they are, so that they can be offloaded there) */
    for (size_t i = 0; l && i < l->n; i++) {
        if ((int)i == l->own)
            continue;
        double d = rect_distance(&l->cells[i], ent->position.x, ent->position.z);
        double dist = cell_reach_distance(l, i, base, g->margin, now);
        bool has = out_has(go, &l->cells[i].addr, NULL);
        if (d <= dist || (has && d <= dist + hyst)) {
            is_new[nw] = !has;
            want[nw++] = l->cells[i].addr;
        }
    }
    /* ghosts no longer wanted (out of range, or their cellapp serves no cell now) go; one
     * handed over with an offload hears this real first, so that it takes the delete from
     * here (a ghost takes GHOST_DELETE only from its real's cellapp) */
    bool seeded = go && go->seeded && encode_data(e, ent);
    if (go)
        go->seeded = false;
    for (size_t i = 0; go && i < go->n;) {
        bool keep_it = false;
        for (size_t j = 0; j < nw && !keep_it; j++)
            keep_it = mc_address_equal(&go->at[i], &want[j]);
        if (keep_it) {
            i++;
            continue;
        }
        if (seeded)
            (void)mc_engine_send(e, &go->at[i], MC_MSG_GHOST_DATA, g->scratch.data,
                                 g->scratch.size);
        send_delete(e, &go->at[i], ent->id);
        go->at[i] = go->at[--go->n];
    }
    if (!nw)
        return;
    if (!go) {
        go = calloc(1, sizeof *go);
        if (!go)
            return;
        ent->ghost_data = go;
    }
    if (!encode_data(e, ent)) {
        g->send_failures++;
        return;
    }
    uint64_t d = digest(g->scratch.data, g->scratch.size - 4); /* (not the call number) */
    bool changed = d != go->digest;
    go->digest = d;
    bool refresh = now - go->refreshed_at >= GHOST_REFRESH_US;
    if (refresh || changed)
        go->refreshed_at = now;
    for (size_t j = 0; j < nw; j++) {
        if (!is_new[j] && !changed && !refresh)
            continue;
        if (mc_engine_send(e, &want[j], MC_MSG_GHOST_DATA, g->scratch.data, g->scratch.size) !=
            MC_CALL_OK) {
            g->send_failures++;
            continue;
        }
        g->bytes_out += g->scratch.size;
        if (!is_new[j]) {
            if (changed)
                g->updates++;
            else
                g->refreshes++;
            continue;
        }
        if (go->n == go->cap) {
            size_t cap = go->cap ? go->cap * 2 : 4;
            mc_address *a = realloc(go->at, cap * sizeof *a);
            if (!a) {
                send_delete(e, &want[j], ent->id);
                continue;
            }
            go->at = a;
            go->cap = cap;
        }
        go->at[go->n++] = want[j];
        g->made++;
    }
}

/* A real outside its cellapp's cell by more than the hysteresis (or in a space where this
 * cellapp serves no cell) moves to the cellapp whose cell holds it, when that one holds its
 * ghost (so that it has the space and a cell to arrive next to). */
static void maybe_offload(mc_engine *e, mc_space *sp, mc_entity *ent)
{
    cell_ghosts *g = gh(e);
    const cell_layout *l = sp->layout;
    if (!l || (l->own >= 0 && l->n < 2))
        return;
    float x = ent->position.x, z = ent->position.z;
    if (l->own >= 0) {
        const cell_rect *own = &l->cells[l->own];
        if (cell_rect_contains(own, x, z) || rect_distance(own, x, z) <= g->offload_hysteresis)
            return;
    }
    for (size_t i = 0; i < l->n; i++) {
        if ((int)i == l->own || !cell_rect_contains(&l->cells[i], x, z))
            continue;
        if (!out_has(ent->ghost_data, &l->cells[i].addr, NULL))
            return; /* its ghost is on the way there: next time */
        if (!g->offload)
            return;
        int rc = g->offload(e, ent, &l->cells[i].addr);
        if (rc == MC_CALL_OK) {
            g->offloads++;
        } else if (log_ok(++g->offload_failures)) {
            MC_WARNING("%s %d could not be offloaded: %s", ent->td->name, (int)ent->id,
                       mc_call_status_name(rc));
        }
        return;
    }
}

static void discard_ghost(mc_engine *e, mc_entity *ent);

/* Ghosts whose real has said nothing for GHOST_SILENT_US go (one a space: discarding may
 * end the space; the next tick takes the next). */
static void drop_silent(mc_engine *e, mc_time_us now)
{
    cell_state *cs = state(e);
    for (size_t s = 0; s < cs->n; s++) {
        mc_space *sp = cs->spaces[s];
        for (size_t i = 0; i < sp->n; i++) {
            mc_entity *ent = sp->entities[i];
            ghost_in *gi = ent->is_ghost ? ent->ghost_data : NULL;
            if (!gi || ent->in_reap || now - gi->heard_at < GHOST_SILENT_US)
                continue;
            char a[MC_ADDRESS_STRLEN];
            if (log_ok(++gh(e)->silent))
                MC_WARNING("the ghost of %s %d heard nothing from its real (%s) for %d s: it "
                           "goes",
                           ent->td->name, (int)ent->id,
                           mc_address_format(&gi->real, a, sizeof a),
                           (int)(GHOST_SILENT_US / MC_US_PER_S));
            discard_ghost(e, ent);
            return;
        }
    }
}

/* Each ghost's calls older than --ghostCallRingMs go, quiet ghosts' too (each entry goes
 * once: the walk is a check a ghost beside the one of drop_silent). Above the cellapp's
 * total the oldest of all go: the age kept halves until the total is back under 7/8 of it
 * (a walk a halving, some 30 at most, only while over). */
static void expire_rings(cell_ghosts *g, const ghost_ring_limits *l, mc_engine *e,
                         mc_time_us now)
{
    cell_state *cs = state(e);
    for (size_t s = 0; s < cs->n; s++) {
        mc_space *sp = cs->spaces[s];
        for (size_t i = 0; i < sp->n; i++) {
            mc_entity *ent = sp->entities[i];
            if (ent->is_ghost && ent->ghost_data)
                ring_expire(g, &((ghost_in *)ent->ghost_data)->ring, l, now);
        }
    }
}

static void trim_rings(mc_engine *e, mc_time_us now)
{
    cell_ghosts *g = gh(e);
    expire_rings(g, &g->ring, e, now);
    ghost_ring_limits l = g->ring;
    uint64_t target = g->ring_total_max - g->ring_total_max / 8;
    while (g->ring_total > target && l.age_us) {
        l.age_us /= 2;
        expire_rings(g, &l, e, now);
    }
}

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    mc_engine *e = ctx;
    cell_state *cs = state(e);
    mc_time_us now = mc_clock_now_us();
    drop_silent(e, now);
    trim_rings(e, now);
    double dist = ghost_distance(e);
    for (size_t s = 0; s < cs->n; s++) {
        mc_space *sp = cs->spaces[s];
        int32_t space_id = sp->id;
        mc_time_us began = mc_clock_now_us();
        float need = 0; /* the largest radius + hysteresis of the witnesses here */
        for (size_t i = 0; i < sp->n; i++) {
            mc_entity *ent = sp->entities[i];
            if (ent->is_ghost || ent->in_reap)
                continue;
            bool witness;
            float r, h;
            if (sp->layout && cell_aoi_settings(ent, &witness, &r, &h) && witness && r > 0 &&
                r + h > need)
                need = r + h;
            /* reals only; a moving one keeps its ghosts as they are until it has left */
            if (ent->move_state)
                continue;
            if (!sp->layout && !ent->ghost_data)
                continue; /* a space served whole: nothing to do */
            real_tick(e, sp, ent, dist, now);
            maybe_offload(e, sp, ent);
        }
        /* the ghost upkeep is work of the space's cell (cell_work.c); the space looked up
         * again only when the list changed under the loop (an offload may end a space) */
        mc_time_us end = mc_clock_now_us();
        bool still_here = s < cs->n && cs->spaces[s] == sp && sp->id == space_id;
        mc_space *now_sp = still_here ? sp : space_find(e, space_id);
        cell_work_add(now_sp, end > began ? end - began : 0);
        if (still_here)
            cell_reach_tell(e, sp, need, now);
    }
}

void cell_ghosts_set_offload(mc_engine *e, cell_offload_fn offload)
{
    if (gh(e))
        gh(e)->offload = offload;
}

void cell_ghosts_forget(mc_engine *e, mc_entity *ent)
{
    if (!ent->ghost_data || !gh(e))
        return;
    if (ent->is_ghost) {
        ring_free(gh(e), &((ghost_in *)ent->ghost_data)->ring);
        free(ent->ghost_data);
        gh(e)->held--;
    } else {
        ghost_out *go = ent->ghost_data;
        for (size_t i = 0; i < go->n; i++)
            if (!mc_engine_freeing(e))
                send_delete(e, &go->at[i], ent->id);
        free(go->at);
        free(go);
    }
    ent->ghost_data = NULL;
}

/* A real turning into a ghost keeps only what a ghost holds: its ghosted cell properties; the
 * others (CELL_PRIVATE, OWN_CLIENT) go back to their defaults, as in a ghost made afresh, so
 * no private value stays behind on the cellapp it left. -1: out of memory or a value that
 * does not encode (ent unchanged). */
static int keep_ghosted_only(mc_engine *e, mc_entity *ent)
{
    const mc_game_type *gt = ent->gt;
    const mc_entity_defs *defs = mc_engine_defs(e);
    size_t size = gt->props_size[MC_PART_CELL];
    void *fresh = calloc(1, size ? size : 1);
    if (!fresh)
        return -1;
    if (gt->props_init(defs, MC_PART_CELL, fresh) != 0) {
        free(fresh);
        return -1;
    }
    mc_ostream os;
    mc_ostream_init(&os);
    char why[MC_REASON_MAX];
    int rc = 0;
    for (size_t i = 0; i < ent->td->nprops && rc == 0; i++) {
        const mc_def_property *p = &ent->td->props[i];
        if (!p->ghosted || p->part_index[MC_PART_CELL] < 0)
            continue;
        mc_ostream_reset(&os);
        rc = gt->props_encode_one(defs, MC_PART_CELL, ent->props, p->index, &os, why, sizeof why);
        if (rc == MC_CALL_OK && !mc_ostream_ok(&os))
            rc = -1;
        if (rc == MC_CALL_OK) {
            mc_istream is;
            mc_istream_init(&is, os.data, os.size);
            rc = gt->props_decode_one(defs, MC_PART_CELL, fresh, p->index, &is, why, sizeof why);
        }
    }
    mc_ostream_free(&os);
    if (rc != 0) {
        gt->props_free(MC_PART_CELL, fresh);
        free(fresh);
        return -1;
    }
    gt->props_free(MC_PART_CELL, ent->props);
    free(ent->props);
    ent->props = fresh;
    return 0;
}

size_t cell_ghosts_holders(const mc_entity *ent, const mc_address *except, mc_address *out,
                           size_t max)
{
    const ghost_out *go = ent->is_ghost ? NULL : ent->ghost_data;
    size_t n = 0;
    for (size_t i = 0; go && i < go->n && n < max; i++)
        if (!mc_address_equal(&go->at[i], except))
            out[n++] = go->at[i];
    return n;
}

int cell_ghosts_become(mc_engine *e, mc_entity *ent, const mc_address *real, bool handed)
{
    cell_ghosts *g = gh(e);
    if (!g || keep_ghosted_only(e, ent) != 0)
        return -1;
    ghost_in *gi = calloc(1, sizeof *gi);
    if (!gi)
        return -1;
    gi->real = *real;
    gi->heard_at = mc_clock_now_us();
    ghost_out *go = ent->ghost_data;
    if (go) {
        gi->seq = go->seq; /* every call it made came before */
        /* its ghosts on third cellapps: handed over to the new real with the move (it keeps
         * them current from its first tick), or else deleted (it makes them again where
         * they are wanted); the new cellapp's is the real now */
        for (size_t i = 0; i < go->n; i++)
            if (!mc_address_equal(&go->at[i], real)) {
                if (handed)
                    g->handed++;
                else
                    send_delete(e, &go->at[i], ent->id);
            }
        free(go->at);
        free(go);
    }
    mc_engine_drop_timers(e, ent);
    ent->ghost_data = gi;
    ent->is_ghost = true;
    bool witness = false;
    float r = 0, h = 0;
    if (cell_aoi_settings(ent, &witness, &r, &h) && witness) {
        mc_call_frame f;
        mc_engine_frame(e, &f, ent);
        cell_aoi_set_witness(&f.ctx, false);
    }
    /* a real no more here: the space's count of reals follows */
    if (ent->space && ent->space->nreal) {
        ent->space->nreal--;
        if (!ent->space->nreal && cell_cells_keeps(ent->space))
            cell_cells_notice(e, ent->space->id, false, true);
    }
    g->held++;
    return 0;
}

int cell_ghosts_seed_out(mc_engine *e, mc_entity *ent, const mc_address *old,
                         const mc_address *holders, size_t nholders, uint32_t seq)
{
    if (ent->is_ghost || ent->ghost_data)
        return 0;
    ghost_out *go = calloc(1, sizeof *go);
    mc_address *at = go ? malloc((1 + nholders) * sizeof *at) : NULL;
    if (!at) {
        free(go);
        return -1;
    }
    at[0] = *old;
    size_t n = 1;
    const mc_address *self = mc_engine_address(e);
    for (size_t i = 0; i < nholders; i++) {
        bool dup = mc_address_equal(&holders[i], self);
        for (size_t j = 0; j < n && !dup; j++)
            dup = mc_address_equal(&at[j], &holders[i]);
        if (!dup)
            at[n++] = holders[i];
    }
    go->at = at;
    go->n = go->cap = n;
    go->digest = 0;     /* sent (or deleted) at the first tick */
    go->seeded = true;
    go->seq = seq;
    ent->ghost_data = go;
    return 0;
}

void cell_ghosts_seed_seq(mc_entity *ent, uint32_t seq)
{
    if (ent->is_ghost || ent->ghost_data)
        return;
    ghost_out *go = calloc(1, sizeof *go);
    if (!go)
        return;
    go->seq = seq;
    ent->ghost_data = go;
}

/* --- the ghosts' side ------------------------------------------------------------------- */

static void discard_ghost(mc_engine *e, mc_entity *ent)
{
    ent->gone_why = -1;
    mc_engine_discard_entity(e, ent); /* on_destroy: out of its space, state freed */
}

uint32_t cell_ghosts_make_way(mc_engine *e, int32_t id)
{
    mc_entity *ent = mc_engine_find(e, id);
    uint32_t seq = 0;
    if (ent && ent->is_ghost) {
        seq = ((ghost_in *)ent->ghost_data)->seq;
        gh(e)->deleted++;
        discard_ghost(e, ent);
    }
    return seq;
}

/* GHOST_DATA and GHOST_DELETE come only from live cellapps. */
static bool from_cellapp(mc_engine *e, const mc_origin *o)
{
    return !o->local &&
           mc_server_peer_is_live(mc_engine_server(e), &o->addr, MC_ROLE_CELLAPP);
}

static void refuse(mc_engine *e, const mc_origin *o, const char *what, const char *why)
{
    cell_ghosts *g = gh(e);
    g->refused++;
    char a[MC_ADDRESS_STRLEN];
    if (log_ok(g->refused))
        MC_WARNING("%s from %s refused: %s (%llu so far)", what,
                   mc_address_format(&o->addr, a, sizeof a), why,
                   (unsigned long long)g->refused);
}

/* The ghosted properties of a GHOST_DATA into ent (false with why). */
static bool read_props(mc_engine *e, mc_entity *ent, uint16_t n, mc_istream *is, char *why,
                       size_t whylen, uint32_t *seq)
{
    *seq = 0;
    for (uint16_t k = 0; k < n; k++) {
        uint16_t index = mc_read_u16(is);
        if (!mc_istream_ok(is) || index >= ent->td->nprops || !ent->td->props[index].ghosted ||
            ent->td->props[index].part_index[MC_PART_CELL] < 0) {
            snprintf(why, whylen, "property %u of %s is not a ghosted cell property",
                     (unsigned)index, ent->td->name);
            return false;
        }
        if (ent->gt->props_decode_one(mc_engine_defs(e), MC_PART_CELL, ent->props, index, is,
                                      why, whylen) != MC_CALL_OK)
            return false;
    }
    if (mc_istream_remaining(is) == 4)
        *seq = mc_read_u32(is); /* the real's call number (absent from older senders) */
    if (!mc_istream_done(is)) {
        snprintf(why, whylen, "trailing bytes");
        return false;
    }
    return true;
}

static void take_data(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    cell_ghosts *g = gh(e);
    char why[MC_REASON_MAX] = "";
    mc_ghost_head h;
    if (!from_cellapp(e, o)) {
        refuse(e, o, "GHOST_DATA", "not from a live cellapp");
        return;
    }
    if (!mc_ghost_head_decode(is, &h, why, sizeof why)) {
        refuse(e, o, "GHOST_DATA", why);
        return;
    }
    mc_space *sp = space_find(e, h.space_id);
    if (!sp) {
        g->stale++; /* this cellapp serves no cell of it (any more) */
        return;
    }
    mc_entity *ent = mc_engine_find(e, h.entity_id);
    if (ent && (!ent->is_ghost || ent->in_reap)) {
        g->stale++; /* the real is here now (it moved here): a late word from its old place */
        return;
    }
    if (ent && ent->type != h.type) {
        refuse(e, o, "GHOST_DATA", "the ghost's type changed");
        return;
    }
    bool made = false;
    if (!ent) {
        ent = mc_engine_new_entity(e, h.type, h.entity_id, why, sizeof why);
        if (!ent) {
            refuse(e, o, "GHOST_DATA", why);
            return;
        }
        ent->gone_why = -1; /* no base to tell, ever */
        ent->is_ghost = true;
        ghost_in *gi = calloc(1, sizeof *gi);
        if (!gi) {
            mc_engine_discard_entity(e, ent);
            return;
        }
        ent->ghost_data = gi;
        g->held++;
        made = true;
    }
    bool new_real = !made && !mc_address_equal(&((ghost_in *)ent->ghost_data)->real, &o->addr);
    ((ghost_in *)ent->ghost_data)->real = o->addr; /* the latest real's cellapp */
    ((ghost_in *)ent->ghost_data)->heard_at = mc_clock_now_us();
    uint32_t seq;
    if (!read_props(e, ent, h.nprops, is, why, sizeof why, &seq)) {
        refuse(e, o, "GHOST_DATA", why);
        if (made)
            discard_ghost(e, ent);
        return;
    }
    ghost_in *gi = ent->ghost_data;
    if (seq > gi->seq) { /* calls made before it was made here (or a hole: ring emptied) */
        if (!made)
            g->calls_behind++;
        gi->seq = seq;
        ring_free(g, &gi->ring);
    } else if (new_real && seq < gi->seq) {
        /* a real elsewhere now that numbers lower (one that did not carry the number, an
         * older sender): what is held is the old real's; its calls from seq + 1 are new */
        g->seq_resets++;
        gi->seq = seq;
        ring_free(g, &gi->ring);
    }
    ent->direction = h.direction;
    if (made) {
        ent->position = h.position;
        if (space_add(e, sp, ent) != 0) {
            discard_ghost(e, ent);
            return;
        }
        g->created++;
        return;
    }
    if (ent->space != sp && space_move(e, ent, sp) != 0) {
        discard_ghost(e, ent);
        return;
    }
    if (ent->position.x != h.position.x || ent->position.y != h.position.y ||
        ent->position.z != h.position.z) {
        ent->position = h.position;
        cell_aoi_moved(e, ent);
    }
    g->updated++;
}

static void take_delete(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    cell_ghosts *g = gh(e);
    char why[MC_REASON_MAX] = "";
    int32_t id;
    if (!from_cellapp(e, o)) {
        refuse(e, o, "GHOST_DELETE", "not from a live cellapp");
        return;
    }
    if (!mc_ghost_delete_decode(is, &id, why, sizeof why) || !mc_istream_done(is)) {
        refuse(e, o, "GHOST_DELETE", why[0] ? why : "trailing bytes");
        return;
    }
    mc_entity *ent = mc_engine_find(e, id);
    if (!ent || !ent->is_ghost || ent->in_reap ||
        !mc_address_equal(&((ghost_in *)ent->ghost_data)->real, &o->addr)) {
        g->stale++; /* a real here now, or a ghost another cellapp keeps current */
        return;
    }
    g->deleted++;
    discard_ghost(e, ent);
}

uint32_t cell_ghosts_client_call(mc_engine *e, mc_entity *ent, uint16_t method,
                                 const uint8_t *args, size_t len)
{
    cell_ghosts *g = gh(e);
    ghost_out *go = ent->is_ghost ? NULL : ent->ghost_data;
    if (!g || !go)
        return 0;
    if (!go->n)
        return ++go->seq; /* numbered all the same: its witnesses here hear it */
    /* a real just offloaded here, its handed-over ghosts not told of it yet (its first ghost
     * update comes once it has settled): they name its old cellapp as their real and would
     * take the call for a stale word, so they hear from it here first */
    if (go->seeded && ent->space) {
        mc_ostream data;
        mc_ostream_init(&data);
        if (encode_data_into(e, ent, &data))
            for (size_t i = 0; i < go->n; i++)
                if (mc_engine_send(e, &go->at[i], MC_MSG_GHOST_DATA, data.data, data.size) ==
                    MC_CALL_OK)
                    g->bytes_out += data.size;
        mc_ostream_free(&data);
    }
    uint32_t seq = ++go->seq;
    mc_ostream buf; /* not the scratch: a handler may call while a tick encodes */
    mc_ostream *os = &buf;
    mc_ostream_init(os);
    mc_ghost_call_seq_encode(os, ent->id, method, seq, args, len);
    if (!mc_ostream_ok(os)) {
        mc_ostream_free(os);
        g->send_failures++;
        return seq;
    }
    /* on the channel that carried the ghost's GHOST_DATA: each ghost hears it after it was
     * made, and its witnesses queue it for the clients introduced to it */
    for (size_t i = 0; i < go->n; i++) {
        if (mc_engine_send(e, &go->at[i], MC_MSG_GHOST_CLIENT_CALL_SEQ, os->data, os->size) !=
            MC_CALL_OK) {
            g->send_failures++;
            continue;
        }
        g->calls_out++;
        g->bytes_out += os->size;
    }
    mc_ostream_free(os);
    return seq;
}

/* One GHOST_CLIENT_CALL (numbered: _SEQ) from the cellapp at `from`, already known live. */
static void take_call(mc_engine *e, const mc_address *from, bool numbered, const uint8_t *bytes,
                      size_t n)
{
    cell_ghosts *g = gh(e);
    char why[MC_REASON_MAX] = "";
    int32_t id;
    uint16_t method;
    uint32_t seq = 0;
    const uint8_t *args;
    size_t len;
    mc_istream in, *is = &in;
    mc_istream_init(is, bytes, n);
    mc_origin o = {.local = false, .addr = *from};
    const char *what = numbered ? "GHOST_CLIENT_CALL_SEQ" : "GHOST_CLIENT_CALL";
    if (numbered ? !mc_ghost_call_seq_decode(is, &id, &method, &seq, &args, &len, why, sizeof why)
                 : !mc_ghost_call_decode(is, &id, &method, &args, &len, why, sizeof why)) {
        refuse(e, &o, what, why);
        return;
    }
    mc_entity *ent = mc_engine_find(e, id);
    if (!ent || !ent->is_ghost || ent->in_reap ||
        !mc_address_equal(&((ghost_in *)ent->ghost_data)->real, from)) {
        g->stale++; /* no ghost here now, or one another cellapp keeps current */
        return;
    }
    /* the arguments as the method's def has them (clients trust what they are sent) */
    if (method >= ent->td->nmethods[MC_PART_CLIENT]) {
        refuse(e, &o, what, "no such client method");
        return;
    }
    const mc_def_method *m = &ent->td->methods[MC_PART_CLIENT][method];
    mc_value *vals = calloc(m->nargs ? m->nargs : 1, sizeof *vals);
    if (!vals)
        return;
    mc_istream ai;
    mc_istream_init(&ai, args, len);
    int rc = mc_defs_decode_args(mc_engine_defs(e), m, &ai, vals, why, sizeof why);
    if (rc == 0)
        for (size_t i = 0; i < m->nargs; i++)
            mc_value_free(&vals[i]);
    free(vals);
    if (rc != 0) {
        refuse(e, &o, what, why);
        return;
    }
    ghost_in *gi = ent->ghost_data;
    if (seq) {
        if (seq <= gi->seq) {
            g->stale++; /* one this ghost had (its data said so): heard already */
            return;
        }
        if (seq != gi->seq + 1 && gi->seq)
            g->calls_behind++;
        gi->seq = seq;
        ring_push(g, &gi->ring, seq, method, args, len, mc_clock_now_us());
    }
    g->calls_in++;
    (void)cell_aoi_fan_out(e, ent, false, method, args, len, from, seq);
}

static void arm_held(cell_ghosts *g)
{
    if (!g->held_head)
        return;
    mc_time_us now = mc_clock_now_us();
    mc_time_us wait = g->held_head->due > now ? g->held_head->due - now : 0;
    struct timeval tv = {(time_t)(wait / 1000000), (suseconds_t)(wait % 1000000)};
    event_add(g->held_ev, &tv);
}

static void take_held(mc_engine *e, const held_call *h);

/* The held messages that are due, in the order they came. */
static void on_held(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    mc_engine *e = ctx;
    cell_ghosts *g = gh(e);
    mc_time_us now = mc_clock_now_us();
    while (g->held_head && g->held_head->due <= now) {
        held_call *h = g->held_head;
        g->held_head = h->next;
        if (!g->held_head)
            g->held_tail = NULL;
        take_held(e, h);
        free(h);
    }
    arm_held(g);
}

/* One ghost message, now. */
static void take_now(mc_engine *e, const mc_origin *o, uint16_t msg, const uint8_t *bytes,
                     size_t n)
{
    mc_istream in;
    mc_istream_init(&in, bytes, n);
    if (msg == MC_MSG_GHOST_DATA) {
        take_data(e, o, &in);
        return;
    }
    if (msg == MC_MSG_GHOST_DELETE) {
        take_delete(e, o, &in);
        return;
    }
    bool numbered = msg == MC_MSG_GHOST_CLIENT_CALL_SEQ;
    if (!from_cellapp(e, o)) {
        refuse(e, o, numbered ? "GHOST_CLIENT_CALL_SEQ" : "GHOST_CLIENT_CALL",
               "not from a live cellapp");
        return;
    }
    take_call(e, &o->addr, numbered, bytes, n);
}

static void take_held(mc_engine *e, const held_call *h)
{
    mc_origin o = {.local = false, .addr = h->from};
    take_now(e, &o, h->msg, h->bytes, h->len);
}

/* A ghost message: taken now, or (the test knob ghosts/testCallDelayMs) held for delay_ms
 * with every ghost message after it, in the order they came (as a slow network would). */
static void on_ghost_message(mc_engine *e, const mc_origin *o, mc_istream *is, uint16_t msg)
{
    cell_ghosts *g = gh(e);
    size_t n = mc_istream_remaining(is);
    const uint8_t *bytes = n ? mc_read_bytes(is, n) : NULL;
    static const uint8_t none[1];
    if (!bytes)
        bytes = none;
    held_call *h = NULL;
    if ((g->delay_ms || g->held_head) && !o->local)
        h = malloc(sizeof *h + (n ? n : 1));
    if (!h) {
        take_now(e, o, msg, bytes, n);
        return;
    }
    h->next = NULL;
    h->from = o->addr;
    h->msg = msg;
    h->due = mc_clock_now_us() + g->delay_ms * 1000;
    h->len = n;
    memcpy(h->bytes, bytes, n);
    bool was_empty = !g->held_head;
    if (g->held_tail)
        g->held_tail->next = h;
    else
        g->held_head = h;
    g->held_tail = h;
    if (was_empty)
        arm_held(g);
}

void cell_on_ghost_client_call(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    on_ghost_message(e, o, is, MC_MSG_GHOST_CLIENT_CALL);
}

void cell_on_ghost_client_call_seq(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    on_ghost_message(e, o, is, MC_MSG_GHOST_CLIENT_CALL_SEQ);
}

void cell_on_ghost_data(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    on_ghost_message(e, o, is, MC_MSG_GHOST_DATA);
}

void cell_on_ghost_delete(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    on_ghost_message(e, o, is, MC_MSG_GHOST_DELETE);
}

uint32_t cell_ghosts_calls_seen(const mc_entity *ent)
{
    if (!ent || !ent->ghost_data)
        return 0;
    return ent->is_ghost ? ((const ghost_in *)ent->ghost_data)->seq
                         : ((const ghost_out *)ent->ghost_data)->seq;
}

typedef struct {
    cell_ghost_call_fn fn;
    void *ctx;
    mc_entity *ent;
} since_ctx;

static void since_one(void *ctx, const ghost_ring_entry *x)
{
    since_ctx *c = ctx;
    c->fn(c->ctx, c->ent, x->method, x->args, x->len);
}

size_t cell_ghosts_calls_since(mc_engine *e, mc_entity *ent, uint32_t after,
                               cell_ghost_call_fn fn, void *ctx, uint32_t *missing)
{
    *missing = 0;
    if (!gh(e) || !ent->is_ghost || !ent->ghost_data)
        return 0;
    ghost_in *gi = ent->ghost_data;
    ring_expire(gh(e), &gi->ring, &gh(e)->ring, mc_clock_now_us());
    if (gi->seq <= after)
        return 0;
    uint32_t first = ghost_ring_first(&gi->ring);
    uint32_t have_from = first ? first : gi->seq + 1; /* the calls after `after` it lacks */
    if (have_from > after + 1)
        *missing = (first ? first - 1 : gi->seq) - after;
    since_ctx c = {fn, ctx, ent};
    return ghost_ring_since(&gi->ring, after, since_one, &c);
}

void cell_ghost_forward_call(mc_engine *e, const mc_origin *o, mc_entity *ent,
                             const mc_call_header *h, const uint8_t *args, size_t len)
{
    ghost_in *gi = ent->ghost_data;
    mc_mailbox_ref to;
    if (mc_mailbox_ref_init(&to, h->entity_id, gi->real.ip, gi->real.port,
                            mc_salt_component(h->salt), mc_salt_type(h->salt)) != 0) {
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_MAILBOX,
                         "cannot forward a call to the real of ghost %d", (int)ent->id);
        return;
    }
    gh(e)->forwarded++;
    mc_engine_relay(e, o, &to, h->method, h->caller_id, args, len);
}

void cell_ghost_real_text(const mc_entity *ent, char *out, size_t n)
{
    if (ent->is_ghost && ent->ghost_data && n >= MC_ADDRESS_STRLEN)
        mc_address_format(&((ghost_in *)ent->ghost_data)->real, out, n);
}

void cell_ghosts_on_peer_death(mc_engine *e, const char *addr)
{
    mc_address a;
    if (!gh(e) || mc_address_parse(addr, &a) != MC_OK)
        return;
    size_t n = 0;
    mc_entity **all = mc_entity_table_snapshot(mc_engine_table(e), &n);
    for (size_t i = 0; all && i < n; i++) {
        mc_entity *ent = all[i];
        if (ent->is_ghost && ent->ghost_data &&
            mc_address_equal(&((ghost_in *)ent->ghost_data)->real, &a)) {
            gh(e)->deleted++;
            discard_ghost(e, ent); /* its real may come back restored, here or elsewhere */
        } else if (!ent->is_ghost && ent->ghost_data) {
            ghost_out *go = ent->ghost_data;
            size_t at;
            if (out_has(go, &a, &at))
                go->at[at] = go->at[--go->n];
        }
    }
    free(all);
}

/* --- set up ----------------------------------------------------------------------------- */

static void get_hyst(void *ctx, mc_watch_value *out)
{
    out->as.f = ((cell_ghosts *)ctx)->offload_hysteresis;
}

static bool set_hyst(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    if (!(v->as.f >= 0 && v->as.f <= 1000)) {
        snprintf(why, whylen, "not within 0..1000");
        return false;
    }
    ((cell_ghosts *)ctx)->offload_hysteresis = v->as.f;
    return true;
}

static void get_delay(void *ctx, mc_watch_value *out)
{
    out->as.u = ((cell_ghosts *)ctx)->delay_ms;
}

static bool set_delay(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    if (v->as.u > 60000) {
        snprintf(why, whylen, "not within 0..60000");
        return false;
    }
    ((cell_ghosts *)ctx)->delay_ms = v->as.u;
    return true;
}

static void get_ring_ms(void *ctx, mc_watch_value *out)
{
    out->as.u = ((cell_ghosts *)ctx)->ring_ms;
}

/* --ghostCallRingMs at run time: the next tick expires by the new age. */
static bool set_ring_ms(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    cell_ghosts *g = ctx;
    if (v->as.u < 1 || v->as.u > 600000) {
        snprintf(why, whylen, "not within 1..600000");
        return false;
    }
    g->ring_ms = v->as.u;
    g->ring.age_us = g->ring_ms * 1000;
    return true;
}

static void get_ring_total(void *ctx, mc_watch_value *out)
{
    out->as.u = ((cell_ghosts *)ctx)->ring_total_max;
}

/* --ghostCallRingTotalBytes at run time: the next tick trims to it. */
static bool set_ring_total(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    if (v->as.u > 4294967295ull) {
        snprintf(why, whylen, "not within 0..4294967295");
        return false;
    }
    ((cell_ghosts *)ctx)->ring_total_max = v->as.u;
    return true;
}

int cell_ghosts_init(mc_engine *e, char *err, size_t errlen)
{
    cell_state *cs = state(e);
    cell_ghosts *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cs->ghosts = g;
    g->e = e;
    mc_ostream_init(&g->scratch);
    g->margin = mc_config_get_float(mc_server_config(mc_engine_server(e)), "ghostMargin");
    if (!(g->margin >= 0 && g->margin <= 10000)) {
        snprintf(err, errlen, "--ghostMargin: %g is not within 0..10000", g->margin);
        return -1;
    }
    g->offload_hysteresis =
        mc_config_get_float(mc_server_config(mc_engine_server(e)), "offloadHysteresis");
    if (!(g->offload_hysteresis >= 0 && g->offload_hysteresis <= 1000)) {
        snprintf(err, errlen, "--offloadHysteresis: %g is not within 0..1000",
                 g->offload_hysteresis);
        return -1;
    }
    const mc_config *cfg = mc_server_config(mc_engine_server(e));
    g->ring_calls = mc_config_get_uint(cfg, "ghostCallRing");
    g->ring_bytes = mc_config_get_uint(cfg, "ghostCallRingBytes");
    g->ring_ms = mc_config_get_uint(cfg, "ghostCallRingMs");
    g->ring_total_max = mc_config_get_uint(cfg, "ghostCallRingTotalBytes");
    g->delay_ms = mc_config_get_uint(cfg, "testGhostCallDelayMs");
    const struct {
        const char *name;
        uint64_t v, min, max;
    } bounds[] = {{"ghostCallRing", g->ring_calls, 0, 65536},
                  {"ghostCallRingBytes", g->ring_bytes, 0, 16777216},
                  {"ghostCallRingMs", g->ring_ms, 1, 600000},
                  {"ghostCallRingTotalBytes", g->ring_total_max, 0, 4294967295ull},
                  {"testGhostCallDelayMs", g->delay_ms, 0, 60000}};
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++)
        if (bounds[i].v < bounds[i].min || bounds[i].v > bounds[i].max) {
            snprintf(err, errlen, "--%s: %llu is not within %llu..%llu", bounds[i].name,
                     (unsigned long long)bounds[i].v, (unsigned long long)bounds[i].min,
                     (unsigned long long)bounds[i].max);
            return -1;
        }
    g->ring = (ghost_ring_limits){.calls = (uint32_t)g->ring_calls,
                                  .bytes = (uint32_t)g->ring_bytes,
                                  .age_us = g->ring_ms * 1000};
    g->held_ev = event_new(mc_server_event_base(mc_engine_server(e)), -1, 0, on_held, e);
    g->tick_ev = event_new(mc_server_event_base(mc_engine_server(e)), -1, EV_PERSIST, on_tick, e);
    uint32_t hz = cs->aoi.hz ? cs->aoi.hz : 10;
    struct timeval tv = {0, (suseconds_t)(1000000 / hz)};
    if (!g->held_ev || !g->tick_ev || event_add(g->tick_ev, &tv) != 0) {
        snprintf(err, errlen, "cannot start the ghosts' timer");
        return -1;
    }
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    struct {
        const char *path;
        uint64_t *v;
    } c[] = {{"ghosts/made", &g->made},          {"ghosts/updates", &g->updates},
             {"ghosts/refreshes", &g->refreshes},
             {"ghosts/deletes", &g->deletes},    {"ghosts/bytesOut", &g->bytes_out},
             {"ghosts/sendFailures", &g->send_failures},
             {"ghosts/held", &g->held},          {"ghosts/created", &g->created},
             {"ghosts/updated", &g->updated},    {"ghosts/deleted", &g->deleted},
             {"ghosts/refused", &g->refused},    {"ghosts/stale", &g->stale},
             {"ghosts/forwarded", &g->forwarded},
             {"ghosts/offloads", &g->offloads},
             {"ghosts/offloadFailures", &g->offload_failures},
             {"ghosts/clientCallsOut", &g->calls_out},
             {"ghosts/clientCallsIn", &g->calls_in},
             {"ghosts/handedOver", &g->handed},  {"ghosts/silent", &g->silent},
             {"ghosts/callsBehind", &g->calls_behind},
             {"ghosts/callRing", &g->ring_calls},
             {"ghosts/callRingBytes", &g->ring_bytes},
             {"ghosts/callRingHeldBytes", &g->ring_total},
             {"ghosts/callRingExpired", &g->ring_expired},
             {"ghosts/callRingTrimmed", &g->ring_trimmed},
             {"ghosts/callSeqResets", &g->seq_resets}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (mc_watch_add_uint(w, c[i].path, c[i].v, MC_WATCH_READ_ONLY) != MC_WATCH_OK) {
            snprintf(err, errlen, "cannot publish %s", c[i].path);
            return -1;
        }
    if (mc_watch_add(w, "ghosts/offloadHysteresis", MC_WATCH_FLOAT, MC_WATCH_READ_WRITE,
                     get_hyst, set_hyst, g) != MC_WATCH_OK ||
        mc_watch_add(w, "ghosts/testCallDelayMs", MC_WATCH_UINT, MC_WATCH_READ_WRITE,
                     get_delay, set_delay, g) != MC_WATCH_OK ||
        mc_watch_add(w, "ghosts/callRingMs", MC_WATCH_UINT, MC_WATCH_READ_WRITE, get_ring_ms,
                     set_ring_ms, g) != MC_WATCH_OK ||
        mc_watch_add(w, "ghosts/callRingTotalBytes", MC_WATCH_UINT, MC_WATCH_READ_WRITE,
                     get_ring_total, set_ring_total, g) != MC_WATCH_OK) {
        snprintf(err, errlen, "cannot publish ghosts/offloadHysteresis");
        return -1;
    }
    return 0;
}

void cell_ghosts_free(mc_engine *e)
{
    cell_state *cs = state(e);
    cell_ghosts *g = cs ? cs->ghosts : NULL;
    if (!g)
        return;
    if (g->tick_ev)
        event_free(g->tick_ev);
    if (g->held_ev)
        event_free(g->held_ev);
    while (g->held_head) {
        held_call *h = g->held_head;
        g->held_head = h->next;
        free(h);
    }
    mc_ostream_free(&g->scratch);
    free(g);
    cs->ghosts = NULL;
}
