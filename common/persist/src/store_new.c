/* Creating a store: its configuration (defaults filled in, strings copied), the Redis
 * password, the connections (the one Redis, or every cluster seed), and the first steps:
 * the operations' reply dispatch handed down to the connections (s->on_reply), and the
 * schema check queued before anything else. Sits on the store and on the operations. */
#include <errno.h>
#include <event2/event.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "internal.h"

static char *read_password(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "password file %s: %s", path, strerror(errno));
        return NULL;
    }
    char line[1024];
    if (!fgets(line, sizeof line, f)) {
        fclose(f);
        snprintf(err, errlen, "password file %s: empty", path);
        return NULL;
    }
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
    if (!line[0]) {
        snprintf(err, errlen, "password file %s: empty first line", path);
        return NULL;
    }
    char *p = strdup(line);
    sodium_memzero(line, sizeof line);
    if (!p)
        snprintf(err, errlen, "out of memory");
    return p;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

mc_persist_store *mc_persist_store_new(struct event_base *base, const mc_persist_config *cfg,
                                       char *err, size_t errlen)
{
    if (!base || !cfg || !cfg->defs || !cfg->process_name || !cfg->process_name[0]) {
        snprintf(err, errlen, "persist: the event base, defs and process name are required");
        return NULL;
    }
    if (cfg->nseeds > MC_PERSIST_MAX_SEEDS) {
        snprintf(err, errlen, "persist: at most %d cluster seeds", MC_PERSIST_MAX_SEEDS);
        return NULL;
    }
    if (sodium_init() < 0) {
        snprintf(err, errlen, "persist: libsodium failed to initialise");
        return NULL;
    }
    mc_persist_store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->base = base;
    s->cfg = *cfg;
    if (!s->cfg.queue_max)
        s->cfg.queue_max = 100000;
    if (!s->cfg.inflight_max)
        s->cfg.inflight_max = 1000;
    if (!s->cfg.backoff_min_ms)
        s->cfg.backoff_min_ms = 100;
    if (!s->cfg.backoff_max_ms)
        s->cfg.backoff_max_ms = 5000;
    if (s->cfg.backoff_max_ms < s->cfg.backoff_min_ms)
        s->cfg.backoff_max_ms = s->cfg.backoff_min_ms;
    if (!s->cfg.request_timeout_ms)
        s->cfg.request_timeout_ms = 30000;
    s->process_name = strdup(cfg->process_name);
    s->prefix = strdup(cfg->prefix && cfg->prefix[0] ? cfg->prefix : "mc");
    s->user = dup_or_null(cfg->user && cfg->user[0] ? cfg->user : NULL);
    s->cluster = cfg->nseeds > 0;
    s->address = strdup(cfg->address && cfg->address[0] ? cfg->address : "127.0.0.1:6379");
    s->owner = strdup(cfg->process_name);
    s->cfg.process_name = s->process_name;
    s->cfg.prefix = s->prefix;
    s->cfg.user = s->user;
    s->cfg.address = s->address;
    s->cfg.password_file = NULL;
    for (size_t i = 0; i < cfg->nseeds; i++) {
        s->seeds[i] = dup_or_null(cfg->seeds[i]);
        s->cfg.seeds[i] = s->seeds[i];
    }
    if (!s->process_name || !s->prefix || !s->address || !s->owner) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (cfg->password_file && cfg->password_file[0]) {
        s->password = read_password(cfg->password_file, err, errlen);
        if (!s->password)
            goto fail;
    }
    size_t ntypes = mc_defs_type_count(cfg->defs);
    s->schema_state = calloc(ntypes ? ntypes : 1, sizeof *s->schema_state);
    s->schema_refused = calloc(ntypes ? ntypes : 1, sizeof *s->schema_refused);
    s->tick_ev = event_new(base, -1, EV_PERSIST, mc_store_tick_cb, s);
    s->done_ev = event_new(base, -1, 0, mc_store_done_cb, s);
    if (!s->schema_state || !s->schema_refused || !s->tick_ev || !s->done_ev) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* Connections: the one Redis, or every seed (the slot map adds nodes). */
    size_t n = s->cluster ? cfg->nseeds : 1;
    for (size_t i = 0; i < n; i++) {
        const char *a = s->cluster ? s->seeds[i] : s->address;
        char host[64];
        int port;
        int prc = a ? mc_parse_addr(a, host, sizeof host, &port) : -1;
        if (prc == -2) {
            snprintf(err, errlen,
                     "persist: redis address '%s': '%s' is not a numeric IP address; host "
                     "names are not resolved (a lookup would block the event loop): give "
                     "the address (e.g. from 'getent ahostsv4 %s')",
                     a, host, host);
            goto fail;
        }
        if (prc != 0) {
            snprintf(err, errlen, "persist: bad redis address '%s' (want IP:PORT)", a ? a : "");
            goto fail;
        }
        if (!mc_cluster_conn_for(s, host, port)) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
    }
    struct timeval tv = {0, MC_STORE_TICK_MS * 1000};
    event_add(s->tick_ev, &tv);
    s->on_reply = mc_ops_reply;
    mc_ops_schema_start(s);
    for (size_t i = 0; i < s->nconns; i++)
        mc_conn_start(s->conns[i]);
    return s;
fail:
    mc_persist_store_free(s);
    return NULL;
}
