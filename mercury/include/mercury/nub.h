/* The nub: one UDP socket bound to an address, driven by a libevent event_base.
 *
 * It reads every datagram ready on the socket per wake-up (recvmmsg), parses and checks
 * each packet, routes it to its channel (or handles it off-channel), dispatches messages to
 * the handlers of its interface, and sends queued datagrams in batches (sendmmsg), retrying
 * on EAGAIN/ENOBUFS from its timer without ever blocking the loop. A periodic timer (tick)
 * runs resend checks, once-off resends, request timeouts, keepalives, inactivity checks,
 * expiry of stale off-channel fragments and rehearsal delays.
 *
 * Everything is per nub: two nubs on one event_base in one process are independent.
 * Single-threaded: call a nub only from the thread running its event_base.
 *
 * Message, reply and channel handlers may send, reply, request, condemn or reset channels
 * and create other nubs; they must not free the nub that called them.
 */
#ifndef MC_MERCURY_NUB_H
#define MC_MERCURY_NUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"
#include "common/watcher.h"
#include "mercury/address.h"
#include "mercury/auth.h"
#include "mercury/bundle.h"
#include "mercury/channel.h"
#include "mercury/interface.h"
#include "mercury/request.h"
#include "mercury/status.h"

struct event_base;

/* Rehearsing bad networks: applied to every datagram this nub sends. Probabilities are
 * 0..1; latency delays every datagram by latency_ms plus a uniform 0..jitter_ms;
 * reorder delays the chosen datagrams by an extra 1..reorder_ms (default 20) so later ones
 * overtake them; corrupt flips 1..4 random bytes. Random choices use the nub's own PRNG
 * (seeded by rehearsal_seed), never global state. */
typedef struct {
    double loss;
    double duplicate;
    double reorder;
    double corrupt;
    uint32_t latency_ms;
    uint32_t jitter_ms;
    uint32_t reorder_ms;
} mc_rehearsal;

typedef struct {
    const char *bind;             /* "ip:port" (port 0 = ephemeral); default "127.0.0.1:0" */
    const mc_interface *iface;    /* messages this nub handles; NULL = none */
    void *handler_ctx;            /* passed to every message handler */
    bool checksums;               /* add a checksum footer and require it on receipt */
    bool accept_channels;         /* create channels for peers that open one (default true) */
    mc_channel_traits accept_traits; /* traits of such channels (default internal) */
    uint32_t socket_buffer_bytes; /* SO_RCVBUF/SO_SNDBUF request (default 16 MiB; capped
                                     by the system unless privileged) */
    mc_time_us tick_us;           /* timer period (default 5 ms) */
    mc_time_us min_resend_delay_us;    /* default 20 ms */
    mc_time_us request_timeout_us;     /* default 5 s */
    mc_time_us inactivity_timeout_us;  /* default 60 s */
    mc_time_us keepalive_interval_us;  /* idle channels send a keepalive; default 1 s */
    uint32_t max_overflow_packets;     /* per-channel overflow bound (default 262144) */
    uint32_t max_channels;             /* peers may open channels only while fewer than
                                          this many channels opened by peers are live
                                          (default 1024; each costs ~230 KB with the
                                          internal window, ~30 KB indexed; channels this
                                          nub opens do not count). Refused packets count
                                          as drops/channelLimit. */
    uint32_t max_message_size;         /* largest message accepted (default and upper bound
                                          MC_MAX_MESSAGE_SIZE; values below 1472 are raised
                                          to 1472). On a channel, a larger message (or a
                                          fragment group over max_message_size + 64 KiB)
                                          kills the channel with
                                          MC_CHANNEL_DEATH_MESSAGE_TOO_LARGE; off-channel it
                                          is dropped. Counted as drops/messageTooLarge. */
    uint64_t max_reassembly_bytes;     /* bytes all channels together may hold in messages
                                          being reassembled, including out-of-order fragment
                                          packets (default 256 MiB). A fragment packet that
                                          would pass it is not accepted (not acknowledged:
                                          the sender resends it) and counts as
                                          drops/reassemblyBudget, except on the channel whose
                                          reassembly started first, which always continues. */
    mc_rehearsal rehearsal;
    uint64_t rehearsal_seed;           /* 0 = derived from the clock and port */
    bool authenticate;                 /* tag every datagram sent with auth_secret and drop
                                          every datagram received without a valid tag
                                          (mercury/auth.h): internal nubs of a cluster.
                                          Packets are then limited to 1472 - 28 bytes. The
                                          nub keeps only derived keys, never the secret. */
    uint8_t auth_secret[MC_AUTH_SECRET_BYTES];
    bool auth_portable;                /* tag with ChaCha20-Poly1305 even where AES-GCM is
                                          available (every host can verify it) */
} mc_nub_config;

/* Counters of a nub (all monotonic except where noted). */
typedef enum {
    MC_DROP_TOO_SHORT = 0,   /* fewer than 2 bytes */
    MC_DROP_TOO_LONG,        /* larger than MC_PACKET_MAX_SIZE */
    MC_DROP_BAD_FLAGS,       /* unknown flag bits or impossible combination */
    MC_DROP_BAD_FOOTER,      /* footers larger than the packet, bad values */
    MC_DROP_BAD_CHECKSUM,    /* checksum mismatch, or missing while required */
    MC_DROP_BAD_ACKS,        /* impossible ack count or acked sequence */
    MC_DROP_BAD_MESSAGE,     /* length past the end, bad request chain, bad oversize */
    MC_DROP_UNKNOWN_MESSAGE, /* message id not in the interface */
    MC_DROP_NO_CHANNEL,      /* on-channel packet from a peer without a channel */
    MC_DROP_DUPLICATE,       /* already received */
    MC_DROP_OUT_OF_WINDOW,   /* sequence beyond the receive window */
    MC_DROP_STALE_VERSION,   /* indexed channel packet of an older version */
    MC_DROP_FRAGMENT,        /* bad or expired fragment group */
    MC_DROP_LATE_REPLY,      /* reply with no waiting request (from that peer) */
    MC_DROP_CHANNEL_LIMIT,   /* a peer would open a channel past max_channels */
    MC_DROP_MESSAGE_TOO_LARGE, /* a message over max_message_size */
    MC_DROP_REASSEMBLY_BUDGET, /* a fragment over max_reassembly_bytes (not acknowledged) */
    MC_DROP_BAD_AUTH,        /* an authenticating nub got a datagram without a valid tag */
    MC_DROP_NOT_PEER,        /* an indexed channel's packet from an address other than its
                                peer's, without a new version on an authenticating nub */
    MC_DROP_REASON_COUNT
} mc_drop_reason;

const char *mc_drop_reason_name(mc_drop_reason reason);

typedef struct {
    uint64_t packets_sent;      /* datagrams handed to the socket (resends included) */
    uint64_t bytes_sent;
    uint64_t packets_received;  /* datagrams read from the socket or processed */
    uint64_t bytes_received;
    uint64_t messages_received; /* messages dispatched to handlers */
    uint64_t resends;           /* channel retransmissions (incl. piggybacks) */
    uint64_t piggybacks;        /* lost packets resent as piggybacks */
    uint64_t once_off_resends;
    uint64_t once_off_refused;  /* RELIABLE_ONCE bundles refused: too many awaiting acks */
    uint64_t acks_sent;         /* ack-only packets sent */
    uint64_t acks_received;     /* sequence numbers acknowledged to us */
    uint64_t send_retries;      /* EAGAIN/ENOBUFS retries */
    uint64_t send_errors;
    uint64_t requests_timed_out;
    uint64_t channels_created;
    uint64_t channels_dead;
    uint64_t rehearsal_dropped;  /* datagrams dropped by rehearsal */
    uint64_t probes_sent;        /* address probes (first sends) before off-channel replies */
    uint64_t addresses_proven;   /* probes acknowledged */
    uint64_t replies_parked;     /* off-channel replies that waited for their address's proof */
    uint64_t replies_unproven_dropped; /* ... dropped: never proven, or too many waiting */
    uint64_t drops[MC_DROP_REASON_COUNT];
    uint64_t dropped_total;
    uint64_t overflow_packets;   /* current: sum over channels (gauge) */
    uint64_t channels;           /* current: live channels (gauge) */
    uint64_t pending_requests;   /* current (gauge) */
    uint64_t reassembly_bytes;   /* current: bytes held for reassembly on channels (gauge) */
} mc_nub_stats;

/* Fill *cfg with the defaults above. */
void mc_nub_config_init(mc_nub_config *cfg);

/* Create a nub: binds the socket and registers its events on base. On failure returns an
 * mc_status and logs why. */
int mc_nub_new(struct event_base *base, const mc_nub_config *cfg, mc_nub **out);
/* Free everything: channels (dead handlers called with MC_CHANNEL_DEATH_NUB_FREED; opening
 * a channel from one returns NULL), pending requests (MC_REPLY_CANCELLED), queued datagrams
 * (delayed rehearsal ones are dropped), watchers registered by mc_nub_register_watchers. */
void mc_nub_free(mc_nub *nub);

/* The bound address (with the real port when bound to port 0). */
const mc_address *mc_nub_address(const mc_nub *nub);
struct event_base *mc_nub_event_base(const mc_nub *nub);
int mc_nub_fd(const mc_nub *nub);
const mc_nub_config *mc_nub_get_config(const mc_nub *nub);

/* Default dead handler for every channel of this nub (a channel's own handler wins). */
void mc_nub_set_channel_dead_handler(mc_nub *nub, mc_channel_dead_handler fn, void *ctx);
/* Called with each channel the nub creates because a peer opened it. */
typedef void (*mc_channel_created_handler)(void *ctx, mc_channel *ch);
void mc_nub_set_channel_created_handler(mc_nub *nub, mc_channel_created_handler fn, void *ctx);

/* Off-channel sending of a bundle made with mc_bundle_new. The bundle is emptied (ready for
 * reuse) whether or not the call succeeds. MC_ERR_TOO_LARGE for a message spanning more
 * than 16384 packets (receivers refuse it: use a channel); MC_ERR_OVERFLOW (nothing sent)
 * when RELIABLE_ONCE would make more than 16384 packets wait for acks at once. */
typedef enum {
    MC_SEND_UNRELIABLE = 0,    /* one shot; may be lost */
    MC_SEND_RELIABLE_ONCE = 1, /* each packet resent every 200 ms up to 50 times until
                                  acked; the receiver drops duplicates. Off-channel replies
                                  (mc_reply_to without a channel) go only to proven
                                  addresses: see request.h */
} mc_send_mode;
int mc_nub_send_bundle(mc_nub *nub, const mc_address *dest, mc_bundle *b, mc_send_mode mode);

/* Push every queued datagram to the socket now (the nub does this itself at the end of each
 * callback and each mc_channel_send). */
int mc_nub_flush(mc_nub *nub);

/* Hand every datagram the nub sends to fn instead of its own socket (after rehearsal):
 * external channels wrap each packet (common/secure's transport encrypts it and sends it on
 * its own socket, and feeds what it receives to mc_nub_process_datagram). fn returns 0, or
 * -1 to count a send error. NULL restores the socket. The nub's own socket stays bound (its
 * address is the nub's address) but gets nothing to send. */
typedef int (*mc_nub_output_fn)(void *ctx, const mc_address *to, const uint8_t *data,
                                size_t len);
void mc_nub_set_output(mc_nub *nub, mc_nub_output_fn fn, void *ctx);

/* The largest datagram this nub sends, MC_PACKET_MIN_LIMIT (1200) .. MC_PACKET_MAX_SIZE
 * (1472, the default); MC_ERR_INVALID outside that range. Bundling, fragmenting, selective
 * acks and piggybacks all keep within it. Set it right after mc_nub_new: it applies to
 * every packet started after the call (a packet already written, and its resends, keep
 * their size). What the nub receives is not affected (up to 1472 bytes).
 *
 * A transport that wraps each datagram (mc_nub_set_output) sets 1472 minus its overhead so
 * the wrapped datagram still fits a 1500-byte MTU without IP fragments: common/secure's
 * DATA packet adds MC_SECURE_DATA_OVERHEAD (25) bytes, so an external nub carried by
 * mc_secure_transport sets 1472 - 25 = 1447 (its DATA packets are then at most 1472).
 * An authenticating nub (cfg.authenticate) never goes above 1472 - MC_AUTH_OVERHEAD: a
 * larger value is lowered to that. */
int mc_nub_set_max_packet(mc_nub *nub, size_t bytes);
size_t mc_nub_max_packet(const mc_nub *nub);

/* Process one datagram as if it had just been read from the socket from `from` (the receive
 * path without a socket: used by the fuzzer). Returns MC_OK or MC_ERR_DROPPED. Not to be
 * called from inside a handler. */
int mc_nub_process_datagram(mc_nub *nub, const mc_address *from, const void *data, size_t len);

/* Rehearsal settings at run time. */
void mc_nub_set_rehearsal(mc_nub *nub, const mc_rehearsal *r);
void mc_nub_get_rehearsal(const mc_nub *nub, mc_rehearsal *out);
/* Drop exactly the next n datagrams this nub sends (deterministic loss for tests). */
void mc_nub_rehearse_drop_next(mc_nub *nub, uint32_t n);

void mc_nub_get_stats(const mc_nub *nub, mc_nub_stats *out);

/* Publish the nub's counters under prefix (e.g. "nub"): packetsSent, bytesSent,
 * packetsReceived, bytesReceived, messagesReceived, resends, piggybacks, onceOffResends,
 * onceOffRefused, acksSent, acksReceived, sendRetries, sendErrors, requestsTimedOut,
 * channelsCreated, channelsDead, rehearsalDropped, probesSent, addressesProven,
 * repliesParked, repliesUnprovenDropped, droppedTotal, overflowPackets,
 * reassemblyBytes, pendingRequests, address,
 * drops/<reason> (mc_drop_reason_name), channels/count, read-write
 * rehearsal/{loss,duplicate,reorder,corrupt,latencyMs,jitterMs,reorderMs}; and per channel
 * channels/<ip>:<port>[#id]/{rttUs,window,unacked,overflow,sent,resent,received,buffered}.
 * Only one registration per nub; mc_nub_free (or mc_nub_unregister_watchers) removes them. */
int mc_nub_register_watchers(mc_nub *nub, mc_watchers *w, const char *prefix);
void mc_nub_unregister_watchers(mc_nub *nub);

#endif
