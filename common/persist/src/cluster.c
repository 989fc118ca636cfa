/* Redis Cluster: key slots (CRC16 of the hash tag), the slot map from CLUSTER SLOTS, MOVED and
 * ASK redirections. With one Redis every request goes to its one connection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "internal.h"

/* CRC16-CCITT (XMODEM), as Redis Cluster specifies for key slots. */
static uint16_t crc16(const char *buf, size_t len)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)((uint8_t)buf[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

uint16_t mc_key_slot(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);
    if (open) {
        size_t rest = len - (size_t)(open - key) - 1;
        const char *close = memchr(open + 1, '}', rest);
        if (close && close > open + 1)
            return crc16(open + 1, (size_t)(close - open - 1)) & (MC_PERSIST_SLOTS - 1);
    }
    return crc16(key, len) & (MC_PERSIST_SLOTS - 1);
}

mc_persist_conn *mc_cluster_conn_for(mc_persist_store *s, const char *host, int port)
{
    if (!mc_is_numeric_host(host))
        return NULL; /* a node announced by name: never resolved (it would block the loop) */
    for (size_t i = 0; i < s->nconns; i++)
        if (s->conns[i]->port == port && strcmp(s->conns[i]->host, host) == 0)
            return s->conns[i];
    if (s->nconns >= 4096)
        return NULL;
    mc_persist_conn **g = realloc(s->conns, (s->nconns + 1) * sizeof *g);
    if (!g)
        return NULL;
    s->conns = g;
    mc_persist_conn *c = mc_conn_new(s, host, port);
    if (!c)
        return NULL;
    s->conns[s->nconns++] = c;
    return c;
}

static size_t conn_index(mc_persist_store *s, mc_persist_conn *c)
{
    for (size_t i = 0; i < s->nconns; i++)
        if (s->conns[i] == c)
            return i;
    return 0;
}

static mc_persist_conn *any_ready(mc_persist_store *s)
{
    for (size_t i = 0; i < s->nconns; i++)
        if (s->conns[i]->state == CONN_READY)
            return s->conns[i];
    return NULL;
}

mc_persist_conn *mc_cluster_route(mc_persist_store *s, mc_persist_req *r)
{
    if (r->node)
        return r->node;
    if (!s->cluster)
        return s->nconns ? s->conns[0] : NULL;
    if (r->ask)
        return r->ask;
    if (r->route && s->slot_map) {
        uint16_t slot = mc_key_slot(r->route, strlen(r->route));
        uint16_t idx = s->slot_map[slot];
        if (idx > 0 && idx <= s->nconns)
            return s->conns[idx - 1];
    }
    return any_ready(s);
}

/* Start a new node's connection. */
static mc_persist_conn *node(mc_persist_store *s, const char *host, int port)
{
    size_t before = s->nconns;
    mc_persist_conn *c = mc_cluster_conn_for(s, host, port);
    if (c && s->nconns > before)
        mc_conn_start(c);
    return c;
}

bool mc_cluster_redirect(mc_persist_store *s, mc_persist_req *r, const redisReply *reply)
{
    if (!s->cluster)
        return false;
    char word[8], addr[128];
    unsigned slot;
    char text[200];
    snprintf(text, sizeof text, "%.*s", (int)reply->len, reply->str);
    if (sscanf(text, "%7s %u %127s", word, &slot, addr) != 3 || slot >= MC_PERSIST_SLOTS)
        return false;
    char host[64];
    int port;
    if (mc_parse_addr(addr, host, sizeof host, &port) != 0)
        return false;
    mc_persist_conn *c = node(s, host, port);
    if (!c)
        return false;
    s->redirects++;
    if (strcmp(word, "ASK") == 0) {
        r->ask = c;
        r->asking_sent = false;
    } else {
        if (!s->slot_map)
            s->slot_map = calloc(MC_PERSIST_SLOTS, sizeof *s->slot_map);
        if (s->slot_map)
            s->slot_map[slot] = (uint16_t)(conn_index(s, c) + 1);
        mc_cluster_want_slots(s);
    }
    mc_store_enqueue(s, r, true);
    return true;
}

void mc_cluster_want_slots(mc_persist_store *s)
{
    if (!s->cluster || s->slots_pending || s->closing)
        return;
    mc_persist_req *r = mc_req_new(s, OP_SLOTS, NULL, NULL);
    if (!r)
        return;
    mc_req_command(r, -1, 0);
    mc_req_arg(r, "CLUSTER", 7);
    mc_req_arg(r, "SLOTS", 5);
    /* No deadline worth failing on: it is retried like any request. */
    r->deadline = UINT64_MAX;
    s->slots_pending = true;
    s->internal_reqs++;
    mc_store_enqueue(s, r, true);
}

/* The CLUSTER SLOTS reply: [[start, end, [host, port, id...], replicas...], ...]. */
void mc_cluster_slots_reply(mc_persist_store *s, const redisReply *reply)
{
    s->slots_pending = false;
    if (reply->type != REDIS_REPLY_ARRAY) {
        mc_store_error(s, "CLUSTER SLOTS: unexpected reply");
        return;
    }
    uint16_t *map = calloc(MC_PERSIST_SLOTS, sizeof *map);
    if (!map)
        return;
    size_t covered = 0;
    for (size_t i = 0; i < reply->elements; i++) {
        const redisReply *e = reply->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
            e->element[0]->type != REDIS_REPLY_INTEGER ||
            e->element[1]->type != REDIS_REPLY_INTEGER ||
            e->element[2]->type != REDIS_REPLY_ARRAY || e->element[2]->elements < 2)
            continue;
        long long a = e->element[0]->integer, b = e->element[1]->integer;
        const redisReply *m = e->element[2];
        if (a < 0 || b >= MC_PERSIST_SLOTS || a > b || m->element[0]->type != REDIS_REPLY_STRING ||
            m->element[1]->type != REDIS_REPLY_INTEGER || m->element[0]->len >= 64 ||
            m->element[1]->integer <= 0 || m->element[1]->integer > 65535)
            continue;
        char host[64];
        memcpy(host, m->element[0]->str, m->element[0]->len);
        host[m->element[0]->len] = '\0';
        if (!host[0])
            continue; /* "" means the node we asked: keep what MOVED said */
        mc_persist_conn *c = node(s, host, (int)m->element[1]->integer);
        if (!c)
            continue;
        uint16_t idx = (uint16_t)(conn_index(s, c) + 1);
        for (long long k = a; k <= b; k++)
            map[k] = idx;
        covered += (size_t)(b - a + 1);
    }
    free(s->slot_map);
    s->slot_map = map;
    MC_DEBUG("persist: cluster slot map: %zu slots on %zu nodes", covered, s->nconns);
}

/* Does connection index i own a slot? */
static bool owns_slots(const mc_persist_store *s, size_t i)
{
    if (!s->slot_map)
        return true;
    for (size_t k = 0; k < MC_PERSIST_SLOTS; k++)
        if (s->slot_map[k] == i + 1)
            return true;
    return false;
}

size_t mc_cluster_node_count(const mc_persist_store *s)
{
    if (!s->cluster)
        return s->nconns ? 1 : 0;
    size_t n = 0;
    for (size_t i = 0; i < s->nconns; i++)
        n += owns_slots(s, i);
    return n;
}

mc_persist_conn *mc_cluster_node(const mc_persist_store *s, size_t want)
{
    if (!s->cluster)
        return want == 0 && s->nconns ? s->conns[0] : NULL;
    for (size_t i = 0, n = 0; i < s->nconns; i++)
        if (owns_slots(s, i) && n++ == want)
            return s->conns[i];
    return NULL;
}
