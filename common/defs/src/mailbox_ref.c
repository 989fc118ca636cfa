#include "common/mailbox_ref.h"

#include <stdio.h>
#include <string.h>

/* The salt: component in the top 3 bits, entity type in the low 13 (MC_ENTITY_TYPE_MAX). */
#define SALT_COMPONENT_SHIFT 13u

uint16_t mc_salt_pack(mc_component c, uint16_t entity_type)
{
    return (uint16_t)((((unsigned)c & 7u) << SALT_COMPONENT_SHIFT) |
                      (entity_type & MC_ENTITY_TYPE_MAX));
}

mc_component mc_salt_component(uint16_t salt)
{
    return (mc_component)(salt >> SALT_COMPONENT_SHIFT);
}

uint16_t mc_salt_type(uint16_t salt) { return (uint16_t)(salt & MC_ENTITY_TYPE_MAX); }

static const char *const component_names[MC_COMPONENT_COUNT] = {
    "CELL", "BASE", "CLIENT", "BASE_VIA_CELL", "CLIENT_VIA_CELL",
    "CELL_VIA_BASE", "CLIENT_VIA_BASE", "SERVICE",
};

const char *mc_component_name(mc_component c)
{
    return (unsigned)c < MC_COMPONENT_COUNT ? component_names[c] : "?";
}

int mc_component_parse(const char *name, mc_component *out)
{
    for (int i = 0; i < MC_COMPONENT_COUNT; i++)
        if (!strcmp(name, component_names[i])) {
            *out = (mc_component)i;
            return 0;
        }
    return -1;
}

int mc_mailbox_ref_init(mc_mailbox_ref *ref, int32_t id, uint32_t ip, uint16_t port,
                        mc_component c, uint16_t entity_type)
{
    if ((unsigned)c >= MC_COMPONENT_COUNT || entity_type > MC_ENTITY_TYPE_MAX)
        return -1;
    ref->id = id;
    ref->ip = ip;
    ref->port = port;
    ref->salt = mc_salt_pack(c, entity_type);
    return 0;
}

mc_component mc_mailbox_ref_component(const mc_mailbox_ref *ref)
{
    return mc_salt_component(ref->salt);
}

uint16_t mc_mailbox_ref_type(const mc_mailbox_ref *ref)
{
    return mc_salt_type(ref->salt);
}

void mc_mailbox_ref_set_component(mc_mailbox_ref *ref, mc_component c)
{
    ref->salt = mc_salt_pack(c, mc_salt_type(ref->salt));
}

void mc_mailbox_ref_set_type(mc_mailbox_ref *ref, uint16_t entity_type)
{
    ref->salt = mc_salt_pack(mc_salt_component(ref->salt), entity_type);
}

bool mc_mailbox_ref_is_none(const mc_mailbox_ref *ref)
{
    return ref->id == 0;
}

bool mc_mailbox_ref_valid(const mc_mailbox_ref *ref, size_t type_count, char *why,
                          size_t whylen)
{
    if (ref->id == 0) {
        if (ref->ip || ref->port || ref->salt) {
            snprintf(why, whylen, "mailbox with entity id 0 (none) has other fields set");
            return false;
        }
        return true;
    }
    if (ref->id < 0) {
        snprintf(why, whylen, "mailbox entity id %d is negative", (int)ref->id);
        return false;
    }
    if (type_count && mc_mailbox_ref_type(ref) >= type_count) {
        snprintf(why, whylen, "mailbox entity type %u is not a defined type (%zu types)",
                 (unsigned)mc_mailbox_ref_type(ref), type_count);
        return false;
    }
    if (ref->ip == 0 || ref->port == 0) {
        snprintf(why, whylen, "mailbox of entity %d has no address", (int)ref->id);
        return false;
    }
    return true;
}

void mc_mailbox_ref_write(mc_ostream *os, const mc_mailbox_ref *ref)
{
    mc_write_i32(os, ref->id);
    mc_write_u32(os, ref->ip);
    mc_write_u16(os, ref->port);
    mc_write_u16(os, ref->salt);
}

bool mc_mailbox_ref_read(mc_istream *is, mc_mailbox_ref *ref, size_t type_count)
{
    ref->id = mc_read_i32(is);
    ref->ip = mc_read_u32(is);
    ref->port = mc_read_u16(is);
    ref->salt = mc_read_u16(is);
    char why[128];
    if (!mc_istream_ok(is) || !mc_mailbox_ref_valid(ref, type_count, why, sizeof(why))) {
        mc_istream_fail(is);
        memset(ref, 0, sizeof(*ref));
        return false;
    }
    return true;
}

mc_component mc_component_final(mc_component c)
{
    switch (c) {
    case MC_COMPONENT_CELL:
    case MC_COMPONENT_CELL_VIA_BASE:
        return MC_COMPONENT_CELL;
    case MC_COMPONENT_BASE:
    case MC_COMPONENT_BASE_VIA_CELL:
    case MC_COMPONENT_SERVICE:
        return MC_COMPONENT_BASE;
    default:
        return MC_COMPONENT_CLIENT;
    }
}

mc_component mc_component_first_hop(mc_component c)
{
    switch (c) {
    case MC_COMPONENT_BASE_VIA_CELL:
    case MC_COMPONENT_CLIENT_VIA_CELL:
        return MC_COMPONENT_CELL;
    case MC_COMPONENT_CELL_VIA_BASE:
    case MC_COMPONENT_CLIENT_VIA_BASE:
    case MC_COMPONENT_SERVICE:
        return MC_COMPONENT_BASE;
    default:
        return c;
    }
}
