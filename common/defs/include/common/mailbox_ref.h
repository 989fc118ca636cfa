/* Mailbox references: the value that names one component of one entity somewhere in the
 * cluster, as BigWorld's EntityMailBoxRef.
 *
 * {entity id (int32), address (IPv4 u32, port u16, salt u16)}; the salt's top 3 bits hold
 * the component and its low 13 bits the entity type id. On the wire (MAILBOX def type) it
 * is 12 bytes, all big-endian: id i32, ip u32, port u16, salt u16. The ip and port are
 * kept in host order in the struct. An id of 0 is the "none" mailbox and must have every
 * other field zero.
 */
#ifndef MC_COMMON_MAILBOX_REF_H
#define MC_COMMON_MAILBOX_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/stream.h"

typedef enum {
    MC_COMPONENT_CELL = 0,
    MC_COMPONENT_BASE = 1,
    MC_COMPONENT_CLIENT = 2,
    MC_COMPONENT_BASE_VIA_CELL = 3,
    MC_COMPONENT_CLIENT_VIA_CELL = 4,
    MC_COMPONENT_CELL_VIA_BASE = 5,
    MC_COMPONENT_CLIENT_VIA_BASE = 6,
    MC_COMPONENT_SERVICE = 7,
} mc_component;

#define MC_COMPONENT_COUNT 8
/* Entity type ids fit in the salt's low 13 bits. */
#define MC_ENTITY_TYPE_MAX 0x1FFFu
#define MC_MAILBOX_WIRE_SIZE 12u

typedef struct {
    int32_t id;
    uint32_t ip;   /* host order */
    uint16_t port; /* host order */
    uint16_t salt; /* component and entity type: mc_salt_pack */
} mc_mailbox_ref;

/* The salt's bit layout (seed 001: component in the top 3 bits, entity type in the low 13)
 * is written in mailbox_ref.c only: call headers and every other carrier of a salt pack and
 * unpack it with these. */
uint16_t mc_salt_pack(mc_component c, uint16_t entity_type);
mc_component mc_salt_component(uint16_t salt);
uint16_t mc_salt_type(uint16_t salt);

const char *mc_component_name(mc_component c);
/* Parse "CELL", "BASE_VIA_CELL", ... (exact upper case). Returns 0 or -1. */
int mc_component_parse(const char *name, mc_component *out);

/* Fill a reference; fails (-1) when the type id does not fit 13 bits or c is out of range. */
int mc_mailbox_ref_init(mc_mailbox_ref *ref, int32_t id, uint32_t ip, uint16_t port,
                        mc_component c, uint16_t entity_type);
mc_component mc_mailbox_ref_component(const mc_mailbox_ref *ref);
uint16_t mc_mailbox_ref_type(const mc_mailbox_ref *ref);
void mc_mailbox_ref_set_component(mc_mailbox_ref *ref, mc_component c);
void mc_mailbox_ref_set_type(mc_mailbox_ref *ref, uint16_t entity_type);
bool mc_mailbox_ref_is_none(const mc_mailbox_ref *ref);

/* Check a reference: none is all-zero; otherwise the entity type must be below
 * type_count (pass 0 to skip that check) and the address must be set. Writes the reason. */
bool mc_mailbox_ref_valid(const mc_mailbox_ref *ref, size_t type_count, char *why,
                          size_t whylen);

void mc_mailbox_ref_write(mc_ostream *os, const mc_mailbox_ref *ref);
/* Reads 12 bytes; fails the stream (and zeroes *ref) when the reference is not valid for
 * type_count entity types. */
bool mc_mailbox_ref_read(mc_istream *is, mc_mailbox_ref *ref, size_t type_count);

/* The part of an entity a component delivers to in the end (CELL, BASE or CLIENT), and
 * the part it is first sent to (the relay for the *_VIA_* components). SERVICE is
 * delivered to a base. */
mc_component mc_component_final(mc_component c);
mc_component mc_component_first_hop(mc_component c);

#endif
