/* libFuzzer target for the control plane's receive side without sockets: arbitrary bytes
 * as a RegisterRequest into the manager's registry, as a WatcherRequest into the watcher
 * service, as the other control messages' unpackers (and CELL_LOAD's check), and as the replies the watcher tool
 * prints (a hostile manager's QueryReply, a hostile process's WatcherReply, in text and
 * JSON). Nothing may crash or leak. */
#include "args.h"
#include "cells_auto.h"
#include "exit_codes.h"
#include "format.h"
#include "globals.h"
#include "server/server.h"
#include "registry.h"
#include "server/pb.h"
#include "server/watcher_service.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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
    uint8_t kind = data[0] % 6;
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
    case 2: {
        mc_pb_free(mc__control__process_event__unpack(NULL, size, data));
        mc_pb_free(mc__control__query_request__unpack(NULL, size, data));
        mc_pb_free(mc__control__id_range_request__unpack(NULL, size, data));
        mc_pb_free(mc__control__id_range_reply__unpack(NULL, size, data));
        mc_pb_free(mc__control__global_lookup__unpack(NULL, size, data));
        mc_pb_free(mc__control__global_reply__unpack(NULL, size, data));
        /* A cellapp's load report as the manager checks it. */
        mc_cells_load load;
        char why[128];
        mc_cells_auto_parse_load(data, size, &load, why, sizeof why);
        /* A global registration as the manager reads it: name and mailbox checked. */
        Mc__Control__GlobalEntry *g = mc__control__global_entry__unpack(NULL, size, data);
        if (g) {
            mc_mailbox_ref mb;
            mc_globals *table = mc_globals_new(4);
            if (table && mc_server_mailbox_unpack(g->mailbox.data, g->mailbox.len, &mb) &&
                mc_globals_register(table, g->name, &mb, 1) == MC_GLOBALS_OK)
                mc_globals_drop_owner(table, 1);
            mc_globals_free(table);
        }
        mc_pb_free(g);
        break;
    }
    case 4: {
        /* What the watcher tool prints from a reply it cannot trust. */
        Mc__Control__QueryReply *q = mc__control__query_reply__unpack(NULL, size, data);
        FILE *out = fopen("/dev/null", "w");
        if (q && out) {
            wt_print_status(out, false, q);
            wt_print_status(out, true, q);
        }
        if (out)
            fclose(out);
        mc_pb_free(q);
        break;
    }
    case 5: {
        Mc__Control__WatcherReply *r = mc__control__watcher_reply__unpack(NULL, size, data);
        FILE *out = fopen("/dev/null", "w");
        if (r && out) {
            wt_result res[2] = {{.process = "baseapp01", .reply = r},
                                {.process = "cellapp01", .reply = r}};
            res[0].exit_code = wt_exit_for_status(r->status);
            res[1].exit_code = res[0].exit_code;
            snprintf(res[0].error, sizeof res[0].error, "%s", r->error ? r->error : "");
            snprintf(res[1].error, sizeof res[1].error, "%s", r->error ? r->error : "");
            const wt_command cmds[] = {WT_CMD_LS, WT_CMD_GET, WT_CMD_SET, WT_CMD_CALL};
            for (size_t i = 0; i < 8; i++) {
                wt_args a = {.json = i >= 4, .command = cmds[i % 4], .target = "all",
                             .path = "x"};
                wt_print_results(out, out, &a, res, 2);
            }
        }
        if (out)
            fclose(out);
        mc_pb_free(r);
        break;
    }
    default:
        mc_pb_free(mc__control__query_reply__unpack(NULL, size, data));
        mc_pb_free(mc__control__register_reply__unpack(NULL, size, data));
        mc_pb_free(mc__control__heartbeat__unpack(NULL, size, data));
        break;
    }
    return 0;
}
