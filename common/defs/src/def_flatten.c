/* Flattening an entity type: parents and interfaces first, in declaration order; then
 * numbering properties and methods per part and exposed methods per part. */
#include <stdlib.h>
#include <string.h>

#include "defs_internal.h"

typedef struct {
    void *items;
    size_t n, cap, size;
} vec;

static void *vec_push(vec *v)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        void *p = realloc(v->items, cap * v->size);
        if (!p)
            return NULL;
        v->items = p;
        v->cap = cap;
    }
    void *slot = (char *)v->items + v->n * v->size;
    memset(slot, 0, v->size);
    v->n++;
    return slot;
}

typedef struct {
    loader *L;
    mc_entity_type_def *t;
    vec props, temp, ifaces, methods[MC_PART_COUNT];
    name_index prop_names, method_names[MC_PART_COUNT]; /* positions in props / methods */
    name_index iface_names;
    const raw_def *stack[32];
    size_t depth;
    bool has_volatile;
    int rc;
} flat;

static void add_raw(flat *F, const raw_def *rd);

static bool on_stack(flat *F, const raw_def *rd)
{
    for (size_t i = 0; i < F->depth; i++)
        if (F->stack[i] == rd)
            return true;
    return false;
}

/* Whether rd, reached from the Parent or Interface element at line of the file on top of
 * the stack, may be flattened one level deeper; reports why not. */
static bool can_descend(flat *F, const raw_def *from, int line, const char *elem)
{
    if (F->depth < sizeof(F->stack) / sizeof(F->stack[0]))
        return true;
    mc_errs_add(&F->L->errs, from->file, line, elem, "Parent/Implements nest more than %zu deep",
                sizeof(F->stack) / sizeof(F->stack[0]));
    F->rc = -1;
    return false;
}

static void add_raw(flat *F, const raw_def *rd)
{
    loader *L = F->L;
    F->stack[F->depth++] = rd;
    if (rd->parent) {
        raw_def *p = get_raw_def(L, rd->parent, false, rd->file, rd->parent_line);
        if (!p) {
            F->rc = -1;
        } else if (on_stack(F, p)) {
            mc_errs_add(&L->errs, rd->file, rd->parent_line, "Parent",
                        "%s is its own ancestor (a Parent cycle)", rd->parent);
            F->rc = -1;
        } else if (can_descend(F, rd, rd->parent_line, "Parent")) {
            add_raw(F, p);
        }
    }
    for (size_t i = 0; i < rd->nimpl; i++) {
        raw_def *ir = get_raw_def(L, rd->impl[i], true, rd->file, rd->impl_line[i]);
        if (!ir) {
            F->rc = -1;
            continue;
        }
        if (on_stack(F, ir)) {
            mc_errs_add(&L->errs, rd->file, rd->impl_line[i], "Interface",
                        "interface %s implements itself (a cycle)", ir->name);
            F->rc = -1;
            continue;
        }
        if (name_dup(L, &F->iface_names, ir->name, F->ifaces.n, NULL))
            continue; /* implemented once, through whichever path came first */
        const raw_def **slot = vec_push(&F->ifaces);
        if (!slot) {
            F->rc = -1;
            continue;
        }
        *slot = ir;
        if (can_descend(F, rd, rd->impl_line[i], "Interface"))
            add_raw(F, ir);
    }
    for (size_t i = 0; i < rd->nprops; i++) {
        const mc_def_property *p = &rd->props[i];
        size_t k;
        bool dup = name_dup(L, &F->prop_names, p->name, F->props.n, &k);
        if (dup) {
            const mc_def_property *q = &((mc_def_property *)F->props.items)[k];
            mc_errs_add(&L->errs, p->file, p->line, p->name,
                        "property already declared at %s:%d (entity type %s)", q->file, q->line,
                        F->t->name);
            F->rc = -1;
        }
        mc_def_property *slot = dup ? NULL : vec_push(&F->props);
        if (!dup && !slot)
            F->rc = -1;
        if (slot)
            *slot = *p; /* shares the raw default value; the raw def owns it */
    }
    for (size_t i = 0; i < rd->ntemp; i++) {
        const char **slot = vec_push(&F->temp);
        if (slot)
            *slot = rd->temp[i];
        else
            F->rc = -1;
    }
    if (rd->has_volatile) {
        F->t->volatile_info = rd->vol; /* the most derived declaration wins */
        F->has_volatile = true;
    }
    for (int part = 0; part < MC_PART_COUNT; part++) {
        for (size_t i = 0; i < rd->nmethods[part]; i++) {
            const mc_def_method *m = &rd->methods[part][i];
            size_t k;
            bool dup = name_dup(L, &F->method_names[part], m->name, F->methods[part].n, &k);
            if (dup) {
                const mc_def_method *q = &((mc_def_method *)F->methods[part].items)[k];
                mc_errs_add(&L->errs, m->file, m->line, m->name,
                            "%s method already declared at %s:%d (entity type %s)",
                            mc_part_name((mc_part)part), q->file, q->line, F->t->name);
                F->rc = -1;
            }
            mc_def_method *slot = dup ? NULL : vec_push(&F->methods[part]);
            if (!dup && !slot)
                F->rc = -1;
            if (slot)
                *slot = *m;
        }
    }
    F->depth--;
}

static void *to_arena(loader *L, vec *v)
{
    void *p = mc_arena_calloc(L->arena, v->n ? v->n : 1, v->size);
    if (p && v->n)
        memcpy(p, v->items, v->n * v->size);
    free(v->items);
    v->items = NULL;
    return p;
}

int flatten_type(loader *L, mc_entity_type_def *t, raw_def *rd)
{
    flat F;
    memset(&F, 0, sizeof(F));
    F.L = L;
    F.t = t;
    F.props.size = sizeof(mc_def_property);
    F.temp.size = sizeof(const char *);
    F.ifaces.size = sizeof(const raw_def *);
    for (int p = 0; p < MC_PART_COUNT; p++)
        F.methods[p].size = sizeof(mc_def_method);
    t->parent = rd->parent;
    t->file = rd->file;
    add_raw(&F, rd);

    /* Interfaces by name. */
    const char **inames = mc_arena_calloc(L->arena, F.ifaces.n ? F.ifaces.n : 1, sizeof(char *));
    if (inames)
        for (size_t i = 0; i < F.ifaces.n; i++)
            inames[i] = ((const raw_def **)F.ifaces.items)[i]->name;
    free(F.ifaces.items);
    t->interfaces = inames;
    t->ninterfaces = F.ifaces.n;

    /* Properties: overall and per part. */
    mc_def_property *props = F.props.items;
    size_t nprops = F.props.n;
    int identifiers = 0;
    for (size_t i = 0; i < nprops; i++) {
        mc_def_property *p = &props[i];
        p->index = (uint16_t)i;
        for (int part = 0; part < MC_PART_COUNT; part++)
            p->part_index[part] = mc_prop_flags_on_part(p->flags, (mc_part)part)
                                      ? (int32_t)t->nparts_props[part]++
                                      : -1;
        p->ghosted = p->flags == MC_FLAGS_CELL_PUBLIC || p->flags == MC_FLAGS_OTHER_CLIENTS ||
                     p->flags == MC_FLAGS_ALL_CLIENTS || p->flags == MC_FLAGS_CELL_PUBLIC_AND_OWN;
        p->own_client = mc_prop_flags_on_part(p->flags, MC_PART_CLIENT) &&
                        p->flags != MC_FLAGS_OTHER_CLIENTS;
        p->other_clients = p->flags == MC_FLAGS_OTHER_CLIENTS || p->flags == MC_FLAGS_ALL_CLIENTS;
        if (p->identifier && ++identifiers == 2) {
            mc_errs_add(&L->errs, p->file, p->line, p->name,
                        "entity type %s has more than one Identifier property", t->name);
            F.rc = -1;
        }
        /* On the base or, as BigWorld's database takes it, on the cell (ALL_CLIENTS ...): the
         * base writes its cell's properties with its own and loads them into its cellData. */
        if (p->identifier && !mc_prop_flags_on_part(p->flags, MC_PART_BASE) &&
            !mc_prop_flags_on_part(p->flags, MC_PART_CELL)) {
            mc_errs_add(&L->errs, p->file, p->line, p->name,
                        "an Identifier must live on the base or the cell, not %s",
                        mc_prop_flags_name(p->flags));
            F.rc = -1;
        }
        if (!t->client_server && mc_prop_flags_on_part(p->flags, MC_PART_CLIENT)) {
            mc_errs_add(&L->errs, p->file, p->line, p->name,
                        "flags %s send it to clients, but %s is a server-only entity type",
                        mc_prop_flags_name(p->flags), t->name);
            F.rc = -1;
        }
    }
    if (nprops > 65535) {
        mc_errs_add(&L->errs, t->file, 0, NULL, "more than 65535 properties");
        F.rc = -1;
    }
    t->props = to_arena(L, &F.props);
    t->nprops = nprops;
    for (int part = 0; part < MC_PART_COUNT; part++) {
        size_t n = t->nparts_props[part];
        uint16_t *map = mc_arena_calloc(L->arena, n ? n : 1, sizeof(uint16_t));
        if (map && t->props)
            for (size_t i = 0; i < nprops; i++)
                if (t->props[i].part_index[part] >= 0)
                    map[t->props[i].part_index[part]] = (uint16_t)i;
        t->part_props[part] = map;
    }
    t->temp_props = to_arena(L, &F.temp);
    t->ntemp = F.temp.n;

    /* Methods and exposed methods per part. */
    for (int part = 0; part < MC_PART_COUNT; part++) {
        mc_def_method *ms = F.methods[part].items;
        size_t n = F.methods[part].n;
        if (n > 65535) {
            mc_errs_add(&L->errs, t->file, 0, NULL, "more than 65535 %s methods",
                        mc_part_name((mc_part)part));
            F.rc = -1;
        }
        size_t nexp = 0;
        for (size_t i = 0; i < n; i++)
            if (ms[i].exposed)
                nexp++;
        uint16_t *exp = mc_arena_calloc(L->arena, nexp ? nexp : 1, sizeof(uint16_t));
        size_t e = 0;
        for (size_t i = 0; i < n; i++) {
            ms[i].index = (uint16_t)i;
            ms[i].exposed_index = -1;
            ms[i].signature = mc_def_method_signature(&ms[i]);
            if (part == MC_PART_CLIENT && !t->client_server) {
                mc_errs_add(&L->errs, ms[i].file, ms[i].line, ms[i].name,
                            "client method on %s, a server-only entity type", t->name);
                F.rc = -1;
            }
            if (ms[i].exposed) {
                if (!t->client_server) {
                    mc_errs_add(&L->errs, ms[i].file, ms[i].line, ms[i].name,
                                "exposed method on %s, a server-only entity type (no client "
                                "can call it)",
                                t->name);
                    F.rc = -1;
                }
                ms[i].exposed_index = (int32_t)e;
                if (exp)
                    exp[e] = (uint16_t)i;
                e++;
            }
        }
        t->methods[part] = to_arena(L, &F.methods[part]);
        t->nmethods[part] = n;
        t->exposed[part] = exp;
        t->nexposed[part] = nexp;
    }
    name_index_free(&F.prop_names);
    name_index_free(&F.iface_names);
    for (int part = 0; part < MC_PART_COUNT; part++)
        name_index_free(&F.method_names[part]);
    return F.rc;
}
