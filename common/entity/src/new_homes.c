/* Where the bases of a dead baseapp live now (issue 20): when the manager declares a baseapp
 * dead, the engine keeps the backup ring published with that death; a call to a base
 * component on that dead address (BASE, CELL_VIA_BASE, CLIENT_VIA_BASE, SERVICE) goes to the
 * entity's backup baseapp on that ring, which restores the base (or has restored it, or
 * holds the call until it has: baseapp/src/backup/backup_restore.c). At most NEW_HOMES_MAX deaths
 * are remembered (the oldest forgotten first); a birth at the address forgets its entry.
 *
 * A retiring baseapp that has offloaded every base says RETIRED (entity message 83) to every
 * live baseapp and cellapp before it stops (baseapp/src/retire/retire.c): from then on calls for
 * its bases go to their new homes on the ring of that moment, while it still lives (it keeps
 * passing on what was already on its way), and its death later keeps that ring. A baseapp
 * born after it stopped is told by the holders of its bases (RETIRED_HOMES): calls for them
 * come here, and the baseapp part sends each on to its home. */
#include "engine_internal.h"
#include "common/log.h"

#include <stdlib.h>
#include <string.h>

#define NEW_HOMES_MAX 16

struct engine_new_home {
    mc_address dead;
    mc_backup_ring ring;
    bool retired; /* told RETIRED: sent on while the process still lives */
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

static struct engine_new_home *find_home(mc_engine *e, const mc_address *a)
{
    for (size_t i = e->nhomes; i-- > 0;)
        if (mc_address_equal(&e->homes[i]->dead, a))
            return e->homes[i];
    return NULL;
}

static void note(mc_engine *e, const mc_address *a, bool retired)
{
    struct engine_new_home *h = malloc(sizeof *h);
    if (!h) {
        char t[MC_ADDRESS_STRLEN];
        MC_ERROR("out of memory keeping the backup ring of %s's death",
                 mc_address_format(a, t, sizeof t));
        return;
    }
    h->dead = *a;
    h->ring = *mc_server_backup_ring(e->server);
    h->retired = retired;
    if (e->nhomes == NEW_HOMES_MAX) {
        free(e->homes[0]);
        memmove(&e->homes[0], &e->homes[1], (NEW_HOMES_MAX - 1) * sizeof e->homes[0]);
        e->nhomes--;
    }
    e->homes[e->nhomes++] = h;
}

void engine_note_new_homes(mc_engine *e, const char *addr)
{
    mc_address a;
    if (mc_address_parse(addr, &a) != MC_OK)
        return;
    struct engine_new_home *h = find_home(e, &a);
    if (h && h->retired)
        return; /* a retired baseapp stopped: its bases went by the ring it told us of */
    engine_forget_new_home(e, addr);
    note(e, &a, false);
}

bool engine_note_retired(mc_engine *e, const mc_address *addr)
{
    struct engine_new_home *h = find_home(e, addr);
    if (h && h->retired) {
        /* told again (its handover started over after a new home died): the ring of now */
        h->ring = *mc_server_backup_ring(e->server);
        return false;
    }
    char a[MC_ADDRESS_STRLEN];
    mc_address_format(addr, a, sizeof a);
    engine_forget_new_home(e, a);
    note(e, addr, true);
    return true;
}

void mc_engine_route_retired_here(mc_engine *e, const mc_address *retired)
{
    struct engine_new_home *h = find_home(e, retired);
    if (h && h->retired)
        return;
    char a[MC_ADDRESS_STRLEN];
    mc_address_format(retired, a, sizeof a);
    engine_forget_new_home(e, a);
    note(e, retired, true);
    h = find_home(e, retired);
    if (h) { /* a ring of us alone: every base of it picks us */
        mc_backup_ring_clear(&h->ring);
        h->ring.version = 1;
        h->ring.n = 1;
        h->ring.members[0] = *mc_engine_address(e);
    }
}

bool mc_engine_new_home(mc_engine *e, const mc_address *dead, int32_t id, mc_address *out)
{
    struct engine_new_home *h = find_home(e, dead);
    return h && mc_backup_ring_pick(&h->ring, id, dead, out);
}

bool engine_redirect(mc_engine *e, const mc_mailbox_ref *to, mc_address *addr)
{
    if (!e->nhomes)
        return false;
    if (!engine_peer_dead(e, addr)) {
        struct engine_new_home *h = find_home(e, addr);
        if (!h || !h->retired)
            return false;
    }
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
