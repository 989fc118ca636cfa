/* The proxies' private state (baseapp/src/proxy_*.c only): the external interface, one
 * record per connected client, the counters. */
#ifndef MC_BASEAPP_PROXY_INTERNAL_H
#define MC_BASEAPP_PROXY_INTERNAL_H

#include "client_limits.h"
#include "client_parse.h"
#include "client_sessions.h"
#include "mercury/mercury.h"
#include "proxy.h"
#include "secure/transport.h"
#include "common/map.h"

#include <event2/event.h>

struct base_clients;

/* One connected client. */
typedef struct proxy_client {
    struct base_clients *bc;
    mc_address peer;
    mc_channel *ch;            /* NULL once gone */
    int32_t entity_id;         /* its player; 0 while closing */
    uint16_t type;
    bool need_player;          /* BASE_PLAYER (and onEntitiesEnabled) still to send */
    bool closing;              /* told to go: dropped at close_at */
    int32_t moved_id;          /* closing because its player left this retiring baseapp: its
                                * calls meanwhile follow the player (retire_pass.c) */
    client_limit_state lim;    /* its MOVE and call rates (client_limits.h) */
    uint32_t vol_stamp;        /* the last WORLD_VOLATILE's stamp (they go 1, 2, 3...) */
    mc_time_us close_at;
    char account[BASE_SESSION_NAME_MAX + 1]; /* the account its session was for ("": none) */
    bool resumed;              /* it came with a session a RESUME issued */
    mc_time_us ticket_renew_at; /* its next resumption ticket (0: none issued yet) */
    /* BASE_AND_CLIENT values as the client last heard them (type property index order) */
    size_t nsnap;
    uint16_t *snap_idx;
    uint8_t **snap;
    size_t *snap_len;
} proxy_client;

typedef struct {
    uint64_t connects, session_refused, taken_over, deaths, given, calls_in, calls_out,
        property_changes, kicked, refused_total, moves;
    /* limits (client_limits.h, --clientMaxOverflowPackets): MOVEs and calls over the rate,
     * dropped; clients disconnected for calling past the hard limit; clients cut off
     * because their channel's queue of unacknowledged packets overflowed */
    uint64_t moves_dropped, calls_dropped, kicked_calls, cut_off_queue;
    uint64_t refused[CLIENT_REFUSE_COUNT];
    /* resumption (proxy_resume.c) */
    uint64_t tickets, resumed, grace_started, grace_expired, resume_ok, resume_not_here,
        resume_used, resume_expired, resume_refused, knob_dropped;
} proxy_stats;

/* What a proxy keeps to be resumed (proxy_resume.c), per base entity, while it has a client
 * or is within the grace time after its client's channel died. */
typedef struct {
    uint32_t serial;              /* the one ticket serial it honours (0: none) */
    char account[BASE_SESSION_NAME_MAX + 1];
    mc_time_us grace_until;       /* its client's channel died: onClientDeath then (0: not) */
    bool restored;                /* restored from a backup that may predate the client's
                                   * newest ticket: the first resumption may bring any serial */
} proxy_resume_state;

typedef struct base_clients {
    mc_engine *e;
    mc_nub *nub;               /* client channels (datagrams through t) */
    mc_secure_transport *t;
    mc_map by_entity;          /* entity id -> proxy_client (bound, not closing) */
    mc_map by_peer;            /* peer key -> proxy_client (every one) */
    struct event *tick_ev;     /* property sweep, closing clients */
    struct event *ready_ev;    /* deferred BASE_PLAYER after the ACCEPT went out */
    bool freeing;
    /* resumption (proxy_resume.c) */
    mc_map resume;             /* entity id -> proxy_resume_state */
    uint8_t ticket_key[32];    /* derived from the cluster secret ("mc-resume-ticket") */
    uint64_t grace_ms, ticket_ms;
    client_limits limits;
    uint32_t max_overflow;     /* --clientMaxOverflowPackets */
    proxy_stats st;
    uint64_t log_count;        /* rate-limited refusal lines */
    struct proxy_watch {
        struct base_clients *bc;
        int what;
    } watch[48];
    size_t nwatch;
} base_clients;

/* proxy_external.c */
base_clients *proxy_state(mc_engine *e);
uint64_t proxy_peer_key(const mc_address *a);
bool proxy_log_allowed(uint64_t count);

/* proxy_bind.c */
proxy_client *proxy_of_entity(base_clients *bc, int32_t id);
/* A client connected with a session for entity id: bound (a client the entity had is
 * taken over). 0, or -1 when it cannot be (no such base here). */
int proxy_bind_new(base_clients *bc, const mc_address *peer, int32_t id, proxy_client **out);
/* Tell the client why it goes, unbind it, drop it after a short grace (so the message is
 * acknowledged). */
void proxy_close(base_clients *bc, proxy_client *pc, int reason, const char *text);
/* The client went (idle, channel dead, replaced): onClientDeath when it had a player; the
 * record is freed. drop_endpoint: also forget its endpoint in the transport. */
void proxy_gone(base_clients *bc, proxy_client *pc, bool drop_endpoint);
/* As proxy_gone, for a client whose channel died or that went silent: its base keeps it
 * for the grace time (--resumeGraceMs) before onClientDeath, so that it can resume. */
void proxy_lost(base_clients *bc, proxy_client *pc, bool drop_endpoint);
/* Send BASE_PLAYER to clients that wait for it, then onEntitiesEnabled. */
void proxy_send_ready(base_clients *bc);
/* Property sweep and closing clients (tick). */
void proxy_tick(base_clients *bc);
void proxy_free_record(proxy_client *pc);
/* Count and log (rate-limited) a refused client message. */
void proxy_refuse(base_clients *bc, const mc_address *peer, client_refuse r, const char *why);
/* A MOVE or a call from pc within its rates? false: dropped (counted, logged rate-limited;
 * a client past the hard call limit is told and disconnected). */
bool proxy_limit_move(base_clients *bc, proxy_client *pc);
bool proxy_limit_call(base_clients *bc, proxy_client *pc);

/* proxy_resume.c: resumption tickets, the grace time, RESUME_PREPARE, the fault knob. */
int proxy_resume_init(base_clients *bc, char *err, size_t errlen);
void proxy_resume_free(base_clients *bc);
/* pc got its player ent (BASE_PLAYER went): the grace ends, the game hears onClientResumed
 * when pc came with a RESUME's session, and pc gets a new ticket. */
void proxy_resume_attached(base_clients *bc, proxy_client *pc, mc_entity *ent);
/* The client of entity id went without logging off (its channel died, it went silent):
 * true when the grace time starts (onClientDeath is deferred), false: run it now. */
bool proxy_resume_grace(base_clients *bc, int32_t id);
/* The entity's client went for good (logged off, kicked, destroyed): forget its ticket. */
void proxy_resume_forget(base_clients *bc, int32_t id);
/* Graces that ran out (onClientDeath) and tickets due for renewal. */
void proxy_resume_tick(base_clients *bc);
int proxy_resume_add_watchers(base_clients *bc);

/* proxy_calls.c: the client nub's interface (client -> baseapp messages). */
extern const mc_interface proxy_client_iface;

/* proxy_world.c: MOVE from a client (a handler of proxy_client_iface); a newly bound client's
 * cell is told to introduce its view afresh. */
void mc_cw_on_move(void *ctx, const mc_message_info *info, mc_istream *data);

#endif
