/* Hot reload of the game module (issue 21 item 6) under bots: a private redis-server, a
 * manager, two baseapps, a cellapp and a loginapp run the example game from a copy of
 * mc_game_example.so at a path of the test's. 30 bots log in, walk and chat for 60 s. A player of
 * mc-client emotes and hears "*emote 7*". The file at the --game path is then replaced by
 * mc_game_reload_v2.so (the same defs and sources, but Avatar.emote says "*emote N,
 * reloaded*" and Avatar.getName answers "reloaded": tests/client/GameVariant.cmake) and
 * `watcher call baseapps|cellapps command/reloadGame` swaps it into every process while the
 * bots play: a new player hears the new emote, getName of a live Avatar answers the new
 * value, game/reloads is 1 and game/module the path. Then a module from other definitions
 * (the probe game), a file that is no shared library, a missing file, a library without
 * mc_game_module_get, a module of another ABI and a module whose Avatar cell struct has
 * another size are refused with their reasons (game/reloadFailures counts them)
 * and the new code keeps running. The bots end normally: every one logged in, played, none
 * ended early, every chat answered, and the manager declared nobody dead. Every process is
 * stopped by the test (and killed by the harness if a check fails). */
#include "check_main.h"
#include "harness.h"
#include "login_cluster.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAIT_MS 20000
/* bots playing through the reloads (MC_RELOAD_BOTS overrides it: the 200 by hand) */
static int nbots(void)
{
    const char *v = getenv("MC_RELOAD_BOTS");
    return v && atoi(v) > 0 ? atoi(v) : 30;
}

typedef struct {
    lc_cluster lc;
    char game[700]; /* the --game path every entity process runs */
} rl_cluster;

static char out[1 << 20];

/* Copy from to a temporary file beside to, then rename it over to (as a build does). */
static void install(const char *from, const char *to)
{
    char tmp[800], cmd[4096];
    snprintf(tmp, sizeof tmp, "%s.new", to);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && mv -f '%s' '%s'", from, tmp, tmp, to);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void start(rl_cluster *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->game, sizeof c->game, "%s/reload-game-%d.so", h_tmpdir(), (int)getpid());
    install(MC_GAME_V1, c->game);
    lc_start_game(&c->lc, 2, NULL, c->game, "{\"spaceName\":\"world\"}");
}

static void stop(rl_cluster *c)
{
    lc_stop(&c->lc);
    unlink(c->game);
}

/* mc-client as user running script: its exit status, output in out. */
static int mc_client(rl_cluster *c, const char *user, const char *script)
{
    char bin[512], pwfile[700], sfile[700], lopt[64], kopt[128], ropt[700];
    snprintf(pwfile, sizeof pwfile, "%s/pw-%s", c->lc.pc.dir, user);
    write_file(pwfile, "secret-1\n");
    snprintf(sfile, sizeof sfile, "%s/script-%s", c->lc.pc.dir, user);
    write_file(sfile, script);
    snprintf(lopt, sizeof lopt, "--loginapp=%s", c->lc.ext);
    snprintf(kopt, sizeof kopt, "--public-key=%s", c->lc.pk_hex);
    snprintf(ropt, sizeof ropt, "--res=%s", lc_res_dir());
    char *argv[] = {(char *)h_bin("mc-client", bin, sizeof bin), "--user", (char *)user,
                    "--password-file", pwfile, "--script", sfile, lopt, kopt, ropt,
                    "--timeout", "30", "--no-moves", NULL};
    return h_run(argv, out, sizeof out, 120000);
}

/* A player who creates an avatar, plays it, emotes 7 and waits for the emote's text (want);
 * what it heard has want and not unwanted (when given). */
static void emote_heard(rl_cluster *c, const char *user, const char *avatar, const char *want,
                        const char *unwanted)
{
    char script[1024];
    snprintf(script, sizeof script,
             "expect onAvatarList\n"
             "base createAvatar [\"%s\",[1,2,3,4]]\n"
             "expect onAvatarList\n"
             "base selectAvatar [\"%s\"]\n"
             "cell emote [7]\n"
             "expect onChat %s\n"
             "quit\n",
             avatar, avatar, want);
    int rc = mc_client(c, user, script);
    ck_assert_msg(rc == 0, "mc-client %s exited %d waiting for %s: %s", user, rc, want, out);
    ck_assert_msg(strstr(out, want), "%s heard no %s: %s", user, want, out);
    ck_assert_msg(!unwanted || !strstr(out, unwanted), "%s heard %s: %s", user, unwanted, out);
}

/* `watcher --timeout 60000 call TARGET command/reloadGame [PATH]`: exit status, output. */
static int reload(rl_cluster *c, const char *target, const char *path)
{
    return h_watcher(out, sizeof out, c->lc.pc.manager, "--timeout", "60000", "call", target,
                     "command/reloadGame", path, NULL);
}

static long long sum(rl_cluster *c, const char *path)
{
    long long n = 0;
    for (int i = 0; i < c->lc.pc.nbase; i++)
        n += pc_int(&c->lc.pc, c->lc.pc.base_name[i], path);
    return n + pc_int(&c->lc.pc, "cellapp01", path);
}

/* Refused: the reason in the call's answer, the old (v2) code still running. */
static void refused(rl_cluster *c, const char *path, const char *reason)
{
    int rc = reload(c, "cellapps", path);
    ck_assert_msg(rc != 0, "reloading %s was not refused: %s", path, out);
    ck_assert_msg(strstr(out, reason), "reloading %s: no '%s' in %s", path, reason, out);
    rc = reload(c, "baseapp01", path);
    ck_assert_msg(rc != 0 && strstr(out, reason), "baseapp01 reloading %s: %s", path, out);
}

static long long json_num(const char *text, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(text, k);
    return p ? atoll(p + strlen(k)) : -1;
}

START_TEST(reload_under_bots)
{
    rl_cluster c;
    start(&c);
    /* the bots, in the background for 60 s */
    char bin[512], lopt[64], kopt[128], mopt[64], ropt[700], log[700];
    snprintf(lopt, sizeof lopt, "--loginapp=%s", c.lc.ext);
    snprintf(kopt, sizeof kopt, "--public-key=%s", c.lc.pk_hex);
    snprintf(mopt, sizeof mopt, "--manager=%s", c.lc.pc.manager);
    snprintf(ropt, sizeof ropt, "--res=%s", lc_res_dir());
    snprintf(log, sizeof log, "%s/bots.out", c.lc.pc.dir);
    char count[16], rate[16];
    snprintf(count, sizeof count, "%d", nbots());
    snprintf(rate, sizeof rate, "%d", nbots() < 100 ? nbots() : 100);
    char *argv[] = {(char *)h_bin("bots", bin, sizeof bin), "--count", count, "--rate", rate,
                    "--duration", "60", "--chat-ms", "1000", "--json", "--quiet", lopt, kopt,
                    mopt, ropt, NULL};
    pid_t bots = h_spawn(argv, log);
    ck_assert_int_gt(bots, 0);
    ck_assert_msg(pc_wait_int(&c.lc.pc, "cellapp01", "aoi/witnesses", nbots(), 60000),
                  "the bots never all played (%s)", log);

    /* the module loaded at start */
    char v[800];
    ck_assert(pc_value(&c.lc.pc, "cellapp01", "game/module", v, sizeof v));
    ck_assert_str_eq(v, c.game);
    ck_assert_int_eq(sum(&c, "game/reloads"), 0);
    ck_assert_int_gt(pc_int(&c.lc.pc, "baseapp01", "game/loadedAt"), 1600000000);
    emote_heard(&c, "alice", "Alice", "*emote 7*\"", "reloaded");

    /* a rebuild replaces the file; every baseapp and cellapp reloads it while bots play */
    install(MC_GAME_V2, c.game);
    int rc = reload(&c, "baseapps", NULL);
    ck_assert_msg(rc == 0, "baseapps reload: %s", out);
    ck_assert_msg(strstr(out, "baseapp01") && strstr(out, "baseapp02") &&
                  strstr(out, "reloaded "), "%s", out);
    rc = reload(&c, "cellapps", NULL);
    ck_assert_msg(rc == 0 && strstr(out, "cellapp01"), "cellapps reload: %s", out);
    ck_assert_int_eq(sum(&c, "game/reloads"), 3);
    ck_assert_int_eq(sum(&c, "game/reloadFailures"), 0);
    /* under the bots: still playing, every one's cell still a witness */
    ck_assert_msg(h_alive(bots), "the bots ended before the reload (%s)", log);
    ck_assert_int_ge(pc_int(&c.lc.pc, "cellapp01", "aoi/witnesses"), nbots());
    ck_assert(pc_value(&c.lc.pc, "baseapp02", "game/module", v, sizeof v));
    ck_assert_str_eq(v, c.game);
    /* the new code runs: a cell method heard by a client, a base method of a live Avatar */
    emote_heard(&c, "bob", "Bob", "*emote 7, reloaded*", "*emote 7*\"");
    static char r[1 << 16];
    char id[32] = "";
    for (int i = 0; i < c.lc.pc.nbase && !id[0]; i++) {
        if (!pc_value(&c.lc.pc, c.lc.pc.base_name[i], "entities/byType/Avatar", v, sizeof v) ||
            atoll(v) == 0)
            continue;
        ck_assert_int_eq(h_watcher(r, sizeof r, c.lc.pc.manager, "ls", c.lc.pc.base_name[i],
                                   "entities", NULL), 0);
        /* the first numeric entry that is an Avatar */
        for (char *line = strtok(r, "\n"); line && !id[0]; line = strtok(NULL, "\n")) {
            char proc[32], name[32];
            if (sscanf(line, "%31s %31s", proc, name) != 2 || name[0] < '1' || name[0] > '9')
                continue;
            name[strcspn(name, "/")] = '\0'; /* directories are listed as "4097/" */
            char p[96], t[64];
            snprintf(p, sizeof p, "entities/%s/type", name);
            if (pc_value(&c.lc.pc, proc, p, t, sizeof t) && !strcmp(t, "Avatar")) {
                snprintf(id, sizeof id, "%s", name);
                ck_assert_int_eq(pc_call(&c.lc.pc, r, sizeof r, proc, "command/call", id,
                                         "getName", "[]"),
                                 0);
                ck_assert_msg(strstr(r, "[\"reloaded\"]"), "getName answered %s", r);
            }
        }
    }
    ck_assert_msg(id[0], "no Avatar found on the baseapps: %s", r);

    /* refused, with the reason; the new code stays */
    char path[800];
    refused(&c, MC_GAME_OTHER_DEFS, "generated from other definitions");
    snprintf(path, sizeof path, "%s/not-a-module.so", c.lc.pc.dir);
    write_file(path, "this is no shared library\n");
    refused(&c, path, "cannot load game module");
    snprintf(path, sizeof path, "%s/no-such-module.so", c.lc.pc.dir);
    refused(&c, path, "cannot open");
    refused(&c, MC_NOT_A_GAME, "is not a game module (no mc_game_module_get)");
    refused(&c, MC_GAME_BAD_ABI, "generated for game module ABI");
    refused(&c, MC_GAME_BAD_SIZE, "Avatar's cell properties take");
    ck_assert_int_eq(pc_int(&c.lc.pc, "cellapp01", "game/reloadFailures"), 6);
    ck_assert_int_eq(pc_int(&c.lc.pc, "baseapp01", "game/reloadFailures"), 6);
    ck_assert_int_eq(sum(&c, "game/reloads"), 3);
    emote_heard(&c, "carol", "Carol", "*emote 7, reloaded*", "*emote 7*\"");

    /* the bots end normally */
    rc = h_wait_exit(bots, 180000);
    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    const char *json = strstr(out, "{\"bots\":");
    ck_assert_msg(json, "exit %d: %s", rc, out);
    fprintf(stderr, "bots through reloads: %s\n", json);
    ck_assert_msg(rc == 0, "bots exited %d: %s", rc, json);
    ck_assert_int_eq(json_num(json, "logged_in"), nbots());
    ck_assert_int_eq(json_num(json, "playing"), nbots());
    ck_assert_int_eq(json_num(json, "ended_early"), 0);
    ck_assert_int_eq(json_num(json, "failed"), 0);
    /* every chat answered but those in flight when the run ended (one a bot at most) */
    long long sent = json_num(json, "calls_sent"), answered = json_num(json, "calls_answered");
    ck_assert_int_gt(answered, 0);
    ck_assert_msg(answered <= sent && sent - answered <= nbots(),
                  "chats sent %lld, answered %lld", sent, answered);
    ck_assert_int_eq(pc_int(&c.lc.pc, "manager", "counts/deaths"), 0);
    stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("reload");
    TCase *tc = tcase_create("reload");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, reload_under_bots);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
