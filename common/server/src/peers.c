/* The peers the manager told us about (births, deaths, registrations): the table keyed by
 * name, lookups by address, and their peers/<name> watchers. */
#include "server_internal.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void get_peer_state(void *ctx, mc_watch_value *out)
{
    out->as.s = strdup(mc_state_name(((server_peer *)ctx)->state));
}

void mc_server_peer_watch(mc_server *s, const server_peer *p)
{
    char path[MC_WATCH_MAX_PATH];
    snprintf(path, sizeof path, "peers/%s", p->name);
    /* Names are never reused, so an existing leaf already points at this peer. */
    mc_watch_status st = mc_watch_add(s->watchers, path, MC_WATCH_STRING, MC_WATCH_READ_ONLY,
                                      get_peer_state, NULL, (void *)p);
    if (st != MC_WATCH_OK && st != MC_WATCH_ERR_EXISTS)
        MC_WARNING("cannot publish %s: %s", path, mc_watch_status_name(st));
}

/* A slot for a peer not seen before: a new one, or (at MC_SERVER_MAX_PEERS) the slot of
 * one that is dead or stopped, whose peers/ watcher goes. NULL when none is free. */
static server_peer *new_peer_slot(mc_server *s)
{
    if (s->npeers < MC_SERVER_MAX_PEERS) {
        if (s->npeers == s->peers_cap) {
            size_t cap = s->peers_cap ? s->peers_cap * 2 : 16;
            server_peer **np = realloc(s->peers, cap * sizeof *np);
            if (!np)
                return NULL;
            s->peers = np;
            s->peers_cap = cap;
        }
        server_peer *p = calloc(1, sizeof *p);
        if (p)
            s->peers[s->npeers++] = p;
        return p;
    }
    for (size_t i = 0; i < s->npeers; i++) {
        server_peer *p = s->peers[i];
        if (p->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE) {
            char path[MC_WATCH_MAX_PATH];
            snprintf(path, sizeof path, "peers/%s", p->name);
            mc_watch_remove(s->watchers, path);
            memset(p, 0, sizeof *p);
            return p;
        }
    }
    return NULL;
}

server_peer *mc_server_peer_upsert(mc_server *s, const Mc__Control__ProcessInfo *info)
{
    server_peer *p = NULL;
    /* Keyed by name: a restarted manager numbers processes anew, and peers/<name> should
     * describe whoever holds that name now. */
    const char *name = info->name ? info->name : "";
    if (!*name || strlen(name) >= sizeof p->name)
        return NULL;
    for (size_t i = 0; i < s->npeers; i++)
        if (strcmp(s->peers[i]->name, name) == 0) {
            p = s->peers[i];
            break;
        }
    if (!p)
        p = new_peer_slot(s);
    if (!p) {
        MC_WARNING("cannot remember %s: %d live peers already", name, MC_SERVER_MAX_PEERS);
        return NULL;
    }
    p->id = info->id;
    snprintf(p->name, sizeof p->name, "%s", name);
    p->role = info->role;
    snprintf(p->internal_addr, sizeof p->internal_addr, "%s",
             info->internal_addr ? info->internal_addr : "");
    snprintf(p->external_addr, sizeof p->external_addr, "%s",
             info->external_addr ? info->external_addr : "");
    p->state = info->state;
    mc_server_peer_watch(s, p);
    return p;
}

Mc__Control__ProcessState mc_server_peer_state(const mc_server *s, const char *internal_addr)
{
    Mc__Control__ProcessState st = MC__CONTROL__PROCESS_STATE__STATE_UNKNOWN;
    for (size_t i = 0; i < s->npeers; i++) {
        if (strcmp(s->peers[i]->internal_addr, internal_addr) != 0)
            continue;
        if (s->peers[i]->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
            return s->peers[i]->state;
        st = s->peers[i]->state;
    }
    return st;
}

bool mc_server_peer_is_live(const mc_server *s, const mc_address *addr, mc_role role)
{
    char text[MC_ADDRESS_STRLEN];
    mc_address_format(addr, text, sizeof text);
    for (size_t i = 0; i < s->npeers; i++)
        if (s->peers[i]->role == role &&
            s->peers[i]->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE &&
            strcmp(s->peers[i]->internal_addr, text) == 0)
            return true;
    return false;
}

size_t mc_server_live_peers(const mc_server *s, mc_role role, mc_address *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->npeers && n < cap; i++)
        if (s->peers[i]->role == role &&
            s->peers[i]->state == MC__CONTROL__PROCESS_STATE__STATE_ALIVE &&
            mc_address_parse(s->peers[i]->internal_addr, &out[n]) == MC_OK)
            n++;
    return n;
}
