/* The routing tests' cluster (cluster.h). */
#include "cluster.h"
#include "harness.h"

#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef MC_PROBE_RES
#error "MC_PROBE_RES (the Probe game's defs) must be defined by the build"
#endif
#ifndef MC_PROBE_GAME
#error "MC_PROBE_GAME (the Probe game module) must be defined by the build"
#endif

/* Every watcher answer may take a while under sanitizers. */
#define WATCHER_TIMEOUT "15000"

long rc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The value in `watcher get` output: the text after the path on its line. */
static bool value_of(const char *out, const char *path, char *val, size_t n)
{
    const char *p = strstr(out, path);
    if (!p)
        return false;
    p += strlen(path);
    if (*p != ' ')
        return false;
    while (*p == ' ')
        p++;
    size_t len = strcspn(p, "\n");
    if (len >= n)
        return false;
    memcpy(val, p, len);
    val[len] = '\0';
    return true;
}

bool rc_get(const rc_cluster *c, const char *target, const char *path, char *val, size_t n)
{
    static char out[80 * 1024]; /* a watcher answer is at most 64 KiB */
    if (h_watcher(out, sizeof out, c->mgr, "--timeout", WATCHER_TIMEOUT, "get", target, path,
                  NULL) != 0)
        return false;
    return value_of(out, path, val, n);
}

bool rc_prop(const rc_cluster *c, const char *target, int32_t id, const char *prop, char *val,
             size_t n)
{
    char path[160];
    snprintf(path, sizeof path, "entities/%d/props/%s", (int)id, prop);
    return rc_get(c, target, path, val, n);
}

static int64_t to_num(const char *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v)
        return RC_NO_NUMBER;
    return x;
}

int64_t rc_num(const rc_cluster *c, const char *target, const char *path)
{
    char v[128];
    return rc_get(c, target, path, v, sizeof v) ? to_num(v) : RC_NO_NUMBER;
}

int64_t rc_prop_num(const rc_cluster *c, const char *target, int32_t id, const char *prop)
{
    char v[128];
    return rc_prop(c, target, id, prop, v, sizeof v) ? to_num(v) : RC_NO_NUMBER;
}

double rc_float(const rc_cluster *c, const char *target, const char *path)
{
    char v[128];
    return rc_get(c, target, path, v, sizeof v) ? atof(v) : -1.0;
}

bool rc_wait_num(const rc_cluster *c, const char *target, const char *path, int64_t want,
                 int timeout_ms, int64_t *last)
{
    long deadline = rc_now_ms() + timeout_ms;
    int64_t v = RC_NO_NUMBER;
    for (int i = 0; i < 100000; i++) {
        v = rc_num(c, target, path);
        if (v == want || rc_now_ms() >= deadline)
            break;
        h_sleep_ms(100);
    }
    if (last)
        *last = v;
    return v == want;
}

bool rc_wait_prop(const rc_cluster *c, const char *target, int32_t id, const char *prop,
                  int64_t want, int timeout_ms, int64_t *last)
{
    char path[160];
    snprintf(path, sizeof path, "entities/%d/props/%s", (int)id, prop);
    return rc_wait_num(c, target, path, want, timeout_ms, last);
}

bool rc_wait_text(const rc_cluster *c, const char *target, const char *path,
                  const char *needle, int timeout_ms)
{
    long deadline = rc_now_ms() + timeout_ms;
    for (int i = 0; i < 100000; i++) {
        char v[4096];
        if (rc_get(c, target, path, v, sizeof v) && strstr(v, needle))
            return true;
        if (rc_now_ms() >= deadline)
            return false;
        h_sleep_ms(100);
    }
    return false;
}

int rc_call(const rc_cluster *c, char *out, size_t n, const char *target, const char *path,
            ...)
{
    const char *a[4] = {NULL, NULL, NULL, NULL};
    va_list ap;
    va_start(ap, path);
    for (int i = 0; i < 4; i++)
        if (!(a[i] = va_arg(ap, const char *)))
            break;
    va_end(ap);
    char local[8192];
    return h_watcher(out ? out : local, out ? n : sizeof local, c->mgr, "--timeout",
                     WATCHER_TIMEOUT, "call", target, path, a[0], a[1], a[2], a[3], NULL);
}

int rc_set(const rc_cluster *c, const char *target, const char *path, const char *value)
{
    char out[4096];
    return h_watcher(out, sizeof out, c->mgr, "--timeout", WATCHER_TIMEOUT, "set", target, path,
                     value, NULL);
}

int rc_invoke(const rc_cluster *c, const char *target, int32_t id, const char *method,
              const char *json, char *out, size_t n)
{
    char ids[16];
    snprintf(ids, sizeof ids, "%d", (int)id);
    return rc_call(c, out, n, target, "command/call", ids, method, json, NULL);
}

int32_t rc_create(const rc_cluster *c, int slot, const char *props)
{
    char out[1024];
    int rc = rc_call(c, out, sizeof out, c->name[slot], "command/createBase", "Probe", props,
                     NULL);
    const char *p = strstr(out, "command/createBase");
    if (rc != 0 || !p) {
        fprintf(stderr, "createBase on %s: exit %d: %s\n", c->name[slot], rc, out);
        return 0;
    }
    p += strlen("command/createBase");
    while (*p == ' ')
        p++;
    return (int32_t)atol(p);
}

void rc_mailbox(char *buf, size_t n, int32_t id, const char *addr, const char *component)
{
    snprintf(buf, n, "{\"id\":%d,\"addr\":\"%s\",\"component\":\"%s\",\"type\":0}", (int)id,
             addr, component);
}

int rc_slot_of(const rc_cluster *c, const char *addr)
{
    for (int i = 0; i < RC_SLOTS; i++)
        if (strcmp(c->addr[i], addr) == 0)
            return i;
    return -1;
}

int rc_wait_cell(const rc_cluster *c, int slot, int32_t id, int timeout_ms)
{
    char path[96];
    snprintf(path, sizeof path, "entities/%d/cell", (int)id);
    if (!rc_wait_text(c, c->name[slot], path, "CELL ", timeout_ms))
        return -1;
    char v[256];
    if (!rc_get(c, c->name[slot], path, v, sizeof v))
        return -1;
    const char *at = strstr(v, " at ");
    if (!at)
        return -1;
    char addr[64];
    if (sscanf(at + 4, "%63s", addr) != 1)
        return -1;
    return rc_slot_of(c, addr);
}

long rc_parse_ints(const char *text, int32_t *out, size_t cap)
{
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (*p++ != '[')
        return -1;
    long count = 0;
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (*p == ']')
            return count;
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            return -1;
        if ((size_t)count < cap)
            out[count] = (int32_t)v;
        count++;
        p = end;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == ',')
            p++;
        else if (*p != ']')
            return -1;
    }
}

/* ---- starting and stopping ----------------------------------------------------------- */

static pid_t spawn_process(rc_cluster *c, bool base, char *addr_out, size_t addr_n,
                           const char *log, const char *extra)
{
    char bin[512], res[600], game[600], mopt[64], iopt[64], eopt[64];
    snprintf(res, sizeof res, "--res=%s", MC_PROBE_RES);
    snprintf(game, sizeof game, "--game=%s", MC_PROBE_GAME);
    snprintf(mopt, sizeof mopt, "--manager=%s", c->mgr);
    snprintf(addr_out, addr_n, "127.0.0.1:%d", h_free_port(false));
    snprintf(iopt, sizeof iopt, "--internal=%s", addr_out);
    snprintf(eopt, sizeof eopt, "--external=127.0.0.1:%d", h_free_port(false));
    char *argv[12], extras[256];
    int n = 0;
    argv[n++] = (char *)h_bin(base ? "baseapp" : "cellapp", bin, sizeof bin);
    argv[n++] = res;
    argv[n++] = game;
    argv[n++] = mopt;
    argv[n++] = iopt;
    if (base)
        argv[n++] = eopt;
    /* These tests rehearse deaths without base backups (their restore has its own tests,
     * tests/entity/backup) unless the slot's options turn them on. */
    if (base && !(extra && strstr(extra, "--backup")))
        argv[n++] = "--backupPeriodMs=0";
    /* extra: one option, or several separated by spaces (at most 5) */
    snprintf(extras, sizeof extras, "%s", extra ? extra : "");
    char *save = NULL;
    for (char *tok = strtok_r(extras, " ", &save); tok && n < 11;
         tok = strtok_r(NULL, " ", &save))
        argv[n++] = tok;
    argv[n] = NULL;
    return h_spawn(argv, log);
}

static pid_t spawn_entity_process(rc_cluster *c, int slot, const char *extra)
{
    return spawn_process(c, slot < 2, c->addr[slot], sizeof c->addr[slot], c->log[slot], extra);
}

bool rc_start_extra_baseapp(rc_cluster *c, const char *tag, const char *extra)
{
    snprintf(c->xlog, sizeof c->xlog, "%s/%s-baseapp3.log", h_tmpdir(), tag);
    c->xpid = spawn_process(c, true, c->xaddr, sizeof c->xaddr, c->xlog, extra);
    if (c->xpid <= 0)
        return false;
    long deadline = rc_now_ms() + 30000;
    while (rc_now_ms() < deadline && h_alive(c->xpid)) {
        for (int k = 1; k <= 9; k++) {
            char name[32], path[96], v[128];
            snprintf(name, sizeof name, "baseapp%02d", k);
            snprintf(path, sizeof path, "processes/%s/internal", name);
            if (rc_get(c, "manager", path, v, sizeof v) && strcmp(v, c->xaddr) == 0) {
                snprintf(c->xname, sizeof c->xname, "%s", name);
                while (rc_now_ms() < deadline) {
                    int64_t r = rc_num(c, c->xname, "entityIds/ranges");
                    if (r != RC_NO_NUMBER && r >= 1)
                        return true;
                    h_sleep_ms(100);
                }
                return false;
            }
        }
        h_sleep_ms(100);
    }
    fprintf(stderr, "%s: the extra baseapp never registered (%s)\n", tag, c->xlog);
    return false;
}

/* The manager's name for the process at addr ("" until it registered). */
static bool find_name(rc_cluster *c, int slot)
{
    const char *role = slot < 2 ? "baseapp" : "cellapp";
    for (int k = 1; k <= 4; k++) {
        char name[32], path[96], v[128];
        snprintf(name, sizeof name, "%s%02d", role, k);
        snprintf(path, sizeof path, "processes/%s/internal", name);
        if (rc_get(c, "manager", path, v, sizeof v) && strcmp(v, c->addr[slot]) == 0) {
            snprintf(c->name[slot], sizeof c->name[slot], "%s", name);
            return true;
        }
    }
    return false;
}

bool rc_start(rc_cluster *c, const char *tag, const char *mgr_opt,
              const char *const slot_opt[RC_SLOTS])
{
    memset(c, 0, sizeof *c);
    char res[600], state[640];
    snprintf(res, sizeof res, "--res=%s", MC_PROBE_RES);
    snprintf(c->mlog, sizeof c->mlog, "%s/%s-manager.log", h_tmpdir(), tag);
    snprintf(state, sizeof state, "--stateFile=%s/%s-manager.state", h_tmpdir(), tag);
    c->mpid = h_start_manager(c->mgr, sizeof c->mgr, c->mlog, res, state, mgr_opt, NULL);
    if (c->mpid <= 0) {
        fprintf(stderr, "%s: no manager (%s)\n", tag, c->mlog);
        return false;
    }
    for (int i = 0; i < RC_SLOTS; i++) {
        snprintf(c->log[i], sizeof c->log[i], "%s/%s-%s%d.log", h_tmpdir(), tag,
                 i < 2 ? "baseapp" : "cellapp", i % 2 + 1);
        c->pid[i] = spawn_entity_process(c, i, slot_opt ? slot_opt[i] : NULL);
        if (c->pid[i] <= 0) {
            fprintf(stderr, "%s: cannot start slot %d\n", tag, i);
            return false;
        }
    }
    long deadline = rc_now_ms() + 30000;
    for (int i = 0; i < RC_SLOTS; i++) {
        while (!find_name(c, i)) {
            if (rc_now_ms() >= deadline || !h_alive(c->pid[i])) {
                fprintf(stderr, "%s: slot %d never registered (%s)\n", tag, i, c->log[i]);
                return false;
            }
            h_sleep_ms(100);
        }
    }
    /* Entity ids: every process holds a range and knows every other one alive. */
    for (int i = 0; i < RC_SLOTS; i++) {
        for (;;) {
            bool ready = rc_num(c, c->name[i], "entityIds/ranges") >= 1;
            for (int k = 0; ready && k < RC_SLOTS; k++) {
                char path[64], v[64];
                snprintf(path, sizeof path, "peers/%s", c->name[k]);
                ready = k == i || (rc_get(c, c->name[i], path, v, sizeof v) &&
                                   strcmp(v, "alive") == 0);
            }
            if (ready)
                break;
            if (rc_now_ms() >= deadline) {
                fprintf(stderr, "%s: %s has no ids or peers (%s)\n", tag, c->name[i], c->log[i]);
                return false;
            }
            h_sleep_ms(100);
        }
    }
    return true;
}

void rc_expect_refused(const char *bin, const char *needle, ...)
{
    char b[512], log[600];
    snprintf(log, sizeof log, "%s/refused-%s-%d.log", h_tmpdir(), bin, (int)getpid());
    char *argv[8] = {(char *)h_bin(bin, b, sizeof b)};
    int n = 1;
    va_list ap;
    va_start(ap, needle);
    const char *a;
    while (n < 7 && (a = va_arg(ap, const char *)) != NULL)
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    pid_t pid = h_spawn(argv, log);
    ck_assert_int_gt(pid, 0);
    int status = 0;
    long deadline = rc_now_ms() + 30000;
    pid_t w = 0;
    while (rc_now_ms() < deadline && (w = waitpid(pid, &status, WNOHANG)) == 0)
        h_sleep_ms(50);
    if (w == 0)
        kill(pid, SIGKILL), waitpid(pid, &status, 0);
    ck_assert_msg(w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 1,
                  "%s %s: did not exit 1", bin, needle);
    ck_assert_msg(h_file_contains(log, needle), "%s did not name %s (%s)", bin, needle, log);
}

bool rc_restart_manager(rc_cluster *c, const char *tag)
{
    h_kill(c->mpid, SIGKILL);
    h_wait_exit(c->mpid, 10000);
    char res[600], state[640];
    snprintf(res, sizeof res, "--res=%s", MC_PROBE_RES);
    snprintf(state, sizeof state, "--stateFile=%s/%s-manager.state", h_tmpdir(), tag);
    c->mpid = h_start_manager(c->mgr, sizeof c->mgr, c->mlog, res, state, NULL);
    return c->mpid > 0;
}

void rc_kill9(rc_cluster *c, int slot)
{
    h_kill(c->pid[slot], SIGKILL);
    h_wait_exit(c->pid[slot], 10000);
    c->gone[slot] = true;
}

static int stop_one(pid_t pid, const char *what, const char *log)
{
    h_kill(pid, SIGCONT);
    h_kill(pid, SIGTERM);
    int st = h_wait_exit(pid, 20000);
    if (st != 0)
        fprintf(stderr, "%s exited with %d on SIGTERM (%s)\n", what, st, log);
    return st;
}

void rc_stop(rc_cluster *c)
{
    int bad = 0;
    for (int i = 0; i < RC_SLOTS; i++)
        if (!c->gone[i] && c->pid[i] > 0) {
            bad |= stop_one(c->pid[i], c->name[i], c->log[i]) != 0;
            c->gone[i] = true;
        }
    if (c->xpid > 0) {
        bad |= stop_one(c->xpid, c->xname, c->xlog) != 0;
        c->xpid = 0;
    }
    if (c->mpid > 0) {
        bad |= stop_one(c->mpid, "manager", c->mlog) != 0;
        c->mpid = 0;
    }
    ck_assert_msg(!bad, "a process did not exit cleanly on SIGTERM (see its log)");
}
