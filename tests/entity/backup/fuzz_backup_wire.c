/* libFuzzer target for the base backup messages' decoders (entity/backup_wire.h):
 * BACKUP_BASE (and the base and cell properties in it, decoded as a restorer does),
 * BACKUP_DROP, BACKUP_REFUSED and BASE_RESTORED, with the Probe game's definitions, and a
 * retirement's (entity/retire_wire.h): RETIRE_PASS, RETIRE_CLIENT_CALL, RETIRE_HOMES,
 * RETIRE_END's late senders, RETIRE_SENDER_END, RETIRED_HOMES.
 * Whatever decodes is encoded again and must decode to the same thing. */
#include "common/defs.h"
#include "entity/backup_wire.h"
#include "entity/retire_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MC_PROBE_RES
#error "MC_PROBE_RES must be defined"
#endif

static mc_entity_defs *defs;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_backup(const mc_backup_head *a, const mc_backup_head *b)
{
    if (a->entity_id != b->entity_id || a->type != b->type || a->serial != b->serial ||
        a->flags != b->flags || a->space != b->space || a->dbid != b->dbid || strcmp(a->token, b->token) != 0 ||
        a->nnames != b->nnames || a->ntimers != b->ntimers || a->base_len != b->base_len ||
        a->cell_len != b->cell_len || a->proxy_len != b->proxy_len ||
        memcmp(&a->cell, &b->cell, sizeof a->cell) != 0)
        abort();
    for (size_t i = 0; i < a->nnames; i++)
        if (strcmp(a->names[i], b->names[i]) != 0)
            abort();
    for (size_t i = 0; i < a->ntimers; i++)
        if (memcmp(&a->timers[i], &b->timers[i], sizeof a->timers[i]) != 0)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!defs) {
        char err[4096];
        defs = mc_defs_load(MC_PROBE_RES, err, sizeof err);
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
    switch (data[0] % 10) {
    case 0: {
        mc_backup_head h;
        if (!mc_backup_decode(defs, &is, &h, why, sizeof why))
            break;
        mc_backup_encode(&os, &h, h.base_props, h.base_len, h.cell_props, h.cell_len, h.proxy,
                         h.proxy_len);
        mc_istream again;
        mc_istream_init(&again, os.data, os.size);
        mc_backup_head h2;
        if (!mc_backup_decode(defs, &again, &h2, why, sizeof why))
            abort();
        same_backup(&h, &h2);
        mc_backup_head_free(&h2);
        mc_backup_head_free(&h);
        break;
    }
    case 1: {
        int32_t id;
        if (mc_backup_drop_decode(&is, &id)) {
            mc_backup_drop_encode(&os, id);
            mc_istream again;
            mc_istream_init(&again, os.data, os.size);
            int32_t id2;
            if (!mc_backup_drop_decode(&again, &id2) || id2 != id)
                abort();
        }
        break;
    }
    case 2: {
        int32_t id;
        uint8_t reason;
        if (mc_backup_refused_decode(&is, &id, &reason)) {
            mc_backup_refused_encode(&os, id, reason);
            mc_istream again;
            mc_istream_init(&again, os.data, os.size);
            int32_t id2;
            uint8_t reason2;
            if (!mc_backup_refused_decode(&again, &id2, &reason2) || id2 != id ||
                reason2 != reason)
                abort();
        }
        break;
    }
    case 4: {
        mc_retire_pass p, p2;
        if (!mc_retire_pass_decode(&is, &p))
            break;
        mc_retire_pass_encode(&os, &p);
        mc_istream again;
        mc_istream_init(&again, os.data, os.size);
        if (!mc_retire_pass_decode(&again, &p2) || p2.entity_id != p.entity_id ||
            p2.msg != p.msg || !mc_address_equal(&p2.from, &p.from) || p2.len != p.len ||
            memcmp(p2.payload, p.payload, p.len) != 0)
            abort();
        break;
    }
    case 5: {
        mc_retire_client_call c, c2;
        if (!mc_retire_client_call_decode(&is, &c))
            break;
        mc_retire_client_call_encode(&os, &c);
        mc_istream again;
        mc_istream_init(&again, os.data, os.size);
        if (!mc_retire_client_call_decode(&again, &c2) || c2.entity_id != c.entity_id ||
            c2.part != c.part || c2.len != c.len ||
            (c.len && memcmp(c2.payload, c.payload, c.len) != 0))
            abort();
        break;
    }
    case 6: {
        static int32_t ids[MC_RETIRE_HOMES_PER_MESSAGE], ids2[MC_RETIRE_HOMES_PER_MESSAGE];
        static mc_address homes[MC_RETIRE_HOMES_PER_MESSAGE], homes2[MC_RETIRE_HOMES_PER_MESSAGE];
        size_t n, n2;
        if (!mc_retire_homes_decode(&is, ids, homes, &n))
            break;
        mc_retire_homes_encode(&os, ids, homes, n);
        mc_istream again;
        mc_istream_init(&again, os.data, os.size);
        if (!mc_retire_homes_decode(&again, ids2, homes2, &n2) || n2 != n ||
            memcmp(ids, ids2, n * sizeof *ids) != 0)
            abort();
        for (size_t i = 0; i < n; i++)
            if (!mc_address_equal(&homes[i], &homes2[i]))
                abort();
        break;
    }
    case 7: {
        static mc_address late[MC_RETIRE_LAGGARDS_MAX], late2[MC_RETIRE_LAGGARDS_MAX];
        size_t n, n2;
        if (!mc_retire_senders_decode(&is, late, &n))
            break;
        mc_retire_senders_encode(&os, late, n);
        mc_istream again;
        mc_istream_init(&again, os.data, os.size);
        if (!mc_retire_senders_decode(&again, late2, &n2) || n2 != n)
            abort();
        for (size_t i = 0; i < n; i++)
            if (!mc_address_equal(&late[i], &late2[i]))
                abort();
        break;
    }
    case 8: {
        mc_address a, a2;
        if (!mc_retire_sender_decode(&is, &a))
            break;
        mc_retire_sender_encode(&os, &a);
        mc_istream again;
        mc_istream_init(&again, os.data, os.size);
        if (!mc_retire_sender_decode(&again, &a2) || !mc_address_equal(&a, &a2))
            abort();
        break;
    }
    case 9: {
        static int32_t ids[MC_RETIRE_HOMES_PER_MESSAGE], ids2[MC_RETIRE_HOMES_PER_MESSAGE];
        static mc_address homes[MC_RETIRE_HOMES_PER_MESSAGE], homes2[MC_RETIRE_HOMES_PER_MESSAGE];
        mc_address retired, retired2;
        size_t n, n2;
        if (!mc_retired_homes_decode(&is, &retired, ids, homes, &n))
            break;
        mc_retired_homes_encode(&os, &retired, ids, homes, n);
        mc_istream again;
        mc_istream_init(&again, os.data, os.size);
        if (!mc_retired_homes_decode(&again, &retired2, ids2, homes2, &n2) || n2 != n ||
            !mc_address_equal(&retired, &retired2) || memcmp(ids, ids2, n * sizeof *ids) != 0)
            abort();
        for (size_t i = 0; i < n; i++)
            if (!mc_address_equal(&homes[i], &homes2[i]))
                abort();
        break;
    }
    default: {
        int32_t id;
        mc_mailbox_ref mb;
        if (mc_base_restored_decode(defs, &is, &id, &mb)) {
            mc_base_restored_encode(&os, id, &mb);
            mc_istream again;
            mc_istream_init(&again, os.data, os.size);
            int32_t id2;
            mc_mailbox_ref mb2;
            if (!mc_base_restored_decode(defs, &again, &id2, &mb2) || id2 != id ||
                memcmp(&mb, &mb2, sizeof mb) != 0)
                abort();
        }
        break;
    }
    }
    mc_ostream_free(&os);
    return 0;
}
