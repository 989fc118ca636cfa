/* persist-bench's baseapp part (baseapp_part.h). */
#include "baseapp_part.h"
#include "mercury/auth.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/clock.h"
#include "proc.h"

typedef struct {
    const pb_baseapp_opts *o;
    char manager[32];
    char watcher[600];
} ctx;

/* `watcher --manager M get baseapp01 PATH`: the value (last word of its line), or -1. */
static long long watch_get(ctx *c, const char *path)
{
    char mopt[64], out[1024];
    snprintf(mopt, sizeof mopt, "--manager=%s", c->manager);
    char *argv[] = {c->watcher, mopt, "get", "baseapp01", (char *)path, NULL};
    if (pb_run(argv, out, sizeof out, 10000) != 0)
        return -1;
    char *last = NULL;
    for (char *t = strtok(out, " \t\r\n"); t; t = strtok(NULL, " \t\r\n"))
        last = t;
    if (!last)
        return -1;
    char *end;
    long long v = strtoll(last, &end, 10);
    return *end ? -1 : v;
}

int pb_baseapp_run(const pb_baseapp_opts *o, pb_baseapp_result *res, char *why, size_t whylen)
{
    memset(res, 0, sizeof *res);
    ctx c = {.o = o};
    snprintf(c.watcher, sizeof c.watcher, "%s/watcher", o->bin_dir);
    int mport = pb_free_port(), bport = pb_free_port(), eport = pb_free_port();
    if (mport <= 0 || bport <= 0 || eport <= 0) {
        snprintf(why, whylen, "no free ports");
        return -1;
    }
    snprintf(c.manager, sizeof c.manager, "127.0.0.1:%d", mport);
    /* the private cluster's secret (the manager, the baseapp and the watcher find it through
     * MC_SECRET_FILE); removed with the run dir */
    char secret[700], serr[256];
    snprintf(secret, sizeof secret, "%s/secret", o->dir);
    unlink(secret);
    if (mc_auth_make_secret_file(secret, serr, sizeof serr) != 0 ||
        setenv("MC_SECRET_FILE", secret, 1) != 0) {
        snprintf(why, whylen, "cluster secret: %s", serr);
        return -1;
    }
    char mbin[600], bbin[600], mlog[600], blog[600], internal[64], binternal[64], external[64],
        mopt[64], ropt[700], gopt[700], redis[200];
    snprintf(mbin, sizeof mbin, "%s/manager", o->bin_dir);
    snprintf(bbin, sizeof bbin, "%s/baseapp", o->bin_dir);
    snprintf(mlog, sizeof mlog, "%s/manager.log", o->dir);
    snprintf(blog, sizeof blog, "%s/baseapp.log", o->dir);
    snprintf(internal, sizeof internal, "--internal=%s", c.manager);
    snprintf(binternal, sizeof binternal, "--internal=127.0.0.1:%d", bport);
    snprintf(external, sizeof external, "--external=127.0.0.1:%d", eport);
    snprintf(mopt, sizeof mopt, "--manager=%s", c.manager);
    snprintf(ropt, sizeof ropt, "--res=%s", o->res);
    snprintf(gopt, sizeof gopt, "--game=%s", o->game);
    snprintf(redis, sizeof redis, "--redis=%s", o->redis);
    char *margv[] = {mbin, internal, ropt, NULL};
    char *bargv[] = {bbin, binternal, external, mopt, ropt, gopt, redis,
                     "--archivePeriodS=0", NULL};
    pid_t mgr = pb_spawn(margv, mlog), base = -1;
    int rc = -1;
    if (mgr <= 0) {
        snprintf(why, whylen, "cannot start %s", mbin);
        goto out;
    }
    base = pb_spawn(bargv, blog);
    if (base <= 0) {
        snprintf(why, whylen, "cannot start %s", bbin);
        goto out;
    }
    /* Registered, holding entity ids, connected to Redis. */
    bool up = false;
    for (int i = 0; i < 300 && !up; i++) {
        up = watch_get(&c, "entityIds/ranges") >= 1 && watch_get(&c, "db/writesOk") == 0;
        if (!up)
            pb_sleep_ms(100);
    }
    if (!up) {
        snprintf(why, whylen, "the baseapp did not come up (logs %s, %s)", mlog, blog);
        goto out;
    }
    unsigned long long target = (unsigned long long)o->heroes * o->writes_each;
    char props[200], callopt[64];
    snprintf(props, sizeof props, "{\"name\":\"spawner\",\"spawnCount\":%u,\"spawnWrites\":%u}",
             o->heroes, o->writes_each);
    snprintf(callopt, sizeof callopt, "--manager=%s", c.manager);
    char *cargv[] = {c.watcher, callopt, "--timeout", "60000", "call", "baseapp01",
                     "command/createBase", "Hero", props, NULL};
    double cpu0 = pb_cpu_us(base);
    mc_time_us t0 = mc_clock_now_us();
    char out[2048];
    if (pb_run(cargv, out, sizeof out, 70000) != 0) {
        snprintf(why, whylen, "createBase failed: %.200s (log %s)", out, blog);
        goto out;
    }
    /* Poll the counter (each poll runs the watcher tool: not too often, it takes CPU from
     * the processes measured); failures every tenth poll. */
    long long ok = 0, failed = 0;
    mc_time_us limit = t0 + 600 * MC_US_PER_S;
    for (unsigned polls = 1; (unsigned long long)ok < target && mc_clock_now_us() < limit;
         polls++) {
        pb_sleep_ms(50);
        ok = watch_get(&c, "db/writesOk");
        if (polls % 10 == 0)
            failed = watch_get(&c, "db/writesFailed");
        if (ok < 0 || failed < 0) {
            snprintf(why, whylen, "the baseapp stopped answering (log %s)", blog);
            goto out;
        }
        if (failed > 0)
            break;
    }
    res->seconds = (double)(mc_clock_now_us() - t0) / 1e6;
    double cpu1 = pb_cpu_us(base);
    if (failed == 0)
        failed = watch_get(&c, "db/writesFailed");
    res->writes = (unsigned long long)ok;
    res->failed = (unsigned long long)failed;
    if ((unsigned long long)ok < target) {
        snprintf(why, whylen, "%lld of %llu writes acknowledged, %lld failed (log %s)", ok,
                 target, failed, blog);
        goto out;
    }
    res->writes_per_s = res->seconds > 0 ? (double)ok / res->seconds : 0;
    res->cpu_us_per_write = cpu0 >= 0 && cpu1 >= 0 ? (cpu1 - cpu0) / (double)ok : -1;
    rc = 0;
out:
    /* A graceful stop writes every entity once more (bounded by --shutdownWriteMs). */
    if (base > 0)
        pb_stop(base, 15000);
    if (mgr > 0)
        pb_stop(mgr, 5000);
    return rc;
}
