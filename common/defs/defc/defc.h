/* defc internals: the summary printer and the C code generator. */
#ifndef MC_DEFC_H
#define MC_DEFC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/defs.h"

void defc_print_summary(FILE *out, const mc_entity_defs *defs);

/* Kinds as generated C sees them (defc_types.c): the C type of a scalar kind (numbers,
 * vectors, MAILBOX; NULL for others), strings, and the generic kinds held as mc_value
 * (BLOB and the containers). */
const char *defc_scalar_ctype(mc_type_kind k);
bool defc_is_str(mc_type_kind k);
bool defc_is_generic(mc_type_kind k);

/* The C spelling of a def name: a name starting with '_' (BigWorld's _timer1) is written
 * defc_timer1; others unchanged. Returns buf (len >= 2 * MC_DEFS_MAX_NAME is plenty). */
const char *defc_cname(const char *name, char *buf, size_t len);

/* Engine callbacks (mc_game_hooks slots) and how a def method implementing one must look. */
typedef enum {
    DEFC_HOOK_PLAIN,  /* (call, props) */
    DEFC_HOOK_REASON, /* (call, props, const char *reason) */
    DEFC_HOOK_TIMER,  /* (call, props, uint32_t timerId, int64_t userArg) */
    DEFC_HOOK_ENTITY, /* (call, props, mc_mailbox_ref entity) */
    DEFC_HOOK_ENTITY_ID, /* (call, props, int32_t entityId) */
    DEFC_HOOK_STATUS, /* (call, props, int32_t reason): a code, e.g. MC_TELEPORT_REFUSED */
} defc_hook_shape;

typedef struct {
    const char *name;        /* onCreated: the method / function name part */
    const char *slot;        /* on_created: the mc_game_hooks field */
    unsigned parts;          /* 1 << MC_PART_BASE | 1 << MC_PART_CELL */
    defc_hook_shape shape;
} defc_hook;

extern const defc_hook defc_hooks[];
extern const size_t defc_nhooks;
/* The def method of t that implements hook h on part (same name), or NULL. */
const mc_def_method *defc_hook_method(const mc_entity_type_def *t, int part, const defc_hook *h);

/* What generation needs beyond what the loader checks: methods named like engine callbacks
 * take the callback's arguments, and no two generated C identifiers (or file names) are the
 * same. Prints one line per problem on out (file:line: <element>: reason); returns how many. */
size_t defc_check_codegen(FILE *out, const mc_entity_defs *defs);
/* Write <Type>.h/.c per entity type plus game_module.c into out_dir. Returns 0 or -1 with a
 * message on stderr. */
int defc_generate(const mc_entity_defs *defs, const char *out_dir, const char *module_name);

/* Flat calls (defc_flat.c): whether every value of a list is a fixed-size number or vector
 * (then *size is the list's encoded size), the size of one kind (0: not flat), and code that
 * writes expression e of kind k at pointer variable p (advancing it) or reads one at buffer
 * b + off as a C value of type ctype. */
bool defc_flat_list(const mc_def_arg *as, size_t n, size_t *size);
size_t defc_flat_size(mc_type_kind k);
void defc_emit_flat_put(FILE *f, const char *indent, const char *p, mc_type_kind k,
                        const char *e);
void defc_emit_flat_get(FILE *f, const char *b, size_t off, mc_type_kind k, const char *ctype);

/* C code of a value view (mc_value) of C expression e of kind k (a generic kind: e is an
 * mc_value, or a pointer to one when pointer_generic). */
void defc_emit_view(FILE *f, mc_type_kind k, const char *e, bool pointer_generic);

/* Container accessors (defc_access.c): for a container type (FIXED_DICT, ARRAY, TUPLE) and
 * its C name, the prototypes / definitions of its typed accessors and of those of the
 * anonymous containers inside it; the global names they define. */
typedef void (*defc_name_fn)(void *ud, const char *name);
void defc_access_names(const mc_def_type *t, const char *name, defc_name_fn fn, void *ud);
void defc_emit_access_decls(FILE *f, const mc_def_type *t, const char *name);
void defc_emit_access_defs(FILE *f, const mc_def_type *t, const char *name);
/* The containers that get accessors: every container alias (once), and per entity type the
 * anonymous container types of its properties (<Type>_<prop>), arguments and return values
 * (<Type>_<part>_<method>_<arg>). fn gets the type, its C name and where it comes from. */
typedef void (*defc_container_fn)(void *ud, const mc_def_type *t, const char *name,
                                  const char *file, int line, const char *elem);
void defc_alias_containers(const mc_entity_defs *defs, defc_container_fn fn, void *ud);
void defc_type_containers(const mc_entity_type_def *t, defc_container_fn fn, void *ud);

/* Typed entity creation (defc_create.c): per entity type T the T_new struct (its base and
 * cell properties) and create_T_* / load_T_* over the engine API, without type names as
 * strings. Declarations into T.h, definitions into T.c; the global names they define. */
void defc_emit_create_decls(FILE *f, const mc_entity_type_def *t);
void defc_emit_create_defs(FILE *f, const mc_entity_type_def *t);
void defc_create_names(const mc_entity_type_def *t, defc_name_fn fn, void *ud);

#endif
