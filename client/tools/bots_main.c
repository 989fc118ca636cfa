/* bots: N simulated players log in at a rate, walk the shared world, chat and time the
 * round trip, time how long one bot's move takes to reach the others' clients (update
 * latency), optionally compare what they see with what the cellapps say, and log out when
 * the duration ends; one process, one poll loop (docs/tools/bots.md). */
#define _POSIX_C_SOURCE 200809L
#include "bot.h"
#include "bot_company.h"
#include "bots_stats.h"
#include "tool_env.h"
#include "view_check.h"

#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_BOTS 20000u
#define LATE_MS 30000u  /* logins and connections still under way may finish this much later */

/* SIGINT / SIGTERM: end the run now (log out, print the summary). The one thing a signal
 * handler may touch; a second signal while logging out kills as usual. */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* SIGUSR1: a fault mark (world-bench sends it right after it kills a process): from here the
 * bots playing are watched until world updates reach them again (fault_watch.h). */
static volatile sig_atomic_t marks_requested;

static void on_mark_signal(int sig)
{
    (void)sig;
    marks_requested++;
}

typedef struct {
    uint32_t count, sources, tick_ms, settle_ms, slice_ms;
    uint32_t sweep_at;  /* the next bot of a sweep under way */
    bool sweeping;      /* a sweep is under way (in slices of slice_ms) */
    double rate, duration;
    bool json, check_view, quiet;
    const char *prefix, *password_file, *manager;
    bot_shared sh;
    bots_stats st;
    bot_ids ids;
    bot *bots;
    struct pollfd *pfd;
    uint32_t *pidx;
    uint64_t rng;
    char password[MC_LOGIN_PASSWORD_MAX + 2];
    tool_cluster tc;
    mc_entity_defs *defs;
    bool tty;
    uint64_t t0, last_progress, next_steady_check;
} bots_run;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bots --count N --rate PER_SECOND --duration SECONDS [options]\n"
            "N simulated players (accounts PREFIX0001.. with one password: made beforehand\n"
            "with mc-account, or auto-created by a loginapp with --autoCreateAccounts) log in\n"
            "at that rate, create or select their avatar, walk around the shared world, chat\n"
            "and time the chat's round trip, and log out when the duration ends. Each move a\n"
            "bot sends is timed until another bot's client sees it (update latency). A closing\n"
            "table (or --json: one JSON object) gives logins by status, calls, round trips,\n"
            "update latency and bytes.\n"
            "options:\n"
            "  --count N              bots (1..%u)\n"
            "  --rate PER_SECOND      logins started per second (0.1..100000)\n"
            "  --duration SECONDS     from the first login to the logout (1..86400)\n"
            "  --prefix NAME          account names NAME0001... (default bot)\n"
            "  --password-file FILE   the accounts' password (default: bot-password)\n"
            "  --speed M_PER_S        walking speed (default 5; the cellapps' --maxClientSpeed\n"
            "                         is the limit)\n"
            "  --area METRES          side of the square around the origin they roam (200)\n"
            "  --move-ms MS           between moves (200)\n"
            "  --chat-ms MS           mean time between chats (10000)\n"
            "  --idle-ms MS           a baseapp silent this long: the bot resumes (3000, the\n"
            "                         client library's default)\n"
            "  --login-tries N        attempts at a login refused for a passing reason (server\n"
            "                         error, overloaded, rate limited, timed out, no baseapp),\n"
            "                         with back-off from 500 ms (3; 1..10)\n"
            "  --takeover             ask to take over accounts that are online (the loginapp\n"
            "                         must run with --onlineLogin=takeover)\n"
            "  --sources N            spread logins over N loopback source addresses\n"
            "                         127.0.1.1... (default 250 for a loginapp on 127.x, as\n"
            "                         each address has its own login bucket; 0: the system's)\n"
            "  --check-view           at the end, stand still, then compare each bot's view\n"
            "                         with its avatar's aoi/inView in the cellapps\n"
            "  --settle-ms MS         standing still before the check (3000)\n"
            "  --tick-ms MS           every channel is ticked at least this often (10)\n"
            "  --slice-ms MS          a sweep over every bot runs in slices of about MS, the\n"
            "                         readable sockets served between them (20)\n"
            "  --view-radius M        the cellapps' view radius (--aoiRadius, default 50):\n"
            "                         after a fault mark, a bot with no other bot walking\n"
            "                         within it has nothing to hear, and its silence does\n"
            "                         not count\n"
            "  --json                 the summary as one JSON object\n"
            "  --quiet                no progress\n"
            "  --loginapp IP:PORT, --public-key HEX, --manager IP:PORT, --res DIR\n"
            "                         default: the cluster file ($MC_RUN_DIR/cluster.conf,\n"
            "                         else <repo>/run/cluster.conf) and <repo>/defs\n"
            "SIGINT or SIGTERM ends the run early: the bots log out and the summary is printed.\n"
            "SIGUSR1 is a fault mark: the summary says how many of the bots playing then saw\n"
            "the world again and how long it took (world-bench --kill sends it).\n"
            "Exit status: 0 when every bot logged in, played and logged out and no view\n"
            "differed; 3 otherwise; 2 bad usage; 1 other failures.\n",
            MAX_BOTS);
}

static int num(const char *opt, const char *s, double lo, double hi, double *out)
{
    if (tool_parse_double(s, lo, hi, out) != 0) {
        fprintf(stderr, "bots: %s '%s': a number within %g..%g\n", opt, s, lo, hi);
        return -1;
    }
    return 0;
}

static int parse_args(bots_run *r, int argc, char **argv, const char **lapp, const char **pk,
                      const char **res)
{
    static const struct option longs[] = {
        {"count", required_argument, NULL, 'c'},    {"rate", required_argument, NULL, 'r'},
        {"duration", required_argument, NULL, 'd'}, {"prefix", required_argument, NULL, 'P'},
        {"password-file", required_argument, NULL, 'p'},
        {"speed", required_argument, NULL, 's'},    {"area", required_argument, NULL, 'a'},
        {"move-ms", required_argument, NULL, 'm'},  {"chat-ms", required_argument, NULL, 'C'},
        {"sources", required_argument, NULL, 'S'},  {"check-view", no_argument, NULL, 'v'},
        {"settle-ms", required_argument, NULL, 'w'}, {"tick-ms", required_argument, NULL, 't'},
        {"slice-ms", required_argument, NULL, 'L'}, {"view-radius", required_argument, NULL, 'V'},
        {"json", no_argument, NULL, 'j'},           {"quiet", no_argument, NULL, 'q'},
        {"idle-ms", required_argument, NULL, 'i'},  {"takeover", no_argument, NULL, 'T'},
        {"login-tries", required_argument, NULL, 'N'},
        {"loginapp", required_argument, NULL, 'l'}, {"public-key", required_argument, NULL, 'k'},
        {"manager", required_argument, NULL, 'M'},  {"res", required_argument, NULL, 'R'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    int o;
    double v;
    bool have_count = false, have_rate = false, have_duration = false;
    while ((o = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (o) {
        case 'c': if (num("--count", optarg, 1, MAX_BOTS, &v)) return -1;
                  r->count = (uint32_t)v; have_count = true; break;
        case 'r': if (num("--rate", optarg, 0.1, 100000, &r->rate)) return -1;
                  have_rate = true; break;
        case 'd': if (num("--duration", optarg, 1, 86400, &r->duration)) return -1;
                  have_duration = true; break;
        case 'P':
            if (!*optarg || strlen(optarg) > 12) {
                fprintf(stderr, "bots: --prefix '%s': 1..12 characters\n", optarg);
                return -1;
            }
            r->prefix = optarg;
            break;
        case 'p': r->password_file = optarg; break;
        case 'T': r->sh.login_flags = MC_LOGIN_FLAG_TAKEOVER; break;
        case 's': if (num("--speed", optarg, 0.01, 10000, &v)) return -1;
                  r->sh.speed = (float)v; break;
        case 'a': if (num("--area", optarg, 1, 1e6, &v)) return -1;
                  r->sh.area = (float)v; break;
        case 'm': if (num("--move-ms", optarg, 10, 60000, &v)) return -1;
                  r->sh.move_ms = (uint32_t)v; break;
        case 'C': if (num("--chat-ms", optarg, 10, 3600000, &v)) return -1;
                  r->sh.chat_ms = (uint32_t)v; break;
        case 'S': if (num("--sources", optarg, 0, 60000, &v)) return -1;
                  r->sources = (uint32_t)v; break;
        case 'v': r->check_view = true; break;
        case 'w': if (num("--settle-ms", optarg, 0, 600000, &v)) return -1;
                  r->settle_ms = (uint32_t)v; break;
        case 't': if (num("--tick-ms", optarg, 1, 1000, &v)) return -1;
                  r->tick_ms = (uint32_t)v; break;
        case 'L': if (num("--slice-ms", optarg, 1, 1000, &v)) return -1;
                  r->slice_ms = (uint32_t)v; break;
        case 'V': if (num("--view-radius", optarg, 1, 10000, &v)) return -1;
                  r->sh.view_radius = (float)v; break;
        case 'i': if (num("--idle-ms", optarg, 1000, 600000, &v)) return -1;
                  r->sh.idle_ms = (uint32_t)v; break;
        case 'N': if (num("--login-tries", optarg, 1, 10, &v)) return -1;
                  r->sh.login_tries = (uint32_t)v; break;
        case 'j': r->json = true; break;
        case 'q': r->quiet = true; break;
        case 'l': *lapp = optarg; break;
        case 'k': *pk = optarg; break;
        case 'M': r->manager = optarg; break;
        case 'R': *res = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "bots: unexpected argument '%s' (try --help)\n", argv[optind]);
        return -1;
    }
    if (!have_count || !have_rate || !have_duration) {
        fprintf(stderr, "bots: --count, --rate and --duration are required (try --help)\n");
        return -1;
    }
    return 0;
}

static void progress(bots_run *r, uint64_t now, const char *phase, bool force)
{
    if (r->quiet || (!force && now - r->last_progress < (r->tty ? 200u : 1000u)))
        return;
    r->last_progress = now;
    const bots_stats *s = &r->st;
    double t = (double)(now - r->t0) / 1000.0;
    if (r->tty) {
        char bar[31];
        uint32_t filled = (uint32_t)(30 * (s->logged_in + s->failed) / r->count);
        for (uint32_t i = 0; i < 30; i++)
            bar[i] = i < filled ? '#' : '.';
        bar[30] = '\0';
        fprintf(stderr, "\r[%s] %5.1fs/%gs %s: %llu/%u logged in, %llu failed, %llu playing, "
                        "rtt p50 %.1f ms   ",
                bar, t, r->duration, phase, (unsigned long long)s->logged_in, r->count,
                (unsigned long long)s->failed, (unsigned long long)s->playing,
                bots_stats_rtt_ms(s, 0.5));
    } else {
        fprintf(stderr, "bots: %.1fs %s: %llu/%u logged in, %llu failed, %llu playing, "
                        "%llu/%llu calls answered\n",
                t, phase, (unsigned long long)s->logged_in, r->count,
                (unsigned long long)s->failed, (unsigned long long)s->playing,
                (unsigned long long)s->calls_answered, (unsigned long long)s->calls_sent);
    }
    fflush(stderr);
}

/* One round: poll every bot's descriptor (and extra, a view check's pipe) at most wait_ms,
 * tick the bots whose descriptor is readable, and, when a tick is due, all of them: a sweep,
 * run in slices of about --slice-ms (a round that has a sweep under way does not wait), so
 * that however many bots there are, readable sockets are served every slice. */
static void round_once(bots_run *r, int extra_fd, int wait_ms, uint64_t *next_sweep)
{
    nfds_t n = 0;
    for (uint32_t i = 0; i < r->count; i++) {
        int fd = bot_fd(&r->bots[i]);
        if (fd >= 0) {
            r->pfd[n] = (struct pollfd){.fd = fd, .events = POLLIN};
            r->pidx[n++] = i;
        }
    }
    if (extra_fd >= 0)
        r->pfd[n++] = (struct pollfd){.fd = extra_fd, .events = POLLIN};
    uint64_t now = tool_now_ms();
    int w = r->sweeping ? 0 : *next_sweep > now ? (int)(*next_sweep - now) : 0;
    poll(r->pfd, n, w < wait_ms ? w : wait_ms);
    now = tool_now_ms();
    if (!r->sweeping && now >= *next_sweep) {
        r->sweeping = true;
        r->sweep_at = 0;
    }
    /* readable ones now (also those a sweep under way will tick again: they wait no slice) */
    nfds_t nb = extra_fd >= 0 ? n - 1 : n;
    for (nfds_t k = 0; k < nb; k++)
        if (r->pfd[k].revents)
            bot_tick(&r->bots[r->pidx[k]], now);
    if (!r->sweeping)
        return;
    uint64_t start = tool_now_ms();
    while (r->sweep_at < r->count) {
        bot *b = &r->bots[r->sweep_at++];
        if (b->state != BOT_IDLE && b->state != BOT_DONE)
            bot_tick(b, now);
        if (tool_now_ms() - start >= r->slice_ms)
            break;
    }
    if (r->sweep_at >= r->count) {
        r->sweeping = false;
        *next_sweep = now + r->tick_ms;
    }
}

static bool settling(const bots_run *r)
{
    for (uint32_t i = 0; i < r->count; i++)
        if (r->bots[i].state == BOT_LOGIN || r->bots[i].state == BOT_CONNECT ||
            r->bots[i].state == BOT_IDLE)
            return true;
    return false;
}

static void settle(bots_run *r, uint64_t *next_sweep)
{
    uint64_t until = tool_now_ms() + r->settle_ms;
    for (uint64_t now = tool_now_ms(); now < until; now = tool_now_ms()) {
        round_once(r, -1, 50, next_sweep);
        progress(r, now, "settling", false);
    }
}

/* One comparison of the bots marked in `which` (each a quiet bot) with the cellapps' views;
 * those that differ stay marked, the others are cleared. Returns how many differ, or -1
 * when the cellapps could not be asked (every marked bot is then unknown). */
static long compare_views(bots_run *r, bool *which, bool report, uint64_t *next_sweep)
{
    char exe[PATH_MAX], watcher[PATH_MAX + 16], err[256];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    snprintf(watcher, sizeof watcher, "%s/watcher", dirname(exe));
    view_check v;
    if (view_check_start(&v, watcher, r->tc.manager[0] ? r->tc.manager : NULL, err,
                         sizeof err) != 0) {
        fprintf(stderr, "bots: cannot ask the cellapps: %s\n", err);
        return -1;
    }
    /* the client side at the moment the question goes: compare with it */
    uint32_t *seen = calloc(r->count, sizeof *seen);
    if (!seen) {
        view_check_free(&v);
        return -1;
    }
    for (uint32_t i = 0; i < r->count; i++) {
        const mc_client_entity *es;
        seen[i] = which[i] && r->bots[i].c && r->bots[i].state == BOT_QUIET
                      ? (uint32_t)mc_client_entities(r->bots[i].c, &es)
                      : UINT32_MAX;
    }
    uint64_t deadline = tool_now_ms() + 30000;
    while (!v.done && tool_now_ms() < deadline) {
        round_once(r, v.fd, 50, next_sweep);
        view_check_read(&v);
        progress(r, tool_now_ms(), "checking views", false);
    }
    if (!v.done || v.status != 0)
        fprintf(stderr, "bots: the watcher did not answer about the cellapps' views (exit %d)\n",
                v.status);
    long differ = 0;
    int shown = 0;
    for (uint32_t i = 0; i < r->count; i++) {
        if (seen[i] == UINT32_MAX) {
            which[i] = false;
            continue;
        }
        bot *b = &r->bots[i];
        uint32_t server;
        int32_t id = mc_client_player_id(b->c);
        if (!v.done || view_check_in_view(&v, id, &server) != 0) {
            r->st.view_unknown++;
            which[i] = false;
            continue;
        }
        if (report)
            r->st.view_checked++;
        const mc_client_entity *es;
        uint32_t now_seen = (uint32_t)mc_client_entities(b->c, &es);
        /* the ids when the cellapp lists them (aoi/viewIds), else the counts */
        int32_t ids[4096];
        size_t nids = now_seen < 4096 ? now_seen : 0;
        for (size_t k = 0; k < nids; k++)
            ids[k] = es[k].id; /* mc_client_entities is sorted by id */
        int same = now_seen < 4096 ? view_check_same_ids(&v, id, ids, nids) : -1;
        if (same >= 0 && report)
            r->st.view_ids_compared++;
        which[i] = same == 0 || (same < 0 && server != seen[i] && server != now_seen);
        if (which[i]) {
            differ++;
            if (shown++ < 10)
                fprintf(stderr, "bots: %s (entity %d) sees %u entities, its cellapp %u%s\n",
                        b->name, (int)id, now_seen, server, same == 0 ? " (other ids)" : "");
        }
    }
    free(seen);
    view_check_free(&v);
    return differ;
}

/* Stand still, let the views settle, ask the cellapps, compare. A view that differs may
 * still be on its way (a loaded cellapp's updates lag by seconds): those bots settle and
 * are compared again, up to VIEW_RECHECKS times; what still differs then is a mismatch. */
#define VIEW_RECHECKS 3
static void check_views(bots_run *r, uint64_t *next_sweep)
{
    for (uint32_t i = 0; i < r->count; i++)
        bot_set_quiet(&r->bots[i], true);
    bool *which = malloc(r->count * sizeof *which);
    if (!which) {
        r->st.view_unknown = r->st.playing;
        return;
    }
    for (uint32_t i = 0; i < r->count; i++)
        which[i] = true;
    settle(r, next_sweep);
    long differ = compare_views(r, which, true, next_sweep);
    for (int again = 0; differ > 0 && again < VIEW_RECHECKS; again++) {
        fprintf(stderr, "bots: %ld views differ from their cellapps': settling, then again\n",
                differ);
        r->st.view_rechecked += (uint64_t)differ;
        settle(r, next_sweep);
        differ = compare_views(r, which, false, next_sweep);
    }
    if (differ > 0)
        r->st.view_mismatches += (uint64_t)differ;
    free(which);
}

/* The steady state begins once every bot has started and none is still logging in or
 * connecting; while it lasts, update latency is recorded and the views are sampled about
 * once a second. */
static void watch_steady(bots_run *r, uint64_t now, uint32_t started)
{
    if (now < r->next_steady_check)
        return;
    r->next_steady_check = now + (r->st.steady ? 1000 : 100);
    if (!r->st.steady) {
        if (started < r->count || settling(r))
            return;
        r->st.steady = true;
        r->st.steady_start_ms = now;
        return;
    }
    for (uint32_t i = 0; i < r->count; i++) {
        const bot *b = &r->bots[i];
        if (b->state != BOT_PLAY || !b->c)
            continue;
        const mc_client_entity *es;
        r->st.view_sum += mc_client_entities(b->c, &es);
        r->st.view_samples++;
    }
}

static bool bot_is_playing(void *ud, uint32_t i)
{
    const bots_run *r = ud;
    return r->bots[i].state == BOT_PLAY;
}

/* After a fault mark, every 100 ms: each walking bot that has heard nothing for a while
 * and has nobody in view (bot_company.h) is alone, which the marks do not count as silence.
 * Only the quiet ones are looked at, and a look stops at the first bot in view. */
#define ALONE_CHECK_MS 100u
#define ALONE_QUIET_MS 300u

static void watch_alone(bots_run *r, uint64_t now, uint64_t *next)
{
    if (!r->st.faults.nmarks || now < *next)
        return;
    *next = now + ALONE_CHECK_MS;
    for (uint32_t i = 0; i < r->count; i++) {
        const bot *b = &r->bots[i];
        if (b->state == BOT_PLAY && now - b->heard_ms >= ALONE_QUIET_MS &&
            bot_alone(r->bots, r->count, i, r->sh.view_radius))
            fault_watch_alone(&r->st.faults, i, now);
    }
}

/* Each bot a mark counts as silent, on standard error (at most 10 a mark): what its client
 * held and how far the nearest walking bot was, so that a silence can be told from a bot
 * that merely had nobody in view. */
static void tell_silent(const bots_run *r, uint64_t now)
{
    for (uint32_t k = 0; k < r->st.faults.nmarks; k++) {
        uint32_t told = 0;
        for (uint32_t i = 0; i < r->count && told < 10; i++) {
            uint64_t last = 0;
            if (!fault_watch_silent(&r->st.faults, k, i, now, &last))
                continue;
            const bot *b = &r->bots[i];
            const mc_client_entity *es;
            size_t view = b->c ? mc_client_entities(b->c, &es) : 0;
            uint64_t at = r->st.faults.marks[k].at_ms;
            fprintf(stderr,
                    "bots: fault mark %u: %s silent: last world update %lld ms after the mark "
                    "(%s), %zu entities in its view, the nearest walking bot %.1f m away\n",
                    k + 1, b->name, last ? (long long)(last - at) : -1LL,
                    last ? "then nothing for a second or more" : "none since the mark", view,
                    (double)bot_nearest_m(r->bots, r->count, i));
            told++;
        }
    }
}

/* The fault marks asked for since the last turn. */
static void take_marks(bots_run *r, uint64_t now, uint32_t *taken)
{
    while (*taken < (uint32_t)marks_requested) {
        (*taken)++;
        if (fault_watch_mark(&r->st.faults, now, bot_is_playing, r) == 0)
            fprintf(stderr, "bots: fault mark %u: watching %u bots playing\n",
                    r->st.faults.nmarks, r->st.faults.marks[r->st.faults.nmarks - 1].watched);
        else
            fprintf(stderr, "bots: fault mark refused (at most %u)\n", FAULT_WATCH_MARKS);
    }
}

static int run(bots_run *r)
{
    uint32_t marks_taken = 0;
    uint64_t next_sweep = 0, next_alone = 0;
    r->t0 = tool_now_ms();
    uint64_t end = r->t0 + (uint64_t)(r->duration * 1000);
    uint32_t started = 0;
    for (uint64_t now = tool_now_ms();; now = tool_now_ms()) {
        while (started < r->count &&
               now >= r->t0 + (uint64_t)((double)started * 1000.0 / r->rate))
            bot_start(&r->bots[started++], now);
        if ((now >= end && (!settling(r) || now >= end + LATE_MS)) || stop_requested)
            break;
        take_marks(r, now, &marks_taken);
        watch_alone(r, now, &next_alone);
        watch_steady(r, now, started);
        round_once(r, -1, 10, &next_sweep);
        progress(r, now, now < end ? "playing" : "waiting for late logins", false);
    }
    if (r->st.steady) {
        r->st.steady = false;
        r->st.steady_end_ms = tool_now_ms();
    }
    r->st.faults_until_ms = tool_now_ms();
    tell_silent(r, r->st.faults_until_ms);
    if (r->check_view && !stop_requested)
        check_views(r, &next_sweep);
    progress(r, tool_now_ms(), "logging out", true);
    if (r->tty && !r->quiet)
        fputc('\n', stderr);
    for (uint32_t i = 0; i < r->count; i++) {
        if (r->bots[i].state == BOT_LOGIN) { /* never answered within the run */
            r->st.failed++;
            r->st.failed_by_status[MC_LOGIN_TIMED_OUT]++;
        }
        bot_logout(&r->bots[i]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static bots_run r;
    r.prefix = "bot";
    r.tick_ms = 10;
    r.slice_ms = 20;
    r.settle_ms = 3000;
    r.sources = UINT32_MAX;
    r.sh = (bot_shared){.speed = 5, .area = 200, .view_radius = 50, .move_ms = 200,
                        .chat_ms = 10000,
                        .idle_ms = MC_CLIENT_IDLE_MS_DEFAULT, .login_tries = 3};
    const char *lapp = NULL, *pk = NULL, *res = NULL;
    if (parse_args(&r, argc, argv, &lapp, &pk, &res) != 0)
        return TOOL_EXIT_USAGE;
    if (sodium_init() < 0)
        return TOOL_EXIT_ERROR;
    char err[2048];
    if (tool_cluster_find(&r.tc, lapp, pk, r.manager, res, err, sizeof err) != 0) {
        fprintf(stderr, "bots: %s\n", err);
        return TOOL_EXIT_USAGE;
    }
    if (r.check_view && !r.tc.manager[0] && !getenv("MC_RUN_DIR")) {
        fprintf(stderr, "bots: --check-view asks the cellapps: give --manager (or a cluster "
                        "file)\n");
        return TOOL_EXIT_USAGE;
    }
    if (r.password_file) {
        if (tool_read_password(r.password_file, r.password, sizeof r.password, err,
                               sizeof err) != 0) {
            fprintf(stderr, "bots: %s\n", err);
            return TOOL_EXIT_USAGE;
        }
    } else {
        snprintf(r.password, sizeof r.password, "bot-password");
    }
    uint8_t digest[MC_LOGIN_DIGEST_BYTES];
    r.defs = tool_defs_load(&r.tc, digest, err, sizeof err);
    if (!r.defs) {
        fprintf(stderr, "bots: %s\n", err);
        return TOOL_EXIT_USAGE;
    }
    /* every bot holds a few descriptors: raise the limit as far as allowed */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)r.count * 4 + 64)
        fprintf(stderr, "bots: warning: %llu descriptors allowed, %u bots need about %u\n",
                (unsigned long long)rl.rlim_cur, r.count, r.count * 4 + 64);
    if (r.sources == UINT32_MAX)
        r.sources = strncmp(r.tc.loginapp, "127.", 4) == 0 ? 250 : 0;
    if (bots_stats_init(&r.st) != 0)
        return TOOL_EXIT_ERROR;
    r.st.count = r.count;
    r.st.rate = r.rate;
    r.st.duration = r.duration;
    fault_watch_init(&r.st.faults, r.count);
    r.bots = calloc(r.count, sizeof *r.bots);
    r.pfd = calloc(r.count + 1, sizeof *r.pfd);
    r.pidx = calloc(r.count + 1, sizeof *r.pidx);
    if (!r.bots || !r.pfd || !r.pidx || bot_ids_init(&r.ids, r.count) != 0) {
        fprintf(stderr, "bots: out of memory\n");
        return TOOL_EXIT_ERROR;
    }
    r.rng = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ 0x9E3779B97F4A7C15ull;
    r.sh.defs = r.defs;
    r.sh.login = (mc_login_config){.loginapp = r.tc.loginapp};
    memcpy(r.sh.login.loginapp_pk, r.tc.public_key, sizeof r.sh.login.loginapp_pk);
    memcpy(r.sh.login.digest, digest, sizeof digest);
    r.sh.password = r.password;
    r.sh.rng = &r.rng;
    r.sh.st = &r.st;
    r.sh.ids = &r.ids;
    for (uint32_t i = 0; i < r.count; i++) {
        char src[20];
        if (r.sources)
            snprintf(src, sizeof src, "127.0.%u.%u", 1 + (i % r.sources) / 250,
                     1 + (i % r.sources) % 250);
        bot_init(&r.bots[i], &r.sh, i, r.prefix, r.sources ? src : NULL);
    }
    r.tty = isatty(2);
    struct sigaction sa = {.sa_handler = on_stop_signal, .sa_flags = SA_RESETHAND};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct sigaction sm = {.sa_handler = on_mark_signal};
    sigemptyset(&sm.sa_mask);
    sigaction(SIGUSR1, &sm, NULL);
    run(&r);
    if (r.json)
        bots_stats_print_json(&r.st, stdout);
    else
        bots_stats_print_table(&r.st, stdout);
    bool ok = r.st.logged_in == r.count && !r.st.failed && !r.st.ended_early &&
              r.st.playing == r.count && !r.st.view_mismatches &&
              (!r.check_view || r.st.view_checked == r.count);
    free(r.bots);
    free(r.pfd);
    free(r.pidx);
    bots_stats_free(&r.st);
    bot_ids_free(&r.ids);
    mc_defs_free(r.defs);
    sodium_memzero(r.password, sizeof r.password);
    return ok ? 0 : 3;
}
