/* persist-bench: entity writes and loads per second through the persistence data layer
 * (the mc_persist store a baseapp uses, pipelined on one connection), against redis-benchmark's
 * own SET rate on the same Redis in the same run (docs/tools/persist-bench.md). A benchmark,
 * not a test. */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <getopt.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "persist/store.h"

#include "baseapp_part.h"
#include "proc.h"

typedef struct {
    const char *redis;        /* existing Redis, or NULL to start one */
    const char *res;
    unsigned entities, writes, loads, window;
    unsigned heroes, hero_writes; /* the baseapp part; heroes 0: skipped */
} bench_opts;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: persist-bench [--redis IP:PORT] [--writes N] [--loads N] [--entities N]\n"
        "                     [--window N] [--heroes N] [--hero-writes N] [--res DIR]\n"
        "Writes and loads entities with 20 persistent properties through the persistence\n"
        "layer in this process (pipelined, at most --window requests in flight), then through\n"
        "one baseapp (a manager and a baseapp started here: --heroes entities each writing\n"
        "itself --hero-writes times with writeToDB; --heroes 0 skips it), then runs\n"
        "redis-benchmark's SET on the same Redis; prints the rates and\n"
        "'ratio persist/redis: X.XX' (baseapp writes / SET).\n"
        "Without --redis it starts a private redis-server on a free loopback port.\n"
        "Defaults: --writes 200000 --loads 200000 --entities 1000 --window 1000\n"
        "--heroes 1000 --hero-writes 100.\n");
}

/* --- a private redis-server ------------------------------------------------------------- */

static bool redis_ping(const char *host, int port)
{
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    bool ok = false;
    if (c && !c->err) {
        redisReply *r = redisCommand(c, "PING");
        ok = r && r->type == REDIS_REPLY_STATUS;
        if (r)
            freeReplyObject(r);
    }
    if (c)
        redisFree(c);
    return ok;
}

/* --- the entity ------------------------------------------------------------------------- */

static int make_values(const mc_entity_type_def *t, mc_value *v, unsigned i)
{
    for (size_t p = 0; p < t->nprops; p++) {
        if (mc_value_copy(&v[p], &t->props[p].default_value) != 0)
            return -1;
        const char *n = t->props[p].name;
        mc_value *x = &v[p];
        char buf[64];
        switch (x->kind) {
        case MC_TYPE_STRING:
        case MC_TYPE_UNICODE_STRING:
            if (strcmp(n, "name") == 0)
                snprintf(buf, sizeof buf, "hero%u", i);
            else
                snprintf(buf, sizeof buf, "%s of hero %u", n, i);
            mc_value_free(x);
            if (mc_value_set_bytes(x, t->props[p].type->kind, buf, strlen(buf)) != 0)
                return -1;
            break;
        case MC_TYPE_INT8: case MC_TYPE_INT16: case MC_TYPE_INT32: case MC_TYPE_INT64:
            x->as.i = (int64_t)(i % 100) + (int64_t)p;
            break;
        case MC_TYPE_UINT8: case MC_TYPE_UINT16: case MC_TYPE_UINT32: case MC_TYPE_UINT64:
            x->as.u = (uint64_t)(i % 200) + p;
            break;
        case MC_TYPE_FLOAT32: case MC_TYPE_FLOAT64:
            x->as.f = i * 0.5 + (double)p;
            break;
        case MC_TYPE_VECTOR3:
            x->as.vec[0] = (float)i;
            x->as.vec[1] = 1.5f;
            x->as.vec[2] = -2.0f;
            break;
        case MC_TYPE_ARRAY:
            for (int k = 0; k < 8; k++) {
                mc_value item = {.kind = t->props[p].type->of->kind};
                item.as.i = k * 3 + (int)(i % 7);
                if (item.kind == MC_TYPE_UINT16)
                    item.as.u = (uint64_t)(k + 1);
                if (mc_value_append(x, &item) != 0)
                    return -1;
            }
            break;
        default:
            break;
        }
    }
    return 0;
}

typedef struct {
    struct event_base *base;
    mc_persist_store *store;
    const mc_entity_type_def *type;
    mc_value **values;      /* per entity */
    uint64_t *dbids;
    char (*tokens)[40];
    unsigned entities;
    uint64_t done, failed, in_flight;
    char last_error[256];
} bench;

static void created(void *ctx, const mc_persist_result *r)
{
    bench *b = ((void **)ctx)[0];
    unsigned i = (unsigned)(uintptr_t)((void **)ctx)[1];
    free(ctx);
    b->in_flight--;
    b->done++;
    if (r->status != MC_PERSIST_OK) {
        b->failed++;
        snprintf(b->last_error, sizeof b->last_error, "%s", r->reason);
        return;
    }
    b->dbids[i] = r->dbid;
    snprintf(b->tokens[i], sizeof b->tokens[i], "%s", r->token);
}

static void counted(void *ctx, const mc_persist_result *r)
{
    bench *b = ctx;
    b->in_flight--;
    b->done++;
    if (r->status != MC_PERSIST_OK) {
        b->failed++;
        snprintf(b->last_error, sizeof b->last_error, "%s", r->reason);
    }
}

static void run_until(bench *b, uint64_t target)
{
    while (b->done < target)
        event_base_loop(b->base, EVLOOP_ONCE);
}

/* CPU time of this process (user + system), microseconds: the client's share of the cost. */
static double cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec +
           ru.ru_stime.tv_usec;
}

/* N operations (kind 'w' write, 'l' load) round-robin over the entities, at most window at
 * once. Returns operations per second; *cpu_per_op is this process's CPU per operation. */
static double phase(bench *b, char kind, unsigned n, unsigned window, double *cpu_per_op)
{
    b->done = b->failed = 0;
    double c0 = cpu_us();
    mc_time_us t0 = mc_clock_now_us();
    unsigned sent = 0;
    while (b->done < n) {
        while (sent < n && b->in_flight < window) {
            unsigned i = sent % b->entities;
            b->in_flight++;
            if (kind == 'w') {
                mc_persist_entity e = {.type = b->type, .dbid = b->dbids[i],
                                       .values = b->values[i]};
                e.engine.position[0] = (float)sent;
                mc_persist_write(b->store, &e, b->tokens[i], counted, b);
            } else {
                mc_persist_load(b->store, b->type, b->dbids[i], counted, b);
            }
            sent++;
        }
        event_base_loop(b->base, EVLOOP_ONCE);
    }
    double secs = (double)(mc_clock_now_us() - t0) / 1e6;
    *cpu_per_op = (cpu_us() - c0) / n;
    return secs > 0 ? n / secs : 0;
}

/* redis-benchmark's rate on the same Redis for one command (test "set", or a custom command
 * given in extra), one connection pipelined like the store. -1 when it failed. */
static double redis_rate(const char *host, int port, unsigned n, unsigned window,
                         char *const *extra, int nextra)
{
    char portbuf[16], nbuf[16], pbuf[16];
    snprintf(portbuf, sizeof portbuf, "%d", port);
    snprintf(nbuf, sizeof nbuf, "%u", n);
    snprintf(pbuf, sizeof pbuf, "%u", window);
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        char *argv[80] = {"redis-benchmark", "-h", (char *)host, "-p", portbuf, "-n", nbuf,
                          "-c", "1", "-P", pbuf, "-q"};
        int k = 12;
        if (nextra == 0) {
            argv[k++] = "-t";
            argv[k++] = "set";
        }
        for (int i = 0; i < nextra && k < 79; i++)
            argv[k++] = extra[i];
        argv[k] = NULL;
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    static char out[1 << 20];
    size_t len = 0;
    ssize_t k;
    while ((k = read(fds[0], out + len, sizeof out - 1 - len)) > 0) {
        len += (size_t)k;
        if (len > sizeof out / 2) { /* keep the tail: -q rewrites its line with \r */
            memmove(out, out + len - 4096, 4096);
            len = 4096;
        }
    }
    out[len] = '\0';
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    /* The final "...: 123456.78 requests per second" */
    char *p = strstr(out, " requests per second");
    if (!p)
        return -1;
    char *q = p;
    while (q > out && q[-1] != ' ')
        q--;
    return strtod(q, NULL);
}

int main(int argc, char **argv)
{
    mc_log_set_process_name("persist-bench");
    mc_log_set_level(MC_LOG_ERROR);
    bench_opts o = {.res = MC_BENCH_PERSIST_RES, .entities = 1000, .writes = 200000,
                    .loads = 200000, .window = 1000, .heroes = 1000, .hero_writes = 100};
    static const struct option longopts[] = {
        {"redis", required_argument, NULL, 'r'},   {"writes", required_argument, NULL, 'w'},
        {"loads", required_argument, NULL, 'l'},   {"entities", required_argument, NULL, 'e'},
        {"window", required_argument, NULL, 'W'},  {"res", required_argument, NULL, 'R'},
        {"heroes", required_argument, NULL, 'H'},  {"hero-writes", required_argument, NULL, 'K'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        unsigned long v = 0;
        if (optarg && ch != 'r' && ch != 'R') {
            char *end;
            v = strtoul(optarg, &end, 10);
            if (*end || (v == 0 && ch != 'H') || v > 100000000) {
                fprintf(stderr, "persist-bench: counts are positive integers ('%s')\n",
                        optarg);
                return 2;
            }
        }
        switch (ch) {
        case 'r': o.redis = optarg; break;
        case 'R': o.res = optarg; break;
        case 'w': o.writes = (unsigned)v; break;
        case 'l': o.loads = (unsigned)v; break;
        case 'e': o.entities = (unsigned)v; break;
        case 'W': o.window = (unsigned)v; break;
        case 'H': o.heroes = (unsigned)v; break;
        case 'K': o.hero_writes = (unsigned)v; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    char err[4096];
    mc_entity_defs *defs = mc_defs_load(o.res, err, sizeof err);
    if (!defs) {
        fprintf(stderr, "persist-bench: defs %s: %s\n", o.res, err);
        return 2;
    }
    /* Redis: the one given, or a private one without persistence. */
    char host[64] = "127.0.0.1", addr[96], dir[] = "/tmp/persist-bench-XXXXXX";
    int port;
    pid_t redis_pid = 0;
    if (o.redis) {
        char *colon = strrchr(o.redis, ':');
        if (!colon || colon == o.redis || (size_t)(colon - o.redis) >= sizeof host) {
            fprintf(stderr, "persist-bench: --redis wants IP:PORT\n");
            return 2;
        }
        snprintf(host, sizeof host, "%.*s", (int)(colon - o.redis), o.redis);
        port = atoi(colon + 1);
    }
    if (!mkdtemp(dir)) {
        fprintf(stderr, "persist-bench: no temp dir\n");
        return 1;
    }
    if (!o.redis) {
        port = pb_free_port();
        if (port <= 0) {
            fprintf(stderr, "persist-bench: no free port or temp dir\n");
            return 1;
        }
        char portbuf[16], log[200];
        snprintf(portbuf, sizeof portbuf, "%d", port);
        snprintf(log, sizeof log, "%s/redis.log", dir);
        char *rargv[] = {"redis-server", "--port", portbuf, "--bind", "127.0.0.1", "--dir", dir,
                         "--save", "", "--appendonly", "no", NULL};
        redis_pid = pb_spawn(rargv, log);
        bool up = false;
        for (int i = 0; i < 100 && !up; i++) {
            up = redis_ping(host, port);
            if (!up)
                pb_sleep_ms(50); /* start-up only, before any measurement */
        }
        if (!up) {
            fprintf(stderr, "persist-bench: redis-server did not start (log %s)\n", log);
            kill(redis_pid, SIGKILL);
            return 1;
        }
    }
    snprintf(addr, sizeof addr, "%s:%d", host, port);

    bench b = {.entities = o.entities};
    b.base = event_base_new();
    b.type = mc_defs_type_by_name(defs, "Hero");
    mc_persist_config cfg = {.process_name = "persist-bench", .address = addr, .defs = defs,
                             .prefix = "bench", .inflight_max = o.window,
                             .queue_max = o.window * 2 + 16};
    b.store = b.base && b.type ? mc_persist_store_new(b.base, &cfg, err, sizeof err) : NULL;
    int rc = 0;
    if (!b.store) {
        fprintf(stderr, "persist-bench: %s\n", b.type ? err : "no Hero type in the defs");
        rc = 1;
        goto out;
    }
    mc_persist_set_owner(b.store, "persist-bench", (uint64_t)getpid());
    b.values = calloc(o.entities, sizeof *b.values);
    b.dbids = calloc(o.entities, sizeof *b.dbids);
    b.tokens = calloc(o.entities, sizeof *b.tokens);
    for (unsigned i = 0; i < o.entities; i++) {
        b.values[i] = calloc(b.type->nprops, sizeof(mc_value));
        if (!b.values[i] || make_values(b.type, b.values[i], i) != 0) {
            fprintf(stderr, "persist-bench: out of memory\n");
            rc = 1;
            goto out;
        }
    }
    /* Create the entities (checked out by this store: their tokens fence the writes). */
    b.done = 0;
    for (unsigned i = 0; i < o.entities; i++) {
        void **ctx = malloc(2 * sizeof *ctx);
        ctx[0] = &b;
        ctx[1] = (void *)(uintptr_t)i;
        mc_persist_entity e = {.type = b.type, .values = b.values[i]};
        b.in_flight++;
        mc_persist_create(b.store, &e, created, ctx);
        if (b.in_flight >= o.window)
            run_until(&b, b.done + 1);
    }
    run_until(&b, o.entities);
    if (b.failed) {
        fprintf(stderr, "persist-bench: %llu creates failed: %s\n",
                (unsigned long long)b.failed, b.last_error);
        rc = 1;
        goto out;
    }
    size_t npersistent = 0;
    for (size_t p = 0; p < b.type->nprops; p++)
        npersistent += b.type->props[p].persistent;
    printf("persist-bench: %u entities of %zu persistent properties on redis %s%s, window %u\n",
           o.entities, npersistent, addr, o.redis ? "" : " (private)", o.window);
    double wcpu, lcpu;
    double wps = phase(&b, 'w', o.writes, o.window, &wcpu);
    uint64_t wfail = b.failed;
    double lps = phase(&b, 'l', o.loads, o.window, &lcpu);
    uint64_t lfail = b.failed;
    pb_baseapp_result br = {0};
    bool base_ok = false;
    char bwhy[700] = "";
    if (o.heroes) {
        char exe[600], bindir[600];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        snprintf(bindir, sizeof bindir, "%s", exe);
        char *slash = strrchr(bindir, '/');
        if (slash)
            *slash = '\0';
        pb_baseapp_opts bo = {.bin_dir = bindir, .res = o.res, .game = MC_BENCH_PERSIST_GAME,
                              .redis = addr, .dir = dir, .heroes = o.heroes,
                              .writes_each = o.hero_writes};
        base_ok = pb_baseapp_run(&bo, &br, bwhy, sizeof bwhy) == 0;
    }
    double sps = redis_rate(host, port, o.writes, o.window, NULL, 0);
    /* The same volume as an entity write, as one plain HSET (no script, no fencing). */
    char *hset[2 + 2 * 23];
    char names[23][16], vals[23][48];
    int nh = 0;
    hset[nh++] = "hset";
    hset[nh++] = "bench:hset";
    for (int i = 0; i < 23; i++) {
        snprintf(names[i], sizeof names[i], "field%d", i);
        snprintf(vals[i], sizeof vals[i], "\"value of property %d\"", i);
        hset[nh++] = names[i];
        hset[nh++] = vals[i];
    }
    double hps = redis_rate(host, port, o.writes, o.window, hset, nh);
    printf("persist writes: %u in %.2f s: %.0f writes/s (client CPU %.1f us/write)%s\n",
           o.writes, o.writes / wps, wps, wcpu, wfail ? " (with failures)" : "");
    printf("persist loads:  %u in %.2f s: %.0f loads/s (client CPU %.1f us/load)%s\n", o.loads,
           o.loads / lps, lps, lcpu, lfail ? " (with failures)" : "");
    if (o.heroes && base_ok)
        printf("baseapp writes: %llu in %.2f s: %.0f writes/s (%u entities writing themselves "
               "with writeToDB, baseapp CPU %.1f us/write)\n", br.writes, br.seconds,
               br.writes_per_s, o.heroes, br.cpu_us_per_write);
    else if (o.heroes)
        printf("baseapp writes: failed: %s\n", bwhy);
    printf("redis SET:      %.0f requests/s (redis-benchmark -t set -c 1 -P %u)\n", sps,
           o.window);
    printf("redis HSET:     %.0f requests/s (23 fields, as many as an entity write;"
           " redis-benchmark -c 1 -P %u)\n", hps, o.window);
    /* The ratio: writes through one baseapp against Redis's SET (the in-process
     * writes when the baseapp part is skipped). */
    double headline = o.heroes ? (base_ok ? br.writes_per_s : 0) : wps;
    printf("ratio persist/redis: %.2f\n", sps > 0 ? headline / sps : 0.0);
    if (o.heroes && !base_ok)
        rc = 1;
    if (wfail || lfail) {
        fprintf(stderr, "persist-bench: %llu writes and %llu loads failed: %s\n",
                (unsigned long long)wfail, (unsigned long long)lfail, b.last_error);
        rc = 1;
    }
out:
    if (b.store)
        mc_persist_store_free(b.store);
    for (unsigned i = 0; b.values && i < o.entities; i++) {
        for (size_t p = 0; b.values[i] && p < b.type->nprops; p++)
            mc_value_free(&b.values[i][p]);
        free(b.values[i]);
    }
    free(b.values);
    free(b.dbids);
    free(b.tokens);
    if (b.base)
        event_base_free(b.base);
    mc_defs_free(defs);
    if (redis_pid > 0) {
        kill(redis_pid, SIGTERM);
        int st;
        waitpid(redis_pid, &st, 0);
    }
    /* Keep the logs when something failed. */
    if (rc == 0) {
        const char *logs[] = {"redis.log", "manager.log", "baseapp.log", "secret"};
        for (size_t i = 0; i < 4; i++) {
            char rm[200];
            snprintf(rm, sizeof rm, "%s/%s", dir, logs[i]);
            unlink(rm);
        }
        rmdir(dir);
    } else {
        fprintf(stderr, "persist-bench: logs kept in %s\n", dir);
    }
    return rc;
}
