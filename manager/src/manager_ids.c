/* The manager's ID_RANGE requests: entity id ranges for live registered processes, from
 * the allocator in id_ranges.c (which persists its reservation in the state file). */
#include "manager_internal.h"
#include "common/log.h"
#include "server/control.h"
#include "server/pb.h"

#include <stdio.h>

void mc_manager_handle_id_range(mc_manager *m, const char *src, const uint8_t *data, size_t len,
                                mc_server_request *request)
{
    Mc__Control__IdRangeReply reply = MC__CONTROL__ID_RANGE_REPLY__INIT;
    char why[600] = "";
    Mc__Control__IdRangeRequest *req = mc__control__id_range_request__unpack(NULL, len, data);
    mc_reg_entry *e = mc_registry_find_alive_addr(m->registry, src);
    if (!req || !request) {
        mc_manager_unusable(m, !req ? "malformed ID_RANGE" : "ID_RANGE that is not a request",
                            src);
        reply.status = MC__CONTROL__ID_RANGE_STATUS__ID_RANGE_BAD_REQUEST;
        snprintf(why, sizeof why, "malformed ID_RANGE request");
    } else if (!e) {
        m->id_refusals++;
        reply.status = MC__CONTROL__ID_RANGE_STATUS__ID_RANGE_NOT_REGISTERED;
        snprintf(why, sizeof why, "%s is not a live registered process", src);
    } else {
        uint32_t first = 0, got = 0;
        mc_ids_status st = mc_id_ranges_take(&m->ids, req->count, &first, &got, why, sizeof why);
        switch (st) {
        case MC_IDS_OK:
            reply.first = first;
            reply.count = got;
            MC_DEBUG("ids %u..%u to %s", first, first + got - 1, e->name);
            break;
        case MC_IDS_BAD_COUNT:
            reply.status = MC__CONTROL__ID_RANGE_STATUS__ID_RANGE_BAD_REQUEST;
            break;
        case MC_IDS_EXHAUSTED:
            reply.status = MC__CONTROL__ID_RANGE_STATUS__ID_RANGE_EXHAUSTED;
            MC_ERROR("%s asked for entity ids: %s", e->name, why);
            break;
        case MC_IDS_WRITE_FAILED:
            reply.status = MC__CONTROL__ID_RANGE_STATUS__ID_RANGE_UNAVAILABLE;
            MC_ERROR("no entity ids for %s: %s", e->name, why);
            break;
        }
        if (st != MC_IDS_OK)
            m->id_refusals++;
    }
    if (reply.status != MC__CONTROL__ID_RANGE_STATUS__ID_RANGE_OK)
        reply.reason = why;
    mc_pb_free(req);
    if (request)
        mc_server_reply(m->server, request, &reply);
}

static void get_next(void *ctx, mc_watch_value *out) { out->as.u = ((mc_manager *)ctx)->ids.next; }
static void get_reserved(void *ctx, mc_watch_value *out)
{
    out->as.u = ((mc_manager *)ctx)->ids.reserved;
}

void mc_manager_publish_ids(mc_manager *m)
{
    mc_watchers *w = mc_server_watchers(m->server);
    mc_watch_add(w, "ids/next", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_next, NULL, m);
    mc_watch_add(w, "ids/reserved", MC_WATCH_UINT, MC_WATCH_READ_ONLY, get_reserved, NULL, m);
    mc_watch_add_uint(w, "ids/ranges", &m->ids.ranges, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "ids/reservationWrites", &m->ids.writes, MC_WATCH_READ_ONLY);
    mc_watch_add_uint(w, "ids/refusals", &m->id_refusals, MC_WATCH_READ_ONLY);
    mc_watch_add_const_string(w, "ids/stateFile", m->ids.path);
}
