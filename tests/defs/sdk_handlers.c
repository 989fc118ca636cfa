/* Handlers of the SDK test type Hero (tests/defs/sdk), written the way the SDK's
 * documentation says: containers through their generated accessors, never through
 * mc_value's fields. give(slots) adds every slot to the bag and notes each label. */
#include "game.h"

int Hero_base_give(const mc_call_ctx *call, Hero_base *self, const mc_value *slots)
{
    (void)call;
    for (uint32_t i = 0; i < Hero_base_give_slots_count(slots); i++) {
        const mc_value *slot;
        const char *label;
        uint32_t item;
        mc_value *kept;
        if (Hero_base_give_slots_at(slots, i, &slot) != MC_CALL_OK ||
            SLOT_get_label(slot, &label) != MC_CALL_OK ||
            SLOT_get_item(slot, &item) != MC_CALL_OK ||
            BAG_append(&self->bag, &kept) != MC_CALL_OK ||
            SLOT_set_item(kept, item) != MC_CALL_OK || SLOT_set_label(kept, label) != MC_CALL_OK ||
            Hero_notes_append(&self->notes, label) != MC_CALL_OK)
            return -1;
    }
    return 0;
}
