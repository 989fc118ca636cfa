/* mc-db export and import: one JSON line per entity,
 *   {"type":"Account","dbid":12,"autoload":false,
 *    "engine":{"position":[0,0,0],"direction":[0,0,0],"spaceId":0},
 *    "props":{"name":"alice","level":7}}
 * with every persistent property in the canonical JSON form of common/value_json.h. Import
 * checks each line against the current defs before anything is written. */
#include <stdlib.h>
#include <string.h>

#include "common/value_json.h"
#include "mcdb.h"
#include "persist/schema.h"

#define MAX_LINE (64u * 1024u * 1024u)

/* --- autoload set ------------------------------------------------------------------------ */

typedef struct {
    char **refs;
    size_t n;
} ref_set;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_autoload(db_ctx *c, ref_set *set)
{
    uint64_t cursor = 0;
    do {
        db_res r = {0};
        mc_persist_scan_autoload(c->store, cursor, db_cb(), &r);
        db_wait(c, &r);
        if (r.st != MC_PERSIST_OK) {
            fprintf(stderr, "mc-db: export: %s\n", r.reason);
            int rc = db_exit_for(r.st);
            db_res_free(&r);
            return rc;
        }
        char **g = realloc(set->refs, (set->n + r.nrefs + 1) * sizeof *g);
        if (!g) {
            db_res_free(&r);
            return DB_EXIT_FAILED;
        }
        set->refs = g;
        for (size_t i = 0; i < r.nrefs; i++) {
            set->refs[set->n++] = r.refs[i];
            r.refs[i] = NULL;
        }
        cursor = r.cursor;
        db_res_free(&r);
    } while (cursor);
    qsort(set->refs, set->n, sizeof *set->refs, cmp_str);
    return DB_EXIT_OK;
}

static bool in_set(const ref_set *set, const char *ref)
{
    return set->n && bsearch(&ref, set->refs, set->n, sizeof *set->refs, cmp_str) != NULL;
}

/* --- export ------------------------------------------------------------------------------ */

static const char *field(const db_res *r, const char *name)
{
    for (size_t i = 0; i + 1 < r->nrefs; i += 2)
        if (strcmp(r->refs[i], name) == 0)
            return r->refs[i + 1];
    return NULL;
}

static void put_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* One entity as a line; 0, or 1 when a field did not decode (the line is still written
 * without it, and reported). */
static int export_one(db_ctx *c, const mc_entity_type_def *t, uint64_t dbid,
                      const ref_set *autoload, bool *gone)
{
    db_res r = {0};
    mc_persist_load_raw(c->store, t->name, dbid, db_cb(), &r);
    db_wait(c, &r);
    *gone = false;
    if (r.st == MC_PERSIST_NOT_FOUND) {
        *gone = true; /* deleted since the scan */
        db_res_free(&r);
        return 0;
    }
    if (r.st != MC_PERSIST_OK) {
        fprintf(stderr, "mc-db: export %s %llu: %s\n", t->name, (unsigned long long)dbid,
                r.reason);
        db_res_free(&r);
        return -1;
    }
    int bad = 0;
    char ref[300];
    snprintf(ref, sizeof ref, "%s:%llu", t->name, (unsigned long long)dbid);
    float pos[3] = {0}, dir[3] = {0};
    int64_t space = 0;
    const char *v;
    if ((v = field(&r, MC_PERSIST_FIELD_POSITION)) && mc_persist_vec3_parse(v, strlen(v), pos))
        bad = 1;
    if ((v = field(&r, MC_PERSIST_FIELD_DIRECTION)) && mc_persist_vec3_parse(v, strlen(v), dir))
        bad = 1;
    if ((v = field(&r, MC_PERSIST_FIELD_SPACE)) && mc_persist_int_parse(v, strlen(v), &space))
        bad = 1;
    char p[128], d[128];
    mc_persist_vec3_text(pos, p, sizeof p);
    mc_persist_vec3_text(dir, d, sizeof d);
    fprintf(c->out, "{\"type\":");
    put_json_string(c->out, t->name);
    fprintf(c->out, ",\"dbid\":%llu,\"autoload\":%s,\"engine\":{\"position\":%s,"
            "\"direction\":%s,\"spaceId\":%lld},\"props\":{",
            (unsigned long long)dbid, in_set(autoload, ref) ? "true" : "false", p, d,
            (long long)space);
    bool first = true;
    for (size_t i = 0; i < t->nprops; i++) {
        const mc_def_property *prop = &t->props[i];
        const char *raw = prop->persistent ? field(&r, prop->name) : NULL;
        if (!raw)
            continue;
        mc_value_limits lim = mc_defs_property_limits(c->defs, prop);
        mc_value val;
        char why[256];
        if (mc_value_from_json(prop->type, raw, strlen(raw), &lim, &val, why, sizeof why) != 0) {
            fprintf(stderr, "mc-db: export %s %llu: %s: %s (left out)\n", t->name,
                    (unsigned long long)dbid, prop->name, why);
            bad = 1;
            continue;
        }
        char *json = mc_value_to_json(prop->type, &val);
        mc_value_free(&val);
        if (!json) {
            bad = 1;
            continue;
        }
        fprintf(c->out, "%s\"%s\":%s", first ? "" : ",", prop->name, json);
        first = false;
        free(json);
    }
    fprintf(c->out, "}}\n");
    db_res_free(&r);
    return bad;
}

int db_cmd_export(db_ctx *c, int argc, char **argv)
{
    const char **names = NULL;
    size_t nnames = 0;
    db_res types = {0};
    if (argc > 0) {
        names = (const char **)argv;
        nnames = (size_t)argc;
    } else {
        mc_persist_list_types(c->store, db_cb(), &types);
        db_wait(c, &types);
        if (types.st != MC_PERSIST_OK) {
            fprintf(stderr, "mc-db: export: %s\n", types.reason);
            int rc = db_exit_for(types.st);
            db_res_free(&types);
            return rc;
        }
        names = calloc(types.ntypes + 1, sizeof *names);
        for (size_t i = 0; names && i < types.ntypes; i++)
            names[nnames++] = types.types[i].name;
    }
    ref_set autoload = {0};
    int rc = read_autoload(c, &autoload);
    uint64_t written = 0, skipped = 0;
    for (size_t k = 0; k < nnames && rc == DB_EXIT_OK; k++) {
        const mc_entity_type_def *t = mc_defs_type_by_name(c->defs, names[k]);
        if (!t) {
            fprintf(stderr, "mc-db: export: type %s is not in the defs (left out)\n", names[k]);
            rc = DB_EXIT_FAILED;
            continue;
        }
        uint64_t cursor = 0;
        do {
            db_res r = {0};
            mc_persist_scan_type(c->store, t->name, cursor, db_cb(), &r);
            db_wait(c, &r);
            if (r.st != MC_PERSIST_OK) {
                fprintf(stderr, "mc-db: export: %s\n", r.reason);
                rc = db_exit_for(r.st);
                db_res_free(&r);
                break;
            }
            for (size_t i = 0; i < r.ndbids; i++) {
                bool gone;
                int e = export_one(c, t, r.dbids[i], &autoload, &gone);
                if (e < 0) {
                    rc = DB_EXIT_UNAVAILABLE;
                    break;
                }
                if (e > 0)
                    skipped++;
                if (!gone)
                    written++;
            }
            cursor = r.cursor;
            db_res_free(&r);
        } while (cursor && rc == DB_EXIT_OK);
    }
    for (size_t i = 0; i < autoload.n; i++)
        free(autoload.refs[i]);
    free(autoload.refs);
    if (argc == 0)
        free(names);
    db_res_free(&types);
    fprintf(stderr, "mc-db: exported %llu entities%s\n", (unsigned long long)written,
            skipped ? " (some fields left out, see above)" : "");
    if (rc == DB_EXIT_OK && skipped)
        rc = DB_EXIT_FAILED;
    return rc;
}

/* --- import ------------------------------------------------------------------------------ */

typedef struct {
    const char *key;
    size_t keylen;
    const char *val;
    size_t vallen;
} kv;

static const char *ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

/* The end of the JSON value starting at p (NULL when malformed or too deep). */
static const char *skip_value(const char *p, const char *end)
{
    if (p >= end)
        return NULL;
    if (*p == '"') {
        for (p++; p < end; p++) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                return p + 1;
        }
        return NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (; p < end; p++) {
            if (*p == '"') {
                p = skip_value(p, end);
                if (!p)
                    return NULL;
                p--;
            } else if (*p == '{' || *p == '[') {
                if (++depth > 200)
                    return NULL;
            } else if (*p == '}' || *p == ']') {
                if (--depth == 0)
                    return p + 1;
            }
        }
        return NULL;
    }
    const char *s = p;
    while (p < end && !strchr(",}] \t\r\n", *p))
        p++;
    return p > s ? p : NULL;
}

/* The members of a JSON object (keys without escapes). 0 or -1. */
static int scan_object(const char *p, const char *end, kv *out, size_t max, size_t *n)
{
    *n = 0;
    p = ws(p, end);
    if (p >= end || *p++ != '{')
        return -1;
    p = ws(p, end);
    if (p < end && *p == '}')
        return ws(p + 1, end) == end ? 0 : -1;
    for (;;) {
        p = ws(p, end);
        if (p >= end || *p != '"')
            return -1;
        const char *k = ++p;
        while (p < end && *p != '"' && *p != '\\')
            p++;
        if (p >= end || *p != '"')
            return -1;
        size_t klen = (size_t)(p - k);
        p = ws(p + 1, end);
        if (p >= end || *p++ != ':')
            return -1;
        p = ws(p, end);
        const char *v = p;
        p = skip_value(p, end);
        if (!p || *n >= max)
            return -1;
        out[(*n)++] = (kv){k, klen, v, (size_t)(p - v)};
        p = ws(p, end);
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p < end && *p == '}')
            return ws(p + 1, end) == end ? 0 : -1;
        return -1;
    }
}

static const kv *get(const kv *m, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].keylen == strlen(key) && memcmp(m[i].key, key, m[i].keylen) == 0)
            return &m[i];
    return NULL;
}

typedef struct {
    mc_persist_entity e;
    mc_value *values;
    bool autoload;
} parsed;

static void parsed_free(parsed *pe)
{
    if (pe->values)
        for (size_t i = 0; i < pe->e.type->nprops; i++)
            mc_value_free(&pe->values[i]);
    free(pe->values);
    pe->values = NULL;
}

/* Parse one line against the defs. 0, or -1 with the reason in why. */
static int parse_line(db_ctx *c, const char *line, size_t len, parsed *pe, char *why,
                      size_t whylen)
{
    memset(pe, 0, sizeof *pe);
    kv top[8], eng[8];
    size_t ntop, neng;
    if (scan_object(line, line + len, top, 8, &ntop) != 0) {
        snprintf(why, whylen, "not a JSON object of the export form");
        return -1;
    }
    const kv *type = get(top, ntop, "type"), *dbid = get(top, ntop, "dbid"),
             *engine = get(top, ntop, "engine"), *props = get(top, ntop, "props"),
             *al = get(top, ntop, "autoload");
    if (!type || !dbid || !props || type->vallen < 2 || type->val[0] != '"' ||
        type->vallen > 300) {
        snprintf(why, whylen, "needs \"type\", \"dbid\" and \"props\"");
        return -1;
    }
    char tname[300];
    snprintf(tname, sizeof tname, "%.*s", (int)(type->vallen - 2), type->val + 1);
    const mc_entity_type_def *t = mc_defs_type_by_name(c->defs, tname);
    if (!t) {
        snprintf(why, whylen, "type %s is not in the defs", tname);
        return -1;
    }
    uint64_t id = 0;
    char num[32];
    if (dbid->vallen >= sizeof num) {
        snprintf(why, whylen, "bad dbid");
        return -1;
    }
    memcpy(num, dbid->val, dbid->vallen);
    num[dbid->vallen] = '\0';
    char *endp;
    id = strtoull(num, &endp, 10);
    if (*endp || id == 0 || num[0] == '-') {
        snprintf(why, whylen, "bad dbid %s", num);
        return -1;
    }
    pe->e.type = t;
    pe->e.dbid = id;
    pe->autoload = al && al->vallen == 4 && memcmp(al->val, "true", 4) == 0;
    if (engine) {
        if (scan_object(engine->val, engine->val + engine->vallen, eng, 8, &neng) != 0) {
            snprintf(why, whylen, "bad engine object");
            return -1;
        }
        const kv *pos = get(eng, neng, "position"), *dir = get(eng, neng, "direction"),
                 *sp = get(eng, neng, "spaceId");
        if ((pos && mc_persist_vec3_parse(pos->val, pos->vallen, pe->e.engine.position)) ||
            (dir && mc_persist_vec3_parse(dir->val, dir->vallen, pe->e.engine.direction)) ||
            (sp && mc_persist_int_parse(sp->val, sp->vallen, &pe->e.engine.space_id))) {
            snprintf(why, whylen, "bad engine fields");
            return -1;
        }
    }
    pe->values = calloc(t->nprops ? t->nprops : 1, sizeof *pe->values);
    if (!pe->values) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < t->nprops; i++)
        if (mc_value_copy(&pe->values[i], &t->props[i].default_value) != 0) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
    pe->e.values = pe->values;
    uint16_t *idx;
    mc_value *vals;
    size_t count;
    if (mc_json_to_props(c->defs, t, props->val, props->vallen, &idx, &vals, &count, why,
                         whylen) != 0)
        return -1;
    for (size_t i = 0; i < count; i++) {
        mc_value_free(&pe->values[idx[i]]);
        pe->values[idx[i]] = vals[i];
        memset(&vals[i], 0, sizeof vals[i]);
    }
    mc_json_props_free(idx, vals, count);
    return 0;
}

int db_cmd_import(db_ctx *c, int argc, char **argv)
{
    bool replace = false;
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--replace") == 0)
            replace = true;
        else if (!path)
            path = argv[i];
        else {
            fprintf(stderr, "mc-db: usage: import [--replace] [FILE]\n");
            return DB_EXIT_USAGE;
        }
    }
    FILE *in = path ? fopen(path, "r") : stdin;
    if (!in) {
        fprintf(stderr, "mc-db: import: cannot open %s\n", path);
        return DB_EXIT_USAGE;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    uint64_t lineno = 0, ok = 0, failed = 0;
    int rc = DB_EXIT_OK;
    while ((len = getline(&line, &cap, in)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0)
            continue;
        char why[512];
        parsed pe;
        if ((size_t)len > MAX_LINE || parse_line(c, line, (size_t)len, &pe, why, sizeof why)) {
            fprintf(stderr, "mc-db: import line %llu: %s\n", (unsigned long long)lineno,
                    (size_t)len > MAX_LINE ? "too long" : why);
            parsed_free(&pe);
            failed++;
            continue;
        }
        db_res r = {0};
        mc_persist_import(c->store, &pe.e, replace, db_cb(), &r);
        db_wait(c, &r);
        if (r.st == MC_PERSIST_OK && pe.autoload) {
            db_res a = {0};
            mc_persist_set_autoload(c->store, pe.e.type, pe.e.dbid, true, db_cb(), &a);
            db_wait(c, &a);
            if (a.st != MC_PERSIST_OK) {
                r.st = a.st;
                snprintf(r.reason, sizeof r.reason, "autoload: %.400s", a.reason);
            }
            db_res_free(&a);
        }
        if (r.st == MC_PERSIST_OK) {
            ok++;
        } else {
            fprintf(stderr, "mc-db: import line %llu (%s %llu): %s\n",
                    (unsigned long long)lineno, pe.e.type->name,
                    (unsigned long long)pe.e.dbid, r.reason);
            failed++;
            if (db_exit_for(r.st) == DB_EXIT_UNAVAILABLE) {
                rc = DB_EXIT_UNAVAILABLE;
                db_res_free(&r);
                parsed_free(&pe);
                break;
            }
        }
        db_res_free(&r);
        parsed_free(&pe);
    }
    free(line);
    if (path)
        fclose(in);
    fprintf(c->out, "imported %llu entities, %llu failed\n", (unsigned long long)ok,
            (unsigned long long)failed);
    if (rc == DB_EXIT_OK && failed)
        rc = DB_EXIT_FAILED;
    return rc;
}
