/* Bundles: the unit of sending. A bundle is a chain of packets (each at most
 * MC_PACKET_MAX_SIZE bytes on the wire) into which messages are written back to back. A
 * message may span packets; such packets are sent as one fragment group and delivered whole.
 *
 * Every channel owns a bundle (mc_channel_bundle). Whenever a packet of a channel's bundle is
 * full (and no message spans out of it) it is sent at once, so a tight loop of
 * mc_bundle_add_message / mc_channel_send_message never builds up more than one packet; the
 * last, partly filled packet goes out on mc_channel_send. Off-channel bundles (mc_bundle_new)
 * keep their packets until mc_nub_send_bundle.
 *
 * Writing a message:
 *     mc_bundle_start_message(b, def, MC_RELIABLE_DRIVER);
 *     mc_bundle_write(b, bytes, n);  ... (any number of writes, any sizes)
 *     mc_bundle_end_message(b);
 * or in one call: mc_bundle_add_message(b, def, MC_RELIABLE_DRIVER, bytes, n).
 *
 * A write error (message over MC_MAX_MESSAGE_SIZE, no memory, fixed-length mismatch at end)
 * makes mc_bundle_end_message fail and removes the whole message from the bundle; earlier
 * messages are unaffected.
 *
 * Reliability per message (as in BigWorld):
 *   MC_RELIABLE_NO        - may be lost;
 *   MC_RELIABLE_DRIVER    - makes its packet reliable (resent until acked, ordered);
 *   MC_RELIABLE_PASSENGER - reliable only if its packet is reliable anyway;
 *   MC_RELIABLE_CRITICAL  - like driver; the channel counts unacked critical packets.
 * A packet is sent reliably when it holds a driver or critical message, or when it is part
 * of a fragment group on a channel. Requests and replies are always drivers.
 */
#ifndef MC_MERCURY_BUNDLE_H
#define MC_MERCURY_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"
#include "mercury/address.h"
#include "mercury/interface.h"
#include "mercury/request.h"

/* Largest datagram Mercury sends or accepts (Ethernet MTU minus IP and UDP headers). A nub
 * may be told to send smaller ones (mc_nub_set_max_packet), down to MC_PACKET_MIN_LIMIT. */
#define MC_PACKET_MAX_SIZE 1472u
#define MC_PACKET_MIN_LIMIT 1200u

typedef enum {
    MC_RELIABLE_NO = 0,
    MC_RELIABLE_DRIVER = 1,
    MC_RELIABLE_PASSENGER = 2,
    MC_RELIABLE_CRITICAL = 3,
} mc_reliability;

typedef struct mc_bundle mc_bundle;

/* A new, empty off-channel bundle for nub. NULL on allocation failure. */
mc_bundle *mc_bundle_new(mc_nub *nub);
/* Free an off-channel bundle (never a channel's own bundle). */
void mc_bundle_free(mc_bundle *b);
/* Throw away everything written and not yet sent. */
void mc_bundle_clear(mc_bundle *b);

/* Begin a message. Fails with MC_ERR_STATE if a message is already open. */
int mc_bundle_start_message(mc_bundle *b, const mc_message_def *def, mc_reliability rel);
/* Begin a request (always reliable-driver). `handler` is called exactly once (see
 * request.h); timeout_us 0 means the nub's default (5 s). MC_ERR_DEAD (handler never
 * called) on the bundle of a dead channel. */
int mc_bundle_start_request(mc_bundle *b, const mc_message_def *def, mc_reply_handler handler,
                            void *ctx, mc_time_us timeout_us);
/* Begin the reply to request `reply_id` (write the reply payload, then end the message). */
int mc_bundle_start_reply(mc_bundle *b, uint32_t reply_id);

/* Append data to the open message (addBlob: any size, spans packets as needed). */
int mc_bundle_write(mc_bundle *b, const void *data, size_t n);
int mc_bundle_write_u8(mc_bundle *b, uint8_t v);
int mc_bundle_write_u16(mc_bundle *b, uint16_t v);
int mc_bundle_write_u32(mc_bundle *b, uint32_t v);
int mc_bundle_write_u64(mc_bundle *b, uint64_t v);
/* Packed length (common/stream.h encoding) then the bytes. */
int mc_bundle_write_blob(mc_bundle *b, const void *data, size_t n);
int mc_bundle_write_string(mc_bundle *b, const char *s);

/* Finish the open message (writes its length field; oversize case handled). */
int mc_bundle_end_message(mc_bundle *b);

/* start + write + end in one call (fastest path for small messages). */
int mc_bundle_add_message(mc_bundle *b, const mc_message_def *def, mc_reliability rel,
                          const void *data, size_t n);

/* Is a message open? */
bool mc_bundle_in_message(const mc_bundle *b);
/* Packets held in the bundle (including the one being filled, if it has content). */
size_t mc_bundle_packet_count(const mc_bundle *b);
/* Bytes of messages held (not yet sent). */
size_t mc_bundle_size(const mc_bundle *b);
/* Number of complete messages held (not yet sent). */
size_t mc_bundle_message_count(const mc_bundle *b);

#endif
