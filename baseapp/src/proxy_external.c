/* The baseapp's external interface (proxy.h): options, the encrypted transport on the
 * registered external address with its own nub for client channels, the transport's
 * callbacks (a client connected / went), the tick, watchers clients/... */
#include "base_db.h"
#include "common/log.h"
#include "entity/client_wire.h"
#include "proxy_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROXY_TICK_MS 100
/* An idle client channel sends a keepalive this often (Mercury's default is 1 s): the client
 * library's default silence (3 s, docs/CLIENT.md "Resuming") is six of them. */
#define PROXY_KEEPALIVE_MS 500u

const mc_option proxy_options[PROXY_OPTION_COUNT] = {
    {"maxClients", MC_OPT_UINT, "10000",
     "clients connected to the external interface at most (1..1000000)"},
    {"clientIdleMs", MC_OPT_UINT, "10000",
     "a client silent this long is dropped (its base hears onClientDeath; 1000..600000)"},
    {"clientPacketsPerS", MC_OPT_UINT, "500",
     "packets a second one client may send; more are dropped unread (10..1000000)"},
    {"clientBytesPerS", MC_OPT_UINT, "262144",
     "bytes a second one client may send; more are dropped unread (2048..100000000)"},
    {"clientMovesPerS", MC_OPT_UINT, "30",
     "MOVEs a second one client may send (a second's worth at once); more are dropped and "
     "counted in clients/movesDropped (1..10000)"},
    {"clientCallsPerS", MC_OPT_UINT, "50",
     "exposed calls a second one client may make (BASE_CALL and CELL_CALL); more are dropped "
     "and counted in clients/callsDropped (1..100000)"},
    {"clientCallBurst", MC_OPT_UINT, "100",
     "exposed calls one client may make at once before --clientCallsPerS applies (1..100000)"},
    {"clientCallDropsToKick", MC_OPT_UINT, "500",
     "a client with more calls than this dropped within one second is disconnected "
     "(clients/kickedForCalls; 1..10000000)"},
    {"clientMaxOverflowPackets", MC_OPT_UINT, "512",
     "reliable packets waiting for one client beyond its window of 256 unacknowledged ones; "
     "a client that lets more pile up (it stops acknowledging) is disconnected "
     "(clients/cutOffQueueFull; 16..262144)"},
};

base_clients *proxy_state(mc_engine *e)
{
    base_db *db = base_db_of(e);
    return db ? db->clients : NULL;
}

uint64_t proxy_peer_key(const mc_address *a)
{
    return (1ULL << 48) | ((uint64_t)a->ip << 16) | a->port;
}

bool proxy_log_allowed(uint64_t count) { return count <= 10 || count % 1000 == 0; }

/* ---- the transport's callbacks --------------------------------------------------------- */

static int on_connected(void *ctx, mc_secure_endpoint *ep)
{
    base_clients *bc = ctx;
    base_db *db = base_db_of(bc->e);
    mc_address peer = {.ip = ep->peer.ip, .port = ep->peer.port};
    char a[MC_ADDRESS_STRLEN];
    int32_t id = 0;
    char account[BASE_SESSION_NAME_MAX + 1] = "";
    bool resumed = false;
    if (base_sessions_take(db->sessions, ep->session_id, &id, account, &resumed) != 0) {
        bc->st.session_refused++;
        if (proxy_log_allowed(bc->st.session_refused))
            MC_WARNING("client %s refused: its session is used or expired (%llu refused)",
                       mc_address_format(&peer, a, sizeof a),
                       (unsigned long long)bc->st.session_refused);
        return -1;
    }
    proxy_client *pc = NULL;
    if (proxy_bind_new(bc, &peer, id, &pc) != 0) {
        bc->st.session_refused++;
        if (proxy_log_allowed(bc->st.session_refused))
            MC_WARNING("client %s refused: its base %d is not here any more",
                       mc_address_format(&peer, a, sizeof a), (int)id);
        return -1;
    }
    ep->user = pc;
    memcpy(pc->account, account, sizeof pc->account);
    pc->resumed = resumed;
    bc->st.connects++;
    MC_INFO("client %s connected: its player is %s %d", mc_address_format(&peer, a, sizeof a),
            mc_defs_type(mc_engine_defs(bc->e), pc->type)->name, (int)id);
    event_active(bc->ready_ev, 0, 0); /* BASE_PLAYER once the ACCEPT is out */
    return 0;
}

static void on_gone(void *ctx, mc_secure_endpoint *ep)
{
    base_clients *bc = ctx;
    proxy_client *pc = ep->user;
    ep->user = NULL;
    if (!pc)
        return;
    if (!pc->closing && !bc->freeing) {
        char a[MC_ADDRESS_STRLEN];
        MC_INFO("client %s of entity %d went silent (or started again): dropped",
                mc_address_format(&pc->peer, a, sizeof a), (int)pc->entity_id);
    }
    proxy_lost(bc, pc, false); /* the transport forgets the endpoint itself */
}

static void on_channel_dead(void *ctx, mc_channel *ch, mc_channel_death why)
{
    base_clients *bc = ctx;
    proxy_client *pc = mc_channel_user_data(ch);
    if (!pc || bc->freeing)
        return;
    pc->ch = NULL;
    char a[MC_ADDRESS_STRLEN];
    if (why == MC_CHANNEL_DEATH_OVERFLOW) {
        /* it stopped acknowledging while its packets kept coming: never let it grow */
        bc->st.cut_off_queue++;
        MC_WARNING("client %s of entity %d cut off: more than %u packets waiting for it "
                   "(--clientMaxOverflowPackets; %llu clients so far)",
                   mc_address_format(&pc->peer, a, sizeof a), (int)pc->entity_id,
                   bc->max_overflow, (unsigned long long)bc->st.cut_off_queue);
    }
    MC_INFO("client %s of entity %d: its channel died (%s)",
            mc_address_format(&pc->peer, a, sizeof a), (int)pc->entity_id,
            mc_channel_death_name(why));
    proxy_lost(bc, pc, true);
}

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    proxy_tick(ctx);
}

static void on_ready(evutil_socket_t fd, short what, void *ctx)
{
    (void)fd;
    (void)what;
    proxy_send_ready(ctx);
}

/* ---- watchers ------------------------------------------------------------------------ */

enum {
    W_CONNECTED, W_CONNECTS, W_SESSION_REFUSED, W_TAKEN_OVER, W_DEATHS, W_GIVEN, W_CALLS_IN,
    W_CALLS_OUT, W_PROPS, W_KICKED, W_REFUSED_TOTAL, W_HELLOS, W_HANDSHAKES, W_REJECTED,
    W_REPEATED, W_AUTH_FAILURES, W_RATE_LIMITED, W_NO_ENDPOINT, W_DROPPED, W_DATA_IN,
    W_DATA_OUT, W_SEND_ERRORS, W_UNKNOWN_SESSION, W_MOVES, W_MOVES_DROPPED, W_CALLS_DROPPED,
    W_KICKED_CALLS, W_CUT_OFF_QUEUE, W_BYTES_OUT, W_REFUSED /* + reason */
};

static const struct {
    const char *path;
    int what;
} watch_defs[] = {
    {"clients/connected", W_CONNECTED},
    {"clients/connects", W_CONNECTS},
    {"clients/sessionRefused", W_SESSION_REFUSED},
    {"clients/takenOver", W_TAKEN_OVER},
    {"clients/deaths", W_DEATHS},
    {"clients/givenTo", W_GIVEN},
    {"clients/callsFromClients", W_CALLS_IN},
    {"clients/callsToClients", W_CALLS_OUT},
    {"clients/propertyChanges", W_PROPS},
    {"clients/kicked", W_KICKED},
    {"clients/moves", W_MOVES},
    {"clients/movesDropped", W_MOVES_DROPPED},
    {"clients/callsDropped", W_CALLS_DROPPED},
    {"clients/kickedForCalls", W_KICKED_CALLS},
    {"clients/cutOffQueueFull", W_CUT_OFF_QUEUE},
    {"clients/refused/total", W_REFUSED_TOTAL},
    {"clients/hellos", W_HELLOS},
    {"clients/handshakes", W_HANDSHAKES},
    {"clients/handshakesRejected", W_REJECTED},
    {"clients/handshakesRepeated", W_REPEATED},
    {"clients/authFailures", W_AUTH_FAILURES},
    {"clients/rateLimited", W_RATE_LIMITED},
    {"clients/noEndpoint", W_NO_ENDPOINT},
    {"clients/dropped", W_DROPPED},
    {"clients/packetsIn", W_DATA_IN},
    {"clients/packetsOut", W_DATA_OUT},
    {"clients/bytesOut", W_BYTES_OUT},
    {"clients/sendErrors", W_SEND_ERRORS},
    {"clients/unknownSession", W_UNKNOWN_SESSION},
};

static void get_counter(void *ctx, mc_watch_value *out)
{
    struct proxy_watch *w = ctx;
    base_clients *bc = w->bc;
    mc_secure_transport_stats ts;
    memset(&ts, 0, sizeof ts);
    if (bc->t)
        mc_secure_transport_get_stats(bc->t, &ts);
    uint64_t v = 0;
    switch (w->what) {
    case W_CONNECTED: v = bc->by_entity.count; break;
    case W_CONNECTS: v = bc->st.connects; break;
    case W_SESSION_REFUSED: v = bc->st.session_refused; break;
    case W_TAKEN_OVER: v = bc->st.taken_over; break;
    case W_DEATHS: v = bc->st.deaths; break;
    case W_GIVEN: v = bc->st.given; break;
    case W_CALLS_IN: v = bc->st.calls_in; break;
    case W_CALLS_OUT: v = bc->st.calls_out; break;
    case W_PROPS: v = bc->st.property_changes; break;
    case W_KICKED: v = bc->st.kicked; break;
    case W_MOVES: v = bc->st.moves; break;
    case W_MOVES_DROPPED: v = bc->st.moves_dropped; break;
    case W_CALLS_DROPPED: v = bc->st.calls_dropped; break;
    case W_KICKED_CALLS: v = bc->st.kicked_calls; break;
    case W_CUT_OFF_QUEUE: v = bc->st.cut_off_queue; break;
    case W_REFUSED_TOTAL: v = bc->st.refused_total; break;
    case W_HELLOS: v = ts.hellos; break;
    case W_HANDSHAKES: v = ts.accepted; break;
    case W_REJECTED: v = ts.rejected; break;
    case W_REPEATED: v = ts.repeated; break;
    case W_AUTH_FAILURES: v = ts.auth_failures; break;
    case W_RATE_LIMITED: v = ts.rate_limited; break;
    case W_NO_ENDPOINT: v = ts.no_endpoint; break;
    case W_DROPPED: v = ts.dropped; break;
    case W_DATA_IN: v = ts.data_in; break;
    case W_DATA_OUT: v = ts.data_out; break;
    case W_BYTES_OUT: v = ts.bytes_out; break;
    case W_SEND_ERRORS: v = ts.send_errors; break;
    case W_UNKNOWN_SESSION: v = ts.unknown_session; break;
    default:
        if (w->what >= W_REFUSED && w->what < W_REFUSED + CLIENT_REFUSE_COUNT)
            v = bc->st.refused[w->what - W_REFUSED];
    }
    out->as.u = v;
}

static int add_watchers(base_clients *bc)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(bc->e));
    int bad = 0;
    size_t n = sizeof watch_defs / sizeof watch_defs[0];
    for (size_t i = 0; i < n + CLIENT_REFUSE_COUNT && bc->nwatch < sizeof bc->watch / sizeof bc->watch[0]; i++) {
        struct proxy_watch *pw = &bc->watch[bc->nwatch++];
        pw->bc = bc;
        char path[MC_WATCH_MAX_PATH];
        if (i < n) {
            pw->what = watch_defs[i].what;
            snprintf(path, sizeof path, "%s", watch_defs[i].path);
        } else {
            pw->what = W_REFUSED + (int)(i - n);
            snprintf(path, sizeof path, "clients/refused/%s",
                     client_refuse_name((client_refuse)(i - n)));
        }
        bad |= mc_watch_add(w, path, MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_counter, NULL, pw) !=
               MC_WATCH_OK;
    }
    return bad ? -1 : 0;
}

/* ---- making and freeing ------------------------------------------------------------------ */

int proxy_init(mc_engine *e, char *err, size_t errlen)
{
    base_db *db = base_db_of(e);
    mc_server *s = mc_engine_server(e);
    const mc_config *cfg = mc_server_config(s);
    uint64_t max_clients = mc_config_get_uint(cfg, "maxClients");
    uint64_t idle_ms = mc_config_get_uint(cfg, "clientIdleMs");
    uint64_t pps = mc_config_get_uint(cfg, "clientPacketsPerS");
    uint64_t bps = mc_config_get_uint(cfg, "clientBytesPerS");
    if (max_clients < 1 || max_clients > 1000000) {
        snprintf(err, errlen, "--maxClients must be 1..1000000");
        return -1;
    }
    if (idle_ms < 1000 || idle_ms > 600000) {
        snprintf(err, errlen, "--clientIdleMs must be 1000..600000");
        return -1;
    }
    if (pps < 10 || pps > 1000000) {
        snprintf(err, errlen, "--clientPacketsPerS must be 10..1000000");
        return -1;
    }
    if (bps < 2048 || bps > 100000000) {
        snprintf(err, errlen, "--clientBytesPerS must be 2048..100000000");
        return -1;
    }
    uint64_t moves = mc_config_get_uint(cfg, "clientMovesPerS");
    uint64_t calls = mc_config_get_uint(cfg, "clientCallsPerS");
    uint64_t burst = mc_config_get_uint(cfg, "clientCallBurst");
    uint64_t kick = mc_config_get_uint(cfg, "clientCallDropsToKick");
    uint64_t overflow = mc_config_get_uint(cfg, "clientMaxOverflowPackets");
    if (moves < 1 || moves > 10000) {
        snprintf(err, errlen, "--clientMovesPerS must be 1..10000");
        return -1;
    }
    if (calls < 1 || calls > 100000 || burst < 1 || burst > 100000) {
        snprintf(err, errlen, "--clientCallsPerS and --clientCallBurst must be 1..100000");
        return -1;
    }
    if (kick < 1 || kick > 10000000) {
        snprintf(err, errlen, "--clientCallDropsToKick must be 1..10000000");
        return -1;
    }
    if (overflow < 16 || overflow > 262144) {
        snprintf(err, errlen, "--clientMaxOverflowPackets must be 16..262144");
        return -1;
    }
    if (!db || !db->sessions) {
        snprintf(err, errlen, "the external interface needs the login sessions");
        return -1;
    }
    const char *ext = mc_server_external_addr(s);
    if (!ext || !*ext) {
        snprintf(err, errlen, "the baseapp has no external address");
        return -1;
    }
    base_clients *bc = calloc(1, sizeof *bc);
    if (!bc) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    bc->e = e;
    db->clients = bc;
    bc->limits = (client_limits){.moves_per_s = (double)moves, .calls_per_s = (double)calls,
                                 .call_burst = (double)burst, .call_drops_to_kick = kick};
    bc->max_overflow = (uint32_t)overflow;

    mc_nub_config nc;
    mc_nub_config_init(&nc);
    nc.bind = "127.0.0.1:0"; /* its own socket stays idle: the transport carries it */
    nc.iface = &proxy_client_iface;
    nc.handler_ctx = bc;
    nc.accept_channels = false; /* a channel exists only for a client that connected */
    nc.accept_traits = MC_CHANNEL_EXTERNAL;
    nc.max_message_size = MC_CW_MAX_MESSAGE;
    nc.max_reassembly_bytes = 64u * 1024u * 1024u;
    nc.inactivity_timeout_us = idle_ms * MC_US_PER_MS;
    nc.keepalive_interval_us = PROXY_KEEPALIVE_MS * MC_US_PER_MS;
    nc.socket_buffer_bytes = 256u * 1024u;
    nc.max_overflow_packets = (uint32_t)overflow; /* past it the channel dies: cut off */
    int rc = mc_nub_new(mc_server_event_base(s), &nc, &bc->nub);
    if (rc != MC_OK) {
        snprintf(err, errlen, "cannot open the client nub: %s", mc_status_name(rc));
        return -1;
    }
    mc_nub_set_channel_dead_handler(bc->nub, on_channel_dead, bc);

    /* the plain external socket makes way for the encrypted one on the same address */
    mc_server_release_external(s);
    mc_secure_transport_config tc;
    memset(&tc, 0, sizeof tc);
    tc.bind = ext;
    tc.nub = bc->nub;
    tc.ctx = bc;
    tc.lookup = base_sessions_lookup;
    tc.lookup_ctx = db->sessions;
    tc.session_known = base_sessions_known;
    tc.limits.max_clients = (size_t)max_clients;
    tc.limits.idle_timeout_ms = (uint32_t)idle_ms;
    tc.limits.max_packets_per_s = (double)pps;
    tc.limits.max_bytes_per_s = (double)bps < MC_SECURE_LARGEST_DATA ? MC_SECURE_LARGEST_DATA
                                                                     : (double)bps;
    tc.on_connected = on_connected;
    tc.on_gone = on_gone;
    char why[256];
    bc->t = mc_secure_transport_server(mc_server_event_base(s), &tc, why, sizeof why);
    if (!bc->t) {
        snprintf(err, errlen, "cannot open the external interface on %s: %s", ext, why);
        return -1;
    }
    if (mc_nub_register_watchers(bc->nub, mc_server_watchers(s), "externalNub") != MC_OK)
        MC_WARNING("cannot publish the client nub's watchers under externalNub/");
    bc->tick_ev = event_new(mc_server_event_base(s), -1, EV_PERSIST, on_tick, bc);
    bc->ready_ev = event_new(mc_server_event_base(s), -1, 0, on_ready, bc);
    struct timeval tv = {0, PROXY_TICK_MS * 1000};
    if (proxy_resume_init(bc, err, errlen) != 0)
        return -1;
    if (!bc->tick_ev || !bc->ready_ev || event_add(bc->tick_ev, &tv) != 0 ||
        add_watchers(bc) != 0 || proxy_add_commands(e) != 0 ||
        proxy_resume_add_watchers(bc) != 0) {
        snprintf(err, errlen, "cannot set up the external interface's events and watchers");
        return -1;
    }
    MC_INFO("external interface (encrypted client channels) on %s: at most %llu clients, "
            "dropped after %llu ms of silence, %llu packets and %llu bytes a second each, "
            "%llu moves and %llu calls a second (burst %llu, disconnected past %llu dropped "
            "in a second), cut off past %llu waiting packets",
            ext, (unsigned long long)max_clients, (unsigned long long)idle_ms,
            (unsigned long long)pps, (unsigned long long)bps, (unsigned long long)moves,
            (unsigned long long)calls, (unsigned long long)burst, (unsigned long long)kick,
            (unsigned long long)overflow);
    return 0;
}

static void tell_one(void *ctx, mc_entity *ent)
{
    base_clients *bc = ctx;
    proxy_client *pc = proxy_of_entity(bc, ent->id);
    if (pc)
        proxy_close(bc, pc, MC_CW_BYE_SHUTDOWN, "the baseapp is shutting down");
}

void proxy_on_shutdown(mc_engine *e)
{
    base_clients *bc = proxy_state(e);
    if (bc && bc->by_entity.count) {
        MC_INFO("telling %zu clients the baseapp is shutting down", bc->by_entity.count);
        mc_entity_table_each(mc_engine_table(e), tell_one, bc);
    }
}

static void free_records(base_clients *bc)
{
    /* every record is in by_peer */
    size_t pos = 0;
    for (proxy_client *pc; (pc = mc_map_next(&bc->by_peer, &pos));) {
        if (pc->ch)
            mc_channel_set_user_data(pc->ch, NULL);
        proxy_free_record(pc);
    }
}

void proxy_free(mc_engine *e)
{
    base_clients *bc = proxy_state(e);
    if (!bc)
        return;
    bc->freeing = true;
    if (bc->tick_ev)
        event_free(bc->tick_ev);
    if (bc->ready_ev)
        event_free(bc->ready_ev);
    if (bc->t)
        mc_secure_transport_free(bc->t); /* on_gone for each: records freed, no hooks */
    bc->t = NULL;
    free_records(bc);
    if (bc->nub)
        mc_nub_free(bc->nub);
    proxy_resume_free(bc);
    mc_map_free(&bc->by_entity);
    mc_map_free(&bc->by_peer);
    base_db_of(e)->clients = NULL;
    free(bc);
}
