/* The end of a retirement (retire_internal.h), once every base is offloaded and the linger
 * is over:
 *
 *   1. RETIRE_HOMES (84, requests) to every live baseapp: the bases whose new home is not
 *      their pick on the ring of now (the ring changed during the retirement: a birth or a
 *      death). A baseapp that is such a base's pick sends calls for it on to its home
 *      (retire/homesForwarded), so a mailbox naming this baseapp reaches the base whatever
 *      ring its sender redirects by.
 *   2. RETIRED (83, requests) to every live baseapp and cellapp: each sends calls for our
 *      bases to their new homes from then on, and answers; what it sent us before is ahead
 *      of its answer on its channel to us, and was passed on.
 *   3. RETIRE_END (82, requests) to every live baseapp, naming the peers that did not answer
 *      RETIRED in time: nothing more comes through us but from those; a new home holds what
 *      came for our bases straight to it until then (retire_hold.c), and what those send
 *      it later. Once answered, all we passed on has arrived (ahead of it on each channel):
 *      our death, which makes peers drop what we still send, can no longer overtake it.
 *   4. Each late peer's stream through us ends when it says RETIRED_NOTED (85, one-way,
 *      sent with every answer to RETIRED, taken however late), answers RETIRED (asked again
 *      every --callTimeoutMs) or dies (the manager declares a silent one dead): then
 *      RETIRE_SENDER_END (86, requests) to every live baseapp releases what it held from it.
 *   5. The graceful stop, once every late peer's stream ended and was announced.
 *
 * Each request is answered, refused or times out (--callTimeoutMs): the handover is bounded.
 * Anything that still reaches us for a base gone is passed on (retire/late). */
#include "bases/bases.h"
#include "common/log.h"
#include "entity/backup_wire.h"
#include "entity/retire_wire.h"
#include "retire_internal.h"

#include <stdlib.h>
#include <string.h>

#define HANDOVER_PEERS_MAX 1024

enum { STEP_HOMES = 1, STEP_RETIRED = 2, STEP_END = 3, STEP_LAG = 4 };

static const char *const step_names[] = {"", "RETIRE_HOMES", "RETIRED", "RETIRE_END",
                                         "RETIRE_SENDER_END"};

/* ctx of a request: its step (low 3 bits), for RETIRED the index of the peer asked (24
 * bits), and which handover (the rest: one started over after a new home died ignores the
 * answers of the one before) */
#define CTX(step, i)                                                                       \
    ((void *)(((uintptr_t)r->handover_gen << 27) | ((uintptr_t)(i) << 3) | (uintptr_t)(step)))
#define CTX_STEP(c) ((uintptr_t)(c) & 7u)
#define CTX_INDEX(c) ((size_t)(((uintptr_t)(c) >> 3) & 0xffffffu))
#define CTX_GEN(c) ((uintptr_t)(c) >> 27)
#define GEN_NOW(r) ((uintptr_t)((r)->handover_gen << 27) >> 27)

static void step(base_retire *r);
static void ended(base_retire *r, size_t i);

static void on_answer(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    (void)payload;
    uintptr_t which = CTX_STEP(ctx);
    base_retire *r = mc_engine_freeing(e) ? NULL : retire_of(e);
    if (!r || r->phase != R_HANDOVER || !r->handover_waiting || CTX_GEN(ctx) != GEN_NOW(r))
        return;
    if (status != MC_CALL_OK && retire_log_allowed(++r->st.told))
        MC_INFO("retiring: %s not answered: %s", step_names[which],
                mc_call_status_name(status));
    if (which == STEP_RETIRED && CTX_INDEX(ctx) < r->nasked &&
        (status == MC_CALL_OK || status == MC_CALL_ERR_PROCESS_DEAD))
        ended(r, CTX_INDEX(ctx)); /* what it sent us before is ahead of its answer */
    if (--r->handover_waiting == 0)
        step(r);
}

static size_t peers(base_retire *r, mc_role role, mc_address *out, size_t cap)
{
    return mc_server_live_peers(mc_engine_server(r->e), role, out, cap);
}

static void ask(base_retire *r, const mc_address *to, uint8_t msg, const uint8_t *data,
                size_t len, void *ctx)
{
    if (mc_engine_request(r->e, to, msg, data, len, on_answer, ctx) == MC_CALL_OK)
        r->handover_waiting++;
}

/* Peer i's stream through us ended (its RETIRED answer, RETIRED_NOTED, its death). Named in
 * RETIRE_END, every live baseapp is told (RETIRE_SENDER_END): what it holds from it runs. */
static void ended(base_retire *r, size_t i)
{
    retire_asked *a = &r->asked[i];
    if (a->ended)
        return;
    a->ended = true;
    if (!a->named)
        return;
    r->nlaggards--;
    r->st.laggards_ended++;
    mc_address *to = malloc(HANDOVER_PEERS_MAX * sizeof *to);
    size_t nb = to ? mc_server_live_peers(mc_engine_server(r->e), MC_ROLE_BASEAPP, to,
                                          HANDOVER_PEERS_MAX)
                   : 0;
    mc_ostream os;
    mc_ostream_init(&os);
    mc_retire_sender_encode(&os, &a->addr);
    for (size_t k = 0; mc_ostream_ok(&os) && k < nb; k++)
        ask(r, &to[k], MC_MSG_RETIRE_SENDER_END, os.data, os.size, CTX(STEP_LAG, 0));
    mc_ostream_free(&os);
    free(to);
    char t[MC_ADDRESS_STRLEN];
    MC_INFO("retiring: %s's stream through us ended (%llu late left)",
            mc_address_format(&a->addr, t, sizeof t), (unsigned long long)r->nlaggards);
}

void retire_handover_ended(base_retire *r, const mc_address *peer)
{
    for (size_t i = 0; i < r->nasked; i++)
        if (mc_address_equal(&r->asked[i].addr, peer))
            ended(r, i);
    if (r->handover_step == STEP_LAG && !r->handover_waiting)
        step(r);
}

/* RETIRED_NOTED (one-way, no payload): the peer heard RETIRED; what it sent us before is
 * ahead of this on its channel, and was passed on. Taken however late. */
void retire_on_noted(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    (void)is;
    base_retire *r = retire_of(e);
    if (!r || o->local || r->phase != R_HANDOVER || r->handover_step < STEP_RETIRED)
        return;
    retire_handover_ended(r, &o->addr);
}

static void on_reask(mc_engine *e, void *ctx, int status, mc_istream *payload)
{
    (void)payload;
    base_retire *r = mc_engine_freeing(e) ? NULL : retire_of(e);
    size_t i = CTX_INDEX(ctx);
    if (!r || r->phase != R_HANDOVER || i >= r->nasked || CTX_GEN(ctx) != GEN_NOW(r) ||
        (status != MC_CALL_OK && status != MC_CALL_ERR_PROCESS_DEAD))
        return;
    retire_handover_ended(r, &r->asked[i].addr);
}

/* Late peers are asked RETIRED again every --callTimeoutMs (one lost to a full channel is
 * not waited for until its death). */
void retire_handover_tick(base_retire *r, mc_time_us now)
{
    if (r->handover_step < STEP_END || !r->nlaggards || now < r->reask_at)
        return;
    r->reask_at = now + mc_engine_call_timeout(r->e);
    for (size_t i = 0; i < r->nasked; i++)
        if (r->asked[i].named && !r->asked[i].ended)
            mc_engine_request(r->e, &r->asked[i].addr, MC_MSG_RETIRED, NULL, 0, on_reask,
                              CTX(STEP_RETIRED, i));
}

/* The bases whose home is not their pick on the ring of now, in messages to every baseapp. */
static void send_homes_batch(base_retire *r, const mc_address *to, size_t nto,
                             const int32_t *ids, const mc_address *homes, size_t n)
{
    if (!n)
        return;
    mc_ostream os;
    mc_ostream_init(&os);
    mc_retire_homes_encode(&os, ids, homes, n);
    for (size_t i = 0; mc_ostream_ok(&os) && i < nto; i++)
        ask(r, &to[i], MC_MSG_RETIRE_HOMES, os.data, os.size, CTX(STEP_HOMES, 0));
    r->st.homes_sent += n;
    mc_ostream_free(&os);
}

static void send_homes(base_retire *r, const mc_address *to, size_t nto)
{
    mc_engine *e = r->e;
    const mc_backup_ring *ring = mc_server_backup_ring(mc_engine_server(e));
    int32_t *ids = malloc(MC_RETIRE_HOMES_PER_MESSAGE * sizeof *ids);
    mc_address *homes = malloc(MC_RETIRE_HOMES_PER_MESSAGE * sizeof *homes);
    if (!ids || !homes) {
        free(ids);
        free(homes);
        MC_ERROR("retiring: out of memory telling where bases went");
        return;
    }
    size_t n = 0, pos = 0;
    uint64_t key, unused;
    retire_gone *g;
    while ((g = mc_map_next_key(&r->moved, &pos, &key, &unused))) {
        const mc_address *home = &g->home;
        mc_address pick;
        if (mc_backup_ring_pick(ring, (int32_t)key, mc_engine_address(e), &pick) &&
            mc_address_equal(&pick, home))
            continue;
        ids[n] = (int32_t)key;
        homes[n++] = *home;
        if (n == MC_RETIRE_HOMES_PER_MESSAGE) {
            send_homes_batch(r, to, nto, ids, homes, n);
            n = 0;
        }
    }
    send_homes_batch(r, to, nto, ids, homes, n);
    free(ids);
    free(homes);
}

/* A new home died during the handover (or before it, unseen): the bases that went there are
 * sent again from their kept state (to live baseapps of the new ring), and once every base
 * lives again the handover starts over (its RETIRED tells the ring of then). Only a home the
 * manager declared dead (killed, fenced): one that stopped gracefully (it retired in turn
 * and passed them on, or shut down) is not live either but did not lose them. True when so. */
static bool homes_lost(base_retire *r)
{
    size_t pos = 0;
    retire_gone *g;
    while ((g = mc_map_next(&r->moved, &pos)))
        if (!g->retarget && retire_home_killed(r, &g->home)) {
            mc_address home = g->home;
            retire_home_died(r, &home);
            pos = 0; /* (marked: start over, each home once) */
        }
    if (!r->nretarget)
        return false;
    MC_WARNING("retiring: a new home died during the handover (step %s): its bases are sent "
               "again, then the handover starts over", step_names[r->handover_step]);
    r->st.handovers_restarted++;
    r->phase = R_MOVING;
    r->handover_step = 0;
    r->handover_waiting = 0;
    r->handover_gen++;
    r->nlaggards = 0;
    free(r->asked);
    r->asked = NULL;
    r->nasked = 0;
    r->last_tick = mc_clock_now_us();
    return true;
}

bool retire_handover_check(base_retire *r) { return r->phase == R_HANDOVER && homes_lost(r); }

static void step(base_retire *r)
{
    if (homes_lost(r))
        return;
    mc_address *to = malloc(HANDOVER_PEERS_MAX * sizeof *to);
    size_t nb = to ? peers(r, MC_ROLE_BASEAPP, to, HANDOVER_PEERS_MAX) : 0;
    if (r->handover_step == 0) {
        r->handover_step = STEP_HOMES;
        send_homes(r, to, nb);
        if (r->handover_waiting) {
            free(to);
            return;
        }
    }
    if (r->handover_step == STEP_HOMES) {
        r->handover_step = STEP_RETIRED;
        size_t nc = to ? peers(r, MC_ROLE_CELLAPP, to + nb, HANDOVER_PEERS_MAX - nb) : 0;
        free(r->asked);
        r->asked = (nb + nc) ? calloc(nb + nc, sizeof *r->asked) : NULL;
        r->nasked = r->asked ? nb + nc : 0;
        for (size_t i = 0; i < r->nasked; i++)
            r->asked[i].addr = to[i];
        for (size_t i = 0; i < nb + nc; i++)
            ask(r, &to[i], MC_MSG_RETIRED, NULL, 0, CTX(STEP_RETIRED, i < r->nasked ? i : 0));
        MC_INFO("retiring: told %zu baseapps and %zu cellapps where our bases went", nb, nc);
        if (r->handover_waiting) {
            free(to);
            return;
        }
    }
    if (r->handover_step == STEP_RETIRED) {
        /* every peer knows, or did not answer in time (named: what it sends a new home
         * straight is held there until we say its stream through us ended); answered,
         * everything we passed on before has arrived (it is ahead on each channel) */
        r->handover_step = STEP_END;
        mc_address *late = malloc(MC_RETIRE_LAGGARDS_MAX * sizeof *late);
        size_t nlate = 0;
        for (size_t i = 0; late && i < r->nasked && nlate < MC_RETIRE_LAGGARDS_MAX; i++)
            if (!r->asked[i].ended) {
                r->asked[i].named = true;
                late[nlate++] = r->asked[i].addr;
            }
        r->nlaggards = nlate;
        r->st.laggards += nlate;
        if (nlate)
            MC_WARNING("retiring: %zu peers did not answer RETIRED in time: their calls stay "
                       "held at the new homes until their stream through us ends", nlate);
        mc_ostream os;
        mc_ostream_init(&os);
        mc_retire_senders_encode(&os, late, nlate);
        for (size_t i = 0; mc_ostream_ok(&os) && i < nb; i++)
            ask(r, &to[i], MC_MSG_RETIRE_END, os.data, os.size, CTX(STEP_END, 0));
        mc_ostream_free(&os);
        free(late);
        r->reask_at = mc_clock_now_us() + mc_engine_call_timeout(r->e);
        if (r->handover_waiting) {
            free(to);
            return;
        }
    }
    if (r->handover_step == STEP_END)
        r->handover_step = STEP_LAG;
    /* the late peers' streams: each ended (RETIRE_SENDER_END answered) or its peer died */
    if (r->nlaggards || r->handover_waiting) {
        free(to);
        return;
    }
    free(to);
    r->phase = R_STOPPING;
    mc_server_shutdown(mc_engine_server(r->e), "retired: every base offloaded");
}

void retire_handover_start(base_retire *r)
{
    r->handover_gen++;
    r->phase = R_HANDOVER;
    r->handover_step = 0;
    r->handover_waiting = 0;
    step(r);
}

/* RETIRE_HOMES from a retiring baseapp (request; entity/retire_wire.h). */
void retire_on_homes(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    base_retire *r = retire_of(e);
    int32_t *ids = malloc(MC_RETIRE_HOMES_PER_MESSAGE * sizeof *ids);
    mc_address *homes = malloc(MC_RETIRE_HOMES_PER_MESSAGE * sizeof *homes);
    size_t n = 0;
    const char *why = NULL;
    if (!r || o->local || !mc_server_peer_is_live(mc_engine_server(e), &o->addr, MC_ROLE_BASEAPP))
        why = "RETIRE_HOMES is taken from a live baseapp only";
    else if (!ids || !homes)
        why = "out of memory";
    else if (!mc_retire_homes_decode(is, ids, homes, &n))
        why = "malformed RETIRE_HOMES";
    if (why) {
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        mc_engine_reply_status(e, o, MC_CALL_ERR_ARGS, why);
        free(ids);
        free(homes);
        return;
    }
    retire_homes_keep(r, ids, homes, n);
    free(ids);
    free(homes);
    mc_engine_reply_status(e, o, MC_CALL_OK, "");
}
