/* mc-db commands: types, list, show, delete, check (and the request helpers). */
#include <stdlib.h>
#include <string.h>

#include "common/value_json.h"
#include "mcdb.h"
#include "persist/schema.h"

void db_res_free(db_res *r)
{
    for (size_t i = 0; i < r->nrefs; i++)
        free(r->refs[i]);
    free(r->refs);
    free(r->ref_lens);
    free(r->dbids);
    for (size_t i = 0; i < r->ntypes; i++)
        free((char *)r->types[i].name);
    free(r->types);
    memset(r, 0, sizeof *r);
}

static void copy_cb(void *ctx, const mc_persist_result *res)
{
    db_res *r = ctx;
    r->done = true;
    r->st = res->status;
    snprintf(r->reason, sizeof r->reason, "%s", res->reason ? res->reason : "");
    r->dbid = res->dbid;
    r->cursor = res->cursor;
    r->count = res->count;
    if (res->nrefs) {
        r->refs = calloc(res->nrefs, sizeof *r->refs);
        for (size_t i = 0; r->refs && i < res->nrefs; i++) {
            r->refs[i] = strdup(res->refs[i]);
            if (r->refs[i])
                r->nrefs++;
        }
    }
    if (res->ndbids) {
        r->dbids = malloc(res->ndbids * sizeof *r->dbids);
        if (r->dbids) {
            memcpy(r->dbids, res->dbids, res->ndbids * sizeof *r->dbids);
            r->ndbids = res->ndbids;
        }
    }
    if (res->ntypes) {
        r->types = calloc(res->ntypes, sizeof *r->types);
        for (size_t i = 0; r->types && i < res->ntypes; i++) {
            r->types[i].name = strdup(res->types[i].name);
            r->types[i].count = res->types[i].count;
            if (r->types[i].name)
                r->ntypes++;
        }
    }
}

mc_persist_cb db_cb(void) { return copy_cb; }

void db_wait(db_ctx *c, db_res *r)
{
    /* The store fails every request after its timeout, so this ends. */
    while (!r->done)
        event_base_loop(c->base, EVLOOP_ONCE);
}

int db_exit_for(mc_persist_status st)
{
    switch (st) {
    case MC_PERSIST_OK: return DB_EXIT_OK;
    case MC_PERSIST_UNAVAILABLE:
    case MC_PERSIST_AUTH:
    case MC_PERSIST_QUEUE_FULL:
    case MC_PERSIST_CLOSED: return DB_EXIT_UNAVAILABLE;
    case MC_PERSIST_BAD_REQUEST: return DB_EXIT_USAGE;
    default: return DB_EXIT_FAILED;
    }
}

static int fail(const db_res *r, const char *what)
{
    fprintf(stderr, "mc-db: %s: %s (%s)\n", what, r->reason, mc_persist_status_name(r->st));
    return db_exit_for(r->st);
}

static const mc_entity_type_def *need_type(db_ctx *c, const char *name)
{
    const mc_entity_type_def *t = mc_defs_type_by_name(c->defs, name);
    if (!t)
        fprintf(stderr, "mc-db: no entity type '%s' in the defs\n", name);
    return t;
}

static int parse_dbid(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || v == 0 || s[0] == '-') {
        fprintf(stderr, "mc-db: '%s' is not a database id\n", s);
        return -1;
    }
    *out = v;
    return 0;
}

int db_cmd_types(db_ctx *c, int argc, char **argv)
{
    (void)argv;
    if (argc != 0) {
        fprintf(stderr, "mc-db: types takes no arguments\n");
        return DB_EXIT_USAGE;
    }
    db_res r = {0};
    mc_persist_list_types(c->store, db_cb(), &r);
    db_wait(c, &r);
    if (r.st != MC_PERSIST_OK)
        return fail(&r, "types");
    fprintf(c->out, "%-24s %s\n", "TYPE", "COUNT");
    for (size_t i = 0; i < r.ntypes; i++)
        fprintf(c->out, "%-24s %llu%s\n", r.types[i].name, (unsigned long long)r.types[i].count,
                mc_defs_type_by_name(c->defs, r.types[i].name) ? "" : "  (not in the defs)");
    db_res_free(&r);
    return DB_EXIT_OK;
}

int db_cmd_list(db_ctx *c, int argc, char **argv)
{
    if (argc != 1) {
        fprintf(stderr, "mc-db: usage: list TYPE\n");
        return DB_EXIT_USAGE;
    }
    uint64_t cursor = 0;
    for (;;) {
        db_res r = {0};
        mc_persist_scan_type(c->store, argv[0], cursor, db_cb(), &r);
        db_wait(c, &r);
        if (r.st != MC_PERSIST_OK) {
            int rc = fail(&r, "list");
            db_res_free(&r);
            return rc;
        }
        for (size_t i = 0; i < r.ndbids; i++)
            fprintf(c->out, "%llu\n", (unsigned long long)r.dbids[i]);
        cursor = r.cursor;
        db_res_free(&r);
        if (!cursor)
            return DB_EXIT_OK;
    }
}

/* One stored field of a known property, decoded and printed canonically. */
static void show_prop(db_ctx *c, const mc_def_property *p, const char *raw)
{
    char *type = mc_persist_type_text(p);
    if (!raw) {
        char *def = mc_value_to_json(p->type, &p->default_value);
        fprintf(c->out, "  %-16s %-20s %s  (absent: the default)\n", p->name, type ? type : "?",
                def ? def : "?");
        free(def);
        free(type);
        return;
    }
    mc_value_limits lim = mc_defs_property_limits(c->defs, p);
    mc_value v;
    char why[256];
    if (mc_value_from_json(p->type, raw, strlen(raw), &lim, &v, why, sizeof why) != 0) {
        fprintf(c->out, "  %-16s %-20s %s  (does not decode: %s)\n", p->name, type ? type : "?",
                raw, why);
    } else {
        char *json = mc_value_to_json(p->type, &v);
        fprintf(c->out, "  %-16s %-20s %s\n", p->name, type ? type : "?", json ? json : "?");
        free(json);
        mc_value_free(&v);
    }
    free(type);
}

static const char *field(const db_res *r, const char *name)
{
    for (size_t i = 0; i + 1 < r->nrefs; i += 2)
        if (strcmp(r->refs[i], name) == 0)
            return r->refs[i + 1];
    return NULL;
}

int db_cmd_show(db_ctx *c, int argc, char **argv)
{
    if (!(argc == 2 || (argc == 3 && strcmp(argv[1], "--id") == 0))) {
        fprintf(stderr, "mc-db: usage: show TYPE DBID | show TYPE --id VALUE\n");
        return DB_EXIT_USAGE;
    }
    const mc_entity_type_def *t = need_type(c, argv[0]);
    if (!t)
        return DB_EXIT_USAGE;
    uint64_t dbid;
    if (argc == 3) {
        db_res r = {0};
        mc_persist_lookup(c->store, t, argv[2], db_cb(), &r);
        db_wait(c, &r);
        if (r.st != MC_PERSIST_OK) {
            int rc = fail(&r, "show");
            db_res_free(&r);
            return rc;
        }
        dbid = r.dbid;
        db_res_free(&r);
    } else if (parse_dbid(argv[1], &dbid) != 0) {
        return DB_EXIT_USAGE;
    }
    db_res r = {0};
    mc_persist_load_raw(c->store, t->name, dbid, db_cb(), &r);
    db_wait(c, &r);
    if (r.st != MC_PERSIST_OK) {
        int rc = fail(&r, "show");
        db_res_free(&r);
        return rc;
    }
    fprintf(c->out, "%s %llu\n", t->name, (unsigned long long)dbid);
    db_res o = {0};
    mc_persist_read_owner(c->store, t->name, dbid, db_cb(), &o);
    db_wait(c, &o);
    if (o.st == MC_PERSIST_OK && o.nrefs >= 2) {
        const char *owner = field(&o, "owner"), *inc = field(&o, "incarnation"),
                   *state = field(&o, "state");
        fprintf(c->out, "  checked out by %s (incarnation %s, %s)\n", owner ? owner : "?",
                inc ? inc : "?", state ? state : "?");
    } else if (o.st == MC_PERSIST_OK) {
        fprintf(c->out, "  not checked out\n");
    }
    db_res_free(&o);
    for (size_t i = 0; i < t->nprops; i++)
        if (t->props[i].persistent)
            show_prop(c, &t->props[i], field(&r, t->props[i].name));
    const char *engine[] = {MC_PERSIST_FIELD_POSITION, MC_PERSIST_FIELD_DIRECTION,
                            MC_PERSIST_FIELD_SPACE};
    for (size_t i = 0; i < 3; i++) {
        const char *v = field(&r, engine[i]);
        fprintf(c->out, "  %-16s %-20s %s\n", engine[i], "", v ? v : "(absent)");
    }
    for (size_t i = 0; i + 1 < r.nrefs; i += 2) {
        const mc_def_property *p = mc_defs_property_by_name(t, r.refs[i]);
        if (r.refs[i][0] != '@' && (!p || !p->persistent))
            fprintf(c->out, "  %-16s %-20s %s  (not a persistent property now)\n", r.refs[i],
                    "", r.refs[i + 1]);
    }
    db_res_free(&r);
    return DB_EXIT_OK;
}

int db_cmd_delete(db_ctx *c, int argc, char **argv)
{
    bool force = argc == 3 && strcmp(argv[2], "--force") == 0;
    if (argc != 2 && !force) {
        fprintf(stderr, "mc-db: usage: delete TYPE DBID [--force]\n");
        return DB_EXIT_USAGE;
    }
    const mc_entity_type_def *t = need_type(c, argv[0]);
    uint64_t dbid;
    if (!t || parse_dbid(argv[1], &dbid) != 0)
        return DB_EXIT_USAGE;
    db_res r = {0};
    mc_persist_delete(c->store, t, dbid, NULL, force, db_cb(), &r);
    db_wait(c, &r);
    int rc = r.st == MC_PERSIST_OK ? DB_EXIT_OK : fail(&r, "delete");
    if (rc == DB_EXIT_OK)
        fprintf(c->out, "deleted %s %llu\n", t->name, (unsigned long long)dbid);
    db_res_free(&r);
    return rc;
}

/* Compare one type's stored schema record with the defs. Returns the worst exit code. */
static int check_type(db_ctx *c, const char *name, bool stored_entities, uint64_t count)
{
    const mc_entity_type_def *t = mc_defs_type_by_name(c->defs, name);
    db_res r = {0};
    mc_persist_read_schema(c->store, name, db_cb(), &r);
    db_wait(c, &r);
    if (r.st != MC_PERSIST_OK) {
        int rc = fail(&r, "check");
        db_res_free(&r);
        return rc;
    }
    int rc = DB_EXIT_OK;
    if (!t) {
        fprintf(c->out, "%s: not in the defs (%llu entities stored)\n", name,
                (unsigned long long)count);
        rc = DB_EXIT_FAILED;
    } else if (r.nrefs == 0) {
        fprintf(c->out, "%s: no schema record%s\n", name,
                stored_entities ? " (entities stored without one)" : " (nothing stored yet)");
    } else {
        size_t n = r.nrefs / 2;
        mc_persist_field *f = calloc(n + 1, sizeof *f);
        mc_persist_schema_diff d;
        if (!f) {
            db_res_free(&r);
            return DB_EXIT_FAILED;
        }
        for (size_t i = 0; i < n; i++)
            f[i] = (mc_persist_field){r.refs[2 * i], strlen(r.refs[2 * i]), r.refs[2 * i + 1],
                                      strlen(r.refs[2 * i + 1])};
        if (mc_persist_schema_compare(t, f, n, &d) != 0) {
            free(f);
            db_res_free(&r);
            return DB_EXIT_FAILED;
        }
        free(f);
        for (size_t i = 0; i < d.nchanged; i++)
            fprintf(c->out, "%s: incompatible: %s (loads are refused)\n", name, d.changed[i]);
        for (size_t i = 0; i < d.nadded; i++)
            fprintf(c->out, "%s: added: %s (loads give it its default)\n", name, d.added[i]);
        for (size_t i = 0; i < d.nremoved; i++)
            fprintf(c->out, "%s: removed: %s (ignored on load)\n", name, d.removed[i]);
        if (d.nchanged)
            rc = DB_EXIT_INCOMPATIBLE;
        else if (d.nadded + d.nremoved)
            rc = DB_EXIT_FAILED;
        else
            fprintf(c->out, "%s: ok\n", name);
        mc_persist_schema_diff_free(&d);
    }
    db_res_free(&r);
    return rc;
}

static int worse(int a, int b)
{
    /* 4 (unavailable) > 2 (incompatible) > 1 (compatible changes) > 0 */
    int rank[] = {0, 1, 2, 0, 3};
    if (a < 0 || a > 4 || b < 0 || b > 4)
        return a > b ? a : b;
    return rank[a] >= rank[b] ? a : b;
}

/* Identifier index entries whose entity does not hold their value (left by a crash between
 * the steps of an identifier change, docs/PERSISTENCE.md). Returns the worst exit code. */
static int check_idents(db_ctx *c)
{
    int rc = DB_EXIT_OK;
    char head[300];
    snprintf(head, sizeof head, "%s:id:{", c->prefix);
    size_t hl = strlen(head), nodes = mc_persist_node_count(c->store);
    uint64_t stale = 0;
    for (size_t node = 0; node < nodes && rc != DB_EXIT_UNAVAILABLE; node++) {
        uint64_t cursor = 0;
        do {
            db_res r = {0};
            mc_persist_scan_idents(c->store, node, cursor, db_cb(), &r);
            db_wait(c, &r);
            if (r.st != MC_PERSIST_OK) {
                rc = fail(&r, "check");
                db_res_free(&r);
                break;
            }
            for (size_t i = 0; i < r.nrefs; i++) {
                const char *k = r.refs[i];
                size_t kl = strlen(k);
                const char *colon = kl > hl + 1 ? strchr(k + hl, ':') : NULL;
                if (strncmp(k, head, hl) != 0 || k[kl - 1] != '}' || !colon)
                    continue;
                char type[256], value[1024];
                snprintf(type, sizeof type, "%.*s", (int)(colon - k - (int)hl), k + hl);
                snprintf(value, sizeof value, "%.*s", (int)(k + kl - 1 - colon - 1), colon + 1);
                const mc_entity_type_def *t = mc_defs_type_by_name(c->defs, type);
                if (!t)
                    continue; /* the type check above reports types gone from the defs */
                db_res l = {0};
                mc_persist_lookup(c->store, t, value, db_cb(), &l);
                db_wait(c, &l);
                if (l.st == MC_PERSIST_NOT_FOUND) {
                    fprintf(c->out, "%s: stale identifier index entry '%s' (%s): its entity does "
                            "not hold it; remove with: mc-db unindex %s '%s'\n",
                            type, value, k, type, value);
                    stale++;
                    rc = worse(rc, DB_EXIT_FAILED);
                } else if (l.st != MC_PERSIST_OK && l.st != MC_PERSIST_BAD_REQUEST) {
                    rc = worse(rc, fail(&l, "check"));
                }
                db_res_free(&l);
            }
            cursor = r.cursor;
            db_res_free(&r);
        } while (cursor);
    }
    if (!stale && rc == DB_EXIT_OK)
        fprintf(c->out, "identifier index: ok\n");
    return rc;
}

int db_cmd_unindex(db_ctx *c, int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "mc-db: usage: unindex TYPE VALUE\n");
        return DB_EXIT_USAGE;
    }
    const mc_entity_type_def *t = need_type(c, argv[0]);
    if (!t)
        return DB_EXIT_USAGE;
    db_res r = {0};
    mc_persist_drop_stale_ident(c->store, t, argv[1], db_cb(), &r);
    db_wait(c, &r);
    int rc = r.st == MC_PERSIST_OK ? DB_EXIT_OK : fail(&r, "unindex");
    if (rc == DB_EXIT_OK)
        fprintf(c->out, "removed the stale index entry %s '%s'\n", t->name, argv[1]);
    db_res_free(&r);
    return rc;
}

int db_cmd_check(db_ctx *c, int argc, char **argv)
{
    (void)argv;
    if (argc != 0) {
        fprintf(stderr, "mc-db: check takes no arguments (the defs come from --res)\n");
        return DB_EXIT_USAGE;
    }
    db_res types = {0};
    mc_persist_list_types(c->store, db_cb(), &types);
    db_wait(c, &types);
    if (types.st != MC_PERSIST_OK) {
        int rc = fail(&types, "check");
        db_res_free(&types);
        return rc;
    }
    int rc = DB_EXIT_OK;
    size_t n = mc_defs_type_count(c->defs);
    for (size_t i = 0; i < n; i++) {
        const mc_entity_type_def *t = mc_defs_type(c->defs, (uint16_t)i);
        bool persistent = false;
        for (size_t p = 0; p < t->nprops; p++)
            persistent = persistent || t->props[p].persistent;
        uint64_t count = 0;
        bool stored = false;
        for (size_t k = 0; k < types.ntypes; k++)
            if (strcmp(types.types[k].name, t->name) == 0) {
                stored = true;
                count = types.types[k].count;
            }
        if (!persistent && !stored)
            continue;
        rc = worse(rc, check_type(c, t->name, stored && count > 0, count));
        if (rc == DB_EXIT_UNAVAILABLE)
            break;
    }
    for (size_t k = 0; k < types.ntypes && rc != DB_EXIT_UNAVAILABLE; k++)
        if (!mc_defs_type_by_name(c->defs, types.types[k].name))
            rc = worse(rc, check_type(c, types.types[k].name, true, types.types[k].count));
    db_res_free(&types);
    if (rc != DB_EXIT_UNAVAILABLE)
        rc = worse(rc, check_idents(c));
    fprintf(c->out, "%s\n", rc == DB_EXIT_OK ? "check: the stored schema matches the defs"
                            : rc == DB_EXIT_FAILED ? "check: compatible differences (see above)"
                            : rc == DB_EXIT_INCOMPATIBLE
                                ? "check: incompatible: loads of those types are refused"
                                : "check: incomplete");
    return rc;
}
