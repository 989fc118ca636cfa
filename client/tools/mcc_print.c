/* mc-client's output lines (mcc_print.h). */
#include "mcc_print.h"

#include "common/value_json.h"

#include <stdlib.h>
#include <string.h>

static const char *type_name(const mcc_printer *p, uint16_t type)
{
    const mc_entity_type_def *td = mc_defs_type(p->defs, type);
    return td ? td->name : "?";
}

/* A JSON string literal of text (escaped). */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

/* {"name":value,...} of n properties. */
static void put_props(FILE *f, const mc_def_property *const *props, const mc_value *vals,
                      size_t n)
{
    fputc('{', f);
    for (size_t i = 0; i < n; i++) {
        char *j = mc_value_to_json(props[i]->type, &vals[i]);
        fprintf(f, "%s\"%s\":%s", i ? "," : "", props[i]->name, j ? j : "null");
        free(j);
    }
    fputc('}', f);
}

static void put_vec(const mcc_printer *p, const char *key, mc_vector3 v)
{
    if (p->json)
        fprintf(p->out, ",\"%s\":[%g,%g,%g]", key, v.x, v.y, v.z);
    else
        fprintf(p->out, " %s %g %g %g", key, v.x, v.y, v.z);
}

void mcc_print_player(const mcc_printer *p, const mc_cw_player *pl)
{
    const mc_entity_type_def *td = mc_defs_type(p->defs, pl->type);
    const mc_def_property *props[256];
    size_t n = 0;
    for (size_t i = 0; td && i < pl->n && n < 256; i++)
        if (pl->indices[i] < td->nprops)
            props[n++] = &td->props[pl->indices[i]];
    if (p->json)
        fprintf(p->out, "{\"event\":\"player\",\"id\":%d,\"type\":\"%s\",\"props\":", (int)pl->id,
                type_name(p, pl->type));
    else
        fprintf(p->out, "player %d %s ", (int)pl->id, type_name(p, pl->type));
    put_props(p->out, props, pl->values, n);
    fputs(p->json ? "}\n" : "\n", p->out);
    fflush(p->out);
}

void mcc_print_call(const mcc_printer *p, int32_t id, uint16_t type, const mc_def_method *m,
                    const mc_value *args)
{
    char *j = mc_json_from_values(m->args, m->nargs, args);
    if (p->json)
        fprintf(p->out, "{\"event\":\"call\",\"id\":%d,\"type\":\"%s\",\"method\":\"%s\","
                        "\"args\":%s}\n",
                (int)id, type_name(p, type), m->name, j ? j : "null");
    else
        fprintf(p->out, "call %d %s.%s %s\n", (int)id, type_name(p, type), m->name,
                j ? j : "?");
    free(j);
    fflush(p->out);
}

void mcc_print_property(const mcc_printer *p, int32_t id, uint16_t type,
                        const mc_def_property *prop, const mc_value *v)
{
    char *j = mc_value_to_json(prop->type, v);
    if (p->json)
        fprintf(p->out, "{\"event\":\"property\",\"id\":%d,\"type\":\"%s\",\"name\":\"%s\","
                        "\"value\":%s}\n",
                (int)id, type_name(p, type), prop->name, j ? j : "null");
    else
        fprintf(p->out, "property %d %s.%s %s\n", (int)id, type_name(p, type), prop->name,
                j ? j : "?");
    free(j);
    fflush(p->out);
}

void mcc_print_world(const mcc_printer *p, const mc_world_record *r, uint16_t type)
{
    if (r->kind == MC_WORLD_CALL && r->method) {
        mcc_print_call(p, r->id, type, r->method, r->values);
        return;
    }
    static const char *const names[] = {"?", "enter", "leave", "props", "moved", "call",
                                        "correction"};
    const char *ev = r->kind >= 1 && r->kind <= 6 ? names[r->kind] : "?";
    if (p->json)
        fprintf(p->out, "{\"event\":\"%s\",\"id\":%d", ev, (int)r->id);
    else
        fprintf(p->out, "%s %d", ev, (int)r->id);
    switch (r->kind) {
    case MC_WORLD_ENTER:
        if (p->json)
            fprintf(p->out, ",\"type\":\"%s\"", type_name(p, r->type));
        else
            fprintf(p->out, " %s", type_name(p, r->type));
        put_vec(p, p->json ? "position" : "at", r->position);
        put_vec(p, p->json ? "direction" : "facing", r->direction);
        fputs(p->json ? ",\"props\":" : " ", p->out);
        put_props(p->out, r->props, r->values, r->n);
        break;
    case MC_WORLD_PROPS:
        fputs(p->json ? ",\"props\":" : " ", p->out);
        put_props(p->out, r->props, r->values, r->n);
        break;
    case MC_WORLD_VOLATILE:
    case MC_WORLD_CORRECTION:
        put_vec(p, p->json ? "position" : "to", r->position);
        put_vec(p, p->json ? "direction" : "facing", r->direction);
        break;
    default:
        break;
    }
    fputs(p->json ? "}\n" : "\n", p->out);
    fflush(p->out);
}

void mcc_print_end(const mcc_printer *p, int how, int reason, const char *text)
{
    const char *why = how == MC_CLIENT_END_DISCONNECTED ? mc_cw_bye_name(reason) : "";
    if (p->json) {
        fprintf(p->out, "{\"event\":\"end\",\"how\":\"%s\",\"reason\":\"%s\",\"text\":",
                mc_client_end_name(how), why);
        put_string(p->out, text ? text : "");
        fputs("}\n", p->out);
    } else {
        fprintf(p->out, "end %s%s%s: %s\n", mc_client_end_name(how), *why ? " " : "", why,
                text ? text : "");
    }
    fflush(p->out);
}

void mcc_print_info(const mcc_printer *p, const char *event, const char *text)
{
    if (p->json) {
        fprintf(p->out, "{\"event\":\"%s\",\"text\":", event);
        put_string(p->out, text);
        fputs("}\n", p->out);
    } else {
        fprintf(p->out, "%s %s\n", event, text);
    }
    fflush(p->out);
}
