/* Refusing a call or message: counted by reason, logged (rate-limited), and answered with
 * the status when it was a request. */
#include "engine_internal.h"
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const refuse_names[MC_REFUSE_COUNT] = {
    "malformed",  "noEntity",  "wrongType",  "wrongPart",    "noMethod",
    "badArgs",    "handler",   "destroyed",  "noClient",     "noCell",
    "queueFull",  "notService", "processDead",
};

const char *mc_refuse_reason_name(mc_refuse_reason r)
{
    return r < MC_REFUSE_COUNT ? refuse_names[r] : "?";
}

void mc_engine_count_refused(mc_engine *e, mc_refuse_reason r)
{
    e->st.refused[r]++;
    e->st.refused_total++;
}

void mc_engine_refuse(mc_engine *e, const mc_origin *o, mc_refuse_reason r, int status,
                      const char *fmt, ...)
{
    mc_engine_count_refused(e, r);
    char why[MC_REASON_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (engine_log_allowed(e->st.refused[r])) {
        char a[MC_ADDRESS_STRLEN];
        MC_WARNING("call from %s refused (%s): %s (%llu refused for this reason)",
                   o->local ? "this process" : mc_address_format(&o->addr, a, sizeof a),
                   refuse_names[r], why, (unsigned long long)e->st.refused[r]);
    }
    mc_engine_reply_status(e, o, status, why);
}
