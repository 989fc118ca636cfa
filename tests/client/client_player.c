/* The logging player of the client tests (client_player.h). */
#define _POSIX_C_SOURCE 200809L
#include "client_player.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/value_json.h"

/* Append one entry and ';' (the oldest half goes when the log is full). */
static void add(client_player *p, const char *text)
{
    size_t len = strlen(p->log);
    if (len + strlen(text) + 2 >= sizeof p->log) {
        memmove(p->log, p->log + sizeof p->log / 2, len - sizeof p->log / 2 + 1);
        len = strlen(p->log);
    }
    snprintf(p->log + len, sizeof p->log - len, "%s;", text);
}

static void on_player(void *ud, mc_client *c, const mc_cw_player *pl)
{
    (void)c;
    client_player *p = ud;
    p->players++;
    p->id = pl->id;
    p->type = pl->type;
}

static void on_call(void *ud, mc_client *c, int32_t id, const mc_def_method *m,
                    const mc_value *args)
{
    (void)c;
    (void)args;
    char one[512];
    int at = snprintf(one, sizeof one, "own-call %s %d", m->name, (int)id);
    for (size_t i = 0; args && i < m->nargs && at < 400; i++) {
        char *t = mc_value_to_text(&args[i]);
        at += snprintf(one + at, sizeof one - (size_t)at, " arg=%s", t ? t : "?");
        free(t);
    }
    add(ud, one);
}

static void on_property(void *ud, mc_client *c, int32_t id, const mc_def_property *pr,
                        const mc_value *v)
{
    (void)c;
    char *t = mc_value_to_text(v);
    char one[256];
    snprintf(one, sizeof one, "prop %d %s=%s", (int)id, pr->name, t ? t : "?");
    free(t);
    add(ud, one);
}

static void on_world(void *ud, mc_client *c, const mc_world_record *r)
{
    (void)c;
    client_player *p = ud;
    p->enters += r->kind == MC_WORLD_ENTER;
    p->leaves += r->kind == MC_WORLD_LEAVE;
    char one[512];
    int at = snprintf(one, sizeof one, "%d:%d", r->kind, (int)r->id);
    if (r->kind == MC_WORLD_CALL)
        at += snprintf(one + at, sizeof one - (size_t)at, " %s", r->method->name);
    for (size_t i = 0; r->values && i < r->n && at < 400; i++) {
        char *t = mc_value_to_text(&r->values[i]);
        at += snprintf(one + at, sizeof one - (size_t)at, " %s=%s",
                       r->props ? r->props[i]->name : "arg", t ? t : "?");
        free(t);
    }
    add(ud, one);
}

void client_player_connect(client_player *p, const client_cluster *c, int32_t account)
{
    memset(p, 0, sizeof *p);
    mc_client_callbacks cb = {.on_player = on_player, .on_call = on_call,
                              .on_property = on_property, .on_world = on_world};
    p->c = client_cluster_connect(c, account, &cb, p);
}

bool client_player_heard(const client_player *p, int32_t id, const char *name,
                         const char *value)
{
    char own[128], rec[32], field[96];
    if (value)
        snprintf(field, sizeof field, " %s=%s", name, value);
    else
        snprintf(field, sizeof field, " %s=", name);
    snprintf(own, sizeof own, "prop %d%s", (int)id, field);
    for (const char *o = strstr(p->log, own); o; o = strstr(o + 1, own))
        if (!value || o[strlen(own)] == ';')
            return true;
    snprintf(rec, sizeof rec, "3:%d ", (int)id);
    for (const char *r = strstr(p->log, rec); r; r = strstr(r + 1, rec)) {
        if (r != p->log && r[-1] != ';')
            continue;
        const char *end = strchr(r, ';');
        for (const char *f = strstr(r, field); f && (!end || f < end); f = strstr(f + 1, field)) {
            char after = f[strlen(field)];
            if (!value || after == ' ' || after == ';' || after == '\0')
                return true;
        }
    }
    return false;
}
