/* The payloads of a retirement's messages (docs/PROTOCOL.md "Entity messages", 80-87; the
 * ids are in entity/backup_wire.h): RETIRE_PASS and RETIRE_CLIENT_CALL heads (the passed
 * payload follows to the end) and RETIRE_HOMES. Decoders take hostile bytes: false when
 * malformed. */
#ifndef MC_ENTITY_RETIRE_WIRE_H
#define MC_ENTITY_RETIRE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/stream.h"
#include "mercury/address.h"

#define MC_RETIRE_HOMES_PER_MESSAGE 4096

/* RETIRE_PASS: a cell's message to a base, passed on by the baseapp it left. */
typedef struct {
    int32_t entity_id;  /* > 0, and the first field of the payload */
    uint8_t msg;        /* CELL_GONE, CLIENT_UPDATE, CELL_MOVED or CELL_COPY */
    mc_address from;    /* the cellapp that sent it */
    const uint8_t *payload;
    size_t len;         /* >= 4 */
} mc_retire_pass;

void mc_retire_pass_encode(mc_ostream *os, const mc_retire_pass *p);
bool mc_retire_pass_decode(mc_istream *is, mc_retire_pass *out);

/* RETIRE_CLIENT_CALL: a client's BASE_CALL (part 0) or CELL_CALL (part 1) payload. */
typedef struct {
    int32_t entity_id;
    uint8_t part;
    const uint8_t *payload;
    size_t len;
} mc_retire_client_call;

void mc_retire_client_call_encode(mc_ostream *os, const mc_retire_client_call *c);
bool mc_retire_client_call_decode(mc_istream *is, mc_retire_client_call *out);

/* RETIRE_HOMES: n (1..MC_RETIRE_HOMES_PER_MESSAGE) bases and where each lives. */
void mc_retire_homes_encode(mc_ostream *os, const int32_t *ids, const mc_address *homes,
                            size_t n);
/* Into ids/homes (room for MC_RETIRE_HOMES_PER_MESSAGE); *n the count. */
bool mc_retire_homes_decode(mc_istream *is, int32_t *ids, mc_address *homes, size_t *n);

/* RETIRED_HOMES: the retired baseapp's address (u32 IPv4, u16 port), then a RETIRE_HOMES
 * body (its bases living at the sender). */
void mc_retired_homes_encode(mc_ostream *os, const mc_address *retired, const int32_t *ids,
                             const mc_address *homes, size_t n);
bool mc_retired_homes_decode(mc_istream *is, mc_address *retired, int32_t *ids,
                             mc_address *homes, size_t *n);

/* RETIRE_END: the senders (0..MC_RETIRE_LAGGARDS_MAX addresses) that did not answer
 * RETIRED in time: their calls may still come through the retiring baseapp (u16 n, n x
 * (u32 IPv4, u16 port)). RETIRE_SENDER_END: one such address (u32, u16). */
#define MC_RETIRE_LAGGARDS_MAX 1024
void mc_retire_senders_encode(mc_ostream *os, const mc_address *a, size_t n);
/* Into out (room for MC_RETIRE_LAGGARDS_MAX); *n the count. */
bool mc_retire_senders_decode(mc_istream *is, mc_address *out, size_t *n);
void mc_retire_sender_encode(mc_ostream *os, const mc_address *a);
bool mc_retire_sender_decode(mc_istream *is, mc_address *out);

#endif
