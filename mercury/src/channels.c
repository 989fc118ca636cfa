/* The nub's channel table: adding a channel (by address, or by index for indexed channels),
 * removing it, killing it (its requests fail, its dead handler runs) and retiring it (out of
 * the lookups now; the nub's timer reports and frees it). */
#include <stdlib.h>

#include "internal.h"

bool mc_nub_add_channel(mc_nub *nub, mc_channel *ch)
{
    if (nub->nchannels == nub->channels_cap) {
        size_t ncap = nub->channels_cap ? nub->channels_cap * 2 : 16;
        mc_channel **n = realloc(nub->channels, ncap * sizeof(*n));
        if (!n)
            return false;
        nub->channels = n;
        nub->channels_cap = ncap;
    }
    bool mapped = ch->indexed ? mc_map_put(&nub->by_index, ch->id, 0, ch)
                              : mc_map_put(&nub->by_addr, mc_address_key(&ch->addr), 0, ch);
    if (!mapped)
        return false;
    ch->index = nub->nchannels;
    nub->channels[nub->nchannels++] = ch;
    nub->stats.channels_created++;
    nub->stats.channels = nub->nchannels;
    if (nub->watchers)
        mc_channel_register_watchers(ch);
    return true;
}

void mc_nub_remove_channel(mc_nub *nub, mc_channel *ch)
{
    mc_channel_unregister_watchers(ch);
    if (ch->accepted) {
        ch->accepted = false;
        nub->accepted_channels--;
    }
    size_t i = ch->index;
    if (i < nub->nchannels && nub->channels[i] == ch) {
        nub->channels[i] = nub->channels[--nub->nchannels];
        nub->channels[i]->index = i;
    }
    if (ch->indexed) {
        if (mc_map_get(&nub->by_index, ch->id, 0) == ch)
            mc_map_remove(&nub->by_index, ch->id, 0);
    } else if (mc_map_get(&nub->by_addr, mc_address_key(&ch->addr), 0) == ch) {
        mc_map_remove(&nub->by_addr, mc_address_key(&ch->addr), 0);
    }
    /* drop it from the ack and progress lists */
    for (mc_channel **pp = &nub->ack_list; *pp; pp = &(*pp)->ack_next) {
        if (*pp == ch) {
            *pp = ch->ack_next;
            break;
        }
    }
    for (mc_channel **pp = &nub->progress_list; *pp; pp = &(*pp)->progress_next) {
        if (*pp == ch) {
            *pp = ch->progress_next;
            break;
        }
    }
    nub->stats.channels = nub->nchannels;
}

static void kill_channel(mc_nub *nub, mc_channel *ch, mc_channel_death reason, bool report)
{
    /* Marked dead before any handler runs: reply and dead handlers may still look at the
     * channel, but nothing new (a request, a message) can be started on it, so nothing
     * can hold on to it once it is freed below. */
    if (!ch->dead) {
        ch->dead = true;
        ch->death_reason = reason;
    }
    mc_nub_remove_channel(nub, ch);
    nub->stats.channels_dead++;
    mc_reply_status st =
        reason == MC_CHANNEL_DEATH_NUB_FREED ? MC_REPLY_CANCELLED : MC_REPLY_CHANNEL_DEAD;
    mc_request_fail_channel(nub, ch, st);
    if (report) {
        mc_channel_dead_handler fn = ch->dead_fn ? ch->dead_fn : nub->dead_fn;
        void *ctx = ch->dead_fn ? ch->dead_ctx : nub->dead_ctx;
        if (fn)
            fn(ctx, ch, reason);
    }
    /* defence in depth: no request may outlive the channel it names */
    mc_request_fail_channel(nub, ch, st);
    mc_channel_destroy(ch);
}

void mc_nub_kill_channel(mc_nub *nub, mc_channel *ch, mc_channel_death reason)
{
    kill_channel(nub, ch, reason, !ch->condemned);
}

void mc_nub_retire_channel(mc_nub *nub, mc_channel *ch, mc_channel_death reason)
{
    /* Detach it from lookups now; the timer reports and frees it (it may be in use further
     * up the stack, e.g. by the receive path that called a handler). */
    mc_channel_unregister_watchers(ch);
    if (ch->indexed) {
        if (mc_map_get(&nub->by_index, ch->id, 0) == ch)
            mc_map_remove(&nub->by_index, ch->id, 0);
    } else if (mc_map_get(&nub->by_addr, mc_address_key(&ch->addr), 0) == ch) {
        mc_map_remove(&nub->by_addr, mc_address_key(&ch->addr), 0);
    }
    if (!ch->dead) {
        ch->dead = true;
        ch->death_reason = reason;
    }
}
