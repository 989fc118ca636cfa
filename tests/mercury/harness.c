/* Test scaffolding for the Mercury suites (see harness.h). */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/stream.h"

static void on_seq(void *ctx, const mc_message_info *info, mc_istream *is);
static void on_var(void *ctx, const mc_message_info *info, mc_istream *is);
static void on_req(void *ctx, const mc_message_info *info, mc_istream *is);
static void on_note(void *ctx, const mc_message_info *info, mc_istream *is);

#define TEST_IFACE(X)                                                                       \
    X(T_SEQ_, T_SEQ, MC_FIXED(8), on_seq)                                                   \
    X(T_VAR1_, T_VAR1, MC_VARIABLE(1), on_var)                                              \
    X(T_VAR2_, T_VAR2, MC_VARIABLE(2), on_var)                                              \
    X(T_VAR4_, T_VAR4, MC_VARIABLE(4), on_var)                                              \
    X(T_REQ_, T_REQ, MC_VARIABLE(2), on_req)                                                \
    X(T_NOTE_, T_NOTE, MC_VARIABLE(2), on_note)

static const mc_message_def test_defs[] = {TEST_IFACE(MC_DEF_WITH_HANDLER)};
const mc_interface test_iface = MC_INTERFACE("test", test_defs);

const mc_message_def *tdef(uint8_t id) { return mc_interface_find(&test_iface, id); }

void pattern_fill(uint8_t *buf, size_t n, uint32_t counter)
{
    size_t i = 0;
    if (n >= 4) {
        mc_store_u32(buf, counter);
        i = 4;
    }
    for (; i < n; i++)
        buf[i] = (uint8_t)(counter * 131u + i * 7u + (i >> 8));
}

bool pattern_check(const uint8_t *buf, size_t n, uint32_t counter)
{
    size_t i = 0;
    if (n >= 4) {
        if (mc_load_u32(buf) != counter)
            return false;
        i = 4;
    }
    for (; i < n; i++)
        if (buf[i] != (uint8_t)(counter * 131u + i * 7u + (i >> 8)))
            return false;
    return true;
}

static recv_state *state_of(const mc_message_info *info, void *ctx)
{
    pair *p = ctx;
    return info->nub == p->a ? &p->ra : &p->rb;
}

static void account(recv_state *r, uint32_t counter)
{
    if (counter < r->base) {
        r->stale_seen++;
        return;
    }
    if (counter != r->next)
        r->out_of_order++;
    r->next = (uint64_t)counter + 1;
    r->received++;
}

static void on_seq(void *ctx, const mc_message_info *info, mc_istream *is)
{
    recv_state *r = state_of(info, ctx);
    uint32_t stream = mc_read_u32(is);
    uint32_t counter = mc_read_u32(is);
    if (!mc_istream_done(is) || stream != 7)
        r->bad_content++;
    account(r, counter);
}

static void on_var(void *ctx, const mc_message_info *info, mc_istream *is)
{
    recv_state *r = state_of(info, ctx);
    size_t n = mc_istream_remaining(is);
    const uint8_t *d = mc_read_bytes(is, n);
    r->last_length = n;
    if (r->lengths_seen < 32)
        r->lengths[r->lengths_seen++] = (uint32_t)n;
    if (n < 4) {
        /* tiny messages carry no counter: only the pattern */
        if (!pattern_check(d, n, 0))
            r->bad_content++;
        r->received++;
        return;
    }
    uint32_t counter = mc_load_u32(d);
    if (!pattern_check(d, n, counter))
        r->bad_content++;
    account(r, counter);
}

static void on_req(void *ctx, const mc_message_info *info, mc_istream *is)
{
    recv_state *r = state_of(info, ctx);
    r->requests++;
    r->last_reply_id = info->reply_id;
    uint8_t mode = mc_read_u8(is);
    size_t n = mc_istream_remaining(is);
    const uint8_t *d = mc_read_bytes(is, n);
    if (!info->is_request)
        r->bad_content++;
    if (mode == 1 && info->is_request)
        mc_reply(info, d, n);
    if (mode == 2 && info->is_request) {
        uint8_t big[T_REQ_BIG_REPLY];
        pattern_fill(big, sizeof big, 0);
        mc_reply(info, big, sizeof big);
    }
}

static void on_note(void *ctx, const mc_message_info *info, mc_istream *is)
{
    (void)is;
    state_of(info, ctx)->notes++;
}

void pair_open(pair *p, void (*cfg_tweak)(mc_nub_config *cfg, int which))
{
    memset(p, 0, sizeof(*p));
    p->base = event_base_new();
    for (int which = 0; which < 2; which++) {
        mc_nub_config cfg;
        mc_nub_config_init(&cfg);
        cfg.iface = &test_iface;
        cfg.handler_ctx = p;
        cfg.rehearsal_seed = 1234 + (uint64_t)which;
        if (cfg_tweak)
            cfg_tweak(&cfg, which);
        mc_nub **out = which == 0 ? &p->a : &p->b;
        if (mc_nub_new(p->base, &cfg, out) != MC_OK) {
            fprintf(stderr, "cannot create nub\n");
            abort();
        }
    }
    p->ab = mc_nub_channel(p->a, mc_nub_address(p->b), MC_CHANNEL_INTERNAL);
}

void pair_restart_b(pair *p)
{
    char addr[MC_ADDRESS_STRLEN];
    mc_address_format(mc_nub_address(p->b), addr, sizeof addr);
    mc_nub_free(p->b);
    p->b = NULL;
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.bind = addr;
    cfg.iface = &test_iface;
    cfg.handler_ctx = p;
    cfg.rehearsal_seed = 4321;
    if (mc_nub_new(p->base, &cfg, &p->b) != MC_OK) {
        fprintf(stderr, "cannot reopen a nub on %s\n", addr);
        abort();
    }
}

void pair_close(pair *p)
{
    mc_nub_free(p->a);
    mc_nub_free(p->b);
    event_base_free(p->base);
}

bool pump_until(struct event_base *base, bool (*pred)(void *), void *ctx, double seconds)
{
    mc_time_us end = mc_clock_now_us() + (mc_time_us)(seconds * 1e6);
    for (long i = 0; i < 100000000L; i++) {
        if (pred && pred(ctx))
            return true;
        if (mc_clock_now_us() >= end)
            break;
        event_base_loop(base, EVLOOP_ONCE);
    }
    return pred ? pred(ctx) : true;
}

void pump_for(struct event_base *base, double seconds) { pump_until(base, NULL, NULL, seconds); }

void send_stream(mc_channel *ch, uint32_t first, uint32_t count, size_t size)
{
    uint8_t *buf = malloc(size < 8 ? 8 : size);
    if (!buf)
        abort();
    for (uint32_t i = 0; i < count; i++) {
        uint32_t c = first + i;
        if (size == 8) {
            mc_store_u32(buf, 7);
            mc_store_u32(buf + 4, c);
            mc_channel_send_message(ch, tdef(T_SEQ), buf, 8);
        } else {
            pattern_fill(buf, size, c);
            mc_channel_send_message(ch, tdef(T_VAR4), buf, size);
        }
    }
    free(buf);
    mc_channel_send(ch);
}

typedef struct {
    recv_state *r;
    uint64_t total;
} wait_ctx;

static bool got_all(void *arg)
{
    wait_ctx *w = arg;
    return w->r->received >= w->total;
}

bool wait_received(pair *p, recv_state *r, uint64_t total, double seconds)
{
    wait_ctx w = {r, total};
    return pump_until(p->base, got_all, &w, seconds);
}

void on_reply(void *ctx, mc_reply_status status, const mc_message_info *info,
              mc_istream *data)
{
    reply_rec *r = ctx;
    r->calls++;
    r->status = status;
    if (status != MC_REPLY_OK)
        return;
    if (!info || !data) {
        r->info_missing++;
        return;
    }
    r->len = mc_istream_remaining(data);
    if (r->len <= sizeof r->data)
        mc_read_into(data, r->data, r->len);
}

bool reply_done(void *ctx) { return ((reply_rec *)ctx)->calls > 0; }

mc_time_us fake_clock_now(void *ctx)
{
    fake_clock *fc = ctx;
    mc_clock_set_source(NULL, NULL);
    mc_time_us now = mc_clock_now_us();
    mc_clock_set_source(fake_clock_now, fc);
    return now + fc->offset;
}

mc_time_us frozen_clock_now(void *ctx) { return ((frozen_clock *)ctx)->at; }

bool pump_loops_until(struct event_base *base, bool (*pred)(void *), void *ctx, int loops)
{
    for (int i = 0; i < loops; i++) {
        if (pred(ctx))
            return true;
        event_base_loop(base, EVLOOP_ONCE);
    }
    return pred(ctx);
}

void on_dead(void *ctx, mc_channel *ch, mc_channel_death reason)
{
    (void)ch;
    death_rec *d = ctx;
    d->deaths++;
    d->reason = reason;
}

bool died(void *ctx) { return ((death_rec *)ctx)->deaths > 0; }
