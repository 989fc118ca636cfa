/* Test-only hooks into mercury channels (compiled into the tests that need them, never into
 * the library). */
#ifndef MC_TEST_MERCURY_CHANNEL_DEBUG_H
#define MC_TEST_MERCURY_CHANNEL_DEBUG_H

#include <stdint.h>

#include "mercury/mercury.h"

/* Move an idle channel's sequence numbers (to exercise wrap-around). Does nothing while the
 * channel has unacked, queued or buffered packets. */
void test_channel_set_sequences(mc_channel *ch, uint32_t send_seq, uint32_t recv_seq);

#endif
