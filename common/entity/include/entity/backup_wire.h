/* Base backups on the wire (issue 20; docs/PROTOCOL.md "Base backups"): what a baseapp sends
 * its backup baseapp about each base, and what a restorer tells a cell whose base it
 * restored. Pure encoders and bounded decoders of peer input (fuzzed: fuzz_backup_wire).
 *
 *   id  message        direction                 payload
 *   64  BACKUP_BASE    owner -> backup baseapp   BackupHead, then blob base properties, blob
 *                                                cellData properties (each the part stream
 *                                                of the type), blob proxy facts
 *   65  BACKUP_DROP    owner -> backup baseapp   i32 entity id: the base is gone (or its
 *                                                backup moved elsewhere)
 *   66  BASE_RESTORED  restorer -> cellapp       i32 entity id, MAILBOX its new BASE: the
 *                                                base of this cell lives there now
 *   72  OFFLOAD_BASE   retiring -> baseapp, req. string owner name (its check-out owner),
 *                                                then a BACKUP_BASE payload: take the live
 *                                                base over now (baseapp/src/retire/retire.h);
 *                                                reply: i8 mc_call_status, string reason
 *   67  BACKUP_REFUSED backup baseapp -> owner   i32 entity id, u8 reason (MC_BACKUP_REFUSED_*):
 *                                                a BACKUP_BASE was not kept; the owner sends
 *                                                it again at its next visit when the reason
 *                                                may pass (not known live yet, full)
 *
 * BackupHead: i32 entity id, u16 type, u32 serial (the owner's, rising with every backup of
 * the base), u8 flags (bit 0: it has a live cell, bit 1: it has a client, bit 2: its first
 * write was in flight), MAILBOX cell
 * (the none mailbox without a cell), 6 x f32 cellData position and direction, i32 its cell's
 * space id (0: none known), u64 database
 * id (0: none), string check-out token (at most 95 bytes), u8 n global names, n x string
 * (1..64 bytes), u16 n timers (at most MC_BACKUP_TIMERS_MAX), n x (u32 timer id, u64
 * microseconds until due, u64 period in microseconds (0: once), i64 user argument).
 */
#ifndef MC_ENTITY_BACKUP_WIRE_H
#define MC_ENTITY_BACKUP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"
#include "common/game_module.h"
#include "common/mailbox_ref.h"
#include "common/stream.h"

enum {
    MC_MSG_BACKUP_BASE = 64,
    MC_MSG_BACKUP_DROP = 65,
    MC_MSG_BASE_RESTORED = 66,
    MC_MSG_OFFLOAD_BASE = 72,
    MC_MSG_BACKUP_REFUSED = 67,
    /* retiring a baseapp (baseapp/src/retire*.c; docs/PROTOCOL.md "Retiring a baseapp") */
    MC_MSG_RETIRE_PASS = 80,        /* a cell's message to a base that left, passed on */
    MC_MSG_RETIRE_CLIENT_CALL = 81, /* a client's call to a player that left, passed on */
    MC_MSG_RETIRE_END = 82,         /* the retiring baseapp passes nothing more on */
    MC_MSG_RETIRED = 83,            /* send calls for its bases to their new homes now */
    MC_MSG_RETIRE_HOMES = 84,       /* bases whose new home is not their pick on the ring */
    MC_MSG_RETIRED_NOTED = 85,      /* RETIRED heard (one-way, whenever it is processed) */
    MC_MSG_RETIRE_SENDER_END = 86,  /* a late sender's stream through the retiring one ended */
    MC_MSG_RETIRED_HOMES = 87,      /* to a baseapp born later: where a retired one's bases are */
};

/* Why a backup baseapp did not keep a backup (BACKUP_REFUSED). */
typedef enum {
    MC_BACKUP_REFUSED_NOT_LIVE = 1, /* the sender is not a live baseapp here (not yet heard) */
    MC_BACKUP_REFUSED_FULL = 2,     /* --backupHeldMaxBytes reached */
    MC_BACKUP_REFUSED_LIVE_HERE = 3, /* that entity is live on the backup baseapp */
    MC_BACKUP_REFUSED_REASON_MAX = 3,
} mc_backup_refused_reason;

#define MC_BACKUP_NAMES_MAX 32u
#define MC_BACKUP_TIMERS_MAX 1024u
#define MC_BACKUP_TOKEN_MAX 95u
#define MC_BACKUP_FLAG_CELL 1u
#define MC_BACKUP_FLAG_CLIENT 2u
#define MC_BACKUP_FLAG_CREATING 4u /* its first write (which gives it a database id) was in
                                    * flight: it is not restored (the write may have landed) */

typedef struct {
    uint32_t id;
    uint64_t due_in_us;
    uint64_t repeat_us;
    int64_t user_arg;
} mc_backup_timer;

typedef struct {
    int32_t entity_id;
    uint16_t type;
    uint32_t serial;
    uint8_t flags;
    mc_mailbox_ref cell;               /* none without a cell */
    mc_vector3 position, direction;    /* cellData's */
    int32_t space;                     /* its cell's space (0: none known) */
    uint64_t dbid;
    char token[MC_BACKUP_TOKEN_MAX + 1];
    size_t nnames;
    char names[MC_BACKUP_NAMES_MAX][65];
    size_t ntimers;
    mc_backup_timer *timers;           /* decode: heap (mc_backup_head_free); encode: caller's */
    /* views into the decoded buffer (decode only) */
    const uint8_t *base_props, *cell_props, *proxy;
    size_t base_len, cell_len, proxy_len;
} mc_backup_head;

/* Encode a whole BACKUP_BASE from h and the three blobs. */
void mc_backup_encode(mc_ostream *os, const mc_backup_head *h, const uint8_t *base_props,
                      size_t base_len, const uint8_t *cell_props, size_t cell_len,
                      const uint8_t *proxy, size_t proxy_len);
/* Decode a whole BACKUP_BASE (no trailing bytes): false with the reason when malformed (id
 * not positive, unknown type, a cell mailbox that is not this entity's CELL, positions not
 * finite, too many names or timers, a timer id 0, a name empty or too long). The blobs are
 * views into the stream's buffer; the properties in them are the caller's to decode. */
bool mc_backup_decode(const mc_entity_defs *defs, mc_istream *is, mc_backup_head *h, char *why,
                      size_t whylen);
void mc_backup_head_free(mc_backup_head *h);

/* BACKUP_DROP. */
void mc_backup_drop_encode(mc_ostream *os, int32_t entity_id);
bool mc_backup_drop_decode(mc_istream *is, int32_t *entity_id);

/* BACKUP_REFUSED: false when malformed (id not positive, unknown reason, trailing bytes). */
void mc_backup_refused_encode(mc_ostream *os, int32_t entity_id, uint8_t reason);
bool mc_backup_refused_decode(mc_istream *is, int32_t *entity_id, uint8_t *reason);

/* BASE_RESTORED: false when malformed (not the BASE mailbox of that entity). */
void mc_base_restored_encode(mc_ostream *os, int32_t entity_id, const mc_mailbox_ref *base);
bool mc_base_restored_decode(const mc_entity_defs *defs, mc_istream *is, int32_t *entity_id,
                             mc_mailbox_ref *base);

#endif
