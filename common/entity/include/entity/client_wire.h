/* The client <-> baseapp messages (docs/PROTOCOL.md "Client messages"): Mercury messages on
 * the encrypted external channel (secure/transport.h) between a game client and the baseapp
 * holding its proxy. Declared once here (interface tables as X-macros) and encoded and
 * decoded by pure functions on buffers, shared by the baseapp and the client library.
 *
 * baseapp -> client: the player's base entity (type, id, its BASE_AND_CLIENT values), a
 * client method call, a property change, "you were disconnected, why", and world updates
 * (the records of entity/world_wire.h its cell's witness wrote: WORLD reliably,
 * WORLD_VOLATILE unreliably, after a u32 stamp that orders them: an older one never
 * overwrites a newer position at the client).
 * client -> baseapp: a call of an exposed base method of its own proxy, or of an exposed
 * cell method of its own entity (by exposed index: the client cannot name anything else),
 * and MOVE: its own entity's position and direction (6 x f32, unreliable).
 * Every value is encoded as its def type (docs/DEFS.md, "Values on the wire").
 */
#ifndef MC_ENTITY_CLIENT_WIRE_H
#define MC_ENTITY_CLIENT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"
#include "common/stream.h"
#include "common/value.h"
#include "mercury/interface.h"

/* Largest message either side accepts on a client channel (the nubs' max_message_size). */
#define MC_CW_MAX_MESSAGE (64u * 1024u)
/* Longest disconnect reason text. */
#define MC_CW_REASON_MAX 200u
/* TICKET: a resumption ticket (secure/resume.h MC_RESUME_TICKET_SIZE), its resume key
 * (MC_RESUME_KEY_BYTES) and its lifetime. */
#define MC_CW_TICKET_BYTES 154u
#define MC_CW_RESUME_KEY_BYTES 32u
#define MC_CW_TICKET_MESSAGE (MC_CW_TICKET_BYTES + MC_CW_RESUME_KEY_BYTES + 4u)

/* Messages the baseapp sends (the client's interface). X(NAME, ID, STYLE, HANDLER). */
#define MC_CW_TO_CLIENT(X)                                                     \
    X(MC_CW_BASE_PLAYER, 1, MC_VARIABLE(4), mc_cw_on_base_player)              \
    X(MC_CW_CALL, 2, MC_VARIABLE(4), mc_cw_on_call)                            \
    X(MC_CW_PROPERTY, 3, MC_VARIABLE(4), mc_cw_on_property)                    \
    X(MC_CW_DISCONNECT, 4, MC_VARIABLE(1), mc_cw_on_disconnect)                \
    X(MC_CW_WORLD, 5, MC_VARIABLE(4), mc_cw_on_world)                          \
    X(MC_CW_WORLD_VOLATILE, 6, MC_VARIABLE(2), mc_cw_on_world_volatile)        \
    X(MC_CW_TICKET, 7, MC_VARIABLE(2), mc_cw_on_ticket)

/* Messages the client sends (the baseapp's external interface). */
#define MC_CW_TO_BASEAPP(X)                                                    \
    X(MC_CW_BASE_CALL, 1, MC_VARIABLE(4), mc_cw_on_base_call)                  \
    X(MC_CW_CELL_CALL, 2, MC_VARIABLE(4), mc_cw_on_cell_call)                  \
    X(MC_CW_LOG_OFF, 3, MC_FIXED(0), mc_cw_on_log_off)                         \
    X(MC_CW_MOVE, 4, MC_FIXED(24), mc_cw_on_move)

enum { MC_CW_TO_CLIENT(MC_DEF_ENUM) };
enum { MC_CW_TO_BASEAPP(MC_DEF_ENUM) };

/* Sender tables (no handlers), indexed by nothing: look a def up with mc_cw_def. */
extern const mc_interface mc_cw_client_send_iface;  /* what the baseapp sends */
extern const mc_interface mc_cw_baseapp_send_iface; /* what the client sends */
const mc_message_def *mc_cw_def(const mc_interface *iface, uint8_t id);

/* Why the baseapp ends a client's channel (DISCONNECT). */
typedef enum {
    MC_CW_BYE_TAKEN_OVER = 1, /* another connection logged in to the same entity */
    MC_CW_BYE_DESTROYED = 2,  /* the proxy entity was destroyed */
    MC_CW_BYE_SHUTDOWN = 3,   /* the baseapp is shutting down */
    MC_CW_BYE_KICKED = 4,     /* an operator or the game dropped the client */
    MC_CW_BYE_RESUME = 5,     /* its proxy moved to another baseapp (retiring): resume */
} mc_cw_bye;
const char *mc_cw_bye_name(int reason);

/* ---- encoding ------------------------------------------------------------------------ */

/* BASE_PLAYER: u16 type, i32 entity id, u16 n, n x (u16 property index, value). The caller
 * writes the n values itself after the header (mc_cw_write_player_header) since the baseapp
 * encodes them from the game's struct. */
void mc_cw_write_player_header(mc_ostream *os, uint16_t type, int32_t id, uint16_t nprops);
/* CALL (to client), BASE_CALL and CELL_CALL: i32 entity id, u16 method index (client method
 * index, or exposed index from a client), then the encoded arguments. */
void mc_cw_write_call(mc_ostream *os, int32_t id, uint16_t index, const uint8_t *args,
                      size_t len);
/* PROPERTY: i32 entity id, u16 property index, then the value (already encoded). */
void mc_cw_write_property(mc_ostream *os, int32_t id, uint16_t index, const uint8_t *value,
                          size_t len);
/* DISCONNECT: u8 reason, string text (packed length, at most MC_CW_REASON_MAX). */
void mc_cw_write_disconnect(mc_ostream *os, uint8_t reason, const char *text);
/* TICKET: the ticket (MC_CW_TICKET_BYTES), the resume key (MC_CW_RESUME_KEY_BYTES), u32
 * lifetime in ms: exactly MC_CW_TICKET_MESSAGE bytes. */
void mc_cw_write_ticket(mc_ostream *os, const uint8_t ticket[MC_CW_TICKET_BYTES],
                        const uint8_t key[MC_CW_RESUME_KEY_BYTES], uint32_t lifetime_ms);

/* ---- decoding (hostile input: bounded, never trusts a length) --------------------------- */

/* The fixed part of a call message: false when fewer than 6 bytes; args and len: the rest. */
bool mc_cw_read_call(mc_istream *is, int32_t *id, uint16_t *index, const uint8_t **args,
                     size_t *len);

/* A decoded BASE_PLAYER: values[i] of property indices[i] (heap; mc_cw_player_free). */
typedef struct {
    uint16_t type;
    int32_t id;
    size_t n;
    uint16_t *indices;
    mc_value *values;
} mc_cw_player;
/* Checks the type exists with a client part, each index is a property the own client sees
 * (BASE_AND_CLIENT, base side), none twice, and every value against its def; all bytes
 * consumed. 0, or -1 with the reason (nothing left allocated). */
int mc_cw_read_player(const mc_entity_defs *defs, mc_istream *is, mc_cw_player *out, char *why,
                      size_t whylen);
void mc_cw_player_free(mc_cw_player *p);

/* PROPERTY against the entity's type: the property (own-client visible) and its value. */
int mc_cw_read_property(const mc_entity_defs *defs, uint16_t type, mc_istream *is, int32_t *id,
                        const mc_def_property **prop, mc_value *value, char *why,
                        size_t whylen);
/* DISCONNECT: the reason code and its text (NUL-terminated into text[textlen]). */
bool mc_cw_read_disconnect(mc_istream *is, uint8_t *reason, char *text, size_t textlen);
/* TICKET: false unless exactly MC_CW_TICKET_MESSAGE bytes remain. */
bool mc_cw_read_ticket(mc_istream *is, uint8_t ticket[MC_CW_TICKET_BYTES],
                       uint8_t key[MC_CW_RESUME_KEY_BYTES], uint32_t *lifetime_ms);

/* Whether the own client of an entity sees this property from its base part
 * (BASE_AND_CLIENT). */
bool mc_cw_base_client_prop(const mc_def_property *p);

#endif
