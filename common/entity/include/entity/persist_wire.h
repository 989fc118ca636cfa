/* The entity messages of persistence (beside entity/wire.h's), their payloads encoded and
 * decoded in one place. Integers are big-endian; every message is variable-length with a
 * 4-byte length field.
 *
 *   id  message      direction                payload
 *   37  FETCH_CELL   baseapp -> cellapp, req.  i32 entity id
 *                                              reply: i8 status, then for MC_CALL_OK i32 space
 *                                              id, 6 x f32 position and direction, the cell
 *                                              part's Persistent properties (part stream,
 *                                              persistent_only); an error: a reason string
 *   38  LOAD_BASE    any -> baseapp, request   u16 type, u64 database id (0: by identifier),
 *                                              string identifier ("" with a database id)
 *                                              reply: i8 status, MAILBOX base, u64 database
 *                                              id, u8 was_live, reason string
 *
 * FETCH_CELL asks the cell of a base for what writeToDB stores with the base; LOAD_BASE asks
 * a baseapp to load an entity from the database (createBaseAnywhereFromDB picks the
 * least-loaded one) and answers once it is live there (or was live somewhere already).
 */
#ifndef MC_ENTITY_PERSIST_WIRE_H
#define MC_ENTITY_PERSIST_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/game_module.h"
#include "common/stream.h"

enum {
    MC_MSG_FETCH_CELL = 37,
    MC_MSG_LOAD_BASE = 38,
};

/* The longest identifier value a LOAD_BASE carries (bytes). */
#define MC_LOAD_IDENT_MAX 255u

/* FETCH_CELL's answer up to the cell properties (which follow for MC_CALL_OK). */
typedef struct {
    int8_t status;
    int32_t space_id;
    mc_vector3 position, direction;
} mc_fetch_cell_head;

void mc_fetch_cell_encode(mc_ostream *os, int32_t entity_id);
/* False when malformed (not exactly 4 bytes, id not positive). */
bool mc_fetch_cell_decode(mc_istream *is, int32_t *entity_id);
/* A successful answer's head (the properties are appended by the caller). */
void mc_fetch_cell_reply_ok(mc_ostream *os, const mc_fetch_cell_head *h);
void mc_fetch_cell_reply_error(mc_ostream *os, int status, const char *reason);
/* Read the head; for an error status the reason goes to why. False when malformed. The
 * stream is left at the cell properties. */
bool mc_fetch_cell_reply_read(mc_istream *is, mc_fetch_cell_head *h, char *why, size_t whylen);

typedef struct {
    uint16_t type;
    uint64_t dbid;                       /* 0: by identifier */
    char ident[MC_LOAD_IDENT_MAX + 1];   /* "" with a database id */
} mc_load_base_req;

void mc_load_base_encode(mc_ostream *os, const mc_load_base_req *r);
/* False (reason in why) when malformed: an unknown type, neither or both of dbid and
 * identifier, an identifier too long, trailing bytes. */
bool mc_load_base_decode(const mc_entity_defs *defs, mc_istream *is, mc_load_base_req *r,
                         char *why, size_t whylen);

typedef struct {
    int8_t status;
    mc_mailbox_ref base;
    uint64_t dbid;
    bool was_live;
    char reason[200];
} mc_load_base_reply;

void mc_load_base_reply_encode(mc_ostream *os, const mc_load_base_reply *r);
/* False when malformed (also a successful answer without a mailbox). */
bool mc_load_base_reply_decode(const mc_entity_defs *defs, mc_istream *is,
                               mc_load_base_reply *r);

#endif
