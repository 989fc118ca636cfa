/* The processes and players of the client tests of one space over two cellapps
 * (cells_cluster.h). */
#define _POSIX_C_SOURCE 200809L
#include "cells_cluster.h"

#include <check.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/value_json.h"
#include "harness.h"

#define WAIT_MS 30000

const char *cells_cellapp(int i)
{
    return i == 0 ? "cellapp01" : i == 1 ? "cellapp02" : "cellapp03";
}

static bool watch(const cells_cluster *c, const char *proc, const char *verb, const char *path,
                  const char *a1, const char *a2, const char *a3, char *val, size_t n)
{
    return client_cluster_watch(&c->cc, proc, verb, path, a1, a2, a3, val, n);
}

static pid_t start_cellapp(cells_cluster *c, int i, const char *log)
{
    char bin[512], internal[64], mopt[64], res[600];
    snprintf(c->cell_addr[i], sizeof c->cell_addr[i], "127.0.0.1:%d", h_free_port(false));
    snprintf(internal, sizeof internal, "--internal=%s", c->cell_addr[i]);
    snprintf(mopt, sizeof mopt, "--manager=%s", c->cc.mgr);
    snprintf(res, sizeof res, "--res=%s/defs", h_source_dir());
    char *argv[] = {(char *)h_bin("cellapp", bin, sizeof bin), internal, mopt, res,
                    "--maxClientSpeed=50", NULL};
    pid_t pid = h_spawn(argv, log);
    char v[256];
    long deadline = client_cluster_now_ms() + WAIT_MS;
    bool up = false;
    while (pid > 0 && !up && client_cluster_now_ms() < deadline) {
        up = watch(c, cells_cellapp(i), "get", "entityIds/ranges", NULL, NULL, NULL, v,
                   sizeof v) &&
             atoll(v) >= 1;
        if (!up)
            h_sleep_ms(100);
    }
    ck_assert_msg(up, "%s did not register (%s)", cells_cellapp(i), log);
    return pid;
}

void cells_cluster_start(cells_cluster *c) { cells_cluster_start_n(c, 2); }

void cells_cluster_start_n(cells_cluster *c, int n)
{
    memset(c, 0, sizeof *c);
    client_cluster *cc = &c->cc;
    const char *dir = h_tmpdir();
    snprintf(cc->mlog, sizeof cc->mlog, "%s/manager.log", dir);
    snprintf(cc->blog, sizeof cc->blog, "%s/baseapp.log", dir);
    snprintf(cc->clog, sizeof cc->clog, "%s/cellapp01.log", dir);
    snprintf(c->clog2, sizeof c->clog2, "%s/cellapp02.log", dir);
    snprintf(c->clog3, sizeof c->clog3, "%s/cellapp03.log", dir);
    cc->mpid = h_start_manager(cc->mgr, sizeof cc->mgr, cc->mlog, "--cellBalanceMs=0",
                               "--cellBalanceHysteresis=0", "--cellBalanceStepM=3", NULL);
    ck_assert_msg(cc->mpid > 0, "the manager did not start (%s)", cc->mlog);
    char bin[512], internal[64], external[64], mopt[64], res[600];
    snprintf(mopt, sizeof mopt, "--manager=%s", cc->mgr);
    snprintf(res, sizeof res, "--res=%s/defs", h_source_dir());
    snprintf(internal, sizeof internal, "--internal=127.0.0.1:%d", h_free_port(false));
    snprintf(external, sizeof external, "--external=127.0.0.1:%d", h_free_port(false));
    char *bargv[] = {(char *)h_bin("baseapp", bin, sizeof bin), internal, external, mopt, res,
                     NULL};
    cc->bpid = h_spawn(bargv, cc->blog);
    ck_assert_msg(cc->bpid > 0 && h_wait_watch(cc->mgr, "baseapps", "role", "baseapp", 15000),
                  "the baseapp did not register (%s)", cc->blog);
    cc->cpid = start_cellapp(c, 0, cc->clog);
    c->cpid2 = start_cellapp(c, 1, c->clog2);
    if (n > 2)
        c->cpid3 = start_cellapp(c, 2, c->clog3);
    char err[4096], path[600];
    snprintf(path, sizeof path, "%s/defs", h_source_dir());
    cc->defs = mc_defs_load(path, err, sizeof err);
    ck_assert_msg(cc->defs != NULL, "%s", err);
}

void cells_cluster_stop(cells_cluster *c)
{
    if (c->cpid3 > 0) {
        h_kill(c->cpid3, SIGTERM);
        int st = h_wait_exit(c->cpid3, 20000);
        ck_assert_msg(st == 0, "cellapp03 exited %d (log %s)", st, c->clog3);
    }
    if (c->cpid2 > 0) {
        h_kill(c->cpid2, SIGTERM);
        int st = h_wait_exit(c->cpid2, 20000);
        ck_assert_msg(st == 0, "cellapp02 exited %d (log %s)", st, c->clog2);
    }
    client_cluster_stop(&c->cc);
}

/* ---- players ------------------------------------------------------------------------------ */

bool cells_pump(cells_player *ps, int n, int ms, cells_cond cond, const void *arg)
{
    long deadline = client_cluster_now_ms() + ms;
    struct pollfd pf[8];
    ck_assert_int_le(n, 8);
    while (client_cluster_now_ms() < deadline) {
        for (int i = 0; i < n; i++)
            pf[i] = (struct pollfd){.fd = mc_client_fd(ps[i].c), .events = POLLIN};
        poll(pf, (nfds_t)n, MC_CLIENT_TICK_MS);
        for (int i = 0; i < n; i++)
            mc_client_tick(ps[i].c);
        if (cond && cond(ps, n, arg))
            return true;
    }
    return cond == NULL;
}

static bool all_avatars(cells_player *ps, int n, const void *arg)
{
    (void)arg;
    for (int i = 0; i < n; i++)
        if (ps[i].type != 1 || !mc_client_entity_of(ps[i].c, ps[i].id))
            return false;
    return true;
}

int32_t cells_enter_world(cells_cluster *c, cells_player *ps, int n)
{
    int32_t space = client_cluster_create(&c->cc, "Space", "{\"spaceName\":\"world\"}");
    for (int i = 0; i < n; i++) {
        char props[128];
        snprintf(props, sizeof props, "{\"accountName\":\"player%d\"}", i);
        client_player_connect(&ps[i], &c->cc,
                              client_cluster_create(&c->cc, "Account", props));
    }
    cells_pump(ps, n, 500, NULL, NULL);
    for (int i = 0; i < n; i++) {
        char json[64];
        snprintf(json, sizeof json, "[\"Hero%d\",[1,2,3,4]]", i);
        client_cluster_call_json(&c->cc, ps[i].c, ps[i].type, MC_PART_BASE, "createAvatar", json);
    }
    cells_pump(ps, n, 1000, NULL, NULL);
    for (int i = 0; i < n; i++) {
        char json[64];
        snprintf(json, sizeof json, "[\"Hero%d\"]", i);
        client_cluster_call_json(&c->cc, ps[i].c, ps[i].type, MC_PART_BASE, "selectAvatar", json);
    }
    ck_assert_msg(cells_pump(ps, n, WAIT_MS, all_avatars, NULL), "the players' avatars (%s)",
                  c->cc.blog);
    return space;
}

void cells_leave_world(cells_player *ps, int n)
{
    for (int i = 0; i < n; i++)
        mc_client_close(ps[i].c);
    for (int i = 0; i < n; i++)
        mc_client_free(ps[i].c);
}

/* ---- cells -------------------------------------------------------------------------------- */

int cells_settled_holder(cells_cluster *c, int32_t id)
{
    char p[96], v[512];
    int holder = -1, reals = 0;
    snprintf(p, sizeof p, "entities/%d/real", (int)id);
    for (int i = 0; i < 2; i++)
        if (watch(c, cells_cellapp(i), "get", p, NULL, NULL, NULL, v, sizeof v) &&
            strstr(v, "here")) {
            holder = i;
            reals++;
        }
    if (reals != 1)
        return -1;
    if (!watch(c, cells_cellapp(1 - holder), "get", p, NULL, NULL, NULL, v, sizeof v) ||
        !strstr(v, c->cell_addr[holder]))
        return -1;
    snprintf(p, sizeof p, "entities/%d/cell", (int)id);
    if (!watch(c, "baseapp01", "get", p, NULL, NULL, NULL, v, sizeof v) ||
        !strstr(v, c->cell_addr[holder]))
        return -1;
    return holder;
}

void cells_wait_settled_on(cells_cluster *c, cells_player *ps, int n, int32_t id, int i)
{
    long deadline = client_cluster_now_ms() + WAIT_MS;
    while (client_cluster_now_ms() < deadline) {
        if (cells_settled_holder(c, id) == i)
            return;
        cells_pump(ps, n, 100, NULL, NULL);
    }
    ck_abort_msg("entity %d never settled as a real on %s", (int)id, cells_cellapp(i));
}

int32_t cells_space_of(cells_cluster *c, int32_t id, int *holder)
{
    char p[96], v[256];
    snprintf(p, sizeof p, "entities/%d/real", (int)id);
    for (int i = 0; i < (c->cpid3 > 0 ? 3 : 2); i++)
        if (watch(c, cells_cellapp(i), "get", p, NULL, NULL, NULL, v, sizeof v) &&
            strstr(v, "here")) {
            *holder = i;
            snprintf(p, sizeof p, "entities/%d/space", (int)id);
            ck_assert(watch(c, cells_cellapp(i), "get", p, NULL, NULL, NULL, v, sizeof v));
            return (int32_t)atol(v);
        }
    ck_abort_msg("no cellapp holds entity %d", (int)id);
    return 0;
}

void cells_split(cells_cluster *c, int32_t space, int to, const char *at)
{
    char sp[32], v[1024];
    snprintf(sp, sizeof sp, "%d", (int)space);
    ck_assert_msg(watch(c, "manager", "call", "command/splitSpace", sp, cells_cellapp(to), at, v,
                        sizeof v),
                  "splitSpace %s %s %s: %s", sp, cells_cellapp(to), at, v);
    char p[64];
    snprintf(p, sizeof p, "spaces/%d/cell", (int)space);
    long deadline = client_cluster_now_ms() + WAIT_MS;
    while (client_cluster_now_ms() < deadline) {
        if (watch(c, cells_cellapp(to), "get", p, NULL, NULL, NULL, v, sizeof v) &&
            strstr(v, "x[") && !strstr(v, "x[-inf,inf)"))
            return;
        h_sleep_ms(100);
    }
    ck_abort_msg("%s never heard its cell of space %d: %s", cells_cellapp(to), (int)space, v);
}

void cells_walk(cells_player *ps, int n, cells_player *p, float x, float z, float yaw)
{
    const mc_client_entity *me = mc_client_entity_of(p->c, p->id);
    ck_assert_ptr_nonnull(me);
    mc_vector3 at = me->position;
    for (;;) {
        float dx = x - at.x, dz = z - at.z, d = sqrtf(dx * dx + dz * dz);
        float k = d > 10.0f ? 10.0f / d : 1.0f;
        at.x += dx * k;
        at.z += dz * k;
        ck_assert_int_eq(mc_client_move(p->c, at, (mc_vector3){0, 0, yaw}), 0);
        cells_pump(ps, n, 300, NULL, NULL);
        if (k == 1.0f)
            return;
    }
}
