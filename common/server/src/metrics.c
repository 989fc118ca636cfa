/* Watchers as Prometheus text (server/metrics.h). */
#include "server/metrics.h"

#include <event2/buffer.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { GAUGE, COUNTER } kind;

/* A well-known watcher: path (a '*' component matches any one name and becomes the label
 * `label`), its metric name (after "mc_"), kind, the factor to its unit and help. */
typedef struct {
    const char *path;
    const char *metric;
    kind k;
    double scale;
    const char *label;
    const char *help;
} known_metric;

static const known_metric known[] = {
    /* every process */
    {"uptime", "process_uptime_seconds", GAUGE, 1, NULL, "Seconds since the process started."},
    {"load", "process_load_ratio", GAUGE, 1, NULL,
     "CPU time over wall time in the last load interval."},
    {"loop/maxLagMs", "loop_max_lag_seconds", GAUGE, 1e-3, NULL,
     "The longest the loop ran a due timer late since start (or since reset)."},
    {"loop/recentMaxLagMs", "loop_recent_max_lag_seconds", GAUGE, 1e-3, NULL,
     "The longest loop lag in the last 10 to 20 seconds."},
    {"loop/stalls", "loop_stalls_total", COUNTER, 1, NULL, "Loop lags of a second or more."},
    {"watcherRequests", "watcher_requests_total", COUNTER, 1, NULL, "Watcher requests served."},
    {"controlRejected", "control_rejected_total", COUNTER, 1, NULL,
     "Control messages dropped (too long, wrong sender)."},
    {"nub/packetsSent", "internal_sent_packets_total", COUNTER, 1, NULL,
     "Packets sent on the internal interface."},
    {"nub/bytesSent", "internal_sent_bytes_total", COUNTER, 1, NULL,
     "Bytes sent on the internal interface."},
    {"nub/packetsReceived", "internal_received_packets_total", COUNTER, 1, NULL,
     "Packets received on the internal interface."},
    {"nub/bytesReceived", "internal_received_bytes_total", COUNTER, 1, NULL,
     "Bytes received on the internal interface."},
    {"nub/resends", "internal_resent_packets_total", COUNTER, 1, NULL,
     "Reliable packets resent on the internal interface."},
    {"nub/droppedTotal", "internal_dropped_packets_total", COUNTER, 1, NULL,
     "Packets the internal interface dropped (any reason)."},
    {"nub/drops/*", "internal_drops_total", COUNTER, 1, "reason",
     "Packets the internal interface dropped, by reason."},
    {"nub/channels/count", "internal_channels", GAUGE, 1, NULL, "Channels open on the internal interface."},
    {"http/requests", "http_requests_total", COUNTER, 1, NULL,
     "HTTP requests served (metrics, console)."},
    {"http/connections", "http_connections", GAUGE, 1, NULL, "HTTP connections open."},
    {"http/atConnectionLimit", "http_connection_limit_reached_total", COUNTER, 1, NULL,
     "Times the HTTP server reached its connection limit."},
    {"http/refused", "http_refused_total", COUNTER, 1, NULL, "HTTP requests answered 4xx."},
    {"peers/births", "peer_births_total", COUNTER, 1, NULL, "Births the manager announced."},
    {"peers/deaths", "peer_deaths_total", COUNTER, 1, NULL, "Deaths the manager announced."},
    {"manager/heartbeatsSent", "heartbeats_sent_total", COUNTER, 1, NULL,
     "Heartbeats sent to the manager."},
    {"lease/expiries", "lease_expiries_total", COUNTER, 1, NULL, "Times the manager lease ran out."},
    {"lease/callsHeld", "lease_held_calls", GAUGE, 1, NULL,
     "Entity messages held while the lease has run out."},
    /* baseapps and cellapps */
    {"entities/count", "entities", GAUGE, 1, NULL, "Entities live in the process."},
    {"entities/created", "entities_created_total", COUNTER, 1, NULL, "Entities created."},
    {"entities/destroyed", "entities_destroyed_total", COUNTER, 1, NULL, "Entities destroyed."},
    {"entities/byType/*", "entities_by_type", GAUGE, 1, "type", "Entities live, by type."},
    /* baseapps */
    {"clients/connected", "clients_connected", GAUGE, 1, NULL, "Clients connected (players online)."},
    {"clients/connects", "client_connects_total", COUNTER, 1, NULL, "Client connections made."},
    {"clients/packetsOut", "client_sent_packets_total", COUNTER, 1, NULL, "Packets sent to clients."},
    {"clients/bytesOut", "client_sent_bytes_total", COUNTER, 1, NULL, "Bytes sent to clients."},
    {"clients/packetsIn", "client_received_packets_total", COUNTER, 1, NULL,
     "Packets received from clients."},
    {"world/updatesIn", "world_updates_received_total", COUNTER, 1, NULL,
     "View updates received from cellapps."},
    {"world/bytesIn", "world_received_bytes_total", COUNTER, 1, NULL,
     "Bytes of view updates received from cellapps."},
    /* cellapps */
    {"aoi/ticksLate", "aoi_ticks_late_total", COUNTER, 1, NULL, "View update ticks that ran late."},
    {"aoi/lastWorkUs", "aoi_last_work_seconds", GAUGE, 1e-6, NULL,
     "Work time of the last view update tick."},
    /* loginapps */
    {"login/logins", "login_requests_total", COUNTER, 1, NULL, "LOGIN requests opened."},
    {"login/status/*", "login_replies_total", COUNTER, 1, "status", "Login replies, by status."},
    {"login/inFlight", "login_in_flight", GAUGE, 1, NULL, "Logins in progress."},
    {"login/accountsCreated", "login_accounts_created_total", COUNTER, 1, NULL,
     "Accounts created by logins (development clusters)."},
    /* the manager */
    {"counts/alive", "registry_alive_processes", GAUGE, 1, NULL, "Processes alive in the registry."},
    {"counts/dead", "registry_dead_processes", GAUGE, 1, NULL, "Processes dead in the registry."},
    {"counts/registrations", "registry_registrations_total", COUNTER, 1, NULL,
     "Registrations accepted."},
    {"counts/deaths", "registry_deaths_total", COUNTER, 1, NULL, "Processes declared dead."},
    {"counts/fenced", "registry_fenced_total", COUNTER, 1, NULL,
     "Processes told they were replaced."},
};

typedef struct {
    struct evbuffer *out;
    const char *labels; /* role="...",name="...",host="..." */
    bool failed;
} render;

static void put(render *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(render *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (evbuffer_add_vprintf(r->out, fmt, ap) < 0)
        r->failed = true;
    va_end(ap);
}

void mc_metrics_escape_label(const char *v, char *out, size_t outlen)
{
    size_t k = 0;
    if (outlen == 0)
        return;
    for (; *v && k + 2 < outlen; v++) {
        if (*v == '\\' || *v == '"') {
            out[k++] = '\\';
            out[k++] = *v;
        } else if (*v == '\n') {
            out[k++] = '\\';
            out[k++] = 'n';
        } else {
            out[k++] = *v;
        }
    }
    out[k] = '\0';
}

static bool numeric(const mc_watch_value *v, double *d)
{
    switch (v->type) {
    case MC_WATCH_INT: *d = (double)v->as.i; return true;
    case MC_WATCH_UINT: *d = (double)v->as.u; return true;
    case MC_WATCH_FLOAT: *d = v->as.f; return true;
    case MC_WATCH_BOOL: *d = v->as.b ? 1 : 0; return true;
    case MC_WATCH_STRING: return false;
    }
    return false;
}

static void put_number(render *r, double d)
{
    if (isnan(d))
        put(r, "NaN\n");
    else if (isinf(d))
        put(r, d > 0 ? "+Inf\n" : "-Inf\n");
    else
        put(r, "%.17g\n", d);
}

static bool read_number(const mc_watchers *w, const char *path, double *d)
{
    mc_watch_value v = {0};
    char err[128];
    if (mc_watch_get(w, path, &v, err, sizeof err) != MC_WATCH_OK)
        return false;
    bool ok = numeric(&v, d);
    mc_watch_value_clear(&v);
    return ok;
}

/* Children of a directory (names), heap; *n set. */
typedef struct {
    char (*names)[MC_WATCH_MAX_NAME + 1];
    bool *dirs;
    mc_watch_type *types;
    size_t n, cap;
    bool failed;
} child_list;

static void collect(void *ctx, const mc_watch_entry *e)
{
    child_list *c = ctx;
    if (c->failed)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 32;
        void *a = realloc(c->names, cap * sizeof *c->names);
        if (!a) {
            c->failed = true;
            return;
        }
        c->names = a;
        void *b = realloc(c->dirs, cap * sizeof *c->dirs);
        if (!b) {
            c->failed = true;
            return;
        }
        c->dirs = b;
        void *t = realloc(c->types, cap * sizeof *c->types);
        if (!t) {
            c->failed = true;
            return;
        }
        c->types = t;
        c->cap = cap;
    }
    snprintf(c->names[c->n], sizeof c->names[0], "%s", e->name);
    c->dirs[c->n] = e->is_directory;
    c->types[c->n] = e->type;
    c->n++;
}

static void child_list_free(child_list *c)
{
    free(c->names);
    free(c->dirs);
    free(c->types);
}

static bool list_dir(const mc_watchers *w, const char *path, child_list *c)
{
    memset(c, 0, sizeof *c);
    char err[128];
    if (mc_watch_list(w, path, collect, c, err, sizeof err) != MC_WATCH_OK || c->failed) {
        child_list_free(c);
        memset(c, 0, sizeof *c);
        return false;
    }
    return true;
}

static void render_known(render *r, const mc_watchers *w, const known_metric *m)
{
    const char *star = strchr(m->path, '*');
    if (!star) {
        double d;
        if (!read_number(w, m->path, &d))
            return;
        put(r, "# HELP mc_%s %s\n# TYPE mc_%s %s\n", m->metric, m->help, m->metric,
            m->k == COUNTER ? "counter" : "gauge");
        put(r, "mc_%s{%s} ", m->metric, r->labels);
        put_number(r, d * m->scale);
        return;
    }
    /* "dir/ *": every numeric leaf of dir, labelled by its name */
    char dir[MC_WATCH_MAX_PATH];
    size_t n = (size_t)(star - m->path);
    if (n < 2 || n >= sizeof dir)
        return;
    memcpy(dir, m->path, n - 1);
    dir[n - 1] = '\0';
    child_list c;
    if (!list_dir(w, dir, &c))
        return;
    bool header = false;
    for (size_t i = 0; i < c.n; i++) {
        if (c.dirs[i] || c.types[i] == MC_WATCH_STRING)
            continue;
        char path[MC_WATCH_MAX_PATH * 2];
        snprintf(path, sizeof path, "%s/%s", dir, c.names[i]);
        double d;
        if (!read_number(w, path, &d))
            continue;
        if (!header) {
            put(r, "# HELP mc_%s %s\n# TYPE mc_%s %s\n", m->metric, m->help, m->metric,
                m->k == COUNTER ? "counter" : "gauge");
            header = true;
        }
        char esc[2 * MC_WATCH_MAX_NAME + 4];
        mc_metrics_escape_label(c.names[i], esc, sizeof esc);
        put(r, "mc_%s{%s,%s=\"%s\"} ", m->metric, r->labels, m->label, esc);
        put_number(r, d * m->scale);
    }
    child_list_free(&c);
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* Every numeric leaf under dir as mc_watcher_value{path=...}; depth is bounded. */
static void render_generic(render *r, const mc_watchers *w, const char *dir, int depth,
                           bool *header)
{
    if (depth > 16)
        return;
    child_list c;
    if (!list_dir(w, dir, &c))
        return;
    for (size_t i = 0; i < c.n && !r->failed; i++) {
        char path[MC_WATCH_MAX_PATH * 2];
        if (*dir)
            snprintf(path, sizeof path, "%s/%s", dir, c.names[i]);
        else
            snprintf(path, sizeof path, "%s", c.names[i]);
        if (c.dirs[i]) {
            if (strcmp(dir, "entities") == 0 && all_digits(c.names[i]))
                continue; /* per-entity trees: the console's entity page shows them */
            render_generic(r, w, path, depth + 1, header);
            continue;
        }
        if (c.types[i] == MC_WATCH_STRING)
            continue;
        double d;
        if (!read_number(w, path, &d))
            continue;
        if (!*header) {
            put(r, "# HELP mc_watcher_value Any numeric watcher, by path (docs/tools/watcher.md).\n"
                   "# TYPE mc_watcher_value gauge\n");
            *header = true;
        }
        char esc[MC_WATCH_MAX_PATH * 2 + 8];
        mc_metrics_escape_label(path, esc, sizeof esc);
        put(r, "mc_watcher_value{%s,path=\"%s\"} ", r->labels, esc);
        put_number(r, d);
    }
    child_list_free(&c);
}

static void render_histogram(render *r, const mc_histogram *h)
{
    put(r, "# HELP mc_%s %s\n# TYPE mc_%s histogram\n", h->name, h->help, h->name);
    uint64_t cum = 0;
    for (size_t b = 0; b < MC_HISTOGRAM_BUCKETS; b++) {
        cum += h->counts[b];
        put(r, "mc_%s_bucket{%s,le=\"%g\"} %llu\n", h->name, r->labels, mc_histogram_bounds[b],
            (unsigned long long)cum);
    }
    put(r, "mc_%s_bucket{%s,le=\"+Inf\"} %llu\n", h->name, r->labels,
        (unsigned long long)h->count);
    put(r, "mc_%s_sum{%s} %.17g\n", h->name, r->labels, h->sum);
    put(r, "mc_%s_count{%s} %llu\n", h->name, r->labels, (unsigned long long)h->count);
}

int mc_metrics_render(const mc_watchers *w, mc_histogram *const *hists, size_t nhists,
                      const mc_metrics_labels *labels, struct evbuffer *out)
{
    char role[160], name[160], host[160], all[600];
    mc_metrics_escape_label(labels->role ? labels->role : "", role, sizeof role);
    mc_metrics_escape_label(labels->name ? labels->name : "", name, sizeof name);
    mc_metrics_escape_label(labels->host ? labels->host : "", host, sizeof host);
    snprintf(all, sizeof all, "role=\"%s\",name=\"%s\",host=\"%s\"", role, name, host);
    render r = {.out = out, .labels = all};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        render_known(&r, w, &known[i]);
    for (size_t i = 0; i < nhists; i++)
        render_histogram(&r, hists[i]);
    bool header = false;
    render_generic(&r, w, "", 0, &header);
    return r.failed ? -1 : 0;
}
