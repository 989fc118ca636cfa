/* libFuzzer: the client's parser of world update records (entity/world_wire.h) on arbitrary
 * bytes, against the example game's defs. Nothing may crash, leak or read out of bounds;
 * every record handed over has a known kind and only properties the client may see. */
#include <stdint.h>
#include <stdlib.h>

#include "entity/world_wire.h"

static mc_entity_defs *defs;

static int type_of(void *ctx, int32_t id)
{
    (void)ctx;
    size_t n = mc_defs_type_count(defs);
    return n ? (int)((uint32_t)id % (n + 1)) - 1 : -1; /* some ids unknown */
}

static int check(void *ctx, const mc_world_record *r)
{
    (void)ctx;
    if (r->kind < MC_WORLD_ENTER || r->kind > MC_WORLD_CORRECTION || r->id <= 0)
        __builtin_trap();
    if (r->kind == MC_WORLD_CALL) {
        if (!r->method || r->method->part != MC_PART_CLIENT || r->n != r->method->nargs)
            __builtin_trap();
        return 0;
    }
    for (size_t i = 0; i < r->n; i++)
        if (!r->props[i]->other_clients && !r->props[i]->own_client)
            __builtin_trap();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!defs) {
        char err[4096];
        defs = mc_defs_load(MC_GAME_RES, err, sizeof err);
        if (!defs)
            abort(); /* the fuzz set-up itself is broken, not an input */
    }
    char why[256];
    (void)mc_world_parse(defs, 5, data, size, type_of, check, NULL, why, sizeof why);
    return 0;
}
