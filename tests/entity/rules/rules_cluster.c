/* The Probe cluster of the entity-rule tests (rules_cluster.h). */
#include "rules_cluster.h"

#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MC_PROBE_RES
#error "MC_PROBE_RES (the Probe game's res folder) must be defined"
#endif
#ifndef MC_PROBE_GAME
#error "MC_PROBE_GAME (mc_game_probe.so) must be defined"
#endif

static void wait_registered(rc_cluster *c, int registrations, const char *log)
{
    char want[64];
    snprintf(want, sizeof want, "counts/registrations  %d\n", registrations);
    ck_assert_msg(h_wait_watch(c->manager, "manager", "counts/registrations", want, 20000),
                  "process did not register (log %s)", log);
}

static pid_t start_server(rc_cluster *c, const char *role, const char *addr, const char *log)
{
    char bin[512], internal[64], external[64], mopt[64], ropt[600], gopt[600];
    snprintf(internal, sizeof internal, "--internal=%s", addr);
    snprintf(external, sizeof external, "--external=127.0.0.1:%d", h_free_port(false));
    snprintf(mopt, sizeof mopt, "--manager=%s", c->manager);
    snprintf(ropt, sizeof ropt, "--res=%s", MC_PROBE_RES);
    snprintf(gopt, sizeof gopt, "--game=%s", MC_PROBE_GAME);
    bool base = strcmp(role, "baseapp") == 0;
    char *argv[] = {(char *)h_bin(role, bin, sizeof bin), internal, mopt, ropt, gopt,
                    base ? external : NULL, base && c->base_opt[0] ? c->base_opt : NULL, NULL};
    pid_t pid = h_spawn(argv, log);
    ck_assert_int_gt(pid, 0);
    return pid;
}

void rc_start(rc_cluster *c, int nbase, int ncell) { rc_start_opt(c, nbase, ncell, NULL); }

void rc_start_opt(rc_cluster *c, int nbase, int ncell, const char *base_opt)
{
    memset(c, 0, sizeof *c);
    snprintf(c->base_opt, sizeof c->base_opt, "%s", base_opt ? base_opt : "");
    ck_assert(nbase <= RC_MAX && ncell <= RC_MAX);
    c->nbase = nbase;
    c->ncell = ncell;
    snprintf(c->dir, sizeof c->dir, "%s", h_tmpdir());
    snprintf(c->manager, sizeof c->manager, "127.0.0.1:%d", h_free_port(false));
    snprintf(c->log_mgr, sizeof c->log_mgr, "%s/manager.log", c->dir);
    char bin[512], internal[64], ropt[600], state[600];
    snprintf(internal, sizeof internal, "--internal=%s", c->manager);
    snprintf(ropt, sizeof ropt, "--res=%s", MC_PROBE_RES);
    snprintf(state, sizeof state, "--stateFile=%s/manager.state", c->dir);
    char *argv[] = {(char *)h_bin("manager", bin, sizeof bin), internal, ropt, state, NULL};
    c->mgr = h_spawn(argv, c->log_mgr);
    ck_assert_msg(c->mgr > 0 && h_wait_watch(c->manager, "manager", "role", "manager", 20000),
                  "the manager did not answer (log %s)", c->log_mgr);
    int registrations = 0;
    for (int i = 0; i < nbase; i++) {
        snprintf(c->base_addr[i], sizeof c->base_addr[i], "127.0.0.1:%d", h_free_port(false));
        snprintf(c->log_base[i], sizeof c->log_base[i], "%s/baseapp%d.log", c->dir, i + 1);
        snprintf(c->base_name[i], sizeof c->base_name[i], "baseapp%02d", i + 1);
        c->base[i] = start_server(c, "baseapp", c->base_addr[i], c->log_base[i]);
        wait_registered(c, ++registrations, c->log_base[i]);
    }
    for (int i = 0; i < ncell; i++) {
        snprintf(c->cell_addr[i], sizeof c->cell_addr[i], "127.0.0.1:%d", h_free_port(false));
        snprintf(c->log_cell[i], sizeof c->log_cell[i], "%s/cellapp%d.log", c->dir, i + 1);
        snprintf(c->cell_name[i], sizeof c->cell_name[i], "cellapp%02d", i + 1);
        c->cell[i] = start_server(c, "cellapp", c->cell_addr[i], c->log_cell[i]);
        wait_registered(c, ++registrations, c->log_cell[i]);
    }
    /* Entities and spaces need ids: wait until every process holds a range. */
    for (int i = 0; i < nbase; i++)
        ck_assert_msg(rc_wait_int_at_least(c, c->base_name[i], "entityIds/ranges", 1, 20000),
                      "%s got no entity ids (log %s)", c->base_name[i], c->log_base[i]);
    for (int i = 0; i < ncell; i++)
        ck_assert_msg(rc_wait_int_at_least(c, c->cell_name[i], "entityIds/ranges", 1, 20000),
                      "%s got no entity ids (log %s)", c->cell_name[i], c->log_cell[i]);
}

int rc_add_cellapp(rc_cluster *c)
{
    ck_assert(c->ncell < RC_MAX);
    int i = c->ncell++;
    char want[64];
    long long before = rc_int(c, "manager", "counts/registrations");
    snprintf(c->cell_addr[i], sizeof c->cell_addr[i], "127.0.0.1:%d", h_free_port(false));
    snprintf(c->log_cell[i], sizeof c->log_cell[i], "%s/cellapp%d.log", c->dir, i + 1);
    snprintf(c->cell_name[i], sizeof c->cell_name[i], "cellapp%02u", (unsigned)(i + 1) % 100u);
    c->cell[i] = start_server(c, "cellapp", c->cell_addr[i], c->log_cell[i]);
    snprintf(want, sizeof want, "counts/registrations  %lld\n", before + 1);
    ck_assert_msg(h_wait_watch(c->manager, "manager", "counts/registrations", want, 20000),
                  "%s did not register (log %s)", c->cell_name[i], c->log_cell[i]);
    ck_assert_msg(rc_wait_int_at_least(c, c->cell_name[i], "entityIds/ranges", 1, 20000),
                  "%s got no entity ids (log %s)", c->cell_name[i], c->log_cell[i]);
    return i;
}

static void stop_one(pid_t *pid, const char *what, const char *log)
{
    if (*pid <= 0)
        return;
    ck_assert_msg(h_alive(*pid), "%s died before its shutdown (log %s)", what, log);
    h_kill(*pid, SIGTERM);
    int rc = h_wait_exit(*pid, 30000);
    ck_assert_msg(rc == 0, "%s exited %d after SIGTERM, not 0 (log %s)", what, rc, log);
    *pid = -1;
}

void rc_stop(rc_cluster *c)
{
    for (int i = 0; i < c->ncell; i++)
        stop_one(&c->cell[i], c->cell_name[i], c->log_cell[i]);
    for (int i = 0; i < c->nbase; i++)
        stop_one(&c->base[i], c->base_name[i], c->log_base[i]);
    stop_one(&c->mgr, "manager", c->log_mgr);
}

int rc_call(rc_cluster *c, char *out, size_t outlen, const char *proc, const char *path,
            const char *a1, const char *a2, const char *a3)
{
    return h_watcher(out, outlen, c->manager, "call", proc, path, a1, a2, a3, NULL);
}

int rc_get(rc_cluster *c, char *out, size_t outlen, const char *proc, const char *path)
{
    return h_watcher(out, outlen, c->manager, "get", proc, path, NULL);
}

/* "PROC  PATH  VALUE\n" -> VALUE (false when the line is not that). */
static bool value_of(const char *line, const char *path, char *out, size_t outlen)
{
    const char *p = strstr(line, path);
    if (!p)
        return false;
    p += strlen(path);
    while (*p == ' ')
        p++;
    size_t n = strcspn(p, "\n");
    snprintf(out, outlen, "%.*s", (int)n, p);
    return true;
}

void rc_value(rc_cluster *c, const char *proc, const char *path, char *out, size_t outlen)
{
    char buf[8192];
    int rc = rc_get(c, buf, sizeof buf, proc, path);
    ck_assert_msg(rc == 0 && value_of(buf, path, out, outlen), "get %s %s: exit %d: %s", proc,
                  path, rc, buf);
}

long long rc_int(rc_cluster *c, const char *proc, const char *path)
{
    char v[256];
    rc_value(c, proc, path, v, sizeof v);
    char *end;
    long long n = strtoll(v, &end, 10);
    ck_assert_msg(end != v, "get %s %s: '%s' is not a number", proc, path, v);
    return n;
}

bool rc_wait_value(rc_cluster *c, const char *proc, const char *path, const char *want,
                   int timeout_ms)
{
    return h_wait_watch(c->manager, proc, path, want, timeout_ms);
}

bool rc_wait_int_at_least(rc_cluster *c, const char *proc, const char *path, long long min,
                          int timeout_ms)
{
    for (int waited = 0; waited <= timeout_ms; waited += 100) {
        char buf[8192], v[256];
        if (rc_get(c, buf, sizeof buf, proc, path) == 0 && value_of(buf, path, v, sizeof v) &&
            strtoll(v, NULL, 10) >= min)
            return true;
        h_sleep_ms(100);
    }
    return false;
}

void rc_entity_call(rc_cluster *c, const char *proc, int32_t id, const char *method,
                    const char *json_args, char *out, size_t outlen)
{
    char ids[32], buf[8192];
    snprintf(ids, sizeof ids, "%d", (int)id);
    int rc = rc_call(c, buf, sizeof buf, proc, "command/call", ids, method, json_args);
    ck_assert_msg(rc == 0 && value_of(buf, "command/call", out, outlen),
                  "call %s %d %s %s: exit %d: %s", proc, (int)id, method,
                  json_args ? json_args : "", rc, buf);
}

int32_t rc_create_probe(rc_cluster *c, const char *proc, const char *label)
{
    char props[128], buf[4096], v[256];
    snprintf(props, sizeof props, "{\"label\":\"%s\"}", label);
    int rc = rc_call(c, buf, sizeof buf, proc, "command/createBase", "Probe", props, NULL);
    ck_assert_msg(rc == 0 && value_of(buf, "command/createBase", v, sizeof v),
                  "createBase on %s: exit %d: %s", proc, rc, buf);
    int id = atoi(v);
    ck_assert_msg(id > 0 && strstr(v, "BASE") && strstr(v, "(Probe)"), "createBase: %s", v);
    return id;
}
