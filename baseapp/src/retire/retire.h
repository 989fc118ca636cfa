/* Retiring a baseapp (issue 20 item 6; docs/ENTITIES.md "Retiring a baseapp").
 *
 * command/retire (deploy/cluster retire NAME calls it) asks the manager to mark this
 * baseapp retiring (its command/retireBaseapp): the manager takes it out of the backup ring
 * and never places a login or a base on it again. Then every base here is offloaded to its
 * backup baseapp on the ring (the baseapp that would restore it were this one to die), in
 * waves bounded by --retireBytesPerSec and --retireInFlight (retire.c):
 *
 *   1. the base is frozen: its full current state is encoded as a backup (properties,
 *      cellData, cell mailbox, database id and check-out token, global names, timers by the
 *      time left, the ticket serial and account of its client), its timers stop here, its
 *      client is told to resume (DISCONNECT with reason 5, "resume elsewhere"), its global
 *      names are deregistered (OFFLOAD_BASE goes once the manager answered, so the new home
 *      can register them again); calls for it wait here in order;
 *   2. OFFLOAD_BASE (entity message 72, a request) carries it to its new home
 *      (retire_take.c), which makes it live with the same id (as a restore does: the cell is
 *      told BASE_RESTORED, timers, names, the client may resume there) and, for a
 *      persistent base, takes its check-out over with its token before it answers;
 *   3. answered OK: the calls that waited are sent on to the new home in order, and the copy
 *      here goes without a word (no onDestroy, no write, no release: the check-out is the
 *      new home's); from then on a call for it is sent on to its new home (counted in
 *      retire/forwarded). Unanswered within the call timeout, or answered BUSY (the new
 *      home is still taking its check-out over), it is sent again (retire/resent; the new
 *      home answers OK for a base it already took from us): it may live there already, so
 *      it is never thawed for that. Refused (or the new home died): the base is thawed here
 *      (timers, names back, waiting calls run) and tried again in a later wave.
 *
 * When no base is left it waits --retireLingerMs, still sending calls on, and shuts down
 * gracefully (exit 0). Its death (stopped) tells every process to send calls for its bases
 * to their backup on the ring, which is where they went.
 */
#ifndef MC_BASEAPP_RETIRE_H
#define MC_BASEAPP_RETIRE_H

#include "app.h"
#include "bases/bases.h"

#define RETIRE_OPTION_COUNT 5
#define RETIRE_OPTIONS                                                                       \
    {"retireBytesPerSec", MC_OPT_UINT, "4000000",                                            \
     "a retiring baseapp offloads its bases at most this many bytes a second "               \
     "(1000..1000000000)"},                                                                  \
    {"retireInFlight", MC_OPT_UINT, "64",                                                    \
     "a retiring baseapp has at most this many bases on their way at once (1..100000)"},     \
    {"retireLingerMs", MC_OPT_UINT, "2000",                                                  \
     "once every base is offloaded, a retiring baseapp keeps sending calls on to their new " \
     "homes this long before it shuts down (0..600000)"},                                 \
    {"retireHoldMax", MC_OPT_UINT, "10000",                                                 \
     "a base taken from a retiring baseapp: at most this many calls sent straight to it "   \
     "wait (in order) for those still on their way through the retiring baseapp; beyond, " \
     "BUSY (1..100000)"},                                                                   \
    {"retireHoldBytes", MC_OPT_UINT, "4194304",                                             \
     "the same bound in bytes, a base (1024..1073741824)"}

/* app_role.c glue */
int retire_init(mc_engine *e, char *err, size_t errlen);
void retire_free(mc_engine *e);
/* A call for a base that is on its way (it waits) or gone to its new home (sent on): true
 * when taken here. */
bool retire_take_call(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                      const uint8_t *args, size_t len);
/* Whether base id is frozen on its way out, or gone (then new homes answer for it). */
bool retire_is_leaving(mc_engine *e, int32_t id);
/* The base is leaving for its new home: its copy here goes without a word (on_destroy). */
bool retire_quiet_destroy(mc_engine *e, mc_entity *ent);

/* Whether command/retire was called here (an OFFLOAD_BASE to a retiring baseapp is
 * refused); count an OFFLOAD_BASE taken (ok) or refused (retire/received, receiveRefused). */
bool retire_is_retiring(mc_engine *e);
void retire_count_received(mc_engine *e, bool ok);
/* The receiving side remembers which baseapp each base it took came from: an OFFLOAD_BASE
 * sent again (its answer was late) is answered for the base already here. */
void retire_note_taken(mc_engine *e, int32_t id, const mc_address *from);
bool retire_was_taken_from(mc_engine *e, int32_t id, const mc_address *from);

/* retire_take.c: OFFLOAD_BASE from a retiring baseapp. */
void retire_on_offload(mc_engine *e, const mc_origin *o, mc_istream *is);

/* retire_pass.c: the cell's messages to a base (entity messages 36, 42, 56, 40; base_part.c
 * routes them here): a base on its way or gone (this baseapp retires) or held (taken from a
 * retiring one) takes them in order with its calls; else they run as ever. */
void retire_on_cell_gone(mc_engine *e, const mc_origin *o, mc_istream *is);
void retire_on_cell_moved(mc_engine *e, const mc_origin *o, mc_istream *is);
void retire_on_cell_copy(mc_engine *e, const mc_origin *o, mc_istream *is);
void retire_on_client_update(mc_engine *e, const mc_origin *o, mc_istream *is);
bool retire_take_cell_msg(mc_engine *e, const mc_origin *o, uint8_t msg, int32_t id,
                          const uint8_t *data, size_t len);
/* A call from the client of base id on the channel it is leaving (proxy_calls.c): it
 * follows its player (in order, bounded) or runs here if the player stayed. */
void retire_take_client_call(mc_engine *e, int32_t id, mc_part part, const uint8_t *data,
                             size_t len);
/* RETIRE_PASS (80), RETIRE_CLIENT_CALL (81) at the new home; RETIRE_END (82) and
 * RETIRE_HOMES (84) from a retiring baseapp (retire_hold.c, retire_handover.c). */
void retire_on_pass(mc_engine *e, const mc_origin *o, mc_istream *is);
void retire_on_client_call(mc_engine *e, const mc_origin *o, mc_istream *is);
void retire_on_end(mc_engine *e, const mc_origin *o, mc_istream *is);
void retire_on_homes(mc_engine *e, const mc_origin *o, mc_istream *is);
/* RETIRED_NOTED (85) from a peer told RETIRED, at the retiring baseapp; RETIRE_SENDER_END
 * (86) from a retiring baseapp at the new home (retire_handover.c, retire_hold.c). */
void retire_on_noted(mc_engine *e, const mc_origin *o, mc_istream *is);
void retire_on_sender_end(mc_engine *e, const mc_origin *o, mc_istream *is);
/* RETIRED_HOMES (87) from a holder of a retired baseapp's bases, at a baseapp born later
 * (retire_tell.c). */
void retire_on_retired_homes(mc_engine *e, const mc_origin *o, mc_istream *is);
/* A peer died: what waits for its stream (it retired) runs now. */
void retire_on_peer_death(mc_engine *e, const char *addr);
/* A peer went, told before anything else of its death: one the manager declared dead
 * (stopped false) is remembered, so that only the bases we sent such a home are sent again;
 * a home that stopped gracefully (it retired in turn, or shut down) keeps what it did with
 * them (the engine's on_peer_down). */
void retire_on_peer_down(mc_engine *e, const char *addr, bool stopped);

#endif
