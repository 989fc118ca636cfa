/* libFuzzer target for the control plane's receive side without sockets: arbitrary bytes
 * as a RegisterRequest into the manager's registry, as a WatcherRequest into the watcher
 * service, and as the other control messages' unpackers. Nothing may crash or leak. */
#include "registry.h"
#include "server/pb.h"
#include "server/watcher_service.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static int64_t value = 1;

static bool echo(void *ctx, int argc, const char *const *argv, char **result, char *why,
                 size_t whylen)
{
    *result = NULL;
    return argc < 3;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t kind = data[0] % 4;
    data++;
    size--;
    switch (kind) {
    case 0: {
        mc_registry *r = mc_registry_new(NULL, 3000000);
        Mc__Control__RegisterRequest *q = mc__control__register_request__unpack(NULL, size, data);
        if (r && q) {
            mc_reg_entry *e = NULL;
            char why[256];
            for (int i = 0; i < 3; i++) {
                if (mc_registry_add(r, q, (mc_time_us)i, NULL, NULL, &e, why, sizeof why) ==
                    MC_REG_OK) {
                    Mc__Control__ProcessInfo *info = malloc(sizeof *info);
                    if (info && mc_registry_to_info(e, 10, info)) {
                        size_t n = 0;
                        free(mc_pb_pack(info, &n));
                    }
                    mc_pb_free(info);
                    q->pid++;
                }
            }
            mc_registry_expire(r, 10000000, NULL, NULL);
        }
        mc_pb_free(q);
        mc_registry_free(r);
        break;
    }
    case 1: {
        mc_watchers *w = mc_watchers_new();
        Mc__Control__WatcherRequest *q = mc__control__watcher_request__unpack(NULL, size, data);
        if (w && q) {
            mc_watch_add_int(w, "a/b", &value, MC_WATCH_READ_WRITE);
            mc_watch_add_const_string(w, "role", "fuzz");
            mc_watch_add_callable(w, "command/echo", echo, NULL, "echo");
            Mc__Control__WatcherReply *r = mc_watcher_service_handle(w, q);
            size_t n = 0;
            if (r)
                free(mc_pb_pack(r, &n));
            mc_pb_free(r);
        }
        mc_pb_free(q);
        mc_watchers_free(w);
        break;
    }
    case 2:
        mc_pb_free(mc__control__process_event__unpack(NULL, size, data));
        mc_pb_free(mc__control__query_request__unpack(NULL, size, data));
        break;
    default:
        mc_pb_free(mc__control__query_reply__unpack(NULL, size, data));
        mc_pb_free(mc__control__register_reply__unpack(NULL, size, data));
        mc_pb_free(mc__control__heartbeat__unpack(NULL, size, data));
        break;
    }
    return 0;
}
