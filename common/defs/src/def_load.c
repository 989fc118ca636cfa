/* mc_defs_load: entities.xml, then every listed type, then the digest. */
#include <libxml/parser.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "defs_internal.h"

typedef struct {
    const char *name;
    bool client_server;
    bool decide; /* flat entry without hasClient: decided from the type after loading */
    int line;
} listed_type;

static int read_has_client(loader *L, xmlNodePtr c, const char *file, bool *out, bool *given)
{
    *given = false;
    for (xmlAttrPtr a = c->properties; a; a = a->next) {
        const char *an = (const char *)a->name;
        xmlChar *v = xmlNodeListGetString(c->doc, a->children, 1);
        const char *vs = v ? (const char *)v : "";
        int rc = 0;
        bool b = !strcmp(vs, "true");
        if (strcmp(vs, "true") && strcmp(vs, "false")) {
            mc_errs_add(&L->errs, file, xml_line(c), xml_name(c),
                        "attribute %s must be true or false", an);
            rc = -1;
        } else if (!strcmp(an, "hasClient")) {
            *out = b;
            *given = true;
        } else if (strcmp(an, "hasCell") && strcmp(an, "hasBase")) {
            mc_errs_add(&L->errs, file, xml_line(c), xml_name(c),
                        "unsupported attribute %s (only KBEngine's hasClient, hasCell, hasBase)",
                        an);
            rc = -1;
        }
        xmlFree(v);
        if (rc)
            return -1;
    }
    return 0;
}

/* Does a raw type (with parents/interfaces) need a client?  Used for the flat list without
 * hasClient: a type with client methods, client-visible properties or exposed methods. */
static bool raw_wants_client(loader *L, raw_def *rd, int depth)
{
    if (!rd || depth > 32)
        return false;
    if (rd->nmethods[MC_PART_CLIENT])
        return true;
    for (int part = 0; part < MC_PART_COUNT; part++)
        for (size_t i = 0; i < rd->nmethods[part]; i++)
            if (rd->methods[part][i].exposed)
                return true;
    for (size_t i = 0; i < rd->nprops; i++)
        if (mc_prop_flags_on_part(rd->props[i].flags, MC_PART_CLIENT))
            return true;
    if (rd->parent &&
        raw_wants_client(L, get_raw_def(L, rd->parent, false, rd->file, rd->parent_line),
                         depth + 1))
        return true;
    for (size_t i = 0; i < rd->nimpl; i++)
        if (raw_wants_client(L, get_raw_def(L, rd->impl[i], true, rd->file, rd->impl_line[i]),
                             depth + 1))
            return true;
    return false;
}

static int add_listed(loader *L, listed_type **list, size_t *n, size_t *cap,
                      name_index *seen, xmlNodePtr c, const char *file, bool client_server)
{
    const char *nm = xml_name(c);
    if (!ident_ok(nm)) {
        mc_errs_add(&L->errs, file, xml_line(c), nm, "entity type name is not a valid identifier");
        return -1;
    }
    /* Type names start file names and every generated identifier of the type: no leading
     * '_' (it would make reserved C identifiers such as _Foo_TYPE_ID). */
    if (!strcmp(nm, "game") || !strcmp(nm, "game_module") || !strcmp(nm, "game_types") ||
        !strcmp(nm, "game_client") || nm[0] == '_' || !strncmp(nm, "defc_", 5) ||
        !strncmp(nm, "mc_", 3)) {
        mc_errs_add(&L->errs, file, xml_line(c), nm,
                    "entity type name is reserved (generated files and symbols use it)");
        return -1;
    }
    if (xml_count_children(c)) {
        mc_errs_add(&L->errs, file, xml_line(c), nm,
                    "an entity type entry is an empty element");
        return -1;
    }
    if (!xml_no_text(L, c, file))
        return -1;
    const char *copy = mc_arena_strdup(L->arena, nm);
    size_t i;
    if (!copy)
        return -1;
    if (name_dup(L, seen, copy, *n, &i)) {
        mc_errs_add(&L->errs, file, xml_line(c), nm, "entity type listed twice (line %d)",
                    (*list)[i].line);
        return -1;
    }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        listed_type *p = realloc(*list, nc * sizeof(*p));
        if (!p)
            return -1;
        *list = p;
        *cap = nc;
    }
    (*list)[*n].name = copy;
    (*list)[*n].client_server = client_server;
    (*list)[*n].decide = false;
    (*list)[*n].line = xml_line(c);
    (*n)++;
    return 0;
}

static bool is_section(xmlNodePtr n)
{
    return !strcmp(xml_name(n), "ClientServerEntities") ||
           !strcmp(xml_name(n), "ServerOnlyEntities");
}

/* Attributes (hasClient, ...) belong to type entries: the root's children other than the
 * sections, and the sections' children. */
static bool is_entry(xmlNodePtr n)
{
    xmlNodePtr p = n->parent;
    if (!xml_is_elem(p))
        return false;
    if (p->parent && p->parent->type == XML_DOCUMENT_NODE)
        return !is_section(n);
    return is_section(p) && p->parent && xml_is_elem(p->parent) &&
           p->parent->parent && p->parent->parent->type == XML_DOCUMENT_NODE;
}

static int load_entities(loader *L)
{
    const char *file = mc_arena_printf(L->arena, "%s/entities.xml", L->res);
    if (!file)
        return -1;
    xmlDocPtr doc = xml_read(L, file, true, NULL);
    if (!doc)
        return -1;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    listed_type *list = NULL;
    size_t n = 0, cap = 0;
    name_index seen = {0}; /* names in list */
    int rc = xml_plain(L, doc, file, is_entry) ? 0 : -1;
    if (!xml_no_text(L, root, file))
        rc = -1;
    bool sectioned = false, flat = false;
    for (xmlNodePtr c = root->children; c; c = c->next) {
        if (!xml_is_elem(c))
            continue;
        const char *nm = xml_name(c);
        bool cs = !strcmp(nm, "ClientServerEntities");
        if (cs || !strcmp(nm, "ServerOnlyEntities")) {
            sectioned = true;
            if (!xml_no_text(L, c, file))
                rc = -1;
            for (xmlNodePtr e = c->children; e; e = e->next)
                if (xml_is_elem(e)) {
                    bool hc = false, given = false;
                    if (read_has_client(L, e, file, &hc, &given) != 0 ||
                        add_listed(L, &list, &n, &cap, &seen, e, file, cs) != 0) {
                        rc = -1;
                        continue;
                    }
                    if (given && hc != cs) {
                        mc_errs_add(&L->errs, file, xml_line(e), xml_name(e),
                                    "hasClient contradicts the section it is listed in");
                        rc = -1;
                    }
                }
        } else {
            flat = true;
            bool hc = false, given = false;
            if (read_has_client(L, c, file, &hc, &given) != 0 ||
                add_listed(L, &list, &n, &cap, &seen, c, file, hc) != 0) {
                rc = -1;
                continue;
            }
            list[n - 1].decide = !given;
        }
    }
    if (sectioned && flat) {
        mc_errs_add(&L->errs, file, xml_line(root), xml_name(root),
                    "mixes ClientServerEntities/ServerOnlyEntities sections with a flat list");
        rc = -1;
    }
    if (n == 0 && rc == 0) {
        mc_errs_add(&L->errs, file, xml_line(root), xml_name(root), "lists no entity types");
        rc = -1;
    }
    if (n > MC_ENTITY_TYPE_MAX) {
        mc_errs_add(&L->errs, file, xml_line(root), xml_name(root),
                    "%zu entity types, at most %u fit a mailbox", n, MC_ENTITY_TYPE_MAX);
        rc = -1;
    }
    xmlFreeDoc(doc);
    name_index_free(&seen);
    if (rc != 0) {
        free(list);
        return -1;
    }
    mc_entity_defs *d = L->defs;
    d->types = mc_arena_calloc(L->arena, n, sizeof(mc_entity_type_def));
    if (!d->types) {
        free(list);
        return -1;
    }
    d->ntypes = n;
    for (size_t i = 0; i < n; i++) {
        mc_entity_type_def *t = &d->types[i];
        t->name = list[i].name;
        t->id = (uint16_t)i;
        raw_def *rd = get_raw_def(L, t->name, false, file, list[i].line);
        if (!rd) {
            rc = -1;
            continue;
        }
        t->client_server = list[i].client_server;
        if (list[i].decide)
            t->client_server = raw_wants_client(L, rd, 0);
        if (flatten_type(L, t, rd) != 0)
            rc = -1;
    }
    free(list);
    return rc;
}

static void free_raws(mc_entity_defs *d)
{
    for (raw_def *r = d->raws; r; r = r->next)
        for (size_t i = 0; i < r->nprops; i++)
            mc_value_free(&r->props[i].default_value);
}

void mc_defs_free(mc_entity_defs *defs)
{
    if (!defs)
        return;
    free_raws(defs);
    free(defs->normalised);
    mc_arena_free(&defs->arena);
    free(defs);
}

mc_entity_defs *mc_defs_load(const char *res_dir, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!res_dir || !*res_dir) {
        if (err && errlen)
            snprintf(err, errlen, "no resource folder given");
        return NULL;
    }
    mc_entity_defs *d = calloc(1, sizeof(*d));
    if (!d) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return NULL;
    }
    mc_arena_init(&d->arena);
    loader L;
    memset(&L, 0, sizeof(L));
    L.defs = d;
    L.arena = &d->arena;
    mc_errs_init(&L.errs);
    L.res = res_dir;
    L.defs_dir = mc_arena_printf(L.arena, "%s/entity_defs", res_dir);
    L.iface_dir = mc_arena_printf(L.arena, "%s/entity_defs/interfaces", res_dir);
    types_init_builtins(&L);
    int rc = L.defs_dir && L.iface_dir && !L.arena->failed ? 0 : -1;
    if (rc == 0 && load_aliases(&L) != 0)
        rc = -1;
    if (L.alias_doc) {
        xmlFreeDoc(L.alias_doc);
        L.alias_doc = NULL;
    }
    for (size_t i = 0; i < d->naliases; i++)
        d->aliases[i].node = NULL;
    if (load_entities(&L) != 0)
        rc = -1;
    name_index_free(&L.alias_names);
    name_index_free(&L.raw_names[0]);
    name_index_free(&L.raw_names[1]);
    if (L.arena->failed) {
        mc_errs_add(&L.errs, res_dir, 0, NULL, "out of memory while loading");
        rc = -1;
    }
    if (rc == 0 && L.errs.count == 0 && compute_digest(d) != 0) {
        mc_errs_add(&L.errs, res_dir, 0, NULL, "cannot compute the digest (out of memory)");
        rc = -1;
    }
    if (rc != 0 || L.errs.count) {
        MC_ERROR("defs: %s refused with %u error(s)", res_dir, L.errs.count ? L.errs.count : 1);
        if (L.errs.count == 0)
            mc_errs_add(&L.errs, res_dir, 0, NULL, "loading failed");
        mc_errs_copy(&L.errs, err, errlen);
        mc_errs_free(&L.errs);
        mc_defs_free(d);
        return NULL;
    }
    mc_errs_free(&L.errs);
    MC_INFO("defs: loaded %zu entity types and %zu aliases from %s, digest %s", d->ntypes,
            d->naliases, res_dir, d->digest_hex);
    return d;
}
