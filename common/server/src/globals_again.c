/* Registering the kept global names again with a restarted manager: a new manager instance
 * starts with no names, and every process that registers with it sends its own again. A
 * name another process took meanwhile is a clash: logged, counted (globals/clashes) and no
 * longer ours. Sits on the kept names (globals_kept.c) and the client (globals_client.c). */
#include "server_internal.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char name[MC_GLOBAL_NAME_MAX + 1];
    mc_mailbox_ref mb;
} again_req;

static void on_again(mc_server *s, void *ctx, mc_global_status st, const mc_mailbox_ref *mb,
                     const char *reason)
{
    (void)mb;
    again_req *r = ctx;
    bool ours = mc_server_globals_kept(s, r->name, &r->mb);
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
