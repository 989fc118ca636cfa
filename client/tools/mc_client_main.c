/* mc-client: log in to a running cluster as one player, print every call, property change
 * and world record the client hears (one line each, or JSON lines), and send exposed calls
 * and moves typed on stdin or read from a script (docs/tools/mc-client.md). */
#define _POSIX_C_SOURCE 200809L
#include "mcc_print.h"
#include "mcc_script.h"
#include "tool_env.h"

#include "common/value_json.h"
#include "mcclient/client.h"
#include "mcclient/login.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RING 64

typedef struct {
    /* options */
    const char *user, *password_file, *script_path;
    bool takeover, json, moves;
    uint64_t timeout_ms;
    uint32_t idle_ms;    /* --idle-ms: the baseapp silent this long: the channel is lost and
                            resumed (0: the library's MC_CLIENT_IDLE_MS_DEFAULT) */
    /* state */
    mcc_printer pr;
    mc_entity_defs *defs;
    mc_client *c;
    bool closing;        /* we ended it */
    FILE *script;        /* NULL: commands from stdin */
    bool tty;            /* stdin is a terminal: a bad line is reported, not fatal */
    char inbuf[MCC_LINE_MAX + 1];
    size_t inlen;
    bool in_eof;
    int lineno;
    bool have_cmd;
    char line[MCC_LINE_MAX + 1];
    mcc_command cmd;
    uint64_t cmd_started;
    struct {
        uint64_t seq;
        char name[64];
        char args[512];         /* its arguments as JSON (cut at 511 bytes) */
    } ring[RING];
    uint64_t seq, mark;
    int exit_code;
    bool done;
} mcc;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mc-client --user NAME [--password-file FILE] [options]\n"
            "Logs in to a running cluster as NAME, prints every call, property change and\n"
            "world record the client hears, and sends the commands typed on stdin (or read\n"
            "from --script):\n"
            "  base METHOD [JSON-ARGS]   call an exposed base method   base createAvatar [\"Hero\",[1,2,3,4]]\n"
            "  cell METHOD [JSON-ARGS]   call an exposed cell method   cell chat [\"hi\"]\n"
            "  move X Y Z [DX DY DZ]     move the player's entity\n"
            "  wait MS | expect NAME [TEXT] | quit\n"
            "options:\n"
            "  --user NAME             the account name\n"
            "  --password-file FILE    the password is its first line (default: the first\n"
            "                          line of standard input)\n"
            "  --takeover              take over the account if it is online\n"
            "  --script FILE           commands from FILE instead of standard input\n"
            "  --json                  JSON lines instead of text\n"
            "  --no-moves              do not print other entities' moves (volatile updates)\n"
            "  --timeout SECONDS       login, a call waiting for the player, expect (10)\n"
            "  --idle-ms MS            the baseapp silent this long: the channel is lost and\n"
            "                          resumed with the ticket, no login (3000: the\n"
            "                          cluster's death timeout for a baseapp)\n"
            "  --loginapp IP:PORT      default: the cluster file's loginapp\n"
            "  --public-key HEX        default: the cluster file's loginPublicKey\n"
            "  --res DIR               the defs (default: <repo>/defs)\n"
            "The cluster file is $MC_RUN_DIR/cluster.conf, else <repo>/run/cluster.conf.\n"
            "Exit codes: 0 ok; 2 bad usage; 10+status a failed login (11 no such user, 12 bad\n"
            "password, 13 already logged in, 14 bad def digest, 15 no baseapp, 16 overloaded,\n"
            "17 rate limited, 18 malformed, 19 server error, 20 timed out); 30 session\n"
            "rejected, 31 no handshake answer, 32 disconnected by the server, 33 lost;\n"
            "40 an expect timed out; 41 a bad command; 1 other failures.\n");
}

/* ---- what the client hears --------------------------------------------------------------- */

static void remember(mcc *m, const mc_def_method *method, const mc_value *args)
{
    m->seq++;
    m->ring[m->seq % RING].seq = m->seq;
    snprintf(m->ring[m->seq % RING].name, sizeof m->ring[0].name, "%s", method->name);
    char *json = args ? mc_json_from_values(method->args, method->nargs, args) : NULL;
    snprintf(m->ring[m->seq % RING].args, sizeof m->ring[0].args, "%s", json ? json : "");
    free(json);
}

static void on_player(void *ud, mc_client *c, const mc_cw_player *pl)
{
    (void)c;
    mcc_print_player(&((mcc *)ud)->pr, pl);
}

static void on_call(void *ud, mc_client *c, int32_t id, const mc_def_method *method,
                    const mc_value *args)
{
    mcc *m = ud;
    mcc_print_call(&m->pr, id, mc_client_player_type(c), method, args);
    remember(m, method, args);
}

static void on_property(void *ud, mc_client *c, int32_t id, const mc_def_property *p,
                        const mc_value *v)
{
    mcc_print_property(&((mcc *)ud)->pr, id, mc_client_player_type(c), p, v);
}

static void on_world(void *ud, mc_client *c, const mc_world_record *r)
{
    mcc *m = ud;
    if (r->kind == MC_WORLD_VOLATILE && !m->moves)
        return;
    const mc_client_entity *e = mc_client_entity_of(c, r->id);
    mcc_print_world(&m->pr, r, r->kind == MC_WORLD_ENTER ? r->type : e ? e->type : 0);
    if (r->kind == MC_WORLD_CALL && r->method)
        remember(m, r->method, r->values);
}

static void on_end(void *ud, mc_client *c, int how, int reason, const char *text)
{
    (void)c;
    mcc *m = ud;
    mcc_print_end(&m->pr, how, reason, text);
    if (m->closing)
        return;
    m->exit_code = how == MC_CLIENT_END_REJECTED     ? TOOL_EXIT_REJECTED
                   : how == MC_CLIENT_END_TIMED_OUT  ? TOOL_EXIT_HANDSHAKE
                   : how == MC_CLIENT_END_DISCONNECTED ? TOOL_EXIT_DISCONNECTED
                                                       : TOOL_EXIT_LOST;
    m->done = true;
}

/* A resumption finished: its channel died and it came back with its ticket (no login), or
 * could not (then on_end follows: lost). */
static void on_resume(void *ud, mc_client *c, int status, const char *name)
{
    mcc *m = ud;
    mc_client_stats st;
    mc_client_get_stats(c, &st);
    char text[160];
    snprintf(text, sizeof text, "%s%s (resumed %llu, failed %llu)",
             status == MC_LOGIN_OK ? "resumed without a login" : "cannot resume: ",
             status == MC_LOGIN_OK ? "" : name, (unsigned long long)st.resumes,
             (unsigned long long)st.resume_failures);
    mcc_print_info(&m->pr, "resume", text);
}

/* ---- commands ---------------------------------------------------------------------------- */

/* A failed command: fatal unless a person types them. */
static void bad_command(mcc *m, const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "mc-client: line %d: ", m->lineno);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    if (!m->tty) {
        m->exit_code = TOOL_EXIT_SCRIPT;
        m->done = true;
    }
}

/* The next line from the script or stdin into m->line; false when none is ready. */
static bool next_line(mcc *m)
{
    if (m->script) {
        if (!fgets(m->line, sizeof m->line, m->script)) {
            m->in_eof = true;
            return false;
        }
        return true;
    }
    char *nl = memchr(m->inbuf, '\n', m->inlen);
    if (!nl && m->in_eof && m->inlen) /* a last line without a newline */
        nl = m->inbuf + m->inlen;
    if (!nl)
        return false;
    size_t n = (size_t)(nl - m->inbuf);
    memcpy(m->line, m->inbuf, n);
    m->line[n] = '\0';
    size_t used = n < m->inlen ? n + 1 : n;
    memmove(m->inbuf, m->inbuf + used, m->inlen - used);
    m->inlen -= used;
    return true;
}

static void read_stdin(mcc *m)
{
    if (m->inlen >= MCC_LINE_MAX) {
        fprintf(stderr, "mc-client: a line longer than %d bytes\n", MCC_LINE_MAX);
        m->exit_code = TOOL_EXIT_SCRIPT;
        m->done = true;
        return;
    }
    ssize_t n = read(0, m->inbuf + m->inlen, MCC_LINE_MAX - m->inlen);
    if (n > 0)
        m->inlen += (size_t)n;
    else if (n == 0 || (errno != EAGAIN && errno != EINTR))
        m->in_eof = true;
}

static bool player_ready(mcc *m, bool need_cell)
{
    int32_t id = mc_client_player_id(m->c);
    return mc_client_state(m->c) == MC_CLIENT_CONNECTED && id > 0 &&
           (!need_cell || mc_client_entity_of(m->c, id) != NULL);
}

static void do_call(mcc *m)
{
    mc_part part = m->cmd.kind == MCC_BASE ? MC_PART_BASE : MC_PART_CELL;
    const mc_entity_type_def *td = mc_defs_type(m->defs, mc_client_player_type(m->c));
    const mc_def_method *meth = td ? mc_defs_method_by_name(td, part, m->cmd.name) : NULL;
    if (!meth || meth->exposed_index < 0) {
        bad_command(m, "%s has no exposed method '%s' on that side", td ? td->name : "?",
                    m->cmd.name);
        return;
    }
    mc_value args[64];
    char why[256];
    if (meth->nargs > 64 || mc_json_to_args(m->defs, meth, m->cmd.json, strlen(m->cmd.json),
                                            args, why, sizeof why) != 0) {
        bad_command(m, "bad arguments for %s: %s", m->cmd.name, meth->nargs > 64 ? "too many"
                                                                                   : why);
        return;
    }
    int rc = mc_client_call(m->c, part, m->cmd.name, args, meth->nargs);
    for (size_t i = 0; i < meth->nargs; i++)
        mc_value_free(&args[i]);
    if (rc != MC_CALL_OK)
        bad_command(m, "%s: %s", m->cmd.name, mc_call_status_name(rc));
    m->mark = m->seq;
}

/* Run the current command as far as it goes now; true when it is finished. */
static bool step(mcc *m, uint64_t now)
{
    bool late = now - m->cmd_started > m->timeout_ms;
    switch (m->cmd.kind) {
    case MCC_BASE:
    case MCC_CELL:
    case MCC_MOVE: {
        bool cell = m->cmd.kind != MCC_BASE;
        if (!player_ready(m, cell)) {
            if (late)
                bad_command(m, "no player%s after --timeout (%s)",
                            cell ? " with a cell in a space" : "", "the command waited");
            return late;
        }
        if (m->cmd.kind == MCC_MOVE) {
            int rc = mc_client_move(m->c, m->cmd.pos, m->cmd.dir);
            if (rc != MC_CALL_OK)
                bad_command(m, "move: %s%s", mc_call_status_name(rc), "");
            m->mark = m->seq;
        } else {
            do_call(m);
        }
        return true;
    }
    case MCC_WAIT:
        return now - m->cmd_started >= m->cmd.ms;
    case MCC_EXPECT:
        for (uint64_t s = m->mark + 1; s <= m->seq; s++) {
            if (s + RING <= m->seq) /* older than the ring holds */
                continue;
            if (!strcmp(m->ring[s % RING].name, m->cmd.name) &&
                (!m->cmd.text[0] || strstr(m->ring[s % RING].args, m->cmd.text))) {
                m->mark = s;
                return true;
            }
        }
        if (late) {
            fprintf(stderr, "mc-client: line %d: expect %s: no such call within --timeout\n",
                    m->lineno, m->cmd.name);
            m->exit_code = TOOL_EXIT_EXPECT;
            m->done = true;
            return true;
        }
        return false;
    case MCC_QUIT:
        m->done = true;
        return true;
    default:
        return true;
    }
}

static void run_commands(mcc *m)
{
    for (int i = 0; i < 100 && !m->done; i++) {
        uint64_t now = tool_now_ms();
        if (!m->have_cmd) {
            if (!next_line(m)) {
                if (m->in_eof && !m->inlen)
                    m->done = true; /* the end of the commands: log off */
                return;
            }
            m->lineno++;
            char err[256];
            if (mcc_parse(m->line, &m->cmd, err, sizeof err) != 0) {
                bad_command(m, "%s%s", err, "");
                continue;
            }
            if (m->cmd.kind == MCC_NONE)
                continue;
            m->have_cmd = true;
            m->cmd_started = now;
        }
        if (!step(m, now))
            return;
        m->have_cmd = false;
    }
}

/* ---- logging in -------------------------------------------------------------------------- */

static int do_login(mcc *m, const tool_cluster *tc, const uint8_t *digest, const char *pw,
                    mc_login_result *res)
{
    mc_login_config cfg = {.loginapp = tc->loginapp, .timeout_ms = (uint32_t)m->timeout_ms};
    memcpy(cfg.loginapp_pk, tc->public_key, sizeof cfg.loginapp_pk);
    memcpy(cfg.digest, digest, sizeof cfg.digest);
    char err[256];
    mc_login_attempt *a = mc_login_start(&cfg, m->user, pw, m->takeover ? MC_LOGIN_FLAG_TAKEOVER
                                                                         : 0,
                                         tool_now_ms(), err, sizeof err);
    if (!a) {
        fprintf(stderr, "mc-client: %s\n", err);
        return -1;
    }
    int st;
    while ((st = mc_login_tick(a, tool_now_ms())) == MC_LOGIN_PENDING) {
        struct pollfd p = {.fd = mc_login_fd(a), .events = POLLIN};
        uint64_t next = mc_login_next_ms(a), t = tool_now_ms();
        poll(&p, 1, next > t ? (int)(next - t) : 0);
    }
    *res = *mc_login_result_of(a);
    mc_login_free(a);
    return st;
}

static int parse_args(mcc *m, int argc, char **argv, const char **opt_loginapp,
                      const char **opt_pk, const char **opt_res)
{
    static const struct option longs[] = {
        {"user", required_argument, NULL, 'u'},     {"password-file", required_argument, NULL, 'p'},
        {"takeover", no_argument, NULL, 'T'},       {"script", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},           {"no-moves", no_argument, NULL, 'M'},
        {"timeout", required_argument, NULL, 't'},  {"loginapp", required_argument, NULL, 'l'},
        {"public-key", required_argument, NULL, 'k'}, {"res", required_argument, NULL, 'r'},
        {"idle-ms", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    int o;
    double secs;
    while ((o = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (o) {
        case 'u': m->user = optarg; break;
        case 'p': m->password_file = optarg; break;
        case 'T': m->takeover = true; break;
        case 's': m->script_path = optarg; break;
        case 'j': m->json = true; break;
        case 'M': m->moves = false; break;
        case 't':
            if (tool_parse_double(optarg, 0.1, 3600, &secs) != 0) {
                fprintf(stderr, "mc-client: --timeout '%s': seconds, 0.1..3600\n", optarg);
                return -1;
            }
            m->timeout_ms = (uint64_t)(secs * 1000);
            break;
        case 'i':
            if (tool_parse_double(optarg, 1000, 600000, &secs) != 0) {
                fprintf(stderr, "mc-client: --idle-ms '%s': 1000..600000\n", optarg);
                return -1;
            }
            m->idle_ms = (uint32_t)secs;
            break;
        case 'l': *opt_loginapp = optarg; break;
        case 'k': *opt_pk = optarg; break;
        case 'r': *opt_res = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "mc-client: unexpected argument '%s' (try --help)\n", argv[optind]);
        return -1;
    }
    if (!m->user) {
        fprintf(stderr, "mc-client: --user NAME is required (try --help)\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static mcc m; /* large buffers: not on the stack */
    m.moves = true;
    m.timeout_ms = 10000;
    const char *opt_loginapp = NULL, *opt_pk = NULL, *opt_res = NULL;
    if (parse_args(&m, argc, argv, &opt_loginapp, &opt_pk, &opt_res) != 0)
        return TOOL_EXIT_USAGE;
    if (sodium_init() < 0) {
        fprintf(stderr, "mc-client: libsodium did not initialise\n");
        return TOOL_EXIT_ERROR;
    }
    char err[2048];
    tool_cluster tc;
    if (tool_cluster_find(&tc, opt_loginapp, opt_pk, NULL, opt_res, err, sizeof err) != 0) {
        fprintf(stderr, "mc-client: %s\n", err);
        return TOOL_EXIT_USAGE;
    }
    uint8_t digest[MC_LOGIN_DIGEST_BYTES];
    m.defs = tool_defs_load(&tc, digest, err, sizeof err);
    if (!m.defs) {
        fprintf(stderr, "mc-client: %s\n", err);
        return TOOL_EXIT_USAGE;
    }
    m.pr = (mcc_printer){.out = stdout, .json = m.json, .defs = m.defs};
    if (m.script_path && !(m.script = fopen(m.script_path, "r"))) {
        fprintf(stderr, "mc-client: cannot read the script %s: %s\n", m.script_path,
                strerror(errno));
        mc_defs_free(m.defs);
        return TOOL_EXIT_USAGE;
    }
    char pw[MC_LOGIN_PASSWORD_MAX + 2];
    int rc = TOOL_EXIT_OK;
    if (tool_read_password(m.password_file ? m.password_file : "-", pw, sizeof pw, err,
                           sizeof err) != 0) {
        fprintf(stderr, "mc-client: %s\n", err);
        rc = TOOL_EXIT_USAGE;
        goto out;
    }
    m.tty = !m.script && isatty(0);
    mc_login_result res;
    int st = do_login(&m, &tc, digest, pw, &res);
    sodium_memzero(pw, sizeof pw);
    if (st < 0) {
        rc = TOOL_EXIT_USAGE;
        goto out;
    }
    if (st != MC_LOGIN_OK) {
        fprintf(stderr, "mc-client: login of %s at %s failed: %s\n", m.user, tc.loginapp,
                mc_login_status_name(st));
        rc = TOOL_EXIT_LOGIN + st;
        goto out;
    }
    char addr[32], info[128];
    snprintf(addr, sizeof addr, "%u.%u.%u.%u:%u", res.baseapp_ip >> 24,
             (res.baseapp_ip >> 16) & 255, (res.baseapp_ip >> 8) & 255, res.baseapp_ip & 255,
             res.baseapp_port);
    snprintf(info, sizeof info, "%s logged in through %s, baseapp %s", m.user, tc.loginapp,
             addr);
    mcc_print_info(&m.pr, "login", info);
    mc_client_config cfg = {.baseapp = addr, .session_id = res.session_id, .defs = m.defs,
                            .ud = &m, .timeout_ms = (uint32_t)m.timeout_ms,
                            .loginapp = tc.loginapp, .idle_ms = m.idle_ms};
    memcpy(cfg.session_key, res.session_key, sizeof cfg.session_key);
    sodium_memzero(&res, sizeof res);
    cfg.cb = (mc_client_callbacks){on_player, on_call, on_property, on_end, on_world,
                                   on_resume};
    m.c = mc_client_connect(&cfg, err, sizeof err);
    sodium_memzero(cfg.session_key, sizeof cfg.session_key);
    if (!m.c) {
        fprintf(stderr, "mc-client: %s\n", err);
        rc = TOOL_EXIT_ERROR;
        goto out;
    }
    if (!m.script)
        fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    while (!m.done) {
        struct pollfd p[2] = {{.fd = mc_client_fd(m.c), .events = POLLIN},
                              {.fd = 0, .events = POLLIN}};
        nfds_t n = !m.script && !m.in_eof ? 2 : 1;
        poll(p, n, MC_CLIENT_TICK_MS);
        if (n == 2 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
            read_stdin(&m);
        if (mc_client_tick(m.c) == MC_CLIENT_ENDED)
            break;
        run_commands(&m);
    }
    rc = m.exit_code;
    if (mc_client_state(m.c) != MC_CLIENT_ENDED) {
        m.closing = true;
        mc_client_close(m.c); /* LOG_OFF */
    }
    mc_client_free(m.c);
out:
    if (m.script)
        fclose(m.script);
    mc_defs_free(m.defs);
    return rc;
}
