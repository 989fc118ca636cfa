/* The control-plane interface on the internal nub: dispatching control messages (up to
 * the parts that sit on it through s->up), sending protobuf-c payloads, requests with
 * replies, and channel bookkeeping. */
#include "server_internal.h"
#include "common/log.h"
#include "server/control.h"
#include "server/pb.h"

#include <stdlib.h>
#include <string.h>

struct mc_server_request {
    const mc_message_info *info;
    bool answered;
};

const char *mc_control_name(unsigned id)
{
    switch (id) {
    case MC_CTL_REGISTER: return "REGISTER";
    case MC_CTL_HEARTBEAT: return "HEARTBEAT";
    case MC_CTL_DEREGISTER: return "DEREGISTER";
    case MC_CTL_PROCESS_EVENT: return "PROCESS_EVENT";
    case MC_CTL_QUERY: return "QUERY";
    case MC_CTL_WATCHER: return "WATCHER";
    case MC_CTL_UNKNOWN_PROCESS: return "UNKNOWN_PROCESS";
    case MC_CTL_ID_RANGE: return "ID_RANGE";
    case MC_CTL_GLOBAL_REGISTER: return "GLOBAL_REGISTER";
    case MC_CTL_GLOBAL_DEREGISTER: return "GLOBAL_DEREGISTER";
    case MC_CTL_GLOBAL_LOOKUP: return "GLOBAL_LOOKUP";
    case MC_CTL_SPACE_NOTICE: return "SPACE_NOTICE";
    case MC_CTL_CELL_LAYOUT: return "CELL_LAYOUT";
    case MC_CTL_CELL_LOAD: return "CELL_LOAD";
    default: return "?";
    }
}

/* A control message we drop unread: counted, and logged (the first ten, then one in a
 * thousand, so a flood cannot fill the log). */
static void reject(mc_server *s, const char *src, uint8_t id, const char *why, size_t len)
{
    s->control_rejected++;
    if (s->control_rejected <= 10 || s->control_rejected % 1000 == 0)
        MC_WARNING("%s from %s (%zu bytes) dropped: %s (%llu dropped so far)",
                   mc_control_name(id), src, len, why,
                   (unsigned long long)s->control_rejected);
}

/* Notifications about the cluster come from the manager only. */
static bool from_manager(const mc_server *s, const mc_message_info *info)
{
    return s->desc.role != MC_ROLE_MANAGER && info->source &&
           mc_address_equal(info->source, &s->manager);
}

/* Control messages that change state are taken only on a channel: a channel's packets are
 * numbered (a replayed datagram is a duplicate and dropped) and bound to the peer's address.
 * REGISTER comes off-channel (whatever state a channel is in), and QUERY, GLOBAL_LOOKUP and
 * WATCHER from tools, which hold the cluster secret but no channel. */
static bool needs_channel(uint8_t id)
{
    switch (id) {
    case MC_CTL_HEARTBEAT:
    case MC_CTL_DEREGISTER:
    case MC_CTL_PROCESS_EVENT:
    case MC_CTL_UNKNOWN_PROCESS:
    case MC_CTL_ID_RANGE:
    case MC_CTL_GLOBAL_REGISTER:
    case MC_CTL_GLOBAL_DEREGISTER:
    case MC_CTL_SPACE_NOTICE:
    case MC_CTL_CELL_LAYOUT:
    case MC_CTL_CELL_LOAD:
        return true;
    default:
        return false;
    }
}

static void on_control(void *ctx, const mc_message_info *info, mc_istream *data)
{
    mc_server *s = ctx;
    uint8_t id = info->def->id;
    char src[MC_ADDRESS_STRLEN] = "?";
    if (info->source)
        mc_address_format(info->source, src, sizeof src);
    size_t len = mc_istream_remaining(data);
    if (len > MC_CTL_MAX_PAYLOAD) {
        reject(s, src, id, "larger than a control message may be", len);
        return;
    }
    if (needs_channel(id) && !info->channel) {
        reject(s, src, id, "off-channel (taken only on the sender's channel)", len);
        return;
    }
    const uint8_t *bytes = len ? mc_read_bytes(data, len) : (const uint8_t *)"";
    if (!bytes)
        return;
    switch (id) {
    case MC_CTL_WATCHER:
        s->up.watcher_request(s, info, bytes, len);
        return;
    case MC_CTL_PROCESS_EVENT:
    case MC_CTL_UNKNOWN_PROCESS:
        if (!from_manager(s, info))
            reject(s, src, id, "not from the manager", len);
        else if (id == MC_CTL_PROCESS_EVENT)
            s->up.process_event(s, bytes, len);
        else
            s->up.unknown_process(s, bytes, len);
        return;
    case MC_CTL_CELL_LAYOUT:
        if (!from_manager(s, info)) {
            reject(s, src, id, "not from the manager", len);
            return;
        }
        break;
    default:
        break;
    }
    if (!s->desc.on_control) {
        MC_WARNING("%s from %s: not handled by a %s", mc_control_name(id), src,
                   mc_role_name(s->desc.role));
        return;
    }
    mc_server_request req = {.info = info};
    s->desc.on_control(s, s->desc.ctx, id, src, bytes, len, info->is_request ? &req : NULL);
}

static const mc_message_def control_defs[] = {
    {MC_CTL_REGISTER, "REGISTER", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_HEARTBEAT, "HEARTBEAT", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_DEREGISTER, "DEREGISTER", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_PROCESS_EVENT, "PROCESS_EVENT", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_QUERY, "QUERY", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_WATCHER, "WATCHER", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_UNKNOWN_PROCESS, "UNKNOWN_PROCESS", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_ID_RANGE, "ID_RANGE", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_GLOBAL_REGISTER, "GLOBAL_REGISTER", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_GLOBAL_DEREGISTER, "GLOBAL_DEREGISTER", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_GLOBAL_LOOKUP, "GLOBAL_LOOKUP", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_SPACE_NOTICE, "SPACE_NOTICE", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_CELL_LAYOUT, "CELL_LAYOUT", MC_MSG_VARIABLE, 4, on_control},
    {MC_CTL_CELL_LOAD, "CELL_LOAD", MC_MSG_VARIABLE, 4, on_control},
};
static const mc_interface control_iface = MC_INTERFACE("control", control_defs);

const mc_interface *mc_control_interface(void) { return &control_iface; }

/* --- channel bookkeeping -------------------------------------------------------------- */

static mc_channel *channel_to(mc_server *s, const mc_address *to);

static void track_channel(mc_server *s, mc_channel *ch)
{
    for (size_t i = 0; i < s->nchannels; i++)
        if (s->channels[i] == ch)
            return;
    if (s->nchannels == s->channels_cap) {
        size_t cap = s->channels_cap ? s->channels_cap * 2 : 16;
        mc_channel **c = realloc(s->channels, cap * sizeof *c);
        if (!c)
            return; /* only the shutdown flush would miss it */
        s->channels = c;
        s->channels_cap = cap;
    }
    s->channels[s->nchannels++] = ch;
}

static void on_channel_created(void *ctx, mc_channel *ch) { track_channel(ctx, ch); }

static void on_channel_dead(void *ctx, mc_channel *ch, mc_channel_death reason)
{
    mc_server *s = ctx;
    for (size_t i = 0; i < s->nchannels; i++)
        if (s->channels[i] == ch) {
            s->channels[i] = s->channels[--s->nchannels];
            break;
        }
    if (reason == MC_CHANNEL_DEATH_NUB_FREED || reason == MC_CHANNEL_DEATH_CLOSED)
        return; /* freed with the nub, or closed on purpose (a new one replaces it) */
    char addr[MC_ADDRESS_STRLEN];
    mc_address_format(mc_channel_address(ch), addr, sizeof addr);
    MC_INFO("channel to %s died (%s)", addr, mc_channel_death_name(reason));
    bool restarted = reason == MC_CHANNEL_DEATH_PEER_RESTARTED;
    if (s->desc.role != MC_ROLE_MANAGER && strcmp(addr, s->manager_addr) == 0)
        s->up.manager_dead(s, restarted);
    /* A restarted peer is a new incarnation at the same address: it registers itself, and
     * the registry retires the old one then; that is not the death of a live process. */
    if (!restarted && s->desc.on_channel_dead)
        s->desc.on_channel_dead(s, s->desc.ctx, addr);
}

static void untrack(mc_server *s, mc_channel *ch)
{
    for (size_t i = 0; ch && i < s->nchannels; i++)
        if (s->channels[i] == ch) {
            s->channels[i] = s->channels[--s->nchannels];
            return;
        }
}

void mc_server_forget_peer(mc_server *s, const char *addr)
{
    mc_address a;
    if (mc_address_parse(addr, &a) != MC_OK)
        return;
    untrack(s, mc_nub_find_channel(s->internal, &a));
}

void mc_server_set_channel_timeout(mc_server *s, const mc_address *addr, mc_time_us timeout_us)
{
    mc_channel *ch = channel_to(s, addr);
    if (ch)
        mc_channel_set_inactivity_timeout(ch, timeout_us);
}

bool mc_server_channels_idle(mc_server *s)
{
    for (size_t i = 0; i < s->nchannels; i++)
        if (!mc_channel_idle(s->channels[i]))
            return false;
    return true;
}

static mc_channel *channel_to(mc_server *s, const mc_address *to)
{
    mc_channel *ch = mc_nub_channel(s->internal, to, MC_CHANNEL_INTERNAL);
    if (ch)
        track_channel(s, ch);
    return ch;
}

/* --- sending -------------------------------------------------------------------------- */

int mc_server_send(mc_server *s, const char *addr, uint8_t msg_id, const void *msg)
{
    mc_address to;
    if (mc_address_parse(addr, &to) != MC_OK)
        return MC_ERR_ADDRESS;
    const mc_message_def *def = mc_interface_find(&control_iface, msg_id);
    mc_channel *ch = channel_to(s, &to);
    if (!def || !ch)
        return def ? MC_ERR_NO_MEMORY : MC_ERR_INVALID;
    size_t n = 0;
    uint8_t *buf = mc_pb_pack(msg, &n);
    if (!buf)
        return MC_ERR_NO_MEMORY;
    int rc = mc_channel_send_message(ch, def, buf, n);
    free(buf);
    if (rc == MC_OK)
        rc = mc_channel_send(ch);
    return rc;
}

int mc_server_send_manager(mc_server *s, uint8_t msg_id, const void *msg)
{
    if (s->desc.role == MC_ROLE_MANAGER || !s->manager_addr[0])
        return MC_ERR_STATE;
    return mc_server_send(s, s->manager_addr, msg_id, msg);
}

int mc_server_reply(mc_server *s, mc_server_request *request, const void *msg)
{
    if (!request || request->answered)
        return MC_ERR_STATE;
    size_t n = 0;
    uint8_t *buf = mc_pb_pack(msg, &n);
    if (!buf)
        return MC_ERR_NO_MEMORY;
    int rc = mc_reply(request->info, buf, n);
    free(buf);
    request->answered = true;
    return rc;
}

typedef struct {
    mc_server *s;
    void (*on_reply)(mc_server *s, int status, const uint8_t *data, size_t len, void *arg);
    void *arg;
} pending_request;

static void on_reply(void *ctx, mc_reply_status status, const mc_message_info *info,
                     mc_istream *data)
{
    pending_request *p = ctx;
    const uint8_t *bytes = NULL;
    size_t len = 0;
    if (status == MC_REPLY_OK && data) {
        len = mc_istream_remaining(data);
        bytes = len ? mc_read_bytes(data, len) : (const uint8_t *)"";
    }
    /* Called for every outcome, MC_REPLY_CANCELLED (server being freed) included, so the
     * handler can release what it holds. */
    p->on_reply(p->s, (int)status, bytes, len, p->arg);
    free(p);
}

int mc_server_send_request(mc_server *s, const mc_address *to, uint8_t msg_id, const void *msg,
                           void (*cb)(mc_server *s, int status, const uint8_t *data, size_t len,
                                      void *arg),
                           void *arg, mc_time_us timeout_us, bool off_channel)
{
    const mc_message_def *def = mc_interface_find(&control_iface, msg_id);
    mc_channel *ch = off_channel ? NULL : channel_to(s, to);
    if (!def || (!off_channel && !ch))
        return def ? MC_ERR_NO_MEMORY : MC_ERR_INVALID;
    pending_request *p = malloc(sizeof *p);
    size_t n = 0;
    uint8_t *buf = p ? mc_pb_pack(msg, &n) : NULL;
    if (!buf) {
        free(p);
        return MC_ERR_NO_MEMORY;
    }
    p->s = s;
    p->on_reply = cb;
    p->arg = arg;
    int rc;
    if (!off_channel) {
        rc = mc_channel_request(ch, def, buf, n, on_reply, p, timeout_us);
        if (rc != MC_OK)
            free(p);
    } else {
        mc_bundle *b = mc_bundle_new(s->internal);
        rc = b ? mc_bundle_start_request(b, def, on_reply, p, timeout_us) : MC_ERR_NO_MEMORY;
        if (rc != MC_OK) {
            free(p);
        } else {
            /* From here the nub calls on_reply exactly once (it frees p). */
            mc_bundle_write(b, buf, n);
            rc = mc_bundle_end_message(b);
            if (rc == MC_OK)
                rc = mc_nub_send_bundle(s->internal, to, b, MC_SEND_RELIABLE_ONCE);
            if (rc != MC_OK)
                rc = MC_OK; /* not sent: the request times out and on_reply reports it */
        }
        mc_bundle_free(b);
    }
    free(buf);
    return rc;
}

/* --- interfaces ----------------------------------------------------------------------- */

int mc_server_open_interfaces(mc_server *s, char *err, size_t errlen)
{
    mc_nub_config cfg;
    mc_nub_config_init(&cfg);
    cfg.bind = mc_config_get_string(s->cfg, "internal");
    size_t nctl = control_iface.count, nrole = s->desc.role_message_count;
    s->iface_defs = calloc(nctl + nrole, sizeof *s->iface_defs);
    if (!s->iface_defs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(s->iface_defs, control_defs, nctl * sizeof *s->iface_defs);
    if (nrole)
        memcpy(s->iface_defs + nctl, s->desc.role_messages, nrole * sizeof *s->iface_defs);
    s->iface.name = "internal";
    s->iface.defs = s->iface_defs;
    s->iface.count = nctl + nrole;
    for (size_t i = 0; i < nrole; i++)
        if (s->desc.role_messages[i].id < 32) {
            snprintf(err, errlen, "role message %s: id %u is reserved for the framework",
                     s->desc.role_messages[i].name, s->desc.role_messages[i].id);
            return -1;
        }
    char why[256];
    if (mc_interface_validate(&s->iface, why, sizeof why) != MC_OK) {
        snprintf(err, errlen, "internal interface: %s", why);
        return -1;
    }
    cfg.iface = &s->iface;
    cfg.handler_ctx = s;
    const char *secret_file = mc_auth_secret_file(mc_config_get_string(s->cfg, "secretFile"));
    if (!secret_file) {
        snprintf(err, errlen,
                 "no cluster secret: give --secretFile FILE or set MC_SECRET_FILE "
                 "(deploy/cluster makes one in its run dir)");
        return -1;
    }
    if (mc_auth_load_secret(secret_file, cfg.auth_secret, err, errlen) != 0)
        return -1;
    cfg.authenticate = true;
    cfg.auth_portable = mc_config_get_bool(s->cfg, "portableAuth");
    uint64_t timeout_ms = mc_config_get_uint(s->cfg, "channelTimeoutMs");
    cfg.inactivity_timeout_us = timeout_ms * MC_US_PER_MS;
    int rc = mc_nub_new(s->base, &cfg, &s->internal);
    mc_auth_wipe_secret(cfg.auth_secret);
    if (rc != MC_OK) {
        snprintf(err, errlen, "cannot open the internal interface on %s: %s", cfg.bind,
                 mc_status_name(rc));
        return -1;
    }
    mc_nub_set_channel_dead_handler(s->internal, on_channel_dead, s);
    mc_nub_set_channel_created_handler(s->internal, on_channel_created, s);
    mc_address_format(mc_nub_address(s->internal), s->internal_addr, sizeof s->internal_addr);
    if (mc_nub_register_watchers(s->internal, s->watchers, "nub") != MC_OK)
        MC_WARNING("cannot publish the internal interface's watchers under nub/");

    if (s->desc.has_external) {
        mc_nub_config ext;
        mc_nub_config_init(&ext);
        ext.bind = mc_config_get_string(s->cfg, "external");
        ext.accept_channels = false; /* clients arrive with the login flow (next issues) */
        ext.accept_traits = MC_CHANNEL_EXTERNAL;
        ext.handler_ctx = s;
        rc = mc_nub_new(s->base, &ext, &s->external);
        if (rc != MC_OK) {
            snprintf(err, errlen, "cannot open the external interface on %s: %s", ext.bind,
                     mc_status_name(rc));
            return -1;
        }
        mc_address_format(mc_nub_address(s->external), s->external_addr,
                          sizeof s->external_addr);
        if (mc_nub_register_watchers(s->external, s->watchers, "externalNub") != MC_OK)
            MC_WARNING("cannot publish the external interface's watchers under externalNub/");
    }
    return 0;
}

void mc_server_close_interfaces(mc_server *s)
{
    if (s->external)
        mc_nub_free(s->external);
    if (s->internal)
        mc_nub_free(s->internal);
    s->external = s->internal = NULL;
    s->nchannels = 0;
    free(s->iface_defs);
    s->iface_defs = NULL;
}

mc_nub *mc_server_internal_nub(mc_server *s) { return s->internal; }

void mc_server_release_external(mc_server *s)
{
    if (s->external)
        mc_nub_free(s->external); /* its externalNub/ watchers go with it */
    s->external = NULL;
}
void *mc_server_role_ctx(mc_server *s) { return s->desc.ctx; }
mc_channel *mc_server_channel(mc_server *s, const mc_address *addr) { return channel_to(s, addr); }

int mc_server_load_secret(mc_server *s, uint8_t secret[32], char *err, size_t errlen)
{
    const char *file = mc_auth_secret_file(mc_config_get_string(s->cfg, "secretFile"));
    if (!file) {
        snprintf(err, errlen, "no cluster secret: give --secretFile FILE or set MC_SECRET_FILE");
        return -1;
    }
    return mc_auth_load_secret(file, secret, err, errlen);
}
