/* The payloads of a retirement's messages (entity/retire_wire.h). */
#include "entity/retire_wire.h"
#include "entity/move_wire.h"
#include "entity/restore_wire.h"
#include "entity/wire.h"

static bool passable(uint8_t msg)
{
    return msg == MC_MSG_CELL_GONE || msg == MC_MSG_CLIENT_UPDATE || msg == MC_MSG_CELL_MOVED ||
           msg == MC_MSG_CELL_COPY;
}

static void write_address(mc_ostream *os, const mc_address *a)
{
    mc_write_u32(os, a->ip);
    mc_write_u16(os, a->port);
}

static mc_address read_address(mc_istream *is)
{
    mc_address a = {0};
    a.ip = mc_read_u32(is);
    a.port = mc_read_u16(is);
    return a;
}

static const uint8_t *rest(mc_istream *is, size_t *len)
{
    *len = mc_istream_remaining(is);
    return *len ? mc_read_bytes(is, *len) : (const uint8_t *)"";
}

void mc_retire_pass_encode(mc_ostream *os, const mc_retire_pass *p)
{
    mc_write_i32(os, p->entity_id);
    mc_write_u8(os, p->msg);
    write_address(os, &p->from);
    if (p->len)
        mc_write_bytes(os, p->payload, p->len);
}

bool mc_retire_pass_decode(mc_istream *is, mc_retire_pass *out)
{
    out->entity_id = mc_read_i32(is);
    out->msg = mc_read_u8(is);
    out->from = read_address(is);
    if (!mc_istream_ok(is) || out->entity_id <= 0 || !passable(out->msg))
        return false;
    out->payload = rest(is, &out->len);
    if (!out->payload || out->len < 4)
        return false;
    mc_istream inner;
    mc_istream_init(&inner, out->payload, out->len);
    return mc_read_i32(&inner) == out->entity_id; /* the passed message is for that base */
}

void mc_retire_client_call_encode(mc_ostream *os, const mc_retire_client_call *c)
{
    mc_write_i32(os, c->entity_id);
    mc_write_u8(os, c->part);
    if (c->len)
        mc_write_bytes(os, c->payload, c->len);
}

bool mc_retire_client_call_decode(mc_istream *is, mc_retire_client_call *out)
{
    out->entity_id = mc_read_i32(is);
    out->part = mc_read_u8(is);
    if (!mc_istream_ok(is) || out->entity_id <= 0 || out->part > 1)
        return false;
    out->payload = rest(is, &out->len);
    return out->payload != NULL;
}

void mc_retire_homes_encode(mc_ostream *os, const int32_t *ids, const mc_address *homes,
                            size_t n)
{
    mc_write_u16(os, (uint16_t)n);
    for (size_t i = 0; i < n; i++) {
        mc_write_i32(os, ids[i]);
        write_address(os, &homes[i]);
    }
}

bool mc_retire_homes_decode(mc_istream *is, int32_t *ids, mc_address *homes, size_t *n)
{
    uint16_t count = mc_read_u16(is);
    if (!mc_istream_ok(is) || count < 1 || count > MC_RETIRE_HOMES_PER_MESSAGE ||
        mc_istream_remaining(is) != (size_t)count * 10)
        return false;
    for (size_t i = 0; i < count; i++) {
        ids[i] = mc_read_i32(is);
        homes[i] = read_address(is);
        if (ids[i] <= 0)
            return false;
    }
    *n = count;
    return mc_istream_ok(is);
}

void mc_retire_senders_encode(mc_ostream *os, const mc_address *a, size_t n)
{
    mc_write_u16(os, (uint16_t)n);
    for (size_t i = 0; i < n; i++)
        write_address(os, &a[i]);
}

bool mc_retire_senders_decode(mc_istream *is, mc_address *out, size_t *n)
{
    uint16_t count = mc_read_u16(is);
    if (!mc_istream_ok(is) || count > MC_RETIRE_LAGGARDS_MAX ||
        mc_istream_remaining(is) != (size_t)count * 6)
        return false;
    for (size_t i = 0; i < count; i++) {
        out[i] = read_address(is);
        if (!out[i].ip || !out[i].port)
            return false;
    }
    *n = count;
    return mc_istream_ok(is);
}

void mc_retire_sender_encode(mc_ostream *os, const mc_address *a) { write_address(os, a); }

bool mc_retire_sender_decode(mc_istream *is, mc_address *out)
{
    if (mc_istream_remaining(is) != 6)
        return false;
    *out = read_address(is);
    return mc_istream_ok(is) && out->ip && out->port;
}

void mc_retired_homes_encode(mc_ostream *os, const mc_address *retired, const int32_t *ids,
                             const mc_address *homes, size_t n)
{
    write_address(os, retired);
    mc_retire_homes_encode(os, ids, homes, n);
}

bool mc_retired_homes_decode(mc_istream *is, mc_address *retired, int32_t *ids,
                             mc_address *homes, size_t *n)
{
    *retired = read_address(is);
    return mc_istream_ok(is) && retired->ip && retired->port &&
           mc_retire_homes_decode(is, ids, homes, n);
}
