/* Checking what a client sends to its baseapp (entity/client_wire.h, docs/PROTOCOL.md "Client
 * messages") before anything runs: the message's entity must be the client's own player,
 * the index an exposed method of the right part of its type (one-way), and the arguments
 * must decode against the def with every byte consumed. Pure: no engine, no sockets (the
 * baseapp's client interface and the fuzz target both call it). Each refusal has a reason
 * the baseapp counts (watchers clients/refused/<reason>).
 */
#ifndef MC_BASEAPP_CLIENT_PARSE_H
#define MC_BASEAPP_CLIENT_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"

typedef enum {
    CLIENT_REFUSE_MALFORMED = 0, /* truncated header */
    CLIENT_REFUSE_NOT_OWN,       /* another entity than its own player */
    CLIENT_REFUSE_NOT_EXPOSED,   /* no exposed method of that index (or a two-way one) */
    CLIENT_REFUSE_BAD_ARGS,      /* arguments that do not decode against the def */
    CLIENT_REFUSE_NO_CELL,       /* a cell method while its entity has no cell */
    CLIENT_REFUSE_HANDLER,       /* the base handler refused (returned non-zero) */
    CLIENT_REFUSE_NO_PLAYER,     /* a message before the client has a player */
    CLIENT_REFUSE_COUNT
} client_refuse;

const char *client_refuse_name(client_refuse r);

/* A call a client made, checked. */
typedef struct {
    const mc_def_method *method; /* in part `part` of the player's type */
    const uint8_t *args;         /* inside the message */
    size_t len;
} client_call;

/* Check a BASE_CALL (part MC_PART_BASE) or CELL_CALL (MC_PART_CELL) message from the client
 * whose player is (type, id): -1 and *out when it may run, else the refusal with the reason
 * in why. */
int client_parse_call(const mc_entity_defs *defs, uint16_t type, int32_t id, mc_part part,
                      const uint8_t *data, size_t len, client_call *out, char *why,
                      size_t whylen);

#endif
