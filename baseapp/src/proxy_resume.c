/* Resuming a proxy's client without a login (proxy.h, secure/resume.h): the resumption
 * tickets a baseapp gives its clients, the grace time a base keeps after its client's channel
 * died, RESUME_PREPARE from the loginapp, and the test knob that drops a client's channel.
 *
 * Each base with a client has a proxy_resume_state: the serial of the one ticket it honours
 * and the account name. Every BASE_PLAYER (connection, resumption, giveClientTo) is followed
 * by a TICKET with a new serial (the previous ticket is void), and a ticket is renewed at
 * half its lifetime. When the channel dies or goes silent, the state keeps a grace deadline:
 * onClientDeath runs only when it passes without the client coming back. RESUME_PREPARE (a
 * live loginapp only) names the entity, serial and account; a match gets a session issued as
 * PREPARE_LOGIN's, marked as a resumption, and the serial is spent at once (single use). */
#include "backup.h"
#include "base_db.h"
#include "common/log.h"
#include "entity/client_wire.h"
#include "mercury/auth.h"
#include "proto/login.h"
#include "proxy_internal.h"
#include "retire.h"
#include "secure/resume.h"
#include "server/pb.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(MC_CW_TICKET_BYTES == MC_RESUME_TICKET_SIZE, "the TICKET message holds a ticket");
_Static_assert(MC_CW_RESUME_KEY_BYTES == MC_RESUME_KEY_BYTES, "and its resume key");

const mc_option proxy_resume_options[PROXY_RESUME_OPTION_COUNT] = {
    {"resumeGraceMs", MC_OPT_UINT, "30000",
     "a base whose client's channel died (or went silent) keeps it this long for the client to "
     "resume with its ticket before onClientDeath (0: at once, no resumption; at most 600000; "
     "keep it well above the clients' own silence limit, 10 s in the client library)"},
    {"resumeTicketMs", MC_OPT_UINT, "600000",
     "a resumption ticket's lifetime; renewed at half of it while the client is connected "
     "(1000..86400000)"},
    {"faultKnobs", MC_OPT_BOOL, "false",
     "tests: publish faults/dropClient (set an entity id: its client's channel is dropped "
     "without a word, as if the network took it) and faults/dropAllClients (set N: as many "
     "clients' channels)"},
};

static proxy_resume_state *state_of(base_clients *bc, int32_t id)
{
    return id > 0 ? mc_map_get(&bc->resume, (uint64_t)id, 0) : NULL;
}

static void drop_state(base_clients *bc, int32_t id)
{
    proxy_resume_state *rs = state_of(bc, id);
    if (!rs)
        return;
    mc_map_remove(&bc->resume, (uint64_t)id, 0);
    sodium_memzero(rs, sizeof *rs);
    free(rs);
}

static uint64_t wall_ms(void)
{
    int64_t s;
    int32_t us;
    mc_clock_wall(&s, &us);
    return (uint64_t)s * 1000u + (uint64_t)us / 1000u;
}

/* A new ticket for pc's player ent (the previous one is void). */
static void issue(base_clients *bc, proxy_client *pc, mc_entity *ent)
{
    if (!bc->ticket_ms || !pc->account[0] || !pc->ch || pc->closing)
        return;
    proxy_resume_state *rs = state_of(bc, ent->id);
    if (!rs) {
        rs = calloc(1, sizeof *rs);
        if (!rs || !mc_map_put(&bc->resume, (uint64_t)ent->id, 0, rs)) {
            free(rs);
            return;
        }
    }
    uint32_t serial;
    do
        serial = randombytes_random();
    while (serial == 0 || serial == rs->serial);
    mc_resume_ticket_info info;
    memset(&info, 0, sizeof info);
    info.entity_id = ent->id;
    info.serial = serial;
    info.expires_ms = wall_ms() + bc->ticket_ms;
    randombytes_buf(info.resume_key, sizeof info.resume_key);
    snprintf(info.name, sizeof info.name, "%s", pc->account);
    uint8_t ticket[MC_RESUME_TICKET_SIZE];
    if (mc_resume_ticket_seal(bc->ticket_key, &info, ticket) != MC_SECURE_OK) {
        sodium_memzero(&info, sizeof info);
        return;
    }
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cw_write_ticket(&os, ticket, info.resume_key, (uint32_t)bc->ticket_ms);
    const mc_message_def *def = mc_cw_def(&mc_cw_client_send_iface, MC_CW_TICKET);
    if (mc_ostream_ok(&os) &&
        mc_channel_send_message(pc->ch, def, os.data, os.size) == MC_OK) {
        /* only a ticket on its way replaces the one the client holds */
        rs->serial = serial;
        rs->grace_until = 0;
        snprintf(rs->account, sizeof rs->account, "%s", pc->account);
        bc->st.tickets++;
        pc->ticket_renew_at = mc_clock_now_us() + bc->ticket_ms * MC_US_PER_MS / 2;
        /* the base's backup carries the serial: sent at once, so that a restore of it just
         * after a login or a giveClientTo lets the client resume (not a period later) */
        backup_send_now(bc->e, ent->id);
    } else if (!rs->serial && !rs->account[0]) {
        drop_state(bc, ent->id); /* a new state that never had a ticket */
    }
    sodium_memzero(os.data, os.size);
    mc_ostream_free(&os);
    sodium_memzero(&info, sizeof info);
}

void proxy_resume_attached(base_clients *bc, proxy_client *pc, mc_entity *ent)
{
    issue(bc, pc, ent);
}

bool proxy_resume_grace(base_clients *bc, int32_t id)
{
    proxy_resume_state *rs = state_of(bc, id);
    if (!rs || !bc->grace_ms || bc->freeing)
        return false; /* (a spent serial still waits for its new channel: grace too) */
    rs->grace_until = mc_clock_now_us() + bc->grace_ms * MC_US_PER_MS;
    bc->st.grace_started++;
    MC_INFO("entity %d: its client's channel is gone; kept %llu ms for it to resume",
            (int)id, (unsigned long long)bc->grace_ms);
    return true;
}

void proxy_resume_forget(base_clients *bc, int32_t id)
{
    if (bc)
        drop_state(bc, id);
}

bool proxy_in_grace(mc_engine *e, int32_t id)
{
    base_clients *bc = proxy_state(e);
    proxy_resume_state *rs = bc ? state_of(bc, id) : NULL;
    return rs && rs->grace_until;
}

void proxy_resume_tick(base_clients *bc)
{
    mc_time_us now = mc_clock_now_us();
    int32_t due[64];
    size_t n = 0;
    size_t pos = 0;
    uint64_t key;
    for (proxy_resume_state *rs;
         n < sizeof due / sizeof due[0] && (rs = mc_map_next_key(&bc->resume, &pos, &key, NULL));)
        if (rs->grace_until && now >= rs->grace_until)
            due[n++] = (int32_t)key;
    /* the hooks may destroy entities and forget states: by id, after the sweep */
    for (size_t i = 0; i < n; i++) {
        drop_state(bc, due[i]);
        if (proxy_of_entity(bc, due[i]))
            continue; /* a client came meanwhile */
        mc_entity *ent = mc_engine_find(bc->e, due[i]);
        if (!ent || ent->part != MC_PART_BASE || ent->in_reap)
            continue;
        bc->st.grace_expired++;
        bc->st.deaths++;
        MC_INFO("%s %d: its client did not resume within %llu ms: onClientDeath",
                ent->td->name, (int)ent->id, (unsigned long long)bc->grace_ms);
        mc_engine_run_hook(bc->e, ent, MC_HOOK_CLIENT_DEATH, NULL);
    }
    /* renewals */
    pos = 0;
    for (proxy_client *pc; (pc = mc_map_next(&bc->by_entity, &pos));) {
        if (pc->need_player || pc->closing || !pc->ticket_renew_at ||
            now < pc->ticket_renew_at)
            continue;
        mc_entity *ent = mc_engine_find(bc->e, pc->entity_id);
        if (ent && !ent->in_reap) {
            issue(bc, pc, ent);
            if (pc->ch)
                mc_channel_send(pc->ch);
        }
    }
}

/* ---- in a base's backup ------------------------------------------------------------------ */

void proxy_resume_export(mc_engine *e, int32_t id, mc_ostream *os)
{
    base_clients *bc = proxy_state(e);
    proxy_resume_state *rs = bc ? state_of(bc, id) : NULL;
    if (!rs || !rs->account[0])
        return;
    mc_write_u32(os, rs->serial);
    mc_write_string(os, rs->account);
}

bool proxy_resume_import(mc_engine *e, int32_t id, const uint8_t *bytes, size_t len)
{
    base_clients *bc = proxy_state(e);
    if (!bc || !bc->grace_ms || bc->freeing || !bytes || !len || id <= 0)
        return false;
    mc_istream is;
    mc_istream_init(&is, bytes, len);
    uint32_t serial = mc_read_u32(&is);
    char account[BASE_SESSION_NAME_MAX + 1] = "";
    bool got = mc_read_string_into(&is, account, sizeof account);
    if (!got || !mc_istream_ok(&is) || mc_istream_remaining(&is) ||
        !mc_login_name_ok(account, strlen(account))) {
        bc->st.resume_refused++;
        return false;
    }
    proxy_resume_state *rs = state_of(bc, id);
    if (!rs) {
        rs = calloc(1, sizeof *rs);
        if (!rs || !mc_map_put(&bc->resume, (uint64_t)id, 0, rs)) {
            free(rs);
            return false;
        }
    }
    rs->serial = serial ? serial : 1u; /* (any serial once: see restored) */
    snprintf(rs->account, sizeof rs->account, "%s", account);
    rs->restored = true;
    rs->grace_until = mc_clock_now_us() + bc->grace_ms * MC_US_PER_MS;
    bc->st.grace_started++;
    MC_INFO("entity %d (restored): its client may resume here within %llu ms", (int)id,
            (unsigned long long)bc->grace_ms);
    return true;
}

bool proxy_send_to_resume(mc_engine *e, int32_t id)
{
    base_clients *bc = proxy_state(e);
    proxy_client *pc = bc ? proxy_of_entity(bc, id) : NULL;
    if (!pc)
        return false;
    proxy_close(bc, pc, MC_CW_BYE_RESUME, "its baseapp is retiring: resume on its new home");
    pc->moved_id = id;
    return true;
}

/* ---- RESUME_PREPARE ------------------------------------------------------------------ */

static void reply(mc_engine *e, const mc_origin *o, const Mc__Login__ResumePrepareReply *r)
{
    if (mc_engine_freeing(e) || !o->is_request)
        return;
    size_t n = 0;
    uint8_t *buf = mc_pb_pack(r, &n);
    if (!buf)
        return;
    mc_engine_reply(e, o, buf, n);
    sodium_memzero(buf, n);
    free(buf);
}

static void reply_status(mc_engine *e, const mc_origin *o, Mc__Login__ResumeStatus st,
                         const char *reason)
{
    Mc__Login__ResumePrepareReply r = MC__LOGIN__RESUME_PREPARE_REPLY__INIT;
    r.status = st;
    r.reason = (char *)reason;
    r.external_addr = "";
    reply(e, o, &r);
}

void proxy_on_resume_prepare(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    base_clients *bc = proxy_state(e);
    base_db *db = base_db_of(e);
    size_t len = mc_istream_remaining(is);
    const uint8_t *bytes = len ? mc_read_bytes(is, len) : (const uint8_t *)"";
    if (o->local || !mc_server_peer_is_live(mc_engine_server(e), &o->addr, MC_ROLE_LOGINAPP) ||
        !bc || !db || !db->sessions) {
        if (bc)
            bc->st.resume_refused++;
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        reply_status(e, o, MC__LOGIN__RESUME_STATUS__RESUME_BAD_REQUEST,
                     "RESUME_PREPARE is taken from the cluster's loginapps only");
        return;
    }
    Mc__Login__ResumePrepareRequest *q =
        bytes && len <= MC_PREPARE_LOGIN_MAX_PAYLOAD
            ? mc__login__resume_prepare_request__unpack(NULL, len, bytes)
            : NULL;
    size_t nlen = q && q->account_name ? strlen(q->account_name) : 0;
    if (!o->is_request || !q || q->entity_id <= 0 || q->serial == 0 ||
        !mc_login_name_ok(q->account_name, nlen)) {
        bc->st.resume_refused++;
        mc_engine_count_refused(e, MC_REFUSE_MALFORMED);
        reply_status(e, o, MC__LOGIN__RESUME_STATUS__RESUME_BAD_REQUEST,
                     "malformed RESUME_PREPARE");
        mc_pb_free(q);
        return;
    }
    mc_entity *ent = mc_engine_find(e, q->entity_id);
    proxy_resume_state *rs = state_of(bc, q->entity_id);
    if (!ent || ent->part != MC_PART_BASE || ent->destroying || ent->in_reap ||
        retire_is_leaving(e, ent->id)) {
        bc->st.resume_not_here++;
        reply_status(e, o, MC__LOGIN__RESUME_STATUS__RESUME_NOT_HERE, "no such proxy here");
    } else if (!rs) {
        bc->st.resume_expired++;
        reply_status(e, o, MC__LOGIN__RESUME_STATUS__RESUME_EXPIRED,
                     "its client is gone (the grace time ran out, or it logged off)");
    } else if (!rs->serial || (rs->serial != q->serial && !rs->restored) ||
               strcmp(rs->account, q->account_name) != 0) {
        /* (a restored base's backup may predate the client's newest ticket: the loginapp
         * checked the ticket, its expiry and the client's proof of its key, so the first
         * resumption after the restore may bring any serial of this entity and account) */
        bc->st.resume_used++;
        reply_status(e, o, MC__LOGIN__RESUME_STATUS__RESUME_USED,
                     "that ticket was used or replaced");
    } else {
        uint64_t sid = 0;
        uint8_t key[MC_SECURE_KEY_BYTES];
        if (base_sessions_issue(db->sessions, ent->id, rs->account, true, &sid, key) != 0) {
            reply_status(e, o, MC__LOGIN__RESUME_STATUS__RESUME_BUSY,
                         "too many login sessions waiting (--maxSessions)");
        } else {
            rs->serial = 0; /* spent: single use (a new ticket comes with the new channel) */
            rs->restored = false;
            bc->st.resume_ok++;
            MC_INFO("%s %d: resumption of '%s' accepted, a session issued", ent->td->name,
                    (int)ent->id, rs->account);
            Mc__Login__ResumePrepareReply r = MC__LOGIN__RESUME_PREPARE_REPLY__INIT;
            r.status = MC__LOGIN__RESUME_STATUS__RESUME_OK;
            r.reason = "";
            r.session_id = sid;
            r.session_key.data = key;
            r.session_key.len = sizeof key;
            r.external_addr = (char *)mc_server_external_addr(mc_engine_server(e));
            reply(e, o, &r);
            sodium_memzero(key, sizeof key);
        }
    }
    mc_pb_free(q);
}

/* ---- the fault knob, watchers, life -------------------------------------------------------- */

static void get_drop(void *ctx, mc_watch_value *out)
{
    (void)ctx;
    out->as.u = 0;
}

/* faults/dropClient ID: the client of base ID loses its channel without a word (the
 * transport forgets its endpoint, the channel goes): as when the network takes it. */
static bool set_drop(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    base_clients *bc = ctx;
    proxy_client *pc = v->as.u <= INT32_MAX ? proxy_of_entity(bc, (int32_t)v->as.u) : NULL;
    if (!pc) {
        snprintf(why, whylen, "entity %llu has no client here", (unsigned long long)v->as.u);
        return false;
    }
    bc->st.knob_dropped++;
    MC_WARNING("fault knob: dropping the channel of entity %d's client without a word",
               (int)pc->entity_id);
    proxy_lost(bc, pc, true);
    return true;
}

/* faults/dropAllClients N: as dropClient for up to N clients (any of them). */
static bool set_drop_all(void *ctx, const mc_watch_value *v, char *why, size_t whylen)
{
    (void)why;
    (void)whylen;
    base_clients *bc = ctx;
    int32_t ids[256];
    size_t n = 0;
    size_t pos = 0;
    uint64_t key;
    while (n < v->as.u && n < 256 && mc_map_next_key(&bc->by_entity, &pos, &key, NULL))
        ids[n++] = (int32_t)key;
    for (size_t i = 0; i < n; i++) {
        proxy_client *pc = proxy_of_entity(bc, ids[i]);
        if (!pc)
            continue;
        bc->st.knob_dropped++;
        proxy_lost(bc, pc, true);
    }
    MC_WARNING("fault knob: dropped the channels of %zu clients without a word", n);
    return true;
}

int proxy_resume_add_watchers(base_clients *bc)
{
    mc_watchers *w = mc_server_watchers(mc_engine_server(bc->e));
    struct {
        const char *path;
        uint64_t *v;
    } u[] = {
        {"clients/resume/tickets", &bc->st.tickets},
        {"clients/resume/resumed", &bc->st.resumed},
        {"clients/resume/graceStarted", &bc->st.grace_started},
        {"clients/resume/graceExpired", &bc->st.grace_expired},
        {"clients/resume/prepareOk", &bc->st.resume_ok},
        {"clients/resume/prepareNotHere", &bc->st.resume_not_here},
        {"clients/resume/prepareUsed", &bc->st.resume_used},
        {"clients/resume/prepareExpired", &bc->st.resume_expired},
        {"clients/resume/prepareRefused", &bc->st.resume_refused},
        {"clients/resume/graceMs", &bc->grace_ms},
        {"clients/resume/ticketMs", &bc->ticket_ms},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        bad |= mc_watch_add_uint(w, u[i].path, u[i].v, MC_WATCH_READ_ONLY) != MC_WATCH_OK;
    if (mc_config_get_bool(mc_server_config(mc_engine_server(bc->e)), "faultKnobs")) {
        bad |= mc_watch_add(w, "faults/dropClient", MC_WATCH_UINT, MC_WATCH_READ_WRITE,
                            get_drop, set_drop, bc) != MC_WATCH_OK;
        bad |= mc_watch_add(w, "faults/dropAllClients", MC_WATCH_UINT, MC_WATCH_READ_WRITE,
                            get_drop, set_drop_all, bc) != MC_WATCH_OK;
        bad |= mc_watch_add_uint(w, "faults/droppedClients", &bc->st.knob_dropped,
                                 MC_WATCH_READ_ONLY) != MC_WATCH_OK;
    }
    return bad ? -1 : 0;
}

int proxy_resume_init(base_clients *bc, char *err, size_t errlen)
{
    mc_server *s = mc_engine_server(bc->e);
    const mc_config *cfg = mc_server_config(s);
    bc->grace_ms = mc_config_get_uint(cfg, "resumeGraceMs");
    bc->ticket_ms = mc_config_get_uint(cfg, "resumeTicketMs");
    if (bc->grace_ms > 600000) {
        snprintf(err, errlen, "--resumeGraceMs must be 0..600000");
        return -1;
    }
    if (bc->ticket_ms < 1000 || bc->ticket_ms > 86400000) {
        snprintf(err, errlen, "--resumeTicketMs must be 1000..86400000");
        return -1;
    }
    uint8_t secret[MC_AUTH_SECRET_BYTES];
    if (mc_server_load_secret(s, secret, err, errlen) != 0)
        return -1;
    int rc = mc_resume_ticket_key(secret, bc->ticket_key);
    mc_auth_wipe_secret(secret);
    if (rc != 0) {
        snprintf(err, errlen, "cannot derive the resumption ticket key");
        return -1;
    }
    return 0;
}

void proxy_resume_free(base_clients *bc)
{
    size_t pos = 0;
    for (proxy_resume_state *rs; (rs = mc_map_next(&bc->resume, &pos));) {
        sodium_memzero(rs, sizeof *rs);
        free(rs);
    }
    mc_map_free(&bc->resume);
    sodium_memzero(bc->ticket_key, sizeof bc->ticket_key);
}
