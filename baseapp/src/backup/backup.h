/* Base backups and their restore (issue 20; docs/ENTITIES.md "Backups and restore").
 *
 * Sending (backup_send.c): every base's state (base properties, cellData, its cell's
 * mailbox, database id and check-out token, whether it has a client, global names, timers)
 * goes to its backup baseapp, named by the manager's backup ring (server/backup_ring.h):
 * the bases are visited once per --backupPeriodMs, spread over the period, and a base is
 * sent when its state changed since its last backup or its backup baseapp changed (the old
 * one is told to drop it), within --backupBytesPerSec; a destroyed base's backup is dropped.
 *
 * Holding (backup_hold.c): BACKUP_BASE from a live baseapp is kept by entity id (at most
 * --backupHeldMaxBytes, settable live as backups/heldMaxBytes); one not kept is answered with
 * BACKUP_REFUSED and sent again; BACKUP_DROP from its owner forgets it.
 *
 * Restoring (backup_restore.c): when the manager declares a baseapp dead, the backups of its
 * bases this baseapp holds and that the ring of that death names it for are restored as live
 * bases with the same ids: properties, cellData, its cell (told BASE_RESTORED), timers,
 * global names, the check-out (taken over from the dead owner with its token), then
 * onRestore; calls for a base held here before it is restored wait (--restoreWaitMax calls,
 * --restoreWaitMs) and are delivered in order once it is, or fail with NO_ENTITY.
 */
#ifndef MC_BASEAPP_BACKUP_H
#define MC_BASEAPP_BACKUP_H

#include "app.h"
#include "bases/bases.h"
#include "entity/backup_wire.h"
#include "common/map.h"

#include <event2/event.h>

/* The baseapp's backup options (in baseapp_part_options, app.c). */
#define BACKUP_OPTION_COUNT 6
#define BACKUP_OPTIONS                                                                       \
    {"backupPeriodMs", MC_OPT_UINT, "2000",                                                  \
     "every base is visited once per this many ms (spread over it) and backed up on its "    \
     "backup baseapp when its state changed (100..600000; 0: no backups are sent)"},         \
    {"backupBytesPerSec", MC_OPT_UINT, "2000000",                                            \
     "backups sent at most this many bytes a second on average (1000..1000000000)"},         \
    {"backupHeldMaxBytes", MC_OPT_UINT, "268435456",                                         \
     "backups of other baseapps' bases held here at most (bytes; beyond, new ones are "      \
     "refused and counted in backups/heldFull; 1024..17179869184)"},                         \
    {"restoreWaitMax", MC_OPT_UINT, "10000",                                                 \
     "calls held at most for bases whose backup is here but not yet restored (1..1000000)"}, \
    {"restoreWaitMs", MC_OPT_UINT, "5000",                                                   \
     "how long such a call waits for the restore before it fails with NO_ENTITY "            \
     "(100..600000)"},                                                                       \
    {"restoreGraceMs", MC_OPT_UINT, "3000",                                                  \
     "how long after a baseapp's death its check-outs are left to the baseapps restoring "   \
     "its bases (which take them over); then those still its own are released, and a load " \
     "that finds one waits until then (100..600000)"}

struct backup_wait;

/* A baseapp that died recently: its check-outs wait for the restorers' takeovers until the
 * grace has passed, then those still its own are released (db_on_process_death). */
typedef struct {
    char name[32];
    char addr[MC_ADDRESS_STRLEN];
    uint64_t incarnation;
    mc_time_us at;
} backup_death;
#define BACKUP_DEATHS_MAX 16

typedef struct {
    uint64_t sent, bytes_sent, drops_sent, unchanged, no_backup_app, encode_failed;
    uint64_t refusals; /* BACKUP_REFUSED received about our backups */
    uint64_t received, refused, dropped, held_full, refusals_sent, not_live, live_here;
    uint64_t restored, lost_bases, not_ours, restore_failed;
    uint64_t calls_waited, calls_released, calls_expired, calls_refused;
    uint64_t takeovers, takeovers_failed;
} backup_stats;

typedef struct base_backup {
    mc_engine *e;
    uint64_t period_ms, bytes_per_sec, held_max_bytes, wait_max, wait_ms, grace_ms;
    backup_death deaths[BACKUP_DEATHS_MAX];
    size_t ndeaths;
    struct event *tick_ev;
    /* sending */
    mc_map sent;             /* entity id -> backup_sent */
    int32_t *sweep;          /* ids of this period's visit */
    size_t nsweep, sweep_pos;
    mc_time_us sweep_started, last_tick;
    double budget;           /* bytes that may go now */
    /* holding */
    mc_map held;             /* entity id -> backup_held */
    uint64_t nheld, held_bytes;
    /* calls waiting for a restore */
    struct backup_wait *wait_head, *wait_tail;
    uint64_t nwaiting;
    backup_stats st;
    /* hook (app.c): base id is on its way to another baseapp (backed up there) */
    bool (*is_leaving)(mc_engine *e, int32_t id);
} base_backup;

/* app_role.c glue */
int backup_init(mc_engine *e, char *err, size_t errlen);
void backup_free(mc_engine *e);
/* BACKUP_BASE, BACKUP_DROP and BACKUP_REFUSED (refused when backups are not set up). */
void backup_on_backup_base(mc_engine *e, const mc_origin *o, mc_istream *data);
void backup_on_backup_drop(mc_engine *e, const mc_origin *o, mc_istream *data);
void backup_on_backup_refused(mc_engine *e, const mc_origin *o, mc_istream *data);
/* A base is being destroyed: its backup is dropped. */
void backup_on_destroy(mc_engine *e, mc_entity *ent);
/* The manager declared the process at addr dead (stopped: it shut down gracefully). */
void backup_on_process_death(mc_engine *e, const char *addr, uint64_t incarnation,
                             const char *owner_name, bool stopped);
/* A load found a check-out of this dead owner: true while the restorers may still take it
 * over (the load waits and looks again). */
bool backup_owner_in_grace(mc_engine *e, const char *owner_name, uint64_t incarnation);
/* Persistence took a check-out over (ok) or could not (backups/takeovers{,Failed}). */
void backup_count_takeover(mc_engine *e, bool ok);
/* Persistence released n check-outs of the dead baseapp `name` after the restore's grace:
 * bases nobody restored (backups/lostBases). */
void backup_count_lost(mc_engine *e, const char *name, uint64_t n);
/* A call for an entity not here: true when a backup of it is held here (the call waits for
 * its restore, or was refused at the bound). */
bool backup_hold_call(mc_engine *e, const mc_origin *o, const mc_call_header *h,
                      const uint8_t *args, size_t len);

/* backup_send.c */
/* Back a base up now, not at its next visit (it has a database id now: a restore without it
 * would not hold its check-out). Counted against the byte rate. */
void backup_send_now(mc_engine *e, int32_t id);
void backup_send_tick(base_backup *b, mc_time_us now);
/* A base's full current state as a BACKUP_BASE payload (timers by time left), for an
 * offload (retire.h). 0 or an mc_call_status. */
int backup_encode_live(mc_engine *e, mc_entity *ent, mc_ostream *os);
void backup_send_free(base_backup *b);
/* BACKUP_REFUSED from the backup baseapp: the base is sent again at its next visit. */
void backup_on_refused(base_backup *b, const mc_origin *o, mc_istream *is);

/* backup_hold.c */
typedef struct backup_held {
    int32_t id;
    mc_address owner;
    uint32_t serial;
    mc_time_us received_at;
    size_t len;
    uint8_t data[];
} backup_held;
void backup_on_backup(base_backup *b, const mc_origin *o, mc_istream *is);
void backup_on_drop(base_backup *b, const mc_origin *o, mc_istream *is);
void backup_forget(base_backup *b, backup_held *h);
/* The ids of the backups held from owner, ascending (heap; NULL when none). */
int32_t *backup_held_ids(base_backup *b, const mc_address *owner, size_t *n);
void backup_hold_free(base_backup *b);
/* Calls waiting for a restore: deliver those for id in order (restored) or refuse them. */
void backup_release_calls(base_backup *b, int32_t id, bool restored);
void backup_expire_calls(base_backup *b, mc_time_us now);

/* backup_restore.c */
/* The steps of a restore that an offload (retire_take.c) shares. Make base h->entity_id
 * here from a decoded BACKUP_BASE: its properties and cellData, where its cell is (kept live
 * and told BASE_RESTORED when its cellapp lives; *lost_cell when that died: the caller has
 * it restored once the base is set up), its timers with the time they had left when the
 * state was taken (at received_at), its global names registered again (`what` names the
 * base in the logs). NULL with *status (BUSY: no entity; ARGS: its properties do not
 * decode) and why. No hook runs. */
mc_entity *backup_make_base(mc_engine *e, const mc_backup_head *h, mc_time_us received_at,
                            const char *what, bool *lost_cell, int *status, char *why,
                            size_t whylen);
/* A base that had a client and no ticket to honour waits as for a login session
 * (onClientDeath if none comes). */
void backup_wait_for_client(mc_engine *e, mc_entity *ent);
void backup_restore_from(base_backup *b, const mc_address *dead, const char *owner_name,
                         uint64_t incarnation);

#endif
