/* The backup ring (issue 20): which live baseapp holds the backup of a base.
 *
 * The manager publishes the live baseapps with a version (BackupRing in control.proto, in
 * every RegisterReply and ProcessEvent); every baseapp and cellapp keeps the latest one
 * (mc_server_backup_ring). The backup of entity `id` owned by baseapp `owner` is the member
 * other than the owner with the highest score hash(member, id) (rendezvous hashing): a pure
 * function of the ring's members, so every process with the same ring names the same
 * baseapp; entities spread evenly over the members; a birth or death moves only the entities
 * that the new member now wins or the dead one held (about 1/n of them). Because the owner is
 * skipped, the ring published with an owner's death (the owner gone) names the same backup
 * for its entities as the ring before it: that is where its bases are restored and where
 * mailboxes to them are resent (docs/ARCHITECTURE.md "Faults").
 */
#ifndef MC_SERVER_BACKUP_RING_H
#define MC_SERVER_BACKUP_RING_H

#include "mercury/address.h"
#include "proto/control.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many members (more baseapps than this: the rest are never picked). */
#define MC_RING_MAX 256

typedef struct {
    uint32_t version; /* 0: none received yet */
    uint64_t instance; /* the manager instance that numbered it */
    size_t n;
    mc_address members[MC_RING_MAX];
} mc_backup_ring;

void mc_backup_ring_clear(mc_backup_ring *r);
/* From the wire: false (r unchanged) when an address is malformed or there are more than
 * MC_RING_MAX. */
bool mc_backup_ring_from_pb(mc_backup_ring *r, const Mc__Control__BackupRing *pb);
bool mc_backup_ring_has(const mc_backup_ring *r, const mc_address *a);
/* The backup baseapp of entity id owned by owner (never the owner): false when the ring has
 * no member but the owner. */
bool mc_backup_ring_pick(const mc_backup_ring *r, int32_t id, const mc_address *owner,
                         mc_address *out);
/* "v3: 127.0.0.1:2001 127.0.0.1:2002" for watchers and logs. */
void mc_backup_ring_text(const mc_backup_ring *r, char *out, size_t outlen);

#endif
