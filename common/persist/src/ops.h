/* Shared by the operation files (ops.c, ops_write.c, ops_checkout.c, ops_read.c): helpers to
 * read script answers and build commands (ops_util.c), and each operation's reply handler,
 * which ops.c dispatches to. Internal to mc_persist. */
#ifndef MC_PERSIST_OPS_H
#define MC_PERSIST_OPS_H

#include "internal.h"

/* Reading answers: element i of an array reply (NULL if none); a string or status reply;
 * an answer whose first element is the word w; element i as a decimal uint64. */
const redisReply *op_elem(const redisReply *r, size_t i);
bool op_is_str(const redisReply *r);
bool op_word_is(const redisReply *r, const char *w);
bool op_elem_u64(const redisReply *r, size_t i, uint64_t *out);
/* Finish r: BAD_DATA for an answer of the wrong shape; OK with dbid, token and count. */
void op_unexpected(mc_persist_req *r, const redisReply *reply);
void op_finish_ok(mc_persist_req *r);
/* Queue r's next step (built by the caller) at its place in submission order. */
void op_next(mc_persist_req *r);
/* FENCED (with the script's reason) or OK from a fenced script's answer. */
void op_fenced_or_ok(mc_persist_req *r, const redisReply *reply);
/* The fields of an HGETALL answer (pointers into the reply; free() the array), NULL when it
 * is not an even array of strings. */
mc_persist_field *op_fields_of(const redisReply *reply, size_t *n);

/* Building commands: a key (freed here; route: the command goes to its slot), a string, the
 * "Type:dbid" reference, the entity's two keys (entity hash, routed, and owner hash). */
void op_key_arg(mc_persist_req *r, char *key, bool route);
void op_str_arg(mc_persist_req *r, const char *s);
void op_ref_arg(mc_persist_req *r);
void op_entity_keys(mc_persist_req *r);
/* CLAIM or UNCLAIM of the identifier index entry of value for r's dbid. */
void op_claim_cmd(mc_persist_req *r, int script, const char *value);
/* The rendered fields as arguments (not copied). */
void op_fields_args(mc_persist_req *r);
/* A fresh random check-out token (32 hex characters) in r->token. */
void op_new_token(mc_persist_req *r);

/* The type's <Identifier> property (persistent), or NULL; an identifier value's JSON text and
 * the raw text of a stored JSON value (heap strings, NULL on failure). */
const mc_def_property *op_ident_prop(const mc_entity_type_def *t);
char *op_ident_json_of(const mc_def_property *p, const char *raw);
char *op_ident_raw_of(const mc_persist_store *s, const mc_def_property *p, const char *json,
                      size_t len);
/* Append a name/value pair to r->fields (value is taken, freed on failure). 0 or -1. */
int op_push_field(mc_persist_req *r, const char *name, char *value);
/* Render e's persistent properties and engine fields into r->fields, and its identifier.
 * 0, or -1 with the reason in r->reason. */
int op_render(mc_persist_req *r, const mc_persist_entity *e);
/* A new request for a type name (copied); NULL when out of memory. */
mc_persist_req *op_start(mc_persist_store *s, mc_op op, const char *type_name,
                         mc_persist_cb cb, void *ctx);
/* A name that can go into a key (no braces, colons, spaces or line breaks). */
bool op_name_ok(const char *n);

/* Reply handlers, one per operation. */
void op_write_reply(mc_persist_req *r, const redisReply *reply);
void op_create_reply(mc_persist_req *r, const redisReply *reply);
void op_delete_reply(mc_persist_req *r, const redisReply *reply);
void op_import_reply(mc_persist_req *r, const redisReply *reply);
void op_checkout_reply(mc_persist_req *r, const redisReply *reply);
void op_release_reply(mc_persist_req *r, const redisReply *reply);
void op_release_owner_reply(mc_persist_req *r, const redisReply *reply);
/* ops_takeover.c */
void op_take_over_reply(mc_persist_req *r, const redisReply *reply);
void op_load_reply(mc_persist_req *r, const redisReply *reply);
void op_lookup_reply(mc_persist_req *r, const redisReply *reply);
void op_pairs_reply(mc_persist_req *r, const redisReply *reply);
void op_list_types_reply(mc_persist_req *r, const redisReply *reply);
void op_scan_reply(mc_persist_req *r, const redisReply *reply);
void op_schema_reply(mc_persist_req *r, const redisReply *reply);
void op_drop_ident_reply(mc_persist_req *r, const redisReply *reply);

#endif
