/* The global names this process registered, kept until it deregisters them, so that it
 * registers them again with a restarted manager (globals_again.c), and their watchers. */
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

bool mc_server_globals_kept(mc_server *s, const char *name, const mc_mailbox_ref *mb)
{
    server_kept_name *k = find(s, name);
    return k && same_mailbox(&k->mb, mb);
}

void mc_server_globals_forget(mc_server *s, const char *name, const mc_mailbox_ref *mb)
{
    server_kept_name *k = find(s, name);
    if (!k || !same_mailbox(&k->mb, mb))
        return;
    *k = s->kept[--s->nkept];
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
