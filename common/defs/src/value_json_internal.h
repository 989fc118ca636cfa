/* Internal: the JSON cursor shared by the tokenizer (value_json_lex.c), the typed mapping
 * (value_json.c) and the argument/property helpers (value_json_calls.c). */
#ifndef MC_DEFS_VALUE_JSON_INTERNAL_H
#define MC_DEFS_VALUE_JSON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/value.h"

typedef struct {
    const char *s;
    size_t len, pos;
    char *why;
    size_t whylen;
    char path[160];     /* where the parser is, e.g. "property inventory[2].label" */
    size_t pathlen;
    size_t cells, max_cells; /* mc_values built so far / allowed */
    unsigned depth;
    size_t entity_types; /* MAILBOX type ids below this (0 = no check) */
    char found[24];      /* jp_found's text */
} mc_jp;

void jp_init(mc_jp *p, const char *s, size_t len, size_t entity_types, char *why,
             size_t whylen);
/* Write "path: message (offset N)" into why; returns -1. */
int jp_fail(mc_jp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same at an explicit offset. */
int jp_fail_at(mc_jp *p, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Skip whitespace; the next byte (or -1 at the end). */
int jp_peek(mc_jp *p);
/* Skip whitespace; the offset of the next token. */
size_t jp_here(mc_jp *p);
/* Whether a number starts at the next token. */
bool jp_number_next(mc_jp *p);
/* What the next token looks like ("a string", "an array", "the end of the text", ...). */
const char *jp_found(mc_jp *p);
/* Skip whitespace and consume c, or fail "expected <what>, found ...". */
int jp_expect(mc_jp *p, char c, const char *what);
/* Consume the literal null if it is next (true), else leave the cursor (false). */
bool jp_null(mc_jp *p);
/* Nothing but whitespace left, or fail. */
int jp_end(mc_jp *p);
/* A string token at the cursor: unescaped bytes (heap, NUL-terminated; \u0000, lone
 * surrogates, raw control characters and bad escapes refused). */
int jp_string(mc_jp *p, char **out, size_t *outlen);
/* A number token at the cursor (JSON grammar, at most MC_JSON_MAX_NUMBER characters): its
 * text copied NUL-terminated into buf (MC_JSON_MAX_NUMBER + 1 bytes); integral when it has
 * neither fraction nor exponent. */
int jp_number(mc_jp *p, char *buf, bool *integral);
/* Enter a container (depth bound); leave it. */
int jp_enter(mc_jp *p);
void jp_leave(mc_jp *p);
/* Count n more values against the budget, or fail. */
int jp_cells(mc_jp *p, size_t n);
/* Path: append "[i]" or ".name" (or set the root text); returns the length to restore. */
size_t jp_push_index(mc_jp *p, uint32_t i);
size_t jp_push_name(mc_jp *p, const char *sep, const char *name);
void jp_pop(mc_jp *p, size_t saved);
/* Quote untrusted bytes for an error message (printable ASCII, at most ~40 bytes). */
const char *jp_show(char *buf, size_t buflen, const char *s, size_t len);

/* Name -> index over n structs whose first member is their const char *name (mc_def_field,
 * mc_def_property): a linear scan for the first few lookups, then a sorted index and binary
 * search, so an object with many keys costs n log n, not n^2. */
typedef struct {
    const char *base;
    size_t stride, n;
    unsigned lookups;
    struct jl_name *sorted;
} mc_jlookup;
void jl_init(mc_jlookup *l, const void *base, size_t stride, size_t n);
/* The index of name, or n when there is none. */
size_t jl_find(mc_jlookup *l, const char *name);
void jl_free(mc_jlookup *l);

/* Parse one value of type t at the cursor (max_bytes: the byte limit of a STRING, BLOB... at
 * this place, 0 = type limit). On failure *out is zeroed. */
int jv_parse(mc_jp *p, const mc_def_type *t, uint32_t max_bytes, mc_value *out);
/* Append the JSON of v (type t) to a growing buffer; false on a mismatch. */
typedef struct {
    char *buf;
    size_t len, cap;
    bool failed;
} mc_jbuf;
bool jv_render(mc_jbuf *b, const mc_def_type *t, const mc_value *v);
void jb_putc(mc_jbuf *b, char c);
/* The NUL-terminated text, or NULL (freed) when anything failed. */
char *jb_finish(mc_jbuf *b);

#endif
