/* The console's plots: every --consoleSampleMs the manager takes a sample of the cluster
 * (each process's load from the registry; from each live process, one WATCHER get: a
 * baseapp's clients/ (players online, bytes sent to clients), a loginapp's
 * login/status/ok (logins), a cellapp's recent tick p99) and keeps the last CON_SAMPLES.
 * A round's answers are taken until the next round starts; rates come from the counters
 * of two rounds in a row (a restarted process's counter starting again is not a drop). */
#include "console_internal.h"

#include "common/log.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_P99_PATH "histograms/cellapp_tick_seconds/recentP99Ms"

/* Shared by the sampler's requests in flight: they outlive the console when it is freed
 * first (the server cancels them later). */
typedef struct {
    mc_console *c;
    size_t refs;
    uint64_t round; /* the round being filled */
} sampler_token;

typedef struct {
    sampler_token *t;
    uint64_t round;
    char name[MC_REG_NAME_MAX];
    mc_role role;
} sample_ask;

static sampler_token *token_of(mc_console *c);

static con_counters *counters_of(mc_console *c, const char *name)
{
    for (size_t i = 0; i < c->ncur; i++)
        if (strcmp(c->cur[i].name, name) == 0)
            return &c->cur[i];
    if (c->ncur == CON_SAMPLE_PROCS)
        return NULL;
    con_counters *k = &c->cur[c->ncur++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    return k;
}

static bool parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end)
        return false;
    *out = v;
    return true;
}

static void on_sample_reply(mc_server *s, void *ctx, const Mc__Control__WatcherReply *r)
{
    (void)s;
    sample_ask *a = ctx;
    sampler_token *t = a->t;
    mc_console *c = t->c;
    t->refs--;
    if (!c) {
        if (t->refs == 0)
            free(t);
        free(a);
        return;
    }
    if (!r || r->status != MC__CONTROL__WATCHER_STATUS__WS_OK) {
        c->sample_requests_failed++;
        free(a);
        return;
    }
    if (a->round != t->round) { /* late: its round is over */
        free(a);
        return;
    }
    con_counters *k = counters_of(c, a->name);
    for (size_t i = 0; i < r->n_entries; i++) {
        const Mc__Control__WatcherEntry *e = r->entries[i];
        if (!e->path || !e->has_value)
            continue;
        uint64_t v;
        if (a->role == MC_ROLE_BASEAPP && strcmp(e->path, "clients/connected") == 0 &&
            parse_u64(e->value, &v)) {
            c->round.players = (c->round.players < 0 ? 0 : c->round.players) + (double)v;
        } else if (a->role == MC_ROLE_BASEAPP && strcmp(e->path, "clients/bytesOut") == 0 &&
                   k && parse_u64(e->value, &v)) {
            k->bytes = v;
            k->have_bytes = true;
        } else if (a->role == MC_ROLE_LOGINAPP && strcmp(e->path, "login/status/ok") == 0 &&
                   k && parse_u64(e->value, &v)) {
            k->logins = v;
            k->have_logins = true;
        } else if (a->role == MC_ROLE_CELLAPP && strcmp(e->path, TICK_P99_PATH) == 0) {
            double ms = strtod(e->value, NULL);
            for (size_t j = 0; j < c->round.nprocs; j++)
                if (strcmp(c->round.procs[j].name, a->name) == 0)
                    c->round.procs[j].tick_p99_ms = ms;
        }
    }
    free(a);
}

/* Close the round: rates from the counters of the round before; keep it. */
static void close_round(mc_console *c)
{
    con_sample *smp = &c->round;
    double dt = c->prev_at ? (double)(smp->at - c->prev_at) / 1e6 : 0;
    uint64_t logins = 0, bytes = 0;
    bool have_logins = false, have_bytes = false;
    for (size_t i = 0; i < c->ncur; i++) {
        const con_counters *k = &c->cur[i];
        const con_counters *p = NULL;
        for (size_t j = 0; j < c->nprev; j++)
            if (strcmp(c->prev[j].name, k->name) == 0)
                p = &c->prev[j];
        if (!p)
            continue;
        if (k->have_logins && p->have_logins) {
            logins += k->logins >= p->logins ? k->logins - p->logins : k->logins;
            have_logins = true;
        }
        if (k->have_bytes && p->have_bytes) {
            bytes += k->bytes >= p->bytes ? k->bytes - p->bytes : k->bytes;
            have_bytes = true;
        }
    }
    smp->logins_per_s = dt > 0 && have_logins ? (double)logins / dt : -1;
    smp->bytes_out_per_s = dt > 0 && have_bytes ? (double)bytes / dt : -1;
    c->ring[c->ring_next] = *smp;
    c->ring_next = (c->ring_next + 1) % CON_SAMPLES;
    if (c->ring_count < CON_SAMPLES)
        c->ring_count++;
    c->samples++;
    memcpy(c->prev, c->cur, c->ncur * sizeof *c->cur);
    c->nprev = c->ncur;
    c->ncur = 0;
    c->prev_at = smp->at;
    c->round_open = false;
}

static void ask(mc_console *c, const mc_reg_entry *e, const char *path)
{
    sampler_token *t = token_of(c);
    sample_ask *a = calloc(1, sizeof *a);
    if (!t || !a) {
        free(a);
        return;
    }
    a->t = t;
    a->round = t->round;
    a->role = e->role;
    snprintf(a->name, sizeof a->name, "%s", e->name);
    Mc__Control__WatcherRequest wr = MC__CONTROL__WATCHER_REQUEST__INIT;
    wr.op = MC__CONTROL__WATCHER_OP__WATCHER_GET;
    wr.path = (char *)path;
    t->refs++;
    if (mc_server_ask_watcher(c->s, e->internal_addr, &wr, c->sample_ms, on_sample_reply,
                                  a) != 0) {
        t->refs--;
        c->sample_requests_failed++;
        free(a);
    }
}

static void open_round(mc_console *c)
{
    con_sample *smp = &c->round;
    memset(smp, 0, sizeof *smp);
    smp->at = mc_clock_now_us();
    smp->players = -1;
    sampler_token *t = token_of(c);
    if (t)
        t->round++;
    snprintf(smp->procs[0].name, sizeof smp->procs[0].name, "manager");
    smp->procs[0].load = mc_server_load(c->s);
    smp->procs[0].tick_p99_ms = -1;
    smp->nprocs = 1;
    size_t n = c->m->registry ? mc_registry_count(c->m->registry) : 0;
    for (size_t i = 0; i < n; i++) {
        const mc_reg_entry *e = mc_registry_at(c->m->registry, i);
        if (e->state != MC__CONTROL__PROCESS_STATE__STATE_ALIVE)
            continue;
        if (smp->nprocs < CON_SAMPLE_PROCS) {
            con_proc_point *pp = &smp->procs[smp->nprocs++];
            snprintf(pp->name, sizeof pp->name, "%s", e->name);
            pp->load = e->load;
            pp->tick_p99_ms = -1;
        }
        if (e->role == MC_ROLE_BASEAPP)
            ask(c, e, "clients");
        else if (e->role == MC_ROLE_LOGINAPP)
            ask(c, e, "login/status/ok");
        else if (e->role == MC_ROLE_CELLAPP)
            ask(c, e, TICK_P99_PATH);
    }
    c->round_open = true;
}

static void on_sample(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    mc_console *c = arg;
    if (c->round_open)
        close_round(c);
    open_round(c);
}

static sampler_token *token_of(mc_console *c)
{
    return c->sampler;
}

int con_series_start(mc_console *c)
{
    c->ring = calloc(CON_SAMPLES, sizeof *c->ring);
    c->prev = calloc(CON_SAMPLE_PROCS, sizeof *c->prev);
    c->cur = calloc(CON_SAMPLE_PROCS, sizeof *c->cur);
    sampler_token *t = calloc(1, sizeof *t);
    c->sample_ev = event_new(mc_server_event_base(c->s), -1, EV_PERSIST, on_sample, c);
    if (!c->ring || !c->prev || !c->cur || !t || !c->sample_ev) {
        free(t);
        return -1;
    }
    t->c = c;
    c->sampler = t;
    struct timeval tv = {(time_t)(c->sample_ms / 1000), (suseconds_t)(c->sample_ms % 1000) * 1000};
    event_add(c->sample_ev, &tv);
    open_round(c);
    return 0;
}

void con_series_free(mc_console *c)
{
    if (c->sample_ev)
        event_free(c->sample_ev);
    c->sample_ev = NULL;
    sampler_token *t = c->sampler;
    if (t) {
        t->c = NULL;
        if (t->refs == 0)
            free(t);
    }
    c->sampler = NULL;
    free(c->ring);
    free(c->prev);
    free(c->cur);
}

/* {"sampleMs":N,"t":[seconds before now...],"players":[...],"loginsPerS":[...],
 *  "bytesToClientsPerS":[...],"load":{"NAME":[...]},"tickP99Ms":{"NAME":[...]}} with null
 * where a value is unknown. */
void con_series_json(mc_console *c, struct evbuffer *out)
{
    mc_time_us now = mc_clock_now_us();
    size_t n = c->ring_count;
    size_t first = (c->ring_next + CON_SAMPLES - n) % CON_SAMPLES;
#define AT(i) (&c->ring[(first + (i)) % CON_SAMPLES])
    evbuffer_add_printf(out, "{\"sampleMs\":%llu,\"t\":[", (unsigned long long)c->sample_ms);
    for (size_t i = 0; i < n; i++)
        evbuffer_add_printf(out, "%s%.1f", i ? "," : "", -(double)(now - AT(i)->at) / 1e6);
    static const char *const totals[] = {"players", "loginsPerS", "bytesToClientsPerS"};
    for (size_t k = 0; k < 3; k++) {
        evbuffer_add_printf(out, "],\"%s\":[", totals[k]);
        for (size_t i = 0; i < n; i++) {
            const con_sample *s = AT(i);
            double v = k == 0 ? s->players : k == 1 ? s->logins_per_s : s->bytes_out_per_s;
            if (i)
                evbuffer_add(out, ",", 1);
            con_json_num(out, v);
        }
    }
    evbuffer_add_printf(out, "]");
    /* per process: every name seen in the window */
    for (int which = 0; which < 2; which++) {
        evbuffer_add_printf(out, ",\"%s\":{", which ? "tickP99Ms" : "load");
        char seen[CON_SAMPLE_PROCS][MC_REG_NAME_MAX];
        size_t nseen = 0;
        for (size_t i = 0; i < n; i++) {
            const con_sample *s = AT(i);
            for (size_t j = 0; j < s->nprocs; j++) {
                const con_proc_point *pp = &s->procs[j];
                if (which && pp->tick_p99_ms < 0)
                    continue;
                bool known = false;
                for (size_t q = 0; q < nseen && !known; q++)
                    known = strcmp(seen[q], pp->name) == 0;
                if (!known && nseen < CON_SAMPLE_PROCS)
                    snprintf(seen[nseen++], MC_REG_NAME_MAX, "%s", pp->name);
            }
        }
        for (size_t q = 0; q < nseen; q++) {
            if (q)
                evbuffer_add(out, ",", 1);
            con_json_str(out, seen[q]);
            evbuffer_add(out, ":[", 2);
            for (size_t i = 0; i < n; i++) {
                const con_sample *s = AT(i);
                double v = -1;
                for (size_t j = 0; j < s->nprocs; j++)
                    if (strcmp(s->procs[j].name, seen[q]) == 0)
                        v = which ? s->procs[j].tick_p99_ms : s->procs[j].load;
                if (i)
                    evbuffer_add(out, ",", 1);
                con_json_num(out, v);
            }
            evbuffer_add(out, "]", 1);
        }
        evbuffer_add_printf(out, "}");
    }
    evbuffer_add_printf(out, "}");
#undef AT
}
