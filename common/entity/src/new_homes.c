/* Where the bases of a dead baseapp live now (issue 20): when the manager declares a baseapp
 * dead, the engine keeps the backup ring published with that death; a call to a base
 * component on that dead address (BASE, CELL_VIA_BASE, CLIENT_VIA_BASE, SERVICE) goes to the
 * entity's backup baseapp on that ring, which restores the base (or has restored it, or
 * holds the call until it has: baseapp/src/backup_restore.c). At most NEW_HOMES_MAX deaths
 * are remembered (the oldest forgotten first); a birth at the address forgets its entry. */
#include "engine_internal.h"
#include "common/log.h"

#include <stdlib.h>
#include <string.h>

#define NEW_HOMES_MAX 16

struct engine_new_home {
    mc_address dead;
    mc_backup_ring ring;
};

void engine_new_homes_free(mc_engine *e)
{
    for (size_t i = 0; i < e->nhomes; i++)
        free(e->homes[i]);
    e->nhomes = 0;
}

void engine_forget_new_home(mc_engine *e, const char *addr)
{
    mc_address a;
    if (mc_address_parse(addr, &a) != MC_OK)
        return;
    for (size_t i = 0; i < e->nhomes; i++)
        if (mc_address_equal(&e->homes[i]->dead, &a)) {
            free(e->homes[i]);
            memmove(&e->homes[i], &e->homes[i + 1], (e->nhomes - i - 1) * sizeof e->homes[0]);
            e->nhomes--;
            return;
        }
}

void engine_note_new_homes(mc_engine *e, const char *addr)
{
    mc_address a;
    if (mc_address_parse(addr, &a) != MC_OK)
        return;
    engine_forget_new_home(e, addr);
    struct engine_new_home *h = malloc(sizeof *h);
    if (!h) {
        MC_ERROR("out of memory keeping the backup ring of %s's death", addr);
        return;
    }
    h->dead = a;
    h->ring = *mc_server_backup_ring(e->server);
    if (e->nhomes == NEW_HOMES_MAX) {
        free(e->homes[0]);
        memmove(&e->homes[0], &e->homes[1], (NEW_HOMES_MAX - 1) * sizeof e->homes[0]);
        e->nhomes--;
    }
    e->homes[e->nhomes++] = h;
}

bool mc_engine_new_home(mc_engine *e, const mc_address *dead, int32_t id, mc_address *out)
{
    for (size_t i = e->nhomes; i-- > 0;)
        if (mc_address_equal(&e->homes[i]->dead, dead))
            return mc_backup_ring_pick(&e->homes[i]->ring, id, dead, out);
    return false;
}

bool engine_redirect(mc_engine *e, const mc_mailbox_ref *to, mc_address *addr)
{
    if (!e->nhomes || !engine_peer_dead(e, addr))
        return false;
    mc_component c = mc_mailbox_ref_component(to);
    if (c != MC_COMPONENT_BASE && c != MC_COMPONENT_CELL_VIA_BASE &&
        c != MC_COMPONENT_CLIENT_VIA_BASE && c != MC_COMPONENT_SERVICE)
        return false;
    mc_address home;
    if (!mc_engine_new_home(e, addr, to->id, &home))
        return false;
    *addr = home;
    e->st.redirected++;
    return true;
}
