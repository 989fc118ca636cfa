/* Latency mode over ENet: one peer with C channels (ENet's ordered reliable streams), each
 * due message sent with enet_peer_send on its channel and flushed at once. The sender
 * waits for its socket (poll, at most 1 ms: ENet's timer granularity, and the schedule's)
 * and then services the host without waiting, the same wake-up rule as the mercury
 * sender. Resends are ENet's own count of reliable commands that timed out and were
 * resent (peer->packetsLost, which ENet resets every 10 s: accumulated every pass). */
#include <enet/enet.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "enet_util.h"
#include "latency.h"


static int lat_receive(const bench_latency_job *j, bench_sink *sink)
{
    bench_report *r = sink->report;
    bench_latency_checker ck;
    if (enet_initialize() != 0 || bench_latency_checker_init(&ck, j) != 0) {
        bench_report_fail(r, "cannot set up the ENet receiver");
        return -1;
    }
    ENetAddress a = bench_enet_address(&j->addr);
    ENetHost *host = enet_host_create(&a, 1, j->channels, 0, 0);
    if (!host) {
        bench_report_fail(r, "cannot bind the ENet host");
        bench_latency_checker_free(&ck);
        enet_deinitialize();
        return -1;
    }
    r->t_start = mc_clock_now_us();
    bench_sink_ready(sink, host->address.port);
    mc_time_us linger_until = 0;
    enet_uint32 last_received = 0;
    for (;;) {
        mc_time_us now = mc_clock_now_us();
        if (sink->done_sent) {
            if (host->totalReceivedPackets != last_received) {
                last_received = host->totalReceivedPackets;
                linger_until = now + j->linger_us;
            }
            if (now >= linger_until || now >= j->deadline)
                break;
        } else if (now >= j->deadline) {
            bench_latency_summarise(&ck, r);
            bench_sink_done(sink);
            break;
        }
        ENetEvent ev;
        int rc = enet_host_service(host, &ev, 1);
        while (rc > 0) {
            if (ev.type == ENET_EVENT_TYPE_CONNECT) {
                bench_enet_relax_timeouts(ev.peer);
            } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
                if (!sink->done_sent) {
                    bench_latency_feed(&ck, ev.channelID, ev.packet->data, ev.packet->dataLength,
                                       r);
                    if (bench_latency_complete(&ck, r) ||
                        r->duplicates + r->misordered + r->corrupt) {
                        r->finished = bench_latency_complete(&ck, r);
                        bench_latency_summarise(&ck, r);
                        bench_sink_done(sink);
                        linger_until = mc_clock_now_us() + j->linger_us;
                    }
                }
                enet_packet_destroy(ev.packet);
            }
            rc = enet_host_check_events(host, &ev);
        }
        if (rc < 0)
            break;
    }
    enet_host_flush(host);
    enet_host_destroy(host);
    bench_latency_checker_free(&ck);
    enet_deinitialize();
    return 0;
}


static int lat_send(const bench_latency_job *j, bench_sink *sink)
{
    bench_report *r = sink->report;
    if (enet_initialize() != 0) {
        bench_report_fail(r, "enet_initialize failed");
        return -1;
    }
    ENetHost *host = enet_host_create(NULL, 1, j->channels, 0, 0);
    uint8_t *buf = malloc(j->size);
    uint64_t *sent = calloc(j->channels, sizeof *sent);
    if (!host || !buf || !sent) {
        bench_report_fail(r, "cannot create the ENet host");
        if (host)
            enet_host_destroy(host);
        free(buf);
        free(sent);
        enet_deinitialize();
        return -1;
    }
    ENetAddress a = bench_enet_address(&j->addr);
    ENetPeer *peer = bench_enet_connect(host, &a, j->channels, j->deadline);
    if (!peer) {
        bench_report_fail(r, "could not connect to the ENet receiver");
        enet_host_destroy(host);
        free(buf);
        free(sent);
        enet_deinitialize();
        return 0;
    }
    uint64_t per = (uint64_t)j->rate * j->duration_us / MC_US_PER_S;
    uint64_t total = per * j->channels, total_sent = 0;
    bench_enet_acks fc = {0};
    mc_time_us t0 = mc_clock_now_us();
    r->t_start = t0;
    bench_sink_ready(sink, 0);
    int ok = 1;
    uint64_t resends = 0;
    enet_uint32 lost_seen = 0;
    while (ok) {
        /* packetsLost restarts from 0 every ENET_PEER_PACKET_LOSS_INTERVAL */
        enet_uint32 lost = peer->packetsLost;
        resends += lost >= lost_seen ? lost - lost_seen : lost;
        lost_seen = lost;
        mc_time_us now = mc_clock_now_us();
        if (now >= j->deadline)
            break;
        for (uint32_t i = 0; i < j->channels && ok; i++) {
            while (sent[i] < per && bench_latency_due(j, t0, i, sent[i]) <= now) {
                bench_latency_fill(buf, j->size, i, (uint32_t)sent[i], mc_clock_now_us());
                ENetPacket *p = enet_packet_create(buf, j->size, ENET_PACKET_FLAG_RELIABLE);
                if (!p) {
                    ok = 0;
                    break;
                }
                p->userData = &fc;
                p->freeCallback = bench_enet_count_acked;
                if (enet_peer_send(peer, (enet_uint8)i, p) != 0) {
                    enet_packet_destroy(p);
                    bench_report_fail(r, "enet_peer_send failed");
                    ok = 0;
                    break;
                }
                sent[i]++;
                total_sent++;
            }
        }
        enet_host_flush(host);
        if (total_sent == total && fc.acked == total) {
            r->finished = 1;
            break;
        }
        struct pollfd pfd = {.fd = (int)host->socket, .events = POLLIN};
        (void)poll(&pfd, 1, 1);
        ENetEvent ev;
        int rc = enet_host_service(host, &ev, 0);
        while (rc > 0) {
            if (ev.type == ENET_EVENT_TYPE_DISCONNECT) {
                bench_report_fail(r, "receiver disconnected (ENet peer timeout)");
                ok = 0;
            } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
                enet_packet_destroy(ev.packet);
            }
            rc = enet_host_check_events(host, &ev);
        }
        if (rc < 0)
            ok = 0;
    }
    r->count = total_sent;
    enet_uint32 lost = peer->packetsLost;
    resends += lost >= lost_seen ? lost - lost_seen : lost;
    r->resends = resends;
    r->t_last = mc_clock_now_us();
    if (r->finished) {
        bench_enet_goodbye(host, peer);
    }
    fc.acked = 0;
    enet_host_destroy(host);
    free(buf);
    free(sent);
    enet_deinitialize();
    return 0;
}

const bench_latency_transport bench_latency_enet = {"enet", lat_receive, lat_send};
