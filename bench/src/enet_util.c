/* The ENet sides' shared steps (enet_util.h). */
#include "enet_util.h"

#define ENET_TIMEOUT_MIN_MS 10000u
#define ENET_TIMEOUT_MAX_MS 60000u
#define GOODBYE_US (500 * MC_US_PER_MS)

ENetAddress bench_enet_address(const struct sockaddr_in *sa)
{
    ENetAddress a;
    a.host = sa->sin_addr.s_addr; /* ENet keeps the host in network byte order */
    a.port = ntohs(sa->sin_port);
    return a;
}

void bench_enet_relax_timeouts(ENetPeer *peer)
{
    enet_peer_timeout(peer, ENET_PEER_TIMEOUT_LIMIT, ENET_TIMEOUT_MIN_MS, ENET_TIMEOUT_MAX_MS);
}

ENetPeer *bench_enet_connect(ENetHost *host, const ENetAddress *a, size_t channels,
                             mc_time_us deadline)
{
    while (mc_clock_now_us() < deadline) {
        ENetPeer *peer = enet_host_connect(host, a, channels, 0);
        if (!peer)
            return NULL;
        while (mc_clock_now_us() < deadline) {
            ENetEvent ev;
            int rc = enet_host_service(host, &ev, 10);
            if (rc < 0)
                return NULL;
            if (rc > 0 && ev.type == ENET_EVENT_TYPE_CONNECT) {
                bench_enet_relax_timeouts(peer);
                return peer;
            }
            if (rc > 0 && ev.type == ENET_EVENT_TYPE_DISCONNECT)
                break; /* the attempt timed out: try again */
            if (rc > 0 && ev.type == ENET_EVENT_TYPE_RECEIVE)
                enet_packet_destroy(ev.packet);
        }
    }
    return NULL;
}

void bench_enet_count_acked(ENetPacket *packet)
{
    /* ENet marks a reliable packet SENT when it is acknowledged */
    bench_enet_acks *acks = packet->userData;
    if (acks && (packet->flags & ENET_PACKET_FLAG_SENT))
        acks->acked++;
}

void bench_enet_goodbye(ENetHost *host, ENetPeer *peer)
{
    enet_peer_disconnect(peer, 0);
    mc_time_us until = mc_clock_now_us() + GOODBYE_US;
    while (mc_clock_now_us() < until) {
        ENetEvent ev;
        int rc = enet_host_service(host, &ev, 10);
        if (rc < 0 || (rc > 0 && ev.type == ENET_EVENT_TYPE_DISCONNECT))
            break;
        if (rc > 0 && ev.type == ENET_EVENT_TYPE_RECEIVE)
            enet_packet_destroy(ev.packet);
    }
}
