/* The processes the client tests play against (client_cluster.h). */
#define _POSIX_C_SOURCE 200809L
#include "client_cluster.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/value_json.h"
#include "harness.h"

#define WATCH_MS "15000"
#define MAX_EXTRA 4

long client_cluster_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* argv after its fixed part: the extra options (at most MAX_EXTRA), then NULL. */
static void add_extra(char **argv, size_t at, const char *const *extra)
{
    for (size_t i = 0; extra && extra[i] && i < MAX_EXTRA; i++)
        argv[at++] = (char *)extra[i];
    argv[at] = NULL;
}

void client_cluster_start(client_cluster *c, const char *const *base_opts, bool with_cell,
                          const char *const *cell_opts)
{
    memset(c, 0, sizeof *c);
    const char *dir = h_tmpdir();
    snprintf(c->mlog, sizeof c->mlog, "%s/manager.log", dir);
    snprintf(c->blog, sizeof c->blog, "%s/baseapp.log", dir);
    snprintf(c->clog, sizeof c->clog, "%s/cellapp.log", dir);
    c->mpid = h_start_manager(c->mgr, sizeof c->mgr, c->mlog, NULL);
    ck_assert_msg(c->mpid > 0, "the manager did not start (%s)", c->mlog);
    char bin[512], internal[64], external[64], mopt[64], res[600];
    snprintf(mopt, sizeof mopt, "--manager=%s", c->mgr);
    snprintf(res, sizeof res, "--res=%s/defs", h_source_dir());
    snprintf(internal, sizeof internal, "--internal=127.0.0.1:%d", h_free_port(false));
    snprintf(external, sizeof external, "--external=127.0.0.1:%d", h_free_port(false));
    char *bargv[6 + MAX_EXTRA] = {(char *)h_bin("baseapp", bin, sizeof bin), internal, external,
                                  mopt, res};
    add_extra(bargv, 5, base_opts);
    c->bpid = h_spawn(bargv, c->blog);
    ck_assert_msg(c->bpid > 0 && h_wait_watch(c->mgr, "baseapps", "role", "baseapp", 15000),
                  "the baseapp did not register (%s)", c->blog);
    if (with_cell) {
        char cinternal[64];
        snprintf(cinternal, sizeof cinternal, "--internal=127.0.0.1:%d", h_free_port(false));
        char *cargv[5 + MAX_EXTRA] = {(char *)h_bin("cellapp", bin, sizeof bin), cinternal, mopt,
                                      res};
        add_extra(cargv, 4, cell_opts);
        c->cpid = h_spawn(cargv, c->clog);
        ck_assert_msg(c->cpid > 0 && h_wait_watch(c->mgr, "cellapps", "role", "cellapp", 15000),
                      "the cellapp did not register (%s)", c->clog);
    }
    char err[4096], path[600];
    snprintf(path, sizeof path, "%s/defs", h_source_dir());
    c->defs = mc_defs_load(path, err, sizeof err);
    ck_assert_msg(c->defs != NULL, "%s", err);
}

static void stop_one(pid_t pid, const char *name, const char *log)
{
    if (pid <= 0)
        return;
    h_kill(pid, SIGTERM);
    int st = h_wait_exit(pid, 20000);
    ck_assert_msg(st == 0, "%s exited %d (log %s)", name, st, log);
}

void client_cluster_stop(client_cluster *c)
{
    stop_one(c->bpid, "baseapp", c->blog);
    stop_one(c->cpid, "cellapp", c->clog);
    stop_one(c->mpid, "manager", c->mlog);
    mc_defs_free(c->defs);
    c->defs = NULL;
}

bool client_cluster_watch(const client_cluster *c, const char *proc, const char *verb,
                          const char *path, const char *a1, const char *a2, const char *a3,
                          char *val, size_t n)
{
    char out[16384];
    int rc = h_watcher(out, sizeof out, c->mgr, "--timeout", WATCH_MS, verb, proc, path, a1, a2,
                       a3, NULL);
    const char *p = rc == 0 ? strstr(out, path) : NULL;
    if (!p) {
        snprintf(val, n, "exit %d: %.200s", rc, out);
        return false;
    }
    p += strlen(path);
    while (*p == ' ')
        p++;
    snprintf(val, n, "%.*s", (int)strcspn(p, "\n"), p);
    return true;
}

long long client_cluster_counter(const client_cluster *c, const char *proc, const char *path)
{
    char v[256];
    return client_cluster_watch(c, proc, "get", path, NULL, NULL, NULL, v, sizeof v) ? atoll(v)
                                                                                      : -1;
}

void client_cluster_call_json(const client_cluster *c, mc_client *client, uint16_t type,
                              mc_part part, const char *method, const char *json)
{
    const mc_def_method *m = mc_defs_method_by_name(mc_defs_type(c->defs, type), part, method);
    ck_assert_msg(m != NULL, "no method %s", method);
    mc_value args[8];
    memset(args, 0, sizeof args);
    char why[256];
    ck_assert_msg(m->nargs <= 8, "%s: %zu arguments", method, m->nargs);
    ck_assert_msg(mc_json_to_args(c->defs, m, json, strlen(json), args, why, sizeof why) == 0,
                  "%s", why);
    int rc = mc_client_call(client, part, method, args, m->nargs);
    for (size_t i = 0; i < m->nargs; i++)
        mc_value_free(&args[i]);
    ck_assert_msg(rc == 0, "call %s: %s", method, mc_call_status_name(rc));
}

int32_t client_cluster_create(const client_cluster *c, const char *type, const char *props)
{
    char v[512];
    long deadline = client_cluster_now_ms() + 15000;
    while (client_cluster_now_ms() < deadline) {
        if (client_cluster_watch(c, "baseapp01", "call", "command/createBase", type, props, NULL,
                                 v, sizeof v))
            return (int32_t)atol(v);
        h_sleep_ms(200);
    }
    ck_abort_msg("createBase %s: %s", type, v);
    return 0;
}

mc_client *client_cluster_connect(const client_cluster *c, int32_t account,
                                  const mc_client_callbacks *cb, void *ud)
{
    char ids[16], v[512], hex[80], addr[64];
    snprintf(ids, sizeof ids, "%d", (int)account);
    ck_assert_msg(client_cluster_watch(c, "baseapp01", "call", "command/issueSession", ids, NULL,
                                       NULL, v, sizeof v),
                  "%s", v);
    unsigned long long sid;
    ck_assert_msg(sscanf(v, "%llx %79s %63s", &sid, hex, addr) == 3, "issueSession: %s", v);
    /* idle_ms 10 s: these clients cannot resume (no loginapp), and a test drops half of what
     * the baseapp sends (keepalives too): the library's default silence (3 s) could be faked
     * by losses there */
    mc_client_config cfg = {.baseapp = addr, .session_id = sid, .defs = c->defs, .ud = ud,
                            .timeout_ms = 5000, .idle_ms = 10000, .cb = *cb};
    for (int i = 0; i < 32; i++) {
        unsigned b;
        ck_assert(sscanf(hex + 2 * i, "%2x", &b) == 1);
        cfg.session_key[i] = (uint8_t)b;
    }
    char err[256];
    mc_client *client = mc_client_connect(&cfg, err, sizeof err);
    ck_assert_msg(client != NULL, "%s", err);
    return client;
}
