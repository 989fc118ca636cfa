/* The manager's registry of processes. */
#include "registry.h"
#include "common/error.h"
#include "server/pb.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct mc_registry {
    mc_reg_entry **entries;
    size_t count;
    size_t cap;
    uint32_t next_id;
    unsigned per_role[8];
    char digest[MC_REG_DIGEST_LEN + 1];
    mc_time_us dead_after;
    mc_time_us role_dead_after[MC_REG_ROLE_SLOTS]; /* by role; 0: dead_after */
};

static bool valid_digest(const char *d)
{
    if (!d || strlen(d) != MC_REG_DIGEST_LEN)
        return false;
    for (const char *p = d; *p; p++)
        if (!isxdigit((unsigned char)*p))
            return false;
    return true;
}

mc_registry *mc_registry_new(const char *cluster_digest, mc_time_us dead_after_us)
{
    mc_registry *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->next_id = 1;
    r->dead_after = dead_after_us;
    if (cluster_digest && valid_digest(cluster_digest))
        snprintf(r->digest, sizeof r->digest, "%s", cluster_digest);
    return r;
}

void mc_registry_free(mc_registry *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++)
        free(r->entries[i]);
    free(r->entries);
    free(r);
}

const char *mc_registry_digest(const mc_registry *r) { return r->digest; }
mc_time_us mc_registry_dead_after(const mc_registry *r) { return r->dead_after; }
void mc_registry_set_dead_after(mc_registry *r, mc_time_us d) { r->dead_after = d; }
void mc_registry_set_role_dead_after(mc_registry *r, mc_role role, mc_time_us d)
{
    if ((unsigned)role < MC_REG_ROLE_SLOTS)
        r->role_dead_after[role] = d;
}
mc_time_us mc_registry_dead_after_of(const mc_registry *r, mc_role role)
{
    if ((unsigned)role < MC_REG_ROLE_SLOTS && r->role_dead_after[role])
        return r->role_dead_after[role];
    return r->dead_after;
}

static bool fits(const char *s, size_t max) { return s && strlen(s) < max; }

/* The name a process had under an earlier manager, when it is a name of its role (the role's
 * name and 1..9 digits) that no process here has had: the same name again. */
static bool previous_name_free(const mc_registry *r, mc_role role, const char *name,
                               unsigned *number)
{
    const char *prefix = mc_role_name(role);
    size_t plen = strlen(prefix), n = name ? strlen(name) : 0;
    if (n <= plen || n > plen + 9 || strncmp(name, prefix, plen) != 0)
        return false;
    unsigned long v = 0;
    for (size_t i = plen; i < n; i++) {
        if (name[i] < '0' || name[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(name[i] - '0');
    }
    if (v == 0 || v > 999999999ul || mc_registry_find_name(r, name))
        return false;
    *number = (unsigned)v;
    return true;
}

mc_reg_status mc_registry_add(mc_registry *r, const Mc__Control__RegisterRequest *req,
                              mc_time_us now, mc_reg_death_fn on_death, void *ctx,
                              mc_reg_entry **out, char *why, size_t whylen)
{
    *out = NULL;
    if (!mc_role_registers(req->role)) {
        mc_set_error(why, whylen, "role %s cannot register", mc_role_name(req->role));
        return MC_REG_BAD_REQUEST;
    }
    if (!fits(req->internal_addr, MC_REG_ADDR_MAX) || !req->internal_addr[0] ||
        !fits(req->external_addr, MC_REG_ADDR_MAX) || !fits(req->host, MC_REG_ADDR_MAX) ||
        !fits(req->build_version, 32)) {
        mc_set_error(why, whylen, "malformed registration (address, host or version)");
        return MC_REG_BAD_REQUEST;
    }
    if (!valid_digest(req->def_digest)) {
        mc_set_error(why, whylen, "def digest '%.64s' is not 64 hex characters",
                req->def_digest ? req->def_digest : "");
        return MC_REG_BAD_REQUEST;
    }
    if (r->digest[0] && strcasecmp(r->digest, req->def_digest) != 0) {
        mc_set_error(why, whylen, "def digest %.64s differs from the cluster's %.64s", req->def_digest,
                r->digest);
        return MC_REG_DIGEST_MISMATCH;
    }
    mc_reg_entry *same = mc_registry_find_alive_addr(r, req->internal_addr);
    if (same && same->pid == req->pid && same->role == req->role) {
        same->last_heartbeat = now;
        *out = same;
        return MC_REG_REPEATED;
    }
    if (!same && mc_registry_count_state(r, MC__CONTROL__PROCESS_STATE__STATE_ALIVE) >=
                     MC_REG_MAX_ALIVE) {
        mc_set_error(why, whylen, "the registry is full (%d live processes)", MC_REG_MAX_ALIVE);
        return MC_REG_FULL;
    }
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        mc_reg_entry **e = realloc(r->entries, cap * sizeof *e);
        if (!e)
            return MC_REG_NO_MEMORY;
        r->entries = e;
        r->cap = cap;
    }
    mc_reg_entry *e = calloc(1, sizeof *e);
    if (!e)
        return MC_REG_NO_MEMORY;
    mc_reg_entry *old = mc_registry_find_alive_addr(r, req->internal_addr);
    if (old) {
        mc_registry_mark(r, old->id, MC__CONTROL__PROCESS_STATE__STATE_DEAD,
                         "a new process registered at its address", now);
        if (on_death)
            on_death(ctx, old);
    }
    if (!r->digest[0])
        snprintf(r->digest, sizeof r->digest, "%s", req->def_digest);
    unsigned role = (unsigned)req->role & 7u;
    e->id = r->next_id++;
    e->role = req->role;
    unsigned number;
    if (previous_name_free(r, req->role, req->previous_name, &number)) {
        snprintf(e->name, sizeof e->name, "%s", req->previous_name);
        if (number > r->per_role[role])
            r->per_role[role] = number; /* new names come after it */
    } else {
        do /* past any name given again above the count */
            snprintf(e->name, sizeof e->name, "%s%02u", mc_role_name(req->role),
                     ++r->per_role[role]);
        while (mc_registry_find_name(r, e->name));
    }
    e->pid = req->pid;
    e->incarnation = req->incarnation;
    snprintf(e->host, sizeof e->host, "%s", req->host);
    snprintf(e->internal_addr, sizeof e->internal_addr, "%s", req->internal_addr);
    snprintf(e->external_addr, sizeof e->external_addr, "%s", req->external_addr);
    snprintf(e->digest, sizeof e->digest, "%s", req->def_digest);
    snprintf(e->version, sizeof e->version, "%s", req->build_version);
    e->state = MC__CONTROL__PROCESS_STATE__STATE_ALIVE;
    /* a baseapp a manager before us marked retiring says so: it stays out of the ring */
    e->retiring = req->retiring && req->role == MC_ROLE_BASEAPP;
    e->registered_at = now;
    e->last_heartbeat = now;
    r->entries[r->count++] = e;
    *out = e;
    return MC_REG_OK;
}

bool mc_registry_heartbeat(mc_registry *r, uint32_t id, double load, mc_time_us now)
{
    mc_reg_entry *e = mc_registry_find_id(r, id);
    if (!e || e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
        return false;
    if (load >= 0.0 && load < 1e6)
        e->load = load;
    e->last_heartbeat = now;
    return true;
}

mc_reg_entry *mc_registry_mark(mc_registry *r, uint32_t id, Mc__Control__ProcessState state,
                               const char *reason, mc_time_us now)
{
    mc_reg_entry *e = mc_registry_find_id(r, id);
    if (!e || e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
        return NULL;
    e->state = state;
    e->died_at = now;
    snprintf(e->reason, sizeof e->reason, "%s", reason ? reason : "");
    return e;
}

mc_reg_entry *mc_registry_fence(mc_registry *r, uint32_t id)
{
    mc_reg_entry *e = mc_registry_find_id(r, id);
    if (!e || (e->state != MC__CONTROL__PROCESS_STATE__STATE_DEAD &&
               e->state != MC__CONTROL__PROCESS_STATE__STATE_STOPPED))
        return NULL;
    char reason[sizeof e->reason];
    snprintf(reason, sizeof reason, "came back after: %.140s", e->reason);
    snprintf(e->reason, sizeof e->reason, "%s", reason);
    e->state = MC__CONTROL__PROCESS_STATE__STATE_FENCED;
    return e;
}

size_t mc_registry_expire(mc_registry *r, mc_time_us now, mc_reg_death_fn on_death, void *ctx)
{
    size_t n = 0;
    for (size_t i = 0; i < r->count; i++) {
        mc_reg_entry *e = r->entries[i];
        if (e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
            continue;
        if (now > e->last_heartbeat &&
            now - e->last_heartbeat > mc_registry_dead_after_of(r, e->role)) {
            char reason[96];
            snprintf(reason, sizeof reason, "no heartbeat for %llu ms",
                     (unsigned long long)((now - e->last_heartbeat) / MC_US_PER_MS));
            mc_registry_mark(r, e->id, MC__CONTROL__PROCESS_STATE__STATE_DEAD, reason, now);
            n++;
            if (on_death)
                on_death(ctx, e);
        }
    }
    return n;
}

size_t mc_registry_prune(mc_registry *r, size_t keep_gone,
                         void (*on_forget)(void *ctx, mc_reg_entry *e), void *ctx)
{
    size_t gone = r->count - mc_registry_count_state(r, MC__CONTROL__PROCESS_STATE__STATE_ALIVE);
    size_t forgotten = 0;
    while (gone > keep_gone) {
        size_t oldest = r->count;
        for (size_t i = 0; i < r->count; i++) {
            mc_reg_entry *e = r->entries[i];
            if (e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE &&
                (oldest == r->count || e->died_at < r->entries[oldest]->died_at))
                oldest = i;
        }
        if (oldest == r->count)
            break;
        mc_reg_entry *e = r->entries[oldest];
        if (on_forget)
            on_forget(ctx, e);
        memmove(&r->entries[oldest], &r->entries[oldest + 1],
                (r->count - oldest - 1) * sizeof *r->entries);
        r->count--;
        free(e);
        gone--;
        forgotten++;
    }
    return forgotten;
}

size_t mc_registry_count(const mc_registry *r) { return r->count; }

mc_reg_entry *mc_registry_at(const mc_registry *r, size_t index)
{
    return index < r->count ? r->entries[index] : NULL;
}

size_t mc_registry_count_state(const mc_registry *r, Mc__Control__ProcessState state)
{
    size_t n = 0;
    for (size_t i = 0; i < r->count; i++)
        n += r->entries[i]->state == state;
    return n;
}

mc_reg_entry *mc_registry_find_id(const mc_registry *r, uint32_t id)
{
    for (size_t i = 0; i < r->count; i++)
        if (r->entries[i]->id == id)
            return r->entries[i];
    return NULL;
}

mc_reg_entry *mc_registry_find_name(const mc_registry *r, const char *name)
{
    for (size_t i = 0; name && i < r->count; i++)
        if (strcmp(r->entries[i]->name, name) == 0)
            return r->entries[i];
    return NULL;
}

mc_reg_entry *mc_registry_find_alive_addr(const mc_registry *r, const char *internal_addr)
{
    for (size_t i = 0; internal_addr && i < r->count; i++) {
        mc_reg_entry *e = r->entries[i];
        if (e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE &&
            strcmp(e->internal_addr, internal_addr) == 0)
            return e;
    }
    return NULL;
}

mc_reg_entry *mc_registry_least_loaded(const mc_registry *r, mc_role role)
{
    mc_reg_entry *best = NULL;
    for (size_t i = 0; i < r->count; i++) {
        mc_reg_entry *e = r->entries[i];
        if (e->role != role || e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE ||
            e->retiring)
            continue;
        if (!best || e->load < best->load)
            best = e;
    }
    return best;
}

bool mc_registry_to_info(const mc_reg_entry *e, mc_time_us now, Mc__Control__ProcessInfo *out)
{
    mc__control__process_info__init(out);
    out->id = e->id;
    out->role = e->role;
    out->pid = e->pid;
    out->incarnation = e->incarnation;
    out->state = e->state;
    out->load = e->load;
    /* A dead or stopped process's clock stops when it died. */
    mc_time_us end = e->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE ? now : e->died_at;
    out->uptime_ms = end > e->registered_at ? (end - e->registered_at) / MC_US_PER_MS : 0;
    out->heartbeat_age_ms =
        end > e->last_heartbeat ? (end - e->last_heartbeat) / MC_US_PER_MS : 0;
    char **fields[] = {&out->name, &out->host, &out->internal_addr, &out->external_addr,
                       &out->def_digest, &out->build_version, &out->death_reason};
    const char *values[] = {e->name, e->host, e->internal_addr, e->external_addr,
                            e->digest, e->version, e->reason};
    bool ok = true;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        char *s = values[i][0] ? mc_pb_strdup(values[i]) : NULL;
        if (values[i][0] && !s)
            ok = false;
        if (s)
            *fields[i] = s;
    }
    return ok;
}
