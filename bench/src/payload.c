/* Payload pattern and receive-side verification. */
#include "payload.h"

#include <string.h>


static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* A word-at-a-time multiplicative hash over the sequence number and the pattern bytes
 * (8 bytes per step, so checking costs little next to the transport, even for big
 * messages). */
static uint32_t payload_sum(const uint8_t *buf, size_t size)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ load_le32(buf);
    size_t i = 8;
    for (; i + 8 <= size; i += 8) {
        uint64_t word;
        memcpy(&word, buf + i, sizeof word);
        h = (h ^ word) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < size; i++)
        h = (h ^ buf[i]) * 0x100000001b3ull;
    h ^= h >> 32;
    return (uint32_t)h;
}

void bench_payload_fill(uint8_t *buf, size_t size, uint32_t seq)
{
    store_le32(buf, seq);
    for (size_t i = 8; i < size; i++)
        buf[i] = (uint8_t)(seq * 131u + i);
    store_le32(buf + 4, payload_sum(buf, size));
}

void bench_checker_init(bench_checker *c, uint64_t count, size_t size)
{
    memset(c, 0, sizeof *c);
    c->expected_count = count;
    c->size = size;
}

int bench_checker_feed(bench_checker *c, const uint8_t *data, size_t len, bench_report *r)
{
    if (len != c->size || load_le32(data + 4) != payload_sum(data, len)) {
        r->corrupt++;
        return 0;
    }
    uint32_t seq = load_le32(data);
    if (seq != (uint32_t)c->next || c->next >= c->expected_count) {
        if (seq < (uint32_t)c->next || c->next >= c->expected_count)
            r->duplicates++;
        else
            r->misordered++;
        return 0;
    }
    if (c->next == 0)
        r->t_first = mc_clock_now_us();
    c->next++;
    r->count = c->next;
    if (c->next == c->expected_count)
        r->t_last = mc_clock_now_us();
    return 1;
}

int bench_checker_complete(const bench_checker *c, const bench_report *r)
{
    return c->next == c->expected_count && r->duplicates == 0 && r->misordered == 0 &&
           r->corrupt == 0;
}
