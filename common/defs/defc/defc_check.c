/* defc --check: print a summary of loaded definitions. */
#include <stdio.h>
#include <stdlib.h>

#include "defc.h"

static void print_method(FILE *out, const mc_def_method *m)
{
    fprintf(out, "      %u %s(", (unsigned)m->index, m->name);
    for (size_t i = 0; i < m->nargs; i++) {
        char *d = mc_def_type_describe(m->args[i].type);
        fprintf(out, "%s%s%s%s", i ? ", " : "", m->args[i].name ? m->args[i].name : "",
                m->args[i].name ? ": " : "", d ? d : "?");
        free(d);
    }
    fprintf(out, ")");
    if (m->nreturns) {
        fprintf(out, " -> (");
        for (size_t i = 0; i < m->nreturns; i++) {
            char *d = mc_def_type_describe(m->returns[i].type);
            fprintf(out, "%s%s: %s", i ? ", " : "", m->returns[i].name, d ? d : "?");
            free(d);
        }
        fprintf(out, ")");
    }
    if (m->exposed)
        fprintf(out, " exposed %s #%d",
                m->exposed == MC_EXPOSED_ALL_CLIENTS ? "ALL_CLIENTS" : "OWN_CLIENT",
                (int)m->exposed_index);
    fprintf(out, "\n");
}

void defc_print_summary(FILE *out, const mc_entity_defs *defs)
{
    size_t nt = mc_defs_type_count(defs);
    fprintf(out, "entity types: %zu\n", nt);
    for (size_t a = 0; a < mc_defs_alias_count(defs); a++) {
        const mc_def_type *t = mc_defs_alias(defs, a);
        char *d = mc_def_type_describe(t);
        fprintf(out, "alias %s = %s\n", t->alias, d ? d : "?");
        free(d);
    }
    for (size_t i = 0; i < nt; i++) {
        const mc_entity_type_def *t = mc_defs_type(defs, (uint16_t)i);
        fprintf(out, "type %u %s (%s)", (unsigned)t->id, t->name,
                t->client_server ? "client-server" : "server-only");
        if (t->parent)
            fprintf(out, " parent %s", t->parent);
        for (size_t k = 0; k < t->ninterfaces; k++)
            fprintf(out, "%s%s", k ? ", " : " implements ", t->interfaces[k]);
        fprintf(out, "\n  properties: %zu (base %zu, cell %zu, client %zu)\n", t->nprops,
                t->nparts_props[MC_PART_BASE], t->nparts_props[MC_PART_CELL],
                t->nparts_props[MC_PART_CLIENT]);
        for (size_t k = 0; k < t->nprops; k++) {
            const mc_def_property *p = &t->props[k];
            char *d = mc_def_type_describe(p->type);
            char *v = mc_value_to_text(&p->default_value);
            fprintf(out, "    %u %s: %s %s%s%s%s default %s\n", (unsigned)p->index, p->name,
                    d ? d : "?", mc_prop_flags_name(p->flags), p->persistent ? " persistent" : "",
                    p->identifier ? " identifier" : "", p->indexed ? " indexed" : "",
                    v ? v : "?");
            free(d);
            free(v);
        }
        if (t->ntemp) {
            fprintf(out, "  temporary properties:");
            for (size_t k = 0; k < t->ntemp; k++)
                fprintf(out, " %s", t->temp_props[k]);
            fprintf(out, "\n");
        }
        const mc_def_volatile *vo = &t->volatile_info;
        if (vo->position || vo->yaw || vo->pitch || vo->roll)
            fprintf(out, "  volatile:%s%s%s%s\n", vo->position ? " position" : "",
                    vo->yaw ? " yaw" : "", vo->pitch ? " pitch" : "", vo->roll ? " roll" : "");
        for (int part = 0; part < MC_PART_COUNT; part++) {
            fprintf(out, "  %s methods: %zu (exposed %zu)\n", mc_part_name((mc_part)part),
                    t->nmethods[part], t->nexposed[part]);
            for (size_t k = 0; k < t->nmethods[part]; k++)
                print_method(out, &t->methods[part][k]);
        }
    }
    fprintf(out, "digest: %s\n", mc_defs_digest_hex(defs));
}
