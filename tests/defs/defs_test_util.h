/* Helpers for the defs tests: temporary resource folders written by the test. */
#ifndef MC_DEFS_TEST_UTIL_H
#define MC_DEFS_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "common/game_module.h"

/* Create a fresh temporary directory; returns a heap path. */
char *tu_mkdtemp(void);
/* Write text to dir/rel, creating parent directories. Returns 0 or -1. */
int tu_write(const char *dir, const char *rel, const char *text);
/* Remove a directory tree. */
void tu_rmtree(const char *dir);
/* Copy the example game's resource folder (MC_SOURCE_DIR/defs) into a new temp dir. */
char *tu_copy_example(void);
/* Path of the example game's resource folder into out[len]; returns out. */
const char *tu_example_res(char *out, size_t len);
/* Read a whole file (heap, NUL-terminated) or NULL. */
char *tu_read(const char *path);
/* Replace the first occurrence of from by to in dir/rel. Returns 0 or -1 (not found). */
int tu_replace(const char *dir, const char *rel, const char *from, const char *to);

/* A call sink (mc_call_sink's send) that records the last call: where it went, which part
 * and method index, and its argument bytes (calls of more than 4096 bytes are refused). */
typedef struct {
    int calls;
    mc_mailbox_ref to;
    mc_part part;
    uint16_t index;
    uint8_t bytes[4096];
    size_t len;
    /* two-way calls (capture_request): what the engine would call back later */
    mc_reply_fn on_reply;
    void *cb;
    void *ud;
    int request_status; /* what capture_request returns (0: records the call) */
    mc_clients fan_out_to; /* capture_fan_out: the target (to stays as it was) */
} capture;
int capture_send(void *ctx, const mc_mailbox_ref *to, mc_part part, uint16_t index,
                 const uint8_t *args, size_t len);
/* mc_call_sink's request: records the call as capture_send does, plus the reply trampoline,
 * callback and user data; returns c->request_status instead when it is not 0. */
int capture_request(void *ctx, const mc_mailbox_ref *to, mc_part part, uint16_t index,
                    const uint8_t *args, size_t len, mc_reply_fn on_reply, void *cb, void *ud);
/* mc_call_sink's fan_out: records the call (part MC_PART_CLIENT) and its mc_clients. */
int capture_fan_out(void *ctx, const mc_clients *to, uint16_t index, const uint8_t *args,
                    size_t len);

#endif
