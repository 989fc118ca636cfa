/* Schema records and entity hash decoding: pure functions (see persist/schema.h). */
#include "persist/schema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/value_json.h"

char *mc_persist_type_text(const mc_def_property *p) { return mc_def_type_describe(p->type); }

static int push(char ***list, size_t *n, char *s)
{
    if (!s)
        return -1;
    char **grown = realloc(*list, (*n + 1) * sizeof **list);
    if (!grown) {
        free(s);
        return -1;
    }
    grown[(*n)++] = s;
    *list = grown;
    return 0;
}

static const mc_def_property *persistent_prop(const mc_entity_type_def *t, const char *name,
                                              size_t len)
{
    for (size_t i = 0; i < t->nprops; i++) {
        const mc_def_property *p = &t->props[i];
        if (p->persistent && strlen(p->name) == len && memcmp(p->name, name, len) == 0)
            return p;
    }
    return NULL;
}

void mc_persist_schema_diff_free(mc_persist_schema_diff *d)
{
    for (size_t i = 0; i < d->nadded; i++)
        free(d->added[i]);
    for (size_t i = 0; i < d->nremoved; i++)
        free(d->removed[i]);
    for (size_t i = 0; i < d->nchanged; i++)
        free(d->changed[i]);
    free(d->added);
    free(d->removed);
    free(d->changed);
    memset(d, 0, sizeof *d);
}

/* Printable form of untrusted bytes for a report (non-printable bytes as '?', cut at 200). */
static char *printable(const char *s, size_t len)
{
    if (len > 200)
        len = 200;
    char *c = malloc(len + 1);
    if (!c)
        return NULL;
    for (size_t i = 0; i < len; i++)
        c[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    c[len] = '\0';
    return c;
}

int mc_persist_schema_compare(const mc_entity_type_def *t, const mc_persist_field *stored,
                              size_t n, mc_persist_schema_diff *d)
{
    memset(d, 0, sizeof *d);
    for (size_t i = 0; i < n; i++) {
        const mc_persist_field *f = &stored[i];
        const mc_def_property *p = persistent_prop(t, f->name, f->name_len);
        if (!p) {
            if (push(&d->removed, &d->nremoved, printable(f->name, f->name_len)) != 0)
                goto fail;
            continue;
        }
        char *now = mc_persist_type_text(p);
        if (!now)
            goto fail;
        if (strlen(now) != f->value_len || memcmp(now, f->value, f->value_len) != 0) {
            char *was = printable(f->value, f->value_len);
            size_t len = strlen(t->name) + strlen(p->name) + (was ? strlen(was) : 0) +
                         strlen(now) + 32;
            char *line = malloc(len);
            if (line && was)
                snprintf(line, len, "%s.%s: stored %s, now %s", t->name, p->name, was, now);
            free(was);
            free(now);
            if (!was) {
                free(line);
                goto fail;
            }
            if (push(&d->changed, &d->nchanged, line) != 0)
                goto fail;
        } else {
            free(now);
        }
    }
    for (size_t i = 0; i < t->nprops; i++) {
        const mc_def_property *p = &t->props[i];
        if (!p->persistent)
            continue;
        bool seen = false;
        size_t len = strlen(p->name);
        for (size_t j = 0; j < n && !seen; j++)
            seen = stored[j].name_len == len && memcmp(stored[j].name, p->name, len) == 0;
        if (!seen && push(&d->added, &d->nadded, strdup(p->name)) != 0)
            goto fail;
    }
    return 0;
fail:
    mc_persist_schema_diff_free(d);
    return -1;
}

static int append(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t sl = strlen(s);
    if (*len + sl + 1 > *cap) {
        size_t nc = (*cap ? *cap * 2 : 128) + sl;
        char *g = realloc(*buf, nc);
        if (!g)
            return -1;
        *buf = g;
        *cap = nc;
    }
    memcpy(*buf + *len, s, sl + 1);
    *len += sl;
    return 0;
}

static int append_list(char **buf, size_t *len, size_t *cap, const char *label,
                       char *const *items, size_t n, bool *first)
{
    if (n == 0)
        return 0;
    if (!*first && append(buf, len, cap, "; ") != 0)
        return -1;
    *first = false;
    if (append(buf, len, cap, label) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (append(buf, len, cap, i ? ", " : "") != 0 || append(buf, len, cap, items[i]) != 0)
            return -1;
    return 0;
}

char *mc_persist_schema_diff_text(const mc_persist_schema_diff *d)
{
    if (d->nadded + d->nremoved + d->nchanged == 0)
        return strdup("ok");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    bool first = true;
    if (append_list(&buf, &len, &cap, "changed: ", d->changed, d->nchanged, &first) != 0 ||
        append_list(&buf, &len, &cap, "added: ", d->added, d->nadded, &first) != 0 ||
        append_list(&buf, &len, &cap, "removed: ", d->removed, d->nremoved, &first) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

int mc_persist_vec3_text(const float v[3], char *buf, size_t buflen)
{
    int n = snprintf(buf, buflen, "[%.9g,%.9g,%.9g]", (double)v[0], (double)v[1], (double)v[2]);
    return (n < 0 || (size_t)n >= buflen) ? -1 : 0;
}

int mc_persist_vec3_parse(const char *text, size_t len, float out[3])
{
    char buf[256];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (memchr(buf, '\0', len))
        return -1;
    const char *p = buf;
    if (*p++ != '[')
        return -1;
    for (int i = 0; i < 3; i++) {
        char *end;
        double d = strtod(p, &end);
        if (end == p || !isfinite(d) || fabs(d) > 3.4e38)
            return -1;
        out[i] = (float)d;
        p = end;
        if (*p++ != (i < 2 ? ',' : ']'))
            return -1;
    }
    return *p == '\0' ? 0 : -1;
}

int mc_persist_int_parse(const char *text, size_t len, int64_t *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (memchr(buf, '\0', len))
        return -1;
    const char *p = buf;
    bool neg = *p == '-';
    if (neg)
        p++;
    if (!*p)
        return -1;
    uint64_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if ((!neg && v > (uint64_t)INT64_MAX) || (neg && v > (uint64_t)INT64_MAX + 1))
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

void mc_persist_record_free(mc_persist_record *rec)
{
    if (rec->values && rec->type)
        for (size_t i = 0; i < rec->type->nprops; i++)
            mc_value_free(&rec->values[i]);
    free(rec->values);
    for (size_t i = 0; i < rec->nadded; i++)
        free((char *)rec->added[i]);
    for (size_t i = 0; i < rec->nremoved; i++)
        free((char *)rec->removed[i]);
    free((void *)rec->added);
    free((void *)rec->removed);
    memset(rec, 0, sizeof *rec);
}

static int engine_field(mc_persist_record *rec, const mc_persist_field *f, char *why,
                        size_t whylen)
{
    size_t nl = f->name_len;
    if (nl == strlen(MC_PERSIST_FIELD_POSITION) &&
        memcmp(f->name, MC_PERSIST_FIELD_POSITION, nl) == 0) {
        if (mc_persist_vec3_parse(f->value, f->value_len, rec->engine.position) != 0) {
            snprintf(why, whylen, "%s.%s: not three numbers", rec->type->name,
                     MC_PERSIST_FIELD_POSITION);
            return -1;
        }
    } else if (nl == strlen(MC_PERSIST_FIELD_DIRECTION) &&
               memcmp(f->name, MC_PERSIST_FIELD_DIRECTION, nl) == 0) {
        if (mc_persist_vec3_parse(f->value, f->value_len, rec->engine.direction) != 0) {
            snprintf(why, whylen, "%s.%s: not three numbers", rec->type->name,
                     MC_PERSIST_FIELD_DIRECTION);
            return -1;
        }
    } else if (nl == strlen(MC_PERSIST_FIELD_SPACE) &&
               memcmp(f->name, MC_PERSIST_FIELD_SPACE, nl) == 0) {
        if (mc_persist_int_parse(f->value, f->value_len, &rec->engine.space_id) != 0) {
            snprintf(why, whylen, "%s.%s: not an integer", rec->type->name,
                     MC_PERSIST_FIELD_SPACE);
            return -1;
        }
    }
    /* Other '@' fields are the engine's future ones: ignored. */
    return 0;
}

int mc_persist_record_decode(const mc_entity_defs *defs, const mc_entity_type_def *t,
                             uint64_t dbid, const mc_persist_field *fields, size_t n,
                             mc_persist_record *rec, char *why, size_t whylen)
{
    memset(rec, 0, sizeof *rec);
    rec->type = t;
    rec->dbid = dbid;
    char **added = NULL, **removed = NULL;
    size_t nadded = 0, nremoved = 0;
    bool *seen = calloc(t->nprops ? t->nprops : 1, sizeof *seen);
    rec->values = calloc(t->nprops ? t->nprops : 1, sizeof *rec->values);
    if (!seen || !rec->values) {
        snprintf(why, whylen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < t->nprops; i++) {
        if (mc_value_copy(&rec->values[i], &t->props[i].default_value) != 0) {
            snprintf(why, whylen, "out of memory");
            goto fail;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const mc_persist_field *f = &fields[i];
        if (f->name_len > 0 && f->name[0] == '@') {
            if (engine_field(rec, f, why, whylen) != 0)
                goto fail;
            continue;
        }
        const mc_def_property *p = persistent_prop(t, f->name, f->name_len);
        if (!p) {
            if (push(&removed, &nremoved, printable(f->name, f->name_len)) != 0) {
                snprintf(why, whylen, "out of memory");
                goto fail;
            }
            continue;
        }
        mc_value_limits lim = mc_defs_property_limits(defs, p);
        mc_value v;
        char r[256];
        if (mc_value_from_json(p->type, f->value, f->value_len, &lim, &v, r, sizeof r) != 0) {
            snprintf(why, whylen, "%s.%s: %s", t->name, p->name, r);
            goto fail;
        }
        mc_value_free(&rec->values[p->index]);
        rec->values[p->index] = v;
        seen[p->index] = true;
    }
    for (size_t i = 0; i < t->nprops; i++) {
        if (t->props[i].persistent && !seen[i] &&
            push(&added, &nadded, strdup(t->props[i].name)) != 0) {
            snprintf(why, whylen, "out of memory");
            goto fail;
        }
    }
    free(seen);
    rec->added = (const char *const *)added;
    rec->nadded = nadded;
    rec->removed = (const char *const *)removed;
    rec->nremoved = nremoved;
    return 0;
fail:
    free(seen);
    for (size_t i = 0; i < nadded; i++)
        free(added[i]);
    for (size_t i = 0; i < nremoved; i++)
        free(removed[i]);
    free(added);
    free(removed);
    mc_persist_record_free(rec);
    return -1;
}
