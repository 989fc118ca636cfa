/* Proxies: bases with a client. The baseapp's external interface (an encrypted transport,
 * secure/transport.h, carrying its own nub for client channels) on the address the baseapp
 * registered as external; clients connect with a session the baseapp issued for a base
 * (client_sessions.h) and that base becomes their player. The client hears its player
 * (BASE_AND_CLIENT values on connection and on change) and the calls the game makes on its
 * CLIENT / CLIENT_VIA_BASE (and, relayed by the cell, CLIENT_VIA_CELL) mailboxes; it may call
 * its player's exposed base methods and its cell's exposed cell methods, nothing else
 * (client_parse.h). A second connection for the same entity takes over (the first client is
 * told why and dropped); giveClientTo moves a client to another base here. Limits (clients,
 * idle timeout, packets and bytes a second, MOVEs and calls a second, queued packets a
 * client) are options; everything is counted under
 * clients/ and the client nub's counters under externalNub/. docs/CLIENT.md,
 * docs/PROTOCOL.md "Client messages".
 */
#ifndef MC_BASEAPP_PROXY_H
#define MC_BASEAPP_PROXY_H

#include "baseapp.h"

#define PROXY_OPTION_COUNT 9
extern const mc_option proxy_options[PROXY_OPTION_COUNT];
/* Resumption (proxy_resume.c): --resumeGraceMs, --resumeTicketMs, --faultKnobs. */
#define PROXY_RESUME_OPTION_COUNT 3
extern const mc_option proxy_resume_options[PROXY_RESUME_OPTION_COUNT];

/* Open the external interface (after base_db_init: sessions live there). 0 or -1 with why. */
int proxy_init(mc_engine *e, char *err, size_t errlen);
/* Graceful shutdown: every client is told and dropped. */
void proxy_on_shutdown(mc_engine *e);
/* Close everything (before base_db_free). */
void proxy_free(mc_engine *e);
/* A base is being destroyed: its client is told and dropped, its sessions forgotten. */
void proxy_on_destroy(mc_engine *e, mc_entity *ent);
/* A CLIENT or CLIENT_VIA_BASE call for a base here (checked as a base's call: entity and
 * type): sent to its client after checking the client method and its arguments; false when
 * the base has no client (the caller refuses it with MC_CALL_ERR_NO_CLIENT). */
bool proxy_client_call(mc_engine *e, const mc_origin *o, mc_entity *ent,
                       const mc_call_header *h, const uint8_t *args, size_t len);
/* A handler ran on a base: its client hears the BASE_AND_CLIENT values that changed. */
void proxy_after_call(mc_engine *e, mc_entity *ent);

/* Whether the base has a client (bound, not closing). */
bool proxy_has_client(mc_engine *e, mc_entity *ent);
/* Its cell serves this client from now on: CLIENT_ATTACHED to the live cell (it becomes a
 * witness and introduces its view afresh). proxy_world.c. */
void proxy_world_attached(mc_engine *e, mc_entity *ent);

/* The engine API (base_engine_ops). */
int proxy_op_give_client_to(const mc_call_ctx *call, const mc_mailbox_ref *to);
bool proxy_op_has_client(const mc_call_ctx *call);

/* RESUME_PREPARE (a request) from a loginapp: a session for the proxy a ticket names when
 * its serial is the one the proxy honours (docs/PROTOCOL.md "Resuming"). */
void proxy_on_resume_prepare(mc_engine *e, const mc_origin *o, mc_istream *is);
/* Whether base id's client is gone and its grace time runs (it may still resume). */
bool proxy_in_grace(mc_engine *e, int32_t id);
/* What a base's backup carries of its client (backup_send.c): u32 the serial of the ticket
 * it honours, string its account name; nothing when it has no client to resume. */
void proxy_resume_export(mc_engine *e, int32_t id, mc_ostream *os);
/* A base restored from its backup (backup_restore.c) with those bytes: its client may resume
 * here within the grace time (--resumeGraceMs), else onClientDeath. False (nothing taken)
 * when the bytes are empty or malformed, or resumption is off. */
bool proxy_resume_import(mc_engine *e, int32_t id, const uint8_t *bytes, size_t len);

/* A retiring baseapp offloads base id (retire.c): its client is told to resume elsewhere
 * (DISCONNECT reason 5) and dropped; true when it had one. RESUME_PREPARE for it says "not
 * here" from now on. */
bool proxy_send_to_resume(mc_engine *e, int32_t id);
/* Run a client's BASE_CALL (part MC_PART_BASE) or CELL_CALL (MC_PART_CELL) bytes on its
 * player ent: -1 when it ran, else a client_refuse with the reason in why. */
int proxy_run_client_call(mc_engine *e, mc_entity *ent, mc_part part, const uint8_t *bytes,
                          size_t len, char *why, size_t whylen);

/* Operator commands (command/issueSession, command/kickClient). */
int proxy_add_commands(mc_engine *e);

#endif
