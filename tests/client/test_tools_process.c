/* mc-client and bots against real processes: a private redis-server, a manager, two
 * baseapps, a cellapp (the example game, a "world" space) and a loginapp with
 * --autoCreateAccounts and the development hashing cost. mc-client runs a script (create an
 * avatar, select it, chat, expect the chat back) and exits 0 with the lines it heard; a wrong
 * password exits 12 (10 + bad password); a missing expect exits 40. bots logs 200 players in
 * at 100/s, walks and chats for 8 s and compares every view with the cellapp's: no failure,
 * every chat answered, no mismatch (all at the origin: each sees the other 199). Then 1,000
 * bots log in at 250/s into a world that spreads its newcomers over a disc (about 50 in view
 * each) and play together: every login ok, every avatar in the world, every view the
 * cellapp's (the "1,000 bots logged in at once with no failure"). In both the manager
 * declares nobody dead, and with 200 the cellapp's view updates run in slices of 1 ms (more
 * than one a tick) without a view differing (issue 20, "busy is not dead"). Every process is
 * stopped by the test (and killed by the harness if a check fails). */
#include "check_main.h"
#include "harness.h"
#include "login_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mercury/address.h"
#include "secure/handshake.h"

#define WAIT_MS 20000

/* The cluster, and its world: a Space with these properties (JSON). */
static void start_world(lc_cluster *c, const char *world) { lc_start(c, 2, NULL, world); }

/* The world every Avatar enters at the origin. */
static void start(lc_cluster *c) { start_world(c, "{\"spaceName\":\"world\"}"); }

static void stop(lc_cluster *c) { lc_stop(c); }

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* mc-client --user USER --password-file PWFILE [--script SCRIPT]: its exit status. */
static int mc_client(lc_cluster *c, const char *user, const char *pw, const char *script,
                     char *out, size_t outlen)
{
    char bin[512], pwfile[700], sfile[700], lopt[64], kopt[128], ropt[700];
    snprintf(pwfile, sizeof pwfile, "%s/pw-%s", c->pc.dir, user);
    write_file(pwfile, pw);
    snprintf(sfile, sizeof sfile, "%s/script-%s", c->pc.dir, user);
    write_file(sfile, script);
    snprintf(lopt, sizeof lopt, "--loginapp=%s", c->ext);
    snprintf(kopt, sizeof kopt, "--public-key=%s", c->pk_hex);
    snprintf(ropt, sizeof ropt, "--res=%s", lc_res_dir());
    char *argv[] = {(char *)h_bin("mc-client", bin, sizeof bin), "--user", (char *)user,
                    "--password-file", pwfile, "--script", sfile, lopt, kopt, ropt,
                    "--timeout", "15", "--no-moves", NULL};
    return h_run(argv, out, outlen, 60000);
}

/* bots ... --json --quiet with the cluster's addresses: exit status, output in out. */
static int bots(lc_cluster *c, const char *count, const char *rate, const char *duration,
                bool check_view, const char *extra, char *out, size_t outlen, int timeout_ms)
{
    char bin[512], lopt[64], kopt[128], mopt[64], ropt[700];
    snprintf(lopt, sizeof lopt, "--loginapp=%s", c->ext);
    snprintf(kopt, sizeof kopt, "--public-key=%s", c->pk_hex);
    snprintf(mopt, sizeof mopt, "--manager=%s", c->pc.manager);
    snprintf(ropt, sizeof ropt, "--res=%s", lc_res_dir());
    char *argv[] = {(char *)h_bin("bots", bin, sizeof bin), "--count", (char *)count, "--rate",
                    (char *)rate, "--duration", (char *)duration, "--json", "--quiet", lopt,
                    kopt, mopt, ropt, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int n = 13;
    if (check_view)
        argv[n++] = "--check-view";
    /* extra: "--opt=value --opt=value ..." (at most four) */
    char ex[256];
    snprintf(ex, sizeof ex, "%s", extra ? extra : "");
    char *save = NULL;
    for (char *w = strtok_r(ex, " ", &save); w && n < 18; w = strtok_r(NULL, " ", &save))
        argv[n++] = w;
    return h_run(argv, out, outlen, timeout_ms);
}

/* A number after "key": in the JSON summary (-1 when missing). */
static long long json_num(const char *out, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(out, k);
    return p ? atoll(p + strlen(k)) : -1;
}

static char out[1 << 20];

static long client_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

START_TEST(mc_client_script_and_statuses)
{
    lc_cluster c;
    start(&c);
    const char *script = "# create an avatar, play it, chat and hear it back\n"
                         "expect onAvatarList\n"
                         "base createAvatar [\"Hero\",[1,2,3,4]]\n"
                         "expect onAvatarList\n"
                         "base selectAvatar [\"Hero\"]\n"
                         "cell chat [\"hello from the test\"]\n"
                         "expect onChat\n"
                         "move 1 0 2\n"
                         "wait 200\n"
                         "quit\n";
    int rc = mc_client(&c, "alice", "secret-1\n", script, out, sizeof out);
    ck_assert_msg(rc == 0, "mc-client exited %d: %s (log %s)", rc, out, c.log_login);
    ck_assert_msg(strstr(out, "login alice logged in through "), "%s", out);
    ck_assert_msg(strstr(out, " Account {\"accountName\":\"alice\"}"), "%s", out);
    ck_assert_msg(strstr(out, "Account.onAvatarList [[{\"name\":\"Hero\",\"level\":1}]]"), "%s",
                  out);
    ck_assert_msg(strstr(out, " Avatar {\"name\":\"Hero\",\"xp\":0}"), "%s", out);
    ck_assert_msg(strstr(out, "Avatar.onChat [") && strstr(out, ",\"hello from the test\"]"),
                  "%s", out);
    ck_assert_msg(strstr(out, "end closed"), "%s", out);

    /* a wrong password: 10 + bad password (2), the reason on stderr */
    rc = mc_client(&c, "alice", "not-it\n", "quit\n", out, sizeof out);
    ck_assert_msg(rc == 12, "wrong password: exit %d: %s", rc, out);
    ck_assert_msg(strstr(out, "bad password"), "%s", out);

    /* an expect that never comes: 40 */
    rc = mc_client(&c, "bob", "pw-bob\n", "expect onChat\n", out, sizeof out);
    ck_assert_msg(rc == 40, "expect: exit %d: %s", rc, out);
    /* a method that is not exposed: 41 */
    rc = mc_client(&c, "carol", "pw-carol\n", "base getAvatarCount []\n", out, sizeof out);
    ck_assert_msg(rc == 41, "unexposed: exit %d: %s", rc, out);
    ck_assert_msg(strstr(out, "no exposed method 'getAvatarCount'"), "%s", out);

    /* 40 bots from one address at once: past the loginapp's burst (20) they are refused
     * "rate limited"; with one attempt those fail, with ten (back-off from 500 ms) every one
     * logs in */
    rc = bots(&c, "40", "1000", "2", false, "--sources=1 --login-tries=1 --prefix=once", out,
              sizeof out, 120000);
    const char *json = strstr(out, "{\"bots\":");
    ck_assert_msg(json && rc == 3, "one try: exit %d: %s", rc, out);
    ck_assert_int_gt(json_num(json, "rate limited"), 0);
    ck_assert_int_eq(json_num(json, "login_retries"), 0);
    rc = bots(&c, "40", "1000", "2", false, "--sources=1 --login-tries=10 --prefix=again", out,
              sizeof out, 120000);
    json = strstr(out, "{\"bots\":");
    ck_assert_msg(json && rc == 0, "ten tries: exit %d: %s", rc, out);
    ck_assert_int_eq(json_num(json, "logged_in"), 40);
    ck_assert_int_eq(json_num(json, "failed"), 0);
    ck_assert_int_gt(json_num(json, "login_retries"), 0);
    stop(&c);
}
END_TEST

/* The cellapp's view update in slices of 1 ms (aoi/sliceMs): 200 witnesses seeing each other
 * take more than one (docs/WORLD.md "The tick"). */
static void slice_views_finely(lc_cluster *c)
{
    char o[1024];
    int rc = h_watcher(o, sizeof o, c->pc.manager, "set", "cellapp01", "aoi/sliceMs", "1", NULL);
    ck_assert_msg(rc == 0, "%d %s", rc, o);
}

/* Nobody was declared dead: busy is not dead (issue 20). */
static void nobody_died(lc_cluster *c)
{
    long long deaths = pc_int(&c->pc, "manager", "counts/deaths");
    fprintf(stderr, "cellapp01: loop/maxLagMs %lld, aoi/mostSlices %lld, aoi/maxSliceUs %lld, "
                    "aoi/maxUpdateUs %lld, aoi/ticksLate %lld; manager counts/deaths %lld\n",
            pc_int(&c->pc, "cellapp01", "loop/maxLagMs"),
            pc_int(&c->pc, "cellapp01", "aoi/mostSlices"),
            pc_int(&c->pc, "cellapp01", "aoi/maxSliceUs"),
            pc_int(&c->pc, "cellapp01", "aoi/maxUpdateUs"),
            pc_int(&c->pc, "cellapp01", "aoi/ticksLate"), deaths);
    ck_assert_int_eq(deaths, 0);
}

START_TEST(bots_200_check_view)
{
    lc_cluster c;
    start(&c);
    slice_views_finely(&c);
    int rc = bots(&c, "200", "100", "8", true, NULL, out, sizeof out, 120000);
    ck_assert_msg(rc == 0, "bots exited %d: %s", rc, out);
    const char *json = strstr(out, "{\"bots\":");
    ck_assert_msg(json, "%s", out);
    ck_assert_int_eq(json_num(json, "logged_in"), 200);
    ck_assert_int_eq(json_num(json, "playing"), 200);
    ck_assert_int_eq(json_num(json, "failed"), 0);
    ck_assert_int_eq(json_num(json, "ended_early"), 0);
    ck_assert_int_eq(json_num(json, "view_checked"), 200);
    ck_assert_int_eq(json_num(json, "view_mismatches"), 0);
    /* the same ids, not only as many (the cellapp's aoi/viewIds) */
    ck_assert_int_eq(json_num(json, "view_ids_compared"), 200);
    long long sent = json_num(json, "calls_sent"), answered = json_num(json, "calls_answered");
    ck_assert_msg(sent > 0 && answered == sent, "%s", json);
    ck_assert_msg(strstr(json, "\"rtt_p50_ms\":") && strstr(json, "\"rtt_p99_ms\":"), "%s", json);
    ck_assert_int_gt(json_num(json, "bytes_sent"), 0);
    ck_assert_int_gt(json_num(json, "bytes_received"), 0);
    /* the loginapp made the accounts and answered every login ok */
    ck_assert_int_eq(pc_int(&c.pc, "loginapp01", "login/status/ok"), 200);
    /* the views matched although every update ran in slices with the loop between them; a
     * slice ends after the witness that passed 1 ms (a bound of a second: a loaded machine
     * may stop a process for a while, which no slicing prevents) */
    nobody_died(&c);
    ck_assert_int_ge(pc_int(&c.pc, "cellapp01", "aoi/mostSlices"), 2);
    ck_assert_int_lt(pc_int(&c.pc, "cellapp01", "aoi/maxSliceUs"), 1000000);
    stop(&c);
}
END_TEST

START_TEST(bots_1000_at_once)
{
    lc_cluster c;
    /* newcomers spread over a disc of 225 m and walking over 400 x 400 m: about 50 in a 50 m
     * view each, as the world benchmark has them */
    start_world(&c, "{\"spaceName\":\"world\",\"spawnRadius\":225}");
    /* logins started at 250/s; all 1,000 online together for the rest of the 30 s, moving
     * once a second and chatting every 30 s on average; then every view compared with the
     * cellapp's */
    int rc = bots(&c, "1000", "250", "30", true,
                  "--move-ms=1000 --chat-ms=30000 --area=400 --speed=5", out, sizeof out,
                  600000);
    const char *json = strstr(out, "{\"bots\":");
    ck_assert_msg(json, "exit %d: %s", rc, out);
    fprintf(stderr, "1,000 bots: %s\n", json);
    ck_assert_msg(rc == 0, "bots exited %d: %s", rc, json);
    ck_assert_int_eq(json_num(json, "logged_in"), 1000);
    ck_assert_int_eq(json_num(json, "failed"), 0);
    ck_assert_int_eq(json_num(json, "ended_early"), 0);
    ck_assert_int_eq(json_num(json, "playing"), 1000);
    ck_assert_int_eq(json_num(json, "view_checked"), 1000);
    ck_assert_int_eq(json_num(json, "view_mismatches"), 0);
    ck_assert_int_eq(pc_int(&c.pc, "loginapp01", "login/status/ok"), 1000);
    nobody_died(&c);
    stop(&c);
}
END_TEST

/* Players keep playing through the kill -9 of the cellapp holding their cells (issue 20,
 * item 3): 100 bots walk and chat in the world (all at the origin: each sees the other 99)
 * on cellapp01 with cellapp02 idle beside it; cellapp01 is killed with SIGKILL in the middle
 * of the run. Every cell (the 100 avatars' and the Space's) comes back once on cellapp02 in
 * the same space, every player's cell a witness again, the bots go on moving there (moves
 * accepted by cellapp02), and at the end every bot's view is the cellapp's, by ids: the
 * clients dropped what the lost cellapp showed them and see each other again. */
START_TEST(bots_play_on_when_their_cellapp_is_killed)
{
    lc_cluster c;
    start(&c);
    c.pc.registrations++; /* the loginapp's: pc_add_cellapp waits for the next one */
    pc_add_cellapp(&c.pc);
    long long space = pc_int(&c.pc, "cellapp01", "spaces/count");
    ck_assert_int_eq(space, 1);
    char bin[512], lopt[64], kopt[128], mopt[64], ropt[700], log[700];
    snprintf(lopt, sizeof lopt, "--loginapp=%s", c.ext);
    snprintf(kopt, sizeof kopt, "--public-key=%s", c.pk_hex);
    snprintf(mopt, sizeof mopt, "--manager=%s", c.pc.manager);
    snprintf(ropt, sizeof ropt, "--res=%s", lc_res_dir());
    snprintf(log, sizeof log, "%s/bots-restore.out", c.pc.dir);
    char *argv[] = {(char *)h_bin("bots", bin, sizeof bin), "--count", "100", "--rate", "100",
                    "--duration", "25", "--json", "--quiet", "--check-view", lopt, kopt, mopt,
                    ropt, NULL};
    pid_t pid = h_spawn(argv, log);
    ck_assert_int_gt(pid, 0);
    /* all 100 playing on cellapp01 (their cells witnesses), then 2 s more of it */
    ck_assert_msg(pc_wait_int(&c.pc, "cellapp01", "aoi/witnesses", 100, 60000),
                  "the bots never all played (%s)", log);
    h_sleep_ms(2000);
    long long cells = pc_int(&c.pc, "cellapp01", "entities/count");
    ck_assert_int_eq(cells, 101); /* the avatars and the Space */
    ck_assert_int_eq(pc_int(&c.pc, "cellapp02", "entities/count"), 0);
    long t0 = client_now_ms();
    h_kill(c.pc.cell, SIGKILL);
    ck_assert_int_eq(h_wait_exit(c.pc.cell, 10000), 128 + SIGKILL);
    c.pc.cell = -1;
    /* every cell back, once, on cellapp02 */
    long long restored = 0;
    for (long deadline = client_now_ms() + 60000; client_now_ms() < deadline;
         h_sleep_ms(100)) {
        restored = pc_int(&c.pc, "baseapp01", "cells/restored") +
                   pc_int(&c.pc, "baseapp02", "cells/restored");
        if (restored >= cells)
            break;
    }
    fprintf(stderr, "cells restored %lld/%lld, %ld ms after the kill\n", restored, cells,
            client_now_ms() - t0);
    ck_assert_int_eq(restored, cells);
    ck_assert_int_eq(pc_int(&c.pc, "cellapp02", "entities/count"), cells);
    ck_assert_int_eq(pc_int(&c.pc, "cellapp02", "spaces/count"), 1);
    ck_assert(pc_wait_int(&c.pc, "cellapp02", "aoi/witnesses", 100, WAIT_MS));
    ck_assert_int_eq(pc_int(&c.pc, "manager", "spaceHomes/picked"), 1);
    /* they go on moving there */
    long long accepted = 0;
    for (long deadline = client_now_ms() + WAIT_MS; client_now_ms() < deadline;
         h_sleep_ms(100))
        if ((accepted = pc_int(&c.pc, "cellapp02", "clientMoves/accepted")) > 100)
            break;
    ck_assert_msg(accepted > 100, "cellapp02 accepted %lld moves", accepted);
    /* the run ends with every view checked against cellapp02 */
    int rc = h_wait_exit(pid, 180000);
    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    const char *json = strstr(out, "{\"bots\":");
    ck_assert_msg(json, "exit %d: %s", rc, out);
    fprintf(stderr, "bots through a cellapp's kill -9: %s\n", json);
    ck_assert_msg(rc == 0, "bots exited %d: %s", rc, json);
    ck_assert_int_eq(json_num(json, "logged_in"), 100);
    ck_assert_int_eq(json_num(json, "playing"), 100);
    ck_assert_int_eq(json_num(json, "ended_early"), 0);
    ck_assert_int_eq(json_num(json, "view_checked"), 100);
    ck_assert_int_eq(json_num(json, "view_ids_compared"), 100);
    ck_assert_int_eq(json_num(json, "view_mismatches"), 0);
    ck_assert_int_eq(pc_int(&c.pc, "manager", "counts/deaths"), 1);
    stop(&c);
}
END_TEST

/* One world over two cellapps (issue 22): the world space split at x = 0 between cellapp01
 * and cellapp02 (command/splitSpace), 100 bots spread over a disc of 60 m around the origin
 * walking back and forth across the boundary for 25 s: their cells offload to the other
 * cellapp as they cross, each side holds ghosts of the other's players near the boundary,
 * and at the end every bot's view is what the cellapps say (by ids), reals and ghosts
 * alike: zero mismatches across cells. */
START_TEST(bots_walk_across_a_cell_boundary_and_see_whole_views)
{
    lc_cluster c;
    start_world(&c, "{\"spaceName\":\"world\",\"spawnRadius\":60}");
    c.pc.registrations++; /* the loginapp's: pc_add_cellapp waits for the next one */
    pc_add_cellapp(&c.pc);
    char o[4096], space[32] = "";
    ck_assert(pc_wait_int(&c.pc, "manager", "cells/spaceCount", 1, WAIT_MS));
    ck_assert_int_eq(h_watcher(o, sizeof o, c.pc.manager, "ls", "manager", "cells/spaces", NULL),
                     0);
    ck_assert_msg(sscanf(o, "manager %31s", space) == 1, "%s", o);
    int rc = h_watcher(o, sizeof o, c.pc.manager, "call", "manager", "command/splitSpace", space,
                       "cellapp02", "0", NULL);
    ck_assert_msg(rc == 0 && strstr(o, "cellapp02 serves x[0,inf)"), "split: %d %s", rc, o);
    rc = bots(&c, "100", "100", "25", true, "--area=120 --speed=5 --move-ms=200", out,
              sizeof out, 300000);
    const char *json = strstr(out, "{\"bots\":");
    ck_assert_msg(json, "exit %d: %s", rc, out);
    long long offloads = pc_int(&c.pc, "cellapp01", "ghosts/offloads") +
                         pc_int(&c.pc, "cellapp02", "ghosts/offloads");
    long long ghosts = pc_int(&c.pc, "cellapp01", "ghosts/created") +
                       pc_int(&c.pc, "cellapp02", "ghosts/created");
    fprintf(stderr, "bots across a cell boundary: offloads %lld, ghosts made %lld: %s\n",
            offloads, ghosts, json);
    ck_assert_msg(rc == 0, "bots exited %d: %s", rc, json);
    ck_assert_int_eq(json_num(json, "logged_in"), 100);
    ck_assert_int_eq(json_num(json, "playing"), 100);
    ck_assert_int_eq(json_num(json, "ended_early"), 0);
    ck_assert_int_eq(json_num(json, "view_checked"), 100);
    ck_assert_int_eq(json_num(json, "view_ids_compared"), 100);
    ck_assert_int_eq(json_num(json, "view_mismatches"), 0);
    /* the boundary was crossed, both ways, and players were seen across it */
    ck_assert_int_gt(pc_int(&c.pc, "cellapp01", "ghosts/offloads"), 0);
    ck_assert_int_gt(pc_int(&c.pc, "cellapp02", "ghosts/offloads"), 0);
    ck_assert_int_gt(ghosts, 0);
    ck_assert_int_eq(pc_int(&c.pc, "cellapp01", "ghosts/refused") +
                         pc_int(&c.pc, "cellapp02", "ghosts/refused"),
                     0);
    ck_assert_int_eq(pc_int(&c.pc, "manager", "counts/deaths"), 0);
    stop(&c);
}
END_TEST

/* One target of the spoofing test: where, and what went each way. */
typedef struct {
    struct sockaddr_in to;
    uint64_t sent, got, datagrams_in;
} target;

static void send_to(int fd, target *t, const uint8_t *p, size_t n)
{
    if (sendto(fd, p, n, 0, (const struct sockaddr *)&t->to, sizeof t->to) == (ssize_t)n)
        t->sent += n;
}

/* Sources that never proved their address (a socket that sends and reads but never takes a
 * handshake further, as a spoofer with a victim's address would) get no more bytes back from
 * the loginapp's and the baseapp's external ports than they sent: valid HELLOs (answered
 * with smaller CHALLENGEs: counted, so the test sees the answers), junk of every size, DATA
 * and LOGIN lookalikes, repeated. */
START_TEST(unproven_sources_get_no_more_than_they_sent)
{
    lc_cluster c;
    start(&c);
    char o[1024], acc[32];
    ck_assert_int_eq(pc_call(&c.pc, o, sizeof o, "baseapp01", "command/createBase", "Account",
                             "{\"accountName\":\"spoofed\"}", NULL),
                     0);
    ck_assert(pc_result(o, "command/createBase", acc, sizeof acc));
    acc[strspn(acc, "0123456789")] = '\0'; /* "ID BASE ID at ..." */
    int rc = pc_call(&c.pc, o, sizeof o, "baseapp01", "command/issueSession", acc, NULL, NULL);
    ck_assert_msg(rc == 0, "issueSession %s: exit %d: %s", acc, rc, o);
    char sess[256], hex[80], base_ext[64];
    unsigned long long sid;
    ck_assert(pc_result(o, "command/issueSession", sess, sizeof sess));
    ck_assert_msg(sscanf(sess, "%llx %79s %63s", &sid, hex, base_ext) == 3, "%s", sess);
    target t[2];
    memset(t, 0, sizeof t);
    mc_address a;
    ck_assert_int_eq(mc_address_parse(c.ext, &a), 0);
    mc_address_to_sockaddr(&a, &t[0].to);
    ck_assert_int_eq(mc_address_parse(base_ext, &a), 0);
    mc_address_to_sockaddr(&a, &t[1].to);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&me, sizeof me), 0);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    uint8_t key[MC_SECURE_KEY_BYTES] = {0}, junk[600];
    uint32_t seed = 12345;
    for (int round = 0; round < 20; round++) {
        for (int k = 0; k < 2; k++) {
            mc_secure_client cl;
            /* a HELLO for the loginapp (session 0) and for the baseapp (the issued session) */
            ck_assert_int_eq(mc_secure_client_init(&cl, k ? (uint64_t)sid : 0, key), 0);
            uint8_t hello[MC_SECURE_HELLO_SIZE];
            size_t n = mc_secure_client_packet(&cl, hello);
            send_to(fd, &t[k], hello, n);
            mc_secure_client_clear(&cl);
            static const size_t sizes[] = {1, 9, 48, 255, 256, 257, 512, 600};
            for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
                for (size_t b = 0; b < sizes[j]; b++) {
                    seed = seed * 1103515245u + 12345u;
                    junk[b] = (uint8_t)(seed >> 16);
                }
                send_to(fd, &t[k], junk, sizes[j]);
                junk[0] = 0xA5; /* a DATA lookalike */
                send_to(fd, &t[k], junk, sizes[j]);
                junk[0] = 0xB1; /* a LOGIN lookalike */
                send_to(fd, &t[k], junk, sizes[j] < 512 ? sizes[j] : 512);
            }
        }
        h_sleep_ms(20);
    }
    /* everything that comes back within 2 s, by its source */
    for (int waited = 0; waited < 2000; waited += 50) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        poll(&pf, 1, 50);
        uint8_t buf[2048];
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n;
        while ((n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl)) > 0) {
            for (int k = 0; k < 2; k++)
                if (from.sin_port == t[k].to.sin_port && from.sin_addr.s_addr == t[k].to.sin_addr.s_addr) {
                    t[k].got += (uint64_t)n;
                    t[k].datagrams_in++;
                }
            fl = sizeof from;
        }
    }
    close(fd);
    for (int k = 0; k < 2; k++) {
        fprintf(stderr, "spoofing %s: sent %llu bytes, got %llu back in %llu datagrams\n",
                k ? "the baseapp" : "the loginapp", (unsigned long long)t[k].sent,
                (unsigned long long)t[k].got, (unsigned long long)t[k].datagrams_in);
        ck_assert_uint_gt(t[k].sent, 0);
        ck_assert_msg(t[k].datagrams_in > 0, "no CHALLENGE came back from %s: the test sees nothing",
                      k ? "the baseapp" : "the loginapp");
        ck_assert_msg(t[k].got <= t[k].sent, "%s sent %llu bytes back for %llu",
                      k ? "the baseapp" : "the loginapp", (unsigned long long)t[k].got,
                      (unsigned long long)t[k].sent);
    }
    stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("client_tools");
    TCase *tc = tcase_create("tools");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, mc_client_script_and_statuses);
    tcase_add_test(tc, bots_200_check_view);
    tcase_add_test(tc, bots_walk_across_a_cell_boundary_and_see_whole_views);
    tcase_add_test(tc, unproven_sources_get_no_more_than_they_sent);
    tcase_add_test(tc, bots_1000_at_once);
    suite_add_tcase(s, tc);
    TCase *tr = tcase_create("restore");
    tcase_set_timeout(tr, 600);
    tcase_add_test(tr, bots_play_on_when_their_cellapp_is_killed);
    suite_add_tcase(s, tr);
    return s;
}

MC_CHECK_MAIN(suite)
