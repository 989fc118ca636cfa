/* The Keeper cluster of the persistence tests (persist_cluster.h). */
#include "persist_cluster.h"

#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MC_KEEPER_RES
#error "MC_KEEPER_RES (the Keeper game's res folder) must be defined"
#endif
#ifndef MC_KEEPER_GAME
#error "MC_KEEPER_GAME (mc_game_keeper.so) must be defined"
#endif

static void wait_registered(pc_cluster *c, const char *log)
{
    char want[64];
    snprintf(want, sizeof want, "counts/registrations  %d\n", ++c->registrations);
    ck_assert_msg(h_wait_watch(c->manager, "manager", "counts/registrations", want, 20000),
                  "process did not register (log %s)", log);
}

static pid_t spawn(pc_cluster *c, const char *role, const char *addr, const char *log,
                   const char *extra)
{
    char bin[512], internal[64], external[64], mopt[64], ropt[600], gopt[600], redis[200];
    snprintf(internal, sizeof internal, "--internal=%s", addr);
    snprintf(external, sizeof external, "--external=127.0.0.1:%d", h_free_port(false));
    snprintf(mopt, sizeof mopt, "--manager=%s", c->manager);
    snprintf(ropt, sizeof ropt, "--res=%s", c->res);
    snprintf(gopt, sizeof gopt, "--game=%s", c->game);
    /* Several addresses: the seeds of a Redis Cluster. */
    snprintf(redis, sizeof redis, "--%s=%s", strchr(c->redis, ',') ? "redisCluster" : "redis",
             c->redis);
    bool base = strcmp(role, "baseapp") == 0;
    char *argv[12];
    int n = 0;
    argv[n++] = (char *)h_bin(role, bin, sizeof bin);
    argv[n++] = internal;
    argv[n++] = mopt;
    argv[n++] = ropt;
    argv[n++] = gopt;
    if (base) {
        argv[n++] = external;
        argv[n++] = redis;
        /* These tests rehearse deaths without base backups (a dead baseapp's bases come
         * back only from Redis) unless the extra option turns them on. */
        if (!(extra && strstr(extra, "--backup")))
            argv[n++] = "--backupPeriodMs=0";
        if (extra)
            argv[n++] = (char *)extra;
    }
    argv[n] = NULL;
    pid_t pid = h_spawn(argv, log);
    ck_assert_int_gt(pid, 0);
    return pid;
}

int pc_add_baseapp(pc_cluster *c, const char *base_opt)
{
    ck_assert(c->nbase < PC_MAX_BASE);
    int i = c->nbase++;
    snprintf(c->base_addr[i], sizeof c->base_addr[i], "127.0.0.1:%d", h_free_port(false));
    snprintf(c->log_base[i], sizeof c->log_base[i], "%s/baseapp%d.log", c->dir, i + 1);
    c->base[i] = spawn(c, "baseapp", c->base_addr[i], c->log_base[i], base_opt);
    wait_registered(c, c->log_base[i]);
    /* The manager numbers each role's processes in the order they register. */
    snprintf(c->base_name[i], sizeof c->base_name[i], "baseapp%02d", i + 1);
    /* Bases need ids (and an owner name): wait until it holds a range. */
    for (int waited = 0;; waited += 100) {
        char v[64];
        if (pc_value(c, c->base_name[i], "entityIds/ranges", v, sizeof v) && atoi(v) >= 1)
            break;
        ck_assert_msg(waited < 20000, "%s got no entity ids (log %s)", c->base_name[i],
                      c->log_base[i]);
        h_sleep_ms(100);
    }
    return i;
}

void pc_start(pc_cluster *c, const char *redis_addr, int nbase, const char *base_opt)
{
    pc_start_game(c, redis_addr, nbase, base_opt, MC_KEEPER_RES, MC_KEEPER_GAME);
}

void pc_start_game(pc_cluster *c, const char *redis_addr, int nbase, const char *base_opt,
                   const char *res, const char *game)
{
    memset(c, 0, sizeof *c);
    c->res = res;
    c->game = game;
    snprintf(c->redis, sizeof c->redis, "%s", redis_addr);
    snprintf(c->dir, sizeof c->dir, "%s", h_tmpdir());
    snprintf(c->manager, sizeof c->manager, "127.0.0.1:%d", h_free_port(false));
    snprintf(c->log_mgr, sizeof c->log_mgr, "%s/manager.log", c->dir);
    char bin[512], internal[64], ropt[600];
    snprintf(internal, sizeof internal, "--internal=%s", c->manager);
    snprintf(ropt, sizeof ropt, "--res=%s", c->res);
    char *argv[] = {(char *)h_bin("manager", bin, sizeof bin), internal, ropt, NULL};
    c->mgr = h_spawn(argv, c->log_mgr);
    ck_assert_msg(c->mgr > 0 && h_wait_watch(c->manager, "manager", "role", "manager", 20000),
                  "the manager did not answer (log %s)", c->log_mgr);
    for (int i = 0; i < nbase; i++)
        pc_add_baseapp(c, base_opt);
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", h_free_port(false));
    snprintf(c->log_cell, sizeof c->log_cell, "%s/cellapp.log", c->dir);
    c->cell = spawn(c, "cellapp", addr, c->log_cell, NULL);
    wait_registered(c, c->log_cell);
    snprintf(c->cell_name, sizeof c->cell_name, "cellapp01");
}

void pc_add_cellapp(pc_cluster *c)
{
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", h_free_port(false));
    snprintf(c->log_cell2, sizeof c->log_cell2, "%s/cellapp2.log", c->dir);
    c->cell2 = spawn(c, "cellapp", addr, c->log_cell2, NULL);
    wait_registered(c, c->log_cell2);
}

static void stop_one(pid_t *pid, const char *what, const char *log)
{
    if (*pid <= 0)
        return;
    ck_assert_msg(h_alive(*pid), "%s died before its shutdown (log %s)", what, log);
    h_kill(*pid, SIGTERM);
    int rc = h_wait_exit(*pid, 30000);
    ck_assert_msg(rc == 0, "%s exited %d after SIGTERM, not 0 (log %s)", what, rc, log);
    *pid = -1;
}

void pc_stop_baseapp(pc_cluster *c, int slot)
{
    stop_one(&c->base[slot], c->base_name[slot], c->log_base[slot]);
}

void pc_stop(pc_cluster *c)
{
    stop_one(&c->cell, "cellapp", c->log_cell);
    stop_one(&c->cell2, "cellapp02", c->log_cell2);
    for (int i = 0; i < c->nbase; i++)
        stop_one(&c->base[i], c->base_name[i], c->log_base[i]);
    stop_one(&c->mgr, "manager", c->log_mgr);
}

int pc_call(pc_cluster *c, char *out, size_t outlen, const char *proc, const char *path,
            const char *a1, const char *a2, const char *a3)
{
    /* loads may wait (--loadWaitMs, look-agains, owner grace): a generous bound under load */
    return h_watcher(out, outlen, c->manager, "--timeout", "20000", "call", proc, path, a1, a2,
                     a3, NULL);
}

bool pc_result(const char *output, const char *path, char *out, size_t outlen)
{
    const char *p = strstr(output, path);
    if (!p)
        return false;
    p += strlen(path);
    while (*p == ' ')
        p++;
    size_t n = strcspn(p, "\n");
    snprintf(out, outlen, "%.*s", (int)n, p);
    return true;
}

bool pc_value(pc_cluster *c, const char *proc, const char *path, char *out, size_t outlen)
{
    char buf[8192];
    /* a loaded process may answer late (1,000 bots under ASan beside other tests) */
    return h_watcher(buf, sizeof buf, c->manager, "--timeout", "20000", "get", proc, path,
                     NULL) == 0 &&
           pc_result(buf, path, out, outlen);
}

long long pc_int(pc_cluster *c, const char *proc, const char *path)
{
    char v[256];
    ck_assert_msg(pc_value(c, proc, path, v, sizeof v), "get %s %s failed", proc, path);
    char *end;
    long long n = strtoll(v, &end, 10);
    ck_assert_msg(end != v, "get %s %s: '%s' is not a number", proc, path, v);
    return n;
}

bool pc_wait_int(pc_cluster *c, const char *proc, const char *path, long long want,
                 int timeout_ms)
{
    for (int waited = 0; waited <= timeout_ms; waited += 100) {
        char v[256];
        if (pc_value(c, proc, path, v, sizeof v) && strtoll(v, NULL, 10) == want)
            return true;
        h_sleep_ms(100);
    }
    return false;
}

bool pc_prop(pc_cluster *c, const char *proc, int32_t id, const char *prop, char *out,
             size_t outlen)
{
    char path[128];
    snprintf(path, sizeof path, "entities/%d/props/%s", (int)id, prop);
    return pc_value(c, proc, path, out, outlen);
}

long long pc_prop_int(pc_cluster *c, const char *proc, int32_t id, const char *prop)
{
    char path[128];
    snprintf(path, sizeof path, "entities/%d/props/%s", (int)id, prop);
    return pc_int(c, proc, path);
}

void pc_invoke(pc_cluster *c, const char *proc, int32_t id, const char *method,
               const char *json_args)
{
    char ids[32], buf[8192];
    snprintf(ids, sizeof ids, "%d", (int)id);
    int rc = pc_call(c, buf, sizeof buf, proc, "command/call", ids, method,
                     json_args ? json_args : "[]");
    ck_assert_msg(rc == 0, "call %s %d %s %s: exit %d: %s", proc, (int)id, method,
                  json_args ? json_args : "", rc, buf);
}

int32_t pc_create(pc_cluster *c, const char *proc, const char *json_props)
{
    char buf[8192], v[256];
    int rc = pc_call(c, buf, sizeof buf, proc, "command/createBase", "Keeper", json_props, NULL);
    ck_assert_msg(rc == 0 && pc_result(buf, "command/createBase", v, sizeof v),
                  "createBase on %s: exit %d: %s", proc, rc, buf);
    int id = atoi(v);
    ck_assert_msg(id > 0 && strstr(v, "(Keeper)"), "createBase: %s", v);
    return id;
}

uint64_t pc_write(pc_cluster *c, const char *proc, int32_t id, char *why, size_t whylen)
{
    char ids[32], buf[8192], v[256];
    snprintf(ids, sizeof ids, "%d", (int)id);
    int rc = pc_call(c, buf, sizeof buf, proc, "command/writeToDB", ids, NULL, NULL);
    if (rc != 0 || !pc_result(buf, "command/writeToDB", v, sizeof v)) {
        snprintf(why, whylen, "exit %d: %s", rc, buf);
        return 0;
    }
    return strtoull(v, NULL, 10);
}

int pc_load(pc_cluster *c, const char *proc, const char *command, const char *key, char *out,
            size_t outlen)
{
    char path[96], buf[8192];
    snprintf(path, sizeof path, "command/%s", command);
    int rc = pc_call(c, buf, sizeof buf, proc, path, "Keeper", key, NULL);
    if (rc != 0 || !pc_result(buf, path, out, outlen))
        snprintf(out, outlen, "%s", buf);
    return rc;
}
