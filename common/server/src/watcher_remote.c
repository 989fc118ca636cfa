/* Asking another process for a watcher operation on the channel to it
 * (mc_server_ask_watcher): what the manager's console uses to browse every process. */
#include "server_internal.h"
#include "common/log.h"
#include "server/pb.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    mc_server_watcher_fn fn;
    void *ctx;
} watcher_wait;

static void on_watcher_reply(mc_server *s, int status, const uint8_t *data, size_t len,
                             void *arg)
{
    watcher_wait *w = arg;
    Mc__Control__WatcherReply *r =
        status == MC_REPLY_OK ? mc__control__watcher_reply__unpack(NULL, len, data) : NULL;
    if (status == MC_REPLY_OK && !r)
        MC_WARNING("malformed watcher reply");
    w->fn(s, w->ctx, r);
    mc_pb_free(r);
    free(w);
}

int mc_server_ask_watcher(mc_server *s, const char *addr,
                              const Mc__Control__WatcherRequest *req, uint64_t timeout_ms,
                              mc_server_watcher_fn fn, void *ctx)
{
    mc_address a;
    if (!fn || !addr || mc_address_parse(addr, &a) != MC_OK || a.port == 0 ||
        strcmp(addr, s->internal_addr) == 0)
        return MC_ERR_INVALID;
    watcher_wait *w = malloc(sizeof *w);
    if (!w)
        return MC_ERR_NO_MEMORY;
    w->fn = fn;
    w->ctx = ctx;
    int rc = mc_server_send_request(s, &a, MC_CTL_WATCHER, req, on_watcher_reply, w,
                                    timeout_ms * MC_US_PER_MS, false);
    if (rc != MC_OK)
        free(w);
    return rc;
}
