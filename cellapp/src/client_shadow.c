/* The encodings clients were last sent of a cell entity's properties (client_shadow.h). */
#include "client_shadow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reaches_a_client(const mc_def_property *p)
{
    return p->part_index[MC_PART_CELL] >= 0 && (p->other_clients || p->own_client);
}

static int encode(const mc_entity_defs *defs, const mc_entity *ent, uint16_t index,
                  mc_ostream *scratch, char *why, size_t whylen)
{
    mc_ostream_reset(scratch);
    int rc = ent->gt->props_encode_one(defs, MC_PART_CELL, ent->props, index, scratch, why,
                                       whylen);
    if (rc == 0 && !mc_ostream_ok(scratch)) {
        snprintf(why, whylen, "out of memory");
        rc = -1;
    }
    return rc;
}

client_shadow *client_shadow_new(const mc_entity_defs *defs, const mc_entity *ent,
                                 mc_ostream *scratch, char *why, size_t whylen)
{
    client_shadow *s = calloc(1, sizeof *s);
    size_t n = 0;
    for (size_t i = 0; i < ent->td->nprops; i++)
        n += reaches_a_client(&ent->td->props[i]);
    if (!s || (n && !(s->props = calloc(n, sizeof *s->props)))) {
        free(s);
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < ent->td->nprops; i++) {
        const mc_def_property *p = &ent->td->props[i];
        if (!reaches_a_client(p))
            continue;
        client_shadow_prop *sp = &s->props[s->n++];
        sp->index = p->index;
        sp->other = p->other_clients;
        sp->own = p->own_client;
        char w[200];
        if (encode(defs, ent, p->index, scratch, w, sizeof w) != 0 ||
            !(sp->bytes = malloc(scratch->size ? scratch->size : 1))) {
            snprintf(why, whylen, "%s.%s: %s", ent->td->name, p->name, w);
            client_shadow_free(s);
            return NULL;
        }
        memcpy(sp->bytes, scratch->data, scratch->size);
        sp->len = (uint32_t)scratch->size;
        if (sp->other) {
            s->n_other++;
            s->other_bytes += sp->len;
        }
    }
    return s;
}

void client_shadow_free(client_shadow *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->props[i].bytes);
    free(s->props);
    free(s);
}

int client_shadow_diff(client_shadow *s, const mc_entity_defs *defs, const mc_entity *ent,
                       mc_ostream *scratch, char *why, size_t whylen)
{
    int changed = 0;
    for (size_t i = 0; i < s->n; i++) {
        client_shadow_prop *sp = &s->props[i];
        if (encode(defs, ent, sp->index, scratch, why, whylen) != 0)
            return -1;
        if (scratch->size == sp->len && memcmp(scratch->data, sp->bytes, sp->len) == 0)
            continue;
        uint8_t *b = sp->len == scratch->size ? sp->bytes
                                              : realloc(sp->bytes, scratch->size ? scratch->size : 1);
        if (!b) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        if (sp->other)
            s->other_bytes = s->other_bytes - sp->len + scratch->size;
        memcpy(b, scratch->data, scratch->size);
        sp->bytes = b;
        sp->len = (uint32_t)scratch->size;
        sp->changed = ++s->seq;
        changed++;
    }
    return changed;
}
