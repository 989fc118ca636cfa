/* The cellapp's part of the entity engine: spaces and the cell entities in them, created
 * for bases (CREATE_CELL), destroyed on request (DESTROY_CELL), by themselves or with their
 * space, each telling its base (CELL_GONE); calls relayed to bases (BASE_VIA_CELL,
 * CLIENT_VIA_CELL). Built on common/entity (entity/engine.h). */
#ifndef MC_CELLAPP_H
#define MC_CELLAPP_H

#include "aoi_grid.h"
#include "entity/engine.h"
#include "entity/move_wire.h"
#include "mercury/status.h"

struct cell_layout;

typedef struct mc_space {
    int32_t id;
    struct cell_layout *layout; /* its cells (cell_cells.c); NULL: served whole here */
    mc_entity **entities;
    size_t n, cap;
    size_t nreal;       /* of them, reals (the rest are ghosts: ghosts.c) */
    bool handed;        /* its cell handed to the neighbours (a retiring cellapp) */
    bool taken;         /* served whole here, handed by a retiring cellapp: kept while its
                           reals are on their way (cell_cells_keeps) */
    uint64_t n_watch;   /* entities, for the watcher */
    aoi_grid grid;      /* its entities by position (aoi.c) */
    /* its cell's load (cell_work.c): work since the last fold, smoothed load, test knob */
    uint64_t work_us;
    double load, load_boost;
    /* the reach of this cellapp's cell of it (ghost_reach.c): the largest radius + hysteresis
     * of its witnesses here told the other cells' cellapps (0: none beyond the cellapp's
     * own), when it was last told, and since when the witnesses need less (0: they do not) */
    float reach_told;
    mc_time_us reach_told_at, reach_low_since;
} mc_space;

/* The cellapp's area-of-interest settings and counters (aoi.c). */
typedef struct {
    float radius, hysteresis, max_radius; /* --aoiRadius, --aoiHysteresis, --aoiMaxRadius */
    uint32_t hz;                          /* --aoiHz: view updates per second */
    struct cell_aoi_tick *tick;          /* the view update (aoi_tick.c) */
    uint64_t witnesses, entered, left, hook_failures, updates;
    uint64_t radius_refused;              /* mc_setAoIRadius calls refused */
    uint64_t last_update_us;              /* how long the last update of every view took
                                           * (start to end, its slices and the turns
                                           * between them) */
    uint64_t max_update_us;               /* the longest since started (or reset to 0) */
    double tick_load;                     /* a tick's work over the period, smoothed
                                           * (aoi_tick.c; reported by cell_load.c) */
    uint64_t in_view;                     /* entities in every witness's view, summed, at the
                                           * last update */
    uint64_t client_budget;               /* --clientBudgetBytes (watcher world/budgetBytes) */
    uint32_t refresh_ticks;               /* --volatileRefreshTicks */
    /* world updates to clients (witness.c): bytes, records, property changes found,
     * entities left for a later tick by the budget, failures */
    uint64_t world_bytes_reliable, world_bytes_volatile, world_enters, world_leaves,
        world_props, world_volatiles, world_changes, world_deferred, world_send_failures,
        world_shadow_failures, world_calls, world_calls_dropped, world_calls_carried, world_resets,
        world_refreshes;
    /* an offloaded witness's calls of ghosts here (aoi_carry.h): given from a ghost's recent
     * calls, skipped as heard on the cellapp it left, lost (the ghost no longer had them) */
    uint64_t world_calls_replayed, world_calls_skipped, world_call_gaps;
} cell_aoi_state;

/* Movement from a player's client (client_move.c): the last accepted move, and counters. */
typedef struct {
    mc_time_us at;        /* when the allowance was last brought up to date (0: never) */
    double allowance;     /* metres the entity may still go (a bucket: speed x time) */
    mc_time_us corrected_at; /* when its client was last sent a CORRECTION (0: never) */
} client_move_state;

typedef struct {
    double max_speed;     /* --maxClientSpeed, metres a second */
    double slack;         /* --clientMoveSlack, metres: part of the bucket's depth */
    mc_time_us correction_gap_us; /* --clientCorrectionMs: one CORRECTION per entity per gap */
    uint64_t accepted, refused_speed, refused_malformed, refused_not_cell, corrections,
        corrections_skipped;
} client_moves;
struct cell_moves;
typedef struct cell_copies cell_copies;
struct cell_ghosts;
struct cell_reach;
struct cell_load;
struct cell_retire;

typedef struct {
    mc_space **spaces;
    size_t n, cap;
    uint64_t created, destroyed;
    cell_aoi_state aoi;
    client_moves client_moves; /* client_move.c: moves from players' clients */
    struct cell_moves *moves; /* cell_move.c: teleports to and from other cellapps */
    cell_copies *copies;      /* cell_copy.c: copies of cells on their bases */
    struct cell_ghosts *ghosts; /* ghosts.c: ghosts of reals near other cells */
    struct cell_reach *reach;   /* ghost_reach.c: how far the witnesses of each cell see */
    struct cell_load *load;     /* cell_load.c: the load reported to the manager */
    struct cell_retire *retire; /* cell_retire.c: cells handed over at a graceful stop */
    uint64_t restored, restore_refused; /* RESTORE_CELLs taken / refused (cell_create.c) */
    /* cells (cell_cells.c): layouts taken, stale and malformed ones, notices to the manager */
    uint64_t cells_layouts, cells_stale, cells_malformed, cells_notices, cells_notice_failures;
    mc_time_us work_folded_at; /* cell_work.c: the last fold (0: none yet) */
} cell_state;

extern const mc_role_part cell_role_part;

/* spaces.c */
mc_space *space_find(mc_engine *e, int32_t id);
mc_space *space_new(mc_engine *e, int32_t id);
int space_add(mc_engine *e, mc_space *sp, mc_entity *ent);
/* Take an entity out of its space; an empty space goes. */
void space_remove(mc_engine *e, mc_entity *ent);
/* Move an entity to another space keeping its AoI state (teleport); -1 when it could not
 * join the new one (it is in no space then). */
int space_move(mc_engine *e, mc_entity *ent, mc_space *to);
/* An empty space goes: out of the list, the manager told (SPACE_NOTICE gone), freed. */
void space_release(mc_engine *e, mc_space *sp);

/* cell_work.c: the load of each cell served here (docs/WORLD.md "Load balancing"): the
 * work done for a space (its share of the view update, its reals' ghost upkeep, its
 * entities' timers) over the time it took, smoothed as the tick load is, plus the test knob
 * spaces/<id>/loadBoost. Watchers spaces/<id>/load and spaces/<id>/loadBoost (settable,
 * 0..100). */
#define CELL_WORK_LOAD_MAX 1000.0
void cell_work_add(mc_space *sp, uint64_t work_us);
/* Work done for entity id (nothing when it is gone or in no space). */
void cell_work_of_entity(mc_engine *e, int32_t id, uint64_t work_us);
/* Fold the work since the last fold into every space's load (at each view update's end). */
void cell_work_fold(mc_engine *e);
/* The cell's load as reported: smoothed work plus the knob, within 0..CELL_WORK_LOAD_MAX. */
double cell_work_load(const mc_space *sp);
void cell_work_watchers(mc_engine *e, mc_space *sp);
/* The engine's hook (mc_role_part.on_timer_work). */
void cell_work_on_timer(mc_engine *e, int32_t entity, uint64_t work_us);
/* Destroy every cell in the space (onSpaceGone first). */
void space_destroy(mc_engine *e, mc_space *sp);
int space_add_watchers(mc_engine *e);
void spaces_free(mc_engine *e);

/* cell_cells_space.c (below spaces.c): one space's cell of a split space (cell_layout.h,
 * docs/WORLD.md "Cells"). Tell the manager the space has entities here (its first joined), is empty here but kept
 * (empty: it serves a cell of a split space), or went (gone). */
void cell_cells_notice(mc_engine *e, int32_t space, bool gone, bool empty);
/* An empty space stays while it serves a cell of a space split over several cellapps. */
bool cell_cells_keeps(const mc_space *sp);
/* Does this cellapp's cell of the space hold (x, z)? (True for a space served whole.) */
bool cell_cells_owns(const mc_space *sp, float x, float z);
void cell_cells_space_watchers(mc_engine *e, mc_space *sp);
void cell_cells_free_layout(mc_space *sp);
/* cell_cells.c (on spaces.c): CELL_LAYOUT from the manager (the framework checked it came
 * from there), and the cells/ watchers. */
int cell_cells_init(mc_engine *e);
void cell_cells_on_control(mc_engine *e, uint8_t msg_id, const char *src, const uint8_t *data,
                           size_t len);

/* ghost_reach.c (below ghosts.c): the reach of a cell (docs/WORLD.md "Witnesses that see
 * far"). Each cellapp tells the cellapps serving the other cells of a split space how far
 * its witnesses in its cell see when that is beyond its --aoiRadius + --aoiHysteresis
 * (GHOST_REACH: at once when it grows, after REACH_HOLD when it shrinks, again every second
 * while it is beyond); a real is ghosted to a cell within that reach + --ghostMargin. */
int cell_reach_init(mc_engine *e, char *err, size_t errlen);
void cell_reach_free(mc_engine *e);
/* The ghost distance from a real to cell i of the layout: base (the cellapp's own), or the
 * cell's reach + margin when larger and heard within the last REACH_STALE. */
double cell_reach_distance(const struct cell_layout *l, size_t i, double base, double margin,
                           mc_time_us now);
/* A ghost tick looked at the reals of sp, a split space with a cell here: need is the
 * largest radius + hysteresis of its witnesses here (0: none set one); told the other
 * cells' cellapps when it changes (rate-bounded) and while beyond the cellapp's own. */
void cell_reach_tell(mc_engine *e, mc_space *sp, float need, mc_time_us now);
void cell_on_ghost_reach(mc_engine *e, const mc_origin *o, mc_istream *is);

/* ghosts.c: reals and ghosts (docs/WORLD.md "Reals and ghosts"). Every view-update period
 * each real of a split space has a ghost made, updated or deleted on the cellapps whose
 * cells lie within the ghost distance; GHOST_DATA / GHOST_DELETE from them keep ghosts
 * here; calls reaching a ghost go to its real. */
int cell_ghosts_init(mc_engine *e, char *err, size_t errlen);
void cell_ghosts_free(mc_engine *e);
void cell_on_ghost_data(mc_engine *e, const mc_origin *o, mc_istream *is);
void cell_on_ghost_delete(mc_engine *e, const mc_origin *o, mc_istream *is);
/* A client method call on the real ent's allClients / otherClients (then queued for the
 * witnesses here): numbered (the real's own count, kept across offloads; 0 for a real of a
 * space never split) and sent to every cellapp holding its ghost (GHOST_CLIENT_CALL_SEQ),
 * whose witnesses that see the ghost queue it for their clients. Returns its number. */
uint32_t cell_ghosts_client_call(mc_engine *e, mc_entity *ent, uint16_t method,
                                 const uint8_t *args, size_t len);
void cell_on_ghost_client_call(mc_engine *e, const mc_origin *o, mc_istream *is);
void cell_on_ghost_client_call_seq(mc_engine *e, const mc_origin *o, mc_istream *is);
/* The number of the last client call of ent seen here (a real: made; a ghost: taken, or
 * made before the ghost was). */
uint32_t cell_ghosts_calls_seen(const mc_entity *ent);
/* The calls a ghost keeps (ghost_ring.h) numbered above `after`, oldest first, each to fn;
 * *missing: how many numbered above `after` (up to the last taken) it no longer has. */
typedef void (*cell_ghost_call_fn)(void *ctx, mc_entity *ghost, uint16_t method,
                                   const uint8_t *args, size_t len);
size_t cell_ghosts_calls_since(mc_engine *e, mc_entity *ent, uint32_t after,
                               cell_ghost_call_fn fn, void *ctx, uint32_t *missing);
/* ent leaves its space (destroyed, moved away, discarded): a real's ghosts are deleted, a
 * ghost's state freed. */
void cell_ghosts_forget(mc_engine *e, mc_entity *ent);
/* A real cell of this id is about to be made here (created, arriving, restored): a ghost
 * of it goes first. Returns the number of the ghost's last client call (0: none), from
 * which an offloaded real goes on. */
uint32_t cell_ghosts_make_way(mc_engine *e, int32_t id);
/* Moving a real to the cellapp whose cell it crossed into (an offload): 0 or an
 * mc_call_status. The ghosts' tick decides when (the real is outside this cellapp's cell
 * and the other holds its ghost); the moves (which sit on the ghosts) do it, and give the
 * ghosts their function at start (cell_moves_init). */
typedef int (*cell_offload_fn)(mc_engine *e, mc_entity *ent, const mc_address *where);
void cell_ghosts_set_offload(mc_engine *e, cell_offload_fn offload);
/* A call (ENTITY_CALL) reached the ghost ent: sent on to its real, as it came. */
void cell_ghost_forward_call(mc_engine *e, const mc_origin *o, mc_entity *ent,
                             const mc_call_header *h, const uint8_t *args, size_t len);
/* The cellapps holding ghosts of the real ent but `except` (at most max, into out): what an
 * offload hands over to the new real (CELL_MIGRATE). */
size_t cell_ghosts_holders(const mc_entity *ent, const mc_address *except, mc_address *out,
                           size_t max);
/* ent, a real that moved to the cellapp at `real` (an offload), stays here as its ghost; its
 * ghosts on third cellapps were handed over to the new real with the move (handed: left as
 * they are, the new real keeps them current) or are deleted. 0, or -1 (out of memory: it is
 * discarded then). */
int cell_ghosts_become(mc_engine *e, mc_entity *ent, const mc_address *real, bool handed);
/* ent arrived here offloaded from the cellapp at `old`, which keeps a ghost of it, with the
 * other cellapps holding its ghosts (holders, from CELL_MIGRATE): those ghosts are this
 * real's from now on (updated, or deleted, at its first tick; a holder deleted then hears
 * its data first). 0 or -1. */
int cell_ghosts_seed_out(mc_engine *e, mc_entity *ent, const mc_address *old,
                         const mc_address *holders, size_t nholders, uint32_t seq);
/* A real made here where its ghost was (a restore): its client calls are numbered on from
 * seq (nothing else changes; out of memory: from 0). */
void cell_ghosts_seed_seq(mc_entity *ent, uint32_t seq);
/* The address of a ghost's real ("IP:PORT"). */
void cell_ghost_real_text(const mc_entity *ent, char *out, size_t n);
/* The cellapp at addr died: the ghosts of its reals go, and our reals forget their ghosts
 * there. */
void cell_ghosts_on_peer_death(mc_engine *e, const char *addr);

/* cell_load.c: CELL_LOAD to the manager every second (docs/WORLD.md "Automatic splits"):
 * the smoothed tick load plus the cells/tickLoadBoost knob, reals, the busiest spaces. */
int cell_load_init(mc_engine *e, char *err, size_t errlen);
void cell_load_free(mc_engine *e);
/* The cellapp retires: a report saying so goes at once (and with every later one). */
void cell_load_retiring(mc_engine *e);

/* cell_retire.c: a retiring cellapp hands its cells of split spaces to their neighbours
 * and offloads its reals there before it deregisters (--retireMs bounds it). */
int cell_retire_init(mc_engine *e, char *err, size_t errlen);
void cell_retire_free(mc_engine *e);
void cell_retire_on_shutdown(mc_engine *e);
bool cell_retire_draining(mc_engine *e);

/* aoi.c: the area of interest (docs/WORLD.md). */
#define CELL_AOI_OPTION_COUNT 19 /* with cell_copy.c's cellCopyBytesPerS, ghosts.c's
                                  * ghostMargin and offloadHysteresis, cell_retire.c's
                                  * retireMs */
extern const mc_option cell_aoi_options[CELL_AOI_OPTION_COUNT];
/* Read the options and publish the watchers (0, or -1 with why); the update timer is
 * aoi_tick.c's (cell_aoi_tick_init). */
int cell_aoi_init(mc_engine *e, char *err, size_t errlen);
/* An entity joined its space (ent->space set) / moved / is leaving it. */
int cell_aoi_enter_space(mc_engine *e, mc_entity *ent);
void cell_aoi_moved(mc_engine *e, mc_entity *ent);
void cell_aoi_leave_space(mc_engine *e, mc_entity *ent);
/* Take ent out of its space's grid but keep its AoI state (witness, view, radius): a
 * teleport to another space (space_move). */
void cell_aoi_detach(mc_engine *e, mc_entity *ent);
/* A cell's witness flag and its own radius and hysteresis (0: the cellapp's); false when it
 * has no AoI state (in no space). */
bool cell_aoi_settings(const mc_entity *ent, bool *is_witness, float *radius, float *hysteresis);
/* An offloaded witness's view handed over: on the old cellapp it stops being a witness
 * without a word to its client or its game, *told (heap) the ids its client was introduced
 * to; on the new one it is a witness again going on from them (witness_handover). 0, or -1
 * (then the ordinary way: told everything left, introduced afresh). */
int cell_aoi_handover_out(mc_engine *e, mc_entity *ent, const mc_address *peer, int32_t **told,
                          size_t *ntold);
int cell_aoi_handover_in(mc_engine *e, mc_entity *ent, const int32_t *told, size_t ntold);
/* Its client's calls while the view is on its way (aoi_carry.h): handover_out starts
 * carrying them on the old cellapp (peer: the new one), with those queued; committed: the
 * new cellapp took it; take: the WITNESS_CALLS payload into out (nothing when none), the
 * carrying ends (returns how many); drop: it ends, its calls dropped (a failed move). On the
 * new cellapp: arrive starts carrying its own reals' calls, add_early takes one the old
 * cellapp carried (0, or -1: not carrying or full); handover_in queues them all, the old
 * cellapp's first. */
void cell_aoi_carry_committed(mc_engine *e, mc_entity *ent);
size_t cell_aoi_carry_take(mc_engine *e, mc_entity *ent, mc_ostream *out);
void cell_aoi_carry_drop(mc_engine *e, mc_entity *ent, const char *why);
int cell_aoi_carry_arrive(mc_engine *e, mc_entity *ent, const int32_t *told, size_t ntold,
                          const mc_address *peer);
int cell_aoi_carry_add_early(mc_engine *e, mc_entity *ent, const mc_witness_call *c);
/* The old cellapp's record of what its client heard of each entity (WITNESS_HEARD payload
 * into out; returns how many, 0: nothing written); the new cellapp's taking it. */
size_t cell_aoi_carry_record(mc_engine *e, mc_entity *ent, mc_ostream *out);
void cell_aoi_carry_heard_in(mc_engine *e, mc_entity *ent, const mc_witness_heard *h, size_t n);
/* The engine API entries. */
int cell_aoi_set_witness(const mc_call_ctx *call, bool on);
int cell_aoi_set_radius(const mc_call_ctx *call, float radius, float hysteresis);
int cell_aoi_entities_in_range(const mc_call_ctx *call, float radius, const char *type,
                               mc_mailbox_ref *out, size_t max, size_t *count);
void cell_aoi_add_entity_watchers(mc_engine *e, const char *dir, void *ref);
/* The entity's client-visible properties as last diffed (NULL: none yet, or they do not
 * encode). */
struct client_shadow *cell_aoi_shadow(mc_engine *e, mc_entity *ent);
/* The entity's client-move state (NULL when it is in no space). */
client_move_state *cell_aoi_client_move(mc_entity *ent);
/* Tell the witness's own client where its entity really is (a refused move): a CORRECTION
 * record, sent at once. */
void cell_aoi_correct(mc_engine *e, mc_entity *ent);

/* client_move.c: CLIENT_MOVE from a player's base. */
int client_moves_init(mc_engine *e, char *err, size_t errlen);
void cell_on_client_move(mc_engine *e, const mc_origin *o, mc_istream *is);

/* ent's base said its client attached (CLIENT_ATTACHED, checked by cell_part.c): a cell
 * becomes a witness, a witness introduces its view afresh. */
void cell_aoi_client_attached(mc_engine *e, mc_entity *ent);
/* allClients / otherClients calls of a cell entity, method checked by the caller: queued
 * for the witnesses here whose clients were introduced to it (and carried for those whose
 * view is on its way: ghost_of, the real's cellapp of a ghost, NULL for a real), and (all)
 * sent to its own client through its base (0 or an mc_call_status). Its ghosts' cellapps
 * are ghosts.c's. */
int cell_aoi_fan_out(mc_engine *e, mc_entity *ent, bool all, uint16_t method,
                     const uint8_t *args, size_t len, const mc_address *ghost_of,
                     uint32_t seq);

/* cell_calls.c */
void cell_on_call(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                  const uint8_t *args, size_t len);

/* cell_create.c */
void cell_on_create_cell(mc_engine *e, const mc_origin *o, mc_istream *is);
/* cell_restored.c: BASE_RESTORED, a cell's base lives on its backup baseapp now. */
void cell_on_base_restored(mc_engine *e, const mc_origin *o, mc_istream *is);
void cell_on_destroy_cell(mc_engine *e, const mc_origin *o, mc_istream *is);
/* RESTORE_CELL from a base whose cell's cellapp died: the cell made again in its space,
 * which is made here with its id when it is not here. */
void cell_on_restore_cell(mc_engine *e, const mc_origin *o, mc_istream *is);
/* cell_fetch.c: FETCH_CELL, the cell part of a base's writeToDB. */
void cell_on_fetch_cell(mc_engine *e, const mc_origin *o, mc_istream *is);

/* cell_copy.c: copies of every real cell's data on its base (CELL_COPY), bounded in bytes
 * per second (--cellCopyBytesPerS). */
#define CELL_COPY_MIN_RATE 1000u
#define CELL_COPY_MAX_RATE 1000000000u
int cell_copies_init(mc_engine *e, char *err, size_t errlen);
void cell_copies_free(mc_engine *e);

/* cell_move.c: a cell moving to a space on another cellapp (docs/WORLD.md "Teleports"). */
int cell_moves_init(mc_engine *e, char *err, size_t errlen);
void cell_moves_free(mc_engine *e);
/* Offload ent, a real that crossed into the cell of the cellapp at `where` (which holds its
 * ghost): it moves there as a teleport next to its own ghost does, where it is, and stays
 * here as a ghost of it. 0, or an mc_call_status. */
int cell_move_offload(mc_engine *e, mc_entity *ent, const mc_address *where);
/* Start moving ent next to the cell `nearby` on the cellapp at `where` (after the running
 * handler returns): 0, or an mc_call_status. */
int cell_move_start(mc_engine *e, mc_entity *ent, const mc_mailbox_ref *nearby,
                    const mc_address *where, mc_vector3 position, mc_vector3 direction);
/* A message for entity `id` (ENTITY_CALL: the 12-byte header then the arguments;
 * DESTROY_CELL, FETCH_CELL: the payload) taken by a move (wants: entity `id` is moving,
 * or not here while moves are in hand, so that other calls pay nothing): queued while the entity leaves,
 * held while it arrives, forwarded once it left. True when taken. */
bool cell_move_wants(mc_engine *e, int32_t id);
bool cell_move_intercept(mc_engine *e, uint8_t msg_id, const mc_origin *o, int32_t id,
                         const uint8_t *data, size_t len);
/* The forwarding entry of a cell that left this cellapp (a teleport, an offload) and is
 * still kept: its base as this cellapp knew it and the cellapp it went to. False when none. */
bool cell_move_left(mc_engine *e, int32_t id, mc_mailbox_ref *base, mc_address *went);
/* That entry's base restored on another baseapp (BASE_RESTORED): what the base sends from
 * there is forwarded as from its base. */
void cell_move_left_base(mc_engine *e, int32_t id, const mc_mailbox_ref *base);
/* True when addr is the cellapp entity `id` came from lately (it forwards its base's
 * DESTROY_CELL and FETCH_CELL). */
bool cell_move_from_peer(mc_engine *e, int32_t id, const mc_address *addr);
/* CELL_MIGRATE and CELL_MIGRATE_END. */
void cell_on_migrate(mc_engine *e, const mc_origin *o, mc_istream *is);
void cell_on_migrate_end(mc_engine *e, const mc_origin *o, mc_istream *is);
/* WITNESS_CALLS: an arriving witness's client calls carried by the old cellapp. */
void cell_on_witness_calls(mc_engine *e, const mc_origin *o, mc_istream *is);
/* WITNESS_HEARD: the old cellapp's record of what the arriving witness's client heard. */
void cell_on_witness_heard(mc_engine *e, const mc_origin *o, mc_istream *is);
void cell_moves_on_peer_death(mc_engine *e, const char *addr);

/* A cell arriving from another cellapp goes before its base knows where it is: CELL_GONE is
 * kept and sent once the base knows (true: taken over). */
bool cell_move_arrival_gone(mc_engine *e, mc_entity *ent);

/* cell_base.c (below the files that make, move and destroy cells): the answer to
 * CREATE_CELL and CELL_MIGRATE: the status, the space the cell is in (0 when refused) and a
 * reason (why: NULL when none). */
void cell_answer_placed(mc_engine *e, const mc_origin *o, int status, int32_t space,
                        const char *why);
/* Tell the base its cell is gone (once), with the cell's last properties. */
void cell_tell_base_gone(mc_engine *e, mc_entity *ent, mc_cell_gone_why why);
/* The CELL_GONE payload (head and the cell's properties, or the head alone when they do not
 * encode). */
void cell_gone_payload(mc_engine *e, mc_entity *ent, mc_cell_gone_why why, mc_ostream *os);

#endif
