/* Private redis-server instances for tests (see redis_harness.h). */
#include "redis_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define RH_WAIT_MS 10000
/* redis-cli runs (cluster create waits for the nodes to agree, a second per round: on a
 * loaded machine under sanitizers that took over 10 s) */
#define RH_CLI_MS 60000

struct rh_redis {
    rh_options opt;
    char user[64];
    int port;
    int bus_port;         /* cluster bus, 0 when not a cluster node */
    pid_t pid;
    char addr[32];
    char dir[512];
    char password[65];
    char password_file[600];
};

struct rh_cluster {
    rh_redis *nodes[RH_CLUSTER_NODES];
};

static int seq;

const char *rh_addr(const rh_redis *r) { return r->addr; }
int rh_port(const rh_redis *r) { return r->port; }
pid_t rh_pid(const rh_redis *r) { return r->pid; }
const char *rh_dir(const rh_redis *r) { return r->dir; }
const char *rh_password_file(const rh_redis *r)
{
    return r->opt.password ? r->password_file : NULL;
}
const char *rh_password(const rh_redis *r) { return r->opt.password ? r->password : NULL; }

static int random_hex(char *out, size_t nbytes)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    unsigned char buf[32];
    if (nbytes > sizeof buf)
        nbytes = sizeof buf;
    ssize_t n = read(fd, buf, nbytes);
    close(fd);
    if (n != (ssize_t)nbytes)
        return -1;
    for (size_t i = 0; i < nbytes; i++)
        sprintf(out + 2 * i, "%02x", buf[i]);
    return 0;
}

/* Build redis-cli's argv prefix (host, port, credentials) into argv; returns the count. */
static int cli_prefix(const rh_redis *r, char **argv, char *portbuf, size_t portlen)
{
    int n = 0;
    argv[n++] = "/usr/bin/redis-cli";
    argv[n++] = "-h";
    argv[n++] = "127.0.0.1";
    argv[n++] = "-p";
    snprintf(portbuf, portlen, "%d", r->port);
    argv[n++] = portbuf;
    if (r->opt.password) {
        if (r->user[0]) {
            argv[n++] = "--user";
            argv[n++] = (char *)r->user;
        }
        argv[n++] = "-a";
        argv[n++] = (char *)r->password;
        argv[n++] = "--no-auth-warning";
    }
    return n;
}

static int cli_argv(const rh_redis *r, char *out, size_t outlen, char *const *args, int nargs)
{
    char *argv[64];
    char portbuf[16];
    int n = cli_prefix(r, argv, portbuf, sizeof portbuf);
    for (int i = 0; i < nargs && n < 63; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    return h_run(argv, out, outlen, RH_CLI_MS);
}

int rh_cli(const rh_redis *r, char *out, size_t outlen, ...)
{
    char *args[48];
    int n = 0;
    va_list ap;
    va_start(ap, outlen);
    const char *a;
    while (n < 48 && (a = va_arg(ap, const char *)) != NULL)
        args[n++] = (char *)a;
    va_end(ap);
    return cli_argv(r, out, outlen, args, n);
}

static bool wait_ping(const rh_redis *r)
{
    char out[256];
    for (int i = 0; i < RH_WAIT_MS / 50; i++) {
        if (!h_alive(r->pid))
            return false;
        if (rh_cli(r, out, sizeof out, "ping", NULL) == 0 && strstr(out, "PONG"))
            return true;
        h_sleep_ms(50);
    }
    return false;
}

static int spawn(rh_redis *r)
{
    char port[16], bus[16], log[600], acl[200];
    snprintf(port, sizeof port, "%d", r->port);
    snprintf(bus, sizeof bus, "%d", r->bus_port);
    snprintf(log, sizeof log, "%s/redis.log", r->dir);
    char *argv[48];
    int n = 0;
    argv[n++] = "/usr/bin/redis-server";
    argv[n++] = "--port";
    argv[n++] = port;
    argv[n++] = "--bind";
    argv[n++] = "127.0.0.1";
    argv[n++] = "--dir";
    argv[n++] = r->dir;
    argv[n++] = "--save";
    argv[n++] = "";
    argv[n++] = "--daemonize";
    argv[n++] = "no";
    argv[n++] = "--appendonly";
    argv[n++] = r->opt.aof ? "yes" : "no";
    if (r->opt.aof) {
        argv[n++] = "--appendfsync";
        argv[n++] = "always";
    }
    if (r->opt.password) {
        argv[n++] = "--requirepass";
        argv[n++] = r->password;
        if (r->user[0]) {
            snprintf(acl, sizeof acl, ">%s", r->password);
            argv[n++] = "--user";
            argv[n++] = r->user;
            argv[n++] = "on";
            argv[n++] = acl;
            argv[n++] = "~*";
            argv[n++] = "&*";
            argv[n++] = "+@all";
        }
    }
    if (r->bus_port) {
        argv[n++] = "--cluster-enabled";
        argv[n++] = "yes";
        argv[n++] = "--cluster-config-file";
        argv[n++] = "nodes.conf";
        argv[n++] = "--cluster-port";
        argv[n++] = bus;
        argv[n++] = "--cluster-node-timeout";
        argv[n++] = "5000";
        if (r->opt.password) {
            argv[n++] = "--masterauth";
            argv[n++] = r->password;
            if (r->user[0]) {
                argv[n++] = "--masteruser";
                argv[n++] = r->user;
            }
        }
    }
    argv[n] = NULL;
    r->pid = h_spawn(argv, log);
    if (r->pid <= 0 || !wait_ping(r)) {
        fprintf(stderr, "redis harness: redis-server on port %d did not answer (log %s)\n",
                r->port, log);
        return -1;
    }
    return 0;
}

/* password: the cluster's shared one, or NULL for a fresh random one. */
static rh_redis *create(const rh_options *opt, bool cluster, const char *password)
{
    rh_redis *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (opt)
        r->opt = *opt;
    if (r->opt.user && r->opt.user[0])
        snprintf(r->user, sizeof r->user, "%s", r->opt.user);
    r->opt.user = NULL;
    r->port = h_free_port(true);
    r->bus_port = cluster ? h_free_port(true) : 0;
    if (r->port <= 0 || (cluster && r->bus_port <= 0)) {
        free(r);
        return NULL;
    }
    snprintf(r->addr, sizeof r->addr, "127.0.0.1:%d", r->port);
    snprintf(r->dir, sizeof r->dir, "%s/redis-%d-%d", h_tmpdir(), (int)getpid(), ++seq);
    if (mkdir(r->dir, 0700) != 0 && errno != EEXIST) {
        free(r);
        return NULL;
    }
    if (r->opt.password) {
        if (password)
            snprintf(r->password, sizeof r->password, "%s", password);
        else if (random_hex(r->password, 16) != 0) {
            free(r);
            return NULL;
        }
        snprintf(r->password_file, sizeof r->password_file, "%s/password", r->dir);
        int fd = open(r->password_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) {
            free(r);
            return NULL;
        }
        size_t len = strlen(r->password);
        bool ok = write(fd, r->password, len) == (ssize_t)len && write(fd, "\n", 1) == 1;
        close(fd);
        if (!ok) {
            free(r);
            return NULL;
        }
    }
    if (spawn(r) != 0) {
        rh_stop(r);
        return NULL;
    }
    return r;
}

rh_redis *rh_start(const rh_options *opt) { return create(opt, false, NULL); }

int rh_kill(rh_redis *r, int sig)
{
    if (!r || r->pid <= 0)
        return -1;
    h_kill(r->pid, sig);
    int st = h_wait_exit(r->pid, RH_WAIT_MS);
    if (st < 0) {
        h_kill(r->pid, SIGKILL);
        h_wait_exit(r->pid, RH_WAIT_MS);
    }
    r->pid = 0;
    return st < 0 ? -1 : 0;
}

int rh_restart(rh_redis *r)
{
    if (!r || r->pid > 0)
        return -1;
    return spawn(r);
}

void rh_stop(rh_redis *r)
{
    if (!r)
        return;
    if (r->pid > 0) {
        h_kill(r->pid, SIGTERM);
        if (h_wait_exit(r->pid, 5000) < 0) {
            h_kill(r->pid, SIGKILL);
            h_wait_exit(r->pid, RH_WAIT_MS);
        }
    }
    free(r);
}

static bool cluster_ok(rh_cluster *c)
{
    char out[4096];
    for (int i = 0; i < RH_CLUSTER_NODES; i++) {
        if (rh_cli(c->nodes[i], out, sizeof out, "cluster", "info", NULL) != 0 ||
            !strstr(out, "cluster_state:ok") || !strstr(out, "cluster_slots_assigned:16384") ||
            !strstr(out, "cluster_known_nodes:3"))
            return false;
    }
    return true;
}

rh_cluster *rh_cluster_start(const rh_options *opt)
{
    rh_cluster *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    for (int i = 0; i < RH_CLUSTER_NODES; i++) {
        /* Every node has the first node's password. */
        c->nodes[i] = create(opt, true, i ? c->nodes[0]->password : NULL);
        if (!c->nodes[i]) {
            rh_cluster_stop(c);
            return NULL;
        }
    }
    /* redis-cli --cluster create assigns the slots evenly and introduces the nodes. */
    char *args[16];
    int n = 0;
    args[n++] = "--cluster";
    args[n++] = "create";
    for (int i = 0; i < RH_CLUSTER_NODES; i++)
        args[n++] = c->nodes[i]->addr;
    args[n++] = "--cluster-replicas";
    args[n++] = "0";
    args[n++] = "--cluster-yes";
    char out[8192];
    /* redis-cli --cluster authenticates as the default user (the same password). */
    char user[64];
    snprintf(user, sizeof user, "%s", c->nodes[0]->user);
    c->nodes[0]->user[0] = '\0';
    int st = cli_argv(c->nodes[0], out, sizeof out, args, n);
    snprintf(c->nodes[0]->user, sizeof c->nodes[0]->user, "%s", user);
    if (st != 0) {
        fprintf(stderr, "redis harness: cluster create failed (%d): %s\n", st, out);
        rh_cluster_stop(c);
        return NULL;
    }
    for (int i = 0; i < 3 * RH_WAIT_MS / 100; i++) {
        if (cluster_ok(c))
            return c;
        h_sleep_ms(100);
    }
    fprintf(stderr, "redis harness: the cluster did not reach state ok\n");
    rh_cluster_stop(c);
    return NULL;
}

rh_redis *rh_cluster_node(rh_cluster *c, int i)
{
    return (c && i >= 0 && i < RH_CLUSTER_NODES) ? c->nodes[i] : NULL;
}

void rh_cluster_stop(rh_cluster *c)
{
    if (!c)
        return;
    for (int i = 0; i < RH_CLUSTER_NODES; i++)
        rh_stop(c->nodes[i]);
    free(c);
}
