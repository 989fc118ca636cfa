/* Players resume on a new channel without logging in again (issue 20 item 4), through real
 * processes: a private redis-server, a manager, two baseapps (--faultKnobs, a short ticket
 * lifetime and grace time), a cellapp with the example game's "world" and a loginapp.
 *
 * Rita and Sam log in with the client library and play their Avatars in the world. The
 * baseapp drops Rita's channel without a word (faults/dropClient): her client notices the
 * silence, resumes with its ticket (no LOGIN: the loginapp's login count does not move) and
 * is Rita's Avatar again, same entity, with her own cell and Sam back in view; her base never
 * heard onClientDeath. Then her client is told its network changed (mc_client_resume_now): it
 * resumes from a new socket while the baseapp still holds the old channel. The ticket it used
 * before is refused as used; a real ticket with another key's proof, a changed ticket and one
 * sealed with a key not the cluster's are never answered and are counted; a copy past its
 * expiry is refused as expired. Sam's client cannot resume (no loginapp given): his base waits
 * the grace time, then hears onClientDeath (his Avatar leaves), and his ticket is refused.
 * A flood of RESUMEs from one address is limited as LOGINs are. Finally mc-client plays, its
 * channel is dropped and it chats on after resuming; then bots play, every channel is
 * dropped, and each bot resumes by itself (counted in --json). Last a player's baseapp is
 * killed (kill -9): with no backup of its proxy anywhere (backups off here), the client is told 'entity gone'
 * and ends lost. Every process is stopped by the test. */
#include "check_main.h"
#include "harness.h"
#include "login_cluster.h"

#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "common/value_json.h"
#include "mcclient/client.h"
#include "mcclient/login.h"
#include "secure/resume.h"

#define WAIT_MS 30000
#define TICKET_MS 16000

static const char base_conf[] = "faultKnobs = true\n"
                                "resumeTicketMs = 16000\n"
                                "resumeGraceMs = 5000\n";

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

typedef struct {
    const char *name, *avatar;
    mc_entity_defs *defs;
    mc_client *c;
    uint16_t avatar_type;
    int32_t avatar_id;
    bool asked_create, asked_select;
    int resumes_ok, resumes_failed, last_resume;
    int ends;
} player;

/* The players whose clients must keep ticking while the test waits for anything else (a
 * watcher process under a loaded sanitizer build takes seconds: a client left alone that
 * long would be dropped by its baseapp for silence). */
static player *live[2];
static size_t nlive;

static bool pump(player **ps, size_t n, long ms, bool (*cond)(player **, size_t, const void *),
                 const void *arg);

/* `watcher VERB PROC PATH [VALUE]` while the live players' clients tick: its exit status,
 * its output in out. */
static int watcher(lc_cluster *c, const char *verb, const char *proc, const char *path,
                   const char *value, char *out, size_t n)
{
    static int seq;
    char bin[512], mopt[64], log[800];
    snprintf(mopt, sizeof mopt, "--manager=%s", c->pc.manager);
    snprintf(log, sizeof log, "%s/watcher-%d.out", c->pc.dir, ++seq);
    char *argv[] = {(char *)h_bin("watcher", bin, sizeof bin), mopt, (char *)verb,
                    (char *)proc, (char *)path, (char *)value, NULL};
    pid_t pid = h_spawn(argv, log);
    ck_assert_int_gt(pid, 0);
    int status = 0, rc = -1;
    for (long end = now_ms() + 30000; now_ms() < end;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            break;
        }
        pump(live, nlive, 10, NULL, NULL);
    }
    ck_assert_msg(rc >= 0, "watcher %s %s %s did not end", verb, proc, path);
    FILE *f = fopen(log, "r");
    size_t k = f ? fread(out, 1, n - 1, f) : 0;
    out[k] = '\0';
    if (f)
        fclose(f);
    return rc;
}

static long long counter(lc_cluster *c, const char *proc, const char *path)
{
    char o[4096], v[64];
    if (watcher(c, "get", proc, path, NULL, o, sizeof o) != 0 ||
        !pc_result(o, path, v, sizeof v))
        return -1;
    return atoll(v);
}

/* Wait (ticking) until a counter reaches want. */
static bool wait_counter(lc_cluster *c, const char *proc, const char *path, long long want)
{
    for (long end = now_ms() + WAIT_MS; now_ms() < end;)
        if (counter(c, proc, path) >= want)
            return true;
    return false;
}

/* Wait (ticking) until a counter is want. */
static bool wait_counter_eq(lc_cluster *c, const char *proc, const char *path, long long want)
{
    for (long end = now_ms() + WAIT_MS; now_ms() < end;)
        if (counter(c, proc, path) == want)
            return true;
    return false;
}

/* `watcher set PROC PATH VALUE`: its exit status. */
static int set_knob(lc_cluster *c, const char *proc, const char *path, const char *value)
{
    char o[1024];
    return watcher(c, "set", proc, path, value, o, sizeof o);
}

static int call_json(player *p, mc_part part, const char *method, const char *json)
{
    const mc_entity_type_def *td = mc_defs_type(p->defs, mc_client_player_type(p->c));
    const mc_def_method *m = td ? mc_defs_method_by_name(td, part, method) : NULL;
    mc_value args[4];
    char why[256];
    if (!m || m->nargs > 4 ||
        mc_json_to_args(p->defs, m, json, strlen(json), args, why, sizeof why) != 0)
        return -1;
    int rc = mc_client_call(p->c, part, method, args, m->nargs);
    for (size_t i = 0; i < m->nargs; i++)
        mc_value_free(&args[i]);
    return rc;
}

static void cb_call(void *ud, mc_client *c, int32_t id, const mc_def_method *m,
                    const mc_value *args)
{
    (void)c;
    (void)id;
    player *p = ud;
    if (strcmp(m->name, "onAvatarList") != 0)
        return;
    bool have = false;
    for (uint32_t i = 0; i < args[0].as.list.count; i++) {
        const mc_value *s = &args[0].as.list.items[i];
        if (s->as.list.count && s->as.list.items[0].as.bytes.data &&
            !strcmp(s->as.list.items[0].as.bytes.data, p->avatar))
            have = true;
    }
    char json[96];
    if (have && !p->asked_select) {
        snprintf(json, sizeof json, "[\"%s\"]", p->avatar);
        p->asked_select = call_json(p, MC_PART_BASE, "selectAvatar", json) == 0;
    } else if (!have && !p->asked_create) {
        snprintf(json, sizeof json, "[\"%s\",[1,2,3,255]]", p->avatar);
        p->asked_create = call_json(p, MC_PART_BASE, "createAvatar", json) == 0;
    }
}

static void cb_player(void *ud, mc_client *c, const mc_cw_player *pl)
{
    (void)c;
    player *p = ud;
    if (pl->type == p->avatar_type) {
        ck_assert_msg(!p->avatar_id || p->avatar_id == pl->id,
                      "%s plays entity %d, was %d", p->name, (int)pl->id, (int)p->avatar_id);
        p->avatar_id = pl->id;
    }
}

static void cb_resume(void *ud, mc_client *c, int status, const char *name)
{
    (void)c;
    player *p = ud;
    ck_assert_str_eq(name, mc_login_status_name(status));
    p->last_resume = status;
    if (status == MC_LOGIN_OK)
        p->resumes_ok++;
    else
        p->resumes_failed++;
}

static void cb_end(void *ud, mc_client *c, int how, int reason, const char *text)
{
    (void)c;
    (void)how;
    (void)reason;
    (void)text;
    ((player *)ud)->ends++;
}

typedef bool (*cond_fn)(player **ps, size_t n, const void *arg);

/* Tick every player's client until cond holds (true) or ms pass (false). */
static bool pump(player **ps, size_t n, long ms, cond_fn cond, const void *arg)
{
    long deadline = now_ms() + ms;
    for (;;) {
        struct pollfd pf[8];
        size_t k = 0;
        for (size_t i = 0; i < n && k < 8; i++)
            if (ps[i]->c)
                pf[k++] = (struct pollfd){.fd = mc_client_fd(ps[i]->c), .events = POLLIN};
        poll(pf, k, MC_CLIENT_TICK_MS);
        for (size_t i = 0; i < n; i++)
            if (ps[i]->c)
                mc_client_tick(ps[i]->c);
        if (cond && cond(ps, n, arg))
            return true;
        if (now_ms() >= deadline)
            return cond == NULL;
    }
}

static mc_login_config login_config(lc_cluster *c, const mc_entity_defs *defs)
{
    mc_login_config lc;
    memset(&lc, 0, sizeof lc);
    lc.loginapp = c->ext;
    memcpy(lc.loginapp_pk, c->pk, sizeof lc.loginapp_pk);
    memcpy(lc.digest, mc_defs_digest(defs), sizeof lc.digest);
    return lc;
}

/* Run a login or resume attempt to its end: its status (the result in *res). */
static int drive(mc_login_attempt *a, mc_login_result *res)
{
    ck_assert_ptr_nonnull(a);
    int st;
    while ((st = mc_login_tick(a, (uint64_t)now_ms())) == MC_LOGIN_PENDING) {
        if (nlive) {
            pump(live, nlive, 5, NULL, NULL); /* the players play on meanwhile */
            continue;
        }
        struct pollfd pf = {.fd = mc_login_fd(a), .events = POLLIN};
        poll(&pf, 1, 10);
    }
    if (res)
        *res = *mc_login_result_of(a);
    mc_login_free(a);
    return st;
}

/* A RESUME with this ticket and key from source address ip (NULL: any): its status. */
static int resume_with(lc_cluster *c, const mc_entity_defs *defs, const uint8_t *ticket,
                       const uint8_t *key, const char *ip, uint32_t timeout_ms)
{
    mc_login_config lc = login_config(c, defs);
    lc.bind_ip = ip;
    lc.timeout_ms = timeout_ms;
    char err[256];
    mc_login_attempt *a =
        mc_resume_start(&lc, ticket, key, (uint64_t)now_ms(), err, sizeof err);
    ck_assert_msg(a != NULL, "%s", err);
    return drive(a, NULL);
}

static bool in_world(player **ps, size_t n, const void *arg)
{
    (void)arg;
    for (size_t i = 0; i < n; i++) {
        player *p = ps[i];
        if (!p->c || mc_client_state(p->c) != MC_CLIENT_CONNECTED || !p->avatar_id ||
            mc_client_player_id(p->c) != p->avatar_id ||
            !mc_client_entity_of(p->c, p->avatar_id) || !mc_client_has_ticket(p->c))
            return false;
    }
    return true;
}

/* Log p in (its own client, resuming through the loginapp when resume) and play its Avatar
 * in the world. */
static void login_and_play(lc_cluster *c, player *p, bool resume, uint32_t idle_ms)
{
    mc_login_config lc = login_config(c, p->defs);
    char err[256];
    mc_login_result r;
    int st = drive(mc_login_start(&lc, p->name, "pw", 0, (uint64_t)now_ms(), err, sizeof err),
                   &r);
    ck_assert_msg(st == MC_LOGIN_OK, "login of %s: %s (log %s)", p->name,
                  mc_login_status_name(st), c->log_login);
    char addr[32];
    snprintf(addr, sizeof addr, "%u.%u.%u.%u:%u", r.baseapp_ip >> 24,
             (r.baseapp_ip >> 16) & 255, (r.baseapp_ip >> 8) & 255, r.baseapp_ip & 255,
             r.baseapp_port);
    mc_client_config cfg = {.baseapp = addr, .session_id = r.session_id, .defs = p->defs,
                            .ud = p, .timeout_ms = 5000, .idle_ms = idle_ms,
                            .loginapp = resume ? c->ext : NULL, .resume_backoff_ms = 200};
    memcpy(cfg.session_key, r.session_key, sizeof cfg.session_key);
    cfg.cb.on_call = cb_call;
    cfg.cb.on_player = cb_player;
    cfg.cb.on_resume = cb_resume;
    cfg.cb.on_end = cb_end;
    p->c = mc_client_connect(&cfg, err, sizeof err);
    ck_assert_msg(p->c != NULL, "%s", err);
    player *ps[1] = {p};
    ck_assert_msg(pump(ps, 1, WAIT_MS, in_world, NULL), "%s did not enter the world", p->name);
}

static bool sees(player **ps, size_t n, const void *arg)
{
    (void)n;
    (void)arg;
    player *a = ps[0], *b = ps[1];
    return in_world(ps, 1, NULL) && mc_client_entity_of(a->c, b->avatar_id) != NULL;
}

static bool resumed_n(player **ps, size_t n, const void *arg)
{
    return ps[0]->resumes_ok >= *(const int *)arg && sees(ps, n, NULL);
}


START_TEST(players_resume_without_logging_in)
{
    lc_cluster c;
    lc_start(&c, 1, base_conf, "{\"spaceName\":\"world\"}");
    char err[256];
    mc_entity_defs *defs = mc_defs_load(lc_res_dir(), err, sizeof err);
    ck_assert_msg(defs, "%s", err);
    uint16_t avatar = mc_defs_type_by_name(defs, "Avatar")->id;
    player rita = {.name = "rita", .avatar = "Rita", .defs = defs, .avatar_type = avatar};
    player sam = {.name = "sam", .avatar = "Sam", .defs = defs, .avatar_type = avatar};
    /* silence notices a dropped channel: Rita's after the library's default (idle_ms 0),
     * the cluster's death timeout for a baseapp; Sam's long enough that a loaded machine
     * does not fake one */
    login_and_play(&c, &rita, true, 0);
    login_and_play(&c, &sam, false, 10000);
    player *ps[2] = {&rita, &sam};
    live[0] = &rita;
    live[1] = &sam;
    nlive = 2;
    ck_assert_msg(pump(ps, 2, WAIT_MS, sees, NULL), "Rita does not see Sam");
    const char *ba = c.pc.base_name[0]; /* the one baseapp */
    long long logins = counter(&c, "loginapp01", "login/status/ok");
    long long deaths = counter(&c, ba, "clients/deaths");
    ck_assert_int_eq(logins, 2);
    ck_assert_int_ge(counter(&c, ba, "clients/resume/tickets"), 2);

    /* the baseapp drops Rita's channel without a word: her client resumes by itself */
    uint8_t t1[MC_RESUME_TICKET_SIZE], k1[MC_RESUME_KEY_BYTES];
    ck_assert_int_eq(mc_client_ticket(rita.c, t1, k1), 0);
    long t1_expired = now_ms() + TICKET_MS + 500; /* it was issued before this */
    char ids[16];
    snprintf(ids, sizeof ids, "%d", (int)rita.avatar_id);
    long dropped_at = now_ms();
    ck_assert_int_eq(set_knob(&c, ba, "faults/dropClient", ids), 0);
    int want = 1;
    ck_assert_msg(pump(ps, 2, WAIT_MS, resumed_n, &want), "Rita did not resume (log %s)",
                  c.log_login);
    /* after the default silence (3 s): not at once (her last keepalive came about a second
     * before the drop, later under load), and well before the 10 s the default used to be */
    long resumed_after = now_ms() - dropped_at;
    ck_assert_msg(resumed_after >= (long)MC_CLIENT_IDLE_MS_DEFAULT - 2000 &&
                      resumed_after < 9000,
                  "Rita resumed %ld ms after her channel was dropped", resumed_after);
    ck_assert_int_eq(rita.resumes_failed, 0);
    ck_assert_int_eq(counter(&c, "loginapp01", "login/status/ok"), logins); /* no login */
    ck_assert_int_eq(counter(&c, "loginapp01", "resume/resumed"), rita.resumes_ok);
    ck_assert_int_eq(counter(&c, ba, "clients/resume/resumed"), rita.resumes_ok);
    ck_assert_int_ge(counter(&c, ba, "clients/resume/graceStarted"), 1);
    ck_assert_int_eq(counter(&c, ba, "clients/deaths"), deaths); /* no onClientDeath */
    /* the ticket she used is spent */
    ck_assert_int_eq(resume_with(&c, defs, t1, k1, NULL, 3000), MC_LOGIN_TICKET_USED);

    /* her network changes: told, she resumes from a new socket (the old channel still up) */
    uint8_t t2[MC_RESUME_TICKET_SIZE], k2[MC_RESUME_KEY_BYTES];
    ck_assert_int_eq(mc_client_ticket(rita.c, t2, k2), 0);
    want = rita.resumes_ok + 1;
    ck_assert_int_eq(mc_client_resume_now(rita.c), 0);
    ck_assert_msg(pump(ps, 2, WAIT_MS, resumed_n, &want), "Rita did not resume again");
    ck_assert_int_eq(counter(&c, "loginapp01", "login/status/ok"), logins);
    ck_assert_int_eq(counter(&c, "loginapp01", "resume/resumed"), rita.resumes_ok);
    ck_assert_int_eq(resume_with(&c, defs, t2, k2, NULL, 3000), MC_LOGIN_TICKET_USED);
    ck_assert_int_eq(counter(&c, "loginapp01", "resume/status/ticketUsed"), 2);

    /* her current ticket: with another key's proof, changed, or sealed by a stranger: never
     * answered (the client times out), counted */
    uint8_t t3[MC_RESUME_TICKET_SIZE], k3[MC_RESUME_KEY_BYTES], other[MC_RESUME_KEY_BYTES];
    ck_assert_int_eq(mc_client_ticket(rita.c, t3, k3), 0);
    randombytes_buf(other, sizeof other);
    ck_assert_int_eq(resume_with(&c, defs, t3, other, NULL, 1500), MC_LOGIN_TIMED_OUT);
    ck_assert_int_ge(counter(&c, "loginapp01", "resume/badProof"), 1); /* each resend */
    ck_assert_int_eq(counter(&c, "loginapp01", "resume/forged"), 0);
    uint8_t changed[MC_RESUME_TICKET_SIZE];
    memcpy(changed, t3, sizeof changed);
    changed[60] ^= 1;
    ck_assert_int_eq(resume_with(&c, defs, changed, k3, NULL, 1500), MC_LOGIN_TIMED_OUT);
    long long forged_seen = counter(&c, "loginapp01", "resume/forged");
    ck_assert_int_ge(forged_seen, 1);
    mc_resume_ticket_info fake = {.entity_id = rita.avatar_id, .serial = 1,
                                  .expires_ms = 0xFFFFFFFFFFFFull, .name = "rita"};
    uint8_t stranger_key[32], forged[MC_RESUME_TICKET_SIZE];
    randombytes_buf(stranger_key, sizeof stranger_key);
    randombytes_buf(fake.resume_key, sizeof fake.resume_key);
    ck_assert_int_eq(mc_resume_ticket_seal(stranger_key, &fake, forged), MC_SECURE_OK);
    ck_assert_int_eq(resume_with(&c, defs, forged, fake.resume_key, NULL, 1500),
                     MC_LOGIN_TIMED_OUT);
    ck_assert_int_gt(counter(&c, "loginapp01", "resume/forged"), forged_seen);
    ck_assert_int_eq(counter(&c, "loginapp01", "resume/resumed"), rita.resumes_ok); /* no one else */

    /* a copy kept past its expiry (tickets live 16 s here; hers are renewed meanwhile):
     * refused before any baseapp is asked */
    if (t1_expired > now_ms())
        pump(ps, 2, t1_expired - now_ms(), NULL, NULL);
    long long used = counter(&c, "loginapp01", "resume/status/ticketUsed");
    ck_assert_int_eq(resume_with(&c, defs, t1, k1, NULL, 3000), MC_LOGIN_TICKET_EXPIRED);
    ck_assert_int_eq(counter(&c, "loginapp01", "resume/status/ticketUsed"), used);
    ck_assert_msg(in_world(ps, 1, NULL), "Rita left the world meanwhile");
    ck_assert_int_ge(counter(&c, ba, "clients/resume/tickets"), 7); /* renewed at half-life */

    /* Sam's channel goes and he does not come back (his client cannot resume: no loginapp):
     * after the grace time his base hears onClientDeath and his Avatar leaves; his ticket,
     * still within its life, is refused: entity gone */
    uint8_t ts[MC_RESUME_TICKET_SIZE], ks[MC_RESUME_KEY_BYTES];
    ck_assert_int_eq(mc_client_ticket(sam.c, ts, ks), 0);
    snprintf(ids, sizeof ids, "%d", (int)sam.avatar_id);
    long long sam_deaths = counter(&c, ba, "clients/deaths");
    ck_assert_int_eq(set_knob(&c, ba, "faults/dropClient", ids), 0);
    ck_assert(wait_counter(&c, ba, "clients/resume/graceExpired", 1));
    ck_assert_int_eq(counter(&c, ba, "clients/deaths"), sam_deaths + 1);
    int st = MC_LOGIN_PENDING;
    for (long end = now_ms() + WAIT_MS; now_ms() < end;) {
        st = resume_with(&c, defs, ts, ks, NULL, 3000);
        if (st == MC_LOGIN_ENTITY_GONE)
            break;
        ck_assert_msg(st == MC_LOGIN_TICKET_EXPIRED, "%s", mc_login_status_name(st));
        pump(ps, 1, 200, NULL, NULL);
    }
    ck_assert_msg(st == MC_LOGIN_ENTITY_GONE, "%s", mc_login_status_name(st));

    /* a flood of RESUMEs from one address: its bucket, as for LOGINs (20 at once) */
    mc_login_config lc = login_config(&c, defs);
    lc.bind_ip = "127.0.0.9";
    lc.timeout_ms = 3000;
    enum { FLOOD = 40 };
    mc_login_attempt *as[FLOOD];
    long flood_start = now_ms();
    for (int i = 0; i < FLOOD; i++) {
        as[i] = mc_resume_start(&lc, t1, k1, (uint64_t)now_ms(), err, sizeof err);
        ck_assert_msg(as[i], "%s", err);
    }
    int by[MC_LOGIN_STATUS_COUNT] = {0};
    for (int left = FLOOD; left;) {
        left = 0;
        for (int i = 0; i < FLOOD; i++) {
            if (!as[i])
                continue;
            int s = mc_login_tick(as[i], (uint64_t)now_ms());
            if (s == MC_LOGIN_PENDING) {
                left++;
                continue;
            }
            by[s]++;
            mc_login_free(as[i]);
            as[i] = NULL;
        }
        pump(ps, 1, 5, NULL, NULL);
    }
    ck_assert_msg(by[MC_LOGIN_RATE_LIMITED] >= 1, "no RESUME was rate limited");
    /* at most the bucket's burst (20) and its refill (5 a second) were let through */
    long flood_s = (now_ms() - flood_start + 999) / 1000;
    ck_assert_int_le(by[MC_LOGIN_TICKET_USED], 20 + 5 * flood_s);
    ck_assert_int_lt(by[MC_LOGIN_TICKET_USED], FLOOD);
    ck_assert_int_ge(counter(&c, "loginapp01", "resume/status/rateLimited"), 1);
    ck_assert_int_ge(counter(&c, "loginapp01", "login/dropped/rateLimited"), 1);

    nlive = 0;
    mc_client_close(rita.c);
    mc_client_free(rita.c);
    mc_client_free(sam.c);
    mc_defs_free(defs);
    lc_stop(&c);
}
END_TEST

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void read_file(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t k = f ? fread(out, 1, n - 1, f) : 0;
    out[k] = '\0';
    if (f)
        fclose(f);
}

static bool client_ended(player **ps, size_t n, const void *arg)
{
    (void)n;
    (void)arg;
    return mc_client_state(ps[0]->c) == MC_CLIENT_ENDED;
}

/* mc-client plays, its channel is dropped, it resumes and plays on (its script chats
 * before and after); then bots play, the baseapps drop every channel, each bot resumes by
 * itself */
START_TEST(tools_resume_by_themselves)
{
    lc_cluster c;
    lc_start(&c, 2, base_conf, "{\"spaceName\":\"world\"}");
    char bin[512], lopt[64], kopt[128], mopt[64], ropt[700], log[700];
    snprintf(lopt, sizeof lopt, "--loginapp=%s", c.ext);
    snprintf(kopt, sizeof kopt, "--public-key=%s", c.pk_hex);
    snprintf(mopt, sizeof mopt, "--manager=%s", c.pc.manager);
    snprintf(ropt, sizeof ropt, "--res=%s", lc_res_dir());

    /* mc-client */
    char pwfile[700], sfile[700], mlog[700];
    snprintf(pwfile, sizeof pwfile, "%s/pw", c.pc.dir);
    write_file(pwfile, "pw\n");
    snprintf(sfile, sizeof sfile, "%s/script", c.pc.dir);
    write_file(sfile, "expect onAvatarList\n"
                      "base createAvatar [\"Carl\",[1,2,3,4]]\n"
                      "expect onAvatarList\n"
                      "base selectAvatar [\"Carl\"]\n"
                      "cell chat [\"before the drop\"]\n"
                      "expect onChat\n"
                      "wait 9000\n"
                      "cell chat [\"after the drop\"]\n"
                      "expect onChat\n"
                      "quit\n");
    snprintf(mlog, sizeof mlog, "%s/mc-client.out", c.pc.dir);
    char *margv[] = {(char *)h_bin("mc-client", bin, sizeof bin), "--user", "carl",
                     "--password-file", pwfile, "--script", sfile, lopt, kopt, ropt,
                     "--timeout", "20", "--no-moves", "--idle-ms", "3000", NULL};
    pid_t mcc = h_spawn(margv, mlog);
    ck_assert_int_gt(mcc, 0);
    long until = now_ms() + WAIT_MS;
    while (now_ms() < until && !h_file_contains(mlog, ",\"before the drop\"]"))
        h_sleep_ms(100);
    ck_assert_msg(h_file_contains(mlog, ",\"before the drop\"]"), "mc-client did not play (%s)",
                  mlog);
    for (int i = 0; i < c.pc.nbase; i++)
        ck_assert_int_eq(set_knob(&c, c.pc.base_name[i], "faults/dropAllClients", "1000"), 0);
    int mrc = h_wait_exit(mcc, 60000);
    static char mout[1 << 16];
    read_file(mlog, mout, sizeof mout);
    ck_assert_msg(mrc == 0, "mc-client exited %d: %s", mrc, mout);
    ck_assert_msg(strstr(mout, "resume resumed without a login (resumed ") &&
                      strstr(mout, ", failed 0)"),
                  "%s", mout);
    ck_assert_msg(strstr(mout, ",\"after the drop\"]"), "%s", mout);
    ck_assert_int_eq(counter(&c, "loginapp01", "login/status/ok"), 1);
    ck_assert_int_ge(counter(&c, "loginapp01", "resume/resumed"), 1);
    /* Carl logged off: his Avatar left the world (only the Space is left) */
    ck_assert(wait_counter_eq(&c, "cellapp01", "entities/count", 1));

    snprintf(log, sizeof log, "%s/bots.out", c.pc.dir);
    char *argv[] = {(char *)h_bin("bots", bin, sizeof bin), "--count", "20", "--rate", "20",
                    "--duration", "20", "--idle-ms", "2000", "--json", "--quiet", lopt, kopt,
                    mopt, ropt, NULL};
    pid_t bots = h_spawn(argv, log);
    ck_assert_int_gt(bots, 0);
    /* every bot plays (20 Avatars with a client on the two baseapps together) */
    long end = now_ms() + WAIT_MS;
    long long playing = 0;
    while (now_ms() < end) {
        playing = counter(&c, "cellapp01", "entities/count");
        if (playing >= 21) /* the Space and 20 Avatars */
            break;
        h_sleep_ms(200);
    }
    ck_assert_msg(playing >= 21, "the bots did not all play (%lld cell entities)", playing);
    long long logins = counter(&c, "loginapp01", "login/status/ok");
    for (int i = 0; i < c.pc.nbase; i++)
        ck_assert_int_eq(set_knob(&c, c.pc.base_name[i], "faults/dropAllClients", "1000"), 0);
    int rc = h_wait_exit(bots, 60000);
    FILE *f = fopen(log, "r");
    static char out[1 << 16];
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
    ck_assert_msg(rc == 0, "bots exited %d: %s", rc, out);
    const char *p = strstr(out, "\"resumes\":");
    ck_assert_msg(p && atoi(p + 10) >= 20, "%s", out);
    ck_assert_msg(strstr(out, "\"resume_failed\":0,"), "%s", out);
    ck_assert_msg(strstr(out, "\"ended_early\":0,"), "%s", out);
    ck_assert_int_eq(counter(&c, "loginapp01", "login/status/ok"), logins); /* no new login */
    ck_assert_int_ge(counter(&c, "loginapp01", "resume/resumed"), 21);

    /* a proxy that dies with its baseapp (kill -9; this cluster's baseapps run with backups
     * off, --backupPeriodMs=0, so nothing restores it: with backups, integration_fault_bench
     * sees players resume on the restorer): its player tries to resume,
     * is told 'entity gone' (after a 'server error' while the dead baseapp was still asked),
     * and ends lost: it can log in again */
    ck_assert(wait_counter_eq(&c, "cellapp01", "entities/count", 1)); /* the bots left */
    char err[256];
    mc_entity_defs *defs = mc_defs_load(lc_res_dir(), err, sizeof err);
    ck_assert_msg(defs, "%s", err);
    player dora = {.name = "dora", .avatar = "Dora", .defs = defs,
                   .avatar_type = mc_defs_type_by_name(defs, "Avatar")->id};
    login_and_play(&c, &dora, true, 3000);
    live[0] = &dora;
    nlive = 1;
    int slot = -1;
    for (int i = 0; i < c.pc.nbase; i++)
        if (counter(&c, c.pc.base_name[i], "clients/connected") == 1)
            slot = i;
    ck_assert_int_ge(slot, 0);
    ck_assert_int_eq(kill(c.pc.base[slot], SIGKILL), 0);
    ck_assert_int_eq(h_wait_exit(c.pc.base[slot], 10000), 128 + SIGKILL);
    c.pc.base[slot] = -1; /* gone: not stopped at the end */
    player *ps[1] = {&dora};
    ck_assert_msg(pump(ps, 1, 60000, client_ended, NULL), "Dora's client did not give up");
    nlive = 0;
    ck_assert_int_eq(mc_client_end_of(dora.c), MC_CLIENT_END_LOST);
    ck_assert_int_eq(dora.resumes_ok, 0);
    ck_assert_int_eq(dora.resumes_failed, 1);
    ck_assert_msg(dora.last_resume == MC_LOGIN_ENTITY_GONE, "%s",
                  mc_login_status_name(dora.last_resume));
    ck_assert_int_ge(counter(&c, "loginapp01", "resume/status/entityGone"), 1);
    mc_client_free(dora.c);
    mc_defs_free(defs);
    lc_stop(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("client_resume");
    TCase *tc = tcase_create("resume");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, players_resume_without_logging_in);
    tcase_add_test(tc, tools_resume_by_themselves);
    suite_add_tcase(s, tc);
    return s;
}

MC_CHECK_MAIN(suite)
