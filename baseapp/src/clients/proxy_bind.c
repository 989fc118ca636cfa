/* Clients and their players (proxy.h): binding a client to its base, taking over, closing,
 * the client going (onClientDeath), BASE_PLAYER and property changes, giveClientTo. */
#include "app.h"
#include "common/log.h"
#include "entity/client_wire.h"
#include "proxy_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLOSE_GRACE_US (2 * MC_US_PER_S)

proxy_client *proxy_of_entity(base_clients *bc, int32_t id)
{
    return bc && id > 0 ? mc_map_get(&bc->by_entity, (uint64_t)id, 0) : NULL;
}

void proxy_refuse(base_clients *bc, const mc_address *peer, client_refuse r, const char *why)
{
    bc->st.refused[r]++;
    bc->st.refused_total++;
    if (proxy_log_allowed(bc->st.refused[r])) {
        char a[MC_ADDRESS_STRLEN];
        MC_WARNING("client %s: message refused (%s): %s (%llu refused for this reason)",
                   mc_address_format(peer, a, sizeof a), client_refuse_name(r), why,
                   (unsigned long long)bc->st.refused[r]);
    }
}

static void snap_clear(proxy_client *pc)
{
    for (size_t i = 0; i < pc->nsnap; i++)
        free(pc->snap[i]);
    free(pc->snap);
    free(pc->snap_idx);
    free(pc->snap_len);
    pc->snap = NULL;
    pc->snap_idx = NULL;
    pc->snap_len = NULL;
    pc->nsnap = 0;
}

void proxy_free_record(proxy_client *pc)
{
    snap_clear(pc);
    free(pc);
}

/* The BASE_AND_CLIENT properties of the player's type, with empty snapshots. */
static int snap_init(base_clients *bc, proxy_client *pc)
{
    snap_clear(pc);
    const mc_entity_type_def *td = mc_defs_type(mc_engine_defs(bc->e), pc->type);
    size_t n = 0;
    for (size_t i = 0; td && i < td->nprops; i++)
        n += mc_cw_base_client_prop(&td->props[i]);
    pc->snap_idx = calloc(n ? n : 1, sizeof *pc->snap_idx);
    pc->snap = calloc(n ? n : 1, sizeof *pc->snap);
    pc->snap_len = calloc(n ? n : 1, sizeof *pc->snap_len);
    if (!pc->snap_idx || !pc->snap || !pc->snap_len) {
        snap_clear(pc);
        return -1;
    }
    for (size_t i = 0, k = 0; td && i < td->nprops; i++)
        if (mc_cw_base_client_prop(&td->props[i]))
            pc->snap_idx[k++] = (uint16_t)i;
    pc->nsnap = n;
    return 0;
}

static void unbind(base_clients *bc, proxy_client *pc)
{
    if (pc->entity_id > 0 && mc_map_get(&bc->by_entity, (uint64_t)pc->entity_id, 0) == pc)
        mc_map_remove(&bc->by_entity, (uint64_t)pc->entity_id, 0);
    pc->entity_id = 0;
}

static int send_message(base_clients *bc, proxy_client *pc, uint8_t id, const mc_ostream *os)
{
    if (!pc->ch || !mc_ostream_ok(os))
        return -1;
    const mc_message_def *def = mc_cw_def(&mc_cw_client_send_iface, id);
    if (mc_channel_send_message(pc->ch, def, os->data, os->size) != MC_OK)
        return -1;
    (void)bc;
    return 0;
}

static void flush(proxy_client *pc)
{
    if (pc->ch)
        mc_channel_send(pc->ch);
}

void proxy_close(base_clients *bc, proxy_client *pc, int reason, const char *text)
{
    if (pc->closing)
        return;
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cw_write_disconnect(&os, (uint8_t)reason, text);
    send_message(bc, pc, MC_CW_DISCONNECT, &os);
    mc_ostream_free(&os);
    flush(pc);
    char a[MC_ADDRESS_STRLEN];
    MC_INFO("client %s of entity %d told to go: %s (%s)",
            mc_address_format(&pc->peer, a, sizeof a), (int)pc->entity_id,
            mc_cw_bye_name(reason), text);
    unbind(bc, pc);
    pc->closing = true;
    pc->need_player = false;
    pc->close_at = mc_clock_now_us() + CLOSE_GRACE_US;
}

static void gone(base_clients *bc, proxy_client *pc, bool drop_endpoint, bool lost);

void proxy_gone(base_clients *bc, proxy_client *pc, bool drop_endpoint)
{
    gone(bc, pc, drop_endpoint, false);
}

void proxy_lost(base_clients *bc, proxy_client *pc, bool drop_endpoint)
{
    gone(bc, pc, drop_endpoint, true);
}

static void gone(base_clients *bc, proxy_client *pc, bool drop_endpoint, bool lost)
{
    int32_t id = pc->entity_id;
    unbind(bc, pc);
    if (mc_map_get(&bc->by_peer, proxy_peer_key(&pc->peer), 0) == pc)
        mc_map_remove(&bc->by_peer, proxy_peer_key(&pc->peer), 0);
    if (pc->ch) {
        mc_channel_set_user_data(pc->ch, NULL);
        if (!bc->freeing)
            mc_channel_condemn(pc->ch);
        pc->ch = NULL;
    }
    if (drop_endpoint && bc->t && !bc->freeing)
        mc_secure_transport_drop(bc->t, &pc->peer);
    proxy_free_record(pc);
    if (id > 0 && !bc->freeing && !mc_engine_freeing(bc->e)) {
        mc_entity *ent = mc_engine_find(bc->e, id);
        if (ent && ent->part == MC_PART_BASE && !ent->in_reap) {
            if (lost && proxy_resume_grace(bc, id))
                return; /* onClientDeath when the grace time runs out, unless it resumes */
            proxy_resume_forget(bc, id);
            bc->st.deaths++;
            mc_engine_run_hook(bc->e, ent, MC_HOOK_CLIENT_DEATH, NULL);
        }
    }
}

static mc_entity *live_base(base_clients *bc, int32_t id)
{
    mc_entity *ent = mc_engine_find(bc->e, id);
    return ent && ent->part == MC_PART_BASE && !ent->destroying && !ent->in_reap ? ent : NULL;
}

int proxy_bind_new(base_clients *bc, const mc_address *peer, int32_t id, proxy_client **out)
{
    mc_entity *ent = live_base(bc, id);
    if (!ent)
        return -1;
    proxy_client *old_peer = mc_map_get(&bc->by_peer, proxy_peer_key(peer), 0);
    if (old_peer) /* a record left at this address (closing): it goes now */
        proxy_gone(bc, old_peer, false);
    proxy_client *pc = calloc(1, sizeof *pc);
    if (!pc)
        return -1;
    pc->bc = bc;
    pc->peer = *peer;
    pc->type = ent->type;
    pc->ch = mc_nub_channel(bc->nub, peer, MC_CHANNEL_EXTERNAL);
    if (!pc->ch || snap_init(bc, pc) != 0 ||
        !mc_map_put(&bc->by_peer, proxy_peer_key(peer), 0, pc)) {
        if (pc->ch)
            mc_channel_condemn(pc->ch);
        proxy_free_record(pc);
        return -1;
    }
    mc_channel_set_user_data(pc->ch, pc);
    proxy_client *old = proxy_of_entity(bc, id);
    if (old) {
        bc->st.taken_over++;
        proxy_close(bc, old, MC_CW_BYE_TAKEN_OVER, "another client logged in to this entity");
    }
    if (!mc_map_put(&bc->by_entity, (uint64_t)id, 0, pc)) {
        proxy_gone(bc, pc, false);
        return -1;
    }
    pc->entity_id = id;
    pc->need_player = true;
    *out = pc;
    return 0;
}

/* One property value as the client would get it; 0 or -1. */
static int encode_prop(base_clients *bc, mc_entity *ent, uint16_t idx, mc_ostream *os)
{
    char why[200];
    return ent->gt->props_encode_one(mc_engine_defs(bc->e), MC_PART_BASE, ent->props, idx, os,
                                     why, sizeof why) == MC_CALL_OK
               ? 0
               : -1;
}

static void set_snap(proxy_client *pc, size_t k, const uint8_t *data, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return; /* the next sweep sends it again */
    if (len)
        memcpy(copy, data, len);
    free(pc->snap[k]);
    pc->snap[k] = copy;
    pc->snap_len[k] = len;
}

static void send_player(base_clients *bc, proxy_client *pc, mc_entity *ent)
{
    mc_ostream os;
    mc_ostream_init(&os);
    mc_cw_write_player_header(&os, ent->type, ent->id, (uint16_t)pc->nsnap);
    for (size_t k = 0; k < pc->nsnap; k++) {
        size_t at = os.size;
        mc_write_u16(&os, pc->snap_idx[k]);
        size_t vat = os.size;
        if (encode_prop(bc, ent, pc->snap_idx[k], &os) != 0) {
            MC_WARNING("%s %d: property %s cannot be encoded for its client", ent->td->name,
                       (int)ent->id, ent->td->props[pc->snap_idx[k]].name);
            os.size = at;
            mc_ostream_free(&os);
            return;
        }
        set_snap(pc, k, os.data + vat, os.size - vat);
    }
    send_message(bc, pc, MC_CW_BASE_PLAYER, &os);
    mc_ostream_free(&os);
}

/* Send BASE_PLAYER and run onEntitiesEnabled for every client waiting for it. */
void proxy_send_ready(base_clients *bc)
{
    size_t n = 0;
    int32_t *ids = malloc((bc->by_entity.count ? bc->by_entity.count : 1) * sizeof *ids);
    if (!ids)
        return;
    size_t pos = 0;
    for (proxy_client *pc; (pc = mc_map_next(&bc->by_entity, &pos));)
        if (pc->need_player)
            ids[n++] = pc->entity_id;
    /* hooks may bind, close or give clients away: look each one up again */
    for (size_t i = 0; i < n; i++) {
        proxy_client *pc = proxy_of_entity(bc, ids[i]);
        mc_entity *ent = live_base(bc, ids[i]);
        if (!pc || !pc->need_player || !ent)
            continue;
        pc->need_player = false;
        send_player(bc, pc, ent);
        bool resumed = pc->resumed;
        pc->resumed = false;
        proxy_resume_attached(bc, pc, ent); /* a new ticket; the grace time ends */
        flush(pc);
        proxy_world_attached(bc->e, ent); /* its cell introduces the view to this client */
        mc_engine_run_hook(bc->e, ent, MC_HOOK_ENTITIES_ENABLED, NULL);
        if (resumed) {
            bc->st.resumed++;
            mc_engine_run_hook(bc->e, ent, MC_HOOK_CLIENT_RESUMED, NULL);
        }
        proxy_after_call(bc->e, ent);
    }
    free(ids);
}

void proxy_after_call(mc_engine *e, mc_entity *ent)
{
    base_clients *bc = proxy_state(e);
    proxy_client *pc = proxy_of_entity(bc, ent->id);
    if (!pc || pc->need_player || pc->closing || ent->in_reap)
        return;
    mc_ostream os, msg;
    mc_ostream_init(&os);
    mc_ostream_init(&msg);
    bool sent = false;
    for (size_t k = 0; k < pc->nsnap; k++) {
        mc_ostream_reset(&os);
        if (encode_prop(bc, ent, pc->snap_idx[k], &os) != 0)
            continue;
        if (pc->snap[k] && pc->snap_len[k] == os.size &&
            (!os.size || !memcmp(pc->snap[k], os.data, os.size)))
            continue;
        mc_ostream_reset(&msg);
        mc_cw_write_property(&msg, ent->id, pc->snap_idx[k], os.data, os.size);
        if (send_message(bc, pc, MC_CW_PROPERTY, &msg) == 0) {
            set_snap(pc, k, os.data, os.size);
            bc->st.property_changes++;
            sent = true;
        }
    }
    mc_ostream_free(&os);
    mc_ostream_free(&msg);
    if (sent)
        flush(pc);
}

void proxy_tick(base_clients *bc)
{
    mc_time_us now = mc_clock_now_us();
    size_t n = 0, cap = bc->by_peer.count;
    proxy_client **all = malloc((cap ? cap : 1) * sizeof *all);
    if (!all)
        return;
    size_t pos = 0;
    for (proxy_client *pc; n < cap && (pc = mc_map_next(&bc->by_peer, &pos));)
        all[n++] = pc;
    for (size_t i = 0; i < n; i++) {
        proxy_client *pc = all[i];
        if (pc->closing) {
            if (now >= pc->close_at || !pc->ch)
                proxy_gone(bc, pc, true);
            continue;
        }
        mc_entity *ent = live_base(bc, pc->entity_id);
        if (ent)
            proxy_after_call(bc->e, ent); /* timers and callbacks change values too */
    }
    free(all);
    proxy_resume_tick(bc);
}

/* ---- the base going, the engine API ------------------------------------------------------ */

void proxy_on_destroy(mc_engine *e, mc_entity *ent)
{
    base_clients *bc = proxy_state(e);
    base_sessions *sessions = base_sessions_of(e);
    if (sessions)
        base_sessions_forget_entity(sessions, ent->id);
    proxy_resume_forget(bc, ent->id);
    proxy_client *pc = proxy_of_entity(bc, ent->id);
    if (!pc)
        return;
    if (bc->freeing || mc_engine_freeing(e)) {
        unbind(bc, pc);
        return;
    }
    proxy_close(bc, pc, MC_CW_BYE_DESTROYED, "its entity was destroyed");
}

bool proxy_op_has_client(const mc_call_ctx *call)
{
    mc_entity *ent = mc_engine_entity_of(call, MC_PART_BASE);
    return ent && proxy_of_entity(proxy_state(mc_engine_of(call)), ent->id) != NULL;
}

int proxy_op_give_client_to(const mc_call_ctx *call, const mc_mailbox_ref *to)
{
    mc_engine *e = mc_engine_of(call);
    mc_entity *ent = mc_engine_entity_of(call, MC_PART_BASE);
    base_clients *bc = proxy_state(e);
    if (!ent || !bc)
        return MC_CALL_ERR_STATE;
    proxy_client *pc = proxy_of_entity(bc, ent->id);
    if (!pc)
        return MC_CALL_ERR_NO_CLIENT;
    if (!to || mc_mailbox_ref_is_none(to))
        return MC_CALL_ERR_MAILBOX;
    mc_component c = mc_mailbox_ref_component(to);
    if (c != MC_COMPONENT_BASE && c != MC_COMPONENT_SERVICE)
        return MC_CALL_ERR_MAILBOX;
    mc_address at;
    mc_mailbox_address(to, &at);
    if (!mc_engine_is_self(e, &at))
        return MC_CALL_ERR_UNAVAILABLE; /* moving a client between baseapps: not built */
    mc_entity *other = live_base(bc, to->id);
    if (!other)
        return MC_CALL_ERR_NO_ENTITY;
    if (other->type != mc_mailbox_ref_type(to))
        return MC_CALL_ERR_MAILBOX;
    if (other == ent)
        return MC_CALL_OK;
    if (!other->td->client_server || proxy_of_entity(bc, other->id))
        return MC_CALL_ERR_STATE;
    unbind(bc, pc);
    proxy_resume_forget(bc, ent->id); /* its ticket goes: the next is the other base's */
    pc->type = other->type;
    if (snap_init(bc, pc) != 0 || !mc_map_put(&bc->by_entity, (uint64_t)other->id, 0, pc)) {
        proxy_close(bc, pc, MC_CW_BYE_KICKED, "out of memory giving the client away");
        return MC_CALL_ERR_BUSY;
    }
    pc->entity_id = other->id;
    pc->need_player = true;
    bc->st.given++;
    MC_INFO("%s %d gave its client to %s %d", ent->td->name, (int)ent->id, other->td->name,
            (int)other->id);
    event_active(bc->ready_ev, 0, 0);
    return MC_CALL_OK;
}
