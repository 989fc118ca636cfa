/* The bench message payload and the receiver's exactly-once, in-order check.
 *
 * A message of S bytes (S >= BENCH_PAYLOAD_MIN) carries its sequence number (4 bytes, little
 * endian), a 32-bit hash of everything else, then a pattern derived from the sequence
 * number. The checker counts in-order deliveries and classifies anything else as a
 * duplicate (sequence already seen), misordered (sequence ahead of the next expected one) or
 * corrupt (wrong length or checksum).
 */
#ifndef MC_BENCH_PAYLOAD_H
#define MC_BENCH_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

#define BENCH_PAYLOAD_MIN 8u
#define BENCH_PAYLOAD_MAX (1u << 20)

/* Fill `buf` (size bytes) with message number `seq`. */
void bench_payload_fill(uint8_t *buf, size_t size, uint32_t seq);

typedef struct {
    uint64_t expected_count; /* N */
    size_t size;             /* S */
    uint64_t next;           /* next expected sequence == messages delivered in order */
} bench_checker;

void bench_checker_init(bench_checker *c, uint64_t count, size_t size);

/* Check one received message, updating counters in `r` (count, duplicates, misordered,
 * corrupt; t_first on the first message, t_last on the last one, so the clock is read twice
 * per run, not per message). Returns 1 when the message was the next one in order. */
int bench_checker_feed(bench_checker *c, const uint8_t *data, size_t len, bench_report *r);

/* True when all N messages arrived in order and nothing else arrived. */
int bench_checker_complete(const bench_checker *c, const bench_report *r);

#endif
