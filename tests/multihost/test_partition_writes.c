/* A partition in the middle of a stream of writes (issue 14 item 5): a baseapp in its own
 * network namespace writes an entity to Redis every 100 ms; its link is cut; the manager
 * declares it dead, the other baseapp (on the host side) releases its check-outs, loads the
 * entity and writes a value of its own; the link comes back. The cut-off baseapp must never
 * overwrite that value (its writes carry a check-out token Redis no longer accepts), it must
 * learn it was replaced and exit with status 4, and the entity must live once: on the
 * survivor. Real processes, a real redis-server with a password, a veth link the test
 * makes and removes (also on failure). Needs root (or CAP_NET_ADMIN) and `ip`: otherwise
 * the test is skipped (exit 77). */
#include <check.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "persist_cluster.h"

#define WAIT_MS 30000

static char ns[32], vh[16], vn[16];
static char ip_bin[256], redis_bin[256]; /* found on PATH (the harness execs full paths) */

static bool find_on_path(const char *name, char *out, size_t n)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s 2>/dev/null", name);
    FILE *p = popen(cmd, "r");
    if (!p)
        return false;
    bool ok = fgets(out, (int)n, p) != NULL;
    pclose(p);
    out[strcspn(out, "\n")] = '\0';
    return ok && out[0] == '/';
}
static int subnet;
static char host_ip[16], ns_ip[16], mgr_ip[16];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

static void net_down(void)
{
    if (!ns[0])
        return;
    sh("ip link del %s >/dev/null 2>&1", vh);
    sh("ip netns del %s >/dev/null 2>&1", ns);
    /* the host-side rule of the partition, if a failure left it */
    while (mgr_ip[0] &&
           sh("ip rule del from %s/32 to %s/32 blackhole >/dev/null 2>&1", mgr_ip, ns_ip) == 0)
        ;
}

static void on_signal(int sig)
{
    h_kill_all();
    net_down();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A namespace joined to the host by a veth pair: host_ip on the host side, ns_ip inside. */
static bool net_up(void)
{
    subnet = 100 + (int)(getpid() % 100);
    snprintf(ns, sizeof ns, "mcpw%d", (int)getpid());
    snprintf(vh, sizeof vh, "mcpwh%d", (int)(getpid() % 100000));
    snprintf(vn, sizeof vn, "mcpwn%d", (int)(getpid() % 100000));
    snprintf(host_ip, sizeof host_ip, "10.251.%d.1", subnet);
    snprintf(ns_ip, sizeof ns_ip, "10.251.%d.2", subnet);
    /* the manager gets an address of its own on the host side, so that the namespace's
     * route to it can be cut while Redis stays reachable */
    snprintf(mgr_ip, sizeof mgr_ip, "10.251.%d.3", subnet);
    atexit(net_down);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    return sh("ip netns add %s", ns) == 0 &&
           sh("ip link add %s type veth peer name %s", vh, vn) == 0 &&
           sh("ip link set %s netns %s", vn, ns) == 0 &&
           sh("ip addr add %s/24 dev %s", host_ip, vh) == 0 &&
           sh("ip addr add %s/24 dev %s", mgr_ip, vh) == 0 &&
           sh("ip link set %s up", vh) == 0 &&
           sh("ip -n %s addr add %s/24 dev %s", ns, ns_ip, vn) == 0 &&
           sh("ip -n %s link set %s up", ns, vn) == 0 &&
           sh("ip -n %s link set lo up", ns) == 0;
}

/* redis-server on the host side of the link, with a password from a 0600 config file. */
static pid_t start_redis(const char *dir, int port, char *pwfile, size_t n)
{
    char conf[700], rdir[600];
    snprintf(rdir, sizeof rdir, "%s/redis", dir);
    mkdir(rdir, 0700);
    snprintf(pwfile, n, "%s/redis.password", dir);
    snprintf(conf, sizeof conf, "%s/redis.conf", dir);
    FILE *p = fopen(pwfile, "w"), *c = fopen(conf, "w");
    ck_assert(p && c);
    fprintf(p, "partition-test-%d\n", (int)getpid());
    fprintf(c, "bind %s\nport %d\nrequirepass partition-test-%d\nsave \"\"\nappendonly no\n"
               "dir %s\n",
            host_ip, port, (int)getpid(), rdir);
    fclose(p);
    fclose(c);
    chmod(pwfile, 0600);
    chmod(conf, 0600);
    char log[700];
    snprintf(log, sizeof log, "%s/redis.log", dir);
    char *argv[] = {redis_bin, conf, NULL};
    pid_t pid = h_spawn(argv, log);
    ck_assert_int_gt(pid, 0);
    return pid;
}

static pid_t start_baseapp(pc_cluster *c, int slot, bool in_ns, int port, const char *redis,
                           const char *pwfile)
{
    char bin[512], internal[64], external[64], mopt[64], ropt[600], gopt[600], redopt[200],
        pwopt[700];
    snprintf(c->base_addr[slot], sizeof c->base_addr[slot], "%.15s:%d", in_ns ? ns_ip : host_ip,
             port);
    snprintf(internal, sizeof internal, "--internal=%s", c->base_addr[slot]);
    snprintf(external, sizeof external, "--external=%.15s:%d", in_ns ? ns_ip : host_ip,
             port + 1);
    snprintf(mopt, sizeof mopt, "--manager=%s", c->manager);
    snprintf(ropt, sizeof ropt, "--res=%s", MC_KEEPER_RES);
    snprintf(gopt, sizeof gopt, "--game=%s", MC_KEEPER_GAME);
    snprintf(redopt, sizeof redopt, "--redis=%s", redis);
    snprintf(pwopt, sizeof pwopt, "--redisPasswordFile=%s", pwfile);
    snprintf(c->log_base[slot], sizeof c->log_base[slot], "%s/baseapp%d.log", c->dir, slot + 1);
    h_bin("baseapp", bin, sizeof bin);
    /* No base backups: the survivor loads the entity from Redis (what this test rehearses). */
    char *plain[] = {bin, internal, external, mopt, ropt, gopt, redopt, pwopt,
                     "--archivePeriodS=1", "--backupPeriodMs=0", NULL};
    char *netns[] = {ip_bin, "netns", "exec", ns, bin, internal, external, mopt, ropt, gopt,
                     redopt, pwopt, "--archivePeriodS=1", "--backupPeriodMs=0", NULL};
    pid_t pid = h_spawn(in_ns ? netns : plain, c->log_base[slot]);
    ck_assert_int_gt(pid, 0);
    c->base[slot] = pid;
    snprintf(c->base_name[slot], sizeof c->base_name[slot], "baseapp%02d", slot + 1);
    for (int waited = 0;; waited += 100) {
        char v[64];
        if (pc_value(c, c->base_name[slot], "entityIds/ranges", v, sizeof v) && atoi(v) >= 1)
            break;
        ck_assert_msg(waited < WAIT_MS, "%s got no entity ids (log %s)", c->base_name[slot],
                      c->log_base[slot]);
        h_sleep_ms(100);
    }
    c->nbase = slot + 1;
    return pid;
}

/* Poll until the integer at path is at least want (bounded). */
static bool wait_at_least(pc_cluster *c, const char *proc, const char *path, long long want)
{
    for (int waited = 0; waited <= WAIT_MS; waited += 100) {
        char v[256];
        if (pc_value(c, proc, path, v, sizeof v) && strtoll(v, NULL, 10) >= want)
            return true;
        h_sleep_ms(100);
    }
    return false;
}

/* The counter Redis holds for Keeper dbid (mc-db show). */
static long long stored_counter(const char *redis, const char *pwfile, const char *dbid)
{
    char bin[512], out[16384], ropt[200], popt[700], res[600];
    h_bin("mc-db", bin, sizeof bin);
    snprintf(ropt, sizeof ropt, "--redis=%s", redis);
    snprintf(popt, sizeof popt, "--password-file=%s", pwfile);
    snprintf(res, sizeof res, "--res=%s", MC_KEEPER_RES);
    char *argv[] = {bin, ropt, popt, res, "show", "Keeper", (char *)dbid, NULL};
    int rc = h_run(argv, out, sizeof out, 20000);
    ck_assert_msg(rc == 0, "mc-db show: exit %d: %s", rc, out);
    /* "  counter          INT64                1000005" */
    const char *at = strstr(out, "\n  counter ");
    long long v = 0;
    ck_assert_msg(at && sscanf(at, " counter %*s %lld", &v) == 1, "mc-db show: %s", out);
    return v;
}

START_TEST(a_cut_off_baseapp_never_overwrites_the_survivor)
{
    pc_cluster c;
    memset(&c, 0, sizeof c);
    c.res = MC_KEEPER_RES;
    c.game = MC_KEEPER_GAME;
    snprintf(c.dir, sizeof c.dir, "%s", h_tmpdir());
    int rport = h_free_port(true);
    char pwfile[700], redis[64];
    snprintf(redis, sizeof redis, "%.15s:%d", host_ip, rport);
    start_redis(c.dir, rport, pwfile, sizeof pwfile);
    snprintf(c.manager, sizeof c.manager, "%.15s:%d", mgr_ip, h_free_port(false));
    snprintf(c.log_mgr, sizeof c.log_mgr, "%s/manager.log", c.dir);
    char bin[512], internal[64], ropt[600];
    snprintf(internal, sizeof internal, "--internal=%s", c.manager);
    snprintf(ropt, sizeof ropt, "--res=%s", MC_KEEPER_RES);
    h_bin("manager", bin, sizeof bin);
    char *margv[] = {bin, internal, ropt, "--deadAfterMs=2000",
                     NULL};
    c.mgr = h_spawn(margv, c.log_mgr);
    ck_assert_msg(c.mgr > 0 && h_wait_watch(c.manager, "manager", "role", "manager", 20000),
                  "the manager did not answer (log %s)", c.log_mgr);
    /* baseapp01 in the namespace, baseapp02 on the host side */
    pid_t cut = start_baseapp(&c, 0, true, h_free_port(false), redis, pwfile);
    start_baseapp(&c, 1, false, h_free_port(false), redis, pwfile);
    const char *b1 = c.base_name[0], *b2 = c.base_name[1];

    /* The entity, written by baseapp01, then a stream of writes every 100 ms. */
    int32_t id = pc_create(&c, b1, "{\"name\":\"partitioned\",\"counter\":0}");
    char why[512];
    uint64_t dbid = pc_write(&c, b1, id, why, sizeof why);
    ck_assert_msg(dbid > 0, "first write: %s", why);
    pc_invoke(&c, b1, id, "saveEvery", "[0.1,100000]");
    char path[96];
    snprintf(path, sizeof path, "entities/%d/props/acked", (int)id);
    ck_assert_msg(wait_at_least(&c, b1, path, 5), "the stream of writes did not start");

    /* The partition: baseapp01 (and its writes) cut off from the manager and Redis. The
     * route to the manager goes first (a blackhole, kept until the writes were refused):
     * a heartbeat routed while the link is down waits in the device's or neighbour's queue
     * and would reach the manager the moment the link is back, so the manager's "replaced"
     * could beat the refusal of the queued writes (and it did, depending on where the link's
     * return fell between two heartbeats). */
    ck_assert_int_eq(sh("ip -n %s route add blackhole %s/32", ns, mgr_ip), 0);
    ck_assert_int_eq(sh("ip link set %s down", vh), 0);
    ck_assert_msg(wait_at_least(&c, b2, "db/releasedOfDead", 1),
                  "the survivor did not release the cut-off baseapp's check-outs (log %s)",
                  c.log_base[1]);
    char key[32], out[1024];
    snprintf(key, sizeof key, "%llu", (unsigned long long)dbid);
    ck_assert_int_eq(pc_load(&c, b2, "createBaseFromDB", key, out, sizeof out), 0);
    ck_assert_msg(strstr(out, " loaded"), "the survivor's load: %s", out);
    int32_t id2 = atoi(out);
    long long taken = pc_prop_int(&c, b2, id2, "counter");
    /* the survivor's own value, far from anything the stream can reach */
    pc_invoke(&c, b2, id2, "bump", "[1000000]");
    ck_assert_msg(pc_write(&c, b2, id2, why, sizeof why) == dbid, "survivor's write: %s", why);
    long long mine = taken + 1000000;
    ck_assert_int_eq(stored_counter(redis, pwfile, key), mine);

    /* The link comes back, first without the route to the manager: the writes the cut-off
     * baseapp queued reach Redis and are refused by their token (none lands). */
    /* and nothing from the manager either (a rule on the host side, where its packets are
     * routed: its resends would otherwise fence the baseapp before its writes drain) */
    ck_assert_int_eq(sh("ip rule add from %s/32 to %s/32 blackhole", mgr_ip, ns_ip), 0);
    ck_assert_int_eq(sh("ip link set %s up", vh), 0);
    bool refused = false;
    for (int waited = 0; waited < WAIT_MS && !refused; waited += 100) {
        /* logged once per entity, never rate-limited (the write failure itself may be
         * folded into an earlier line's second when writes also timed out) */
        refused = h_file_contains(c.log_base[0], "is checked out by another baseapp now");
        h_sleep_ms(100);
    }
    ck_assert_msg(refused, "the cut-off baseapp's queued writes were not refused (log %s)",
                  c.log_base[0]);
    ck_assert_int_eq(stored_counter(redis, pwfile, key), mine);
    /* Then the manager too: it learns it was replaced and exits 4. */
    ck_assert_int_eq(sh("ip -n %s route del blackhole %s/32", ns, mgr_ip), 0);
    ck_assert_int_eq(sh("ip rule del from %s/32 to %s/32 blackhole", mgr_ip, ns_ip), 0);
    int rc = h_wait_exit(cut, WAIT_MS);
    ck_assert_msg(rc == 4, "the cut-off baseapp exited %d, not 4 (fenced) (log %s)", rc,
                  c.log_base[0]);
    c.base[0] = -1;
    ck_assert_int_eq(stored_counter(redis, pwfile, key), mine);
    /* still exactly one live copy, on the survivor */
    ck_assert_int_eq(pc_int(&c, b2, "entities/count"), 1);
    ck_assert_int_eq(pc_prop_int(&c, b2, id2, "counter"), mine);
    /* and the survivor keeps writing */
    pc_invoke(&c, b2, id2, "bump", "[1]");
    ck_assert(pc_write(&c, b2, id2, why, sizeof why) == dbid);
    ck_assert_int_eq(stored_counter(redis, pwfile, key), mine + 1);
    pc_stop_baseapp(&c, 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("partition_writes");
    TCase *tc = tcase_create("partition");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, a_cut_off_baseapp_never_overwrites_the_survivor);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (geteuid() != 0 || !find_on_path("ip", ip_bin, sizeof ip_bin) ||
        !find_on_path("redis-server", redis_bin, sizeof redis_bin) ||
        system("ip netns list >/dev/null 2>&1") != 0) {
        printf("SKIPPED: needs root, ip netns and redis-server\n");
        return 77;
    }
    if (!net_up()) {
        printf("SKIPPED: cannot create a network namespace and a veth pair here\n");
        net_down();
        return 77;
    }
    /* Check forks each test: the namespace and link belong to this process and go at exit. */
    return h_run_suite(suite());
}
