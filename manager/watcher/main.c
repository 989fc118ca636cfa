/* watcher: read and change the live values of a running Mercury Cluster.
 *
 * Asks the manager which processes TARGET names (QUERY_TARGET), then sends the watcher
 * request to each of them directly at its internal address and prints the answers. */
#include "args.h"
#include "client.h"
#include "common/log.h"
#include "exit_codes.h"
#include "format.h"
#include "server/control.h"
#include "server/pb.h"
#include "server/watcher_service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const wt_args *a, int code, const char *msg)
{
    wt_print_error(stdout, stderr, a->json, code, msg);
    return code;
}

/* Ask the manager; returns the reply or NULL with *code and msg set. */
static Mc__Control__QueryReply *query(wt_client *c, const wt_args *a, Mc__Control__QueryKind kind,
                                      const char *name, int *code, char *msg, size_t msglen)
{
    Mc__Control__QueryRequest q = MC__CONTROL__QUERY_REQUEST__INIT;
    q.kind = kind;
    q.name = (char *)(name ? name : "");
    wt_request req;
    wt_client_send(c, a->manager, MC_CTL_QUERY, &q, &req);
    wt_client_wait(c);
    if (req.state != WT_REQ_OK) {
        *code = req.state == WT_REQ_TIMEOUT ? WT_EXIT_TIMEOUT : WT_EXIT_FAILURE;
        snprintf(msg, msglen, "manager %s (from %s): %s", a->manager, a->manager_source,
                 req.state == WT_REQ_PENDING ? "no answer in time" : req.error);
        if (req.state == WT_REQ_PENDING)
            *code = WT_EXIT_TIMEOUT;
        wt_request_clear(&req);
        return NULL;
    }
    Mc__Control__QueryReply *r = mc__control__query_reply__unpack(NULL, req.reply_len, req.reply);
    wt_request_clear(&req);
    if (!r) {
        *code = WT_EXIT_FAILURE;
        snprintf(msg, msglen, "manager %s: malformed answer", a->manager);
        return NULL;
    }
    if (r->status != MC__CONTROL__QUERY_STATUS__QUERY_OK) {
        *code = r->status == MC__CONTROL__QUERY_STATUS__QUERY_NO_MATCH ? WT_EXIT_UNKNOWN_PROCESS
                                                                      : WT_EXIT_FAILURE;
        snprintf(msg, msglen, "unknown process '%s': %s", name ? name : "",
                 r->reason && *r->reason ? r->reason : "no match");
        mc_pb_free(r);
        return NULL;
    }
    return r;
}

static Mc__Control__WatcherOp op_for(wt_command cmd)
{
    switch (cmd) {
    case WT_CMD_LS: return MC__CONTROL__WATCHER_OP__WATCHER_LS;
    case WT_CMD_GET: return MC__CONTROL__WATCHER_OP__WATCHER_GET;
    case WT_CMD_SET: return MC__CONTROL__WATCHER_OP__WATCHER_SET;
    case WT_CMD_CALL: return MC__CONTROL__WATCHER_OP__WATCHER_CALL;
    default: return MC__CONTROL__WATCHER_OP__WATCHER_UNKNOWN;
    }
}

static int run_watcher(wt_client *c, const wt_args *a)
{
    int code = 0;
    char msg[1024];
    Mc__Control__WatcherRequest wr = MC__CONTROL__WATCHER_REQUEST__INIT;
    wr.op = op_for(a->command);
    wr.path = (char *)a->path;
    wr.n_args = (size_t)a->nargs;
    wr.args = a->args;
    size_t size = protobuf_c_message_get_packed_size(&wr.base);
    if (size > MC_CTL_MAX_PAYLOAD) {
        snprintf(msg, sizeof msg, "the request is too large (%zu bytes; at most %u)", size,
                 MC_CTL_MAX_PAYLOAD);
        return fail(a, WT_EXIT_USAGE, msg);
    }
    Mc__Control__QueryReply *targets =
        query(c, a, MC__CONTROL__QUERY_KIND__QUERY_TARGET, a->target, &code, msg, sizeof msg);
    if (!targets)
        return fail(a, code, msg);
    size_t n = targets->n_processes;
    wt_request *reqs = calloc(n, sizeof *reqs);
    wt_result *results = calloc(n, sizeof *results);
    if (!reqs || !results) {
        free(reqs);
        free(results);
        mc_pb_free(targets);
        return fail(a, WT_EXIT_FAILURE, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        wt_client_send(c, targets->processes[i]->internal_addr, MC_CTL_WATCHER, &wr, &reqs[i]);
    wt_client_wait(c);
    for (size_t i = 0; i < n; i++) {
        wt_result *r = &results[i];
        r->process = targets->processes[i]->name;
        if (reqs[i].state != WT_REQ_OK) {
            r->exit_code = reqs[i].state == WT_REQ_FAILED ? WT_EXIT_FAILURE : WT_EXIT_TIMEOUT;
            snprintf(r->error, sizeof r->error, "%s",
                     reqs[i].state == WT_REQ_PENDING ? "no answer in time" : reqs[i].error);
            continue;
        }
        r->reply = mc__control__watcher_reply__unpack(NULL, reqs[i].reply_len, reqs[i].reply);
        if (!r->reply) {
            r->exit_code = WT_EXIT_FAILURE;
            snprintf(r->error, sizeof r->error, "malformed answer");
            continue;
        }
        r->exit_code = wt_exit_for_status(r->reply->status);
        if (r->exit_code != WT_EXIT_OK)
            snprintf(r->error, sizeof r->error, "%s: %s", mc_wire_status_name(r->reply->status),
                     r->reply->error && *r->reply->error ? r->reply->error : "failed");
    }
    code = wt_print_results(stdout, stderr, a, results, n);
    for (size_t i = 0; i < n; i++) {
        mc_pb_free(results[i].reply);
        wt_request_clear(&reqs[i]);
    }
    free(results);
    free(reqs);
    mc_pb_free(targets);
    return code;
}

static int run_status(wt_client *c, const wt_args *a)
{
    int code = 0;
    char msg[1024];
    Mc__Control__QueryReply *all =
        query(c, a, MC__CONTROL__QUERY_KIND__QUERY_ALL, NULL, &code, msg, sizeof msg);
    if (!all)
        return fail(a, code, msg);
    wt_print_status(stdout, a->json, all);
    mc_pb_free(all);
    return WT_EXIT_OK;
}

int main(int argc, char **argv)
{
    mc_log_set_process_name("watcher");
    mc_log_set_level(MC_LOG_WARNING);
    wt_args a;
    char err[300];
    if (wt_args_parse(&a, argc, argv, err, sizeof err) != 0) {
        fprintf(stderr, "watcher: %s\n", err);
        return WT_EXIT_USAGE;
    }
    if (a.help) {
        wt_args_usage("watcher");
        return WT_EXIT_OK;
    }
    wt_client *c = wt_client_new(a.timeout_ms, a.secret_file, err, sizeof err);
    if (!c)
        return fail(&a, WT_EXIT_FAILURE, err);
    int code = a.command == WT_CMD_STATUS ? run_status(c, &a) : run_watcher(c, &a);
    wt_client_free(c);
    fflush(stdout);
    return code;
}
