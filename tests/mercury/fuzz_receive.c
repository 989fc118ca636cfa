/* libFuzzer target for the Mercury receive path: the input is split into datagrams that a
 * fresh nub processes (no socket traffic is needed: mc_nub_process_datagram), some from a
 * peer it has a channel with, some from a stranger.
 *
 * Input layout: byte 0 = options (bit 0 checksums, bit 1 external channel, bit 2 indexed
 * channel), then repeated [u16 length][datagram bytes]. */
#include <stdint.h>
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
