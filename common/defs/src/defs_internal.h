/* Internal: the loaded definitions and the loader's working state. */
#ifndef MC_DEFS_INTERNAL_H
#define MC_DEFS_INTERNAL_H

#include <libxml/tree.h>
#include <stdbool.h>

#include "arena.h"
#include "common/defs.h"
#include "errs.h"
#include "name_index.h"

/* One parsed .def file (entity or interface) before flattening. */
typedef struct raw_def raw_def;
struct raw_def {
    const char *name;
    bool is_interface;
    const char *file;
    int state; /* 0 not loaded, 1 loading, 2 loaded, -1 failed */
    const char *parent;
    int parent_line;
    size_t nimpl;
    const char **impl;
    int *impl_line;
    size_t nprops;
    mc_def_property *props; /* own properties; default values owned here */
    size_t ntemp;
    const char **temp;
    bool has_volatile;
    mc_def_volatile vol;
    size_t nmethods[MC_PART_COUNT];
    mc_def_method *methods[MC_PART_COUNT];
    raw_def *next;
};

typedef struct {
    const char *name;
    const char *file;
    xmlNodePtr node;
    int state; /* 0 unresolved, 1 resolving, 2 done, -1 failed */
    mc_def_type *type;
} alias_entry;

struct mc_entity_defs {
    mc_arena arena;
    size_t ntypes;
    mc_entity_type_def *types;
    size_t naliases;
    alias_entry *aliases;
    raw_def *raws;
    uint8_t digest[32];
    char digest_hex[65];
    char *normalised; /* heap */
};

typedef struct {
    mc_entity_defs *defs;
    mc_arena *arena;
    mc_errs errs;
    const char *res;
    const char *defs_dir;
    const char *iface_dir;
    xmlDocPtr alias_doc;
    const char *alias_file;
    mc_def_type *builtin[MC_TYPE_MAILBOX + 1];
    unsigned depth; /* parse_type recursion */
    size_t default_cells; /* mc_values built for defaults so far, limit MC_DEFS_MAX_CELLS */
    name_index alias_names; /* positions in defs->aliases */
    name_index raw_names[2]; /* entity types [0] and interfaces [1] read so far (raw_def *) */
} loader;

/* xml helpers (xml_util.c) */
int xml_line(xmlNodePtr n);
bool xml_is_elem(xmlNodePtr n);
const char *xml_name(xmlNodePtr n);
/* Direct text children joined and trimmed, in the arena. */
char *xml_text(loader *L, xmlNodePtr n);
size_t xml_count_children(xmlNodePtr n);
xmlDocPtr xml_read(loader *L, const char *path, bool must_exist, bool *missing);
/* Refuse stray text inside a container element; returns false when some was found. */
bool xml_no_text(loader *L, xmlNodePtr n, const char *file);
/* Refuse what a def file cannot mean and the loader would otherwise skip: attributes (unless
 * attrs_ok says the element takes them), entity references, processing instructions. */
bool xml_plain(loader *L, xmlDocPtr doc, const char *path, bool (*attrs_ok)(xmlNodePtr));
/* Parse a boolean element ("true"/"false", empty = true). */
bool xml_bool(loader *L, xmlNodePtr n, const char *file, bool *out);
bool ident_ok(const char *s);
/* Record name at pos in ni; true when it was there already (its position in *prev). Out of
 * memory marks the arena failed (mc_defs_load reports it) and returns false. NULL names
 * (a failed copy) are skipped. */
bool name_dup(loader *L, name_index *ni, const char *name, size_t pos, size_t *prev);

/* types (def_types_parse.c) */
void types_init_builtins(loader *L);
const mc_def_type *parse_type(loader *L, xmlNodePtr n, const char *file);
int load_aliases(loader *L);
/* <Default> of a property / a text value (def_default.c) */
int parse_default(loader *L, const mc_def_type *t, xmlNodePtr n, const char *file,
                  mc_value *out);
/* Count cells mc_values about to be built for defaults against the load's budget;
 * returns 0, or -1 after reporting at n when the budget is spent. */
int default_charge(loader *L, size_t cells, xmlNodePtr n, const char *file);

/* .def files (def_parse.c) */
raw_def *get_raw_def(loader *L, const char *name, bool is_interface, const char *from_file,
                     int from_line);
/* flattening and numbering (def_flatten.c) */
int flatten_type(loader *L, mc_entity_type_def *t, raw_def *rd);
/* digest (def_digest.c) */
int compute_digest(mc_entity_defs *defs);

#endif
