/* libFuzzer target for the persistence messages' decoders (entity/persist_wire.h):
 * FETCH_CELL, its answer (and the cell part's persistent properties after it, decoded as a
 * baseapp does), LOAD_BASE and its answer, with the Keeper game's definitions. Whatever
 * decodes is encoded again and must decode to the same thing. */
#include "common/defs.h"
#include "entity/persist_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MC_KEEPER_RES
#error "MC_KEEPER_RES must be defined"
#endif

static mc_entity_defs *defs;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!defs) {
        char err[4096];
        defs = mc_defs_load(MC_KEEPER_RES, err, sizeof err);
        if (!defs) {
            fprintf(stderr, "%s\n", err);
            abort();
        }
    }
    if (size < 1)
        return 0;
    mc_istream is;
    mc_istream_init(&is, data + 1, size - 1);
    char why[256];
    mc_ostream os;
    mc_ostream_init(&os);
    switch (data[0] % 4) {
    case 0: {
        int32_t id;
        if (mc_fetch_cell_decode(&is, &id)) {
            mc_fetch_cell_encode(&os, id);
            mc_istream again;
            mc_istream_init(&again, os.data, os.size);
            int32_t id2;
            if (!mc_fetch_cell_decode(&again, &id2) || id2 != id)
                abort();
        }
        break;
    }
    case 1: {
        mc_fetch_cell_head h;
        if (mc_fetch_cell_reply_read(&is, &h, why, sizeof why) && h.status == 0) {
            /* The cell part's Persistent properties, as the baseapp decodes them. */
            const mc_entity_type_def *td = mc_defs_type(defs, 0);
            for (size_t i = 0; i < td->nparts_props[MC_PART_CELL]; i++) {
                const mc_def_property *p = mc_defs_part_property(td, MC_PART_CELL, (uint16_t)i);
                if (!p->persistent)
                    continue;
                mc_value v;
                mc_value_limits lim = mc_defs_property_limits(defs, p);
                if (mc_value_decode(p->type, &is, &lim, &v, why, sizeof why) != 0)
                    break;
                mc_value_free(&v);
            }
        }
        break;
    }
    case 2: {
        mc_load_base_req r;
        if (mc_load_base_decode(defs, &is, &r, why, sizeof why)) {
            mc_load_base_encode(&os, &r);
            mc_istream again;
            mc_istream_init(&again, os.data, os.size);
            mc_load_base_req r2;
            if (!mc_load_base_decode(defs, &again, &r2, why, sizeof why) || r2.type != r.type ||
                r2.dbid != r.dbid || strcmp(r2.ident, r.ident) != 0)
                abort();
        }
        break;
    }
    default: {
        mc_load_base_reply r;
        if (mc_load_base_reply_decode(defs, &is, &r)) {
            mc_load_base_reply_encode(&os, &r);
            mc_istream again;
            mc_istream_init(&again, os.data, os.size);
            mc_load_base_reply r2;
            if (!mc_load_base_reply_decode(defs, &again, &r2) || r2.status != r.status ||
                r2.dbid != r.dbid || r2.was_live != r.was_live ||
                memcmp(&r2.base, &r.base, sizeof r.base) != 0 || strcmp(r2.reason, r.reason))
                abort();
        }
        break;
    }
    }
    mc_ostream_free(&os);
    return 0;
}
