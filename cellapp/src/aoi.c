/* The cellapp's area of interest: every cell entity is in its space's grid (aoi_grid.h);
 * witnesses keep a view (aoi_view.h) updated --aoiHz times a second, and their game code
 * hears onEnteredAoI / onLeftAoI. entitiesInRange asks the grid directly. docs/WORLD.md. */
#include "aoi_carry.h"
#include "aoi_tick.h"
#include "aoi_view.h"
#include "cellapp.h"
#include "client_shadow.h"
#include "entity/ghost_wire.h"
#include "entity/world_wire.h"
#include "witness.h"
#include "common/clock.h"
#include "common/log.h"

#include <event2/event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per cell entity (ent->role_data) while it is in a space. */
typedef struct {
    aoi_node node;             /* owner: the entity */
    aoi_view view;             /* used while a witness */
    bool witness;
    float radius, hysteresis;  /* its own (mc_setAoIRadius), or 0: the cellapp's */
    witness *stream;           /* what its client is sent (while a witness) */
    uint32_t viewers;          /* witnesses that track it (their streams) */
    client_shadow *shadow;     /* its client-visible properties as last sent */
    client_move_state client_move; /* moves from its client (client_move.c) */
    bool shadow_failed;        /* a value would not encode: logged once */
    aoi_carry *carry;          /* its client's calls while its view is handed over */
    /* after a hand-over: ghosts here behind what its client heard (aoi_carry.h): their
     * numbered calls up to seq are skipped (one goes when a call passes it) */
    struct call_floor {
        int32_t id;
        uint32_t seq;
    } *floors;
    size_t nfloors;
} cell_aoi;

const mc_option cell_aoi_options[CELL_AOI_OPTION_COUNT] = {
    {"aoiRadius", MC_OPT_FLOAT, "50",
     "area-of-interest radius of witnesses that set none (metres on the x/z plane)"},
    {"aoiHysteresis", MC_OPT_FLOAT, "5",
     "an entity in view leaves it only beyond radius + this"},
    {"aoiHz", MC_OPT_UINT, "10", "witness view updates per second (1..100)"},
    {"aoiMaxRadius", MC_OPT_FLOAT, "500",
     "largest radius + hysteresis a witness may set (mc_setAoIRadius beyond it is refused, "
     "logged and counted: aoi/radiusRefused; in a split space the other cellapps ghost their "
     "reals that far, plus ghostMargin, to a cell whose witnesses see so far), and "
     "entitiesInRange radius (at most 2000000)"},
    {"clientBudgetBytes", MC_OPT_UINT, "2000",
     "world update bytes a witness's client is sent per view update at most (beyond the "
     "first entity's); nearer entities go first (100..1000000)"},
    {"maxClientSpeed", MC_OPT_FLOAT, "20",
     "fastest a client may move its own entity, metres a second (moves beyond it are refused "
     "and the client corrected; 0.1..100000)"},
    {"clientMoveSlack", MC_OPT_FLOAT, "0.5",
     "metres of rounding a client's moves may add beyond the speed limit, in total: part of "
     "the one-second distance bucket every accepted move draws from (0..100)"},
    {"clientCorrectionMs", MC_OPT_UINT, "250",
     "a player's client is sent at most one CORRECTION per this many milliseconds; other "
     "refused moves are only counted (clientMoves/correctionsSkipped; 0..60000, 0: every one)"},
    {"volatileRefreshTicks", MC_OPT_UINT, "10",
     "an entity that stopped moving has its position sent to the clients that see it again "
     "after this many view updates (then after twice as many each time, up to 16 times as "
     "many), so a lost last VOLATILE is corrected (0..100000, 0: never)"},
    {"aoiSliceMs", MC_OPT_UINT, "20",
     "a view update runs in slices of at most about this many milliseconds, the event loop "
     "(heartbeats, the network) running between them, so that a busy cellapp is never taken "
     "for a dead one (1..1000; also settable: aoi/sliceMs)"},
    /* cell_copy.c's (the cellapp's options are one table) */
    {"cellCopyBytesPerS", MC_OPT_UINT, "2000000",
     "bytes a second at most of cell copies (CELL_COPY: each changed cell's data, which its "
     "base restores it from should this cellapp die) sent to bases (1000..1000000000; also "
     "settable: copies/bytesPerS)"},
    /* ghosts.c's */
    {"ghostMargin", MC_OPT_FLOAT, "10",
     "a real has a ghost on every cellapp whose cell of its space lies within aoiRadius + "
     "aoiHysteresis + this (metres) of it; the ghost goes beyond that plus aoiHysteresis "
     "(0..10000)"},
    {"ghostCallRing", MC_OPT_UINT, "64",
     "numbered allClients / otherClients calls each ghost keeps, the newest, so that a "
     "witness offloaded to this cellapp hears those the cellapp it left did not give its "
     "client (0..65536; 0 keeps none)"},
    {"ghostCallRingBytes", MC_OPT_UINT, "16384",
     "argument bytes at most each ghost keeps of those calls (0..16777216)"},
    {"ghostCallRingMs", MC_OPT_UINT, "5000",
     "how long (ms) a ghost keeps one of those calls (1..600000)"},
    {"ghostCallRingTotalBytes", MC_OPT_UINT, "67108864",
     "argument bytes at most all this cellapp's ghosts keep of those calls together; beyond "
     "it the oldest go (0..4294967295, 0 keeps none; also settable: "
     "ghosts/callRingTotalBytes; ghosts/callRingHeldBytes what is held)"},
    {"testGhostCallDelayMs", MC_OPT_UINT, "0",
     "TEST ONLY: hold every ghost message taken (GHOST_DATA, GHOST_DELETE, GHOST_CLIENT_CALL) "
     "for this long (ms), in order, as a slow network would, to widen the window of an "
     "offload (0..60000; also settable: ghosts/testCallDelayMs)"},
    {"offloadHysteresis", MC_OPT_FLOAT, "5",
     "a real farther than this (metres) outside its cellapp's cell moves to the cellapp whose "
     "cell holds it (0..1000; also settable: ghosts/offloadHysteresis)"},
    /* cell_retire.c's */
    {"retireMs", MC_OPT_UINT, "5000",
     "at a graceful stop, how long at most the cellapp waits for its reals in cells of split "
     "spaces to move to the neighbours taking its cells over before it deregisters (0: it "
     "does not hand them over; 0..600000; also settable: retire/ms)"},
};

static cell_state *state(mc_engine *e) { return mc_engine_role_state(e); }
static cell_aoi *aoi_of(const mc_entity *ent) { return ent->role_data; }

static void view_settings(const cell_aoi_state *s, cell_aoi *a)
{
    a->view.radius = a->radius > 0 ? a->radius : s->radius;
    a->view.hysteresis = a->radius > 0 ? a->hysteresis : s->hysteresis;
}

int cell_aoi_enter_space(mc_engine *e, mc_entity *ent)
{
    mc_space *sp = ent->space;
    if (!sp->grid.buckets && aoi_grid_init(&sp->grid, state(e)->aoi.radius) != 0)
        return -1;
    cell_aoi *a = aoi_of(ent);
    bool made = !a;
    if (made) {
        a = calloc(1, sizeof *a);
        if (!a)
            return -1;
        a->node.owner = ent;
        a->node.id = ent->id;
        ent->role_data = a;
    }
    if (aoi_grid_insert(&sp->grid, &a->node, ent->position.x, ent->position.z) != 0) {
        if (made) {
            free(a);
            ent->role_data = NULL;
        }
        return -1;
    }
    return 0;
}

void cell_aoi_moved(mc_engine *e, mc_entity *ent)
{
    cell_aoi *a = aoi_of(ent);
    if (!a || !a->node.cell || !ent->space)
        return;
    if (aoi_grid_move(&ent->space->grid, &a->node, ent->position.x, ent->position.z) != 0)
        MC_ERROR("out of memory moving entity %d in the AoI grid of space %d", (int)ent->id,
                 (int)ent->space->id);
    (void)e;
}

void cell_aoi_detach(mc_engine *e, mc_entity *ent)
{
    (void)e;
    cell_aoi *a = aoi_of(ent);
    if (a && ent->space)
        aoi_grid_remove(&ent->space->grid, &a->node);
}

/* A witness's stream goes: the entities it tracked lose a viewer. */
static void drop_stream(mc_engine *e, cell_aoi *a)
{
    if (!a->stream)
        return;
    size_t n = witness_count(a->stream);
    int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    n = ids ? witness_ids(a->stream, ids, n) : 0;
    for (size_t i = 0; i < n; i++) {
        mc_entity *x = mc_engine_find(e, ids[i]);
        cell_aoi *xa = x ? aoi_of(x) : NULL;
        if (xa && xa->viewers)
            xa->viewers--;
    }
    free(ids);
    witness_free(a->stream);
    a->stream = NULL;
    free(a->floors);
    a->floors = NULL;
    a->nfloors = 0;
}

static struct call_floor *floor_of(cell_aoi *a, int32_t id)
{
    for (size_t i = 0; i < a->nfloors; i++)
        if (a->floors[i].id == id)
            return &a->floors[i];
    return NULL;
}

/* Whether the witness's client heard a's call number seq of entity id already (skipped). */
static bool heard_already(cell_aoi *a, int32_t id, uint32_t seq)
{
    struct call_floor *f = seq ? floor_of(a, id) : NULL;
    if (!f)
        return false;
    if (seq <= f->seq)
        return true;
    *f = a->floors[--a->nfloors]; /* passed: no longer needed */
    return false;
}

client_shadow *cell_aoi_shadow(mc_engine *e, mc_entity *ent)
{
    (void)e;
    cell_aoi *a = aoi_of(ent);
    return a ? a->shadow : NULL;
}

static client_shadow *shadow_of(void *ctx, mc_entity *ent) { return cell_aoi_shadow(ctx, ent); }

void cell_aoi_leave_space(mc_engine *e, mc_entity *ent)
{
    cell_aoi *a = aoi_of(ent);
    if (!a)
        return;
    if (ent->space && a->node.cell)
        aoi_grid_remove(&ent->space->grid, &a->node);
    if (a->witness)
        state(e)->aoi.witnesses--;
    drop_stream(e, a);
    aoi_carry_free(a->carry);
    client_shadow_free(a->shadow);
    aoi_view_free(&a->view);
    free(a);
    ent->role_data = NULL;
}

bool cell_aoi_settings(const mc_entity *ent, bool *is_witness, float *radius, float *hysteresis)
{
    const cell_aoi *a = aoi_of(ent);
    if (!a)
        return false;
    *is_witness = a->witness;
    *radius = a->radius;
    *hysteresis = a->hysteresis;
    return true;
}

/* ---- the callbacks ------------------------------------------------------------------- */

static void hook_failed(mc_engine *e, const mc_entity *ent, const char *name, int rc)
{
    cell_aoi_state *s = &state(e)->aoi;
    s->hook_failures++;
    if (s->hook_failures <= 10 || s->hook_failures % 1000 == 0)
        MC_WARNING("%s %d: %s failed (%d) (%llu AoI callback failures)", ent->td->name,
                   (int)ent->id, name, rc, (unsigned long long)s->hook_failures);
}

static void tell_entered(mc_engine *e, mc_entity *ent, int32_t other_id)
{
    state(e)->aoi.entered++;
    const mc_game_hooks *h = &ent->gt->hooks[MC_PART_CELL];
    mc_entity *other = mc_engine_find(e, other_id);
    if (!h->on_entered_aoi || !other)
        return;
    mc_call_frame f;
    mc_engine_frame(e, &f, ent);
    int rc = h->on_entered_aoi(&f.ctx, ent->props,
                               mc_engine_mailbox(e, other, MC_COMPONENT_CELL));
    if (rc != 0)
        hook_failed(e, ent, "onEnteredAoI", rc);
}

static void tell_left(mc_engine *e, mc_entity *ent, int32_t other_id)
{
    state(e)->aoi.left++;
    const mc_game_hooks *h = &ent->gt->hooks[MC_PART_CELL];
    if (!h->on_left_aoi)
        return;
    mc_call_frame f;
    mc_engine_frame(e, &f, ent);
    int rc = h->on_left_aoi(&f.ctx, ent->props, other_id);
    if (rc != 0)
        hook_failed(e, ent, "onLeftAoI", rc);
}

/* Whether ent may still hear about its view (callbacks can destroy it or stop it being a
 * witness). */
static bool still_watching(mc_engine *e, int32_t id, mc_entity **out)
{
    mc_entity *ent = mc_engine_find(e, id);
    cell_aoi *a = ent ? aoi_of(ent) : NULL;
    if (!ent || ent->in_reap || !a || !a->witness || !ent->space)
        return false;
    *out = ent;
    return true;
}

/* Copy ids the view handed out: callbacks may change the view they live in. */
static int32_t *copy_ids(const int32_t *ids, size_t n)
{
    int32_t *c = malloc((n ? n : 1) * sizeof *c);
    if (c && n)
        memcpy(c, ids, n * sizeof *c);
    return c;
}

void cell_aoi_update_view(mc_engine *e, int32_t id)
{
    mc_entity *ent;
    if (!still_watching(e, id, &ent))
        return;
    cell_aoi *a = aoi_of(ent);
    view_settings(&state(e)->aoi, a);
    int32_t *in, *out;
    size_t nin, nout;
    if (aoi_view_update(&a->view, &ent->space->grid, ent->position.x, ent->position.z, ent->id,
                        &in, &nin, &out, &nout) != 0) {
        MC_ERROR("out of memory updating the view of entity %d", (int)id);
        return;
    }
    if (!nin && !nout)
        return;
    for (size_t i = 0; a->stream && i < nout; i++) {
        witness_left(a->stream, out[i]);
        mc_entity *x = mc_engine_find(e, out[i]);
        cell_aoi *xa = x ? aoi_of(x) : NULL;
        if (xa && xa->viewers)
            xa->viewers--;
    }
    for (size_t i = 0; a->stream && i < nin; i++) {
        mc_entity *x = mc_engine_find(e, in[i]);
        cell_aoi *xa = x ? aoi_of(x) : NULL;
        /* clients hear only of entities with a client part (server-only ones stay hidden) */
        if (!xa || !x->td->client_server || witness_entered(a->stream, in[i]) != 0)
            continue;
        xa->viewers++;
    }
    int32_t *ins = copy_ids(in, nin), *outs = copy_ids(out, nout);
    if (!ins || !outs) {
        MC_ERROR("out of memory telling entity %d about its view", (int)id);
    } else {
        for (size_t i = 0; i < nout && still_watching(e, id, &ent); i++)
            tell_left(e, ent, outs[i]);
        for (size_t i = 0; i < nin && still_watching(e, id, &ent); i++)
            tell_entered(e, ent, ins[i]);
    }
    free(ins);
    free(outs);
}

size_t cell_aoi_witness_ids(mc_engine *e, int32_t *out, size_t max)
{
    cell_state *cs = state(e);
    size_t n = 0;
    for (size_t s = 0; s < cs->n; s++) {
        mc_space *sp = cs->spaces[s];
        for (size_t i = 0; i < sp->n && n < max; i++) {
            cell_aoi *a = aoi_of(sp->entities[i]);
            if (a && a->witness)
                out[n++] = sp->entities[i]->id;
        }
    }
    return n;
}

size_t cell_aoi_entity_count(mc_engine *e)
{
    cell_state *cs = state(e);
    size_t n = 0;
    for (size_t s = 0; s < cs->n; s++)
        n += cs->spaces[s]->n;
    return n;
}

size_t cell_aoi_entity_ids(mc_engine *e, int32_t *out, size_t max)
{
    cell_state *cs = state(e);
    size_t n = 0;
    for (size_t s = 0; s < cs->n; s++) {
        mc_space *sp = cs->spaces[s];
        for (size_t i = 0; i < sp->n && n < max; i++)
            out[n++] = sp->entities[i]->id;
    }
    return n;
}

void cell_aoi_diff_one(mc_engine *e, int32_t id, mc_ostream *scratch)
{
    cell_state *cs = state(e);
    mc_entity *ent = mc_engine_find(e, id);
    cell_aoi *a = ent ? aoi_of(ent) : NULL;
    if (!a || !ent->space || ent->in_reap || a->shadow_failed || (!a->viewers && !a->stream))
        return;
    const mc_entity_defs *defs = mc_engine_defs(e);
    char why[256];
    int rc = 0;
    if (!a->shadow)
        rc = (a->shadow = client_shadow_new(defs, ent, scratch, why, sizeof why)) ? 0 : -1;
    else
        rc = client_shadow_diff(a->shadow, defs, ent, scratch, why, sizeof why);
    if (rc < 0) {
        /* its clients are sent nothing more of it (an encoder refusing the game's own
         * value is a game bug: logged once per entity) */
        a->shadow_failed = true;
        cs->aoi.world_shadow_failures++;
        MC_ERROR("%s %d: its properties cannot be sent to clients: %s", ent->td->name,
                 (int)ent->id, why);
    } else {
        cs->aoi.world_changes += (uint64_t)rc;
    }
}

size_t cell_aoi_send_one(mc_engine *e, int32_t id)
{
    mc_entity *ent;
    if (!still_watching(e, id, &ent))
        return 0;
    size_t in_view = aoi_of(ent)->view.n;
    if (aoi_of(ent)->stream && ent->base.id)
        witness_send(e, ent, aoi_of(ent)->stream, shadow_of);
    return in_view;
}

/* ---- the engine API ------------------------------------------------------------------ */

static mc_entity *calling_cell(const mc_call_ctx *call)
{
    return mc_engine_entity_of(call, MC_PART_CELL);
}

int cell_aoi_set_witness(const mc_call_ctx *call, bool on)
{
    mc_entity *ent = calling_cell(call);
    cell_aoi *a = ent ? aoi_of(ent) : NULL;
    if (!a)
        return MC_CALL_ERR_STATE;
    mc_engine *e = mc_engine_of(call);
    if (on == a->witness)
        return MC_CALL_OK;
    if (on && !a->stream && !(a->stream = witness_new()))
        return MC_CALL_ERR_BUSY;
    a->witness = on;
    if (on) {
        state(e)->aoi.witnesses++;
        return MC_CALL_OK;
    }
    state(e)->aoi.witnesses--;
    if (a->stream) {
        /* its client is told everything left; the stream goes */
        if (ent->base.id)
            witness_leave_all(e, ent, a->stream, shadow_of);
        drop_stream(e, a);
    }
    int32_t *out;
    size_t nout;
    aoi_view_clear(&a->view, &out, &nout);
    int32_t *outs = copy_ids(out, nout);
    if (!outs)
        return MC_CALL_ERR_BUSY;
    int32_t id = ent->id;
    /* told now, in order; the view is empty already, so a callback turning the witness on
     * again starts from nothing */
    for (size_t i = 0; i < nout && (ent = mc_engine_find(e, id)) && !ent->in_reap; i++)
        tell_left(e, ent, outs[i]);
    free(outs);
    return MC_CALL_OK;
}

static void carry_one(void *ctx, int32_t id, uint16_t type, uint16_t method,
                      const uint8_t *args, size_t len)
{
    mc_witness_call c = {.id = id, .type = type, .method = method, .args = args, .len = len};
    (void)aoi_carry_add(ctx, false, &c);
}

int cell_aoi_handover_out(mc_engine *e, mc_entity *ent, const mc_address *peer, int32_t **told,
                          size_t *ntold)
{
    cell_aoi *a = aoi_of(ent);
    *told = NULL;
    *ntold = 0;
    if (!a || !a->witness || (a->stream && !witness_own_introduced(a->stream)))
        return -1; /* its client has not heard of its player yet: introduced afresh there */
    if (a->stream) {
        size_t max = witness_count(a->stream) + 64;
        int32_t *ids = malloc(max * sizeof *ids);
        size_t n = ids ? witness_told_ids(a->stream, ids, max) : 0;
        if (!ids || n >= max)
            free(ids), ids = NULL;
        if (!ids)
            return -1; /* (a long leaving list: an ordinary hand-off, told afresh) */
        /* the calls queued for its client go with the view, and those that reach it until
         * the new cellapp goes on (aoi_carry.h) */
        aoi_carry_free(a->carry);
        a->carry = aoi_carry_new(ids, n, peer, false);
        if (!a->carry) {
            free(ids);
            return -1;
        }
        witness_take_calls(a->stream, carry_one, a->carry);
        /* what its client heard of each entity it knows: every numbered call seen here
         * (queued, or skipped as heard before) */
        for (size_t i = 0; i < n; i++) {
            mc_entity *x = mc_engine_find(e, ids[i]);
            if (!x || x->in_reap)
                continue;
            uint32_t seq = cell_ghosts_calls_seen(x);
            struct call_floor *f = floor_of(a, ids[i]);
            aoi_carry_heard(a->carry, ids[i], f && f->seq > seq ? f->seq : seq);
        }
        *told = ids;
        *ntold = n;
        drop_stream(e, a);
    }
    a->witness = false;
    state(e)->aoi.witnesses--;
    int32_t *out;
    size_t nout;
    aoi_view_clear(&a->view, &out, &nout); /* nobody is told: the view goes on elsewhere */
    return 0;
}

/* Calls dropped with a carry that goes. */
static void carry_drop(cell_aoi_state *s, cell_aoi *a, const mc_entity *ent, const char *why)
{
    if (!a->carry)
        return;
    size_t n = aoi_carry_count(a->carry);
    s->world_calls_dropped += n + aoi_carry_dropped(a->carry);
    if (n && s->world_calls_dropped <= 10 + n)
        MC_WARNING("%zu client calls carried for the client of entity %d were dropped: %s", n,
                   (int)ent->id, why);
    aoi_carry_free(a->carry);
    a->carry = NULL;
}

void cell_aoi_carry_committed(mc_engine *e, mc_entity *ent)
{
    (void)e;
    cell_aoi *a = aoi_of(ent);
    if (a && a->carry)
        aoi_carry_committed(a->carry);
}

size_t cell_aoi_carry_take(mc_engine *e, mc_entity *ent, mc_ostream *out)
{
    cell_aoi *a = aoi_of(ent);
    if (!a || !a->carry)
        return 0;
    size_t n = aoi_carry_count(a->carry);
    if (n) {
        mc_witness_calls_head_encode(out, ent->id, (uint16_t)n);
        aoi_carry_entries(a->carry, out);
    }
    state(e)->aoi.world_calls_dropped += aoi_carry_dropped(a->carry);
    aoi_carry_free(a->carry);
    a->carry = NULL;
    return n;
}

size_t cell_aoi_carry_record(mc_engine *e, mc_entity *ent, mc_ostream *out)
{
    (void)e;
    cell_aoi *a = aoi_of(ent);
    if (!a || !a->carry)
        return 0;
    size_t max = aoi_carry_record(a->carry, NULL, 0);
    mc_witness_heard *h = max ? malloc(max * sizeof *h) : NULL;
    size_t n = h ? aoi_carry_record(a->carry, h, max) : 0;
    if (n)
        mc_witness_heard_encode(out, ent->id, h, n);
    free(h);
    return n;
}

void cell_aoi_carry_heard_in(mc_engine *e, mc_entity *ent, const mc_witness_heard *h, size_t n)
{
    (void)e;
    cell_aoi *a = aoi_of(ent);
    for (size_t i = 0; a && a->carry && i < n; i++)
        aoi_carry_heard(a->carry, h[i].id, h[i].seq);
}

void cell_aoi_carry_drop(mc_engine *e, mc_entity *ent, const char *why)
{
    cell_aoi *a = aoi_of(ent);
    if (a)
        carry_drop(&state(e)->aoi, a, ent, why);
}

int cell_aoi_carry_arrive(mc_engine *e, mc_entity *ent, const int32_t *told, size_t ntold,
                          const mc_address *peer)
{
    (void)e;
    cell_aoi *a = aoi_of(ent);
    if (!a)
        return -1;
    aoi_carry_free(a->carry);
    a->carry = aoi_carry_new(told, ntold, peer, true);
    return a->carry ? 0 : -1;
}

int cell_aoi_carry_add_early(mc_engine *e, mc_entity *ent, const mc_witness_call *c)
{
    (void)e;
    cell_aoi *a = aoi_of(ent);
    if (!a || !a->carry)
        return -1;
    return aoi_carry_add(a->carry, true, c);
}

typedef struct {
    cell_aoi_state *s;
    witness *stream;
} replay_ctx;

static void replay_one(void *ctx, mc_entity *ghost, uint16_t method, const uint8_t *args,
                       size_t len)
{
    replay_ctx *r = ctx;
    int rc = witness_call(r->stream, ghost->id, ghost->type, method, args, len);
    if (rc == 0)
        r->s->world_calls_replayed++;
    else if (rc < 0)
        r->s->world_calls_dropped++;
}

/* After the calls carried: for each ghost here its client knows, with what the old cellapp
 * says its client heard of it (WITNESS_HEARD), the ghost's recent calls after that, and a
 * floor under which its calls still to come here are skipped (aoi_carry.h). */
static void replay_ghost_calls(mc_engine *e, mc_entity *ent, cell_aoi *a)
{
    cell_aoi_state *s = &state(e)->aoi;
    size_t n = aoi_carry_record(a->carry, NULL, 0);
    mc_witness_heard *h = n ? malloc(n * sizeof *h) : NULL;
    n = h ? aoi_carry_record(a->carry, h, n) : 0;
    replay_ctx r = {s, a->stream};
    for (size_t i = 0; i < n; i++) {
        mc_entity *x = mc_engine_find(e, h[i].id);
        if (!x || !x->is_ghost || x->in_reap)
            continue; /* a real here: its calls were carried here from the arrival on */
        uint32_t missing = 0;
        (void)cell_ghosts_calls_since(e, x, h[i].seq, replay_one, &r, &missing);
        if (missing) {
            s->world_call_gaps += missing;
            MC_WARNING("%u client calls of %s %d for the client of entity %d are lost: its "
                       "ghost here no longer keeps them (ghostCallRing*)",
                       (unsigned)missing, x->td->name, (int)x->id, (int)ent->id);
        }
        uint32_t seen = cell_ghosts_calls_seen(x);
        if (seen < h[i].seq) {
            struct call_floor *f = realloc(a->floors, (a->nfloors + 1) * sizeof *f);
            if (!f)
                continue;
            a->floors = f;
            a->floors[a->nfloors++] = (struct call_floor){h[i].id, h[i].seq};
        }
    }
    free(h);
}

int cell_aoi_handover_in(mc_engine *e, mc_entity *ent, const int32_t *told, size_t ntold)
{
    cell_aoi *a = aoi_of(ent);
    if (!a || a->witness || !(a->stream = witness_new()))
        return -1;
    if (witness_handover(a->stream, told, ntold) != 0 ||
        aoi_view_seed(&a->view, told, ntold, ent->id) != 0) {
        witness_free(a->stream);
        a->stream = NULL;
        return -1;
    }
    size_t n = witness_count(a->stream);
    int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    n = ids ? witness_ids(a->stream, ids, n) : 0;
    for (size_t i = 0; i < n; i++) {
        mc_entity *x = mc_engine_find(e, ids[i]);
        cell_aoi *xa = x ? aoi_of(x) : NULL;
        if (xa)
            xa->viewers++;
    }
    free(ids);
    a->witness = true;
    state(e)->aoi.witnesses++;
    if (a->carry) {
        /* the calls carried while it moved, first of all (aoi_carry.h) */
        cell_aoi_state *s = &state(e)->aoi;
        mc_ostream os;
        mc_ostream_init(&os);
        aoi_carry_entries(a->carry, &os);
        mc_istream is;
        mc_istream_init(&is, os.data, os.size);
        size_t total = aoi_carry_count(a->carry);
        s->world_calls_dropped += aoi_carry_dropped(a->carry);
        for (size_t i = 0; i < total; i++) {
            mc_witness_call c;
            if (!mc_witness_call_decode(&is, &c))
                break;
            if (witness_put_call(a->stream, c.id, c.type, c.method, c.args, c.len) == 0)
                s->world_calls_carried++;
            else
                s->world_calls_dropped++;
        }
        mc_ostream_free(&os);
        replay_ghost_calls(e, ent, a);
        aoi_carry_free(a->carry);
        a->carry = NULL;
    }
    return 0;
}

int cell_aoi_set_radius(const mc_call_ctx *call, float radius, float hysteresis)
{
    mc_entity *ent = calling_cell(call);
    cell_aoi *a = ent ? aoi_of(ent) : NULL;
    if (!a)
        return MC_CALL_ERR_STATE;
    const cell_aoi_state *s = &state(mc_engine_of(call))->aoi;
    if (!isfinite(radius) || !isfinite(hysteresis) || !(radius > 0) || !(hysteresis >= 0) ||
        radius + hysteresis > s->max_radius) {
        uint64_t n = ++state(mc_engine_of(call))->aoi.radius_refused;
        if (n <= 10 || n % 1000 == 0)
            MC_WARNING("%s %d: setAoIRadius(%g, %g) refused: radius above 0, hysteresis at least "
                       "0, together at most --aoiMaxRadius %g (%llu refused so far)",
                       ent->td->name, (int)ent->id, (double)radius, (double)hysteresis,
                       (double)s->max_radius, (unsigned long long)n);
        return MC_CALL_ERR_ARGS;
    }
    a->radius = radius;
    a->hysteresis = hysteresis;
    return MC_CALL_OK;
}

typedef struct {
    const mc_entity *self;
    int type; /* -1: any */
    struct found {
        float d2;
        const mc_entity *ent;
    } *items;
    size_t n, cap;
    bool failed;
} range_query;

static void range_visit(void *ctx, aoi_node *node, int32_t id, float d2)
{
    (void)id;
    range_query *q = ctx;
    const mc_entity *ent = node->owner;
    if (ent == q->self || ent->in_reap || (q->type >= 0 && ent->type != q->type) || q->failed)
        return;
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 32;
        struct found *p = realloc(q->items, cap * sizeof *p);
        if (!p) {
            q->failed = true;
            return;
        }
        q->items = p;
        q->cap = cap;
    }
    q->items[q->n++] = (struct found){d2, ent};
}

static int by_distance(const void *a, const void *b)
{
    const struct found *x = a, *y = b;
    if (x->d2 != y->d2)
        return x->d2 < y->d2 ? -1 : 1;
    return (x->ent->id > y->ent->id) - (x->ent->id < y->ent->id);
}

int cell_aoi_entities_in_range(const mc_call_ctx *call, float radius, const char *type,
                               mc_mailbox_ref *out, size_t max, size_t *count)
{
    mc_entity *ent = calling_cell(call);
    if (!ent || !ent->space || !aoi_of(ent))
        return MC_CALL_ERR_STATE;
    mc_engine *e = mc_engine_of(call);
    if (!isfinite(radius) || !(radius >= 0) || radius > state(e)->aoi.max_radius)
        return MC_CALL_ERR_ARGS;
    range_query q = {.self = ent, .type = -1};
    if (type) {
        const mc_entity_type_def *td = mc_defs_type_by_name(mc_engine_defs(e), type);
        if (!td)
            return MC_CALL_ERR_NOT_FOUND;
        q.type = td->id;
    }
    aoi_grid_query(&ent->space->grid, ent->position.x, ent->position.z, radius, range_visit,
                   &q);
    if (q.failed) {
        free(q.items);
        return MC_CALL_ERR_BUSY;
    }
    if (q.n > 1)
        qsort(q.items, q.n, sizeof *q.items, by_distance);
    for (size_t i = 0; i < q.n && i < max; i++)
        out[i] = mc_engine_mailbox(e, q.items[i].ent, MC_COMPONENT_CELL);
    *count = q.n;
    free(q.items);
    return MC_CALL_OK;
}

client_move_state *cell_aoi_client_move(mc_entity *ent)
{
    cell_aoi *a = aoi_of(ent);
    return a ? &a->client_move : NULL;
}

void cell_aoi_correct(mc_engine *e, mc_entity *ent)
{
    if (!ent->base.id)
        return;
    mc_ostream os;
    mc_ostream_init(&os);
    mc_write_i32(&os, ent->id);
    mc_write_u8(&os, 0);
    mc_world_write_correction(&os, ent->id, ent->position, ent->direction);
    mc_address to;
    mc_mailbox_address(&ent->base, &to);
    if (mc_ostream_ok(&os) &&
        mc_engine_send(e, &to, MC_MSG_CLIENT_UPDATE, os.data, os.size) == 0)
        state(e)->client_moves.corrections++;
    mc_ostream_free(&os);
}

void cell_aoi_client_attached(mc_engine *e, mc_entity *ent)
{
    cell_aoi *a = aoi_of(ent);
    if (!a)
        return;
    if (!a->witness) {
        /* a player's cell is a witness while it has a client (BigWorld's rule) */
        mc_call_frame f;
        mc_engine_frame(e, &f, ent);
        (void)cell_aoi_set_witness(&f.ctx, true);
        return;
    }
    if (a->stream) {
        witness_reset(a->stream);
        state(e)->aoi.world_resets++;
    }
}

int cell_aoi_fan_out(mc_engine *e, mc_entity *ent, bool all, uint16_t method,
                     const uint8_t *args, size_t len, const mc_address *ghost_of,
                     uint32_t seq)
{
    cell_aoi_state *s = &state(e)->aoi;
    mc_space *sp = ent->space;
    /* every witness of the space whose client was introduced to it, and every one whose view
     * is on its way between cellapps that carries it (aoi_carry.h) */
    for (size_t i = 0; sp && i < sp->n; i++) {
        mc_entity *w = sp->entities[i];
        cell_aoi *a = aoi_of(w);
        if (w == ent || !a || (!a->stream && !a->carry))
            continue;
        int rc;
        if (a->stream) {
            if (heard_already(a, ent->id, seq)) {
                s->world_calls_skipped++; /* carried from the cellapp it left */
                continue;
            }
            rc = witness_call(a->stream, ent->id, ent->type, method, args, len);
        } else {
            if (!aoi_carry_wants(a->carry, ent->id, ghost_of))
                continue;
            mc_witness_call c = {.id = ent->id, .type = ent->type, .method = method,
                                 .args = args, .len = len};
            rc = aoi_carry_add(a->carry, false, &c);
            if (rc == 0 && seq)
                aoi_carry_heard(a->carry, ent->id, seq);
        }
        if (rc == 0)
            s->world_calls++;
        else if (rc < 0 && ++s->world_calls_dropped <= 10)
            MC_WARNING("a client call of %s %d for the client of entity %d was dropped: %u "
                       "bytes of calls wait already",
                       ent->td->name, (int)ent->id, (int)w->id, WITNESS_CALLS_MAX);
    }
    if (!all || !ent->base.id)
        return MC_CALL_OK;
    /* its own client, through its base */
    mc_mailbox_ref own = ent->base;
    mc_mailbox_ref_set_component(&own, MC_COMPONENT_CLIENT_VIA_BASE);
    return mc_engine_call(e, &own, method, ent->id, args, len, NULL, NULL);
}

/* ---- watchers, options, timer -------------------------------------------------------- */

static void get_witness(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    cell_aoi *a = ent ? aoi_of(ent) : NULL;
    out->as.b = a && a->witness;
}

static void get_in_view(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    cell_aoi *a = ent ? aoi_of(ent) : NULL;
    out->as.u = a && a->witness ? a->view.n : 0;
}

/* The ids in a witness's view, space-separated (read-only; bots --check-view compares them
 * with what its client sees). */
static void get_view_ids(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    cell_aoi *a = ent ? aoi_of(ent) : NULL;
    size_t n = a && a->witness ? a->view.n : 0;
    size_t cap = n * 12 + 1; /* "-2147483648" and a space each */
    char *text = malloc(cap);
    if (!text) {
        mc_watch_value_set_string(out, "");
        return;
    }
    /* what its client may be told of: entities of types with a client part */
    size_t at = 0;
    text[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        mc_entity *x = mc_engine_find(e, a->view.ids[i]);
        if (!x || !x->td->client_server)
            continue;
        at += (size_t)snprintf(text + at, cap - at, "%s%d", at ? " " : "", (int)a->view.ids[i]);
    }
    mc_watch_value_set_string(out, text);
    free(text);
}

static void get_radius(void *ref, mc_watch_value *out)
{
    mc_engine *e;
    mc_entity *ent = mc_engine_watch_entity(ref, &e);
    cell_aoi *a = ent ? aoi_of(ent) : NULL;
    out->as.f = !a ? 0 : a->radius > 0 ? a->radius : state(e)->aoi.radius;
}

void cell_aoi_add_entity_watchers(mc_engine *e, const char *dir, void *ref)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    char path[MC_WATCH_MAX_PATH];
    snprintf(path, sizeof path, "%s/aoi/witness", dir);
    mc_watch_add(w, path, MC_WATCH_BOOL, MC_WATCH_READ_ONLY, get_witness, NULL, ref);
    snprintf(path, sizeof path, "%s/aoi/inView", dir);
    mc_watch_add(w, path, MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_in_view, NULL, ref);
    snprintf(path, sizeof path, "%s/aoi/viewIds", dir);
    mc_watch_add(w, path, MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_view_ids, NULL, ref);
    snprintf(path, sizeof path, "%s/aoi/radius", dir);
    mc_watch_add(w, path, MC_WATCH_FLOAT, MC_WATCH_READ_ONLY, get_radius, NULL, ref);
}
/* --aoiMaxRadius at run time (aoi/maxRadius): at least radius + hysteresis, at most what
 * GHOST_REACH carries; witnesses beyond a lowered limit keep their radius. */
static void get_max_radius(void *ctx, mc_watch_value *out)
{
    out->as.f = ((cell_aoi_state *)ctx)->max_radius;
}

static bool set_max_radius(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    cell_aoi_state *s = ctx;
    double least = (double)s->radius + (double)s->hysteresis;
    if (!(v->as.f >= least && v->as.f <= MC_GHOST_REACH_MAX)) {
        snprintf(why, whylen, "not within %g..%g", least, (double)MC_GHOST_REACH_MAX);
        return false;
    }
    s->max_radius = (float)v->as.f;
    return true;
}

int cell_aoi_init(mc_engine *e, char *err, size_t errlen)
{
    cell_aoi_state *s = &state(e)->aoi;
    mc_server *srv = mc_engine_server(e);
    const mc_config *cfg = mc_server_config(srv);
    double r = mc_config_get_float(cfg, "aoiRadius"), h = mc_config_get_float(cfg, "aoiHysteresis");
    double m = mc_config_get_float(cfg, "aoiMaxRadius");
    uint64_t hz = mc_config_get_uint(cfg, "aoiHz");
    uint64_t budget = mc_config_get_uint(cfg, "clientBudgetBytes");
    if (budget < 100 || budget > 1000000) {
        snprintf(err, errlen, "--clientBudgetBytes %llu: must be within 100..1000000",
                 (unsigned long long)budget);
        return -1;
    }
    s->client_budget = budget;
    uint64_t refresh = mc_config_get_uint(cfg, "volatileRefreshTicks");
    if (refresh > 100000) {
        snprintf(err, errlen, "--volatileRefreshTicks %llu: must be within 0..100000",
                 (unsigned long long)refresh);
        return -1;
    }
    s->refresh_ticks = (uint32_t)refresh;
    if (!(r > 0) || !isfinite(r) || r > 1e6) {
        snprintf(err, errlen, "--aoiRadius %g: must be above 0 and at most 1000000", r);
        return -1;
    }
    if (!(h >= 0) || !isfinite(h) || h > 1e6) {
        snprintf(err, errlen, "--aoiHysteresis %g: must be within 0..1000000", h);
        return -1;
    }
    if (!(m >= r + h) || !(m <= MC_GHOST_REACH_MAX)) {
        snprintf(err, errlen, "--aoiMaxRadius %g: must be at least --aoiRadius + --aoiHysteresis "
                              "(%g) and at most %g", m, r + h, (double)MC_GHOST_REACH_MAX);
        return -1;
    }
    if (hz < 1 || hz > 100) {
        snprintf(err, errlen, "--aoiHz %llu: must be within 1..100", (unsigned long long)hz);
        return -1;
    }
    s->radius = (float)r;
    s->hysteresis = (float)h;
    s->max_radius = (float)m;
    s->hz = (uint32_t)hz;
    mc_watchers *w = mc_server_watchers(srv);
    int bad = mc_watch_add_uint(w, "aoi/witnesses", &s->witnesses, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "aoi/entered", &s->entered, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "aoi/left", &s->left, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "aoi/hookFailures", &s->hook_failures, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "aoi/updates", &s->updates, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "aoi/radiusRefused", &s->radius_refused, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add(w, "aoi/maxRadius", MC_WATCH_FLOAT, MC_WATCH_READ_WRITE, get_max_radius,
                        set_max_radius, s);
    bad |= mc_watch_add_uint(w, "aoi/lastUpdateUs", &s->last_update_us, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "aoi/maxUpdateUs", &s->max_update_us, MC_WATCH_READ_WRITE);
    bad |= mc_watch_add_uint(w, "aoi/inView", &s->in_view, MC_WATCH_READ_ONLY);
    const struct {
        const char *path;
        uint64_t *v;
    } world[] = {{"world/bytesReliable", &s->world_bytes_reliable},
                 {"world/bytesVolatile", &s->world_bytes_volatile},
                 {"world/enters", &s->world_enters},
                 {"world/leaves", &s->world_leaves},
                 {"world/propUpdates", &s->world_props},
                 {"world/volatileUpdates", &s->world_volatiles},
                 {"world/volatileRefreshes", &s->world_refreshes},
                 {"world/changes", &s->world_changes},
                 {"world/deferred", &s->world_deferred},
                 {"world/calls", &s->world_calls},
                 {"world/callsCarried", &s->world_calls_carried},
                 {"world/callsReplayed", &s->world_calls_replayed},
                 {"world/callsSkipped", &s->world_calls_skipped},
                 {"world/callGaps", &s->world_call_gaps},
                 {"world/callsDropped", &s->world_calls_dropped},
                 {"world/resets", &s->world_resets},
                 {"world/sendFailures", &s->world_send_failures},
                 {"world/shadowFailures", &s->world_shadow_failures}};
    for (size_t i = 0; i < sizeof world / sizeof world[0]; i++)
        bad |= mc_watch_add_uint(w, world[i].path, world[i].v, MC_WATCH_READ_ONLY);
    /* tunable on a live cellapp (at least one entity a tick goes whatever it is) */
    bad |= mc_watch_add_uint(w, "world/budgetBytes", &s->client_budget, MC_WATCH_READ_WRITE);
    if (bad) {
        snprintf(err, errlen, "cannot publish the aoi watchers");
        return -1;
    }
    return 0;
}
