/* The whole login path for client tests: a private redis-server, a manager, baseapps, a
 * cellapp (the example game, a "world" space) and a loginapp with --autoCreateAccounts and
 * the development hashing cost, on loopback with free ports; the login key pair as
 * deploy/cluster makes it. Every process is stopped by lc_stop (and killed by the harness
 * when a check fails first). */
#ifndef MC_TESTS_LOGIN_CLUSTER_H
#define MC_TESTS_LOGIN_CLUSTER_H

#include "persist_cluster.h"
#include "redis_harness.h"

#include <stdint.h>

typedef struct {
    pc_cluster pc;
    rh_redis *redis;
    char pk_hex[80];
    uint8_t pk[32];
    char ext[32];             /* the loginapp's external address */
    pid_t login;
    char log_login[700];
} lc_cluster;

/* Start it with nbase baseapps, each given the config lines base_conf ("name = value\n"...,
 * or NULL), and the world: a Space with these properties (JSON). The loginapp takes up to
 * 2,000 logins in flight (1,000 bots log in at once in the tools' tests). */
void lc_start(lc_cluster *c, int nbase, const char *base_conf, const char *world);
/* The same with another game module (a path) than the example game's. */
void lc_start_game(lc_cluster *c, int nbase, const char *base_conf, const char *game,
                   const char *world);
/* SIGTERM to every process, exit 0 asserted. */
void lc_stop(lc_cluster *c);
/* The example game's defs folder. */
const char *lc_res_dir(void);

#endif
