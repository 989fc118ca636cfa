/* The entity messages in: the table of messages the engine takes from its peers, the one
 * dispatch by message id (for messages from peers and from ourselves alike), and
 * ENTITY_CALL's header check before the role's on_call. */
#include "engine_internal.h"
#include "common/log.h"
#include "entity/backup_wire.h"
#include "entity/ghost_wire.h"
#include "entity/move_wire.h"
#include "entity/persist_wire.h"
#include "entity/restore_wire.h"
#include "proto/login.h"

#include <stdio.h>

static void on_entity_message(void *ctx, const mc_message_info *info, mc_istream *data)
{
    mc_engine *e = engine_from_server(ctx);
    size_t len = mc_istream_remaining(data);
    const uint8_t *bytes = len ? mc_read_bytes(data, len) : (const uint8_t *)"";
    if (!e || !bytes)
        return;
    /* A process the manager declared dead acts as live no more: whatever it still sends is
     * dropped unread (a request goes unanswered: its sender is fenced, or times out). */
    if (engine_peer_dead(e, info->source)) {
        if (engine_log_allowed(++e->st.dropped_from_dead)) {
            char a[MC_ADDRESS_STRLEN];
            MC_WARNING("%s from %s dropped: the manager declared that process dead (%llu "
                       "dropped so far)",
                       info->def->name, mc_address_format(info->source, a, sizeof a),
                       (unsigned long long)e->st.dropped_from_dead);
        }
        return;
    }
    mc_origin o = {.local = false, .addr = *info->source, .is_request = info->is_request,
                   .reply_id = info->reply_id};
    engine_handle_message(e, info->def->id, &o, bytes, len);
}

const mc_message_def mc_engine_messages[] = {
    {MC_MSG_ENTITY_CALL, "ENTITY_CALL", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_CREATE_BASE, "CREATE_BASE", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_CREATE_CELL, "CREATE_CELL", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_DESTROY_CELL, "DESTROY_CELL", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_CELL_GONE, "CELL_GONE", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_FETCH_CELL, "FETCH_CELL", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_LOAD_BASE, "LOAD_BASE", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_PREPARE_LOGIN, "PREPARE_LOGIN", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_RESUME_PREPARE, "RESUME_PREPARE", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_CLIENT_UPDATE, "CLIENT_UPDATE", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_CLIENT_ATTACHED, "CLIENT_ATTACHED", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_CLIENT_MOVE, "CLIENT_MOVE", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_CELL_MIGRATE, "CELL_MIGRATE", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_CELL_MOVED, "CELL_MOVED", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_CELL_MIGRATE_END, "CELL_MIGRATE_END", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_WITNESS_CALLS, "WITNESS_CALLS", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_WITNESS_HEARD, "WITNESS_HEARD", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_CELL_COPY, "CELL_COPY", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_RESTORE_CELL, "RESTORE_CELL", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_BACKUP_BASE, "BACKUP_BASE", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_BACKUP_DROP, "BACKUP_DROP", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_BASE_RESTORED, "BASE_RESTORED", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_OFFLOAD_BASE, "OFFLOAD_BASE", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_BACKUP_REFUSED, "BACKUP_REFUSED", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_RETIRE_PASS, "RETIRE_PASS", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_RETIRE_CLIENT_CALL, "RETIRE_CLIENT_CALL", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_RETIRE_END, "RETIRE_END", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_RETIRED, "RETIRED", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_RETIRE_HOMES, "RETIRE_HOMES", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_RETIRED_NOTED, "RETIRED_NOTED", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_RETIRE_SENDER_END, "RETIRE_SENDER_END", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_RETIRED_HOMES, "RETIRED_HOMES", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_GHOST_DATA, "GHOST_DATA", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_GHOST_DELETE, "GHOST_DELETE", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_GHOST_CLIENT_CALL, "GHOST_CLIENT_CALL", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_GHOST_REACH, "GHOST_REACH", MC_MSG_VARIABLE, 4, on_entity_message},
    {MC_MSG_GHOST_CLIENT_CALL_SEQ, "GHOST_CLIENT_CALL_SEQ", MC_MSG_VARIABLE, 4,
     on_entity_message},
};
const size_t mc_engine_message_count = sizeof mc_engine_messages / sizeof mc_engine_messages[0];

/* ENTITY_CALL: the header, then the role's on_call. */
static void engine_on_call(mc_engine *e, const mc_origin *o, mc_istream *data)
{
    e->st.received++;
    size_t len = mc_istream_remaining(data);
    const uint8_t *bytes = data->data + data->pos;
    mc_call_header h;
    if (!mc_call_header_read(data, &h)) {
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                         "entity call of %zu bytes: header malformed", len);
        return;
    }
    e->part->on_call(e, o, &h, bytes + MC_CALL_HEADER_SIZE, len - MC_CALL_HEADER_SIZE);
}

int engine_handlers_init(mc_engine *e, char *err, size_t errlen)
{
    e->handlers[MC_MSG_ENTITY_CALL] = engine_on_call;
    for (size_t i = 0; i < e->part->message_count; i++) {
        const mc_role_message *m = &e->part->messages[i];
        if (!m->fn || e->handlers[m->id]) {
            snprintf(err, errlen, "entity message %u: %s", (unsigned)m->id,
                     m->fn ? "handled twice" : "no handler");
            return -1;
        }
        e->handlers[m->id] = m->fn;
    }
    return 0;
}

void engine_handle_message(mc_engine *e, uint8_t id, const mc_origin *o, const uint8_t *data,
                           size_t len)
{
    mc_istream is;
    mc_istream_init(&is, data, len);
    mc_role_message_fn fn = e->handlers[id];
    if (!fn) {
        mc_engine_refuse(e, o, MC_REFUSE_WRONG_PART, MC_CALL_ERR_NO_METHOD,
                         "a %s does not take message %u",
                         e->part->part == MC_PART_CELL ? "cellapp" : "baseapp", (unsigned)id);
        return;
    }
    fn(e, o, &is);
}
