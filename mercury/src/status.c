/* Names of status codes and enums for logs and watchers. */
#include "mercury/channel.h"
#include "mercury/nub.h"
#include "mercury/request.h"
#include "mercury/status.h"
#include "internal.h"

const char *mc_status_name(int status)
{
    switch (status) {
    case MC_OK: return "ok";
    case MC_ERR_INVALID: return "invalid";
    case MC_ERR_NO_MEMORY: return "no-memory";
    case MC_ERR_SOCKET: return "socket";
    case MC_ERR_STATE: return "state";
    case MC_ERR_TOO_LARGE: return "too-large";
    case MC_ERR_OVERFLOW: return "overflow";
    case MC_ERR_DEAD: return "dead";
    case MC_ERR_ADDRESS: return "address";
    case MC_ERR_DROPPED: return "dropped";
    default: return "unknown";
    }
}

const char *mc_reply_status_name(mc_reply_status status)
{
    switch (status) {
    case MC_REPLY_OK: return "ok";
    case MC_REPLY_TIMEOUT: return "timeout";
    case MC_REPLY_CHANNEL_DEAD: return "channel-dead";
    case MC_REPLY_CANCELLED: return "cancelled";
    }
    return "unknown";
}

const char *mc_channel_death_name(mc_channel_death reason)
{
    switch (reason) {
    case MC_CHANNEL_DEATH_INACTIVITY: return "inactivity";
    case MC_CHANNEL_DEATH_OVERFLOW: return "overflow";
    case MC_CHANNEL_DEATH_NUB_FREED: return "nub-freed";
    case MC_CHANNEL_DEATH_PEER_RESTARTED: return "peer-restarted";
    case MC_CHANNEL_DEATH_MESSAGE_TOO_LARGE: return "message-too-large";
    case MC_CHANNEL_DEATH_CLOSED: return "closed";
    }
    return "unknown";
}

const char *mc_drop_reason_name(mc_drop_reason reason)
{
    static const char *const names[MC_DROP_REASON_COUNT] = {
        [MC_DROP_TOO_SHORT] = "tooShort",
        [MC_DROP_TOO_LONG] = "tooLong",
        [MC_DROP_BAD_FLAGS] = "badFlags",
        [MC_DROP_BAD_FOOTER] = "badFooter",
        [MC_DROP_BAD_CHECKSUM] = "badChecksum",
        [MC_DROP_BAD_AUTH] = "badAuth",
        [MC_DROP_NOT_PEER] = "notPeer",
        [MC_DROP_BAD_ACKS] = "badAcks",
        [MC_DROP_BAD_MESSAGE] = "badMessage",
        [MC_DROP_UNKNOWN_MESSAGE] = "unknownMessage",
        [MC_DROP_NO_CHANNEL] = "noChannel",
        [MC_DROP_DUPLICATE] = "duplicate",
        [MC_DROP_OUT_OF_WINDOW] = "outOfWindow",
        [MC_DROP_STALE_VERSION] = "staleVersion",
        [MC_DROP_FRAGMENT] = "fragment",
        [MC_DROP_LATE_REPLY] = "lateReply",
        [MC_DROP_CHANNEL_LIMIT] = "channelLimit",
        [MC_DROP_MESSAGE_TOO_LARGE] = "messageTooLarge",
        [MC_DROP_REASSEMBLY_BUDGET] = "reassemblyBudget",
    };
    if ((unsigned)reason >= MC_DROP_REASON_COUNT)
        return "unknown";
    return names[reason];
}

void mc_nub_count_drop(mc_nub *nub, mc_drop_reason why, const mc_address *src)
{
    if ((unsigned)why >= MC_DROP_REASON_COUNT)
        why = MC_DROP_BAD_FOOTER;
    nub->stats.drops[why]++;
    nub->stats.dropped_total++;
    if (why != MC_DROP_DUPLICATE && why != MC_DROP_OUT_OF_WINDOW &&
        why != MC_DROP_REASSEMBLY_BUDGET && mc_log_enabled(MC_LOG_DEBUG)) {
        char a[MC_ADDRESS_STRLEN];
        MC_DEBUG("dropped packet from %s: %s", mc_address_format(src, a, sizeof a),
                 mc_drop_reason_name(why));
    }
}
