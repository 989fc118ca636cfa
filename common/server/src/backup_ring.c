/* The backup ring: rendezvous hashing over the live baseapps (server/backup_ring.h). */
#include "server/backup_ring.h"
#include "mercury/status.h"

#include <stdio.h>
#include <string.h>

void mc_backup_ring_clear(mc_backup_ring *r)
{
    r->version = 0;
    r->instance = 0;
    r->n = 0;
}

bool mc_backup_ring_from_pb(mc_backup_ring *r, const Mc__Control__BackupRing *pb)
{
    if (!pb || pb->n_baseapps > MC_RING_MAX)
        return false;
    mc_address tmp[MC_RING_MAX];
    for (size_t i = 0; i < pb->n_baseapps; i++)
        if (!pb->baseapps[i] || mc_address_parse(pb->baseapps[i], &tmp[i]) != MC_OK)
            return false;
    r->version = pb->version;
    r->instance = pb->manager_instance;
    r->n = pb->n_baseapps;
    memcpy(r->members, tmp, r->n * sizeof tmp[0]);
    return true;
}

bool mc_backup_ring_has(const mc_backup_ring *r, const mc_address *a)
{
    for (size_t i = 0; i < r->n; i++)
        if (mc_address_equal(&r->members[i], a))
            return true;
    return false;
}

/* splitmix64's finaliser: every input bit reaches every output bit. */
static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static uint64_t score(const mc_address *m, int32_t id)
{
    uint64_t key = ((uint64_t)m->ip << 16) | m->port;
    return mix(mix(key) ^ ((uint64_t)(uint32_t)id * 0xD6E8FEB86659FD93ULL));
}

static bool addr_less(const mc_address *a, const mc_address *b)
{
    return a->ip < b->ip || (a->ip == b->ip && a->port < b->port);
}

bool mc_backup_ring_pick(const mc_backup_ring *r, int32_t id, const mc_address *owner,
                         mc_address *out)
{
    bool found = false;
    uint64_t best = 0;
    for (size_t i = 0; i < r->n; i++) {
        const mc_address *m = &r->members[i];
        if (owner && mc_address_equal(m, owner))
            continue;
        uint64_t s = score(m, id);
        /* ties (practically never) go to the lower address: the same answer everywhere */
        if (!found || s > best || (s == best && addr_less(m, out))) {
            best = s;
            *out = *m;
            found = true;
        }
    }
    return found;
}

void mc_backup_ring_text(const mc_backup_ring *r, char *out, size_t outlen)
{
    if (!outlen)
        return;
    size_t used = (size_t)snprintf(out, outlen, "v%u:", (unsigned)r->version);
    for (size_t i = 0; i < r->n && used < outlen; i++) {
        char a[MC_ADDRESS_STRLEN];
        used += (size_t)snprintf(out + used, outlen - used, " %s",
                                 mc_address_format(&r->members[i], a, sizeof a));
    }
}
