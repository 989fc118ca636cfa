/* A baseapp born after a retired baseapp stopped (retire_internal.h) heard neither its
 * RETIRE_HOMES nor its death, so a call it sends on a mailbox naming the retired baseapp
 * would go to that dead address. Each holder of bases taken from a retiring baseapp that
 * has stopped watches the backup ring (the tick): a member it had not seen is told, in
 * RETIRED_HOMES (87, requests of at most MC_RETIRE_HOMES_PER_MESSAGE bases), which of
 * those bases live here. The newcomer keeps them (retire/homesKnown), routes calls on the
 * retired baseapp's mailboxes to itself (mc_engine_route_retired_here) and sends each on to
 * its base's home (retire/homesForwarded). Not answered OK (the newcomer did not know us
 * yet), it is told again a second later, at most TELL_TRIES times. A newcomer born while a
 * baseapp we took bases from is still alive (lingering, handing over: its RETIRE_HOMES went
 * before the birth) stays queued: each second it is told of those that stopped since, until
 * none we took bases from is alive (at most TELL_WAIT_ROUNDS seconds). */
#include "common/log.h"
#include "entity/backup_wire.h"
#include "entity/retire_wire.h"
#include "retire_internal.h"

#include <stdlib.h>
#include <string.h>

#define TELL_MAX 64          /* newcomers being told at once */
#define TELL_TRIES 20
#define TELL_AGAIN_US 1000000
#define RETIRED_MAX 16       /* retired baseapps whose bases are told of, at most */
#define TELL_WAIT_ROUNDS 3600 /* seconds a newcomer waits for a retiring baseapp to stop */

struct retire_tell {
    mc_address to;
    uint64_t gen;            /* which telling (stale answers are ignored) */
    unsigned tries;
    unsigned rounds;         /* waits for a baseapp still alive to stop */
    size_t waiting;          /* requests not answered yet */
    bool failed;             /* one was not answered OK: told again */
    bool alive;              /* bases taken from a baseapp still alive: told again later */
    mc_time_us next;         /* 0: being told now */
    mc_address told[RETIRED_MAX]; /* retired baseapps told of (all again after a failure) */
    size_t ntold;
};

static struct retire_tell *tell_of(base_retire *r, uint64_t gen)
{
    for (size_t i = 0; i < r->ntells; i++)
        if (r->tells[i].gen == gen)
            return &r->tells[i];
    return NULL;
}

static void tell_drop(base_retire *r, struct retire_tell *t)
{
    *t = r->tells[--r->ntells];
}

static void on_told(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    (void)payload;
    base_retire *r = mc_engine_freeing(e) ? NULL : retire_of(e);
    struct retire_tell *t = r ? tell_of(r, (uint64_t)(uintptr_t)ctx) : NULL;
    if (!t || !t->waiting)
        return;
    if (status != MC_CALL_OK)
        t->failed = true;
    if (--t->waiting)
        return;
    if (status == MC_CALL_ERR_PROCESS_DEAD || (t->failed && ++t->tries >= TELL_TRIES) ||
        (!t->failed && (!t->alive || ++t->rounds >= TELL_WAIT_ROUNDS))) {
        tell_drop(r, t);
        return;
    }
    if (t->failed)
        t->ntold = 0; /* told again of every retired baseapp */
    t->failed = false;
    t->next = mc_clock_now_us() + TELL_AGAIN_US;
}

static void send_batch(base_retire *r, struct retire_tell *t, const mc_address *retired,
                       const int32_t *ids, const mc_address *homes, size_t n)
{
    if (!n)
        return;
    mc_ostream os;
    mc_ostream_init(&os);
    mc_retired_homes_encode(&os, retired, ids, homes, n);
    if (mc_ostream_ok(&os) &&
        mc_engine_request(r->e, &t->to, MC_MSG_RETIRED_HOMES, os.data, os.size, on_told,
                          (void *)(uintptr_t)t->gen) == MC_CALL_OK) {
        t->waiting++;
        r->st.homes_told += n;
    } else {
        t->failed = true;
    }
    mc_ostream_free(&os);
}

/* The bases taken here from `retired` (stopped) that live here, in batches to t->to. */
static void tell_of_one(base_retire *r, struct retire_tell *t, const mc_address *retired,
                        int32_t *ids, mc_address *homes)
{
    mc_engine *e = r->e;
    size_t n = 0, pos = 0;
    uint64_t key, unused;
    retire_taken *tk;
    while ((tk = mc_map_next_key(&r->taken, &pos, &key, &unused))) {
        if (!mc_address_equal(&tk->from, retired) || !mc_engine_find(e, (int32_t)key))
            continue;
        ids[n] = (int32_t)key;
        homes[n++] = *mc_engine_address(e);
        if (n == MC_RETIRE_HOMES_PER_MESSAGE) {
            send_batch(r, t, retired, ids, homes, n);
            n = 0;
        }
    }
    send_batch(r, t, retired, ids, homes, n);
}

static bool in_list(const mc_address *list, size_t n, const mc_address *a)
{
    for (size_t i = 0; i < n; i++)
        if (mc_address_equal(&list[i], a))
            return true;
    return false;
}

static void tell(base_retire *r, struct retire_tell *t)
{
    mc_server *s = mc_engine_server(r->e);
    mc_address retired[RETIRED_MAX];
    size_t nr = 0, pos = 0;
    retire_taken *tk;
    t->alive = false;
    while ((tk = mc_map_next(&r->taken, &pos)) && nr < RETIRED_MAX) {
        if (mc_server_peer_is_live(s, &tk->from, MC_ROLE_BASEAPP)) {
            /* still alive: it may have told the ring (RETIRE_HOMES) before this newcomer
             * was born; the newcomer is told once it stopped */
            t->alive = true;
            continue;
        }
        if (!in_list(retired, nr, &tk->from) && !in_list(t->told, t->ntold, &tk->from))
            retired[nr++] = tk->from;
    }
    for (size_t i = 0; i < nr && t->ntold < RETIRED_MAX; i++)
        t->told[t->ntold++] = retired[i];
    int32_t *ids = nr ? malloc(MC_RETIRE_HOMES_PER_MESSAGE * sizeof *ids) : NULL;
    mc_address *homes = nr ? malloc(MC_RETIRE_HOMES_PER_MESSAGE * sizeof *homes) : NULL;
    t->next = 0;
    for (size_t i = 0; ids && homes && i < nr; i++)
        tell_of_one(r, t, &retired[i], ids, homes);
    free(ids);
    free(homes);
    if (!t->waiting) {
        if (t->failed && ++t->tries < TELL_TRIES) {
            t->failed = false;
            t->ntold = 0;
            t->next = mc_clock_now_us() + TELL_AGAIN_US;
        } else if (!t->failed && t->alive && ++t->rounds < TELL_WAIT_ROUNDS) {
            t->next = mc_clock_now_us() + TELL_AGAIN_US; /* once it stopped */
        } else {
            tell_drop(r, t); /* nothing more to tell, or given up */
        }
    }
}

static void add_newcomer(base_retire *r, const mc_address *to)
{
    for (size_t i = 0; i < r->ntells; i++)
        if (mc_address_equal(&r->tells[i].to, to))
            return;
    if (r->ntells >= TELL_MAX)
        return;
    if (!r->tells && !(r->tells = calloc(TELL_MAX, sizeof *r->tells)))
        return;
    r->tells[r->ntells++] = (struct retire_tell){.to = *to, .gen = ++r->tell_gen, .next = 1};
}

static bool was_member(const base_retire *r, const mc_address *a)
{
    for (size_t i = 0; i < r->nring_prev; i++)
        if (mc_address_equal(&r->ring_prev[i], a))
            return true;
    return false;
}

void retire_tell_tick(base_retire *r, mc_time_us now)
{
    const mc_backup_ring *ring = mc_server_backup_ring(mc_engine_server(r->e));
    if (ring->version != r->ring_version || ring->instance != r->ring_instance) {
        bool first = !r->ring_version;
        for (size_t i = 0; !first && r->taken.count && i < ring->n; i++)
            if (!was_member(r, &ring->members[i]) &&
                !mc_address_equal(&ring->members[i], mc_engine_address(r->e)))
                add_newcomer(r, &ring->members[i]);
        mc_address *prev = realloc(r->ring_prev, (ring->n ? ring->n : 1) * sizeof *prev);
        if (prev) {
            r->ring_prev = prev;
            memcpy(prev, ring->members, ring->n * sizeof *prev);
            r->nring_prev = ring->n;
            r->ring_version = ring->version;
            r->ring_instance = ring->instance;
        }
    }
    for (size_t i = 0; i < r->ntells;) {
        struct retire_tell *t = &r->tells[i];
        size_t before = r->ntells;
        if (t->next && now >= t->next)
            tell(r, t);
        if (r->ntells == before)
            i++; /* (dropped: another took its place) */
    }
}

void retire_tell_free(base_retire *r)
{
    free(r->tells);
    free(r->ring_prev);
    r->tells = NULL;
    r->ring_prev = NULL;
    r->ntells = r->nring_prev = 0;
}

void retire_homes_keep(base_retire *r, const int32_t *ids, const mc_address *homes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (mc_address_equal(&homes[i], mc_engine_address(r->e)))
            continue; /* ours: it lives here */
        mc_address *a = mc_map_get(&r->homes, (uint64_t)ids[i], 0);
        if (a) {
            *a = homes[i];
            continue;
        }
        if (r->nhomes >= RETIRE_HOMES_MAX || !(a = malloc(sizeof *a)))
            continue;
        *a = homes[i];
        if (mc_map_put(&r->homes, (uint64_t)ids[i], 0, a))
            r->nhomes++;
        else
            free(a);
    }
}

/* RETIRED_HOMES from a live baseapp (request): bases of a retired baseapp living there. */
void retire_on_retired_homes(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    base_retire *r = retire_of(e);
    int32_t *ids = malloc(MC_RETIRE_HOMES_PER_MESSAGE * sizeof *ids);
    mc_address *homes = malloc(MC_RETIRE_HOMES_PER_MESSAGE * sizeof *homes);
    mc_address retired;
    size_t n = 0;
    const char *why = NULL;
    if (!r || o->local || !mc_server_peer_is_live(mc_engine_server(e), &o->addr, MC_ROLE_BASEAPP))
        why = "RETIRED_HOMES is taken from a live baseapp only";
    else if (!ids || !homes)
        why = "out of memory";
    else if (!mc_retired_homes_decode(is, &retired, ids, homes, &n))
        why = "malformed RETIRED_HOMES";
    else if (mc_address_equal(&retired, mc_engine_address(e)))
        why = "RETIRED_HOMES names us";
    for (size_t i = 0; !why && i < n; i++)
        if (!mc_address_equal(&homes[i], &o->addr))
            why = "RETIRED_HOMES names bases living elsewhere than at its sender";
    if (why) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        mc_engine_reply_status(e, o, MC_CALL_ERR_ARGS, why);
        free(ids);
        free(homes);
        return;
    }
    retire_homes_keep(r, ids, homes, n);
    /* alive, it hands over itself (RETIRE_HOMES, RETIRED): not routed here meanwhile */
    if (!mc_server_peer_is_live(mc_engine_server(e), &retired, MC_ROLE_BASEAPP))
        mc_engine_route_retired_here(e, &retired);
    free(ids);
    free(homes);
    mc_engine_reply_status(e, o, MC_CALL_OK, "");
}
