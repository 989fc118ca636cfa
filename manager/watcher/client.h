/* The watcher tool's network side: a mercury nub of its own on an ephemeral port, sending
 * off-channel (reliable once-off) requests to the manager and to processes and waiting for
 * their replies in a private libevent loop, each bounded by the timeout. */
#ifndef MC_WATCHER_CLIENT_H
#define MC_WATCHER_CLIENT_H

#include "proto/control.pb-c.h"

#include <stddef.h>
#include <stdint.h>

typedef struct wt_client wt_client;

typedef enum {
    WT_REQ_PENDING = 0,
    WT_REQ_OK,
    WT_REQ_TIMEOUT,
    WT_REQ_FAILED, /* could not send, or the reply did not parse */
} wt_req_state;

/* One outstanding request. After wt_client_wait, state is final; on OK, reply holds the
 * raw reply bytes (heap; free with wt_request_clear). */
typedef struct {
    wt_req_state state;
    uint8_t *reply;
    size_t reply_len;
    char error[160];
} wt_request;

/* A client whose packets carry the cluster secret read from secret_file (NULL: the
 * environment's MC_SECRET_FILE): processes answer nothing without it. NULL with a reason in
 * err on failure (no secret file named, or a bad one). */
wt_client *wt_client_new(unsigned timeout_ms, const char *secret_file, char *err,
                         size_t errlen);
void wt_client_free(wt_client *c);

/* Send control message msg_id (a request) carrying msg to addr ("IP:PORT"). */
void wt_client_send(wt_client *c, const char *addr, uint8_t msg_id, const void *msg,
                    wt_request *req);
/* Run until every request sent so far has finished (answered, timed out or failed). */
void wt_client_wait(wt_client *c);
void wt_request_clear(wt_request *req);

#endif
