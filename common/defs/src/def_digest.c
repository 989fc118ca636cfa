/* The digest: BLAKE2b-256 (libsodium crypto_generichash) over a normalised text of the
 * flattened definitions; see docs/DEFS.md for the exact text. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "defs_internal.h"
#include "strbuf.h"

static void add_type(strbuf *t, const mc_def_type *ty)
{
    char *d = mc_def_type_describe(ty);
    if (!d) {
        t->failed = true;
        return;
    }
    strbuf_add(t, "%s", d);
    free(d);
}

static void add_args(strbuf *t, const char *label, const mc_def_arg *as, size_t n)
{
    strbuf_add(t, " %s(", label);
    for (size_t i = 0; i < n; i++) {
        strbuf_add(t, "%s%s:", i ? "," : "", as[i].name ? as[i].name : "");
        add_type(t, as[i].type);
    }
    strbuf_add(t, ")");
}

int compute_digest(mc_entity_defs *d)
{
    strbuf t = {0};
    strbuf_add(&t, "mercury-defs 1\n");
    for (size_t i = 0; i < d->ntypes; i++) {
        const mc_entity_type_def *et = &d->types[i];
        strbuf_add(&t, "type %u %s client=%d\n", (unsigned)et->id, et->name,
                   et->client_server ? 1 : 0);
        for (size_t k = 0; k < et->nprops; k++) {
            const mc_def_property *p = &et->props[k];
            strbuf_add(&t, " prop %u %s ", (unsigned)p->index, p->name);
            add_type(&t, p->type);
            strbuf_add(&t, " %s persistent=%d identifier=%d indexed=%d dblen=%u default=",
                       mc_prop_flags_name(p->flags), p->persistent, p->identifier, p->indexed,
                       p->db_length);
            mc_ostream os;
            mc_ostream_init(&os);
            char why[160];
            if (mc_value_encode(p->type, &p->default_value, NULL, &os, why, sizeof(why)) != 0)
                t.failed = true;
            for (size_t b = 0; b < os.size; b++)
                strbuf_add(&t, "%02x", os.data[b]);
            mc_ostream_free(&os);
            strbuf_add(&t, "\n");
        }
        for (size_t k = 0; k < et->ntemp; k++)
            strbuf_add(&t, " temp %s\n", et->temp_props[k]);
        const mc_def_volatile *v = &et->volatile_info;
        strbuf_add(&t, " volatile");
        if (v->position)
            strbuf_add(&t, " position=%.9g", v->position_dist);
        if (v->yaw)
            strbuf_add(&t, " yaw=%.9g", v->yaw_dist);
        if (v->pitch)
            strbuf_add(&t, " pitch=%.9g", v->pitch_dist);
        if (v->roll)
            strbuf_add(&t, " roll=%.9g", v->roll_dist);
        strbuf_add(&t, "\n");
        for (int part = 0; part < MC_PART_COUNT; part++)
            for (size_t k = 0; k < et->nmethods[part]; k++) {
                const mc_def_method *m = &et->methods[part][k];
                strbuf_add(&t, " method %s %u %s exposed=%d/%d", mc_part_name((mc_part)part),
                           (unsigned)m->index, m->name, (int)m->exposed, (int)m->exposed_index);
                add_args(&t, "args", m->args, m->nargs);
                add_args(&t, "returns", m->returns, m->nreturns);
                strbuf_add(&t, "\n");
            }
    }
    if (!strbuf_finish(&t))
        return -1;
    crypto_generichash(d->digest, sizeof(d->digest), (const unsigned char *)t.buf, t.len, NULL,
                       0);
    sodium_bin2hex(d->digest_hex, sizeof(d->digest_hex), d->digest, sizeof(d->digest));
    d->normalised = t.buf;
    return 0;
}
