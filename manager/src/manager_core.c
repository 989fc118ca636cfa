/* The manager's core, below its other files (manager.c and the parts: ids, globals, query,
 * ring, watchers, cells): the dead-after times by role, the heartbeat timing check, the
 * count of unusable control messages, the backup ring's contents, and the ProcessEvents
 * every live process is told (with the ring). */
#include "manager_internal.h"
#include "common/log.h"
#include "mercury/status.h"
#include "server/control.h"
#include "server/pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct mc_manager_role_timeout mc_manager_role_timeouts[MC_MANAGER_ROLE_TIMEOUTS] = {
    {MC_ROLE_LOGINAPP, "deadAfterMsLoginapp"},
    {MC_ROLE_BASEAPP, "deadAfterMsBaseapp"},
    {MC_ROLE_CELLAPP, "deadAfterMsCellapp"},
};

uint64_t mc_manager_dead_after_ms(const mc_manager *m, mc_role role)
{
    if ((unsigned)role < MC_REG_ROLE_SLOTS && m->role_dead_after_ms[role])
        return m->role_dead_after_ms[role];
    return m->dead_after_ms;
}

/* deadAfterMs and heartbeatMs must leave room for at least two heartbeats per dead-after
 * time (one lost heartbeat is not a death). */
bool mc_manager_check_timing(uint64_t dead_after_ms, uint64_t heartbeat_ms, char *why,
                             size_t whylen)
{
    if (dead_after_ms < 100 || dead_after_ms > 3600000) {
        snprintf(why, whylen, "deadAfterMs: %llu is outside 100..3600000",
                 (unsigned long long)dead_after_ms);
        return false;
    }
    if (heartbeat_ms < 10 || heartbeat_ms * 2 > dead_after_ms) {
        snprintf(why, whylen,
                 "heartbeatMs: %llu must be at least 10 and at most half of deadAfterMs (%llu)",
                 (unsigned long long)heartbeat_ms, (unsigned long long)dead_after_ms);
        return false;
    }
    return true;
}

/* Whether to log the count-th occurrence of something a sender can repeat at will: the
 * first ten, then one in a thousand (the counters watch every one). */
bool mc_manager_worth_logging(uint64_t count) { return count <= 10 || count % 1000 == 0; }

/* A control message the manager cannot use (counts/malformed). */
void mc_manager_unusable(mc_manager *m, const char *what, const char *src)
{
    m->malformed++;
    if (mc_manager_worth_logging(m->malformed))
        MC_WARNING("%s from %s; ignored (%llu unusable control messages so far)", what, src,
                   (unsigned long long)m->malformed);
}

/* --- the backup ring and process events ---------------------------------------------- */

void mc_manager_ring_changed(mc_manager *m, const mc_reg_entry *e)
{
    if (e->role != MC_ROLE_BASEAPP)
        return;
    m->ring_version++;
    MC_INFO("backup ring version %u: %s %s", (unsigned)m->ring_version, e->name,
            e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE ? "joined" : "left");
}

bool mc_manager_ring_fill(mc_manager *m, Mc__Control__BackupRing *out)
{
    size_t n = 0, count = mc_registry_count(m->registry);
    char **addrs = calloc(count ? count : 1, sizeof *addrs);
    if (!addrs)
        return false;
    for (size_t i = 0; i < count && n < MC_RING_MAX; i++) {
        mc_reg_entry *e = mc_registry_at(m->registry, i);
        if (e->role == MC_ROLE_BASEAPP &&
            e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE && !e->retiring)
            addrs[n++] = e->internal_addr;
    }
    out->version = m->ring_version;
    out->manager_instance = m->instance;
    out->n_baseapps = n;
    out->baseapps = addrs;
    return true;
}

void mc_manager_ring_clear(Mc__Control__BackupRing *r)
{
    free(r->baseapps);
    r->baseapps = NULL;
    r->n_baseapps = 0;
}

void mc_manager_broadcast(mc_manager *m, Mc__Control__EventKind kind, const mc_reg_entry *about,
                      const char *reason)
{
    mc_time_us now = mc_clock_now_us();
    Mc__Control__ProcessInfo info;
    if (!mc_registry_to_info(about, now, &info)) {
        MC_ERROR("out of memory announcing %s", about->name);
        return;
    }
    Mc__Control__ProcessEvent ev = MC__CONTROL__PROCESS_EVENT__INIT;
    ev.kind = kind;
    ev.process = &info;
    ev.reason = (char *)(reason ? reason : "");
    Mc__Control__BackupRing ring = MC__CONTROL__BACKUP_RING__INIT;
    if (mc_manager_ring_fill(m, &ring))
        ev.ring = &ring;
    size_t told = 0;
    for (size_t i = 0; i < mc_registry_count(m->registry); i++) {
        mc_reg_entry *e = mc_registry_at(m->registry, i);
        if (e == about || e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
            continue;
        int rc = mc_server_send(m->server, e->internal_addr, MC_CTL_PROCESS_EVENT, &ev);
        if (rc != 0)
            MC_WARNING("cannot tell %s about %s: %s", e->name, about->name, mc_status_name(rc));
        else
            told++;
    }
    /* info's strings are heap copies; free them without freeing the stack struct. */
    ev.process = NULL;
    Mc__Control__ProcessInfo *heap = malloc(sizeof *heap);
    if (heap) {
        *heap = info;
        mc_pb_free(heap);
    }
    mc_manager_ring_clear(&ring);
    MC_DEBUG("told %zu processes about %s", told, about->name);
}

void mc_manager_announce(mc_manager *m, const mc_reg_entry *e, const char *reason)
{
    mc_manager_broadcast(m, MC__CONTROL__EVENT_KIND__EVENT_UNKNOWN, e, reason);
}

