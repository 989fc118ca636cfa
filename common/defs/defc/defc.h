/* defc internals: the summary printer and the C code generator. */
#ifndef MC_DEFC_H
#define MC_DEFC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/defs.h"

void defc_print_summary(FILE *out, const mc_entity_defs *defs);

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

#endif
