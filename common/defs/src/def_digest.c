/* The digest: BLAKE2b-256 (libsodium crypto_generichash) over a normalised text of the
 * flattened definitions; see docs/DEFS.md for the exact text. */
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "defs_internal.h"

typedef struct {
    char *buf;
    size_t len, cap;
    bool failed;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->failed = true;
        return;
    }
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 4096;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *p = realloc(t->buf, cap);
        if (!p) {
            t->failed = true;
            return;
        }
        t->buf = p;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static void add_type(text *t, const mc_def_type *ty)
{
    char *d = mc_def_type_describe(ty);
    if (!d) {
        t->failed = true;
        return;
    }
    add(t, "%s", d);
    free(d);
}

static void add_args(text *t, const char *label, const mc_def_arg *as, size_t n)
{
    add(t, " %s(", label);
    for (size_t i = 0; i < n; i++) {
        add(t, "%s%s:", i ? "," : "", as[i].name ? as[i].name : "");
        add_type(t, as[i].type);
    }
    add(t, ")");
}

int compute_digest(mc_entity_defs *d)
{
    text t = {0};
    add(&t, "mercury-defs 1\n");
    for (size_t i = 0; i < d->ntypes; i++) {
        const mc_entity_type_def *et = &d->types[i];
        add(&t, "type %u %s client=%d\n", (unsigned)et->id, et->name, et->client_server ? 1 : 0);
        for (size_t k = 0; k < et->nprops; k++) {
            const mc_def_property *p = &et->props[k];
            add(&t, " prop %u %s ", (unsigned)p->index, p->name);
            add_type(&t, p->type);
            add(&t, " %s persistent=%d identifier=%d indexed=%d dblen=%u default=",
                mc_prop_flags_name(p->flags), p->persistent, p->identifier, p->indexed,
                p->db_length);
            mc_ostream os;
            mc_ostream_init(&os);
            char why[160];
            if (mc_value_encode(p->type, &p->default_value, NULL, &os, why, sizeof(why)) != 0)
                t.failed = true;
            for (size_t b = 0; b < os.size; b++)
                add(&t, "%02x", os.data[b]);
            mc_ostream_free(&os);
            add(&t, "\n");
        }
        for (size_t k = 0; k < et->ntemp; k++)
            add(&t, " temp %s\n", et->temp_props[k]);
        const mc_def_volatile *v = &et->volatile_info;
        add(&t, " volatile");
        if (v->position)
            add(&t, " position=%.9g", v->position_dist);
        if (v->yaw)
            add(&t, " yaw=%.9g", v->yaw_dist);
        if (v->pitch)
            add(&t, " pitch=%.9g", v->pitch_dist);
        if (v->roll)
            add(&t, " roll=%.9g", v->roll_dist);
        add(&t, "\n");
        for (int part = 0; part < MC_PART_COUNT; part++)
            for (size_t k = 0; k < et->nmethods[part]; k++) {
                const mc_def_method *m = &et->methods[part][k];
                add(&t, " method %s %u %s exposed=%d/%d", mc_part_name((mc_part)part),
                    (unsigned)m->index, m->name, (int)m->exposed, (int)m->exposed_index);
                add_args(&t, "args", m->args, m->nargs);
                add_args(&t, "returns", m->returns, m->nreturns);
                add(&t, "\n");
            }
    }
    if (t.failed) {
        free(t.buf);
        return -1;
    }
    crypto_generichash(d->digest, sizeof(d->digest), (const unsigned char *)t.buf, t.len, NULL,
                       0);
    sodium_bin2hex(d->digest_hex, sizeof(d->digest_hex), d->digest, sizeof(d->digest));
    d->normalised = t.buf;
    return 0;
}
