/* The whole login path for client tests (login_cluster.h). */
#include "login_cluster.h"

#include "harness.h"

#include <check.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 20000

const char *lc_res_dir(void)
{
    static char buf[600];
    snprintf(buf, sizeof buf, "%s/defs", h_source_dir());
    return buf;
}

void lc_start(lc_cluster *c, int nbase, const char *base_conf, const char *world)
{
    lc_start_game(c, nbase, base_conf, MC_EXAMPLE_GAME, world);
}

void lc_start_game(lc_cluster *c, int nbase, const char *base_conf, const char *game,
                   const char *world)
{
    memset(c, 0, sizeof *c);
    rh_options ro = {.password = true};
    c->redis = rh_start(&ro);
    ck_assert_msg(c->redis, "redis-server did not start");
    /* the baseapps' options: a config file (the test's folder is pc's too) */
    char conf[700], base_opt[720];
    snprintf(conf, sizeof conf, "%s/baseapp.conf", h_tmpdir());
    FILE *f = fopen(conf, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "redisPasswordFile = %s\n%s", rh_password_file(c->redis),
            base_conf ? base_conf : "");
    fclose(f);
    snprintf(base_opt, sizeof base_opt, "--config=%s", conf);
    pc_start_game(&c->pc, rh_addr(c->redis), nbase, base_opt, lc_res_dir(), game);
    /* the key pair, as deploy/cluster makes it */
    char keydir[700], mk[800], bin[512], out[512], path[800];
    snprintf(keydir, sizeof keydir, "%s/keys", c->pc.dir);
    snprintf(mk, sizeof mk, "mkdir -p '%s'", keydir);
    ck_assert_int_eq(system(mk), 0);
    char *kargv[] = {(char *)h_bin("mc-login-keys", bin, sizeof bin), keydir, NULL};
    ck_assert_int_eq(h_run(kargv, out, sizeof out, 10000), 0);
    snprintf(path, sizeof path, "%s/login.pub", keydir);
    f = fopen(path, "r");
    ck_assert(f && fgets(c->pk_hex, sizeof c->pk_hex, f));
    fclose(f);
    c->pk_hex[strcspn(c->pk_hex, "\n")] = '\0';
    size_t got = 0;
    ck_assert_int_eq(sodium_hex2bin(c->pk, sizeof c->pk, c->pk_hex, strlen(c->pk_hex), NULL,
                                    &got, NULL),
                     0);
    ck_assert_int_eq(got, 32);
    /* the loginapp */
    char internal[64], external[64], mopt[64], ropt[700], key[800], redis[64], pwf[700];
    snprintf(c->ext, sizeof c->ext, "127.0.0.1:%d", h_free_port(false));
    snprintf(internal, sizeof internal, "--internal=127.0.0.1:%d", h_free_port(false));
    snprintf(external, sizeof external, "--external=%s", c->ext);
    snprintf(mopt, sizeof mopt, "--manager=%s", c->pc.manager);
    snprintf(ropt, sizeof ropt, "--res=%s", lc_res_dir());
    snprintf(key, sizeof key, "--loginKey=%s/login.key", keydir);
    snprintf(redis, sizeof redis, "--redis=%s", rh_addr(c->redis));
    snprintf(pwf, sizeof pwf, "--redisPasswordFile=%s", rh_password_file(c->redis));
    char *argv[] = {(char *)h_bin("loginapp", bin, sizeof bin), internal, external, mopt, ropt,
                    key, redis, pwf, "--pwhashCost=dev", "--autoCreateAccounts=true",
                    "--maxLoginsInFlight=2000", "--pwhashQueue=2000", NULL};
    snprintf(c->log_login, sizeof c->log_login, "%s/loginapp.log", c->pc.dir);
    c->login = h_spawn(argv, c->log_login);
    ck_assert_int_gt(c->login, 0);
    ck_assert_msg(h_wait_watch(c->pc.manager, "loginapp01", "login/redis/connected", "true",
                               WAIT_MS),
                  "the loginapp did not come up (log %s)", c->log_login);
    char o[1024];
    ck_assert_int_eq(pc_call(&c->pc, o, sizeof o, "baseapp01", "command/createBaseAnywhere",
                             "Space", world, NULL),
                     0);
    ck_assert(pc_wait_int(&c->pc, "cellapp01", "spaces/count", 1, WAIT_MS));
}

void lc_stop(lc_cluster *c)
{
    ck_assert_msg(h_alive(c->login), "the loginapp died (log %s)", c->log_login);
    h_kill(c->login, SIGTERM);
    ck_assert_int_eq(h_wait_exit(c->login, 30000), 0);
    pc_stop(&c->pc);
    rh_stop(c->redis);
}
