/* The requests this engine waits on (to a peer through mercury, or to itself): their
 * records in the pending list, delivering an outcome exactly once, and failing at once those
 * waiting on a process the manager declared dead. */
#include "engine_internal.h"
#include "common/log.h"

#include <stdlib.h>

void engine_pending_unlink(mc_pending *p)
{
    if (p->next) {
        p->prev->next = p->next;
        p->next->prev = p->prev;
    }
    p->next = p->prev = NULL;
}

mc_pending *engine_pending_new(mc_engine *e, const mc_address *dest, bool local,
                               mc_engine_done_fn fn, void *ctx)
{
    mc_pending *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->e = e;
    p->dest = *dest;
    p->local = local;
    p->fn = fn;
    p->ctx = ctx;
    p->next = e->pending.next;
    p->prev = &e->pending;
    e->pending.next->prev = p;
    e->pending.next = p;
    e->npending++;
    return p;
}

/* Deliver the outcome once. */
void engine_pending_finish(mc_pending *p, int status, mc_istream *payload)
{
    if (p->done || !p->e)
        return;
    p->done = true;
    mc_engine *e = p->e;
    if (e->npending)
        e->npending--;
    if (status == MC_CALL_OK)
        e->st.replies_received++;
    p->fn(e, p->ctx, status, payload);
}

void engine_fail_pending_to(mc_engine *e, const char *addr)
{
    mc_address a;
    if (mc_address_parse(addr, &a) != MC_OK)
        return;
    size_t failed = 0;
    /* A finishing callback may add or finish others: restart after each. */
    for (bool again = true; again;) {
        again = false;
        for (mc_pending *p = e->pending.next; p != &e->pending; p = p->next) {
            if (p->done || p->local || !mc_address_equal(&p->dest, &a))
                continue;
            failed++;
            engine_pending_finish(p, MC_CALL_ERR_PROCESS_DEAD, NULL);
            again = true;
            break;
        }
    }
    if (failed)
        MC_INFO("%zu calls waiting on %s failed: the process is dead", failed, addr);
}
