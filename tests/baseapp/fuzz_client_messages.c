/* libFuzzer target: what a client sends to a baseapp (client_parse.h), and what a client
 * library decodes from one (entity/client_wire.h), on the example game's defs. Byte 0 picks the
 * decoder (low 2 bits: 0 a call checked by the baseapp, 1 BASE_PLAYER, 2 PROPERTY,
 * 3 DISCONNECT), bit 2 the part (base or cell), bit 3 the player's type (Account or
 * Avatar); the rest is the message. The player is entity 7. Whatever is accepted must hold
 * up: a call the baseapp lets through names an exposed one-way method of that part and its
 * arguments decode; a decoded player or property names only BASE_AND_CLIENT properties. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_parse.h"
#include "entity/client_wire.h"

#ifndef MC_EXAMPLE_RES
#define MC_EXAMPLE_RES "defs"
#endif

static mc_entity_defs *defs;

static void load_once(void)
{
    if (defs)
        return;
    char res[4096], err[8192];
    const char *src = getenv("MC_SOURCE_DIR");
    snprintf(res, sizeof res, "%s%s", src ? src : MC_EXAMPLE_RES, src ? "/defs" : "");
    defs = mc_defs_load(res, err, sizeof err);
    if (!defs) {
        fprintf(stderr, "fuzz_client_messages: cannot load %s: %s\n", res, err);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_once();
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    const uint8_t *msg = data + 1;
    size_t len = size - 1;
    mc_part part = (sel & 4) ? MC_PART_CELL : MC_PART_BASE;
    uint16_t type = (sel & 8) ? 1 : 0;
    char why[256];
    switch (sel & 3) {
    case 0: {
        client_call c;
        int r = client_parse_call(defs, type, 7, part, msg, len, &c, why, sizeof why);
        if (r >= 0) {
            if (r >= CLIENT_REFUSE_COUNT || !why[0])
                abort();
            break;
        }
        const mc_def_method *m = c.method;
        if (!m || m->part != part || m->exposed == MC_EXPOSED_NO || m->nreturns ||
            (c.len && (c.args < msg || c.args + c.len != msg + len)))
            abort();
        mc_value vals[256];
        memset(vals, 0, sizeof vals);
        mc_istream is;
        mc_istream_init(&is, c.args, c.len);
        if (mc_defs_decode_args(defs, m, &is, vals, why, sizeof why) != 0)
            abort();
        for (size_t i = 0; i < m->nargs; i++)
            mc_value_free(&vals[i]);
        break;
    }
    case 1: {
        mc_istream is;
        mc_istream_init(&is, msg, len);
        mc_cw_player p;
        if (mc_cw_read_player(defs, &is, &p, why, sizeof why) == 0) {
            const mc_entity_type_def *td = mc_defs_type(defs, p.type);
            for (size_t i = 0; i < p.n; i++)
                if (!td || p.indices[i] >= td->nprops ||
                    !mc_cw_base_client_prop(&td->props[p.indices[i]]))
                    abort();
            mc_cw_player_free(&p);
        }
        break;
    }
    case 2: {
        mc_istream is;
        mc_istream_init(&is, msg, len);
        int32_t id;
        const mc_def_property *p;
        mc_value v;
        if (mc_cw_read_property(defs, type, &is, &id, &p, &v, why, sizeof why) == 0) {
            if (!mc_cw_base_client_prop(p))
                abort();
            mc_value_free(&v);
        }
        break;
    }
    default: {
        mc_istream is;
        mc_istream_init(&is, msg, len);
        uint8_t reason;
        char text[MC_CW_REASON_MAX + 1];
        if (mc_cw_read_disconnect(&is, &reason, text, sizeof text) && strlen(text) > MC_CW_REASON_MAX)
            abort();
        break;
    }
    }
    return 0;
}
