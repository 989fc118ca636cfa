/* The global names this process registered, kept until it deregisters them, so that it
 * registers them again with a restarted manager: a new manager instance starts with no
 * names, and every process that registers with it sends its own again. A name another
 * process took meanwhile is a clash: logged, counted (globals/clashes) and no longer ours. */
#include "server_internal.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool same_mailbox(const mc_mailbox_ref *a, const mc_mailbox_ref *b)
{
    return a->id == b->id && a->ip == b->ip && a->port == b->port && a->salt == b->salt;
}

static server_kept_name *find(mc_server *s, const char *name)
{
    for (size_t i = 0; i < s->nkept; i++)
        if (strcmp(s->kept[i].name, name) == 0)
            return &s->kept[i];
    return NULL;
}

void mc_server_globals_keep(mc_server *s, const char *name, const mc_mailbox_ref *mb)
{
    if (s->freeing)
        return;
    server_kept_name *k = find(s, name);
    if (!k) {
        if (s->nkept == s->kept_cap) {
            size_t cap = s->kept_cap ? s->kept_cap * 2 : 8;
            server_kept_name *n = realloc(s->kept, cap * sizeof *n);
            if (!n) {
                MC_WARNING("%s: out of memory: global name '%s' will not be registered again "
                           "with a restarted manager", s->name, name);
                return;
            }
            s->kept = n;
            s->kept_cap = cap;
        }
        k = &s->kept[s->nkept++];
        snprintf(k->name, sizeof k->name, "%s", name);
    }
    k->mb = *mb;
}

void mc_server_globals_forget(mc_server *s, const char *name, const mc_mailbox_ref *mb)
{
    server_kept_name *k = find(s, name);
    if (!k || !same_mailbox(&k->mb, mb))
        return;
    *k = s->kept[--s->nkept];
}

typedef struct {
    char name[MC_GLOBAL_NAME_MAX + 1];
    mc_mailbox_ref mb;
} again_req;

static void on_again(mc_server *s, void *ctx, mc_global_status st, const mc_mailbox_ref *mb,
                     const char *reason)
{
    (void)mb;
    again_req *r = ctx;
    server_kept_name *k = find(s, r->name);
    bool ours = k && same_mailbox(&k->mb, &r->mb);
    if (s->freeing) {
        /* nothing to do: the process is going */
    } else if (st == MC_GLOBAL_OK) {
        if (ours) {
            s->globals_again++;
        } else {
            /* Deregistered while the request was on its way: take it back. */
            mc_server_global_deregister(s, r->name, &r->mb, NULL, NULL);
        }
    } else if (st == MC_GLOBAL_TAKEN) {
        s->globals_clashes++;
        MC_WARNING("%s: global name '%s' could not be registered again with the manager at "
                   "%s: %s (another process took it while the manager was away); it is no "
                   "longer this process's",
                   s->name, r->name, s->manager_addr, reason);
        if (ours)
            mc_server_globals_forget(s, r->name, &r->mb);
    } else {
        s->globals_again_failed++;
        /* No answer, or not registered (the manager went away again): kept for the next
         * registration. Refused (bad, full): dropped. */
        bool keep = st == MC_GLOBAL_NO_ANSWER || st == MC_GLOBAL_NOT_REGISTERED;
        MC_WARNING("%s: global name '%s' not registered again with the manager at %s: %s (%s)%s",
                   s->name, r->name, s->manager_addr, mc_global_status_name(st), reason,
                   keep ? "; trying again at the next registration" : "; dropped");
        if (!keep && ours)
            mc_server_globals_forget(s, r->name, &r->mb);
    }
    free(r);
}

void mc_server_globals_register_again(mc_server *s)
{
    if (!s->nkept)
        return;
    MC_INFO("%s: registering %zu global name%s again with the manager at %s (a new manager "
            "instance starts with none)",
            s->name, s->nkept, s->nkept == 1 ? "" : "s", s->manager_addr);
    /* Copies: a request that fails at once is counted, and the list may change meanwhile. */
    size_t n = s->nkept;
    server_kept_name *copy = malloc(n * sizeof *copy);
    if (!copy) {
        s->globals_again_failed += n;
        MC_WARNING("%s: out of memory: global names not registered again", s->name);
        return;
    }
    memcpy(copy, s->kept, n * sizeof *copy);
    for (size_t i = 0; i < n; i++) {
        again_req *r = malloc(sizeof *r);
        int rc = MC_ERR_NO_MEMORY;
        if (r) {
            *r = (again_req){.mb = copy[i].mb};
            snprintf(r->name, sizeof r->name, "%s", copy[i].name);
            rc = mc_server_global_register_again(s, r->name, &r->mb, on_again, r);
        }
        if (rc != MC_OK) {
            free(r);
            s->globals_again_failed++;
            MC_WARNING("%s: cannot send global name '%s' to the manager again: %s", s->name,
                       copy[i].name, mc_status_name(rc));
        }
    }
    free(copy);
}

static void get_kept(void *ctx, mc_watch_value *out) { out->as.u = ((mc_server *)ctx)->nkept; }

int mc_server_globals_publish(mc_server *s)
{
    if (s->desc.role == MC_ROLE_MANAGER)
        return 0;
    mc_watchers *w = s->watchers;
    int bad = mc_watch_add(w, "globals/kept", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_kept, NULL,
                           s);
    bad |= mc_watch_add_uint(w, "globals/registeredAgain", &s->globals_again, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "globals/clashes", &s->globals_clashes, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "globals/againFailed", &s->globals_again_failed,
                             MC_WATCH_READ_ONLY);
    return bad ? -1 : 0;
}

void mc_server_globals_free(mc_server *s)
{
    free(s->kept);
    s->kept = NULL;
    s->nkept = s->kept_cap = 0;
}
