/* Per-client rate limits (client_limits.h). */
#include "client_limits.h"

bool client_bucket_take(client_bucket *b, double rate, double burst, mc_time_us now)
{
    if (!b->at)
        b->tokens = burst;
    else if (now > b->at)
        b->tokens += rate * (double)(now - b->at) / 1e6;
    if (b->tokens > burst)
        b->tokens = burst;
    if (now > b->at || !b->at)
        b->at = now ? now : 1;
    if (b->tokens < 1.0)
        return false;
    b->tokens -= 1.0;
    return true;
}

client_limit_verdict client_limit_move(const client_limits *l, client_limit_state *s,
                                       mc_time_us now)
{
    return client_bucket_take(&s->moves, l->moves_per_s, l->moves_per_s, now)
               ? CLIENT_LIMIT_OK
               : CLIENT_LIMIT_DROP;
}

client_limit_verdict client_limit_call(const client_limits *l, client_limit_state *s,
                                       mc_time_us now)
{
    if (client_bucket_take(&s->calls, l->calls_per_s, l->call_burst, now))
        return CLIENT_LIMIT_OK;
    if (!s->drops_since || now < s->drops_since || now - s->drops_since >= 1000000) {
        s->drops_since = now ? now : 1;
        s->drops = 0;
    }
    s->drops++;
    return s->drops > l->call_drops_to_kick ? CLIENT_LIMIT_KICK : CLIENT_LIMIT_DROP;
}
