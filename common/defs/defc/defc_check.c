/* defc --check: print a summary of loaded definitions; the checks generation needs beyond
 * the loader's (engine callback methods, C names and their collisions). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- C names, engine callbacks and identifier collisions (checked before generating). */

const char *defc_cname(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", name[0] == '_' ? "defc" : "", name);
    return buf;
}

const defc_hook defc_hooks[] = {
    {"onCreated", "on_created", 1u << MC_PART_BASE | 1u << MC_PART_CELL, DEFC_HOOK_PLAIN},
    {"onDestroy", "on_destroy", 1u << MC_PART_BASE | 1u << MC_PART_CELL, DEFC_HOOK_PLAIN},
    {"onGetCell", "on_get_cell", 1u << MC_PART_BASE, DEFC_HOOK_PLAIN},
    {"onLoseCell", "on_lose_cell", 1u << MC_PART_BASE, DEFC_HOOK_PLAIN},
    {"onCreateCellFailure", "on_create_cell_failure", 1u << MC_PART_BASE, DEFC_HOOK_REASON},
    {"onSpaceGone", "on_space_gone", 1u << MC_PART_CELL, DEFC_HOOK_PLAIN},
    {"onTimer", "on_timer", 1u << MC_PART_BASE | 1u << MC_PART_CELL, DEFC_HOOK_TIMER},
    {"onEnteredAoI", "on_entered_aoi", 1u << MC_PART_CELL, DEFC_HOOK_ENTITY},
    {"onLeftAoI", "on_left_aoi", 1u << MC_PART_CELL, DEFC_HOOK_ENTITY_ID},
    {"onClientDeath", "on_client_death", 1u << MC_PART_BASE, DEFC_HOOK_PLAIN},
    {"onEntitiesEnabled", "on_entities_enabled", 1u << MC_PART_BASE, DEFC_HOOK_PLAIN},
    {"onClientResumed", "on_client_resumed", 1u << MC_PART_BASE, DEFC_HOOK_PLAIN},
    {"onTeleportFailure", "on_teleport_failure", 1u << MC_PART_CELL, DEFC_HOOK_STATUS},
    {"onRestoreCell", "on_restore_cell", 1u << MC_PART_BASE, DEFC_HOOK_PLAIN},
    {"onRestore", "on_restore", 1u << MC_PART_BASE, DEFC_HOOK_PLAIN},
};
const size_t defc_nhooks = sizeof(defc_hooks) / sizeof(defc_hooks[0]);

const mc_def_method *defc_hook_method(const mc_entity_type_def *t, int part, const defc_hook *h)
{
    if (!(h->parts & (1u << part)))
        return NULL;
    return mc_defs_method_by_name(t, (mc_part)part, h->name);
}

static bool hook_args_fit(const mc_def_method *m, defc_hook_shape shape)
{
    if (m->nreturns)
        return false;
    switch (shape) {
    case DEFC_HOOK_PLAIN: return m->nargs == 0;
    case DEFC_HOOK_REASON:
        return m->nargs == 1 && (m->args[0].type->kind == MC_TYPE_STRING ||
                                 m->args[0].type->kind == MC_TYPE_UNICODE_STRING);
    case DEFC_HOOK_ENTITY:
        return m->nargs == 1 && m->args[0].type->kind == MC_TYPE_MAILBOX;
    case DEFC_HOOK_ENTITY_ID:
    case DEFC_HOOK_STATUS:
        return m->nargs == 1 && m->args[0].type->kind == MC_TYPE_INT32;
    case DEFC_HOOK_TIMER: {
        if (m->nargs != 2)
            return false;
        mc_type_kind k = m->args[0].type->kind;
        return (k == MC_TYPE_UINT32 || k == MC_TYPE_INT64 || k == MC_TYPE_UINT64) &&
               m->args[1].type->kind == MC_TYPE_INT64;
    }
    }
    return false;
}

static const char *const hook_rules[] = {
    [DEFC_HOOK_PLAIN] = "none, and no ReturnValues",
    [DEFC_HOOK_REASON] = "one STRING or UNICODE_STRING (the reason), and no ReturnValues",
    [DEFC_HOOK_TIMER] = ("the timer id (UINT32, INT64 or UINT64) then the user argument "
                         "(INT64), and no ReturnValues"),
    [DEFC_HOOK_ENTITY] = "one MAILBOX (the entity), and no ReturnValues",
    [DEFC_HOOK_ENTITY_ID] = "one INT32 (the entity's id), and no ReturnValues",
    [DEFC_HOOK_STATUS] = "one INT32 (the reason), and no ReturnValues",
};

static size_t check_hooks(FILE *out, const mc_entity_type_def *t)
{
    size_t bad = 0;
    for (int part = MC_PART_BASE; part <= MC_PART_CELL; part++)
        for (size_t i = 0; i < defc_nhooks; i++) {
            const mc_def_method *m = defc_hook_method(t, part, &defc_hooks[i]);
            if (!m || hook_args_fit(m, defc_hooks[i].shape))
                continue;
            fprintf(out, "%s:%d: <%s>: %s is an engine callback: its arguments must be %s\n",
                    m->file, m->line, m->name, m->name, hook_rules[defc_hooks[i].shape]);
            bad++;
        }
    return bad;
}

/* One generated global identifier (or file name) and what produces it. */
typedef struct {
    char *id;
    bool macro;
    const char *file; /* NULL: defc's own */
    int line;
    const char *elem;
    char *what;
    size_t seq;
} gen_ident;

typedef struct {
    gen_ident *v;
    size_t n, cap;
    bool oom;
} ident_set;

typedef struct {
    const char *file;
    int line;
    const char *elem;
} ident_src;

static void ident_add(ident_set *s, bool macro, ident_src src, const char *id, const char *what)
{
    if (s->oom)
        return;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 256;
        gen_ident *p = realloc(s->v, nc * sizeof(*p));
        if (!p) {
            s->oom = true;
            return;
        }
        s->v = p;
        s->cap = nc;
    }
    gen_ident *g = &s->v[s->n];
    g->id = strdup(id);
    g->what = strdup(what);
    if (!g->id || !g->what) {
        free(g->id);
        free(g->what);
        s->oom = true;
        return;
    }
    g->macro = macro;
    g->file = src.file;
    g->line = src.line;
    g->elem = src.elem;
    g->seq = s->n++;
}

static void ident_set_free(ident_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].id);
        free(s->v[i].what);
    }
    free(s->v);
}

static int ident_cmp(const void *a, const void *b)
{
    const gen_ident *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const gen_ident *ident_find(const ident_set *sorted, const char *id)
{
    size_t lo = 0, hi = sorted->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(sorted->v[mid].id, id);
        if (c == 0) {
            while (mid > 0 && !strcmp(sorted->v[mid - 1].id, id))
                mid--;
            return &sorted->v[mid];
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const char *const gen_part_tags[MC_PART_COUNT] = {"base", "cell", "client"};

#define IDF(...) (snprintf(id, sizeof(id), __VA_ARGS__), id)

static void add_fixed_idents(ident_set *s)
{
    static const char *const fixed[] = {
        "defc_types", "defc_module", "defc_client_types", "defc_client_module",
        "defc_hooks_init", "mc_game_module_get", "mc_game_client_get",
    };
    ident_src src = {NULL, 0, NULL};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        ident_add(s, false, src, fixed[i], "generated table code");
    ident_add(s, true, src, "MC_GEN_GAME_H", "game.h's include guard");
    ident_add(s, true, src, "MC_GEN_GAME_VALUES_H", "game_values.h's include guard");
    ident_add(s, true, src, "MC_GAME_DIGEST", "game.h");
    static const char *const files[] = {"game.h", "game_module.c", "game_types.c",
                                        "game_client.c", "game_values.h", "game_values.c"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        ident_add(s, false, src, files[i], "a generated file");
}

static void add_type_idents(ident_set *s, const mc_entity_type_def *t)
{
    char id[512], what[512];
    ident_src src = {t->file, 0, t->name};
    snprintf(what, sizeof(what), "a file of entity type %s", t->name);
    ident_add(s, false, src, IDF("%s.h", t->name), what);
    ident_add(s, false, src, IDF("%s.c", t->name), what);
    snprintf(what, sizeof(what), "a macro of entity type %s", t->name);
    ident_add(s, true, src, IDF("MC_GEN_%s_H", t->name), what);
    ident_add(s, true, src, IDF("%s_TYPE_ID", t->name), what);
    for (int part = 0; part < MC_PART_COUNT; part++) {
        const char *pt = gen_part_tags[part];
        snprintf(what, sizeof(what), "the %s property struct of entity type %s", pt, t->name);
        ident_add(s, false, src, IDF("%s_%s", t->name, pt), what);
        static const char *const fns[] = {"init", "free", "encode", "decode"};
        for (size_t k = 0; k < 4; k++) {
            snprintf(what, sizeof(what), "a %s property function of entity type %s", pt,
                     t->name);
            ident_add(s, false, src, IDF("%s_%s_%s", fns[k], t->name, pt), what);
        }
    }
    static const char *const regs[] = {"props_init", "props_encode", "props_decode",
                                       "props_free", "hooks", "base_methods", "cell_methods"};
    snprintf(what, sizeof(what), "a registration piece of entity type %s", t->name);
    for (size_t k = 0; k < sizeof(regs) / sizeof(regs[0]); k++)
        ident_add(s, false, src, IDF("mc_gen_%s_%s", t->name, regs[k]), what);
    snprintf(what, sizeof(what), "the client method table of entity type %s", t->name);
    ident_add(s, false, src, IDF("defc_%s_client_methods", t->name), what);
}

static void add_method_idents(ident_set *s, const mc_entity_type_def *t, const mc_def_method *m)
{
    char id[512], what[512], mn[80];
    const char *pt = gen_part_tags[m->part];
    const char *T = t->name;
    defc_cname(m->name, mn, sizeof(mn));
    ident_src src = {m->file, m->line, m->name};
    char desc[256];
    snprintf(desc, sizeof(desc), "%s method %s.%s", pt, T, m->name);
    snprintf(what, sizeof(what), "the index macro of %s", desc);
    ident_add(s, true, src, IDF("%s_%s_%s_INDEX", T, pt, mn), what);
    if (m->exposed) {
        snprintf(what, sizeof(what), "the exposed index macro of %s", desc);
        ident_add(s, true, src, IDF("%s_%s_%s_EXPOSED_INDEX", T, pt, mn), what);
    }
    snprintf(what, sizeof(what), "the sender of %s", desc);
    ident_add(s, false, src, IDF("send_%s_%s_%s", T, pt, mn), what);
    snprintf(what, sizeof(what), "the handler of %s", desc);
    ident_add(s, false, src, IDF("%s_%s_%s", T, pt, mn), what);
    snprintf(what, sizeof(what), "the dispatcher of %s", desc);
    ident_add(s, false, src, IDF("dispatch_%s_%s_%s", T, pt, mn), what);
    if (m->nreturns) {
        snprintf(what, sizeof(what), "the reply callback type of %s", desc);
        ident_add(s, false, src, IDF("%s_%s_%s_reply", T, pt, mn), what);
        snprintf(what, sizeof(what), "the reply trampoline of %s", desc);
        ident_add(s, false, src, IDF("defc_reply_%s_%s_%s", T, pt, mn), what);
    }
}

static void add_hook_idents(ident_set *s, const mc_entity_type_def *t)
{
    char id[512], what[512];
    ident_src src = {t->file, 0, t->name};
    for (int part = MC_PART_BASE; part <= MC_PART_CELL; part++)
        for (size_t i = 0; i < defc_nhooks; i++) {
            const defc_hook *h = &defc_hooks[i];
            if (!(h->parts & (1u << part)))
                continue;
            const char *pt = gen_part_tags[part];
            snprintf(what, sizeof(what), "the %s adapter of entity type %s's %s part", h->name,
                     t->name, pt);
            ident_add(s, false, src, IDF("defc_hook_%s_%s_%s", t->name, pt, h->name), what);
            if (defc_hook_method(t, part, h))
                continue; /* the method's handler is the callback */
            snprintf(what, sizeof(what), "the engine callback %s of entity type %s's %s part",
                     h->name, t->name, pt);
            ident_add(s, false, src, IDF("%s_%s_%s", t->name, pt, h->name), what);
        }
}

/* Names of generated accessors and creation functions, each with what made it. */
typedef struct {
    ident_set *s;
    ident_src src;
    char what[512];
} name_sink;

static void add_name(void *ud, const char *name)
{
    name_sink *k = ud;
    ident_add(k->s, false, k->src, name, k->what);
}

static void add_container(void *ud, const mc_def_type *t, const char *name, const char *file,
                          int line, const char *elem)
{
    name_sink k = {ud, {file, line, elem}, ""};
    snprintf(k.what, sizeof k.what, "an accessor of container %s", name);
    defc_access_names(t, name, add_name, &k);
}

static void add_sdk_idents(ident_set *s, const mc_entity_type_def *t)
{
    defc_type_containers(t, add_container, s);
    name_sink k = {s, {t->file, 0, t->name}, ""};
    snprintf(k.what, sizeof k.what, "a creation function of entity type %s", t->name);
    defc_create_names(t, add_name, &k);
}

static void src_loc(char *buf, size_t len, const char *file, int line)
{
    if (!file)
        snprintf(buf, len, "defc");
    else if (line > 0)
        snprintf(buf, len, "%s:%d", file, line);
    else
        snprintf(buf, len, "%s", file);
}

static size_t report_collisions(FILE *out, const ident_set *s)
{
    size_t bad = 0;
    for (size_t i = 0; i < s->n;) {
        size_t j = i + 1;
        while (j < s->n && !strcmp(s->v[j].id, s->v[i].id))
            j++;
        for (size_t k = i + 1; k < j; k++) {
            const gen_ident *a = &s->v[i], *b = &s->v[k];
            char la[1024], lb[1024];
            src_loc(la, sizeof(la), b->file, b->line);
            src_loc(lb, sizeof(lb), a->file, a->line);
            fprintf(out, "%s: <%s>: generated C name %s (%s) is also %s (%s)\n", la,
                    b->elem ? b->elem : "defc", b->id, b->what, a->what, lb);
            bad++;
        }
        i = j;
    }
    return bad;
}

/* Names generated code uses next to user names: standard macros and types, and the engine's
 * mc_ / MC_ names. */
static bool std_name(const char *n)
{
    static const char *const names[] = {
        "NULL", "EOF", "errno", "stdin", "stdout", "stderr", "offsetof", "assert", "BUFSIZ",
        "FILENAME_MAX", "SEEK_SET", "SEEK_CUR", "SEEK_END", "EXIT_SUCCESS", "EXIT_FAILURE",
        "RAND_MAX", "MB_CUR_MAX", "SIZE_MAX", "size_t", "ptrdiff_t", "wchar_t", "int8_t",
        "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
        "INT8_MIN", "INT16_MIN", "INT32_MIN", "INT64_MIN", "INT8_MAX", "INT16_MAX",
        "INT32_MAX", "INT64_MAX", "UINT8_MAX", "UINT16_MAX", "UINT32_MAX", "UINT64_MAX",
        "INT8_C", "INT16_C", "INT32_C", "INT64_C", "UINT8_C", "UINT16_C", "UINT32_C", "UINT64_C",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(n, names[i]))
            return true;
    return false;
}

/* A name written into generated code next to the generated ones: a property field (only
 * macros hurt there), an argument or a return value (a parameter: anything global it
 * shadows, and the generated function's own parameter names). */
static size_t check_user_name(FILE *out, const ident_set *sorted, ident_src src,
                              const char *kind, const char *name, const char *cname,
                              bool param, const char *const *own, size_t nown, const char *fn)
{
    const gen_ident *g = NULL, *end = sorted->v + sorted->n;
    for (const gen_ident *x = ident_find(sorted, cname); x && x < end && !strcmp(x->id, cname);
         x++)
        if (param || x->macro) {
            g = x;
            break;
        }
    char loc[1024];
    src_loc(loc, sizeof(loc), src.file, src.line);
    if (g) {
        fprintf(out, "%s: <%s>: %s %s: its C name %s is also %s\n", loc, src.elem, kind, name,
                cname, g->what);
        return 1;
    }
    if (std_name(cname) || (param && (!strncmp(cname, "mc_", 3) || !strncmp(cname, "MC_", 3)))) {
        fprintf(out, "%s: <%s>: %s %s: its C name %s is used by generated code (standard C or "
                     "the engine's mc_/MC_ names)\n",
                loc, src.elem, kind, name, cname);
        return 1;
    }
    for (size_t i = 0; i < nown; i++)
        if (!strcmp(cname, own[i])) {
            fprintf(out, "%s: <%s>: %s %s: its C name %s is a parameter of %s\n", loc, src.elem,
                    kind, name, cname, fn);
            return 1;
        }
    return 0;
}

static size_t check_method_names(FILE *out, const ident_set *sorted, const mc_entity_type_def *t,
                                 const mc_def_method *m)
{
    static const char *const sender_own[] = {"defc_sink",     "defc_to", "defc_args",
                                             "defc_none",     "defc_on_reply", "defc_ud"};
    static const char *const reply_own[] = {"call", "ud", "status"};
    ident_src src = {m->file, m->line, m->name};
    char cn[80], out_cn[96], fn[256];
    size_t bad = 0;
    snprintf(fn, sizeof(fn), "the sender of %s.%s", t->name, m->name);
    for (size_t i = 0; i < m->nargs; i++) {
        if (!m->args[i].name)
            continue;
        defc_cname(m->args[i].name, cn, sizeof(cn));
        bad += check_user_name(out, sorted, src, "argument", m->args[i].name, cn, true,
                               sender_own, sizeof(sender_own) / sizeof(sender_own[0]), fn);
    }
    snprintf(fn, sizeof(fn), "the reply callback of %s.%s", t->name, m->name);
    for (size_t i = 0; i < m->nreturns; i++) {
        defc_cname(m->returns[i].name, cn, sizeof(cn));
        bad += check_user_name(out, sorted, src, "return value", m->returns[i].name, cn, true,
                               reply_own, sizeof(reply_own) / sizeof(reply_own[0]), fn);
        snprintf(out_cn, sizeof(out_cn), "out_%s", cn);
        bad += check_user_name(out, sorted, src, "return value", m->returns[i].name, out_cn,
                               true, NULL, 0, fn);
    }
    return bad;
}

static size_t check_user_names(FILE *out, const ident_set *sorted, const mc_entity_defs *defs)
{
    size_t bad = 0;
    char cn[80];
    for (size_t i = 0; i < mc_defs_type_count(defs); i++) {
        const mc_entity_type_def *t = mc_defs_type(defs, (uint16_t)i);
        for (size_t k = 0; k < t->nprops; k++) {
            const mc_def_property *p = &t->props[k];
            ident_src src = {p->file, p->line, p->name};
            bad += check_user_name(out, sorted, src, "property", p->name,
                                   defc_cname(p->name, cn, sizeof(cn)), false, NULL, 0, NULL);
        }
        for (int part = 0; part < MC_PART_COUNT; part++)
            for (size_t k = 0; k < t->nmethods[part]; k++)
                bad += check_method_names(out, sorted, t, &t->methods[part][k]);
    }
    return bad;
}

size_t defc_check_codegen(FILE *out, const mc_entity_defs *defs)
{
    size_t bad = 0;
    ident_set s = {0};
    add_fixed_idents(&s);
    for (size_t i = 0; i < mc_defs_type_count(defs); i++) {
        const mc_entity_type_def *t = mc_defs_type(defs, (uint16_t)i);
        bad += check_hooks(out, t);
        add_type_idents(&s, t);
        for (int part = 0; part < MC_PART_COUNT; part++)
            for (size_t k = 0; k < t->nmethods[part]; k++)
                add_method_idents(&s, t, &t->methods[part][k]);
        add_hook_idents(&s, t);
        add_sdk_idents(&s, t);
    }
    defc_alias_containers(defs, add_container, &s);
    if (s.oom) {
        fprintf(out, "defc: out of memory checking generated names\n");
        ident_set_free(&s);
        return bad + 1;
    }
    qsort(s.v, s.n, sizeof(s.v[0]), ident_cmp);
    bad += report_collisions(out, &s);
    bad += check_user_names(out, &s, defs);
    ident_set_free(&s);
    return bad;
}
