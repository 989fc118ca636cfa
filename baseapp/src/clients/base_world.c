/* World updates a cellapp sends for a witness's client (CLIENT_UPDATE, entity/world_wire.h):
 * accepted only from the cell of that base, then handed to its client; counted. */
#include "base_world.h"
#include "proxy_internal.h"

#include "common/log.h"
#include "entity/world_wire.h"
#include "entity/client_wire.h"

#include <string.h>

/* Its counters (NULL without the external interface). */
static base_world_stats *stats_of(mc_engine *e)
{
    base_clients *bc = proxy_state(e);
    return bc ? &bc->world : NULL;
}

void base_on_client_update(mc_engine *e, const mc_origin *o, mc_istream *is)
{
    base_world_stats *st = stats_of(e);
    if (!st)
        return; /* the external interface is not open (yet, or any more) */
    int32_t id = mc_read_i32(is);
    uint8_t flags = mc_read_u8(is);
    size_t len = mc_istream_remaining(is);
    const uint8_t *bytes = len ? mc_read_bytes(is, len) : NULL;
    /* a run goes to the client as one message: it must fit one (a cellapp never builds
     * more: its budget and bounded call queue keep runs far below) */
    if (!mc_istream_ok(is) || id <= 0 || !len || len > MC_CW_MAX_MESSAGE ||
        (flags & ~MC_WORLD_FLAG_VOLATILE)) {
        st->refused++;
        mc_engine_refuse(e, o, MC_REFUSE_MALFORMED, MC_CALL_ERR_ARGS,
                         "CLIENT_UPDATE: malformed (%zu bytes)", len);
        return;
    }
    mc_entity *ent = mc_engine_find(e, id);
    mc_address cell;
    if (ent && ent->cell_state == MC_CELL_LIVE)
        mc_mailbox_address(&ent->cell, &cell);
    if (!ent || ent->cell_state != MC_CELL_LIVE || o->local ||
        !mc_address_equal(&cell, &o->addr)) {
        /* not (or no longer) this base's cell: a late update after the cell moved or went */
        st->stale++;
        return;
    }
    st->updates++;
    st->bytes += len;
    if (base_world_to_client(e, ent, (flags & MC_WORLD_FLAG_VOLATILE) != 0, bytes, len) != 0)
        st->no_client++;
}

int base_world_add_watchers(mc_engine *e)
{
    base_world_stats *st = stats_of(e);
    mc_watchers *w = mc_server_watchers(mc_engine_server(e));
    int bad = mc_watch_add_uint(w, "world/updatesIn", &st->updates, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "world/bytesIn", &st->bytes, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "world/noClient", &st->no_client, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "world/stale", &st->stale, MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(w, "world/refused", &st->refused, MC_WATCH_READ_ONLY);
    return bad ? -1 : 0;
}
