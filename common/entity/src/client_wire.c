/* The client <-> baseapp messages (entity/client_wire.h). */
#include "entity/client_wire.h"
#include "common/game_module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const mc_message_def to_client_defs[] = {MC_CW_TO_CLIENT(MC_DEF_NO_HANDLER)};
static const mc_message_def to_baseapp_defs[] = {MC_CW_TO_BASEAPP(MC_DEF_NO_HANDLER)};
const mc_interface mc_cw_client_send_iface = MC_INTERFACE("client", to_client_defs);
const mc_interface mc_cw_baseapp_send_iface = MC_INTERFACE("baseappExternal", to_baseapp_defs);

const mc_message_def *mc_cw_def(const mc_interface *iface, uint8_t id)
{
    return mc_interface_find(iface, id);
}

const char *mc_cw_bye_name(int reason)
{
    switch (reason) {
    case MC_CW_BYE_TAKEN_OVER: return "taken over";
    case MC_CW_BYE_DESTROYED: return "entity destroyed";
    case MC_CW_BYE_SHUTDOWN: return "baseapp shutting down";
    case MC_CW_BYE_KICKED: return "kicked";
    case MC_CW_BYE_RESUME: return "resume elsewhere";
    default: return "unknown";
    }
}

void mc_cw_write_player_header(mc_ostream *os, uint16_t type, int32_t id, uint16_t nprops)
{
    mc_write_u16(os, type);
    mc_write_i32(os, id);
    mc_write_u16(os, nprops);
}

void mc_cw_write_call(mc_ostream *os, int32_t id, uint16_t index, const uint8_t *args,
                      size_t len)
{
    mc_write_i32(os, id);
    mc_write_u16(os, index);
    if (len)
        mc_write_bytes(os, args, len);
}

void mc_cw_write_property(mc_ostream *os, int32_t id, uint16_t index, const uint8_t *value,
                          size_t len)
{
    mc_cw_write_call(os, id, index, value, len);
}

void mc_cw_write_disconnect(mc_ostream *os, uint8_t reason, const char *text)
{
    mc_write_u8(os, reason);
    size_t n = text ? strlen(text) : 0;
    if (n > MC_CW_REASON_MAX)
        n = MC_CW_REASON_MAX;
    mc_write_blob(os, text ? text : "", n);
}

bool mc_cw_read_call(mc_istream *is, int32_t *id, uint16_t *index, const uint8_t **args,
                     size_t *len)
{
    *id = mc_read_i32(is);
    *index = mc_read_u16(is);
    if (!mc_istream_ok(is))
        return false;
    *len = mc_istream_remaining(is);
    *args = *len ? mc_read_bytes(is, *len) : (const uint8_t *)"";
    return *args != NULL && mc_istream_ok(is);
}

bool mc_cw_base_client_prop(const mc_def_property *p)
{
    return p->flags == MC_FLAGS_BASE_AND_CLIENT;
}

void mc_cw_player_free(mc_cw_player *p)
{
    for (size_t i = 0; p->values && i < p->n; i++)
        mc_value_free(&p->values[i]);
    free(p->values);
    free(p->indices);
    memset(p, 0, sizeof *p);
}

int mc_cw_read_player(const mc_entity_defs *defs, mc_istream *is, mc_cw_player *out, char *why,
                      size_t whylen)
{
    memset(out, 0, sizeof *out);
    out->type = mc_read_u16(is);
    out->id = mc_read_i32(is);
    uint16_t n = mc_read_u16(is);
    if (!mc_istream_ok(is) || out->id <= 0) {
        snprintf(why, whylen, "player: truncated header or bad entity id");
        return -1;
    }
    const mc_entity_type_def *td = mc_defs_type(defs, out->type);
    if (!td || !td->client_server) {
        snprintf(why, whylen, "player: entity type %u has no client part", (unsigned)out->type);
        return -1;
    }
    if (n > td->nprops) {
        snprintf(why, whylen, "player: %u values for %zu properties", (unsigned)n, td->nprops);
        return -1;
    }
    out->indices = calloc(n ? n : 1, sizeof *out->indices);
    out->values = calloc(n ? n : 1, sizeof *out->values);
    if (!out->indices || !out->values) {
        snprintf(why, whylen, "out of memory");
        mc_cw_player_free(out);
        return -1;
    }
    for (uint16_t i = 0; i < n; i++) {
        uint16_t idx = mc_read_u16(is);
        if (!mc_istream_ok(is) || idx >= td->nprops || !mc_cw_base_client_prop(&td->props[idx])) {
            snprintf(why, whylen, "player: value %u names no property its client sees",
                     (unsigned)i);
            mc_cw_player_free(out);
            return -1;
        }
        for (uint16_t k = 0; k < i; k++)
            if (out->indices[k] == idx) {
                snprintf(why, whylen, "player: property %s twice", td->props[idx].name);
                mc_cw_player_free(out);
                return -1;
            }
        out->indices[i] = idx;
        out->n = (size_t)i + 1;
        if (mc_gen_decode_prop(defs, &td->props[idx], is, &out->values[i], why, whylen) !=
            MC_CALL_OK) {
            mc_cw_player_free(out);
            return -1;
        }
    }
    out->n = n;
    if (!mc_istream_done(is)) {
        snprintf(why, whylen, "player: %zu bytes after the last value", mc_istream_remaining(is));
        mc_cw_player_free(out);
        return -1;
    }
    return 0;
}

int mc_cw_read_property(const mc_entity_defs *defs, uint16_t type, mc_istream *is, int32_t *id,
                        const mc_def_property **prop, mc_value *value, char *why,
                        size_t whylen)
{
    memset(value, 0, sizeof *value);
    *id = mc_read_i32(is);
    uint16_t idx = mc_read_u16(is);
    const mc_entity_type_def *td = mc_defs_type(defs, type);
    if (!mc_istream_ok(is) || !td || idx >= td->nprops ||
        !mc_cw_base_client_prop(&td->props[idx])) {
        snprintf(why, whylen, "property change: truncated, or no property its client sees");
        return -1;
    }
    *prop = &td->props[idx];
    if (mc_gen_decode_prop(defs, *prop, is, value, why, whylen) != MC_CALL_OK)
        return -1;
    if (!mc_istream_done(is)) {
        mc_value_free(value);
        snprintf(why, whylen, "property change: bytes after the value");
        return -1;
    }
    return 0;
}

bool mc_cw_read_disconnect(mc_istream *is, uint8_t *reason, char *text, size_t textlen)
{
    *reason = mc_read_u8(is);
    size_t n = 0;
    const uint8_t *b = mc_read_blob(is, &n, MC_CW_REASON_MAX);
    if (!mc_istream_ok(is) || !b || !mc_istream_done(is) || !textlen)
        return false;
    size_t k = n < textlen - 1 ? n : textlen - 1;
    memcpy(text, b, k);
    text[k] = '\0';
    return true;
}

void mc_cw_write_ticket(mc_ostream *os, const uint8_t ticket[MC_CW_TICKET_BYTES],
                        const uint8_t key[MC_CW_RESUME_KEY_BYTES], uint32_t lifetime_ms)
{
    mc_write_bytes(os, ticket, MC_CW_TICKET_BYTES);
    mc_write_bytes(os, key, MC_CW_RESUME_KEY_BYTES);
    mc_write_u32(os, lifetime_ms);
}

bool mc_cw_read_ticket(mc_istream *is, uint8_t ticket[MC_CW_TICKET_BYTES],
                       uint8_t key[MC_CW_RESUME_KEY_BYTES], uint32_t *lifetime_ms)
{
    if (mc_istream_remaining(is) != MC_CW_TICKET_MESSAGE)
        return false;
    const uint8_t *t = mc_read_bytes(is, MC_CW_TICKET_BYTES);
    const uint8_t *k = mc_read_bytes(is, MC_CW_RESUME_KEY_BYTES);
    *lifetime_ms = mc_read_u32(is);
    if (!t || !k || !mc_istream_ok(is) || !mc_istream_done(is))
        return false;
    memcpy(ticket, t, MC_CW_TICKET_BYTES);
    memcpy(key, k, MC_CW_RESUME_KEY_BYTES);
    return true;
}
