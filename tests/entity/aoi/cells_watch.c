/* Watching entities and cells of a running rc_cluster for the tests of tests/entity/aoi (see
 * cells_watch.h). Polls count their sleeps against the caller's bound, as every copy of these
 * helpers in the tests did before they were gathered here. */
#include "cells_watch.h"

#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLL_MS 50

void cw_path(char *out, size_t n, int32_t id, const char *rest)
{
    snprintf(out, n, "entities/%d/%s", (int)id, rest);
}

void cw_set(rc_cluster *c, const char *proc, const char *path, const char *value)
{
    char v[512];
    int rc = h_watcher(v, sizeof v, c->manager, "set", proc, path, value, NULL);
    ck_assert_msg(rc == 0, "set %s %s %s: %s", proc, path, value, v);
}

void cw_wait_value(rc_cluster *c, const char *proc, const char *path, const char *want, int ms)
{
    if (!rc_wait_value(c, proc, path, want, ms)) {
        char v[4096] = "";
        rc_get(c, v, sizeof v, proc, path);
        ck_abort_msg("%s %s: no '%s' in %s", proc, path, want, v);
    }
}

void cw_wait_without(rc_cluster *c, const char *proc, const char *path, const char *text, int ms)
{
    char v[4096] = "";
    for (int waited = 0; waited < ms; waited += POLL_MS) {
        rc_value(c, proc, path, v, sizeof v);
        if (!strstr(v, text))
            return;
        h_sleep_ms(POLL_MS);
    }
    ck_abort_msg("%s %s: still '%s' in %s", proc, path, text, v);
}

void cw_wait_int_eq(rc_cluster *c, const char *proc, const char *path, long long want, int ms)
{
    for (int waited = 0; waited < ms; waited += POLL_MS) {
        char v[256];
        if (rc_get(c, v, sizeof v, proc, path) == 0 && rc_int(c, proc, path) == want)
            return;
        h_sleep_ms(POLL_MS);
    }
    ck_abort_msg("%s %s: %lld, want %lld", proc, path, rc_int(c, proc, path), want);
}

void cw_wait_int_at_least(rc_cluster *c, const char *proc, const char *path, long long min,
                          int ms)
{
    ck_assert_msg(rc_wait_int_at_least(c, proc, path, min, ms), "%s %s: %lld, want at least %lld",
                  proc, path, rc_int(c, proc, path), min);
}

double cw_value_f(rc_cluster *c, const char *proc, const char *path)
{
    char v[256];
    rc_value(c, proc, path, v, sizeof v);
    return strtod(v, NULL);
}

void cw_wait_f_at_least(rc_cluster *c, const char *proc, const char *path, double min, int ms)
{
    double v = 0;
    for (int waited = 0; waited < ms; waited += POLL_MS) {
        if ((v = cw_value_f(c, proc, path)) >= min)
            return;
        h_sleep_ms(POLL_MS);
    }
    ck_abort_msg("%s %s: %g, want at least %g", proc, path, v, min);
}

void cw_wait_base_event(rc_cluster *c, int32_t id, const char *want, int ms)
{
    char p[96];
    cw_path(p, sizeof p, id, "props/events");
    if (!rc_wait_value(c, "baseapp01", p, want, ms)) {
        char v[4096];
        rc_value(c, "baseapp01", p, v, sizeof v);
        ck_abort_msg("baseapp01 %s: no '%s' in %s", p, want, v);
    }
}

void cw_wait_gone(rc_cluster *c, const char *proc, int32_t id, int ms)
{
    char p[96], v[1024];
    cw_path(p, sizeof p, id, "type");
    for (int waited = 0; waited < ms; waited += POLL_MS) {
        if (rc_get(c, v, sizeof v, proc, p) != 0)
            return;
        h_sleep_ms(POLL_MS);
    }
    ck_abort_msg("%s still holds entity %d", proc, (int)id);
}

int cw_real_of(rc_cluster *c, int32_t id)
{
    char p[96], v[512];
    cw_path(p, sizeof p, id, "real");
    int found = -1;
    for (int i = 0; i < c->ncell; i++) {
        /* one get ("cellapp01  entities/3/real  here"): the entity may go between two */
        if (c->cell[i] <= 0 || rc_get(c, v, sizeof v, c->cell_name[i], p) != 0)
            continue;
        const char *val = strstr(v, p);
        if (!val)
            continue;
        val += strlen(p);
        while (*val == ' ')
            val++;
        if (strncmp(val, "here", 4) == 0 && (val[4] == '\n' || val[4] == '\0')) {
            if (found >= 0)
                return -2;
            found = i;
        }
    }
    return found;
}

void cw_wait_real_on(rc_cluster *c, int32_t id, int want, int ms)
{
    int at = -1;
    for (int waited = 0; waited < ms; waited += POLL_MS) {
        if ((at = cw_real_of(c, id)) == want)
            return;
        h_sleep_ms(POLL_MS);
    }
    ck_abort_msg("entity %d is real on %s, not on %s only", (int)id,
                 at >= 0 ? c->cell_name[at] : at == -2 ? "two cellapps" : "none",
                 c->cell_name[want]);
}

int cw_call_status(rc_cluster *c, const char *proc, int32_t id, const char *method,
                   const char *args, char *out, size_t outlen)
{
    char own[1024];
    if (!out) {
        out = own;
        outlen = sizeof own;
    }
    rc_entity_call(c, proc, id, method, args, out, outlen);
    ck_assert_msg(out[0] == '[', "%s: %s", method, out);
    return atoi(out + 1);
}

/* Call method of id on the cellapp holding its real; its answer in out. */
static void call_on_real(rc_cluster *c, int32_t id, const char *method, const char *args,
                         char *out, size_t n)
{
    int at = cw_real_of(c, id);
    ck_assert_msg(at >= 0, "entity %d is real nowhere", (int)id);
    rc_entity_call(c, c->cell_name[at], id, method, args, out, n);
}

void cw_real_call(rc_cluster *c, int32_t id, const char *method, const char *args)
{
    char out[256];
    call_on_real(c, id, method, args, out, sizeof out);
    ck_assert_msg(strcmp(out, "[0]") == 0 || strcmp(out, "[]") == 0, "%s %s: %s", method,
                  args ? args : "", out);
}

void cw_move_real(rc_cluster *c, int32_t id, double x, double z)
{
    char args[96], out[256];
    snprintf(args, sizeof args, "[%g, %g]", x, z);
    call_on_real(c, id, "moveTo", args, out, sizeof out);
    ck_assert_msg(strcmp(out, "[0]") == 0, "moveTo %s: %s", args, out);
}

void cw_cell_json(rc_cluster *c, int32_t id, char *out, size_t n)
{
    char v[512];
    rc_entity_call(c, "baseapp01", id, "cellMailbox", NULL, v, sizeof v);
    ck_assert_msg(v[0] == '[' && strstr(v, "\"CELL\""), "cellMailbox: %s", v);
    v[strlen(v) - 1] = '\0';
    snprintf(out, n, "%s", v + 1);
}

void cw_mailbox_json(char *out, size_t n, int32_t id, const char *addr, const char *component,
                     const char *cell)
{
    const char *t = strstr(cell, "\"type\":");
    ck_assert_ptr_nonnull(t);
    snprintf(out, n, "{\"id\":%d,\"addr\":\"%s\",\"component\":\"%s\",\"type\":%d}", (int)id,
             addr, component, atoi(t + 7));
}

int32_t cw_probe_with_cell(rc_cluster *c, const char *label, const char *near_json, int ms)
{
    int32_t id = rc_create_probe(c, "baseapp01", label);
    char args[1024], out[512];
    snprintf(args, sizeof args, "[%s]", near_json ? near_json : "null");
    rc_entity_call(c, "baseapp01", id, "makeCell", args, out, sizeof out);
    ck_assert_msg(strcmp(out, "[]") == 0, "makeCell %s: %s", args, out);
    cw_wait_base_event(c, id, "getCell;", ms);
    return id;
}

int32_t cw_probe_near(rc_cluster *c, int32_t near, const char *label, int ms)
{
    char cell[512];
    cw_cell_json(c, near, cell, sizeof cell);
    return cw_probe_with_cell(c, label, cell, ms);
}

int32_t cw_probe_in_new_space(rc_cluster *c, const char *label, int *holder, int32_t *space,
                              int ms)
{
    int32_t id = cw_probe_with_cell(c, label, NULL, ms);
    char p[96], v[4096];
    cw_path(p, sizeof p, id, "space");
    for (int i = 0; i < c->ncell; i++)
        if (c->cell[i] > 0 && rc_get(c, v, sizeof v, c->cell_name[i], p) == 0) {
            *holder = i;
            *space = (int32_t)rc_int(c, c->cell_name[i], p);
            cw_wait_real_on(c, id, i, ms);
            return id;
        }
    ck_abort_msg("no cellapp holds entity %d", (int)id);
    return 0;
}

void cw_kill_cellapp(rc_cluster *c, int i)
{
    h_kill(c->cell[i], SIGKILL);
    ck_assert_int_ge(h_wait_exit(c->cell[i], 10000), -1);
    c->cell[i] = -1;
}

int cw_layout(rc_cluster *c, int32_t space, cw_rect *out, int max)
{
    char p[64], v[4096];
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    rc_value(c, "manager", p, v, sizeof v);
    int n = 0;
    for (char *s = v; s && *s && n < max;) {
        char a[32], b[32], d[32], e[32];
        if (sscanf(s, " %15s x[%31[^,],%31[^)]) z[%31[^,],%31[^)])", out[n].name, a, b, d, e) !=
            5)
            break;
        out[n].x0 = strtof(a, NULL);
        out[n].x1 = strtof(b, NULL);
        out[n].z0 = strtof(d, NULL);
        out[n].z1 = strtof(e, NULL);
        n++;
        s = strchr(s, ';');
        if (s)
            s++;
    }
    return n;
}

bool cw_holds(const cw_rect *r, float x, float z)
{
    return x >= r->x0 && x < r->x1 && z >= r->z0 && z < r->z1;
}

int cw_cellapp_index(rc_cluster *c, const char *name)
{
    for (int i = 0; i < c->ncell; i++)
        if (strcmp(c->cell_name[i], name) == 0)
            return i;
    ck_abort_msg("no cellapp %s", name);
    return -1;
}

float cw_x_max_of(rc_cluster *c, int32_t space, const char *name)
{
    char p[64], v[4096], key[32];
    snprintf(p, sizeof p, "cells/spaces/%d", (int)space);
    rc_value(c, "manager", p, v, sizeof v);
    snprintf(key, sizeof key, "%s x[", name);
    const char *s = strstr(v, key);
    ck_assert_msg(s, "%s has no cell of space %d: %s", name, (int)space, v);
    s = strchr(s + strlen(key), ',');
    ck_assert_ptr_nonnull(s);
    return strtof(s + 1, NULL);
}

void cw_wait_in_view(rc_cluster *c, const char *proc, int32_t w, int32_t id, int ms)
{
    char p[96], want[16];
    cw_path(p, sizeof p, w, "aoi/viewIds");
    snprintf(want, sizeof want, "%d", (int)id);
    cw_wait_value(c, proc, p, want, ms);
}

static void aoi_events(rc_cluster *c, const char *proc, int32_t w, char *out, size_t n)
{
    char p[96];
    cw_path(p, sizeof p, w, "props/aoiEvents");
    rc_value(c, proc, p, out, n);
}

void cw_check_never_left(rc_cluster *c, const char *proc, int32_t w, int32_t id)
{
    char ev[4096], left[32];
    aoi_events(c, proc, w, ev, sizeof ev);
    snprintf(left, sizeof left, "-%d;", (int)id);
    ck_assert_msg(!strstr(ev, left), "%s: witness %d saw %d leave: %s", proc, (int)w, (int)id,
                  ev);
}

void cw_check_entered_once(rc_cluster *c, const char *proc, int32_t w, int32_t id)
{
    char ev[4096], plus[32];
    aoi_events(c, proc, w, ev, sizeof ev);
    snprintf(plus, sizeof plus, "+%d;", (int)id);
    const char *first = strstr(ev, plus);
    ck_assert_msg(first && !strstr(first + 1, plus), "%s: witness %d heard %d enter not once: %s",
                  proc, (int)w, (int)id, ev);
}
