/* The web console in a real browser: a cluster launched with deploy/cluster, ten bots
 * playing, and headless Chromium (driven by tests/console/browser.mjs through the DevTools
 * protocol) logging in, finding every process listed alive, plots with points, setting a
 * watcher through the page (read back here with the watcher tool), looking an entity up,
 * and requests without the password or the CSRF token refused. Screenshots land in the
 * test's run dir. Skipped (exit 77, a clear message) where Node or Chromium cannot run. */
#include "console_cluster.h"
#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"

#define SKIP_CODE 77

static char node_bin[256] = "/usr/bin/node";
static char chromium_bin[256] = "/usr/bin/chromium";

/* Kill the Chromium the driver started (its pid file), also when the driver was killed. */
static void kill_chromium(const char *pid_file)
{
    FILE *f = fopen(pid_file, "r");
    int pid = 0;
    if (f) {
        if (fscanf(f, "%d", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    if (pid > 1) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
}

START_TEST(console_in_a_browser)
{
    cc_cluster c;
    cc_up(&c, "browser");
    char buf[700], out[16384];

    /* ten players: accounts, then bots for a minute */
    char redis[64], pwfile[700], acct[256];
    snprintf(redis, sizeof redis, "--redis=127.0.0.1:%d", c.redis_port);
    snprintf(pwfile, sizeof pwfile, "--redisPasswordFile=%s",
             cc_run_file(&c, "redis.password", buf, sizeof buf));
    h_bin("mc-account", acct, sizeof acct);
    for (int i = 1; i <= 10; i++) {
        char name[32], cmd[2048];
        snprintf(name, sizeof name, "web%04d", i);
        snprintf(cmd, sizeof cmd, "printf 'bot-password\\n' | '%s' '%s' '%s' --pwhashCost=dev create %s",
                 acct, redis, pwfile, name);
        char *argv[] = {"/bin/sh", "-c", cmd, NULL};
        int rc = h_run(argv, out, sizeof out, 60000);
        ck_assert_msg(rc == 0, "mc-account (%d): %s", rc, out);
    }
    char bots[256], log[700];
    h_bin("bots", bots, sizeof bots);
    snprintf(log, sizeof log, "%s/bots.log", h_tmpdir());
    char run_env[800];
    snprintf(run_env, sizeof run_env, "MC_RUN_DIR=%s", c.run);
    char *bargv[] = {"/usr/bin/env", run_env,   bots,       "--count", "10",      "--rate",
                     "5",            "--duration", "90",     "--prefix", "web",    "--quiet",
                     NULL};
    pid_t bp = h_spawn(bargv, log);
    ck_assert_int_gt(bp, 0);
    ck_assert_msg(h_wait_watch(c.manager, "baseapp01", "clients/connected", "10", 60000),
                  "the bots did not connect (see %s)", log);

    /* an entity to look up: the first on the baseapp */
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "ls", "baseapp01", "entities", NULL), 0);
    int entity = 0;
    for (char *p = out; *p && !entity; p++)
        if ((p == out || p[-1] == ' ') && *p >= '1' && *p <= '9' && strchr(p, '/') &&
            strspn(p, "0123456789") == (size_t)(strchr(p, '/') - p))
            entity = atoi(p);
    ck_assert_msg(entity > 0, "no entity on baseapp01: %s", out);

    char driver[700], url[128], shots[700], pid_file[700], procs[128], ent[16];
    snprintf(driver, sizeof driver, "%s/tests/console/browser.mjs", h_source_dir());
    snprintf(url, sizeof url, "http://%s/", c.manager);
    snprintf(shots, sizeof shots, "%s/screenshots", h_tmpdir());
    snprintf(pid_file, sizeof pid_file, "%s/chromium.pid", h_tmpdir());
    snprintf(procs, sizeof procs, "manager,loginapp01,baseapp01,cellapp01");
    snprintf(ent, sizeof ent, "%d", entity);
    ck_assert_int_eq(mkdir(shots, 0755), 0);
    char chromium_env[300];
    snprintf(chromium_env, sizeof chromium_env, "MC_CHROMIUM=%s", chromium_bin);
    char *argv[] = {"/usr/bin/env", chromium_env, node_bin, driver, "--url", url, "--password-file",
                    (char *)cc_run_file(&c, "console.password", buf, sizeof buf), "--out", shots,
                    "--processes", procs, "--set-process", "cellapp01", "--set-path",
                    "aoi/sliceMs", "--set-value", "37", "--entity-id", ent, "--pid-file",
                    pid_file, "--timeout-s", "150", NULL};
    static char drv_out[65536];
    int rc = h_run(argv, drv_out, sizeof drv_out, 170000);
    kill_chromium(pid_file);
    printf("browser driver (exit %d):\n%s\nscreenshots in %s\n", rc, drv_out, shots);
    ck_assert_msg(rc == 0 && strstr(drv_out, "PASS"), "the browser test failed (%d):\n%s", rc,
                  drv_out);

    /* the value set through the page, read back with the watcher tool */
    ck_assert_int_eq(h_watcher(out, sizeof out, c.manager, "get", "cellapp01", "aoi/sliceMs", NULL),
                     0);
    ck_assert_msg(strstr(out, "37"), "aoi/sliceMs after the page set it: %s", out);
    char png[800];
    snprintf(png, sizeof png, "%s/console.png", shots);
    ck_assert_msg(access(png, R_OK) == 0, "no screenshot %s", png);

    h_kill(bp, SIGTERM);
    h_wait_exit(bp, 20000);
    cc_down(&c);
}
END_TEST

static Suite *browser_suite(void)
{
    Suite *s = suite_create("console_browser");
    TCase *tc = tcase_create("browser");
    tcase_set_timeout(tc, 400);
    tcase_add_test(tc, console_in_a_browser);
    suite_add_tcase(s, tc);
    return s;
}

/* Can Node and a headless Chromium run here? false with the reason. */
static bool browser_can_run(char *why, size_t whylen)
{
    const char *env = getenv("MC_CHROMIUM");
    if (env && *env)
        snprintf(chromium_bin, sizeof chromium_bin, "%s", env);
    const char *node = getenv("MC_NODE");
    if (node && *node)
        snprintf(node_bin, sizeof node_bin, "%s", node);
    if (access(node_bin, X_OK) != 0) {
        snprintf(why, whylen, "no Node.js at %s (deploy/install-deps --tests installs nodejs)",
                 node_bin);
        return false;
    }
    if (access(chromium_bin, X_OK) != 0) {
        snprintf(why, whylen, "no Chromium at %s (deploy/install-deps --tests installs chromium)",
                 chromium_bin);
        return false;
    }
    static char out[1 << 16];
    char *argv[] = {chromium_bin, "--headless=new", "--no-sandbox", "--disable-gpu",
                    "--dump-dom", "about:blank", NULL};
    int rc = h_run(argv, out, sizeof out, 60000);
    if (rc != 0 || !strstr(out, "<html")) {
        /* the last line says most (Chromium logs a lot before it gives up) */
        size_t n = strlen(out);
        while (n && (out[n - 1] == '\n' || out[n - 1] == '\r'))
            out[--n] = '\0';
        const char *last = strrchr(out, '\n');
        snprintf(why, whylen, "headless Chromium cannot run here (exit %d): %.300s", rc,
                 last ? last + 1 : out);
        return false;
    }
    return true;
}

int main(void)
{
    char why[512];
    if (!browser_can_run(why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return SKIP_CODE;
    }
    return mc_check_run(browser_suite());
}
