/* Requests and replies.
 *
 * A request is a message written with mc_bundle_start_request (or mc_channel_request): the
 * nub gives it a 32-bit reply id, remembers the reply handler, and sends the id in the
 * message header. The receiver's handler sees info->is_request and info->reply_id and answers
 * with mc_reply (or mc_bundle_start_reply); the answer travels as the reserved reply message
 * (id 0xFF) and the nub calls the waiting handler exactly once:
 *   - MC_REPLY_OK with the reply data,
 *   - MC_REPLY_TIMEOUT when no reply came within the timeout (default 5 s),
 *   - MC_REPLY_CHANNEL_DEAD when the channel the request went on died first,
 *   - MC_REPLY_CANCELLED when the nub is freed with the request still waiting.
 * A reply that arrives after its request timed out is dropped and counted.
 */
#ifndef MC_MERCURY_REQUEST_H
#define MC_MERCURY_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/stream.h"
#include "mercury/interface.h"

typedef enum {
    MC_REPLY_OK = 0,
    MC_REPLY_TIMEOUT = 1,
    MC_REPLY_CHANNEL_DEAD = 2,
    MC_REPLY_CANCELLED = 3,
} mc_reply_status;

const char *mc_reply_status_name(mc_reply_status status);

/* Called once per request. info and data are non-NULL only for MC_REPLY_OK; data is bounded
 * to the reply's payload (without the reply id). */
typedef void (*mc_reply_handler)(void *ctx, mc_reply_status status,
                                 const mc_message_info *info, mc_istream *data);

/* Answer a request from inside its handler (or later, with a copy of channel/source/reply_id:
 * see mc_reply_to). On a channel the reply is added to the channel's bundle and the bundle is
 * sent; off-channel it goes as a once-off reliable packet to info->source. */
int mc_reply(const mc_message_info *info, const void *data, size_t len);

/* The same without the handler's info: reply on `channel` if not NULL, else once-off
 * reliable to `dest`.
 *
 * Off-channel, a reply goes at once only to an address that has proven it receives what
 * this nub sends: a channel to it whose peer has acknowledged a reliable packet, or an
 * acknowledged probe (an empty reliable packet with an unpredictable sequence number, which
 * every nub acknowledges by itself) in the last 10 minutes. Otherwise the reply waits (MC_OK)
 * while a probe is sent (at most 3 times, 200 ms apart) and leaves when the probe is
 * acknowledged; if it never is, the reply is dropped and counted (repliesUnprovenDropped).
 * So a request with a spoofed source gets at most an ack and three 6-byte probes, each
 * smaller than the request. MC_ERR_OVERFLOW when 1024 replies (or 16 MiB) already wait. */
int mc_reply_to(mc_nub *nub, mc_channel *channel, const mc_address *dest, uint32_t reply_id,
                const void *data, size_t len);

#endif
