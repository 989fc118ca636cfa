/* Interface tables: the message types a nub understands, declared once and shared by the
 * sender (which needs each message's id and length style to encode it) and the receiver
 * (which also needs the handler).
 *
 * A message on the wire is: one byte id, then (for a request) a 4-byte reply id and a 2-byte
 * next-request offset, then (variable-length messages only) a 1, 2 or 4 byte big-endian
 * length field, then the data. Fixed-length messages carry no length field. A variable
 * message whose length does not fit its field (>= 0xFF, 0xFFFF or 0xFFFFFFFF) is "oversize":
 * the field is all 0xFF bytes, the first 4 data bytes are replaced by the real 32-bit length
 * and moved to the end of the message (see docs/PROTOCOL.md).
 *
 * Declaring an interface with an X-macro:
 *
 *     #define GAME_INTERFACE(X)                                   \
 *         X(GAME_PING,  1, MC_FIXED(8),     on_ping)               \
 *         X(GAME_CHAT,  2, MC_VARIABLE(2),  on_chat)
 *
 *     enum { GAME_INTERFACE(MC_DEF_ENUM) };              // GAME_PING = 1, GAME_CHAT = 2
 *     static const mc_message_def game_defs[] = {        // receiver: with handlers
 *         GAME_INTERFACE(MC_DEF_WITH_HANDLER)
 *     };
 *     static const mc_message_def game_send_defs[] = {   // sender: no handler symbols
 *         GAME_INTERFACE(MC_DEF_NO_HANDLER)
 *     };
 *     static const mc_interface game_iface = MC_INTERFACE("game", game_defs);
 *
 * Id 0xFF (MC_REPLY_MESSAGE_ID) is reserved for replies and may not be declared.
 */
#ifndef MC_MERCURY_INTERFACE_H
#define MC_MERCURY_INTERFACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/stream.h"
#include "mercury/address.h"

/* The reserved id of the reply message (variable length, 4-byte field; data starts with the
 * 32-bit reply id of the request it answers). */
#define MC_REPLY_MESSAGE_ID 0xFFu

/* Largest message (data bytes) a bundle will carry or a receiver will reassemble. */
#define MC_MAX_MESSAGE_SIZE (64u * 1024u * 1024u)

typedef enum {
    MC_MSG_FIXED = 0,    /* length = the def's length; no length field on the wire */
    MC_MSG_VARIABLE = 1, /* the def's length is the size of the length field: 1, 2 or 4 */
} mc_length_style;

typedef struct mc_nub mc_nub;
typedef struct mc_channel mc_channel;
typedef struct mc_message_def mc_message_def;

/* Everything a handler knows about the message it is handling. Valid during the call only. */
typedef struct {
    mc_nub *nub;
    const mc_address *source;           /* the sender's address */
    mc_channel *channel;                /* the channel it arrived on, or NULL (off-channel) */
    const mc_message_def *def;          /* its definition (the reply pseudo-def for replies) */
    uint32_t length;                    /* data length in bytes */
    bool is_request;                    /* the sender waits for a reply */
    uint32_t reply_id;                  /* when is_request: pass to mc_reply / start_reply */
} mc_message_info;

/* A message handler. `data` is bounded to exactly this message's bytes; reading past it
 * fails the stream, never touches other memory. ctx is the nub's handler_ctx. */
typedef void (*mc_message_handler)(void *ctx, const mc_message_info *info, mc_istream *data);

struct mc_message_def {
    uint8_t id;
    const char *name;
    mc_length_style style;
    uint32_t length; /* FIXED: data bytes; VARIABLE: length-field size (1, 2 or 4) */
    mc_message_handler handler; /* may be NULL in a sender's table */
};

typedef struct {
    const char *name;
    const mc_message_def *defs;
    size_t count;
} mc_interface;

/* X-macro helpers (see the example above). */
#define MC_FIXED(n) MC_MSG_FIXED, (n)
#define MC_VARIABLE(field_bytes) MC_MSG_VARIABLE, (field_bytes)
#define MC_DEF_ENUM(NAME, ID, STYLE, HANDLER) NAME = (ID),
#define MC_DEF_WITH_HANDLER(NAME, ID, STYLE, HANDLER) {(ID), #NAME, STYLE, (HANDLER)},
#define MC_DEF_NO_HANDLER(NAME, ID, STYLE, HANDLER) {(ID), #NAME, STYLE, NULL},
#define MC_INTERFACE(NAME, DEFS) {(NAME), (DEFS), sizeof(DEFS) / sizeof((DEFS)[0])}

/* Find a def by id (linear; look it up once and keep the pointer). NULL if absent. */
const mc_message_def *mc_interface_find(const mc_interface *iface, uint8_t id);
/* Find a def by name (the NAME given to the X-macro). NULL if absent. */
const mc_message_def *mc_interface_find_name(const mc_interface *iface, const char *name);
/* Check a table: unique ids, reserved id unused, fixed lengths <= MC_MAX_MESSAGE_SIZE,
 * variable field sizes 1, 2 or 4. Returns MC_OK or MC_ERR_INVALID with a reason in err. */
int mc_interface_validate(const mc_interface *iface, char *err, size_t errlen);

/* Size of a message header for def (id + length field, plus 6 for a request). */
size_t mc_message_header_size(const mc_message_def *def, bool is_request);

#endif
