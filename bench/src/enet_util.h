/* What both ENet sides of mercury-bench (throughput: enet_side.c; latency: latency_enet.c)
 * do the same way: the address, patient peer timeouts, connecting until a deadline, the
 * count of reliable packets ENet acknowledged, and the bounded goodbye. */
#ifndef MC_BENCH_ENET_UTIL_H
#define MC_BENCH_ENET_UTIL_H

#include <enet/enet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"

/* A socket address as ENet takes it (its host in network byte order). */
ENetAddress bench_enet_address(const struct sockaddr_in *sa);
/* A benchmark's peer must not time out under load: 10 s to 60 s, not ENet's 5 s to 30 s. */
void bench_enet_relax_timeouts(ENetPeer *peer);
/* Connect with `channels` channels, trying again until the deadline (a listener may start
 * later); the peer, with relaxed timeouts, or NULL. */
ENetPeer *bench_enet_connect(ENetHost *host, const ENetAddress *a, size_t channels,
                             mc_time_us deadline);
/* Reliable packets ENet acknowledged: set a packet's userData to one of these and its
 * freeCallback to bench_enet_count_acked (packets freed by a reset do not count). */
typedef struct {
    uint64_t acked;
} bench_enet_acks;
void bench_enet_count_acked(ENetPacket *packet);
/* Say goodbye so the receiver stops lingering: disconnect and wait for it, 500 ms at most. */
void bench_enet_goodbye(ENetHost *host, ENetPeer *peer);

#endif
