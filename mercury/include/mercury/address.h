/* IPv4 UDP addresses: parsing "ip:port", formatting, comparing. */
#ifndef MC_MERCURY_ADDRESS_H
#define MC_MERCURY_ADDRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sockaddr_in;

/* An IPv4 address and UDP port, both in host byte order. */
typedef struct {
    uint32_t ip;
    uint16_t port;
} mc_address;

/* Long enough for "255.255.255.255:65535" and a terminator. */
#define MC_ADDRESS_STRLEN 24

/* Parse "a.b.c.d:port" (port 0..65535). Returns MC_OK or MC_ERR_ADDRESS. */
int mc_address_parse(const char *text, mc_address *out);
/* Format as "a.b.c.d:port" into buf (at least MC_ADDRESS_STRLEN bytes); returns buf. */
char *mc_address_format(const mc_address *addr, char *buf, size_t buflen);
bool mc_address_equal(const mc_address *a, const mc_address *b);
void mc_address_to_sockaddr(const mc_address *addr, struct sockaddr_in *out);
void mc_address_from_sockaddr(const struct sockaddr_in *in, mc_address *out);

#endif
