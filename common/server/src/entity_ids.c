/* Entity id ranges from the manager (desc.entity_ids): asked for once registered, topped up
 * (one request at a time) when fewer than half a batch remain, kept across a
 * re-registration with a restarted manager. */
#include "server_internal.h"
#include "common/log.h"
#include "server/control.h"
#include "server/pb.h"

#include <string.h>

#define ID_REPLY_TIMEOUT_US (5000 * MC_US_PER_MS)
#define ID_RETRY_US (1000 * MC_US_PER_MS)

uint64_t mc_server_entity_ids_left(const mc_server *s)
{
    uint64_t left = 0;
    for (size_t i = 0; i < s->ids.n; i++)
        left += s->ids.ranges[i].end - s->ids.ranges[i].next;
    return left;
}

static void on_id_reply(mc_server *s, int status, const uint8_t *data, size_t len, void *arg)
{
    if (status == MC_REPLY_CANCELLED)
        return; /* the server is being freed */
    server_entity_ids *ids = &s->ids;
    ids->asking = false;
    ids->retry_at = mc_clock_now_us() + ID_RETRY_US;
    if (status != MC_REPLY_OK) {
        MC_WARNING("no answer to a request for entity ids (%s); asking again",
                   mc_reply_status_name((mc_reply_status)status));
        return;
    }
    Mc__Control__IdRangeReply *r = mc__control__id_range_reply__unpack(NULL, len, data);
    if (!r) {
        MC_WARNING("malformed entity id range from the manager; asking again");
        return;
    }
    uint64_t first = r->first, end = (uint64_t)r->first + r->count;
    if (r->status != MC__CONTROL__ID_RANGE_STATUS__ID_RANGE_OK) {
        MC_ERROR("the manager gave no entity ids: %s", r->reason ? r->reason : "no reason");
    } else if (r->count == 0 || first < 1 || end - 1 > MC_ENTITY_ID_MAX) {
        MC_ERROR("the manager gave an invalid entity id range (%u, %u); ignored", r->first,
                 r->count);
    } else if (ids->n == MC_SERVER_ID_RANGES_HELD) {
        MC_ERROR("entity ids %u..%llu dropped: %d ranges held already", r->first,
                 (unsigned long long)(end - 1), MC_SERVER_ID_RANGES_HELD);
    } else {
        ids->ranges[ids->n].next = first;
        ids->ranges[ids->n].end = end;
        ids->n++;
        ids->received++;
        ids->retry_at = 0;
        MC_DEBUG("entity ids %u..%llu from the manager", r->first, (unsigned long long)(end - 1));
    }
    mc_pb_free(r);
    mc_server_ids_tick(s, mc_clock_now_us());
}

void mc_server_ids_tick(mc_server *s, mc_time_us now)
{
    server_entity_ids *ids = &s->ids;
    if (!s->desc.entity_ids || ids->asking || s->reg != REG_REGISTERED || s->shutting_down ||
        now < ids->retry_at || mc_server_entity_ids_left(s) >= MC_SERVER_ID_BATCH / 2)
        return;
    Mc__Control__IdRangeRequest req = MC__CONTROL__ID_RANGE_REQUEST__INIT;
    req.count = MC_SERVER_ID_BATCH;
    int rc = mc_server_send_request(s, &s->manager, MC_CTL_ID_RANGE, &req, on_id_reply, NULL,
                                    ID_REPLY_TIMEOUT_US, false);
    if (rc != MC_OK) {
        MC_WARNING("cannot ask the manager for entity ids: %s", mc_status_name(rc));
        ids->retry_at = now + ID_RETRY_US;
        return;
    }
    ids->asking = true;
}

int mc_server_next_entity_id(mc_server *s, int32_t *out)
{
    server_entity_ids *ids = &s->ids;
    while (ids->n > 0 && ids->ranges[0].next >= ids->ranges[0].end) {
        memmove(&ids->ranges[0], &ids->ranges[1], (ids->n - 1) * sizeof ids->ranges[0]);
        ids->n--;
    }
    if (ids->n == 0) {
        mc_server_ids_tick(s, mc_clock_now_us());
        return -1;
    }
    *out = (int32_t)ids->ranges[0].next++;
    ids->used++;
    mc_server_ids_tick(s, mc_clock_now_us());
    return 0;
}

static void get_left(void *ctx, mc_watch_value *out) { out->as.u = mc_server_entity_ids_left(ctx); }

int mc_server_ids_publish(mc_server *s)
{
    if (!s->desc.entity_ids)
        return 0;
    int bad = mc_watch_add(s->watchers, "entityIds/left", MC_WATCH_UINT, MC_WATCH_READ_ONLY,
                           get_left, NULL, s);
    bad |= mc_watch_add_uint(s->watchers, "entityIds/ranges", &s->ids.received,
                             MC_WATCH_READ_ONLY);
    bad |= mc_watch_add_uint(s->watchers, "entityIds/used", &s->ids.used, MC_WATCH_READ_ONLY);
    return bad ? -1 : 0;
}
