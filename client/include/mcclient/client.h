/* The game client's channel to its baseapp: connect with what the login returned (the
 * baseapp's address, session id and key), hear the player's base entity and every call and
 * property change the server sends it, call the player's exposed methods, disconnect.
 *
 * Embeddable: no threads, nothing blocks, libevent is not required of the host (the library
 * runs a private event base without blocking inside mc_client_tick). The host polls
 * mc_client_fd() for reading and calls mc_client_tick() when it is readable, and at least
 * every MC_CLIENT_TICK_MS (resends, acknowledgements and keepalives are due on time).
 * Underneath: the handshake and encrypted packets of secure/transport.h with a Mercury
 * channel inside, the messages of entity/client_wire.h (docs/PROTOCOL.md "Client messages").
 * Values come decoded against the client's own defs (the loginapp checked the digest).
 */
#ifndef MC_CLIENT_CLIENT_H
#define MC_CLIENT_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"
#include "common/game_module.h"
#include "common/value.h"
#include "entity/world_wire.h"
#include "entity/client_wire.h"
#include "secure/handshake.h"

#define MC_CLIENT_TICK_MS 10

/* mc_client_tick / mc_client_state */
typedef enum {
    MC_CLIENT_CONNECTING = 0, /* the handshake is under way */
    MC_CLIENT_CONNECTED = 1,  /* the channel is up (the player follows) */
    MC_CLIENT_ENDED = 2,      /* final: mc_client_end says how */
    MC_CLIENT_RESUMING = 3,   /* the channel died: resuming with the ticket (then CONNECTING
                                 on a new channel, or ENDED when it cannot) */
} mc_client_state_t;

/* How the channel ended. */
typedef enum {
    MC_CLIENT_END_NONE = 0,
    MC_CLIENT_END_REJECTED,     /* the baseapp refused the session (used, expired, unknown) */
    MC_CLIENT_END_TIMED_OUT,    /* no answer to the handshake */
    MC_CLIENT_END_DISCONNECTED, /* the baseapp said goodbye (reason: mc_cw_bye) */
    MC_CLIENT_END_LOST,         /* the baseapp went silent */
    MC_CLIENT_END_CLOSED,       /* mc_client_close */
} mc_client_end;
const char *mc_client_end_name(int how);

typedef struct mc_client mc_client;

/* What the baseapp says, decoded. Pointers are valid during the callback only. */
typedef struct {
    /* the player's base entity, on connection and whenever the game gives the client to
     * another base (giveClientTo): type, id and its BASE_AND_CLIENT values */
    void (*on_player)(void *ud, mc_client *c, const mc_cw_player *player);
    /* a client method of the player (m is in its type's client part), arguments decoded */
    void (*on_call)(void *ud, mc_client *c, int32_t entity_id, const mc_def_method *m,
                    const mc_value *args);
    /* a BASE_AND_CLIENT value of the player changed */
    void (*on_property)(void *ud, mc_client *c, int32_t entity_id, const mc_def_property *p,
                        const mc_value *value);
    /* the channel ended (how: mc_client_end; reason: mc_cw_bye when DISCONNECTED) */
    void (*on_end)(void *ud, mc_client *c, int how, int reason, const char *text);
    /* what the player's cell sees changed (docs/WORLD.md): an entity entered its view (with
     * its OTHER_CLIENTS / ALL_CLIENTS values; the ENTER of the player's own id introduces
     * its cell entity with its own-client values), left it, changed properties, moved
     * (VOLATILE), a client method called on an entity's allClients / otherClients (CALL), or
     * the server corrected the player's position (CORRECTION). The library's view
     * (mc_client_entity_of) is already updated (a LEAVE: the entity is still there). An
     * ENTER of the player's own id while it has a cell already means a new cell (restored
     * after its cellapp died, or moved): every entity of the old view is handed over as a
     * LEAVE first and the new view is introduced afresh. */
    void (*on_world)(void *ud, mc_client *c, const mc_world_record *r);
    /* a resumption finished (config.loginapp set): status MC_LOGIN_OK (a new channel is
     * being opened to the baseapp holding the player; BASE_PLAYER and the world view come
     * again in full) or why it cannot (mc_login_status, name: mc_login_status_name(status);
     * on_end follows with MC_CLIENT_END_LOST: log in again) */
    void (*on_resume)(void *ud, mc_client *c, int status, const char *status_name);
} mc_client_callbacks;

/* The default silence after which the baseapp is taken for gone (idle_ms 0): the manager's
 * default death timeout for a baseapp (--deadAfterMs, 3000), since a baseapp silent that long
 * is declared dead and its players' proxies restored elsewhere, and a resume cannot land
 * sooner; a living baseapp sends an idle channel a keepalive every second, so this is three
 * missed keepalives. A resume that finds the baseapp alive after all costs one new channel
 * and a view sent again, nothing lost (docs/CLIENT.md, "Resuming"). */
#define MC_CLIENT_IDLE_MS_DEFAULT 3000u

typedef struct {
    const char *baseapp;                     /* "a.b.c.d:port" from the login */
    uint64_t session_id;
    uint8_t session_key[MC_SECURE_KEY_BYTES];
    const mc_entity_defs *defs;              /* the client's defs (outlive the client) */
    mc_client_callbacks cb;
    void *ud;
    uint32_t timeout_ms;                     /* handshake limit (0: 10000) */
    uint32_t idle_ms;                        /* baseapp silent this long: lost (0:
                                              * MC_CLIENT_IDLE_MS_DEFAULT) */
    /* optional: the game's generated client side (mc_game_client_get() of a library made
     * with mc_add_game_client): the player's client-part struct is kept (mc_client_props)
     * and client method calls also run the game's <Type>_client_<method> handlers with it */
    const mc_game_module *module;
    /* optional: resumption (docs/CLIENT.md "Resuming"). With the loginapp's address, a
     * channel that dies (silence: idle_ms; or mc_client_resume_now) is resumed with the
     * latest ticket the baseapp gave (TICKET), no login: at most resume_tries attempts (0:
     * 5), waiting resume_backoff_ms (0: 500) before the second, twice that before the
     * third... Without it a dead channel ends the client (MC_CLIENT_END_LOST). Both strings
     * are copied. */
    const char *loginapp;
    const char *bind_ip;     /* source address of the RESUMEs (NULL: the system's choice) */
    uint32_t resume_tries;
    uint32_t resume_backoff_ms;
} mc_client_config;

/* Start connecting (the first packet goes out now). NULL with a reason in err. The key is
 * copied (wipe yours). */
mc_client *mc_client_connect(const mc_client_config *cfg, char *err, size_t errlen);
/* The socket to poll for reading. It changes when the client resumes: ask again after
 * each mc_client_tick. */
int mc_client_fd(const mc_client *c);
/* The channel is to be given up and resumed now (the host knows its network changed: a
 * phone moving to another network), from a new socket. 0, or MC_CALL_ERR_STATE (not
 * connected, no ticket yet, or no config.loginapp). */
int mc_client_resume_now(mc_client *c);
/* Whether the client holds a resumption ticket (the baseapp sends one after each
 * BASE_PLAYER and renews it). */
bool mc_client_has_ticket(const mc_client *c);
/* Copy the current ticket and its resume key (a host may keep them to resume after its own
 * restart with mc_resume_start; tests replay them). 0, or -1 when there is none. Keep the
 * key secret: with it the ticket is the player's session. */
int mc_client_ticket(const mc_client *c, uint8_t ticket[MC_CW_TICKET_BYTES],
                     uint8_t key[MC_CW_RESUME_KEY_BYTES]);
/* Process what arrived and what is due; callbacks run from here. The state after it. */
int mc_client_tick(mc_client *c);
int mc_client_state(const mc_client *c);
/* How it ended (MC_CLIENT_END_NONE while it runs). */
int mc_client_end_of(const mc_client *c);
/* The player (0 / none before the first on_player). */
int32_t mc_client_player_id(const mc_client *c);
uint16_t mc_client_player_type(const mc_client *c);

/* Call an exposed method of the player (part MC_PART_BASE: its base; MC_PART_CELL: its
 * cell), arguments checked and encoded against the def. 0, or an mc_call_status:
 * MC_CALL_ERR_STATE before the player came or after the end, MC_CALL_ERR_NO_METHOD for a
 * method that is not exposed (or two-way), MC_CALL_ERR_ARGS for arguments that do not fit. */
int mc_client_call(mc_client *c, mc_part part, const char *method, const mc_value *args,
                   size_t nargs);
/* Send a call message as given, unchecked (tests and tools probing the server's checks):
 * entity id, exposed index, encoded arguments. 0 or MC_CALL_ERR_STATE. */
int mc_client_call_raw(mc_client *c, mc_part part, int32_t entity_id, uint16_t exposed_index,
                       const uint8_t *args, size_t len);
/* Send any client message (entity/client_wire.h MC_CW_TO_BASEAPP id) with these bytes, unchecked,
 * reliably (tests and tools probing the server's checks). 0 or MC_CALL_ERR_STATE /
 * MC_CALL_ERR_SEND (no such message, or a fixed-size one of another size). */
int mc_client_send_raw(mc_client *c, uint8_t msg_id, const uint8_t *data, size_t len);

/* Move the player's own cell entity (unreliable, latest wins; send it at most every tick of
 * the game). The cell refuses non-finite numbers and moves faster than its speed limit and
 * answers with a CORRECTION (on_world). 0, or MC_CALL_ERR_STATE (not connected), or
 * MC_CALL_ERR_ARGS (not finite). */
int mc_client_move(mc_client *c, mc_vector3 position, mc_vector3 direction);

/* An entity the player's cell sees, as last told. */
typedef struct {
    int32_t id;
    uint16_t type;
    mc_vector3 position, direction;
} mc_client_entity;
/* The entity with this id in view, or the player's own cell entity (its id), or NULL. */
const mc_client_entity *mc_client_entity_of(const mc_client *c, int32_t id);
/* The entities in view (not the player), sorted by id; valid until the next tick. */
size_t mc_client_entities(const mc_client *c, const mc_client_entity **out);

/* Typed calls with the generated senders: a sink for them, and mailboxes of the player
 * (MC_COMPONENT_BASE for base methods, MC_COMPONENT_CELL for cell methods):
 *   mc_mailbox_ref me = mc_client_player_mailbox(c, MC_COMPONENT_BASE);
 *   send_Account_base_createAvatar(mc_client_sink(c), &me, "Hero", &look);
 * The sink sends only exposed one-way methods of the player: another method is refused
 * (a generated sender returns MC_CALL_ERR_SEND for it), another entity too
 * (MC_CALL_ERR_NO_ENTITY). The mailbox is none before the player came. */
const mc_call_sink *mc_client_sink(mc_client *c);
mc_mailbox_ref mc_client_player_mailbox(const mc_client *c, mc_component component);
/* The player's client-part struct (<Type>_client) with config.module, else NULL. */
void *mc_client_props(const mc_client *c);

typedef struct {
    uint64_t players, calls, properties, sent, ignored; /* ignored: malformed from the server */
    uint64_t world_records, world_bytes;                /* world updates applied */
    uint64_t world_stale; /* VOLATILE records ignored: older than a position already applied
                             (reordered by the network) */
    /* Mercury datagrams and their bytes each way on the channel (resends and acks
     * included; before encryption, which adds its header and tag to each) */
    uint64_t packets_sent, bytes_sent, packets_received, bytes_received;
    uint64_t tickets;                 /* resumption tickets received */
    uint64_t resumes, resume_failures; /* resumptions that gave a new channel / that did not */
    uint64_t resume_attempts;         /* RESUME attempts (retries included) */
} mc_client_stats;
void mc_client_get_stats(const mc_client *c, mc_client_stats *out);

/* End it from this side: LOG_OFF is sent (its base hears onClientDeath at once; if the
 * message is lost, after the baseapp's --clientIdleMs of silence); state ENDED, CLOSED. */
void mc_client_close(mc_client *c);
/* Close and wipe. NULL is ignored. */
void mc_client_free(mc_client *c);

#endif
