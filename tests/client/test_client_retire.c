/* Retiring a baseapp under bots (issue 20 item 6; docs/ENTITIES.md "Retiring a baseapp"),
 * through real processes: a private redis-server, a manager, two baseapps, a cellapp with
 * the example game's "world" and a loginapp (tests/client/login_cluster.h).
 *
 * bots play on both baseapps; the one with more players is retired (`watcher call NAME
 * command/retire`, what deploy/cluster retire runs): the manager takes it out of the backup
 * ring and places nothing on it; it offloads every base to the other baseapp (OFFLOAD_BASE),
 * tells each client to resume there, and exits 0 once it is empty. Checked: every base it
 * had lives on the survivor (retire/received there, retire/offloaded here, nothing failed),
 * every player stays in the world (the cellapp keeps every Avatar; the survivor holds every
 * client), no owner record in Redis names the retired baseapp any more (the check-outs
 * passed to the survivor), no new login was needed, and bots reports every bot resumed by
 * itself and none ended early. Every process is stopped by the test. */
#include "check_main.h"
#include "harness.h"
#include "login_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 60000
#define BOTS 12

static const char base_conf[] = "resumeGraceMs = 30000\n"
                                "retireLingerMs = 1000\n"
                                "retireBytesPerSec = 20000\n";

static long long counter(lc_cluster *c, const char *proc, const char *path)
{
    return pc_int(&c->pc, proc, path);
}

static bool wait_ge(lc_cluster *c, const char *proc, const char *path, long long want)
{
    for (int waited = 0; waited < WAIT_MS; waited += 200) {
        if (counter(c, proc, path) >= want)
            return true;
        h_sleep_ms(200);
    }
    return false;
}

/* How many owner records in Redis name this process. */
static int owned_by(lc_cluster *c, const char *name)
{
    static char keys[1 << 16];
    ck_assert_int_eq(rh_cli(c->redis, keys, sizeof keys, "KEYS", "mc:o:*", NULL), 0);
    int n = 0;
    for (char *k = strtok(keys, "\n"); k; k = strtok(NULL, "\n")) {
        if (!*k)
            continue;
        char owner[128];
        char key[256];
        snprintf(key, sizeof key, "%s", k);
        if (rh_cli(c->redis, owner, sizeof owner, "HGET", key, "owner", NULL) == 0) {
            owner[strcspn(owner, "\n")] = '\0';
            if (strcmp(owner, name) == 0)
                n++;
        }
    }
    return n;
}

START_TEST(retire_under_bots)
{
    lc_cluster c;
    lc_start(&c, 2, base_conf, "{\"spaceName\":\"world\"}");
    char bin[512], lopt[64], kopt[128], mopt[64], ropt[700], log[700], count[16];
    snprintf(lopt, sizeof lopt, "--loginapp=%s", c.ext);
    snprintf(kopt, sizeof kopt, "--public-key=%s", c.pk_hex);
    snprintf(mopt, sizeof mopt, "--manager=%s", c.pc.manager);
    snprintf(ropt, sizeof ropt, "--res=%s", lc_res_dir());
    snprintf(count, sizeof count, "%d", BOTS);
    snprintf(log, sizeof log, "%s/bots.out", c.pc.dir);
    char *argv[] = {(char *)h_bin("bots", bin, sizeof bin), "--count", count, "--rate", "20",
                    "--duration", "60", "--idle-ms", "3000", "--json", "--quiet", lopt, kopt,
                    mopt, ropt, NULL};
    pid_t bots = h_spawn(argv, log);
    ck_assert_int_gt(bots, 0);
    /* every bot plays: the Space and an Avatar each in the cellapp, a client each */
    ck_assert_msg(wait_ge(&c, "cellapp01", "entities/count", BOTS + 1), "the bots did not play");
    long long on[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        on[i] = counter(&c, c.pc.base_name[i], "clients/connected");
    ck_assert_int_eq(on[0] + on[1], BOTS);
    int slot = on[0] >= on[1] ? 0 : 1, other = 1 - slot;
    const char *name = c.pc.base_name[slot], *survivor = c.pc.base_name[other];
    ck_assert_int_gt(on[slot], 0);
    long long bases = counter(&c, name, "entities/count");
    ck_assert_int_gt(bases, 0);
    ck_assert_int_gt(owned_by(&c, name), 0);
    long long logins = counter(&c, "loginapp01", "login/status/ok");

    /* retire it: the command answers once the manager marked it */
    char out[4096];
    int rc = pc_call(&c.pc, out, sizeof out, name, "command/retire", NULL, NULL, NULL);
    ck_assert_msg(rc == 0, "command/retire: %s", out);
    ck_assert_msg(strstr(out, "retiring"), "%s", out);
    ck_assert_int_ge(counter(&c, "manager", "registry/retiringMarked"), 1);
    /* it empties itself and stops gracefully */
    ck_assert_int_eq(h_wait_exit(c.pc.base[slot], 120000), 0);
    c.pc.base[slot] = -1;
    ck_assert_msg(h_file_contains(c.pc.log_base[slot], "every base is offloaded"), "%s",
                  c.pc.log_base[slot]);
    /* every base it had lives on the survivor; every player is there and in the world */
    ck_assert_int_ge(counter(&c, survivor, "retire/received"), bases);
    ck_assert_int_eq(counter(&c, survivor, "retire/receiveRefused"), 0);
    ck_assert_msg(wait_ge(&c, survivor, "clients/connected", BOTS),
                  "the players did not all come to %s", survivor);
    ck_assert_int_eq(counter(&c, "cellapp01", "entities/count"), BOTS + 1);
    ck_assert_int_ge(counter(&c, "loginapp01", "resume/resumed"), on[slot]);
    ck_assert_int_eq(counter(&c, "loginapp01", "login/status/ok"), logins); /* no login */
    /* the check-outs passed to the survivor: nothing in Redis is the retired one's */
    ck_assert_int_eq(owned_by(&c, name), 0);

    rc = h_wait_exit(bots, 120000);
    FILE *f = fopen(log, "r");
    static char text[1 << 16];
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    ck_assert_msg(rc == 0, "bots exited %d: %s", rc, text);
    const char *p = strstr(text, "\"resumes\":");
    ck_assert_msg(p && atoi(p + 10) >= on[slot], "%s", text);
    ck_assert_msg(strstr(text, "\"resume_failed\":0,"), "%s", text);
    ck_assert_msg(strstr(text, "\"ended_early\":0,"), "%s", text);
    lc_stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("client_retire");
    TCase *tc = tcase_create("retire");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, retire_under_bots);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
