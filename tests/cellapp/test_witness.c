/* A witness's world updates (cellapp/src/witness.c) without an engine: an entity in view is
 * introduced (ENTER), its move sent as VOLATILE; once it stands still, its position is sent
 * again after --volatileRefreshTicks idle ticks and then at doubling gaps (capped), so a
 * lost last VOLATILE is corrected within a bounded number of ticks; an entity that never
 * moved after its (reliable) ENTER is never re-sent. */
#include "aoi_carry.h"
#include "ghost_ring.h"
#include "check_main.h"
#include "client_shadow.h"
#include "entity/world_wire.h"
#include "witness.h"

#include <math.h>
#include <string.h>

static const mc_entity_type_def walker_type = {
    .name = "Walker", .client_server = true, .volatile_info = {.position = true, .yaw = true}};

typedef struct {
    mc_entity me, other;
    client_shadow shadow;
    uint64_t enters, leaves, props, volatiles, deferred, refreshes;
} world;

static mc_entity *find(void *ctx, int32_t id)
{
    world *w = ctx;
    return id == 1 ? &w->me : id == 2 ? &w->other : NULL;
}

static client_shadow *shadow(void *ctx, mc_entity *ent)
{
    world *w = ctx;
    return ent == &w->other ? &w->shadow : NULL; /* the witness itself: nothing of its own */
}

static void setup(world *w, witness_env *env, uint32_t refresh)
{
    memset(w, 0, sizeof *w);
    w->me = (mc_entity){.id = 1, .td = &walker_type, .part = MC_PART_CELL};
    w->other = (mc_entity){.id = 2, .td = &walker_type, .part = MC_PART_CELL,
                           .position = {3, 0, 4}};
    *env = (witness_env){.ctx = w, .find = find, .shadow = shadow, .budget = 2000,
                         .refresh_ticks = refresh, .enters = &w->enters, .leaves = &w->leaves,
                         .props = &w->props, .volatiles = &w->volatiles,
                         .deferred = &w->deferred, .refreshes = &w->refreshes};
}

/* One tick: the x of entity 2's VOLATILE in this tick's volatile run, or NAN without one. */
static float tick(witness *wi, const witness_env *env, world *w)
{
    const mc_ostream *rel, *vol;
    ck_assert_int_eq(witness_build(wi, env, &w->me, &rel, &vol), 0);
    if (!vol->size)
        return NAN;
    ck_assert_uint_eq(vol->size, MC_WORLD_VOLATILE_SIZE);
    ck_assert_int_eq(vol->data[0], MC_WORLD_VOLATILE);
    ck_assert_int_eq(mc_load_u32(vol->data + 1), 2);
    uint32_t bits = mc_load_u32(vol->data + 5);
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

START_TEST(a_still_entity_whose_last_update_was_lost_is_corrected)
{
    world w;
    witness_env env;
    setup(&w, &env, 5);
    witness *wi = witness_new();
    ck_assert_ptr_nonnull(wi);
    ck_assert_int_eq(witness_entered(wi, 2), 0);
    ck_assert(isnan(tick(wi, &env, &w))); /* ENTER (reliable) */
    ck_assert_uint_eq(w.enters, 1);
    /* never moved since its ENTER: nothing volatile, ever */
    for (int i = 0; i < 100; i++)
        ck_assert(isnan(tick(wi, &env, &w)));
    /* it moves once: a VOLATILE (which the network loses), then it stands still */
    w.other.position.x = 10;
    ck_assert_float_eq(tick(wi, &env, &w), 10);
    int first = 0;
    for (int t = 1; t <= 5 && !first; t++)
        if (!isnan(tick(wi, &env, &w)))
            first = t;
    ck_assert_int_eq(first, 5); /* re-sent after 5 idle ticks */
    ck_assert_uint_eq(w.refreshes, 1);
    /* then after 10, 20, 40, 80, 80... ticks (16 x 5 at most) */
    int gaps[] = {10, 20, 40, 80, 80, 80};
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        int at = 0;
        for (int t = 1; t <= gaps[g] && !at; t++) {
            float x = tick(wi, &env, &w);
            if (!isnan(x)) {
                ck_assert_float_eq(x, 10);
                at = t;
            }
        }
        ck_assert_int_eq(at, gaps[g]);
    }
    /* it moves again: sent at once, and the gap starts over */
    w.other.position.x = 11;
    ck_assert_float_eq(tick(wi, &env, &w), 11);
    for (int t = 1; t < 5; t++)
        ck_assert(isnan(tick(wi, &env, &w)));
    ck_assert_float_eq(tick(wi, &env, &w), 11);
    witness_free(wi);
}
END_TEST

START_TEST(no_refresh_when_turned_off)
{
    world w;
    witness_env env;
    setup(&w, &env, 0);
    witness *wi = witness_new();
    ck_assert_int_eq(witness_entered(wi, 2), 0);
    ck_assert(isnan(tick(wi, &env, &w)));
    w.other.position.x = 10;
    ck_assert_float_eq(tick(wi, &env, &w), 10);
    for (int i = 0; i < 200; i++)
        ck_assert(isnan(tick(wi, &env, &w)));
    ck_assert_uint_eq(w.refreshes, 0);
    witness_free(wi);
}
END_TEST

/* ---- calls carried over an offload (witness_take_calls / witness_put_call, aoi_carry.c) -- */

typedef struct {
    int n;
    int32_t id[8];
    uint16_t type[8], method[8];
    size_t len[8];
} taken;

static void take_one(void *ctx, int32_t id, uint16_t type, uint16_t method, const uint8_t *args,
                     size_t len)
{
    taken *t = ctx;
    (void)args;
    if (t->n < 8) {
        t->id[t->n] = id, t->type[t->n] = type, t->method[t->n] = method, t->len[t->n] = len;
        t->n++;
    }
}

/* Queued calls are taken out in order with their callers' types and arguments, and the queue
 * is empty afterwards; calls of an entity the client was not introduced to are not queued,
 * carried ones are. */
START_TEST(queued_calls_are_taken_in_order_with_their_types)
{
    witness *w = witness_new();
    ck_assert_int_eq(witness_entered(w, 7), 0);
    const uint8_t args[4] = {1, 2, 3, 4};
    ck_assert_int_eq(witness_call(w, 7, 3, 1, args, 4), 1); /* not introduced yet */
    ck_assert_int_eq(witness_handover(w, (int32_t[]){7}, 1), 0);
    ck_assert_int_eq(witness_call(w, 7, 3, 1, args, 4), 0);
    ck_assert_int_eq(witness_call(w, 7, 3, 2, args, 0), 0);
    ck_assert_int_eq(witness_put_call(w, 9, 5, 0, args, 2), 0);
    taken t = {0};
    ck_assert_uint_eq(witness_take_calls(w, take_one, &t), 3);
    ck_assert_int_eq(t.n, 3);
    ck_assert_int_eq(t.id[0], 7);
    ck_assert_int_eq(t.type[0], 3);
    ck_assert_int_eq(t.method[0], 1);
    ck_assert_uint_eq(t.len[0], 4);
    ck_assert_int_eq(t.method[1], 2);
    ck_assert_uint_eq(t.len[1], 0);
    ck_assert_int_eq(t.id[2], 9);
    ck_assert_int_eq(t.type[2], 5);
    ck_assert_uint_eq(t.len[2], 2);
    t.n = 0;
    ck_assert_uint_eq(witness_take_calls(w, take_one, &t), 0);
    witness_free(w);
}
END_TEST

/* Which calls a carry takes on each side, its two queues in order (the old cellapp's first),
 * and its bound. */
START_TEST(a_carry_takes_each_call_on_one_side_in_order)
{
    mc_address peer = {0}, other = {0};
    peer.port = 1000;
    other.port = 2000;
    int32_t told[] = {5, 3};
    /* the old cellapp: reals and ghosts of those the client knows; after the commit not the
     * ghosts of the new cellapp's reals */
    aoi_carry *old = aoi_carry_new(told, 2, &peer, false);
    ck_assert(aoi_carry_wants(old, 3, NULL));
    ck_assert(!aoi_carry_wants(old, 4, NULL));
    ck_assert(aoi_carry_wants(old, 5, &peer));
    ck_assert(aoi_carry_wants(old, 5, &other));
    aoi_carry_committed(old);
    ck_assert(!aoi_carry_wants(old, 5, &peer));
    ck_assert(aoi_carry_wants(old, 5, &other));
    aoi_carry_free(old);
    /* the new cellapp: its own reals only; the old cellapp's calls come first */
    aoi_carry *c = aoi_carry_new(told, 2, &peer, true);
    ck_assert(aoi_carry_wants(c, 5, NULL));
    ck_assert(!aoi_carry_wants(c, 5, &other));
    const uint8_t args[2] = {9, 9};
    mc_witness_call own = {.id = 5, .type = 1, .method = 0, .args = args, .len = 2};
    mc_witness_call early = {.id = 3, .type = 2, .method = 1, .args = args, .len = 1};
    ck_assert_int_eq(aoi_carry_add(c, false, &own), 0);
    ck_assert_int_eq(aoi_carry_add(c, true, &early), 0);
    ck_assert_uint_eq(aoi_carry_count(c), 2);
    mc_ostream os;
    mc_ostream_init(&os);
    aoi_carry_entries(c, &os);
    mc_istream is;
    mc_istream_init(&is, os.data, os.size);
    mc_witness_call x;
    ck_assert(mc_witness_call_decode(&is, &x));
    ck_assert_int_eq(x.id, 3);
    ck_assert(mc_witness_call_decode(&is, &x));
    ck_assert_int_eq(x.id, 5);
    ck_assert_uint_eq(x.len, 2);
    ck_assert(mc_istream_done(&is));
    mc_ostream_free(&os);
    /* bounded: beyond AOI_CARRY_BYTES_MAX a call is dropped and counted */
    static uint8_t big[1000];
    mc_witness_call b = {.id = 5, .type = 1, .method = 0, .args = big, .len = sizeof big};
    int added = 0;
    while (aoi_carry_add(c, false, &b) == 0)
        added++;
    ck_assert_int_gt(added, 20);
    ck_assert_int_lt(added * (int)sizeof big, (int)AOI_CARRY_BYTES_MAX);
    ck_assert_uint_eq(aoi_carry_dropped(c), 1);
    aoi_carry_free(c);
}
END_TEST

/* The record of what a handed-over witness's client heard (aoi_carry_heard): only ids it
 * knows, the larger number staying, in id order. */
START_TEST(a_carry_records_the_last_call_heard_of_each_entity_it_knows)
{
    mc_address peer = {0x7F000001u, 20002};
    int32_t told[3] = {9, 3, 5};
    aoi_carry *c = aoi_carry_new(told, 3, &peer, false);
    uint32_t seq = 0;
    ck_assert(!aoi_carry_heard_of(c, 3, &seq));
    ck_assert_uint_eq(aoi_carry_record(c, NULL, 0), 0);
    aoi_carry_heard(c, 5, 0); /* known: nothing numbered heard yet */
    aoi_carry_heard(c, 9, 40);
    aoi_carry_heard(c, 9, 12); /* an older number does not lower it */
    aoi_carry_heard(c, 4, 7);  /* not one its client knows */
    ck_assert(aoi_carry_heard_of(c, 9, &seq));
    ck_assert_uint_eq(seq, 40);
    ck_assert(aoi_carry_heard_of(c, 5, &seq));
    ck_assert_uint_eq(seq, 0);
    ck_assert(!aoi_carry_heard_of(c, 4, &seq));
    mc_witness_heard h[4];
    ck_assert_uint_eq(aoi_carry_record(c, NULL, 0), 2);
    ck_assert_uint_eq(aoi_carry_record(c, h, 4), 2);
    ck_assert_int_eq(h[0].id, 5);
    ck_assert_int_eq(h[1].id, 9);
    ck_assert_uint_eq(h[1].seq, 40);
    ck_assert_uint_eq(aoi_carry_record(c, h, 1), 1);
    aoi_carry_free(c);
}
END_TEST

static uint32_t ring_seqs[64];
static size_t ring_n;
static void ring_take(void *ctx, const ghost_ring_entry *x)
{
    (void)ctx;
    ring_seqs[ring_n++] = x->seq;
}

/* A ghost's recent calls (ghost_ring.c): bounded by count, bytes and age (the defaults of
 * --ghostCallRing* and smaller), always consecutive: a call out of sequence or too large
 * empties it, so a hole is never hidden. */
START_TEST(a_ghost_ring_keeps_the_newest_calls_within_its_bounds)
{
    static const uint8_t args[100];
    ghost_ring r = {0};
    ghost_ring_limits l = {.calls = 64, .bytes = 16384, .age_us = 5000000}; /* the defaults */
    for (uint32_t s = 1; s <= 100; s++)
        ck_assert_int_eq(ghost_ring_push(&r, &l, s, 1, args, 10, 1000), 0);
    ck_assert_uint_eq(r.n, 64); /* by count: the newest 64 */
    ck_assert_uint_eq(ghost_ring_first(&r), 37);
    ring_n = 0;
    ck_assert_uint_eq(ghost_ring_since(&r, 90, ring_take, NULL), 10);
    ck_assert_uint_eq(ring_seqs[0], 91);
    ck_assert_uint_eq(ring_seqs[9], 100);
    /* by bytes: 16384 / 100 */
    ghost_ring_free(&r);
    for (uint32_t s = 1; s <= 200; s++)
        ck_assert_int_eq(ghost_ring_push(&r, &l, s, 1, args, 100, 1000), 0);
    ck_assert_uint_le(r.bytes, 16384);
    ck_assert_uint_eq(r.n, 64);
    l.calls = 1000;
    for (uint32_t s = 201; s <= 400; s++)
        ck_assert_int_eq(ghost_ring_push(&r, &l, s, 1, args, 100, 1000), 0);
    ck_assert_uint_eq(r.n, 163);
    ck_assert_uint_eq(ghost_ring_first(&r), 238);
    /* by age: what is older than 5 s goes */
    ck_assert_int_eq(ghost_ring_push(&r, &l, 401, 1, args, 100, 5000000), 0);
    ck_assert_uint_eq(r.n, 163); /* (one more went by the bytes) */
    ghost_ring_expire(&r, &l, 5001001);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_uint_eq(ghost_ring_first(&r), 401);
    /* a call out of sequence empties it first; one beyond the bytes is not kept */
    ck_assert_int_eq(ghost_ring_push(&r, &l, 405, 2, args, 3, 5000000), 0);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_uint_eq(ghost_ring_first(&r), 405);
    l.bytes = 50;
    ck_assert_int_eq(ghost_ring_push(&r, &l, 406, 2, args, 51, 5000000), -1);
    ck_assert_uint_eq(r.n, 0);
    ck_assert_uint_eq(ghost_ring_first(&r), 0);
    /* none kept at all */
    l.calls = 0;
    ck_assert_int_eq(ghost_ring_push(&r, &l, 407, 2, args, 1, 5000000), -1);
    ck_assert_uint_eq(r.n, 0);
    ghost_ring_free(&r);
}
END_TEST

/* A ring that had a burst and went quiet gives it all back when expired, buffer and all (the
 * ghost tick expires every ring); trimming takes the oldest down to a byte bound (the
 * cellapp's total over all rings), keeping the newest consecutive. */
START_TEST(a_quiet_ring_gives_its_memory_back_and_trims_oldest_first)
{
    static const uint8_t args[100];
    ghost_ring r = {0};
    ghost_ring_limits l = {.calls = 64, .bytes = 16384, .age_us = 5000000};
    for (uint32_t s = 1; s <= 64; s++)
        ck_assert_int_eq(ghost_ring_push(&r, &l, s, 1, args, 100, 1000 + s), 0);
    ck_assert_uint_eq(r.bytes, 6400);
    ck_assert_uint_eq(ghost_ring_expire(&r, &l, 1000 + 64), 0); /* none old yet */
    ck_assert_uint_eq(ghost_ring_trim(&r, 6400), 0);
    ck_assert_uint_eq(ghost_ring_trim(&r, 5000), 14); /* the oldest 14 */
    ck_assert_uint_eq(r.bytes, 5000);
    ck_assert_uint_eq(ghost_ring_first(&r), 15);
    ring_n = 0;
    ck_assert_uint_eq(ghost_ring_since(&r, 0, ring_take, NULL), 50);
    ck_assert_uint_eq(ring_seqs[49], 64);
    /* quiet for longer than the age: everything goes, the buffer too */
    ck_assert_uint_eq(ghost_ring_expire(&r, &l, 1000 + 64 + 5000001), 50);
    ck_assert_uint_eq(r.n, 0);
    ck_assert_uint_eq(r.bytes, 0);
    ck_assert_ptr_null(r.e);
    ck_assert_uint_eq(r.cap, 0);
    /* and it takes calls again afterwards; a trim to 0 empties it likewise */
    ck_assert_int_eq(ghost_ring_push(&r, &l, 65, 1, args, 100, 9000000), 0);
    ck_assert_uint_eq(ghost_ring_trim(&r, 0), 1);
    ck_assert_ptr_null(r.e);
    ghost_ring_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("witness");
    TCase *tc = tcase_create("refresh");
    tcase_add_test(tc, a_still_entity_whose_last_update_was_lost_is_corrected);
    tcase_add_test(tc, no_refresh_when_turned_off);
    tcase_add_test(tc, queued_calls_are_taken_in_order_with_their_types);
    tcase_add_test(tc, a_carry_takes_each_call_on_one_side_in_order);
    tcase_add_test(tc, a_carry_records_the_last_call_heard_of_each_entity_it_knows);
    tcase_add_test(tc, a_ghost_ring_keeps_the_newest_calls_within_its_bounds);
    tcase_add_test(tc, a_quiet_ring_gives_its_memory_back_and_trims_oldest_first);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
