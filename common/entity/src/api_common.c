/* Engine API functions both roles share (the rest is the role's: baseapp/, cellapp/). */
#include "engine_internal.h"

void *mc_engine_op_self(const mc_call_ctx *call)
{
    mc_engine *e = mc_engine_of(call);
    if (!e || mc_mailbox_ref_is_none(&call->self))
        return NULL;
    mc_entity *ent = mc_engine_find(e, call->self.id);
    return ent && !ent->in_reap ? ent->props : NULL;
}

double mc_engine_op_time(const mc_call_ctx *call)
{
    mc_engine *e = mc_engine_of(call);
    return e ? (double)(mc_clock_now_us() - e->started_at) / 1e6 : 0.0;
}
