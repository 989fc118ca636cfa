/* Regression tests for the defects of the outside review (issue 12): each fails without
 * its fix. Real sockets on 127.0.0.1; crafted datagrams go through mc_nub_process_datagram
 * (the receive path without a socket). */
#include "check_main.h"
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/stream.h"
#include "harness.h"
#include "mercury/auth.h"
#include "internal.h"

/* wire flags (docs/PROTOCOL.md) */
enum {
    F_HAS_REQUESTS = 0x0001,
    F_ON_CHANNEL = 0x0008,
    F_IS_RELIABLE = 0x0010,
    F_IS_FRAGMENT = 0x0020,
    F_HAS_SEQ = 0x0040,
    F_INDEXED = 0x0080,
    F_CREATE = 0x0200,
    F_CUMULATIVE_ACK = 0x0400,
    F_FIRST_SEQ = 0x0800,
};

static uint64_t drops(mc_nub *n, mc_drop_reason why)
{
    mc_nub_stats st;
    mc_nub_get_stats(n, &st);
    return st.drops[why];
}

/* A reply datagram (off-channel, unreliable) answering reply_id. */
static size_t reply_datagram(uint8_t *pk, uint32_t reply_id)
{
    mc_store_u16(pk, 0);
    pk[2] = MC_REPLY_MESSAGE_ID;
    mc_store_u32(pk + 3, 4); /* 4-byte length field: the reply id only */
    mc_store_u32(pk + 7, reply_id);
    return 11;
}

/* An on-channel packet acknowledging (cumulatively) sequence numbers never sent. */
static size_t bad_ack_datagram(uint8_t *pk)
{
    mc_store_u16(pk, F_ON_CHANNEL | F_CUMULATIVE_ACK);
    mc_store_u32(pk + 2, 100000);
    return 6;
}

/* ---- defect 1: nothing can be started on a channel being killed ---- */
typedef struct {
    int deaths;
    int request_rc;   /* of the request the dead handler tried to open */
    uint32_t reply_id;
    reply_rec rr;     /* its reply handler's record */
    int chained_rc;   /* of the request a failing request's handler tried to open */
    uint32_t chained_id;
    reply_rec chained;
    mc_channel *ch;
} dying;

static void try_request(mc_channel *ch, reply_rec *rec, int *rc, uint32_t *id)
{
    mc_bundle *b = mc_channel_bundle(ch);
    *rc = mc_bundle_start_request(b, tdef(T_REQ), on_reply, rec, 0);
    if (*rc != MC_OK)
        return;
    *id = b->msg_reply_id;
    uint8_t ask[] = {1, 'x'};
    mc_bundle_write(b, ask, sizeof ask);
    mc_bundle_end_message(b);
    mc_channel_send(ch);
}

static void request_when_dead(void *ctx, mc_channel *ch, mc_channel_death reason)
{
    (void)reason;
    dying *d = ctx;
    d->deaths++;
    try_request(ch, &d->rr, &d->request_rc, &d->reply_id);
}

/* The reply handler of a request pending on the channel: it fails with CHANNEL_DEAD and
 * tries again on the same channel. */
static void request_again(void *ctx, mc_reply_status status, const mc_message_info *info,
                          mc_istream *data)
{
    (void)info;
    (void)data;
    dying *d = ctx;
    d->chained.calls++;
    d->chained.status = status;
    if (status == MC_REPLY_CHANNEL_DEAD)
        try_request(d->ch, &d->rr, &d->chained_rc, &d->chained_id);
}

START_TEST(handlers_of_a_killed_channel_cannot_open_requests_on_it)
{
    pair p;
    pair_open(&p, NULL);
    send_stream(p.ab, 0, 10, 40);
    ck_assert(wait_received(&p, &p.rb, 10, 10));
    mc_channel *ba = mc_nub_find_channel(p.b, mc_nub_address(p.a));
    ck_assert_ptr_nonnull(ba);
    dying d;
    memset(&d, 0, sizeof d);
    d.request_rc = d.chained_rc = 1;
    d.ch = ba;
    mc_channel_set_dead_handler(ba, request_when_dead, &d);
    uint8_t quiet[] = {0, 'q'}; /* a does not answer it: it is pending when ba dies */
    ck_assert_int_eq(mc_channel_request(ba, tdef(T_REQ), quiet, sizeof quiet, request_again, &d,
                                        0),
                     MC_OK);
    /* a run of packets from a's address acknowledging what b never sent kills ba from the
     * receive path (MC_BAD_ACK_RUN_LIMIT) */
    uint8_t pk[32];
    for (uint32_t i = 0; i < MC_BAD_ACK_RUN_LIMIT; i++)
        mc_nub_process_datagram(p.b, mc_nub_address(p.a), pk, bad_ack_datagram(pk));
    ck_assert_int_eq(d.deaths, 1);
    ck_assert_int_eq(d.chained.calls, 1);
    ck_assert_int_eq(d.chained.status, MC_REPLY_CHANNEL_DEAD);
    /* replies naming whatever the handlers registered arrive now (ba is freed): without
     * the fix they reach a request whose channel is gone (a use after free under ASan) */
    if (d.request_rc == MC_OK)
        mc_nub_process_datagram(p.b, mc_nub_address(p.a), pk, reply_datagram(pk, d.reply_id));
    if (d.chained_rc == MC_OK)
        mc_nub_process_datagram(p.b, mc_nub_address(p.a), pk, reply_datagram(pk, d.chained_id));
    ck_assert_int_eq(d.request_rc, MC_ERR_DEAD);
    ck_assert_int_eq(d.chained_rc, MC_ERR_DEAD);
    ck_assert_int_eq(d.rr.calls, 0);
    mc_nub_stats st;
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_eq(st.pending_requests, 0);
    ck_assert_uint_eq(st.channels, 0);
    pair_close(&p);
}
END_TEST

/* ---- defect 5: a packet validates fully before it changes its channel ---- */
/* An indexed-channel packet: cumulative ack, then channel id and version. */
static size_t indexed_datagram(uint8_t *pk, uint32_t cum_ack, uint32_t id, uint32_t version)
{
    mc_store_u16(pk, F_ON_CHANNEL | F_CUMULATIVE_ACK | F_INDEXED);
    mc_store_u32(pk + 2, cum_ack);
    mc_store_u32(pk + 6, id);
    mc_store_u32(pk + 10, version);
    return 14;
}

/* The same without an ack (a new version's first packets acknowledge nothing). */
static size_t indexed_datagram_no_ack(uint8_t *pk, uint32_t id, uint32_t version)
{
    mc_store_u16(pk, F_ON_CHANNEL | F_INDEXED);
    mc_store_u32(pk + 2, id);
    mc_store_u32(pk + 6, version);
    return 10;
}

static void authenticated(mc_nub_config *cfg, int which);
static mc_channel *indexed_pair_open(pair *p, void (*cfg_tweak)(mc_nub_config *, int),
                                     mc_channel **ic);

START_TEST(invalid_packets_neither_reset_nor_move_an_indexed_channel)
{
    pair p;
    mc_channel *ic, *peer = indexed_pair_open(&p, NULL, &ic);
    /* b replies so its side has something unacknowledged and a sequence to protect */
    uint8_t note[1] = {1};
    mc_channel_send_message(peer, tdef(T_NOTE), note, 1);
    mc_channel_send(peer);
    ck_assert_uint_eq(mc_channel_version(peer), 0);
    mc_address stranger = {0x7F000002u, 40111};
    uint8_t pk[32];
    mc_channel_stats cs;
    mc_channel_get_stats(peer, &cs);
    uint32_t never_sent = (cs.first_send_seq + 5000) & 0x0FFFFFFFu;
    uint64_t bad = drops(p.b, MC_DROP_BAD_ACKS);
    /* a newer version with impossible acks, even from the peer's address: dropped, and the
     * channel keeps its version, its address and its state */
    ck_assert_int_eq(mc_nub_process_datagram(p.b, mc_nub_address(p.a), pk,
                                             indexed_datagram(pk, never_sent, 42, 1)),
                     MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_BAD_ACKS), bad + 1);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &stranger, pk,
                                             indexed_datagram(pk, never_sent, 42, 1)),
                     MC_ERR_DROPPED);
    ck_assert_uint_eq(mc_channel_version(peer), 0);
    ck_assert(mc_address_equal(mc_channel_address(peer), mc_nub_address(p.a)));
    mc_channel_stats ics;
    mc_channel_get_stats(ic, &ics);
    mc_channel_get_stats(peer, &cs);
    /* 20 small messages: one packet */
    ck_assert_uint_eq(cs.next_recv_seq, (ics.first_send_seq + 1) & 0x0FFFFFFFu);
    ck_assert_uint_eq(cs.next_send_seq, (cs.first_send_seq + 1) & 0x0FFFFFFFu);
    /* the current version with impossible acks: the address stays */
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &stranger, pk,
                                             indexed_datagram(pk, never_sent, 42, 0)),
                     MC_ERR_DROPPED);
    ck_assert(mc_address_equal(mc_channel_address(peer), mc_nub_address(p.a)));
    /* the channel still works both ways */
    send_stream(ic, 20, 20, 40);
    ck_assert(wait_received(&p, &p.rb, 40, 10));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    /* a well-formed packet of a newer version from a stranger (no acks: what a new version
     * looks like) neither resets nor moves it: on a nub that does not authenticate its
     * packets nobody proves to be the channel's new owner (issue 19, finding 8) */
    uint64_t not_peer = drops(p.b, MC_DROP_NOT_PEER);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &stranger, pk,
                                             indexed_datagram_no_ack(pk, 42, 3)),
                     MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_NOT_PEER), not_peer + 1);
    ck_assert_uint_eq(mc_channel_version(peer), 0);
    ck_assert(mc_address_equal(mc_channel_address(peer), mc_nub_address(p.a)));
    /* nor does a packet of the current version from elsewhere */
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &stranger, pk,
                                             indexed_datagram_no_ack(pk, 42, 0)),
                     MC_ERR_DROPPED);
    ck_assert(mc_address_equal(mc_channel_address(peer), mc_nub_address(p.a)));
    /* the peer itself may start a new version where it is */
    ck_assert_int_eq(mc_nub_process_datagram(p.b, mc_nub_address(p.a), pk,
                                             indexed_datagram_no_ack(pk, 42, 3)),
                     MC_OK);
    ck_assert_uint_eq(mc_channel_version(peer), 3);
    ck_assert(mc_address_equal(mc_channel_address(peer), mc_nub_address(p.a)));
    pair_close(&p);
}
END_TEST

/* A pair whose a opened indexed channel 42 to b (*ic) and sent it 20 messages: b's side of
 * the channel, returned once they arrived. */
static mc_channel *indexed_pair_open(pair *p, void (*cfg_tweak)(mc_nub_config *, int),
                                     mc_channel **ic)
{
    pair_open(p, cfg_tweak);
    *ic = mc_nub_indexed_channel(p->a, mc_nub_address(p->b), 42, MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(*ic);
    send_stream(*ic, 0, 20, 40);
    ck_assert(wait_received(p, &p->rb, 20, 10));
    mc_channel *peer = mc_nub_find_indexed_channel(p->b, 42);
    ck_assert_ptr_nonnull(peer);
    return peer;
}

/* Where every packet is authenticated (a cluster's internal nubs), a new version from another
 * address is a member of the cluster taking the channel over (an entity that moved): it is
 * reset and follows its new peer; a packet without the secret changes nothing. */
static const uint8_t move_secret[MC_AUTH_SECRET_BYTES] = {42};

static void authenticated(mc_nub_config *cfg, int which)
{
    (void)which;
    cfg->authenticate = true;
    memcpy(cfg->auth_secret, move_secret, sizeof move_secret);
}

START_TEST(indexed_channel_moves_only_with_an_authenticated_new_version)
{
    pair p;
    mc_channel *ic, *peer = indexed_pair_open(&p, authenticated, &ic);
    mc_address member = {0x7F000002u, 40112};
    mc_auth auth;
    ck_assert_int_eq(mc_auth_init(&auth, move_secret, false), 0);
    uint8_t pk[64];
    /* untagged: dropped before parsing */
    size_t n = indexed_datagram_no_ack(pk, 42, 3);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &member, pk, n), MC_ERR_DROPPED);
    ck_assert_uint_eq(mc_channel_version(peer), 0);
    ck_assert(mc_address_equal(mc_channel_address(peer), mc_nub_address(p.a)));
    /* tagged, the current version from elsewhere: not its peer */
    n = indexed_datagram_no_ack(pk, 42, 0);
    mc_auth_seal(&auth, pk, n, pk + n);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &member, pk, n + MC_AUTH_OVERHEAD),
                     MC_ERR_DROPPED);
    ck_assert(mc_address_equal(mc_channel_address(peer), mc_nub_address(p.a)));
    /* tagged, a new version: the channel follows the member */
    n = indexed_datagram_no_ack(pk, 42, 3);
    mc_auth_seal(&auth, pk, n, pk + n);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &member, pk, n + MC_AUTH_OVERHEAD), MC_OK);
    ck_assert_uint_eq(mc_channel_version(peer), 3);
    ck_assert(mc_address_equal(mc_channel_address(peer), &member));
    mc_auth_clear(&auth);
    pair_close(&p);
}
END_TEST

/* ---- defect 6: a handler that resets its channel ends that packet's dispatch ---- */
typedef struct {
    int counted;
    int resets;
} reset_state;

static void on_count(void *ctx, const mc_message_info *info, mc_istream *is)
{
    (void)info;
    (void)is;
    ((reset_state *)ctx)->counted++;
}

static void on_reset(void *ctx, const mc_message_info *info, mc_istream *is)
{
    (void)is;
    ((reset_state *)ctx)->resets++;
    ck_assert_int_eq(mc_channel_reset(info->channel), MC_OK);
}

#define RESET_IFACE(X)                                                                      \
    X(R_COUNT, 1, MC_FIXED(0), on_count)                                                    \
    X(R_RESET, 2, MC_FIXED(0), on_reset)
static const mc_message_def reset_defs[] = {RESET_IFACE(MC_DEF_WITH_HANDLER)};
static const mc_interface reset_iface = MC_INTERFACE("reset", reset_defs);

static bool reset_seen(void *ctx) { return ((reset_state *)ctx)->resets > 0; }

START_TEST(reset_in_a_handler_drops_the_rest_of_the_packet)
{
    struct event_base *base = event_base_new();
    reset_state st = {0, 0};
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.iface = &reset_iface;
    cfg.handler_ctx = &st;
    mc_nub *a, *b;
    ck_assert_int_eq(mc_nub_new(base, &cfg, &a), MC_OK);
    ck_assert_int_eq(mc_nub_new(base, &cfg, &b), MC_OK);
    mc_channel *ic = mc_nub_indexed_channel(a, mc_nub_address(b), 7, MC_CHANNEL_INTERNAL);
    mc_bundle *bd = mc_channel_bundle(ic);
    /* one packet: count, reset, count, count */
    ck_assert_int_eq(mc_bundle_add_message(bd, &reset_defs[0], MC_RELIABLE_DRIVER, NULL, 0), MC_OK);
    ck_assert_int_eq(mc_bundle_add_message(bd, &reset_defs[1], MC_RELIABLE_DRIVER, NULL, 0), MC_OK);
    ck_assert_int_eq(mc_bundle_add_message(bd, &reset_defs[0], MC_RELIABLE_DRIVER, NULL, 0), MC_OK);
    ck_assert_int_eq(mc_bundle_add_message(bd, &reset_defs[0], MC_RELIABLE_DRIVER, NULL, 0), MC_OK);
    ck_assert_uint_eq(mc_bundle_packet_count(bd), 1);
    ck_assert_int_eq(mc_channel_send(ic), MC_OK);
    ck_assert(pump_until(base, reset_seen, &st, 10));
    pump_for(base, 0.1);
    ck_assert_int_eq(st.resets, 1);
    ck_assert_int_eq(st.counted, 1); /* the two after the reset were of the old version */
    ck_assert_uint_eq(mc_channel_version(mc_nub_find_indexed_channel(b, 7)), 1);
    mc_nub_free(a);
    mc_nub_free(b);
    event_base_free(base);
}
END_TEST

/* ---- defect 6: stalled off-channel fragment groups give way ---- */
/* An off-channel fragment packet holding one whole 5-byte T_NOTE message. */
static size_t fragment(uint8_t *pk, uint32_t first, uint32_t last, uint32_t seq)
{
    size_t n = 0;
    mc_store_u16(pk, (uint16_t)(F_HAS_SEQ | F_IS_FRAGMENT));
    n = 2;
    pk[n++] = T_NOTE;
    mc_store_u16(pk + n, 5);
    n += 2;
    memset(pk + n, 0xAB, 5);
    n += 5;
    mc_store_u32(pk + n, first);
    mc_store_u32(pk + n + 4, last);
    mc_store_u32(pk + n + 8, seq);
    return n + 12;
}

START_TEST(stalled_fragment_groups_do_not_starve_new_ones)
{
    pair p;
    pair_open(&p, NULL);
    uint8_t pk[64];
    mc_address s1 = {0x7F000002u, 42101}, s2 = {0x7F000002u, 42102}, s3 = {0x7F000002u, 42103};
    /* time moves only when the test says so (nothing is pumped meanwhile) */
    frozen_clock fz = {mc_clock_now_us()};
    mc_clock_set_source(frozen_clock_now, &fz);
    /* two groups that never complete fill the packet bound (16384) */
    for (uint32_t i = 0; i < 8192; i++) {
        mc_nub_process_datagram(p.b, &s1, pk, fragment(pk, 100, 10099, 100 + i));
        mc_nub_process_datagram(p.b, &s2, pk, fragment(pk, 500, 10499, 500 + i));
    }
    ck_assert_uint_eq(drops(p.b, MC_DROP_FRAGMENT), 0);
    /* while they are fresh a third group is refused */
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &s3, pk, fragment(pk, 7, 8, 7)), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_FRAGMENT), 1);
    /* 3 s later (groups expire after 10 s) they have stalled: the stalest makes room */
    fz.at += 3 * MC_US_PER_S;
    int r1 = mc_nub_process_datagram(p.b, &s3, pk, fragment(pk, 7, 8, 7));
    int r2 = mc_nub_process_datagram(p.b, &s3, pk, fragment(pk, 7, 8, 8));
    ck_assert_int_eq(r1, MC_OK);
    ck_assert_int_eq(r2, MC_OK);
    ck_assert_uint_eq(p.rb.notes, 2);
    ck_assert_uint_eq(drops(p.b, MC_DROP_FRAGMENT), 2); /* the evicted group */
    mc_clock_set_source(NULL, NULL);
    pair_close(&p);

    /* the same for the group count: 64 groups, then a new one */
    pair_open(&p, NULL);
    fz.at = mc_clock_now_us();
    mc_clock_set_source(frozen_clock_now, &fz);
    for (uint32_t g = 0; g < 64; g++) {
        mc_address s = {0x7F000003u, (uint16_t)(43000 + g)};
        ck_assert_int_eq(mc_nub_process_datagram(p.b, &s, pk, fragment(pk, 0, 1, 0)), MC_OK);
    }
    mc_address late = {0x7F000003u, 43999};
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &late, pk, fragment(pk, 0, 1, 0)),
                     MC_ERR_DROPPED);
    fz.at += 3 * MC_US_PER_S;
    r1 = mc_nub_process_datagram(p.b, &late, pk, fragment(pk, 0, 1, 0));
    r2 = mc_nub_process_datagram(p.b, &late, pk, fragment(pk, 0, 1, 1));
    mc_clock_set_source(NULL, NULL);
    ck_assert_int_eq(r1, MC_OK);
    ck_assert_int_eq(r2, MC_OK);
    ck_assert_uint_eq(p.rb.notes, 2);
    pair_close(&p);
}
END_TEST

/* ---- defect 4: no amplification towards unproven sources ---- */
/* An off-channel reliable request (T_REQ, mode 2: a T_REQ_BIG_REPLY-byte answer). */
static size_t big_request(uint8_t *pk, uint32_t reply_id, uint32_t seq)
{
    mc_store_u16(pk, F_HAS_REQUESTS | F_IS_RELIABLE | F_HAS_SEQ);
    pk[2] = T_REQ;
    mc_store_u32(pk + 3, reply_id);
    mc_store_u16(pk + 7, 0); /* no next request */
    mc_store_u16(pk + 9, 1); /* length */
    pk[11] = 2;
    mc_store_u16(pk + 12, 2); /* first request at offset 2 */
    mc_store_u32(pk + 14, seq);
    return 18;
}

typedef struct {
    size_t datagrams, bytes, largest;
} seen;

/* A plain UDP socket standing for a victim whose address a request claims. */
static int victim_socket(mc_address *addr)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(0x7F000001u);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    mc_address_from_sockaddr(&sa, addr);
    return fd;
}

static seen drain(int fd)
{
    seen s = {0, 0, 0};
    uint8_t buf[2048];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0)
            break;
        s.datagrams++;
        s.bytes += (size_t)n;
        if ((size_t)n > s.largest)
            s.largest = (size_t)n;
    }
    return s;
}

static bool unproven_dropped(void *ctx)
{
    mc_nub_stats st;
    mc_nub_get_stats(ctx, &st);
    return st.replies_unproven_dropped > 0;
}

START_TEST(spoofed_requests_get_no_more_than_they_sent)
{
    pair p;
    pair_open(&p, NULL);
    mc_address victim;
    int vfd = victim_socket(&victim);
    uint8_t pk[64];
    size_t qlen = big_request(pk, 77, 1000);
    /* the request claims the victim's address (as a spoofed datagram would) */
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &victim, pk, qlen), MC_OK);
    ck_assert_uint_eq(p.rb.requests, 1);
    ck_assert(pump_until(p.base, unproven_dropped, p.b, 10));
    pump_for(p.base, 0.3); /* nothing more comes */
    seen v = drain(vfd);
    close(vfd);
    /* an ack and at most MC_PROBE_TRIES probes, each smaller than the request; never the
     * 1200-byte reply, never 50 resends of it */
    ck_assert_uint_le(v.largest, qlen);
    ck_assert_uint_ge(v.datagrams, 2);
    ck_assert_uint_le(v.datagrams, 1 + MC_PROBE_TRIES);
    mc_nub_stats st;
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_eq(st.probes_sent, 1);
    ck_assert_uint_eq(st.replies_parked, 1);
    ck_assert_uint_eq(st.replies_unproven_dropped, 1);
    ck_assert_uint_eq(st.addresses_proven, 0);
    ck_assert_uint_eq(st.once_off_resends, MC_PROBE_TRIES - 1);

    /* a real requester proves its address by acknowledging the probe, and gets its answer */
    reply_rec rr = {0};
    mc_bundle *b = mc_bundle_new(p.a);
    ck_assert_int_eq(mc_bundle_start_request(b, tdef(T_REQ), on_reply, &rr, 0), MC_OK);
    mc_bundle_write_u8(b, 2);
    ck_assert_int_eq(mc_bundle_end_message(b), MC_OK);
    ck_assert_int_eq(mc_nub_send_bundle(p.a, mc_nub_address(p.b), b, MC_SEND_RELIABLE_ONCE),
                     MC_OK);
    ck_assert(pump_until(p.base, reply_done, &rr, 10));
    ck_assert_int_eq(rr.status, MC_REPLY_OK);
    ck_assert_uint_eq(rr.len, T_REQ_BIG_REPLY);
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_eq(st.probes_sent, 2);
    ck_assert_uint_eq(st.addresses_proven, 1);
    /* proven now: the next answer goes at once, without a probe */
    reply_rec again = {0};
    ck_assert_int_eq(mc_bundle_start_request(b, tdef(T_REQ), on_reply, &again, 0), MC_OK);
    mc_bundle_write_u8(b, 2);
    ck_assert_int_eq(mc_bundle_end_message(b), MC_OK);
    ck_assert_int_eq(mc_nub_send_bundle(p.a, mc_nub_address(p.b), b, MC_SEND_RELIABLE_ONCE),
                     MC_OK);
    ck_assert(pump_until(p.base, reply_done, &again, 10));
    ck_assert_int_eq(again.status, MC_REPLY_OK);
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_eq(st.probes_sent, 2);
    mc_bundle_free(b);
    pair_close(&p);
}
END_TEST

/* A victim's view, telling acks (7 bytes) from everything else. */
static seen drain_not_acks(int fd, size_t *acks)
{
    seen s = {0, 0, 0};
    uint8_t buf[2048];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0)
            break;
        if (n == 7 && (mc_load_u16(buf) & 0x0004)) {
            (*acks)++;
            continue;
        }
        s.datagrams++;
        s.bytes += (size_t)n;
        if ((size_t)n > s.largest)
            s.largest = (size_t)n;
    }
    return s;
}

START_TEST(small_replies_spend_the_credit_their_requests_earned)
{
    pair p;
    pair_open(&p, NULL);
    mc_address victim;
    int vfd = victim_socket(&victim);
    uint8_t pk[64];
    /* 100 spoofed requests asking for an echo of nothing: each reply is about as large as
     * its request, so it may leave at once on the credit the request earned; the victim
     * never acknowledges, and resends stop when the credit is spent */
    size_t in = 0;
    for (uint32_t i = 0; i < 100; i++) {
        size_t n = big_request(pk, 500 + i, 2000 + i);
        pk[11] = 1; /* echo */
        ck_assert_int_eq(mc_nub_process_datagram(p.b, &victim, pk, n), MC_OK);
        in += n;
    }
    ck_assert_uint_eq(p.rb.requests, 100);
    pump_for(p.base, 1.5); /* seven once-off resend intervals */
    size_t acks = 0;
    seen v = drain_not_acks(vfd, &acks);
    close(vfd);
    mc_nub_stats st;
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_eq(st.probes_sent, 0);     /* they fit the credit */
    ck_assert_uint_ge(v.datagrams, 50);       /* the replies went */
    ck_assert_uint_le(v.bytes, in);           /* never more than the requests brought */
    ck_assert_uint_eq(acks, 100);
    pair_close(&p);
}
END_TEST

/* The same request opening a channel (CREATE_CHANNEL, sequence 0 = its first sequence
 * number, a nonce). */
static size_t big_request_on_new_channel(uint8_t *pk, uint32_t reply_id)
{
    size_t n = big_request(pk, reply_id, 0); /* [body][first request][seq 0] */
    mc_store_u16(pk, F_ON_CHANNEL | F_CREATE | F_HAS_REQUESTS | F_IS_RELIABLE | F_HAS_SEQ |
                         F_FIRST_SEQ);
    mc_store_u32(pk + n, 0);          /* first sequence number */
    mc_store_u32(pk + n + 4, 0x5EED); /* nonce */
    return n + 8;
}

START_TEST(spoofed_channel_opener_gets_bounded_resends)
{
    pair p;
    pair_open(&p, NULL);
    mc_address victim;
    int vfd = victim_socket(&victim);
    uint8_t pk[64];
    size_t qlen = big_request_on_new_channel(pk, 78);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &victim, pk, qlen), MC_OK);
    ck_assert_uint_eq(p.rb.requests, 1);
    /* long enough for six timer resends (20, 40, 80... ms) of the unacknowledged reply */
    pump_for(p.base, 1.5);
    seen v = drain(vfd);
    close(vfd);
    mc_channel *ch = mc_nub_find_channel(p.b, &victim);
    ck_assert_ptr_nonnull(ch);
    mc_channel_stats cs;
    mc_channel_get_stats(ch, &cs);
    /* one resend for the one packet the "peer" sent; the reply once more at most */
    ck_assert_uint_le(cs.packets_resent, 1);
    ck_assert_uint_le(v.bytes, 2 * (T_REQ_BIG_REPLY + 64) + 64);
    pair_close(&p);
}
END_TEST


/* ---- issue 12: random first sequence numbers (a channel is proof that the peer
 * receives) ---- */
static bool channel_acked(void *ctx) { return mc_channel_unacked(ctx) == 0; }

START_TEST(blind_spoofer_cannot_prove_a_channel)
{
    pair p;
    pair_open(&p, NULL);
    mc_address victim;
    int vfd = victim_socket(&victim);
    uint8_t pk[1100];
    /* a spoofer opens a channel in the victim's name with a request for a big answer */
    size_t qlen = big_request_on_new_channel(pk, 79);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &victim, pk, qlen), MC_OK);
    ck_assert_uint_eq(p.rb.requests, 1);
    mc_channel *ch = mc_nub_find_channel(p.b, &victim);
    ck_assert_ptr_nonnull(ch);
    mc_channel_stats cs;
    mc_channel_get_stats(ch, &cs);
    ck_assert_uint_ge(cs.unacked, 1); /* something went to the victim, unseen by the spoofer */
    uint64_t bad = drops(p.b, MC_DROP_BAD_ACKS);
    /* it acknowledges packet 0, as if sequence numbers started there: refused, counted */
    mc_store_u16(pk, F_ON_CHANNEL | F_CUMULATIVE_ACK);
    mc_store_u32(pk + 2, 1);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &victim, pk, 6), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_BAD_ACKS), bad + 1);
    /* and guesses 255 sequence numbers at once: refused, counted */
    mc_store_u16(pk, F_ON_CHANNEL | 0x0004 /* HAS_ACKS */);
    for (uint32_t i = 0; i < 255; i++)
        mc_store_u32(pk + 2 + 4 * i, i);
    pk[2 + 4 * 255] = 255;
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &victim, pk, 3 + 4 * 255), MC_ERR_DROPPED);
    ck_assert_uint_eq(drops(p.b, MC_DROP_BAD_ACKS), bad + 2);
    mc_channel_get_stats(ch, &cs);
    ck_assert_uint_ge(cs.unacked, 1);
    /* the address is not proven: an off-channel request for a big answer from it waits
     * for a probe instead of being answered */
    mc_nub_stats st;
    mc_nub_get_stats(p.b, &st);
    uint64_t parked = st.replies_parked;
    size_t olen = big_request(pk, 80, 3000);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &victim, pk, olen), MC_OK);
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_eq(st.replies_parked, parked + 1);
    /* who sees the traffic knows the first sequence number and can acknowledge it */
    mc_store_u16(pk, F_ON_CHANNEL | F_CUMULATIVE_ACK);
    mc_store_u32(pk + 2, (cs.first_send_seq + 1) & 0x0FFFFFFFu);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &victim, pk, 6), MC_OK);
    mc_nub_get_stats(p.b, &st);
    parked = st.replies_parked;
    olen = big_request(pk, 81, 3001);
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &victim, pk, olen), MC_OK);
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_eq(st.replies_parked, parked); /* proven: answered at once */
    close(vfd);
    pair_close(&p);
}
END_TEST

START_TEST(channels_start_at_random_sequence_numbers)
{
    pair p;
    pair_open(&p, NULL);
    mc_nub *c;
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.iface = &test_iface;
    ck_assert_int_eq(mc_nub_new(p.base, &cfg, &c), MC_OK);
    mc_channel *ac = mc_nub_channel(p.a, mc_nub_address(c), MC_CHANNEL_INTERNAL);
    send_stream(p.ab, 0, 10, 40);
    ck_assert(wait_received(&p, &p.rb, 10, 10));
    ck_assert(pump_until(p.base, channel_acked, p.ab, 10));
    mc_channel *ba = mc_nub_find_channel(p.b, mc_nub_address(p.a));
    ck_assert_ptr_nonnull(ba);
    mc_channel_stats s1, s2, s3;
    mc_channel_get_stats(p.ab, &s1);
    mc_channel_get_stats(ac, &s2);
    mc_channel_get_stats(ba, &s3);
    /* three channels, three sequence spaces (equal by chance once in 2^28) */
    ck_assert_uint_ne(s1.first_send_seq, s2.first_send_seq);
    ck_assert_uint_ne(s1.first_send_seq, s3.first_send_seq);
    ck_assert_uint_ne(s2.first_send_seq, s3.first_send_seq);
    /* the peer learnt where a's started: everything arrived in order */
    ck_assert_uint_eq(s3.next_recv_seq, s1.next_send_seq);
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    /* a new version of an indexed channel starts a new sequence space */
    mc_channel *ic = mc_nub_indexed_channel(p.a, mc_nub_address(p.b), 9, MC_CHANNEL_INTERNAL);
    send_stream(ic, 10, 5, 40);
    ck_assert(wait_received(&p, &p.rb, 15, 10));
    mc_channel_get_stats(ic, &s1);
    ck_assert_int_eq(mc_channel_reset(ic), MC_OK);
    mc_channel_get_stats(ic, &s2);
    ck_assert_uint_ne(s1.first_send_seq, s2.first_send_seq);
    p.rb.next = 0; /* the stream starts again on the new version */
    send_stream(ic, 0, 5, 40);
    ck_assert(wait_received(&p, &p.rb, 20, 10));
    mc_nub_free(c);
    pair_close(&p);
}
END_TEST

/* ---- issue 12: the first reply on a channel a peer opened is bounded too ---- */
START_TEST(first_reply_on_an_unproven_channel_is_no_larger_than_its_request)
{
    pair p;
    pair_open(&p, NULL);
    mc_address victim;
    int vfd = victim_socket(&victim);
    uint8_t pk[64];
    size_t qlen = big_request_on_new_channel(pk, 82); /* asks for 1200 bytes */
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &victim, pk, qlen), MC_OK);
    ck_assert_uint_eq(p.rb.requests, 1);
    pump_for(p.base, 0.5);
    seen v = drain(vfd);
    close(vfd);
    /* an empty probe carrying the ack (resent once at most: the request earned one
     * resend): never the 1200-byte answer, each datagram smaller than the request */
    ck_assert_uint_ge(v.datagrams, 1);
    ck_assert_uint_le(v.datagrams, 3);
    ck_assert_uint_le(v.largest, qlen);
    mc_channel *ch = mc_nub_find_channel(p.b, &victim);
    ck_assert_ptr_nonnull(ch);
    ck_assert_uint_ge(mc_channel_overflow(ch), 1); /* the answer waits for a proof */

    /* a real peer proves itself by acknowledging the probe and gets its answer */
    reply_rec rr = {0};
    uint8_t ask[1] = {2};
    ck_assert_int_eq(mc_channel_request(p.ab, tdef(T_REQ), ask, 1, on_reply, &rr, 0), MC_OK);
    ck_assert(pump_until(p.base, reply_done, &rr, 10));
    ck_assert_int_eq(rr.status, MC_REPLY_OK);
    ck_assert_uint_eq(rr.len, T_REQ_BIG_REPLY);
    pair_close(&p);
}
END_TEST


/* A new version of an indexed channel a peer opened starts unproven again, with no credit
 * left from the old one (its packets may now come from anywhere). */
static bool peer_idle(void *ctx) { return mc_channel_unacked(ctx) == 0; }

START_TEST(new_version_of_an_accepted_channel_starts_unproven)
{
    pair p;
    /* only where packets are authenticated may a new version move a channel */
    mc_channel *ic, *peer = indexed_pair_open(&p, authenticated, &ic);
    uint8_t note[1] = {1};
    mc_channel_send_message(peer, tdef(T_NOTE), note, 1);
    mc_channel_send(peer);
    ck_assert(pump_until(p.base, peer_idle, peer, 10)); /* a acknowledged: proven */
    /* a newer version from another address moves the channel there */
    mc_address victim;
    int vfd = victim_socket(&victim);
    uint8_t pk[64];
    size_t n = indexed_datagram_no_ack(pk, 42, 5);
    mc_auth auth;
    ck_assert_int_eq(mc_auth_init(&auth, move_secret, false), 0);
    mc_auth_seal(&auth, pk, n, pk + n);
    mc_auth_clear(&auth);
    n += MC_AUTH_OVERHEAD;
    ck_assert_int_eq(mc_nub_process_datagram(p.b, &victim, pk, n), MC_OK);
    ck_assert_uint_eq(mc_channel_version(peer), 5);
    ck_assert(mc_address_equal(mc_channel_address(peer), &victim));
    /* what b has for it waits: the victim sent 10 bytes, less than even a probe */
    uint8_t big[1200];
    memset(big, 3, sizeof big);
    ck_assert_int_eq(mc_channel_send_message(peer, tdef(T_NOTE), big, sizeof big), MC_OK);
    mc_channel_send(peer);
    pump_for(p.base, 0.3);
    seen v = drain(vfd);
    close(vfd);
    ck_assert_uint_le(v.bytes, n);
    ck_assert_uint_ge(mc_channel_overflow(peer), 1);
    pair_close(&p);
}
END_TEST


/* A lost probe goes again on the resend timer: a real peer waiting for its answer is not
 * kept waiting until it sends something again (its resend or keepalive: 8-10 s here). */
static void slow_keepalive(mc_nub_config *cfg, int which)
{
    if (which == 0) {
        cfg->keepalive_interval_us = 10 * MC_US_PER_S;
        cfg->min_resend_delay_us = 8 * MC_US_PER_S;
    }
}

START_TEST(lost_probe_is_resent_without_waiting_for_the_peer)
{
    pair p;
    pair_open(&p, slow_keepalive);
    mc_nub_rehearse_drop_next(p.b, 1); /* b's first datagram: the probe (with its ack) */
    reply_rec rr = {0};
    uint8_t ask[1] = {2};
    ck_assert_int_eq(mc_channel_request(p.ab, tdef(T_REQ), ask, 1, on_reply, &rr, 0), MC_OK);
    ck_assert(pump_until(p.base, reply_done, &rr, 5));
    ck_assert_int_eq(rr.status, MC_REPLY_OK);
    ck_assert_uint_eq(rr.len, T_REQ_BIG_REPLY);
    mc_nub_stats st;
    mc_nub_get_stats(p.b, &st);
    ck_assert_uint_eq(st.rehearsal_dropped, 1);
    ck_assert_uint_ge(st.resends, 1);
    pair_close(&p);
}
END_TEST


/* A peer that accepted our channel and only ever acknowledged (it sent nothing reliable)
 * restarts and opens a channel to us: it knows nothing of our random sequence space, so
 * its packets carry no cumulative ack. That is a restart (not a simultaneous open): our
 * old channel is replaced, and what we send next reaches the new incarnation. */
START_TEST(restart_of_a_peer_that_only_acknowledged_is_recognised)
{
    pair p;
    pair_open(&p, NULL);
    death_rec d = {0};
    mc_nub_set_channel_dead_handler(p.a, on_dead, &d);
    send_stream(p.ab, 0, 50, 40);
    ck_assert(wait_received(&p, &p.rb, 50, 10));
    ck_assert(pump_until(p.base, channel_acked, p.ab, 10));
    pair_restart_b(&p);
    p.rb.next = p.rb.received = 0;
    mc_channel *ba = mc_nub_channel(p.b, mc_nub_address(p.a), MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(ba);
    send_stream(ba, 0, 20, 40);
    ck_assert(wait_received(&p, &p.ra, 20, 10));
    ck_assert(pump_until(p.base, died, &d, 5));
    ck_assert_int_eq(d.reason, MC_CHANNEL_DEATH_PEER_RESTARTED);
    /* a talks to the new incarnation on the channel that replaced the old one */
    mc_channel *ab = mc_nub_channel(p.a, mc_nub_address(p.b), MC_CHANNEL_INTERNAL);
    ck_assert_ptr_nonnull(ab);
    send_stream(ab, 0, 30, 40);
    ck_assert(wait_received(&p, &p.rb, 30, 10));
    ck_assert_uint_eq(p.rb.out_of_order, 0);
    ck_assert_uint_eq(p.ra.out_of_order, 0);
    pair_close(&p);
}
END_TEST

static Suite *regressions_suite(void)
{
    Suite *s = suite_create("mercury_regressions");
    TCase *tc = tcase_create("regressions");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, handlers_of_a_killed_channel_cannot_open_requests_on_it);
    tcase_add_test(tc, invalid_packets_neither_reset_nor_move_an_indexed_channel);
    tcase_add_test(tc, indexed_channel_moves_only_with_an_authenticated_new_version);
    tcase_add_test(tc, reset_in_a_handler_drops_the_rest_of_the_packet);
    tcase_add_test(tc, stalled_fragment_groups_do_not_starve_new_ones);
    tcase_add_test(tc, spoofed_requests_get_no_more_than_they_sent);
    tcase_add_test(tc, spoofed_channel_opener_gets_bounded_resends);
    tcase_add_test(tc, small_replies_spend_the_credit_their_requests_earned);
    tcase_add_test(tc, blind_spoofer_cannot_prove_a_channel);
    tcase_add_test(tc, channels_start_at_random_sequence_numbers);
    tcase_add_test(tc, first_reply_on_an_unproven_channel_is_no_larger_than_its_request);
    tcase_add_test(tc, new_version_of_an_accepted_channel_starts_unproven);
    tcase_add_test(tc, lost_probe_is_resent_without_waiting_for_the_peer);
    tcase_add_test(tc, restart_of_a_peer_that_only_acknowledged_is_recognised);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(regressions_suite)
