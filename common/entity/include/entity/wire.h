/* The entity messages on the internal interface (ids 32 and up, beside the control
 * messages): their ids and the fixed headers, encoded and decoded in one place. Every
 * message is variable-length with a 4-byte length field; integers are big-endian.
 *
 *   id  message       direction               payload
 *   32  ENTITY_CALL   any -> holder of a part  CallHeader (12 bytes), then the arguments
 *                     (request when two-way)   reply: CallReply
 *   33  CREATE_BASE   any -> baseapp, request  u16 type, u16 n, n x (u16 property index,
 *                                              value); reply: i8 status, MAILBOX, reason
 *   34  CREATE_CELL   baseapp -> cellapp, req. i32 entity id, u16 type, i32 near id (0 = a
 *                                              new space), MAILBOX base, 6 x f32 position and
 *                                              direction, the cell properties (part stream);
 *                                              reply: i8 status, i32 space id, reason
 *   35  DESTROY_CELL  baseapp -> cellapp       i32 entity id
 *   36  CELL_GONE     cellapp -> baseapp       i32 entity id, u8 why, 6 x f32, the cell
 *                                              properties (part stream)
 *   40  CLIENT_UPDATE cellapp -> baseapp       i32 entity id (a witness), u8 flags (bit 0:
 *                                              volatile), world update records for its
 *                                              client (entity/world_wire.h)
 *   48  CLIENT_ATTACHED baseapp -> cellapp     i32 entity id: its base has a new client
 *                                              (a witness introduces its view afresh)
 *   49  CLIENT_MOVE   baseapp -> cellapp       i32 entity id, 3 x f32 position, 3 x f32
 *                                              direction: its client moved it
 *
 * CallHeader: i32 entity id, u16 salt (component << 13 | type, as in a mailbox), u16 method
 * index (within the part the component finally reaches), i32 caller entity id (0 = none).
 * CallReply: i8 mc_call_status; MC_CALL_OK is followed by the encoded return values, an
 * error by a packed-length reason string.
 */
#ifndef MC_ENTITY_WIRE_H
#define MC_ENTITY_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/game_module.h"
#include "common/stream.h"

enum {
    MC_MSG_ENTITY_CALL = 32,
    MC_MSG_CREATE_BASE = 33,
    MC_MSG_CREATE_CELL = 34,
    MC_MSG_DESTROY_CELL = 35,
    MC_MSG_CELL_GONE = 36,
    MC_MSG_CLIENT_UPDATE = 40,
    MC_MSG_CLIENT_ATTACHED = 48,
    MC_MSG_CLIENT_MOVE = 49,
};

#define MC_CALL_HEADER_SIZE 12u
/* The longest reason a reply carries. */
#define MC_REASON_MAX 200u

typedef struct {
    int32_t entity_id;
    uint16_t salt;
    uint16_t method;
    int32_t caller_id;
} mc_call_header;

/* Why a cell went (CELL_GONE). */
typedef enum {
    MC_CELL_GONE_DESTROYED = 0,  /* the base asked (destroyCellEntity) */
    MC_CELL_GONE_SELF = 1,       /* the cell destroyed itself */
    MC_CELL_GONE_SPACE = 2,      /* its space was destroyed */
    MC_CELL_GONE_SHUTDOWN = 3,   /* its cellapp shut down */
} mc_cell_gone_why;

/* The call header's one encoder: 12 bytes into out (a buffer the caller sends as it likes);
 * mc_call_header_write appends the same bytes to a stream. */
void mc_call_header_pack(uint8_t out[MC_CALL_HEADER_SIZE], const mc_call_header *h);
void mc_call_header_write(mc_ostream *os, const mc_call_header *h);
/* False (stream failed) when fewer than 12 bytes remain or the entity id is not positive. */
bool mc_call_header_read(mc_istream *is, mc_call_header *h);

/* A reply: status then the return values (given as bytes) or the reason. */
void mc_call_reply_write(mc_ostream *os, int status, const uint8_t *returns, size_t len,
                         const char *reason);
/* Read the status and, for an error, the reason (into why); the stream is left at the
 * return values. False when malformed. */
bool mc_call_reply_read(mc_istream *is, int *status, char *why, size_t whylen);

void mc_write_vec3(mc_ostream *os, mc_vector3 v);
/* False when a component is not finite. */
bool mc_read_vec3(mc_istream *is, mc_vector3 *v);

/* ---- payloads: encoders and pure decoders ---------------------------------------------
 * Decoders take bytes from a peer: they check everything against the defs, never abort,
 * allocate only what they hand back, and say why in one line when they refuse. */

/* CREATE_BASE: type, then properties by index (each checked against its type and limits;
 * indices must name properties of the type). 0, or -1 with the reason. */
int mc_create_base_encode(const mc_entity_defs *defs, uint16_t type, const uint16_t *indices,
                          const mc_value *values, size_t n, mc_ostream *os, char *why,
                          size_t whylen);
/* Decode a whole CREATE_BASE payload (no trailing bytes). MC_CALL_OK with *indices and
 * *values heap arrays of *n entries (free with mc_create_base_free; NULL when n is 0), or
 * MC_CALL_ERR_ARGS (malformed: unknown type, property index, a value that does not decode,
 * trailing bytes) / MC_CALL_ERR_BUSY (out of memory) with the reason and nothing held.
 * Property flags (EDITOR_ONLY) are the creator's to check. */
int mc_create_base_decode(const mc_entity_defs *defs, mc_istream *is, uint16_t *type,
                          uint16_t **indices, mc_value **values, size_t *n, char *why,
                          size_t whylen);
void mc_create_base_free(uint16_t *indices, mc_value *values, size_t n);

/* CREATE_CELL up to the cell properties (which follow as the part stream of `type`). */
typedef struct {
    int32_t entity_id;
    uint16_t type;
    int32_t near_id;          /* 0: a new space */
    mc_mailbox_ref base;      /* BASE mailbox of entity_id, of type `type` */
    mc_vector3 position, direction;
} mc_create_cell_head;
void mc_create_cell_encode(mc_ostream *os, const mc_create_cell_head *h);
/* False (the reason in why) when malformed: a non-positive id, a negative near id, an
 * unknown type, a base mailbox that is invalid or not the BASE of that entity and type,
 * positions that are not finite. The stream is left at the cell properties. */
bool mc_create_cell_decode(const mc_entity_defs *defs, mc_istream *is, mc_create_cell_head *h,
                           char *why, size_t whylen);

/* DESTROY_CELL: the entity id. False when malformed (not exactly 4 bytes, id not positive). */
void mc_destroy_cell_encode(mc_ostream *os, int32_t entity_id);
bool mc_destroy_cell_decode(mc_istream *is, int32_t *entity_id);

/* CELL_GONE up to the cell properties (which may follow: a cell whose properties did not
 * encode sends none). */
typedef struct {
    int32_t entity_id;
    uint8_t why;              /* mc_cell_gone_why (other values are kept as they came) */
    mc_vector3 position, direction;
} mc_cell_gone_head;
void mc_cell_gone_encode(mc_ostream *os, const mc_cell_gone_head *h);
/* False when malformed (short, id not positive, positions not finite); the stream is left at
 * the cell properties. */
bool mc_cell_gone_decode(mc_istream *is, mc_cell_gone_head *h);

#endif
