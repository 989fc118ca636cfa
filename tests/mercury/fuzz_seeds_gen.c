/* mercury-fuzz-seeds: writes the seed corpus of fuzz_mercury_receive (tests/mercury/
 * fuzz_seeds/) from real traffic.
 *
 * Two nubs talk through an in-process tap (two plain UDP sockets on 127.0.0.1 that record
 * and forward every datagram); each scenario's datagrams, both directions in the order the
 * tap saw them, become one seed in the fuzz target's input layout: an options byte, then
 * [u16 length][datagram] repeated. Scenarios: an internal channel with every length style,
 * requests and replies, oversize and multi-packet messages (with and without checksums);
 * an external channel under loss (piggybacks); an indexed channel reset mid-stream; and
 * off-channel unreliable, once-off, fragmented and request traffic.
 *
 * Usage: mercury-fuzz-seeds DIR. Exit 0 when every seed was written. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/stream.h"
#include "mercury/mercury.h"

#define MAX_SEED_BYTES 100000u

static void on_msg(void *ctx, const mc_message_info *info, mc_istream *is)
{
    (void)ctx;
    size_t n = mc_istream_remaining(is);
    const uint8_t *d = mc_read_bytes(is, n);
    if (info->is_request)
        mc_reply(info, d, n > 8 ? 8 : n);
}

/* the same interface as fuzz_receive.c */
static const mc_message_def defs[] = {
    {1, "fixed8", MC_MSG_FIXED, 8, on_msg},   {2, "var1", MC_MSG_VARIABLE, 1, on_msg},
    {3, "var2", MC_MSG_VARIABLE, 2, on_msg},  {4, "var4", MC_MSG_VARIABLE, 4, on_msg},
    {5, "fixed0", MC_MSG_FIXED, 0, on_msg},
};
static const mc_interface iface = MC_INTERFACE("fuzz", defs);

typedef struct {
    struct event_base *base;
    int fa, fb;          /* tap sockets: fa faces nub a, fb faces nub b */
    mc_address a_addr, b_addr, fa_addr, fb_addr;
    uint8_t *seed;
    size_t seed_len;
    int datagrams;
} tap;

static void record(tap *t, const uint8_t *d, size_t n)
{
    if (t->seed_len + 2 + n > MAX_SEED_BYTES)
        return;
    mc_store_u16(t->seed + t->seed_len, (uint16_t)n);
    memcpy(t->seed + t->seed_len + 2, d, n);
    t->seed_len += 2 + n;
    t->datagrams++;
}

/* Forward what arrived on `from` to `to_addr` through `via`. */
static void forward(tap *t, int from, int via, const mc_address *to_addr)
{
    uint8_t buf[2048];
    struct sockaddr_in to;
    mc_address_to_sockaddr(to_addr, &to);
    for (;;) {
        ssize_t n = recv(from, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0)
            return;
        record(t, buf, (size_t)n);
        (void)sendto(via, buf, (size_t)n, 0, (struct sockaddr *)&to, sizeof to);
    }
}

static void on_fa(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    tap *t = arg;
    forward(t, t->fa, t->fb, &t->b_addr); /* from a, on to b */
}

static void on_fb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    tap *t = arg;
    forward(t, t->fb, t->fa, &t->a_addr); /* from b, back to a */
}

static int udp_socket(mc_address *bound)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        close(fd);
        return -1;
    }
    mc_address_from_sockaddr(&sa, bound);
    return fd;
}

/* Run the loop for about `ms` milliseconds (bounded by the nubs' 5 ms ticks). */
static void run(struct event_base *base, int ms)
{
    mc_time_us end = mc_clock_now_us() + (mc_time_us)ms * MC_US_PER_MS;
    for (int i = 0; i < 100000 && mc_clock_now_us() < end; i++)
        event_base_loop(base, EVLOOP_ONCE);
}

static void noop_reply(void *ctx, mc_reply_status status, const mc_message_info *info,
                       mc_istream *data)
{
    (void)ctx;
    (void)status;
    (void)info;
    (void)data;
}

static void put(mc_bundle *b, int def, size_t len, bool request)
{
    static uint8_t buf[70000];
    for (size_t i = 0; i < len && i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 7u + 3u);
    if (request)
        mc_bundle_start_request(b, &defs[def], noop_reply, NULL, 0);
    else
        mc_bundle_start_message(b, &defs[def], MC_RELIABLE_DRIVER);
    mc_bundle_write(b, buf, len);
    mc_bundle_end_message(b);
}

typedef enum { SC_INTERNAL, SC_CHECKSUMS, SC_EXTERNAL, SC_INDEXED, SC_OFF_CHANNEL } scenario;

static const struct {
    scenario sc;
    const char *name;
    uint8_t opts; /* fuzz_receive.c: bit 0 checksums, bit 1 external, bit 2 indexed */
} scenarios[] = {
    {SC_INTERNAL, "seed_internal", 0},   {SC_CHECKSUMS, "seed_checksums", 1},
    {SC_EXTERNAL, "seed_external", 2},   {SC_INDEXED, "seed_indexed", 4},
    {SC_OFF_CHANNEL, "seed_off_channel", 0},
};

static void traffic(scenario sc, mc_nub *a, mc_nub *b, const mc_address *to_b,
                    struct event_base *base)
{
    (void)b;
    if (sc == SC_OFF_CHANNEL) {
        mc_bundle *ob = mc_bundle_new(a);
        put(ob, 4, 0, false);
        mc_nub_send_bundle(a, to_b, ob, MC_SEND_UNRELIABLE);
        put(ob, 2, 300, true); /* a request, answered off-channel after a probe */
        mc_nub_send_bundle(a, to_b, ob, MC_SEND_RELIABLE_ONCE);
        put(ob, 3, 5000, false); /* a fragment group */
        mc_nub_send_bundle(a, to_b, ob, MC_SEND_RELIABLE_ONCE);
        mc_bundle_free(ob);
        run(base, 300);
        return;
    }
    mc_channel *ch;
    if (sc == SC_INDEXED)
        ch = mc_nub_indexed_channel(a, to_b, 7, MC_CHANNEL_INTERNAL);
    else
        ch = mc_nub_channel(a, to_b, sc == SC_EXTERNAL ? MC_CHANNEL_EXTERNAL
                                                        : MC_CHANNEL_INTERNAL);
    if (!ch)
        return;
    mc_bundle *cb = mc_channel_bundle(ch);
    if (sc == SC_EXTERNAL) {
        /* b's acks are lost for a while: unacked packets age and ride along as piggybacks */
        mc_rehearsal r = {0};
        r.loss = 1.0;
        mc_nub_set_rehearsal(b, &r);
        /* a message every 4 ms (a client's tick): new packets often go out before the
         * timer resends a due one, which then rides along (every 30 ms the 5 ms timer
         * always came first and the seed had no piggybacks) */
        for (int i = 0; i < 80; i++) {
            put(cb, 0, 8, false);
            mc_channel_send(ch);
            run(base, 4);
        }
        r.loss = 0;
        mc_nub_set_rehearsal(b, &r);
        run(base, 200);
        return;
    }
    put(cb, 0, 8, false);
    put(cb, 1, 254, false);
    put(cb, 1, 300, false); /* oversize in a 1-byte field */
    put(cb, 2, 3000, true); /* a request spanning packets */
    put(cb, 3, 65600, false); /* oversize in a 2-byte field, many fragments */
    put(cb, 4, 0, true);
    put(cb, 3, 10, true);
    /* the first packet is lost: b buffers the rest and acknowledges them selectively */
    mc_nub_rehearse_drop_next(a, 1);
    mc_channel_send(ch);
    run(base, 200);
    if (sc == SC_INDEXED) {
        mc_channel_reset(ch);
        put(cb, 0, 8, false);
        put(cb, 2, 20, true);
        mc_channel_send(ch);
        run(base, 200);
    }
}

static int write_seed(const char *dir, const char *name, const uint8_t *d, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(d, 1, n, f) != n) {
        fprintf(stderr, "mercury-fuzz-seeds: cannot write %s: %s\n", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

static int one(const char *dir, scenario sc, const char *name, uint8_t opts)
{
    tap t;
    memset(&t, 0, sizeof t);
    t.base = event_base_new();
    t.seed = malloc(MAX_SEED_BYTES);
    t.fa = udp_socket(&t.fa_addr);
    t.fb = udp_socket(&t.fb_addr);
    if (!t.base || !t.seed || t.fa < 0 || t.fb < 0) {
        fprintf(stderr, "mercury-fuzz-seeds: setup failed\n");
        return -1;
    }
    t.seed[0] = opts;
    t.seed_len = 1;
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.iface = &iface;
    cfg.checksums = sc == SC_CHECKSUMS;
    cfg.rehearsal_seed = 5;
    mc_nub *a = NULL, *b = NULL;
    if (mc_nub_new(t.base, &cfg, &a) != MC_OK || mc_nub_new(t.base, &cfg, &b) != MC_OK) {
        fprintf(stderr, "mercury-fuzz-seeds: cannot create nubs\n");
        return -1;
    }
    t.a_addr = *mc_nub_address(a);
    t.b_addr = *mc_nub_address(b);
    struct event *ea = event_new(t.base, t.fa, EV_READ | EV_PERSIST, on_fa, &t);
    struct event *eb = event_new(t.base, t.fb, EV_READ | EV_PERSIST, on_fb, &t);
    event_add(ea, NULL);
    event_add(eb, NULL);
    traffic(sc, a, b, &t.fa_addr, t.base); /* a talks to the tap, which stands for b */
    int rc = t.datagrams > 0 ? write_seed(dir, name, t.seed, t.seed_len) : -1;
    printf("%s: %d datagrams, %zu bytes\n", name, t.datagrams, t.seed_len);
    event_free(ea);
    event_free(eb);
    mc_nub_free(a);
    mc_nub_free(b);
    close(t.fa);
    close(t.fb);
    free(t.seed);
    event_base_free(t.base);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: mercury-fuzz-seeds DIR (writes the fuzz_mercury_receive seeds)\n");
        return argc == 2 && strcmp(argv[1], "--help") == 0 ? 0 : 2;
    }
    mc_log_set_process_name("mercury-fuzz-seeds");
    mc_log_set_level(MC_LOG_ERROR);
    int failed = 0;
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        failed |= one(argv[1], scenarios[i].sc, scenarios[i].name, scenarios[i].opts) != 0;
    return failed ? 1 : 0;
}
