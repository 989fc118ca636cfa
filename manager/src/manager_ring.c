/* The backup ring the manager publishes (server/backup_ring.h): the live baseapps in
 * registry order and a version bumped on every baseapp birth, death or stop. It travels in
 * every RegisterReply and ProcessEvent; watchers backupRing/version and backupRing/members.
 *
 * A retiring baseapp (command/retireBaseapp NAME, which the baseapp's command/retire calls;
 * docs/ENTITIES.md "Retiring a baseapp") leaves the ring (a new version, told to every live
 * process in a ProcessEvent of kind EVENT_UNKNOWN with the reason "retiring") and is never
 * the least-loaded baseapp again (no new logins or bases); it stays alive, offloading its
 * bases to their backups on the new ring, then stops. */
#include "manager_internal.h"
#include "common/log.h"
#include "server/backup_ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void get_members(void *ctx, mc_watch_value *out)
{
    mc_manager *m = ctx;
    Mc__Control__BackupRing pb = MC__CONTROL__BACKUP_RING__INIT;
    mc_backup_ring ring;
    mc_backup_ring_clear(&ring);
    if (mc_manager_ring_fill(m, &pb))
        mc_backup_ring_from_pb(&ring, &pb);
    mc_manager_ring_clear(&pb);
    char text[MC_RING_MAX * (MC_ADDRESS_STRLEN + 1) + 16];
    mc_backup_ring_text(&ring, text, sizeof text);
    out->as.s = strdup(text);
}

static void get_version(void *ctx, mc_watch_value *out)
{
    out->as.u = ((mc_manager *)ctx)->ring_version;
}

/* command/retireBaseapp NAME: the live baseapp NAME retires (idempotent). */
static bool call_retire(void *ctx, int argc, const char *const *argv, char **result, char *why,
                        size_t whylen)
{
    mc_manager *m = ctx;
    if (argc != 1) {
        snprintf(why, whylen, "usage: retireBaseapp NAME");
        return false;
    }
    mc_reg_entry *e = mc_registry_find_name(m->registry, argv[0]);
    if (!e || e->role != MC_ROLE_BASEAPP ||
        e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE) {
        snprintf(why, whylen, "'%s' is not a live baseapp", argv[0]);
        return false;
    }
    if (!e->retiring) {
        size_t others = 0;
        for (size_t i = 0; i < mc_registry_count(m->registry); i++) {
            mc_reg_entry *o = mc_registry_at(m->registry, i);
            if (o != e && o->role == MC_ROLE_BASEAPP && !o->retiring &&
                o->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
                others++;
        }
        if (!others) {
            snprintf(why, whylen, "'%s' is the only live baseapp not retiring: its bases "
                     "would have nowhere to go", argv[0]);
            return false;
        }
        e->retiring = true;
        m->retiring_marked++;
        m->ring_version++;
        MC_WARNING("%s is retiring: out of the backup ring (version %u), no new logins or "
                   "bases on it", e->name, (unsigned)m->ring_version);
        mc_manager_announce(m, e, "retiring");
    }
    char text[160];
    snprintf(text, sizeof text, "%s retiring; backup ring version %u", e->name,
             (unsigned)m->ring_version);
    *result = strdup(text);
    return *result != NULL;
}

static void get_retiring(void *ctx, mc_watch_value *out)
{
    mc_manager *m = ctx;
    uint64_t n = 0;
    for (size_t i = 0; i < mc_registry_count(m->registry); i++) {
        mc_reg_entry *e = mc_registry_at(m->registry, i);
        if (e->retiring && e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
            n++;
    }
    out->as.u = n;
}

int mc_manager_publish_ring(mc_manager *m)
{
    mc_watchers *w = mc_server_watchers(m->server);
    int bad = 0;
    bad |= mc_watch_add_callable(w, "command/retireBaseapp", call_retire, m,
                                 "retireBaseapp NAME: the baseapp leaves the backup ring and "
                                 "gets no new logins or bases (its command/retire calls it)") !=
           MC_WATCH_OK;
    bad |= mc_watch_add(w, "registry/retiring", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_retiring,
                        NULL, m) != MC_WATCH_OK;
    bad |= mc_watch_add_uint(w, "registry/retiringMarked", &m->retiring_marked,
                             MC_WATCH_READ_ONLY) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "backupRing/version", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_version,
                        NULL, m) != MC_WATCH_OK;
    bad |= mc_watch_add(w, "backupRing/members", MC_WATCH_STRING, MC_WATCH_READ_ONLY,
                        get_members, NULL, m) != MC_WATCH_OK;
    return bad ? -1 : 0;
}
