/* The manager's answers to QUERY: all processes, by role, by name, least loaded, and
 * watcher TARGETs ("all", "manager", "baseapps", a name). */
#include "manager_internal.h"
#include "server/pb.h"
#include "common/log.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

Mc__Control__ProcessInfo *mc_manager_info(const mc_reg_entry *e, mc_time_us now)
{
    Mc__Control__ProcessInfo *p = malloc(sizeof *p);
    if (p && !mc_registry_to_info(e, now, p)) {
        mc_pb_free(p);
        return NULL;
    }
    return p;
}

/* The manager as a ProcessInfo (it is not in its own registry). */
Mc__Control__ProcessInfo *mc_manager_self_info(mc_manager *m, mc_time_us now)
{
    mc_reg_entry self;
    memset(&self, 0, sizeof self);
    snprintf(self.name, sizeof self.name, "manager");
    self.role = MC_ROLE_MANAGER;
    self.pid = (uint32_t)getpid();
    self.state = MC__CONTROL__PROCESS_STATE__STATE_ALIVE;
    self.load = mc_server_load(m->server);
    snprintf(self.internal_addr, sizeof self.internal_addr, "%s",
             mc_server_internal_addr(m->server));
    snprintf(self.digest, sizeof self.digest, "%s", mc_server_digest(m->server));
    snprintf(self.version, sizeof self.version, "%s", MC_VERSION);
    gethostname(self.host, sizeof self.host - 1);
    self.registered_at = now; /* uptime filled below */
    self.last_heartbeat = now;
    Mc__Control__ProcessInfo *p = mc_manager_info(&self, now);
    if (p) {
        mc_watch_value v;
        char err[64];
        if (mc_watch_get(mc_server_watchers(m->server), "uptime", &v, err, sizeof err) ==
            MC_WATCH_OK)
            p->uptime_ms = (uint64_t)(v.as.f * 1000.0);
    }
    return p;
}

static bool add_match(Mc__Control__QueryReply *r, size_t cap, Mc__Control__ProcessInfo *p)
{
    if (!p)
        return false;
    if (r->n_processes >= cap) {
        mc_pb_free(p);
        return false;
    }
    r->processes[r->n_processes++] = p;
    return true;
}

void mc_manager_handle_query(mc_manager *m, const uint8_t *data, size_t len,
                         mc_server_request *request)
{
    m->queries++;
    mc_time_us now = mc_clock_now_us();
    Mc__Control__QueryReply *reply = malloc(sizeof *reply);
    if (!reply)
        return;
    mc__control__query_reply__init(reply);
    Mc__Control__QueryRequest *q = mc__control__query_request__unpack(NULL, len, data);
    size_t cap = mc_registry_count(m->registry) + 1;
    reply->processes = calloc(cap, sizeof *reply->processes);
    char why[320] = "";
    if (!q || !reply->processes) {
        reply->status = MC__CONTROL__QUERY_STATUS__QUERY_BAD_REQUEST;
        snprintf(why, sizeof why, "malformed query");
        goto done;
    }
    const char *name = q->name ? q->name : "";
    mc_role role = q->role;
    bool all = false, self = false, dead_too = false;
    switch (q->kind) {
    case MC__CONTROL__QUERY_KIND__QUERY_ALL:
        all = self = dead_too = true;
        break;
    case MC__CONTROL__QUERY_KIND__QUERY_BY_ROLE:
        self = role == MC_ROLE_MANAGER;
        break;
    case MC__CONTROL__QUERY_KIND__QUERY_LEAST_LOADED: {
        mc_reg_entry *e = mc_registry_least_loaded(m->registry, role);
        if (e)
            add_match(reply, cap, mc_manager_info(e, now));
        else
            snprintf(why, sizeof why, "no live %s", mc_role_plural(role));
        goto done;
    }
    case MC__CONTROL__QUERY_KIND__QUERY_SPACE_HOME: {
        char *end = NULL;
        long space = strtol(name, &end, 10);
        if (role != MC_ROLE_CELLAPP || !*name || *end || space <= 0 || space > INT32_MAX) {
            reply->status = MC__CONTROL__QUERY_STATUS__QUERY_BAD_REQUEST;
            snprintf(why, sizeof why, "a space home is asked of cellapps, by a space id");
            goto done;
        }
        m->space_home_asks++;
        uint32_t pid;
        mc_reg_entry *e = NULL;
        bool held = mc_space_homes_get(m->space_homes, (int32_t)space, &pid);
        if (held)
            e = mc_registry_find_id(m->registry, pid);
        /* a partitioned space: one of the cellapps serving its cells (the restored reals
         * are offloaded from there to the cells holding them) */
        mc_reg_entry *in_part = mc_manager_cells_home(m, (int32_t)space, held ? pid : 0);
        if (in_part && in_part != e) {
            e = in_part;
            mc_space_homes_put(m->space_homes, (int32_t)space, e->id);
            m->space_home_picks++;
            MC_INFO("space %ld is restored on %s (it serves a cell of it)", space, e->name);
        }
        if (!e || e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE || e->role != role) {
            /* the first ask, or its home died too: the least loaded from now on */
            e = mc_registry_least_loaded(m->registry, role);
            if (e) {
                mc_space_homes_put(m->space_homes, (int32_t)space, e->id);
                m->space_home_picks++;
                MC_INFO("space %ld is restored on %s", space, e->name);
            }
        }
        if (e)
            add_match(reply, cap, mc_manager_info(e, now));
        else
            snprintf(why, sizeof why, "no live %s", mc_role_plural(role));
        goto done;
    }
    case MC__CONTROL__QUERY_KIND__QUERY_BY_NAME:
    case MC__CONTROL__QUERY_KIND__QUERY_TARGET:
        if (q->kind == MC__CONTROL__QUERY_KIND__QUERY_TARGET && strcmp(name, "all") == 0) {
            all = self = true;
        } else if (strcmp(name, "manager") == 0 || strcmp(name, "managers") == 0) {
            self = true;
            role = MC_ROLE_UNKNOWN;
        } else if (q->kind == MC__CONTROL__QUERY_KIND__QUERY_TARGET &&
                   mc_role_parse_plural(name, &role)) {
            break;
        } else {
            mc_reg_entry *e = mc_registry_find_name(m->registry, name);
            if (!e)
                snprintf(why, sizeof why, "no process called '%.100s'", name);
            else if (q->kind == MC__CONTROL__QUERY_KIND__QUERY_TARGET &&
                     e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
                snprintf(why, sizeof why, "%s is %s (%s)", e->name, mc_state_name(e->state),
                         e->reason);
            else
                add_match(reply, cap, mc_manager_info(e, now));
            goto done;
        }
        break;
    default:
        reply->status = MC__CONTROL__QUERY_STATUS__QUERY_BAD_REQUEST;
        snprintf(why, sizeof why, "unknown query kind %d", (int)q->kind);
        goto done;
    }
    if (self)
        add_match(reply, cap, mc_manager_self_info(m, now));
    for (size_t i = 0; i < mc_registry_count(m->registry); i++) {
        mc_reg_entry *e = mc_registry_at(m->registry, i);
        if (!dead_too && e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
            continue;
        if (all || (role != MC_ROLE_UNKNOWN && e->role == role))
            add_match(reply, cap, mc_manager_info(e, now));
    }
    if (reply->n_processes == 0)
        snprintf(why, sizeof why, "no live %s", role != MC_ROLE_UNKNOWN ? mc_role_plural(role) : "processes");
done:
    if (reply->status == MC__CONTROL__QUERY_STATUS__QUERY_OK && reply->n_processes == 0)
        reply->status = MC__CONTROL__QUERY_STATUS__QUERY_NO_MATCH;
    if (why[0] && reply->status != MC__CONTROL__QUERY_STATUS__QUERY_OK)
        reply->reason = mc_pb_strdup(why);
    mc_pb_free(q);
    if (request)
        mc_server_reply(m->server, request, reply);
    mc_pb_free(reply);
}
