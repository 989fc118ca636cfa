/* IPv4 address parsing and formatting. */
#include "mercury/address.h"
#include "internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mercury/status.h"

int mc_address_parse(const char *text, mc_address *out)
{
    if (!text || !out)
        return MC_ERR_ADDRESS;
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text || (size_t)(colon - text) >= 16)
        return MC_ERR_ADDRESS;
    char host[16];
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    struct in_addr ia;
    if (inet_pton(AF_INET, host, &ia) != 1)
        return MC_ERR_ADDRESS;
    const char *p = colon + 1;
    if (*p == '\0')
        return MC_ERR_ADDRESS;
    unsigned long port = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return MC_ERR_ADDRESS;
        port = port * 10 + (unsigned long)(*p - '0');
        if (port > 65535)
            return MC_ERR_ADDRESS;
    }
    out->ip = ntohl(ia.s_addr);
    out->port = (uint16_t)port;
    return MC_OK;
}

char *mc_address_format(const mc_address *addr, char *buf, size_t buflen)
{
    if (!buf || buflen == 0)
        return buf;
    if (!addr) {
        snprintf(buf, buflen, "(none)");
        return buf;
    }
    snprintf(buf, buflen, "%u.%u.%u.%u:%u", (addr->ip >> 24) & 0xFF, (addr->ip >> 16) & 0xFF,
             (addr->ip >> 8) & 0xFF, addr->ip & 0xFF, addr->port);
    return buf;
}

bool mc_address_equal(const mc_address *a, const mc_address *b)
{
    return a->ip == b->ip && a->port == b->port;
}

void mc_address_to_sockaddr(const mc_address *addr, struct sockaddr_in *out)
{
    memset(out, 0, sizeof(*out));
    out->sin_family = AF_INET;
    out->sin_addr.s_addr = htonl(addr->ip);
    out->sin_port = htons(addr->port);
}

void mc_address_from_sockaddr(const struct sockaddr_in *in, mc_address *out)
{
    out->ip = ntohl(in->sin_addr.s_addr);
    out->port = ntohs(in->sin_port);
}

uint64_t mc_address_key(const mc_address *a) { return ((uint64_t)a->ip << 16) | a->port; }
