/* Private structures shared by the Mercury sources (not part of the public API). */
#ifndef MC_MERCURY_INTERNAL_H
#define MC_MERCURY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/stream.h"
#include "common/watcher.h"
#include "mercury/mercury.h"
#include "common/map.h"

/* ---- packet flags (16-bit header, big-endian) ---- */
enum {
    MC_PF_HAS_REQUESTS = 0x0001,
    MC_PF_HAS_PIGGYBACKS = 0x0002,
    MC_PF_HAS_ACKS = 0x0004,
    MC_PF_ON_CHANNEL = 0x0008,
    MC_PF_IS_RELIABLE = 0x0010,
    MC_PF_IS_FRAGMENT = 0x0020,
    MC_PF_HAS_SEQ = 0x0040,
    MC_PF_INDEXED = 0x0080,
    MC_PF_HAS_CHECKSUM = 0x0100,
    MC_PF_CREATE_CHANNEL = 0x0200,
    MC_PF_HAS_CUMULATIVE_ACK = 0x0400,
    MC_PF_HAS_FIRST_SEQ = 0x0800,
    MC_PF_KNOWN = 0x0FFF,
};

#define MC_HEADER_SIZE 2u
#define MC_MAX_ACKS 255u
/* Footer room always kept free while filling a packet with messages:
 * request offset (2) + sequence (4) + fragment (8) + cumulative ack (4) + channel nonce (4,
 * CREATE_CHANNEL packets only) + first sequence number (4, until the peer acknowledges).
 * Indexed channels add 8, checksums 4. Selective acks and piggybacks use whatever room is
 * left. */
#define MC_FOOTER_BASE 26u
#define MC_FOOTER_INDEXED 8u
#define MC_FOOTER_CHECKSUM 4u

/* 28-bit sequence numbers. */
#define MC_SEQ_MASK 0x0FFFFFFFu
#define MC_SEQ_HALF 0x08000000u
static inline uint32_t mc_seq_add(uint32_t a, uint32_t n) { return (a + n) & MC_SEQ_MASK; }
/* a - b as a signed distance (wrap-safe). */
static inline int32_t mc_seq_diff(uint32_t a, uint32_t b)
{
    uint32_t d = (a - b) & MC_SEQ_MASK;
    return (d & MC_SEQ_HALF) ? (int32_t)d - (int32_t)(MC_SEQ_MASK + 1u) : (int32_t)d;
}

/* Largest fragment group (packets) a receiver accepts. */
#define MC_MAX_GROUP_PACKETS (MC_MAX_MESSAGE_SIZE / 1024u + 16u)
#define MC_OFFCHANNEL_FRAGMENT_TIMEOUT_US (10ull * MC_US_PER_S)
/* An incomplete off-channel group that has not grown for this long gives way to new
 * fragments when the group or packet bound is reached. */
#define MC_OFFCHANNEL_FRAGMENT_STALL_US (2ull * MC_US_PER_S)
#define MC_ONCE_OFF_INTERVAL_US (200ull * MC_US_PER_MS)
#define MC_ONCE_OFF_MAX_TRIES 50u
#define MC_DEDUP_KEEP_US (30ull * MC_US_PER_S)
#define MC_DEDUP_MAX 65536u
#define MC_DEFAULT_MAX_CHANNELS 1024u
#define MC_MAX_OFFCHANNEL_GROUPS 64u
#define MC_MAX_OFFCHANNEL_FRAGMENT_PACKETS 16384u
/* Out-of-order packets held by the receive windows of all of a nub's channels together. */
#define MC_MAX_RECV_BUFFERED 65536u
/* Once-off reliable packets a nub keeps resending at once (replies to a flood of spoofed
 * off-channel requests must not pile up). */
#define MC_MAX_ONCE_OFFS 16384u
/* Address proofs (proof.c): replies parked until their address is proven, probes. */
#define MC_MAX_PARKED_REPLIES 1024u
#define MC_MAX_PARKED_BYTES (16ull * 1024u * 1024u)
#define MC_MAX_PROVEN 4096u
#define MC_PROOF_KEEP_US (600ull * MC_US_PER_S)
#define MC_PROBE_TRIES 3u
#define MC_MAX_CREDIT 4096u
#define MC_CREDIT_KEEP_US (30ull * MC_US_PER_S)
#define MC_UNPROVEN_RESEND_CREDIT 4u
/* Default per-nub budget of bytes held in on-channel reassembly. */
#define MC_DEFAULT_MAX_REASSEMBLY_BYTES (256ull * 1024u * 1024u)
/* A fragment group may hold a little more than its largest message (the messages sharing
 * its first and last packets). */
#define MC_GROUP_SLACK 65536u

/* ---- packets ---- */
typedef struct mc_packet {
    struct mc_packet *next;
    uint16_t len;           /* bytes used (header + messages [+ footers once finalised]) */
    uint16_t flags;         /* flags collected while building */
    uint16_t first_request; /* offset of the first request header, 0 = none */
    uint16_t last_link;     /* offset of the last request's next-request field, 0 = none */
    uint8_t reliable;       /* holds a driver/critical message */
    uint8_t critical;
    uint8_t probe;          /* an empty reliable packet asking an unproven peer for an ack */
    uint32_t group_count;   /* fragment group size (0 = not a fragment) */
    uint32_t group_index;   /* position in the group */
    uint8_t data[MC_PACKET_MAX_SIZE];
} mc_packet;

mc_packet *mc_packet_alloc(mc_nub *nub);
void mc_packet_release(mc_nub *nub, mc_packet *p);
void mc_packet_free_list(mc_nub *nub, mc_packet *head);
uint32_t mc_checksum(const uint8_t *data, size_t len);

/* ---- bundles ---- */
struct mc_bundle {
    mc_nub *nub;
    mc_channel *channel; /* NULL: off-channel bundle */
    mc_packet *head, *tail; /* the chain of packets held */
    mc_packet *cur;         /* the packet being filled (the tail), NULL when closed */
    size_t npackets;
    uint16_t capacity;   /* largest len while writing messages */
    mc_packet *group_first; /* open fragment group (a message spans from it) */
    size_t messages;
    size_t bytes;
    /* the open message */
    bool in_msg;
    int msg_error;
    const mc_message_def *msg_def;
    bool msg_is_request;
    mc_reliability msg_rel;
    mc_packet *msg_packet;
    uint16_t msg_offset;
    uint16_t msg_header;
    size_t msg_len;
    uint16_t saved_first_request, saved_last_link;
    mc_packet *saved_group_first;
    uint32_t msg_reply_id; /* request: the registered reply id */
};

void mc_bundle_init(mc_bundle *b, mc_nub *nub, mc_channel *ch);
void mc_bundle_release_all(mc_bundle *b);
/* Close the current packet (no message may be open) so everything is complete. */
int mc_bundle_close(mc_bundle *b);
/* Detach all complete packets (after mc_bundle_close): returns the chain. */
mc_packet *mc_bundle_take(mc_bundle *b);

/* ---- send queue and rehearsal ---- */
typedef struct {
    mc_address dest;
    uint16_t len;
    uint8_t data[MC_PACKET_MAX_SIZE];
} mc_datagram;

typedef struct {
    mc_time_us due;
    uint64_t order;
    mc_datagram *dg;
} mc_delayed;

/* Queue a finished datagram for sending (rehearsal applies). */
void mc_nub_queue_datagram(mc_nub *nub, const mc_address *dest, const uint8_t *data,
                           size_t len);
void mc_rehearsal_release_due(mc_nub *nub, mc_time_us now);
uint64_t mc_rand_next(mc_nub *nub);
/* An unpredictable 28-bit sequence number (getrandom; never the rehearsal PRNG). */
uint32_t mc_nub_random_seq(mc_nub *nub);
double mc_rand_unit(mc_nub *nub);

/* ---- channels ---- */
typedef struct {
    mc_packet *pkt; /* NULL = free slot / acked */
    mc_time_us first_sent, last_sent;
    uint64_t tx_order; /* of its latest transmission */
    uint64_t first_tx; /* of its first transmission */
    uint32_t prev, next; /* tx-order list (sequence numbers), MC_NIL at the ends */
    uint16_t resends;
} mc_unacked;

#define MC_NIL 0xFFFFFFFFu
/* A packet counts as lost once a packet first transmitted this many transmissions after it
 * has been acknowledged (tolerates a little reordering without spurious resends). */
#define MC_REORDER_TOLERANCE 3u
/* At most this many unacked packets: a channel's traffic is interactive and resends go by
 * time (SRTT + margin) without waiting for acks to stop (channel.c, fast_delay). */
#define MC_FAST_RESEND_INFLIGHT 32u
/* Resend delay of a channel's packets before any RTT sample exists on the nub. */
#define MC_INITIAL_RESEND_DELAY_US (200ull * MC_US_PER_MS)

struct mc_channel {
    mc_nub *nub;
    mc_address addr;
    mc_channel_traits traits;
    bool indexed;
    uint32_t id;
    uint32_t version;
    bool irregular;
    bool condemned;
    bool dead; /* scheduled to die */
    mc_channel_death death_reason;
    bool peer_acked; /* the peer acknowledged something: stop sending CREATE_CHANNEL */
    bool send_create; /* we opened the channel (mc_nub_channel): announce it */
    bool accepted;    /* a peer opened it (counts against max_channels) */
    uint32_t nonce;      /* our incarnation id, sent with CREATE_CHANNEL */
    uint32_t peer_nonce; /* the peer's, from its CREATE_CHANNEL packets (0 = none seen) */
    uint64_t plain_reliable_received; /* reliable packets from the peer without CREATE */
    uint32_t bad_ack_run; /* packets in a row acknowledging what we never sent */
    uint32_t resend_credit; /* accepted channel not yet acknowledged by its peer: resends
                               allowed (one per packet received, at most
                               MC_UNPROVEN_RESEND_CREDIT banked) */
    uint64_t unproven_in;   /* ... and its byte credit: bytes received from the peer */
    uint64_t unproven_out;  /* bytes of packets with messages sent to it (first sends and
                               resends; acks and keepalives excepted) */
    size_t index;    /* in nub->channels */
    void *user_data;
    mc_channel_dead_handler dead_fn;
    void *dead_ctx;
    uint32_t epoch; /* bumped on reset: aborts in-progress processing */
    mc_time_us inactivity_timeout;
    mc_time_us last_received, last_sent, created;

    mc_bundle bundle;

    /* send side */
    uint32_t window;
    uint32_t cap; /* ring size (power of two >= window) */
    mc_unacked *ring;
    uint32_t first_seq; /* random first sequence number of this incarnation/version */
    uint64_t issued;    /* sequence numbers used since first_seq */
    uint32_t next_seq;
    uint32_t oldest_unacked;
    uint32_t unacked;
    uint32_t critical_unacked;
    uint32_t tx_head, tx_tail;
    uint64_t tx_counter;
    uint64_t highest_acked_tx;
    mc_time_us rtt;     /* smoothed round-trip time */
    mc_time_us rtt_var; /* smoothed deviation */
    mc_time_us last_ack_progress; /* last time an ack released a packet */
    mc_packet *overflow_head, *overflow_tail;
    uint32_t overflow;
    uint32_t overflow_warn_at;
    bool overflow_failed;

    /* receive side */
    uint32_t in_seq_at;
    bool peer_first_known; /* in_seq_at is set: the peer's first sequence number is known
                              (from its HAS_FIRST_SEQ footer); until then no acks go out */
    mc_packet **recv_ring; /* cap entries */
    uint32_t recv_buffered;
    uint32_t *ack_pending;
    uint32_t ack_count, ack_cap;
    bool need_ack;
    bool in_ack_list;
    struct mc_channel *ack_next;
    bool in_progress_list;
    struct mc_channel *progress_next;
    /* reassembly of an in-order fragment group */
    bool asm_active;
    uint32_t asm_first, asm_last;
    mc_ostream asm_buf;
    uint32_t *asm_req;
    uint32_t asm_req_count, asm_req_cap;
    uint64_t asm_bytes;      /* counted in the nub's reassembly bytes */
    uint64_t frag_buffered;  /* bytes of out-of-order fragment packets (counted too) */
    struct mc_channel *asm_prev, *asm_next; /* nub's reassemblies in start order */

    /* stats */
    uint64_t packets_sent, packets_resent, packets_received, messages_received;
    uint64_t duplicates, out_of_window, out_of_order;
    bool watchers_registered;
    char watch_name[64];
};

mc_channel *mc_channel_create(mc_nub *nub, const mc_address *addr, mc_channel_traits traits,
                              bool indexed, uint32_t id);
void mc_channel_destroy(mc_channel *ch);
/* Hand complete packets (a chain) to the channel: reliable ones get sequence numbers and go
 * into the window or the overflow queue; unreliable ones go straight out. */
int mc_channel_enqueue(mc_channel *ch, mc_packet *chain);
/* Timer work: resends, keepalive, inactivity, condemned completion. */
void mc_channel_tick(mc_channel *ch, mc_time_us now);
void mc_channel_check_resends(mc_channel *ch, mc_time_us now, bool timer);
/* Receive side. */
typedef struct {
    uint16_t flags;
    uint32_t seq;
    uint32_t frag_first, frag_last;
    uint32_t cum_ack;
    const uint8_t *acks; /* count x u32 */
    uint32_t ack_count;
    uint16_t first_request;
    uint32_t chan_id, chan_version;
    uint32_t nonce;    /* CREATE_CHANNEL packets */
    uint32_t first_seq; /* HAS_FIRST_SEQ packets: the sender's first sequence number */
    uint16_t body_end; /* end of messages */
    const uint8_t *piggy[4];
    uint16_t piggy_len[4];
    uint32_t piggy_count;
} mc_footers;

/* Apply acks carried by a packet. Returns false for impossible values. */
/* Packets in a row that acknowledge what a channel never sent before it is declared out of
 * sync with the peer (the two sides belong to different incarnations) and dies. */
#define MC_BAD_ACK_RUN_LIMIT 4u
/* f acknowledges nothing (no cumulative, no selective ack): what a packet opening a channel,
 * or starting a new version or incarnation of one, must look like - a new channel's first
 * sequence number is random, so its peer cannot have acknowledged anything of it yet. */
bool mc_acks_none(const mc_footers *f);
/* Acks in f only name packets ch sent in its current incarnation/version: from its random
 * first sequence number up to next_seq. */
bool mc_channel_acks_valid(const mc_channel *ch, const mc_footers *f);
void mc_channel_apply_acks(mc_channel *ch, const mc_footers *f, mc_time_us now);
/* Reliable packet arrived on ch; returns true if the packet was kept (buffered). */
bool mc_channel_receive_reliable(mc_channel *ch, mc_packet *pkt, const mc_footers *f);
void mc_channel_send_acks(mc_channel *ch);
void mc_channel_note_ack(mc_channel *ch, uint32_t seq);
void mc_channel_reset_state(mc_channel *ch, uint32_t version);
/* Free everything the receive side holds (buffered packets, reassembly). */
void mc_channel_clear_receive(mc_channel *ch);
void mc_channel_register_watchers(mc_channel *ch);
void mc_channel_unregister_watchers(mc_channel *ch);

/* ---- on-channel reassembly budget (reassembly.c) ---- */
/* May ch take `bytes` more into reassembly? Within the nub's max_reassembly_bytes, or ch
 * holds the oldest reassembly in progress, or (in_order) none is in progress. */
bool mc_reasm_admit(mc_channel *ch, size_t bytes, bool in_order);
/* ch starts reassembling a group (joins the start-order list) / stops (buffer freed or
 * handed on: its bytes no longer count). */
void mc_reasm_start(mc_channel *ch);
void mc_reasm_stop(mc_channel *ch);
void mc_reasm_grow(mc_channel *ch, size_t bytes);
/* An out-of-order fragment packet of len bytes is buffered / leaves the receive window. */
void mc_reasm_buffered(mc_channel *ch, size_t len);
void mc_reasm_unbuffered(mc_channel *ch, size_t len);
/* Is this packet (header in place) a fragment? */
bool mc_packet_is_fragment(const mc_packet *pkt);

/* ---- receive path (receive.c; a datagram's footers and units: unit.c) ---- */
/* Requests one packet may carry at most. */
#define MC_MAX_REQUESTS_PER_PACKET 256u
/* Process a datagram held in pkt (pkt->len set). Returns true if pkt was kept. */
bool mc_receive_packet(mc_nub *nub, const mc_address *src, mc_packet *pkt, int depth,
                       int *status);
int mc_parse_footers(mc_nub *nub, const mc_packet *pkt, mc_footers *f);
/* Collect the request offsets of a packet's chain (relative to the message start at
 * offset 2). Returns count or -1 if the chain is malformed. */
int mc_request_chain(const uint8_t *data, uint16_t body_end, uint16_t first, uint32_t *out,
                     uint32_t max);
/* Check a unit of messages; returns MC_OK or a drop reason + 1 (negated). */
int mc_validate_unit(mc_nub *nub, const uint8_t *data, size_t len, const uint32_t *req,
                     uint32_t nreq, mc_drop_reason *why);
/* Dispatch a validated unit (data is modified in place for oversize messages). */
void mc_dispatch_unit(mc_nub *nub, const mc_address *src, mc_channel *ch, uint8_t *data,
                      size_t len, const uint32_t *req, uint32_t nreq);
/* Count (and at debug level log) a dropped datagram (status.c). */
void mc_nub_count_drop(mc_nub *nub, mc_drop_reason why, const mc_address *src);
/* acks.c: mark a channel as needing an ack-only packet at the end of this batch. */
void mc_nub_want_ack(mc_nub *nub, mc_channel *ch);
void mc_nub_send_pending_acks(mc_nub *nub);
/* Mark a channel whose acks moved: resends/overflow are checked at the end of the batch. */
void mc_nub_want_progress(mc_nub *nub, mc_channel *ch);
void mc_channel_after_acks(mc_channel *ch, mc_time_us now);

/* ---- finalising packets ---- */
typedef struct {
    uint16_t flags;
    uint32_t seq;
    uint32_t frag_first, frag_last;
    bool indexed;
    uint32_t chan_id, chan_version;
    mc_channel *ack_channel;       /* take cumulative/selective acks from here */
    const uint32_t *offchannel_acks; /* off-channel acks (once-off) */
    uint32_t offchannel_ack_count;
    uint32_t nonce;       /* with CREATE_CHANNEL */
    uint32_t first_seq;   /* with HAS_FIRST_SEQ */
    const uint8_t *piggy; /* a resent packet riding along (external channels) */
    uint16_t piggy_len;
} mc_finalise_opts;
/* Bytes finalise would add without selective acks or piggybacks. */
size_t mc_footer_size(uint16_t flags, bool has_requests, bool checksums);
/* Write flags and footers into pkt (whose messages are in place). */
void mc_packet_finalise(mc_nub *nub, mc_packet *pkt, const mc_finalise_opts *o);

/* ---- requests ---- */
typedef struct {
    uint32_t reply_id;
    mc_reply_handler handler;
    void *ctx;
    mc_time_us deadline;
    mc_channel *channel;
    bool has_dest;   /* off-channel: sent to dest, so only dest may answer */
    mc_address dest;
} mc_pending_request;

uint32_t mc_request_register(mc_nub *nub, mc_channel *ch, mc_reply_handler h, void *ctx,
                             mc_time_us timeout);
void mc_request_forget(mc_nub *nub, uint32_t reply_id);
/* The off-channel packet pkt (not yet finalised) goes to dest: its requests accept replies
 * from dest only. */
void mc_request_note_dest(mc_nub *nub, const mc_packet *pkt, const mc_address *dest);
void mc_request_deliver(mc_nub *nub, uint32_t reply_id, const mc_message_info *info,
                        mc_istream *data);
void mc_request_check_timeouts(mc_nub *nub, mc_time_us now);
void mc_request_fail_channel(mc_nub *nub, mc_channel *ch, mc_reply_status status);
void mc_request_cancel_all(mc_nub *nub);

/* ---- off-channel ---- */
typedef struct mc_once_off {
    struct mc_once_off *next;
    mc_address dest;
    uint32_t seq;
    uint32_t tries;
    bool probe; /* an address probe (proof.c): MC_PROBE_TRIES sends at most */
    bool budgeted; /* a reply to an unproven address: each resend spends its credit */
    mc_time_us next_send;
    bool acked;
    uint16_t len;
    uint8_t data[MC_PACKET_MAX_SIZE];
} mc_once_off;

typedef struct mc_frag_group {
    mc_address src;
    uint32_t first, count, have;
    mc_time_us started;
    mc_time_us progressed; /* when its last new packet arrived */
    mc_packet **slots;
    struct mc_frag_group *next;
} mc_frag_group;

typedef struct {
    mc_address src;
    uint32_t seq;
    mc_time_us expires;
} mc_dedup_entry;

void mc_offchannel_ack_received(mc_nub *nub, const mc_address *src, uint32_t seq);
/* Once-off duplicate suppression: was (src, seq) accepted before? / remember it (30 s, at
 * most MC_DEDUP_MAX entries, oldest forgotten first). */
bool mc_offchannel_seen(mc_nub *nub, const mc_address *src, uint32_t seq);
void mc_offchannel_remember(mc_nub *nub, const mc_address *src, uint32_t seq, mc_time_us now);
void mc_offchannel_send_ack(mc_nub *nub, const mc_address *dest, uint32_t seq);
/* Store an off-channel fragment (delivering its group when complete). Returns 1 if pkt was
 * taken, 0 for a duplicate (not taken), -1 if refused (counted; not taken). */
int mc_offchannel_fragment(mc_nub *nub, const mc_address *src, mc_packet *pkt,
                           const mc_footers *f);
void mc_offchannel_tick(mc_nub *nub, mc_time_us now);
void mc_offchannel_free_all(mc_nub *nub);
/* Send an address probe to dest (an empty reliable once-off packet with a random sequence
 * number). */
int mc_offchannel_send_probe(mc_nub *nub, const mc_address *dest);

/* ---- address proofs (proof.c) ---- */
typedef struct mc_parked_reply mc_parked_reply;
/* Has `a` shown that it receives what this nub sends (a channel whose peer acknowledged
 * something, or an acknowledged probe not older than MC_PROOF_KEEP_US)? */
bool mc_proof_proven(mc_nub *nub, const mc_address *a, mc_time_us now);
/* Keep an off-channel reply until dest is proven (a probe goes out if none is under way).
 * MC_ERR_OVERFLOW (counted) beyond MC_MAX_PARKED_REPLIES / MC_MAX_PARKED_BYTES. */
int mc_proof_park_reply(mc_nub *nub, const mc_address *dest, uint32_t reply_id,
                        const void *data, size_t len);
/* A probe to src was acknowledged / was never acknowledged. */
void mc_proof_probe_acked(mc_nub *nub, const mc_address *src);
void mc_proof_probe_failed(mc_nub *nub, const mc_address *dest);
void mc_proof_free_all(mc_nub *nub);
/* An unproven address sent us `bytes` off-channel: its credit grows. */
void mc_proof_note_received(mc_nub *nub, const mc_address *src, size_t bytes, mc_time_us now);
/* May `bytes` more go to dest (proven, or within its credit, which is then spent)? */
bool mc_proof_spend(mc_nub *nub, const mc_address *dest, size_t bytes, mc_time_us now);
/* Forget credits not refreshed for MC_CREDIT_KEEP_US. */
void mc_proof_expire(mc_nub *nub, mc_time_us now);

/* ---- the nub ---- */
#define MC_RECV_BATCH 64
#define MC_SEND_BATCH 64

struct mc_nub {
    struct event_base *base;
    struct event *read_ev;
    struct event *timer_ev;
    struct event *write_ev; /* armed while the socket refuses datagrams (EAGAIN/ENOBUFS) */
    int fd;
    mc_address addr;
    mc_nub_config cfg;
    uint16_t max_packet; /* largest packet it sends (mc_nub_set_max_packet) */
    mc_auth auth;        /* cfg.authenticate: the derived packet key */
    char bind_text[MC_ADDRESS_STRLEN];
    const mc_message_def *defs[256];
    bool freeing;

    mc_channel_dead_handler dead_fn;
    void *dead_ctx;
    mc_channel_created_handler created_fn;
    void *created_ctx;
    mc_nub_output_fn output_fn; /* mc_nub_set_output: instead of the socket */
    void *output_ctx;

    mc_channel **channels;
    size_t nchannels, channels_cap;
    mc_map by_addr;  /* address key -> channel */
    mc_map by_index; /* channel id -> channel */
    mc_channel *ack_list;
    mc_channel *progress_list;
    uint32_t recv_buffered_total; /* out-of-order packets held over all channels */
    uint32_t accepted_channels;   /* live channels that peers opened */
    mc_channel *asm_head, *asm_tail; /* channels reassembling, oldest first */

    /* packet pool */
    mc_packet *pool;
    size_t pool_size;

    /* receive buffers */
    mc_packet *recv_pkts[MC_RECV_BATCH];

    /* send queue */
    mc_datagram *sendq;
    size_t sendq_len, sendq_cap;

    /* rehearsal */
    mc_rehearsal reh;
    uint64_t rng;
    uint32_t drop_next;
    mc_delayed *delayed;
    size_t ndelayed, delayed_cap;
    uint64_t delayed_order;

    /* requests */
    mc_map requests;
    uint32_t next_reply_id;
    mc_time_us next_request_deadline;

    /* off-channel */
    uint32_t offchannel_seq;
    mc_once_off *once_offs;
    uint32_t once_off_count; /* once-off packets waiting for their ack */
    mc_map once_off_map;
    mc_frag_group *frags;
    mc_map frag_map;
    uint32_t frag_packets; /* packets held by off-channel fragment groups */
    mc_map dedup_map;
    mc_dedup_entry *dedup;
    size_t dedup_head, dedup_count;

    /* address proofs */
    mc_map proven; /* address key -> proof entry */
    mc_map credit; /* address key -> byte credit of an unproven address */
    bool once_off_budgeted; /* once-offs being created are replies to an unproven address */
    mc_time_us last_credit_expiry;
    mc_parked_reply *parked;
    uint32_t parked_count;
    uint64_t parked_bytes;

    /* random numbers from the kernel (getrandom) for first sequence numbers */
    uint32_t rand_pool[32];
    uint32_t rand_left;

    mc_nub_stats stats;
    mc_time_us last_slow_tick;
    mc_time_us rtt_hint; /* the latest RTT estimate of any channel: a new channel's resend
                            delay until its own first sample */

    mc_watchers *watchers;
    char *watch_prefix;
};

/* The channel table (channels.c). Register a new channel (list, lookup map, watchers); false on allocation failure. */
bool mc_nub_add_channel(mc_nub *nub, mc_channel *ch);
/* Remove, report (unless condemned) and free a channel now (receive path only: never
 * while the channel may be in use further up the stack). */
void mc_nub_kill_channel(mc_nub *nub, mc_channel *ch, mc_channel_death reason);
/* Detach a channel from lookups and schedule its death (reported, unless condemned, and
 * freed on the next timer tick). */
void mc_nub_retire_channel(mc_nub *nub, mc_channel *ch, mc_channel_death reason);
void mc_nub_remove_channel(mc_nub *nub, mc_channel *ch);
/* The key of an address in the nub's maps (address.c). */
uint64_t mc_address_key(const mc_address *a);

#endif
