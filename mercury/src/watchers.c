/* Publishing a nub's counters, rehearsal settings and per-channel numbers as watchers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void get_channels(void *ctx, mc_watch_value *out)
{
    out->as.u = ((mc_nub *)ctx)->nchannels;
}

static void get_pending(void *ctx, mc_watch_value *out)
{
    out->as.u = ((mc_nub *)ctx)->requests.count;
}

static void get_address(void *ctx, mc_watch_value *out)
{
    char a[MC_ADDRESS_STRLEN];
    mc_address_format(&((mc_nub *)ctx)->addr, a, sizeof a);
    out->as.s = strdup(a);
}

#define U32_FIELD(fname)                                                                    \
    static void get_##fname(void *ctx, mc_watch_value *out)                                 \
    {                                                                                       \
        out->as.u = ((mc_nub *)ctx)->reh.fname;                                             \
    }                                                                                       \
    static bool set_##fname(void *ctx, const mc_watch_value *v, char *why, size_t n)        \
    {                                                                                       \
        if (v->as.u > 60000) {                                                              \
            snprintf(why, n, "must be at most 60000 ms");                                   \
            return false;                                                                   \
        }                                                                                   \
        ((mc_nub *)ctx)->reh.fname = (uint32_t)v->as.u;                                     \
        return true;                                                                        \
    }
U32_FIELD(latency_ms)
U32_FIELD(jitter_ms)
U32_FIELD(reorder_ms)

#define PROB_FIELD(fname)                                                                   \
    static void get_##fname(void *ctx, mc_watch_value *out)                                 \
    {                                                                                       \
        out->as.f = ((mc_nub *)ctx)->reh.fname;                                             \
    }                                                                                       \
    static bool set_##fname(void *ctx, const mc_watch_value *v, char *why, size_t n)        \
    {                                                                                       \
        if (!(v->as.f >= 0.0 && v->as.f <= 1.0)) {                                          \
            snprintf(why, n, "must be a probability between 0 and 1");                     \
            return false;                                                                   \
        }                                                                                   \
        ((mc_nub *)ctx)->reh.fname = v->as.f;                                               \
        return true;                                                                        \
    }
PROB_FIELD(loss)
PROB_FIELD(duplicate)
PROB_FIELD(reorder)
PROB_FIELD(corrupt)

int mc_nub_register_watchers(mc_nub *nub, mc_watchers *w, const char *prefix)
{
    if (!nub || !w || !prefix || nub->watchers)
        return MC_ERR_INVALID;
    char p[MC_WATCH_MAX_PATH];
    int st = 0;
#define PATH(name) (snprintf(p, sizeof p, "%s/%s", prefix, name), p)
#define STAT(name, field)                                                                   \
    st |= mc_watch_add_uint(w, PATH(name), &nub->stats.field, MC_WATCH_READ_ONLY)
    STAT("packetsSent", packets_sent);
    STAT("bytesSent", bytes_sent);
    STAT("packetsReceived", packets_received);
    STAT("bytesReceived", bytes_received);
    STAT("messagesReceived", messages_received);
    STAT("resends", resends);
    STAT("piggybacks", piggybacks);
    STAT("onceOffResends", once_off_resends);
    STAT("onceOffRefused", once_off_refused);
    STAT("acksSent", acks_sent);
    STAT("probesSent", probes_sent);
    STAT("addressesProven", addresses_proven);
    STAT("repliesParked", replies_parked);
    STAT("repliesUnprovenDropped", replies_unproven_dropped);
    STAT("acksReceived", acks_received);
    STAT("sendRetries", send_retries);
    STAT("sendErrors", send_errors);
    STAT("requestsTimedOut", requests_timed_out);
    STAT("channelsCreated", channels_created);
    STAT("channelsDead", channels_dead);
    STAT("rehearsalDropped", rehearsal_dropped);
    STAT("droppedTotal", dropped_total);
    STAT("overflowPackets", overflow_packets);
    STAT("reassemblyBytes", reassembly_bytes);
    for (int i = 0; i < MC_DROP_REASON_COUNT; i++) {
        char name[64];
        snprintf(name, sizeof name, "drops/%s", mc_drop_reason_name((mc_drop_reason)i));
        st |= mc_watch_add_uint(w, PATH(name), &nub->stats.drops[i], MC_WATCH_READ_ONLY);
    }
    st |= mc_watch_add(w, PATH("channels/count"), MC_WATCH_UINT, MC_WATCH_READ_ONLY,
                       get_channels, NULL, nub);
    st |= mc_watch_add(w, PATH("pendingRequests"), MC_WATCH_UINT, MC_WATCH_READ_ONLY,
                       get_pending, NULL, nub);
    st |= mc_watch_add(w, PATH("address"), MC_WATCH_STRING, MC_WATCH_READ_ONLY, get_address,
                       NULL, nub);
#define RW(name, type, fn)                                                                  \
    st |= mc_watch_add(w, PATH(name), type, MC_WATCH_READ_WRITE, get_##fn, set_##fn, nub)
    RW("rehearsal/loss", MC_WATCH_FLOAT, loss);
    RW("rehearsal/duplicate", MC_WATCH_FLOAT, duplicate);
    RW("rehearsal/reorder", MC_WATCH_FLOAT, reorder);
    RW("rehearsal/corrupt", MC_WATCH_FLOAT, corrupt);
    RW("rehearsal/latencyMs", MC_WATCH_UINT, latency_ms);
    RW("rehearsal/jitterMs", MC_WATCH_UINT, jitter_ms);
    RW("rehearsal/reorderMs", MC_WATCH_UINT, reorder_ms);
#undef RW
#undef STAT
#undef PATH
    nub->watchers = w;
    nub->watch_prefix = strdup(prefix);
    if (st != 0 || !nub->watch_prefix) {
        MC_ERROR("nub: could not register watchers under '%s'", prefix);
        mc_watch_remove(w, prefix);
        free(nub->watch_prefix);
        nub->watch_prefix = NULL;
        nub->watchers = NULL;
        return MC_ERR_INVALID;
    }
    for (size_t i = 0; i < nub->nchannels; i++)
        mc_channel_register_watchers(nub->channels[i]);
    return MC_OK;
}

void mc_nub_unregister_watchers(mc_nub *nub)
{
    if (!nub || !nub->watchers)
        return;
    for (size_t i = 0; i < nub->nchannels; i++)
        nub->channels[i]->watchers_registered = false;
    mc_watch_remove(nub->watchers, nub->watch_prefix);
    free(nub->watch_prefix);
    nub->watch_prefix = NULL;
    nub->watchers = NULL;
}

#define CH_GET(name, expr)                                                                  \
    static void ch_##name(void *ctx, mc_watch_value *out)                                   \
    {                                                                                       \
        const mc_channel *ch = ctx;                                                         \
        out->as.u = (uint64_t)(expr);                                                       \
    }
CH_GET(rtt, ch->rtt)
CH_GET(window, ch->window)
CH_GET(unacked, ch->unacked)
CH_GET(overflow, ch->overflow)
CH_GET(sent, ch->packets_sent)
CH_GET(resent, ch->packets_resent)
CH_GET(received, ch->packets_received)
CH_GET(buffered, ch->recv_buffered)

void mc_channel_register_watchers(mc_channel *ch)
{
    mc_nub *nub = ch->nub;
    if (!nub->watchers || ch->watchers_registered)
        return;
    char a[MC_ADDRESS_STRLEN];
    mc_address_format(&ch->addr, a, sizeof a);
    if (ch->indexed)
        snprintf(ch->watch_name, sizeof ch->watch_name, "%s#%u", a, ch->id);
    else
        snprintf(ch->watch_name, sizeof ch->watch_name, "%s", a);
    char p[MC_WATCH_MAX_PATH];
    int st = 0;
#define ADD(leaf, fn)                                                                       \
    snprintf(p, sizeof p, "%s/channels/%s/%s", nub->watch_prefix, ch->watch_name, leaf);    \
    st |= mc_watch_add(nub->watchers, p, MC_WATCH_UINT, MC_WATCH_READ_ONLY, ch_##fn, NULL, ch)
    ADD("rttUs", rtt);
    ADD("window", window);
    ADD("unacked", unacked);
    ADD("overflow", overflow);
    ADD("sent", sent);
    ADD("resent", resent);
    ADD("received", received);
    ADD("buffered", buffered);
#undef ADD
    ch->watchers_registered = true;
    if (st != 0)
        MC_WARNING("channel %s: some watchers could not be registered", ch->watch_name);
}

void mc_channel_unregister_watchers(mc_channel *ch)
{
    mc_nub *nub = ch->nub;
    if (!nub->watchers || !ch->watchers_registered)
        return;
    char p[MC_WATCH_MAX_PATH];
    snprintf(p, sizeof p, "%s/channels/%s", nub->watch_prefix, ch->watch_name);
    mc_watch_remove(nub->watchers, p);
    ch->watchers_registered = false;
}
