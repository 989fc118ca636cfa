/* Channels: reliable, ordered delivery of bundles between this nub and one peer.
 *
 * A channel numbers its reliable packets with 28-bit sequence numbers starting at a random
 * value (so only a peer that receives its packets can acknowledge them), keeps at most
 * `window` of them unacknowledged (defaults: internal 4096, external 256, indexed 512) and
 * queues the rest in a bounded overflow queue. The peer acknowledges cumulatively (next
 * expected sequence) and selectively (up to 255 sequence numbers per packet); lost packets
 * are resent as soon as a packet sent after them is acknowledged, or when they are older
 * than max(2 x RTT, minimum resend delay) and acks have stopped; a channel with at most 32
 * packets unacked (interactive traffic) also resends a packet older than about 1.125 x RTT
 * while its peer is heard from, and a packet lost twice goes as two copies at its second
 * resend (docs/PROTOCOL.md, "Resending"). A peer that opened a channel and has
 * acknowledged nothing yet gets one resend per packet it sent and never more bytes than it
 * sent: what does not fit (a large first reply, say) waits until the peer acknowledges an
 * empty probe packet. The
 * receiving side buffers out-of-order packets
 * and releases them in order; duplicates and packets beyond its window are dropped (and
 * counted). Messages spanning packets are reassembled and delivered whole.
 *
 * Channels are created by mc_nub_channel (or by the nub when a peer opens one, if the nub
 * accepts channels) and belong to the nub. A channel that receives nothing for its
 * inactivity timeout is reported dead to its dead handler and then freed by the nub; a
 * condemned channel finishes sending what is queued, then is freed. Never keep a channel
 * pointer past its dead handler or mc_channel_condemn.
 *
 * Indexed channels (mc_nub_indexed_channel) carry a 32-bit channel id and a version in every
 * packet, so an entity channel can move between processes: mc_channel_reset starts a new
 * version, and the receiver drops packets of older versions.
 *
 * Irregular channels (the default) have their resends checked on the nub's timer; regular
 * channels (mc_channel_set_irregular(ch, false)) are expected to send every tick and also
 * have resends checked on each mc_channel_send (the timer checks them too).
 *
 * A channel's partly filled packet goes out on mc_channel_send, or at the latest on the
 * nub's next timer tick when no message is open.
 */
#ifndef MC_MERCURY_CHANNEL_H
#define MC_MERCURY_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"
#include "mercury/address.h"
#include "mercury/bundle.h"
#include "mercury/interface.h"
#include "mercury/request.h"

typedef enum {
    MC_CHANNEL_INTERNAL = 0, /* server to server: big window (4096), checked resends */
    MC_CHANNEL_EXTERNAL = 1, /* to a client: window 256, lost packets may ride as piggybacks */
} mc_channel_traits;

#define MC_WINDOW_INTERNAL 4096u
#define MC_WINDOW_EXTERNAL 256u
#define MC_WINDOW_INDEXED 512u
#define MC_WINDOW_MAX 16384u

typedef enum {
    MC_CHANNEL_DEATH_INACTIVITY = 0, /* nothing received for the inactivity timeout */
    MC_CHANNEL_DEATH_OVERFLOW = 1,   /* the overflow queue hit its bound */
    MC_CHANNEL_DEATH_NUB_FREED = 2,  /* the nub is being freed */
    MC_CHANNEL_DEATH_PEER_RESTARTED = 3, /* the peer opened a new channel from the same
                                            address (it restarted): this one is replaced; or
                                            the two sides belong to different incarnations
                                            (the peer keeps acknowledging packets this side
                                            never sent) */
    MC_CHANNEL_DEATH_MESSAGE_TOO_LARGE = 4, /* the peer sent a message over the nub's
                                               max_message_size: an ordered stream cannot
                                               skip it */
    MC_CHANNEL_DEATH_CLOSED = 5,            /* its owner closed it (mc_nub_close_channel) */
} mc_channel_death;

const char *mc_channel_death_name(mc_channel_death reason);

/* Called when a channel dies. The channel is freed by the nub right after it returns;
 * pending requests on it get MC_REPLY_CHANNEL_DEAD first. Inside the handler the channel
 * may be read (address, user data, stats), but it is already dead: sending, requesting
 * or replying on it returns MC_ERR_DEAD (so nothing can refer to it once it is freed). */
typedef void (*mc_channel_dead_handler)(void *ctx, mc_channel *ch, mc_channel_death reason);

/* Live numbers of one channel. */
typedef struct {
    uint32_t window;           /* send window size in packets */
    uint32_t unacked;          /* reliable packets sent and not yet acknowledged */
    uint32_t overflow;         /* packets waiting for room in the window */
    uint32_t bundle_packets;   /* packets in the bundle not yet sent */
    uint32_t recv_buffered;    /* out-of-order packets held by the receive window */
    mc_time_us rtt_us;         /* smoothed round-trip time (0 before the first sample) */
    mc_time_us rtt_var_us;     /* its smoothed deviation */
    uint64_t packets_sent;     /* first transmissions */
    uint64_t packets_resent;   /* retransmissions (including piggybacks) */
    uint64_t packets_received; /* accepted packets (duplicates excluded) */
    uint64_t messages_received;
    uint64_t duplicates;       /* duplicate packets dropped */
    uint64_t out_of_window;    /* packets beyond the receive window dropped */
    uint64_t out_of_order;     /* packets that arrived ahead of a missing one (buffered) */
    uint32_t first_send_seq;   /* random first sequence number of this incarnation/version */
    uint32_t next_send_seq;
    uint32_t next_recv_seq;    /* cumulative ack value we send (0 until the peer's first
                                  sequence number is known) */
} mc_channel_stats;

/* The channel to addr, created if it does not exist (traits apply only on creation).
 * A condemned channel to addr is replaced by a new one (its unsent and unacked data is
 * dropped). NULL on allocation failure or if the address is the nub's own. */
mc_channel *mc_nub_channel(mc_nub *nub, const mc_address *addr, mc_channel_traits traits);
/* The existing (non-indexed) channel to addr, or NULL. */
mc_channel *mc_nub_find_channel(mc_nub *nub, const mc_address *addr);
/* Close the (non-indexed) channel to addr at once, unsent data and all: the next send to addr
 * opens a new channel (a new incarnation, as to a restarted peer). Its dead handler hears
 * MC_CHANNEL_DEATH_CLOSED from the nub's next timer tick, its requests fail. Safe inside a
 * handler. MC_OK, or MC_ERR_DEAD when there is none (or it is dead already). */
int mc_nub_close_channel(mc_nub *nub, const mc_address *addr);
/* The indexed channel `id` (created if needed, sending to addr). An existing channel's
 * address is updated to addr. A condemned one is replaced by a new channel with the next
 * version (its queued data is dropped). */
mc_channel *mc_nub_indexed_channel(mc_nub *nub, const mc_address *addr, uint32_t id,
                                   mc_channel_traits traits);
/* The existing indexed channel id (not condemned), or NULL. */
mc_channel *mc_nub_find_indexed_channel(mc_nub *nub, uint32_t id);

/* The channel's own bundle (write messages into it, then mc_channel_send). */
mc_bundle *mc_channel_bundle(mc_channel *ch);
/* Send everything in the channel's bundle now (reliable packets enter the window or the
 * overflow queue) and flush the socket queue. MC_ERR_OVERFLOW if the overflow bound was hit
 * (the channel then dies with MC_CHANNEL_DEATH_OVERFLOW from the nub's next timer tick). */
int mc_channel_send(mc_channel *ch);
/* Add one reliable (driver) message to the channel's bundle. Full packets go out
 * immediately; call mc_channel_send (or let the nub's timer do it within one tick) for the
 * rest. */
int mc_channel_send_message(mc_channel *ch, const mc_message_def *def, const void *data,
                            size_t n);
/* Add a request to the bundle and send the bundle. */
int mc_channel_request(mc_channel *ch, const mc_message_def *def, const void *data, size_t n,
                       mc_reply_handler handler, void *ctx, mc_time_us timeout_us);

/* Stop using the channel: its bundle is sent, queued and unacked packets are still delivered
 * (up to the inactivity timeout), then the nub frees it. The pointer must not be used after
 * this call. */
void mc_channel_condemn(mc_channel *ch);
/* Indexed channels: forget all send and receive state and start version+1. Unsent and
 * unacked data is discarded. Returns MC_ERR_INVALID on a non-indexed channel. */
int mc_channel_reset(mc_channel *ch);

void mc_channel_set_dead_handler(mc_channel *ch, mc_channel_dead_handler fn, void *ctx);
void mc_channel_set_irregular(mc_channel *ch, bool irregular);
/* Send window in packets (1..MC_WINDOW_MAX); applies to sending and receiving. */
int mc_channel_set_window(mc_channel *ch, uint32_t packets);
void mc_channel_set_inactivity_timeout(mc_channel *ch, mc_time_us timeout_us);
void mc_channel_set_user_data(mc_channel *ch, void *data);
void *mc_channel_user_data(const mc_channel *ch);

const mc_address *mc_channel_address(const mc_channel *ch);
mc_channel_traits mc_channel_get_traits(const mc_channel *ch);
mc_nub *mc_channel_nub(const mc_channel *ch);
bool mc_channel_is_indexed(const mc_channel *ch);
uint32_t mc_channel_id(const mc_channel *ch);
uint32_t mc_channel_version(const mc_channel *ch);

/* Reliable packets sent and not yet acknowledged. */
uint32_t mc_channel_unacked(const mc_channel *ch);
/* Packets waiting in the overflow queue (window full). Pace a sender by this. */
uint32_t mc_channel_overflow(const mc_channel *ch);
/* True when nothing is unacked, queued or held in the bundle. */
bool mc_channel_idle(const mc_channel *ch);
void mc_channel_get_stats(const mc_channel *ch, mc_channel_stats *out);

#endif
