/* libFuzzer target for the Mercury receive path: the input is split into datagrams that a
 * fresh nub processes (no socket traffic is needed: mc_nub_process_datagram), some from a
 * peer it has a channel with, some from a stranger.
 *
 * Input layout: byte 0 = options (bit 0 checksums, bit 1 external channel, bit 2 indexed
 * channel, bit 3 structured mode, bit 4 authenticated nubs: the cluster secret's tag on
 * every datagram, checked before parsing), then repeated [u16 length][datagram bytes].
 *
 * Structured mode: a second nub writes real traffic chosen by the input (messages of every
 * length style, requests, oversize and multi-packet messages) on a channel to the fuzzed
 * nub; the datagrams are read straight off the fuzzed nub's socket, mutated with the rest
 * of the input and then processed, so the fuzzer reaches deep states (reassembly, oversize,
 * request chains) that random bytes rarely do. */
#include <stdint.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "common/log.h"
#include "mercury/mercury.h"

static void on_msg(void *ctx, const mc_message_info *info, mc_istream *is)
{
    (void)ctx;
    /* touch every byte the handler is allowed to see */
    size_t n = mc_istream_remaining(is);
    const uint8_t *d = mc_read_bytes(is, n);
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum = (uint8_t)(sum + d[i]);
    if (info->is_request && (n & 1))
        mc_reply(info, d, n > 8 ? 8 : n);
}

static const mc_message_def defs[] = {
    {1, "fixed8", MC_MSG_FIXED, 8, on_msg},   {2, "var1", MC_MSG_VARIABLE, 1, on_msg},
    {3, "var2", MC_MSG_VARIABLE, 2, on_msg},  {4, "var4", MC_MSG_VARIABLE, 4, on_msg},
    {5, "fixed0", MC_MSG_FIXED, 0, on_msg},
};
static const mc_interface iface = MC_INTERFACE("fuzz", defs);

static void noop_reply(void *ctx, mc_reply_status status, const mc_message_info *info,
                       mc_istream *data)
{
    (void)ctx;
    (void)status;
    (void)info;
    (void)data;
}

/* Write traffic chosen by data into gen's channel to `to`, capture what arrives at the
 * fuzzed nub's socket, mutate it with the input and feed it in. */
static void structured(mc_nub *nub, mc_nub *gen, const uint8_t *data, size_t size)
{
    mc_channel *ch = mc_nub_channel(gen, mc_nub_address(nub), MC_CHANNEL_INTERNAL);
    if (!ch || size < 4)
        return;
    mc_bundle *b = mc_channel_bundle(ch);
    size_t pos = 0;
    static const uint32_t lens[] = {0, 3, 254, 255, 256, 1400, 3000, 65535, 70000};
    uint8_t *buf = calloc(1, 70000);
    if (!buf)
        return;
    for (int k = 0; k < 6 && pos + 2 <= size; k++) {
        const mc_message_def *d = &defs[data[pos] % 5];
        uint32_t len = d->style == MC_MSG_FIXED ? d->length : lens[data[pos + 1] % 9];
        if (d->style == MC_MSG_VARIABLE && d->length == 1 && len > 300)
            len = 300;
        pos += 2;
        if (data[pos - 1] & 0x80)
            mc_bundle_start_request(b, d, noop_reply, NULL, 0);
        else
            mc_bundle_start_message(b, d, MC_RELIABLE_DRIVER);
        mc_bundle_write(b, buf, len);
        mc_bundle_end_message(b);
    }
    free(buf);
    mc_channel_send(ch);
    /* read what arrived (loopback delivery is immediate) and feed it mutated */
    uint8_t dg[2048];
    for (int n = 0; n < 128; n++) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t got = recvfrom(mc_nub_fd(nub), dg, sizeof dg, MSG_DONTWAIT,
                               (struct sockaddr *)&from, &fl);
        if (got <= 0)
            break;
        size_t len = (size_t)got;
        if (pos + 3 <= size) {
            /* mutate: xor a byte at a chosen offset, maybe truncate */
            size_t at = ((size_t)data[pos] << 8 | data[pos + 1]) % len;
            dg[at] ^= data[pos + 2];
            if (data[pos + 2] == 0 && len > 2)
                len -= 1 + at % (len - 1);
            pos += 3;
        }
        mc_address src;
        mc_address_from_sockaddr(&from, &src);
        mc_nub_process_datagram(nub, &src, dg, len);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    mc_log_set_level(MC_LOG_CRITICAL);
    uint8_t opts = data[0];
    struct event_base *base = event_base_new();
    if (!base)
        return 0;
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.iface = &iface;
    cfg.checksums = opts & 1;
    cfg.rehearsal_seed = 1;
    cfg.max_overflow_packets = 64;
    static const uint8_t secret[MC_AUTH_SECRET_BYTES] = {7, 7, 7};
    cfg.authenticate = opts & 16;
    memcpy(cfg.auth_secret, secret, sizeof secret);
    mc_nub *nub = NULL;
    if (mc_nub_new(base, &cfg, &nub) != MC_OK) {
        event_base_free(base);
        return 0;
    }
    mc_address peer = {0x7F000001u, 9}; /* discard port: nothing listens */
    mc_address stranger = {0x7F000001u, 13};
    mc_channel *ch;
    if (opts & 4)
        ch = mc_nub_indexed_channel(nub, &peer, 7, MC_CHANNEL_INTERNAL);
    else
        ch = mc_nub_channel(nub, &peer, (opts & 2) ? MC_CHANNEL_EXTERNAL : MC_CHANNEL_INTERNAL);
    /* give the channel something unacked so acks in the input have targets */
    if (ch) {
        uint8_t msg[8] = {0};
        for (int i = 0; i < 3; i++)
            mc_channel_send_message(ch, &defs[0], msg, sizeof msg);
        mc_channel_send(ch);
    }
    if (opts & 8) {
        mc_nub_config gcfg;
        mc_nub_config_init(&gcfg);
        gcfg.checksums = cfg.checksums;
        gcfg.rehearsal_seed = 2;
        gcfg.authenticate = cfg.authenticate;
        memcpy(gcfg.auth_secret, secret, sizeof secret);
        mc_nub *gen = NULL;
        if (mc_nub_new(base, &gcfg, &gen) == MC_OK) {
            structured(nub, gen, data + 1, size - 1);
            mc_nub_free(gen);
        }
        mc_nub_free(nub);
        event_base_free(base);
        return 0;
    }
    size_t pos = 1;
    int k = 0;
    while (pos + 2 <= size && k < 256) {
        size_t n = ((size_t)data[pos] << 8 | data[pos + 1]) % 1600u;
        pos += 2;
        if (n > size - pos)
            n = size - pos;
        mc_nub_process_datagram(nub, (k & 3) == 3 ? &stranger : &peer, data + pos, n);
        pos += n;
        k++;
    }
    mc_nub_free(nub);
    event_base_free(base);
    return 0;
}
