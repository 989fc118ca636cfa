/* The game client's channel to its baseapp (mcclient/client.h). */
#include "mcclient/client.h"
#include "common/clock.h"
#include "common/game_module.h"
#include "mcclient/login.h"
#include "world_view.h"
#include "mercury/mercury.h"
#include "secure/transport.h"

#include <event2/event.h>
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mc_client {
    mc_client_config cfg;
    struct event_base *base;
    mc_nub *nub;
    mc_secure_transport *t;
    mc_address server;
    mc_channel *ch;
    int state;
    int end;
    int32_t player_id;
    uint16_t player_type;
    void *props;               /* the player's client part (config.module) */
    mc_call_sink sink;
    mc_client_stats st;
    world_view view;
    /* resumption */
    uint8_t ticket[MC_RESUME_TICKET_SIZE];
    uint8_t resume_key[MC_RESUME_KEY_BYTES];
    bool has_ticket;
    bool want_resume;          /* the channel died: resume at the next tick */
    mc_login_attempt *resume;  /* the RESUME under way (NULL: waiting to try) */
    uint32_t tries;
    uint64_t next_try_ms;
    uint64_t old_packets_sent, old_bytes_sent, old_packets_received, old_bytes_received;
    char loginapp[64], bind_ip[48]; /* copies of config.loginapp and bind_ip */
};

/* An idle channel sends a keepalive this often (Mercury's default is 1 s): the default
 * silence (MC_CLIENT_IDLE_MS_DEFAULT, 3 s) is then six of the baseapp's (it sends at the same
 * pace), so a lossy path must lose six in a row to fake a death, not three. */
#define CLIENT_KEEPALIVE_MS 500u

/* One RESUME attempt's limit (a forged or foreign ticket is never answered). */
#define RESUME_ATTEMPT_MS 4000u

static int sink_send(void *ctx, const mc_mailbox_ref *to, mc_part part, uint16_t index,
                     const uint8_t *args, size_t len);

static const mc_game_type *game_type(const mc_client *c, uint16_t type)
{
    const mc_game_module *m = c->cfg.module;
    return m && type < m->ntypes ? &m->types[type] : NULL;
}

static void props_drop(mc_client *c)
{
    const mc_game_type *gt = game_type(c, c->player_type);
    if (c->props && gt)
        gt->props_free(MC_PART_CLIENT, c->props);
    free(c->props);
    c->props = NULL;
}

/* The client-part struct of a new player from a checked BASE_PLAYER's bytes. */
static void props_from_player(mc_client *c, const uint8_t *data, size_t len)
{
    props_drop(c);
    const mc_game_type *gt = game_type(c, c->player_type);
    if (!gt || !gt->props_size[MC_PART_CLIENT])
        return;
    c->props = calloc(1, gt->props_size[MC_PART_CLIENT]);
    if (!c->props || gt->props_init(c->cfg.defs, MC_PART_CLIENT, c->props) != 0) {
        free(c->props);
        c->props = NULL;
        return;
    }
    mc_istream is;
    mc_istream_init(&is, data, len);
    mc_read_bytes(&is, 6);
    uint16_t n = mc_read_u16(&is);
    char why[256];
    for (uint16_t i = 0; i < n && mc_istream_ok(&is); i++) {
        uint16_t idx = mc_read_u16(&is);
        if (gt->props_decode_one(c->cfg.defs, MC_PART_CLIENT, c->props, idx, &is, why,
                                 sizeof why) != MC_CALL_OK)
            break;
    }
}

const char *mc_client_end_name(int how)
{
    switch (how) {
    case MC_CLIENT_END_NONE: return "none";
    case MC_CLIENT_END_REJECTED: return "rejected";
    case MC_CLIENT_END_TIMED_OUT: return "timed out";
    case MC_CLIENT_END_DISCONNECTED: return "disconnected";
    case MC_CLIENT_END_LOST: return "lost";
    case MC_CLIENT_END_CLOSED: return "closed";
    default: return "?";
    }
}

static void finish(mc_client *c, int how, int reason, const char *text)
{
    if (c->state == MC_CLIENT_ENDED)
        return;
    c->state = MC_CLIENT_ENDED;
    c->end = how;
    if (c->ch) {
        mc_channel_set_user_data(c->ch, NULL);
        c->ch = NULL; /* the nub frees it with the client */
    }
    if (c->cfg.cb.on_end)
        c->cfg.cb.on_end(c->cfg.ud, c, how, reason, text ? text : "");
}

/* ---- what the baseapp sends -------------------------------------------------------------- */

static mc_client *from(void *ctx, const mc_message_info *info)
{
    mc_client *c = ctx;
    if (c->state != MC_CLIENT_CONNECTED || !mc_address_equal(info->source, &c->server))
        return NULL;
    return c;
}

static void mc_cw_on_base_player(void *ctx, const mc_message_info *info, mc_istream *data)
{
    mc_client *c = from(ctx, info);
    if (!c)
        return;
    mc_cw_player p;
    char why[256];
    size_t len = mc_istream_remaining(data);
    const uint8_t *bytes = len ? mc_read_bytes(data, len) : NULL;
    mc_istream is;
    mc_istream_init(&is, bytes, len);
    if (mc_cw_read_player(c->cfg.defs, &is, &p, why, sizeof why) != 0) {
        c->st.ignored++;
        return;
    }
    if (p.id != c->player_id)
        world_view_clear(&c->view); /* another player (giveClientTo): its cell starts afresh */
    props_drop(c);
    c->player_id = p.id;
    c->player_type = p.type;
    props_from_player(c, bytes, len);
    c->st.players++;
    if (c->cfg.cb.on_player)
        c->cfg.cb.on_player(c->cfg.ud, c, &p);
    mc_cw_player_free(&p);
}

static void mc_cw_on_call(void *ctx, const mc_message_info *info, mc_istream *data)
{
    mc_client *c = from(ctx, info);
    if (!c)
        return;
    int32_t id;
    uint16_t index;
    const uint8_t *args;
    size_t len;
    const mc_entity_type_def *td = mc_defs_type(c->cfg.defs, c->player_type);
    const mc_def_method *m = NULL;
    if (!mc_cw_read_call(data, &id, &index, &args, &len) || id != c->player_id || !td ||
        !(m = mc_defs_method(td, MC_PART_CLIENT, index))) {
        c->st.ignored++;
        return;
    }
    mc_value *vals = calloc(m->nargs ? m->nargs : 1, sizeof *vals);
    mc_istream is;
    mc_istream_init(&is, args, len);
    char why[256];
    if (!vals || mc_defs_decode_args(c->cfg.defs, m, &is, vals, why, sizeof why) != 0) {
        c->st.ignored++;
    } else {
        c->st.calls++;
        if (c->cfg.cb.on_call)
            c->cfg.cb.on_call(c->cfg.ud, c, id, m, vals);
        if (c->props && c->cfg.module) {
            /* the game's generated client handler, with the player's client part */
            mc_call_ctx call = {.defs = c->cfg.defs, .sink = &c->sink,
                                .self = mc_client_player_mailbox(c, MC_COMPONENT_CLIENT)};
            if (mc_game_dispatch(c->cfg.module, &call, c->player_type, MC_PART_CLIENT, index,
                                 c->props, args, len, NULL, why, sizeof why) != MC_CALL_OK)
                c->st.ignored++;
        }
    }
    for (size_t i = 0; vals && i < m->nargs; i++)
        mc_value_free(&vals[i]);
    free(vals);
}

static void mc_cw_on_property(void *ctx, const mc_message_info *info, mc_istream *data)
{
    mc_client *c = from(ctx, info);
    if (!c)
        return;
    int32_t id;
    const mc_def_property *p;
    mc_value v;
    char why[256];
    size_t len = mc_istream_remaining(data);
    const uint8_t *bytes = len ? mc_read_bytes(data, len) : NULL;
    mc_istream in;
    mc_istream_init(&in, bytes, len);
    if (mc_cw_read_property(c->cfg.defs, c->player_type, &in, &id, &p, &v, why, sizeof why) !=
        0) {
        c->st.ignored++;
        return;
    }
    if (id != c->player_id) {
        mc_value_free(&v);
        c->st.ignored++;
        return;
    }
    c->st.properties++;
    const mc_game_type *gt = game_type(c, c->player_type);
    if (c->props && gt) {
        mc_istream is;
        mc_istream_init(&is, bytes + 6, len - 6);
        gt->props_decode_one(c->cfg.defs, MC_PART_CLIENT, c->props, p->index, &is, why,
                             sizeof why);
    }
    if (c->cfg.cb.on_property)
        c->cfg.cb.on_property(c->cfg.ud, c, id, p, &v);
    mc_value_free(&v);
}

static bool can_resume(const mc_client *c);

static void mc_cw_on_disconnect(void *ctx, const mc_message_info *info, mc_istream *data)
{
    mc_client *c = from(ctx, info);
    if (!c)
        return;
    uint8_t reason;
    char text[MC_CW_REASON_MAX + 1];
    if (!mc_cw_read_disconnect(data, &reason, text, sizeof text)) {
        c->st.ignored++;
        return;
    }
    if (reason == MC_CW_BYE_RESUME && can_resume(c)) {
        /* its proxy moved to another baseapp (a retiring one offloaded it): resume there with
         * the ticket, as after a lost channel (at the end of this tick) */
        c->want_resume = true;
        return;
    }
    finish(c, MC_CLIENT_END_DISCONNECTED, reason, text);
}

static void world_record(void *ctx, const mc_world_record *r)
{
    mc_client *c = ctx;
    c->st.world_records++;
    if (c->cfg.cb.on_world)
        c->cfg.cb.on_world(c->cfg.ud, c, r);
}

/* A run of world records; stamp: WORLD_VOLATILE's (0 for WORLD). */
static void on_world(mc_client *c, uint32_t stamp, mc_istream *data)
{
    size_t len = mc_istream_remaining(data);
    const uint8_t *bytes = len ? mc_read_bytes(data, len) : NULL;
    char why[256];
    if (!bytes || c->player_id <= 0 ||
        world_view_apply(&c->view, c->cfg.defs, c->player_id, c->player_type, stamp, bytes,
                         len, world_record, c, why, sizeof why) != 0) {
        c->st.ignored++;
        return;
    }
    c->st.world_bytes += len;
}

static void mc_cw_on_world(void *ctx, const mc_message_info *info, mc_istream *data)
{
    mc_client *c = from(ctx, info);
    if (c)
        on_world(c, 0, data);
}

/* WORLD_VOLATILE: u32 stamp (1, 2, 3... per client channel), then the records. */
static void mc_cw_on_world_volatile(void *ctx, const mc_message_info *info, mc_istream *data)
{
    mc_client *c = from(ctx, info);
    if (!c)
        return;
    uint32_t stamp = mc_read_u32(data);
    if (!mc_istream_ok(data) || !stamp) {
        c->st.ignored++;
        return;
    }
    on_world(c, stamp, data);
}

/* TICKET: the resumption ticket and its key (kept until the next one, or until used). */
static void mc_cw_on_ticket(void *ctx, const mc_message_info *info, mc_istream *data)
{
    mc_client *c = from(ctx, info);
    if (!c)
        return;
    uint32_t lifetime_ms;
    if (!mc_cw_read_ticket(data, c->ticket, c->resume_key, &lifetime_ms)) {
        c->st.ignored++;
        return;
    }
    c->has_ticket = true;
    c->st.tickets++;
}

static const mc_message_def client_defs[] = {MC_CW_TO_CLIENT(MC_DEF_WITH_HANDLER)};
static const mc_interface client_iface = MC_INTERFACE("client", client_defs);

/* ---- the transport and the channel ----------------------------------------------------- */

static bool can_resume(const mc_client *c)
{
    return c->cfg.loginapp && c->has_ticket && c->state == MC_CLIENT_CONNECTED;
}

static void on_channel_dead(void *ctx, mc_channel *ch, mc_channel_death why)
{
    mc_client *c = ctx;
    if (mc_channel_user_data(ch) != c)
        return;
    c->ch = NULL;
    if (can_resume(c)) {
        c->want_resume = true; /* at the end of this tick: the nub is running now */
        return;
    }
    finish(c, MC_CLIENT_END_LOST, 0, mc_channel_death_name(why));
}

static void on_handshake(void *ctx, int status, uint8_t reject_status)
{
    mc_client *c = ctx;
    if (status != MC_SECURE_OK) {
        char text[64];
        snprintf(text, sizeof text, "handshake status %u", (unsigned)reject_status);
        finish(c, status == MC_SECURE_REJECTED ? MC_CLIENT_END_REJECTED : MC_CLIENT_END_TIMED_OUT,
               reject_status, text);
        return;
    }
    c->ch = mc_nub_channel(c->nub, &c->server, MC_CHANNEL_EXTERNAL);
    if (!c->ch) {
        finish(c, MC_CLIENT_END_LOST, 0, "out of memory");
        return;
    }
    mc_channel_set_user_data(c->ch, c);
    mc_channel_set_dead_handler(c->ch, on_channel_dead, c);
    c->state = MC_CLIENT_CONNECTED;
}

/* The nub and the encrypted transport of a channel to baseapp with this session (the first
 * packet goes out now). 0, or -1 with a reason. */
static int open_channel(mc_client *c, const char *baseapp, uint64_t session_id,
                        const uint8_t session_key[MC_SECURE_KEY_BYTES], char *err, size_t errlen)
{
    if (mc_address_parse(baseapp, &c->server) != MC_OK || !c->server.port) {
        snprintf(err, errlen, "baseapp address '%s' is not a.b.c.d:port", baseapp);
        return -1;
    }
    mc_nub_config nc;
    mc_nub_config_init(&nc);
    nc.bind = "127.0.0.1:0"; /* idle: the transport carries its datagrams */
    nc.iface = &client_iface;
    nc.handler_ctx = c;
    nc.accept_channels = false;
    nc.accept_traits = MC_CHANNEL_EXTERNAL;
    nc.max_message_size = MC_CW_MAX_MESSAGE;
    nc.inactivity_timeout_us = (mc_time_us)c->cfg.idle_ms * MC_US_PER_MS;
    nc.keepalive_interval_us = CLIENT_KEEPALIVE_MS * MC_US_PER_MS;
    nc.socket_buffer_bytes = 256u * 1024u;
    if (mc_nub_new(c->base, &nc, &c->nub) != MC_OK) {
        snprintf(err, errlen, "cannot create the client's nub");
        return -1;
    }
    mc_secure_transport_config tc;
    memset(&tc, 0, sizeof tc);
    tc.bind = "0.0.0.0:0";
    tc.nub = c->nub;
    tc.ctx = c;
    tc.timeout_ms = c->cfg.timeout_ms;
    tc.on_handshake = on_handshake;
    c->t = mc_secure_transport_client(c->base, &tc, baseapp, session_id, session_key, err,
                                      errlen);
    return c->t ? 0 : -1;
}

/* Free the channel's transport and nub (its counters are kept). */
static void close_channel(mc_client *c)
{
    if (c->ch) {
        mc_channel_set_user_data(c->ch, NULL);
        c->ch = NULL;
    }
    if (c->t)
        mc_secure_transport_free(c->t);
    c->t = NULL;
    if (c->nub) {
        mc_nub_stats ns;
        mc_nub_get_stats(c->nub, &ns);
        c->old_packets_sent += ns.packets_sent;
        c->old_bytes_sent += ns.bytes_sent;
        c->old_packets_received += ns.packets_received;
        c->old_bytes_received += ns.bytes_received;
        mc_nub_free(c->nub);
    }
    c->nub = NULL;
}

mc_client *mc_client_connect(const mc_client_config *cfg, char *err, size_t errlen)
{
    if (!cfg || !cfg->defs || !cfg->baseapp) {
        snprintf(err, errlen, "a client needs the baseapp's address and the defs");
        return NULL;
    }
    mc_client *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->cfg = *cfg;
    c->cfg.baseapp = NULL; /* the caller's strings are not kept: copies */
    if (cfg->loginapp) {
        if (strlen(cfg->loginapp) >= sizeof c->loginapp) {
            snprintf(err, errlen, "loginapp address '%s' is not a.b.c.d:port", cfg->loginapp);
            sodium_memzero(c, sizeof *c);
            free(c);
            return NULL;
        }
        snprintf(c->loginapp, sizeof c->loginapp, "%s", cfg->loginapp);
        c->cfg.loginapp = c->loginapp;
    }
    if (cfg->bind_ip) {
        snprintf(c->bind_ip, sizeof c->bind_ip, "%s", cfg->bind_ip);
        c->cfg.bind_ip = c->bind_ip;
    }
    c->sink = (mc_call_sink){.defs = cfg->defs, .send = sink_send, .ctx = c};
    if (!c->cfg.timeout_ms)
        c->cfg.timeout_ms = 10000;
    if (!c->cfg.idle_ms)
        c->cfg.idle_ms = MC_CLIENT_IDLE_MS_DEFAULT;
    if (!c->cfg.resume_tries)
        c->cfg.resume_tries = 5;
    if (!c->cfg.resume_backoff_ms)
        c->cfg.resume_backoff_ms = 500;
    struct event_config *ec = event_config_new();
    if (ec) {
        event_config_avoid_method(ec, "select"); /* no fd limit surprises */
        c->base = event_base_new_with_config(ec);
        event_config_free(ec);
    }
    if (!c->base) {
        snprintf(err, errlen, "cannot create the client's event base");
        mc_client_free(c);
        return NULL;
    }
    int rc = open_channel(c, cfg->baseapp, cfg->session_id, cfg->session_key, err, errlen);
    sodium_memzero(c->cfg.session_key, sizeof c->cfg.session_key);
    if (rc != 0) {
        mc_client_free(c);
        return NULL;
    }
    c->state = MC_CLIENT_CONNECTING;
    return c;
}

/* ---- resuming ---------------------------------------------------------------------------- */

static void begin_resume(mc_client *c)
{
    c->want_resume = false;
    close_channel(c);
    world_view_clear(&c->view); /* the cell introduces the view again, in full */
    c->state = MC_CLIENT_RESUMING;
    c->tries = 0;
    c->next_try_ms = mc_clock_now_us() / 1000u;
}

static bool retriable(int status)
{
    /* the loginapp or the baseapps could not answer now; a proxy being restored on another
     * baseapp is not found for a moment */
    return status == MC_LOGIN_TIMED_OUT || status == MC_LOGIN_SERVER_ERROR ||
           status == MC_LOGIN_OVERLOADED || status == MC_LOGIN_RATE_LIMITED ||
           status == MC_LOGIN_ENTITY_GONE || status == MC_LOGIN_NO_BASEAPP;
}

static void resume_done(mc_client *c, int status)
{
    if (c->cfg.cb.on_resume)
        c->cfg.cb.on_resume(c->cfg.ud, c, status, mc_login_status_name(status));
}

static void resume_failed(mc_client *c, int status)
{
    c->has_ticket = false;
    sodium_memzero(c->resume_key, sizeof c->resume_key);
    c->st.resume_failures++;
    resume_done(c, status);
    char text[96];
    snprintf(text, sizeof text, "cannot resume: %s", mc_login_status_name(status));
    finish(c, MC_CLIENT_END_LOST, 0, text);
}

static void resume_step(mc_client *c)
{
    uint64_t now = mc_clock_now_us() / 1000u;
    char err[256];
    if (!c->resume) {
        if (now < c->next_try_ms)
            return;
        mc_login_config lc;
        memset(&lc, 0, sizeof lc);
        lc.loginapp = c->cfg.loginapp;
        lc.bind_ip = c->cfg.bind_ip;
        lc.timeout_ms = RESUME_ATTEMPT_MS;
        c->tries++;
        c->st.resume_attempts++;
        c->resume = mc_resume_start(&lc, c->ticket, c->resume_key, now, err, sizeof err);
        if (!c->resume) {
            resume_failed(c, MC_LOGIN_SERVER_ERROR);
            return;
        }
    }
    int status = mc_login_tick(c->resume, now);
    if (status == MC_LOGIN_PENDING)
        return;
    mc_login_result r = *mc_login_result_of(c->resume);
    mc_login_free(c->resume);
    c->resume = NULL;
    if (status == MC_LOGIN_OK) {
        char addr[MC_ADDRESS_STRLEN];
        snprintf(addr, sizeof addr, "%u.%u.%u.%u:%u", r.baseapp_ip >> 24,
                 (r.baseapp_ip >> 16) & 255, (r.baseapp_ip >> 8) & 255, r.baseapp_ip & 255,
                 r.baseapp_port);
        int rc = open_channel(c, addr, r.session_id, r.session_key, err, sizeof err);
        sodium_memzero(&r, sizeof r);
        if (rc != 0) {
            close_channel(c);
            resume_failed(c, MC_LOGIN_SERVER_ERROR);
            return;
        }
        c->has_ticket = false; /* spent: the baseapp sends a new one with the player */
        c->state = MC_CLIENT_CONNECTING;
        c->st.resumes++;
        resume_done(c, MC_LOGIN_OK);
        return;
    }
    sodium_memzero(&r, sizeof r);
    if (retriable(status) && c->tries < c->cfg.resume_tries) {
        uint64_t wait = (uint64_t)c->cfg.resume_backoff_ms << (c->tries - 1 < 6 ? c->tries - 1 : 6);
        c->next_try_ms = now + wait;
        return;
    }
    resume_failed(c, status);
}

int mc_client_resume_now(mc_client *c)
{
    if (!can_resume(c))
        return MC_CALL_ERR_STATE;
    c->want_resume = true;
    return MC_CALL_OK;
}

bool mc_client_has_ticket(const mc_client *c) { return c->has_ticket; }

int mc_client_ticket(const mc_client *c, uint8_t ticket[MC_CW_TICKET_BYTES],
                     uint8_t key[MC_CW_RESUME_KEY_BYTES])
{
    if (!c->has_ticket)
        return -1;
    memcpy(ticket, c->ticket, MC_CW_TICKET_BYTES);
    memcpy(key, c->resume_key, MC_CW_RESUME_KEY_BYTES);
    return 0;
}

static int sink_send(void *ctx, const mc_mailbox_ref *to, mc_part part, uint16_t index,
                     const uint8_t *args, size_t len)
{
    mc_client *c = ctx;
    if (c->player_id <= 0 || !to || to->id != c->player_id)
        return MC_CALL_ERR_NO_ENTITY;
    const mc_entity_type_def *td = mc_defs_type(c->cfg.defs, c->player_type);
    const mc_def_method *m = td && part != MC_PART_CLIENT ? mc_defs_method(td, part, index) : NULL;
    if (!m || m->exposed_index < 0 || m->nreturns)
        return MC_CALL_ERR_NO_METHOD;
    return mc_client_call_raw(c, part, c->player_id, (uint16_t)m->exposed_index, args, len);
}

const mc_call_sink *mc_client_sink(mc_client *c) { return &c->sink; }
void *mc_client_props(const mc_client *c) { return c->props; }

mc_mailbox_ref mc_client_player_mailbox(const mc_client *c, mc_component component)
{
    mc_mailbox_ref m;
    if (c->player_id <= 0 || mc_mailbox_ref_init(&m, c->player_id, c->server.ip, c->server.port,
                                                 component, c->player_type) != 0)
        memset(&m, 0, sizeof m);
    return m;
}

int mc_client_fd(const mc_client *c)
{
    if (c->state == MC_CLIENT_RESUMING)
        return c->resume ? mc_login_fd(c->resume) : -1;
    return c->t ? mc_secure_transport_fd(c->t) : -1;
}
int mc_client_state(const mc_client *c) { return c->state; }
int mc_client_end_of(const mc_client *c) { return c->end; }
int32_t mc_client_player_id(const mc_client *c) { return c->player_id; }
uint16_t mc_client_player_type(const mc_client *c) { return c->player_type; }
void mc_client_get_stats(const mc_client *c, mc_client_stats *out)
{
    *out = c->st;
    out->world_stale = c->view.stale;
    out->packets_sent = c->old_packets_sent;
    out->bytes_sent = c->old_bytes_sent;
    out->packets_received = c->old_packets_received;
    out->bytes_received = c->old_bytes_received;
    if (c->nub) {
        mc_nub_stats ns;
        mc_nub_get_stats(c->nub, &ns);
        out->packets_sent += ns.packets_sent;
        out->bytes_sent += ns.bytes_sent;
        out->packets_received += ns.packets_received;
        out->bytes_received += ns.bytes_received;
    }
}

int mc_client_tick(mc_client *c)
{
    if (c->state == MC_CLIENT_CONNECTING || c->state == MC_CLIENT_CONNECTED)
        event_base_loop(c->base, EVLOOP_NONBLOCK);
    if (c->want_resume && c->state == MC_CLIENT_CONNECTED)
        begin_resume(c);
    if (c->state == MC_CLIENT_RESUMING)
        resume_step(c);
    return c->state;
}

static int send_msg(mc_client *c, uint8_t id, const uint8_t *data, size_t len)
{
    if (c->state != MC_CLIENT_CONNECTED || !c->ch)
        return MC_CALL_ERR_STATE;
    const mc_message_def *def = mc_cw_def(&mc_cw_baseapp_send_iface, id);
    if (mc_channel_send_message(c->ch, def, data, len) != MC_OK || mc_channel_send(c->ch) != MC_OK)
        return MC_CALL_ERR_SEND;
    c->st.sent++;
    return MC_CALL_OK;
}

int mc_client_call_raw(mc_client *c, mc_part part, int32_t entity_id, uint16_t exposed_index,
                       const uint8_t *args, size_t len)
{
    if (part != MC_PART_BASE && part != MC_PART_CELL)
        return MC_CALL_ERR_NO_METHOD;
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cw_write_call(&os, entity_id, exposed_index, args, len);
    int rc = mc_ostream_ok(&os)
                 ? send_msg(c, part == MC_PART_BASE ? MC_CW_BASE_CALL : MC_CW_CELL_CALL, os.data,
                            os.size)
                 : MC_CALL_ERR_ARGS;
    mc_ostream_free(&os);
    return rc;
}

int mc_client_call(mc_client *c, mc_part part, const char *method, const mc_value *args,
                   size_t nargs)
{
    if (c->state != MC_CLIENT_CONNECTED || c->player_id <= 0)
        return MC_CALL_ERR_STATE;
    const mc_entity_type_def *td = mc_defs_type(c->cfg.defs, c->player_type);
    const mc_def_method *m = td && part != MC_PART_CLIENT && method
                                 ? mc_defs_method_by_name(td, part, method)
                                 : NULL;
    if (!m || m->exposed_index < 0 || m->nreturns)
        return MC_CALL_ERR_NO_METHOD;
    if (m->nargs != nargs)
        return MC_CALL_ERR_ARGS;
    mc_ostream os;
    mc_ostream_init(&os);
    char why[256];
    int rc = mc_defs_encode_args(c->cfg.defs, m, args, &os, why, sizeof why) == 0
                 ? mc_client_call_raw(c, part, c->player_id, (uint16_t)m->exposed_index,
                                      os.data, os.size)
                 : MC_CALL_ERR_ARGS;
    mc_ostream_free(&os);
    return rc;
}

int mc_client_send_raw(mc_client *c, uint8_t msg_id, const uint8_t *data, size_t len)
{
    if (!mc_cw_def(&mc_cw_baseapp_send_iface, msg_id))
        return MC_CALL_ERR_SEND;
    return send_msg(c, msg_id, data, len);
}

int mc_client_move(mc_client *c, mc_vector3 position, mc_vector3 direction)
{
    if (c->state != MC_CLIENT_CONNECTED || !c->ch)
        return MC_CALL_ERR_STATE;
    const float v[6] = {position.x, position.y, position.z,
                        direction.x, direction.y, direction.z};
    uint8_t bytes[24];
    for (int i = 0; i < 6; i++) {
        if (!isfinite(v[i]))
            return MC_CALL_ERR_ARGS;
        uint32_t u;
        memcpy(&u, &v[i], 4);
        mc_store_u32(bytes + 4 * i, u);
    }
    const mc_message_def *def = mc_cw_def(&mc_cw_baseapp_send_iface, MC_CW_MOVE);
    if (mc_bundle_add_message(mc_channel_bundle(c->ch), def, MC_RELIABLE_NO, bytes,
                              sizeof bytes) != MC_OK ||
        mc_channel_send(c->ch) != MC_OK)
        return MC_CALL_ERR_SEND;
    c->st.sent++;
    c->view.player.position = position;
    c->view.player.direction = direction;
    return MC_CALL_OK;
}

const mc_client_entity *mc_client_entity_of(const mc_client *c, int32_t id)
{
    if (id == c->player_id && c->view.has_player_cell)
        return &c->view.player;
    return world_view_find(&c->view, id);
}

size_t mc_client_entities(const mc_client *c, const mc_client_entity **out)
{
    *out = c->view.e;
    return c->view.n;
}

void mc_client_close(mc_client *c)
{
    if (!c || c->state == MC_CLIENT_ENDED)
        return;
    if (c->state == MC_CLIENT_CONNECTED)
        send_msg(c, MC_CW_LOG_OFF, NULL, 0);
    finish(c, MC_CLIENT_END_CLOSED, 0, "closed by the client");
}

void mc_client_free(mc_client *c)
{
    if (!c)
        return;
    mc_login_free(c->resume);
    if (c->t)
        mc_secure_transport_free(c->t);
    if (c->nub)
        mc_nub_free(c->nub);
    if (c->base)
        event_base_free(c->base);
    world_view_free(&c->view);
    props_drop(c);
    sodium_memzero(c, sizeof *c);
    free(c);
}
